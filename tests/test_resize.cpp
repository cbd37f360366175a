// resize, append and refresh: every sequence of grows and shrinks reads as a model that truncates
// and pads with the fill value (v2, v3, sharded, F order, uncompressed, kept empty chunks); the
// stored objects outside a shape are erased, stale parts of cut edge chunks never come back, the
// metadata is written last and once, and bad arguments are typed errors.
#include "array_support.hpp"
#include "expect_error.hpp"

#include <xtensor/xbroadcast.hpp>
#include <xtensor/xview.hpp>

#include <random>

namespace zx = zarrxt;
using zxtest::expect_error;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

using tensor2 = xt::xtensor<std::int32_t, 2>;

/// `old` cut or padded with `fill` to `shape`: what a resized array must read as.
tensor2 resized_model(const tensor2& old, std::array<std::size_t, 2> shape, std::int32_t fill)
{
    tensor2 out = tensor2::from_shape(shape);
    out.fill(fill);
    const std::size_t r = std::min(shape[0], old.shape()[0]);
    const std::size_t c = std::min(shape[1], old.shape()[1]);
    xt::view(out, xt::range(0, r), xt::range(0, c)) = xt::view(old, xt::range(0, r), xt::range(0, c));
    return out;
}

/// Chunk keys of the array at "a" (metadata excluded).
std::vector<std::string> chunk_keys(const zx::memory_store& s)
{
    std::vector<std::string> out;
    for (const auto& k : s.list("a"))
    {
        if (!k.ends_with("zarr.json") && !k.ends_with(".zarray") && !k.ends_with(".zattrs"))
        {
            out.push_back(k);
        }
    }
    return out;
}

/// A memory store whose chunk writes fail once fail_chunks() was called (metadata still writes):
/// an operation that dies between its data and its metadata.
class failing_chunk_store : public zx::memory_store
{
public:
    void fail_chunks() { *m_fail = true; }
    void set(std::string_view key, zx::byte_view data)
    {
        if (*m_fail && !key.ends_with("zarr.json") && !key.ends_with(".zarray") && !key.ends_with(".zattrs"))
        {
            zx::store_error e(zx::store_errc::io, "injected failure");
            e.with_key(std::string(key));
            throw e;
        }
        zx::memory_store::set(key, data);
    }

private:
    std::shared_ptr<bool> m_fail = std::make_shared<bool>(false);
};

struct resize_layout
{
    std::string name;
    std::function<zx::array<std::int32_t, 2, zx::dynamic_chain, zx::memory_store>(zx::memory_store&)> make;
};

std::vector<resize_layout> resize_layouts()
{
    using A = zx::array<std::int32_t, 2, zx::dynamic_chain, zx::memory_store>;
    return {
        {"v3 zstd",
         [](zx::memory_store& s)
         {
             return A::create(
                 s, "a",
                 zx::v3_options{.shape = {11, 9}, .chunk_shape = {4, 3}, .fill_value = zx::scalar(-7)});
         }},
        {"v3 uncompressed, '.' keys, kept empty chunks",
         [](zx::memory_store& s)
         {
             return A::create(s, "a",
                              zx::v3_options{.shape = {11, 9},
                                             .chunk_shape = {4, 3},
                                             .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})},
                                             .fill_value = zx::scalar(-7),
                                             .separator = '.',
                                             .write_empty_chunks = true});
         }},
        {"v3 sharded",
         [](zx::memory_store& s)
         {
             return A::create(s, "a",
                              zx::v3_options{.shape = {11, 9},
                                             .chunk_shape = {8, 6},
                                             .codecs = {zx::sharded({4, 3})},
                                             .fill_value = zx::scalar(-7)});
         }},
        {"v2 zlib F order '/' keys",
         [](zx::memory_store& s)
         {
             return A::create(s, "a",
                              zx::v2_options{.shape = {11, 9},
                                             .chunks = {4, 3},
                                             .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                             .fill_value = zx::scalar(-7),
                                             .order = 'F',
                                             .dimension_separator = '/'});
         }},
        {"v2 uncompressed",
         [](zx::memory_store& s)
         {
             return A::create(s, "a",
                              zx::v2_options{.shape = {11, 9},
                                             .chunks = {4, 3},
                                             .compressor = std::nullopt,
                                             .fill_value = zx::scalar(-7)});
         }},
    };
}

