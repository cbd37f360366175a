// Selections like xt::view: every kind of slice read and written on every layout, checked against
// xtensor's own xt::view of an in-memory model (an independent implementation of the same
// semantics); the I/O a sparse selection costs; masked writes that keep the unselected elements,
// also against a concurrent writer; points; at(); typed errors.
#include "array_support.hpp"
#include "expect_error.hpp"

#include <xtensor/xview.hpp>

#include <random>
#include <thread>

namespace zx = zarrxt;
using xt::placeholders::_;
using zxtest::expect_error;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

using sel_array = zx::array<std::int32_t, 3, zx::dynamic_chain, zx::memory_store>;

struct sel_layout
{
    std::string name;
    std::function<sel_array(zx::memory_store&)> make;
};

std::vector<sel_layout> selection_layouts()
{
    const std::vector<std::uint64_t> shape{13, 11, 9};
    return {
        {"v3 zstd",
         [=](zx::memory_store& s) {
             return sel_array::create(s, "a", zx::v3_options{.shape = shape, .chunk_shape = {4, 3, 5}});
         }},
        {"v3 uncompressed big-endian",
         [=](zx::memory_store& s)
         {
             return sel_array::create(
                 s, "a",
                 zx::v3_options{.shape = shape,
                                .chunk_shape = {4, 3, 5},
                                .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})}});
         }},
        {"v3 sharded",
         [=](zx::memory_store& s)
         {
             return sel_array::create(s, "a",
                                      zx::v3_options{.shape = shape,
                                                     .chunk_shape = {8, 6, 9},
                                                     .codecs = {zx::sharded({4, 3, 3})}});
         }},
        {"v2 F order",
         [=](zx::memory_store& s) {
             return sel_array::create(s, "a",
                                      zx::v2_options{.shape = shape, .chunks = {4, 3, 5}, .order = 'F'});
         }},
    };
}

} // namespace

TEST_SUITE("selection")
{
    TEST_CASE("every kind of slice reads as xt::view of the same data")
    {
        for (const auto& l : selection_layouts())
        {
            SUBCASE(l.name.c_str())
            {
                zx::memory_store s;
                auto a = l.make(s);
                const auto model = make_data<std::int32_t, 3>({13, 11, 9});
                a.write({{0, 0, 0}, {13, 11, 9}}, model);
                CHECK(a.read(xt::range(1, 12, 3), xt::all(), xt::range(_, _, 2)) ==
                      xt::view(model, xt::range(1, 12, 3), xt::all(), xt::range(_, _, 2)));
                CHECK(a.read(xt::range(2, 7), xt::range(10, _), xt::range(0, 9, 8)) ==
                      xt::view(model, xt::range(2, 7), xt::range(10, _), xt::range(0, 9, 8)));
                // Negative steps and ends clamped as numpy clamps them.
                CHECK(a.read(xt::range(11, 2, -4), xt::range(-3, 100), xt::range(_, _, -1)) ==
                      xt::view(model, xt::range(11, 2, -4), xt::range(-3, 100), xt::range(_, _, -1)));
                // Integers drop axes: the result's rank is known at compile time.
                xt::xtensor<std::int32_t, 1> row = a.read(4, xt::all(), -1);
                CHECK(row == xt::view(model, 4, xt::all(), -1));
                xt::xtensor<std::int32_t, 0> one = a.read(12, 10, 8);
                CHECK(one() == model(12, 10, 8));
                // keep / drop / index vectors (unsorted, repeated) / masks.
                CHECK(a.read(xt::keep(7, 0, 7, 12), xt::drop(1, 2, 3), xt::keep(-1)) ==
                      xt::view(model, xt::keep(7, 0, 7, 12), xt::drop(1, 2, 3), xt::keep(-1)));
                const std::vector<std::int64_t> rows{5, -1, 0, 5};
                std::vector<bool> mask(11, false);
                mask[0] = mask[3] = mask[4] = mask[10] = true;
                CHECK(a.read(rows, mask, xt::range(1, 8, 3)) ==
                      xt::view(model, xt::keep(5, 12, 0, 5), xt::keep(0, 3, 4, 10), xt::range(1, 8, 3)));
                // Empty selections are empty results.
                CHECK(a.read(xt::range(5, 5), xt::all(), xt::all()).size() == 0);
                CHECK(a.read(xt::range(7, 2), xt::all(), xt::all()).shape()[0] == 0); // numpy: empty
                CHECK(a.read(xt::range(7, 2, 3), xt::all(), 0).shape()[0] == 0);
                CHECK(a.read(std::vector<bool>(13, false), xt::all(), 0).shape()[0] == 0);
                // Random selections of every kind, against the model.
                std::mt19937 rng(7);
                for (int t = 0; t < 30; ++t)
                {
                    // stop >= start: xt::view (xtensor 0.24.3) gives a range that ends before it starts an
                    // extent of 2^64 - 1 where numpy (and zarrxt, checked below) gives 0
                    const long b0 = static_cast<long>(rng() % 13);
                    const long e0 = b0 + static_cast<long>(rng() % static_cast<unsigned>(14 - b0));
                    const long st = 1 + static_cast<long>(rng() % 5);
                    std::vector<std::size_t> k1;
                    for (int i = 0; i < 1 + static_cast<int>(rng() % 6); ++i)
                    {
                        k1.push_back(rng() % 11);
                    }
                    const std::size_t i2 = rng() % 9;
                    INFO("range(" << b0 << ", " << e0 << ", " << st << "), " << k1.size() << " kept, " << i2);
                    CHECK(a.read(xt::range(b0, e0, st), k1, i2) ==
                          xt::view(model, xt::range(b0, e0, st), xt::keep(k1), i2));
                }
                // Element access.
                CHECK(a.at(3, 10, 2) == model(3, 10, 2));
                CHECK(a.at(0u, 0ull, std::int8_t{8}) == model(0, 0, 8));
            }
        }
    }

    TEST_CASE("selection writes store the selected elements and keep every other one")
    {
        for (const auto& l : selection_layouts())
        {
            SUBCASE(l.name.c_str())
            {
                zx::memory_store s;
                auto a = l.make(s);
                xt::xtensor<std::int32_t, 3> model = make_data<std::int32_t, 3>({13, 11, 9});
                a.write({{0, 0, 0}, {13, 11, 9}}, model);
                std::mt19937 rng(11);
                for (int t = 0; t < 25; ++t)
                {
                    const long b0 = static_cast<long>(rng() % 13), st = 1 + static_cast<long>(rng() % 4);
                    std::vector<std::size_t> k1;
                    for (int i = 0; i < 1 + static_cast<int>(rng() % 5); ++i)
                    {
                        k1.push_back(rng() % 11);
                    }
                    std::sort(k1.begin(), k1.end());
                    k1.erase(std::unique(k1.begin(), k1.end()),
                             k1.end()); // xt::view assigns repeats in any order
                    const std::size_t i2 = rng() % 9;
                    auto target = xt::view(model, xt::range(b0, _, st), xt::keep(k1), i2);
                    const xt::xtensor<std::int32_t, 2> v =
                        make_data<std::int32_t, 2>({target.shape()[0], target.shape()[1]}, 10000 * (t + 1));
                    a.write(zx::select(xt::range(b0, _, st), k1, i2), v);
                    target = v;
                    REQUIRE(tensors_equal(a.read(), model));
                }
                // A whole-axis mask and a stepped range over every chunk.
                std::vector<bool> mask(13, false);
                mask[1] = mask[6] = mask[12] = true;
                const auto v = make_data<std::int32_t, 3>({3, 11, 5}, 77);
                a.write(zx::select(mask, xt::all(), xt::range(0, 9, 2)), v);
                xt::view(model, xt::keep(1, 6, 12), xt::all(), xt::range(0, 9, 2)) = v;
                CHECK(tensors_equal(a.read(), model));
                // Repeated indices: the last value given for an index is the one stored.
                a.write(zx::select(std::vector<int>{2, 2}, 0, 0), xt::xtensor<std::int32_t, 1>({-5, -6}));
                CHECK(a.at(2, 0, 0) == -6);
            }
        }
    }

    TEST_CASE("a sparse selection reads only the chunks of its picks")
    {
        zx::counting_store<zx::memory_store> s{zx::memory_store{}};
        auto a = zx::create<std::int32_t, 2>(s, "a",
                                             zx::v3_options{.shape = {1000, 1000}, .chunk_shape = {10, 10}});
        const auto model = make_data<std::int32_t, 2>({1000, 1000});
        a.write({{0, 0}, {1000, 1000}}, model);
        s.reset();
        // 4 rows x 3 columns of picks in 4 x 3 chunks: 12 reads, not a bounding box of 100 x 100 chunks.
        CHECK(a.read(xt::keep(0, 250, 500, 999), xt::keep(5, 505, 995)) ==
              xt::view(model, xt::keep(0, 250, 500, 999), xt::keep(5, 505, 995)));
        CHECK(s.stats().reads - s.stats().misses <= 12 + 1);
        // A step of 2 over a band: one box read of the chunks the band covers.
        s.reset();
        CHECK(a.read(xt::range(100, 140, 2), xt::range(0, 1000, 2)) ==
              xt::view(model, xt::range(100, 140, 2), xt::range(0, 1000, 2)));
        CHECK(s.stats().reads <= 4 * 100 + 1);
        // Points: one box per chunk they fall in.
        s.reset();
        const std::vector<std::array<std::uint64_t, 2>> pts{{999, 0}, {0, 999}, {3, 4}, {5, 6}, {999, 0}};
        const auto got = a.read_points(pts);
        REQUIRE(got.size() == 5);
        for (std::size_t k = 0; k < pts.size(); ++k)
        {
            CHECK(got(k) == model(pts[k][0], pts[k][1]));
        }
        CHECK(s.stats().reads <= 3 + 1);
    }

    TEST_CASE("point writes, and strided writes from two threads, lose nothing")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 2>(
            s, "a",
            zx::v3_options{.shape = {40, 40}, .chunk_shape = {10, 10}, .codecs = {zx::sharded({5, 5})}});
        xt::xtensor<std::int32_t, 2> model = xt::zeros<std::int32_t>({40, 40});
        a.write_points({{0, 0}, {39, 39}, {17, 3}, {17, 3}}, xt::xtensor<std::int32_t, 1>({1, 2, 3, 4}));
        model(0, 0) = 1;
        model(39, 39) = 2;
        model(17, 3) = 4;
        CHECK(tensors_equal(a.read(), model));
        // Even and odd columns written by two threads, many times: every chunk is rewritten by
        // both, and neither may undo the other's elements.
        for (int round = 0; round < 10; ++round)
        {
            auto writer = [&](long first)
            {
                const auto v =
                    make_data<std::int32_t, 2>({40, 20}, static_cast<std::uint64_t>(first * 1000 + round));
                a.write(zx::select(xt::all(), xt::range(first, 40, 2)), v);
            };
            std::thread t0(writer, 0);
            std::thread t1(writer, 1);
            t0.join();
            t1.join();
            xt::view(model, xt::all(), xt::range(0, 40, 2)) = make_data<std::int32_t, 2>({40, 20}, round);
            xt::view(model, xt::all(), xt::range(1, 40, 2)) =
                make_data<std::int32_t, 2>({40, 20}, 1000 + round);
            REQUIRE(tensors_equal(a.read(), model));
        }
    }

    TEST_CASE("selections outside the array, masks of the wrong length and values of the wrong shape are "
              "typed errors")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 2>(s, "a", zx::v3_options{.shape = {4, 3}, .chunk_shape = {2, 2}});
        expect_error<zx::array_error>([&] { (void)a.read(4, xt::all()); }, "zarrxt.array.3", "a");
        expect_error<zx::array_error>([&] { (void)a.read(-5, xt::all()); }, "zarrxt.array.3", "a");
        // -4 counts from the end (the first row); the message names an index as given, over its type's range.
        CHECK(a.read(-4, xt::all()) == a.read(0, xt::all()));
        CHECK_THROWS_WITH_AS((void)a.read(std::uint64_t{9223372036854775813ull}, xt::all()),
                             doctest::Contains("index 9223372036854775813 is outside axis 0 of extent 4"),
                             zx::array_error);
        CHECK_THROWS_WITH_AS((void)a.read(xt::all(), std::numeric_limits<std::int64_t>::min()),
                             doctest::Contains("index -9223372036854775808 is outside axis 1 of extent 3"),
                             zx::array_error);
        expect_error<zx::array_error>([&] { (void)a.read(xt::keep(0, 9), xt::all()); }, "zarrxt.array.3",
                                      "a");
        expect_error<zx::array_error>(
            [&] {
                (void)a.read(std::vector<int>{1, 3, 4}, 0);
            },
            "zarrxt.array.3", "a");
        expect_error<zx::array_error>([&] { (void)a.read(std::vector<bool>(5, true), 0); }, "zarrxt.array.4",
                                      "a");
        expect_error<zx::array_error>([&] { (void)a.at(0, 3); }, "zarrxt.array.3", "a");
        expect_error<zx::array_error>([&] { (void)a.at(-1, 0); }, "zarrxt.array.3", "a");
        expect_error<zx::array_error>([&] { (void)a.read_points({{0, 0}, {4, 0}}); }, "zarrxt.array.3", "a");
        expect_error<zx::array_error>(
            [&] {
                a.write(zx::select(xt::range(0, 4, 2), xt::all()),
                        xt::xtensor<std::int32_t, 2>::from_shape({3, 3}));
            },
            "zarrxt.array.4", "a");
        expect_error<zx::array_error>(
            [&] {
                a.write_points({{0, 0}}, xt::xtensor<std::int32_t, 1>::from_shape({2}));
            },
            "zarrxt.array.4", "a");
        // Nothing was written by the refused calls.
        CHECK(s.list("a").size() == 1);
    }
}