using resize_array = zx::array<std::int32_t, 2, zx::dynamic_chain, zx::memory_store>;

/// Runs f(store, array, model) once per layout (a subcase each), the 11 x 9 array filled with the model.
template <class F>
void for_each_filled_layout(F&& f)
{
    for (const auto& l : resize_layouts())
    {
        SUBCASE(l.name.c_str())
        {
            zx::memory_store s;
            resize_array a = l.make(s);
            tensor2 model = make_data<std::int32_t, 2>({11, 9});
            a.write({{0, 0}, {11, 9}}, model);
            f(s, a, model);
        }
    }
}

} // namespace

TEST_SUITE("resize")
{
    TEST_CASE("every sequence of grows and shrinks reads as the truncated and padded model")
    {
        for_each_filled_layout(
            [](zx::memory_store& s, resize_array& a, tensor2& model)
            {
                std::mt19937 rng(12345);
                for (int step = 0; step < 40; ++step)
                {
                    const std::array<std::size_t, 2> shape{rng() % 20, rng() % 16};
                    INFO("step " << step << ": resize to " << shape[0] << " x " << shape[1]);
                    a.resize({shape[0], shape[1]});
                    model = resized_model(model, shape, -7);
                    CHECK(a.shape() == std::array<std::uint64_t, 2>{shape[0], shape[1]});
                    REQUIRE(tensors_equal(a.read(), model));
                    // The stored metadata says so: a fresh handle reads the same.
                    auto b = zx::open<std::int32_t, 2>(s, "a");
                    REQUIRE(tensors_equal(b.read(), model));
                    // No object outside the grid is left behind.
                    const auto grid = a.metadata().grid_shape();
                    for (const auto& k : chunk_keys(s))
                    {
                        std::array<std::uint64_t, 2> at{};
                        REQUIRE_MESSAGE(
                            a.metadata().key_encoding.parse_key(std::string_view(k).substr(2), at), k);
                        CHECK_MESSAGE((at[0] < grid[0] && at[1] < grid[1]), k);
                    }
                    // Some steps also write, so that cut chunks hold data that must not come back.
                    if (step % 3 == 0 && shape[0] > 0 && shape[1] > 0)
                    {
                        const tensor2 v =
                            make_data<std::int32_t, 2>(shape, 1000 * static_cast<std::uint64_t>(step));
                        a.write({{0, 0}, {shape[0], shape[1]}}, v);
                        model = v;
                    }
                }
            });
    }

    TEST_CASE(
        "shrinking erases the chunks outside; the cut part of an edge chunk is the fill value when uncovered")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 2>(
            s, "a",
            zx::v3_options{.shape = {8, 6}, .chunk_shape = {4, 3}, .codecs = {zx::codec_spec("bytes")}});
        a.write({{0, 0}, {8, 6}}, make_data<std::int32_t, 2>({8, 6}, 1));
        REQUIRE(chunk_keys(s).size() == 4);
        a.resize({3, 6});
        // Row 1 of the grid is gone; row 0 is cut at 3 of its 4 rows.
        CHECK(chunk_keys(s) == std::vector<std::string>{"a/c/0/0", "a/c/0/1"});
        // The stored bytes of the cut chunk hold zeros (the fill value) in its last row.
        const auto bytes = zxtest::as_string_of(zx::get(s, "a/c/0/0"));
        REQUIRE(bytes.size() == 4 * 3 * 4);
        CHECK(bytes.substr(3 * 3 * 4) == std::string(3 * 4, '\0'));
        a.resize({8, 6});
        tensor2 want = xt::zeros<std::int32_t>({8, 6});
        xt::view(want, xt::range(0, 3), xt::all()) =
            xt::view(make_data<std::int32_t, 2>({8, 6}, 1), xt::range(0, 3), xt::all());
        CHECK(tensors_equal(a.read(), want));
    }

    TEST_CASE(
        "objects outside the old shape (a writer that died, another implementation) are erased by a grow")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 2>(s, "a", zx::v2_options{.shape = {4, 3}, .chunks = {4, 3}});
        a.write({{0, 0}, {4, 3}}, make_data<std::int32_t, 2>({4, 3}, 5));
        // A chunk past the edge, and stale rows in the edge chunk, as zarr-python 2's shrink leaves them.
        s.set("a/1.0", *zx::get(s, "a/0.0"));
        s.set("a/7.7", *zx::get(s, "a/0.0"));
        auto stale = zx::create<std::int32_t, 2>(s, "b", zx::v2_options{.shape = {4, 3}, .chunks = {4, 3}});
        stale.write({{0, 0}, {4, 3}}, make_data<std::int32_t, 2>({4, 3}, 5));
        {
            zx::json doc = zx::json::parse(zxtest::as_string_of(zx::get(s, "b/.zarray")));
            doc["shape"] = {2, 3};
            const std::string text = doc.dump();
            s.set("b/.zarray", zx::as_bytes(text));
        }
        a.resize({9, 3});
        CHECK(chunk_keys(s) == std::vector<std::string>{"a/0.0"});
        tensor2 want = xt::zeros<std::int32_t>({9, 3});
        xt::view(want, xt::range(0, 4), xt::all()) = make_data<std::int32_t, 2>({4, 3}, 5);
        CHECK(tensors_equal(a.read(), want));
        auto b = zx::open<std::int32_t, 2>(s, "b");
        b.resize({4, 3});
        tensor2 want_b = xt::zeros<std::int32_t>({4, 3});
        xt::view(want_b, xt::range(0, 2), xt::all()) =
            xt::view(make_data<std::int32_t, 2>({4, 3}, 5), xt::range(0, 2), xt::all());
        CHECK(tensors_equal(b.read(), want_b));
    }

    TEST_CASE("a sparse grid costs what is stored: resizing a huge mostly empty array reads no chunk it does "
              "not hold")
    {
        zx::counting_store<zx::memory_store> s{zx::memory_store{}};
        auto a = zx::create<std::int32_t, 2>(
            s, "a", zx::v3_options{.shape = {1ull << 30, 1ull << 30}, .chunk_shape = {1000, 1000}});
        a.write({{0, 0}, {1500, 10}}, make_data<std::int32_t, 2>({1500, 10}));
        a.write({{999'999'500, 0}, {1, 1}}, make_data<std::int32_t, 2>({1, 1}, 77));
        s.reset();
        // The new boundary cuts chunk row 1 (stored) and would cut a million other chunks of that
        // grid row that do not exist; chunk (999999, 0) lies wholly outside.
        a.resize({1200, 1ull << 41});
        const auto c = s.stats();
        CHECK(c.lists == 1);
        CHECK(c.reads <= 4);
        CHECK(c.erases <= 3);
        CHECK(a.read({{0, 0}, {1200, 10}}) ==
              xt::view(make_data<std::int32_t, 2>({1500, 10}), xt::range(0, 1200), xt::all()));
    }

    TEST_CASE("append writes the data before the new shape: other handles keep theirs until refresh")
    {
        for_each_filled_layout(
            [](zx::memory_store& s, resize_array& a, tensor2& model)
            {
                auto other = zx::open<std::int32_t, 2>(s, "a");
                // Along axis 0, then axis 1, in pieces that are not chunk-aligned.
                for (std::size_t n : {1u, 5u, 3u})
                {
                    const tensor2 v = make_data<std::int32_t, 2>({n, model.shape()[1]}, 500 + n);
                    const auto r = a.append(0, v);
                    CHECK(r.offset == std::array<std::uint64_t, 2>{model.shape()[0], 0});
                    model = xt::concatenate(xt::xtuple(model, v), 0);
                    REQUIRE(tensors_equal(a.read(), model));
                }
                const tensor2 w = make_data<std::int32_t, 2>({model.shape()[0], 4}, 900);
                a.append(1, w);
                model = xt::concatenate(xt::xtuple(model, w), 1);
                REQUIRE(tensors_equal(a.read(), model));
                CHECK(other.shape() == std::array<std::uint64_t, 2>{11, 9});
                other.refresh();
                CHECK(tensors_equal(other.read(), model));
                // A stale handle appends to the stored shape, not to the one it had.
                auto stale = zx::open<std::int32_t, 2>(s, "a");
                a.append(0, make_data<std::int32_t, 2>({2, model.shape()[1]}, 1));
                stale.append(0, make_data<std::int32_t, 2>({1, model.shape()[1]}, 2));
                CHECK(stale.shape()[0] == model.shape()[0] + 3);
                model =
                    xt::concatenate(xt::xtuple(model, make_data<std::int32_t, 2>({2, model.shape()[1]}, 1),
                                               make_data<std::int32_t, 2>({1, model.shape()[1]}, 2)),
                                    0);
                CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a").read(), model));
            });
    }

    TEST_CASE("an append whose write fails leaves the stored shape as it was")
    {
        failing_chunk_store t;
        auto a = zx::create<std::int32_t, 2>(t, "a", zx::v3_options{.shape = {4, 3}, .chunk_shape = {2, 3}});
        a.write({{0, 0}, {4, 3}}, make_data<std::int32_t, 2>({4, 3}));
        const auto before = zxtest::as_string_of(zx::get(t, "a/zarr.json"));
        t.fail_chunks();
        expect_error<zx::store_error>(
            [&] {
                a.append(0, make_data<std::int32_t, 2>({3, 3}));
            },
            "zarrxt.store.2", "a/c/2/0");
        CHECK(zxtest::as_string_of(zx::get(t, "a/zarr.json")) == before);
        CHECK(zx::open<std::int32_t, 2>(t, "a").shape()[0] == 4);
        CHECK(a.shape()[0] == 4);
        // The same failure in a shrink leaves the old shape too.
        expect_error<zx::store_error>([&] { a.resize({3, 3}); }, "zarrxt.store.2", "a/c/1/0");
        CHECK(zx::open<std::int32_t, 2>(t, "a").shape()[0] == 4);
    }

    TEST_CASE("bad resize and append arguments are typed errors naming the array")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 2>(s, "a", zx::v3_options{.shape = {4, 3}, .chunk_shape = {2, 3}});
        expect_error<zx::array_error>(
            [&] {
                a.append(0, xt::xtensor<std::int32_t, 2>::from_shape({2, 4}));
            },
            "zarrxt.array.4", "a");
        expect_error<zx::array_error>(
            [&] {
                a.append(2, xt::xtensor<std::int32_t, 2>::from_shape({4, 3}));
            },
            "zarrxt.array.8", "a");
        // More elements than a size in bytes can count.
        expect_error<zx::array_error>([&] { a.resize({1ull << 62, 1ull << 62}); }, "zarrxt.array.8", "a");
        a.resize({~0ull >> 3, 1});
        // An append past what the shape can count (a broadcast: nothing of its size is allocated).
        const auto huge =
            xt::broadcast(xt::xscalar<std::int32_t>(0), std::array<std::size_t, 2>{1ull << 63, 1});
        expect_error<zx::array_error>([&] { a.append(0, huge); }, "zarrxt.array.8", "a");
        CHECK(zx::open<std::int32_t, 2>(s, "a").shape() == std::array<std::uint64_t, 2>{~0ull >> 3, 1});
        // The array was replaced by one of another type: the resize refuses it instead of guessing.
        (void)zx::create<float, 2>(s, "a",
                                   zx::v3_options{.shape = {4, 3}, .chunk_shape = {2, 3}, .overwrite = true});
        expect_error<zx::array_error>([&] { a.resize({2, 2}); }, "zarrxt.array.1", "a");
    }

    TEST_CASE("resize keeps attributes, dimension names and codecs, and writes the metadata once")
    {
        zx::counting_store<zx::memory_store> s{zx::memory_store{}};
        auto a =
            zx::create<std::int32_t, 2>(s, "a",
                                        zx::v2_options{.shape = {4, 3},
                                                       .chunks = {2, 2},
                                                       .dimension_names = zx::dimension_name_list{"y", "x"},
                                                       .attributes = {{"units", "m"}}});
        auto b = zx::open<std::int32_t, 2>(s, "a");
        b.set_attributes({{"units", "km"}, {"_ARRAY_DIMENSIONS", {"y", "x"}}});
        s.reset();
        a.resize({6, 3});             // a's attributes are stale: the resize starts from the stored ones
        CHECK(s.stats().writes == 2); // .zarray and .zattrs, once each
        auto c = zx::open<std::int32_t, 2>(s, "a");
        CHECK(c.attributes() == zx::json{{"units", "km"}});
        CHECK(c.dimension_names() == zx::dimension_name_list{"y", "x"});
        CHECK(c.codecs() == b.codecs());
        CHECK(c.shape() == std::array<std::uint64_t, 2>{6, 3});
    }
}
