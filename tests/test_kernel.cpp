// The rank-specialised copy and fill kernels, and the run-time-rank strided_copy (which merges axes
// contiguous on both sides), against a naive element-by-element reference, over random boxes,
// strides (including transposed and negative ones) and element widths; small_vector's copies.
#include "test_support.hpp"

#include <zarrxt/detail/strided_copy.hpp>
#include <zarrxt/kernel/scatter.hpp>

#include <vector>

namespace zk = zarrxt::kernel;

namespace
{

template <std::size_t N, class F>
void for_each_index(const zk::extents_t<N>& ext, F&& f)
{
    std::uint64_t n = 1;
    for (auto x : ext)
    {
        n *= x;
    }
    std::array<std::uint64_t, N> idx{};
    for (std::uint64_t e = 0; e < n; ++e)
    {
        std::uint64_t r = e;
        for (std::size_t d = N; d-- > 0;)
        {
            idx[d] = r % ext[d];
            r /= ext[d];
        }
        f(idx);
    }
}

template <std::size_t N>
void check_random_copies(zxtest::lcg& rng, std::size_t width)
{
    for (int trial = 0; trial < 200; ++trial)
    {
        zk::extents_t<N> full{};
        zk::extents_t<N> ext{};
        for (std::size_t d = 0; d < N; ++d)
        {
            full[d] = 1 + rng.next() % 7;
            ext[d] = 1 + rng.next() % full[d];
        }
        if (rng.next() % 3 == 0)
        {
            ext = full; // the whole array: C-order copies merge into one run
        }
        // Source: C order, or a random axis permutation (a transposed chunk).
        std::array<std::size_t, N> perm{};
        for (std::size_t d = 0; d < N; ++d)
        {
            perm[d] = d;
        }
        if (rng.next() % 2)
        {
            for (std::size_t d = N; d-- > 1;)
            {
                std::swap(perm[d], perm[rng.next() % (d + 1)]);
            }
        }
        zk::strides_t<N> ss{};
        std::int64_t acc = 1;
        for (std::size_t k = N; k-- > 0;)
        {
            ss[perm[k]] = acc;
            acc *= static_cast<std::int64_t>(full[perm[k]]);
        }
        const std::size_t total = static_cast<std::size_t>(acc);
        std::vector<std::byte> src(total * width);
        for (auto& b : src)
        {
            b = static_cast<std::byte>(rng.next());
        }
        // Destination: C order over `full`, possibly reversed along axis 0 (negative stride).
        zk::strides_t<N> ds{};
        acc = 1;
        for (std::size_t d = N; d-- > 0;)
        {
            ds[d] = acc;
            acc *= static_cast<std::int64_t>(full[d]);
        }
        std::vector<std::byte> dst(total * width, std::byte{0xEE});
        std::vector<std::byte> ref = dst;
        std::int64_t dst_base = 0;
        const bool reverse = rng.next() % 4 == 0;
        if (reverse)
        {
            dst_base = static_cast<std::int64_t>(ext[0] - 1) * ds[0];
            ds[0] = -ds[0];
        }
        zk::copy_box<N>(dst.data() + dst_base * static_cast<std::int64_t>(width), ds, src.data(), ss, ext, width);
        // Reference: element by element.
        for_each_index(ext, [&](const std::array<std::uint64_t, N>& i) {
            std::int64_t so = 0;
            std::int64_t dofs = dst_base;
            for (std::size_t d = 0; d < N; ++d)
            {
                so += static_cast<std::int64_t>(i[d]) * ss[d];
                dofs += static_cast<std::int64_t>(i[d]) * ds[d];
            }
            std::memcpy(ref.data() + dofs * static_cast<std::int64_t>(width), src.data() + so * static_cast<std::int64_t>(width),
                        width);
        });
        REQUIRE(dst == ref);
        // The same copy through the run-time-rank strided_copy.
        {
            std::vector<std::byte> dst2(total * width, std::byte{0xEE});
            zarrxt::sdims dsv;
            zarrxt::sdims ssv;
            zarrxt::dims extv;
            for (std::size_t d = 0; d < N; ++d)
            {
                dsv.push_back(ds[d]);
                ssv.push_back(ss[d]);
                extv.push_back(ext[d]);
            }
            zarrxt::detail::strided_copy(dst2.data() + dst_base * static_cast<std::int64_t>(width), dsv,
                                         src.data(), ssv, extv, width);
            REQUIRE(dst2 == ref);
        }
        // Fill the same box and compare with a reference fill of exactly the box's elements.
        zarrxt::fill_value f;
        for (std::size_t i = 0; i < width; ++i)
        {
            f.bytes[i] = static_cast<std::byte>(0x10 + i);
        }
        std::vector<std::byte> ref_fill = dst;
        for_each_index(ext, [&](const std::array<std::uint64_t, N>& i) {
            std::int64_t o = dst_base;
            for (std::size_t d = 0; d < N; ++d)
            {
                o += static_cast<std::int64_t>(i[d]) * ds[d];
            }
            std::memcpy(ref_fill.data() + o * static_cast<std::int64_t>(width), f.bytes.data(), width);
        });
        zk::fill_box<N>(dst.data() + dst_base * static_cast<std::int64_t>(width), ds, ext, width, f);
        REQUIRE(dst == ref_fill);
    }
}

} // namespace

TEST_SUITE("kernel")
{
    TEST_CASE("copy_box and fill_box agree with the element-by-element reference")
    {
        zxtest::lcg rng(11);
        for (std::size_t width : {1u, 2u, 4u, 8u, 16u, 3u})
        {
            CAPTURE(width);
            check_random_copies<1>(rng, width);
            check_random_copies<2>(rng, width);
            check_random_copies<3>(rng, width);
            check_random_copies<4>(rng, width);
        }
    }

    TEST_CASE("small_vector copies and assignments carry exactly the elements in use")
    {
        zarrxt::dims a{3, 5, 7};
        zarrxt::dims b(a);
        CHECK(b == a);
        CHECK(b.size() == 3);
        b.push_back(11);
        zarrxt::dims c{1};
        c = b;
        CHECK(c == b);
        CHECK(c.size() == 4);
        CHECK(c[3] == 11);
        const zarrxt::dims& same = c;
        c = same; // self-assignment keeps the elements
        CHECK(c == zarrxt::dims{3, 5, 7, 11});
        c = zarrxt::dims{};
        CHECK(c.empty());
        c.resize(2, 9); // growing writes the new slots, whatever a copy left in the storage
        CHECK(c == zarrxt::dims{9, 9});
        zarrxt::dims z(4);
        CHECK(z == zarrxt::dims{0, 0, 0, 0});
    }

    TEST_CASE("strided_copy of a scalar and of arrays with extent-1 axes")
    {
        const std::byte one{0x5A};
        std::byte out{0};
        zarrxt::detail::strided_copy(&out, {}, &one, {}, {}, 1);
        CHECK(out == one);
        // Shape [1, 3, 1] with unrelated strides on the extent-1 axes: three elements, in order.
        const std::vector<std::uint16_t> src{10, 20, 30, 40, 50, 60};
        std::vector<std::uint16_t> dst(3, 0);
        zarrxt::detail::strided_copy(reinterpret_cast<std::byte*>(dst.data()), {99, 1, 7},
                                     reinterpret_cast<const std::byte*>(src.data()), {-5, 2, 3}, {1, 3, 1},
                                     2);
        CHECK(dst == std::vector<std::uint16_t>{10, 30, 50});
        // Every axis of extent 1: one element.
        zarrxt::detail::strided_copy(reinterpret_cast<std::byte*>(dst.data()), {4, 4},
                                     reinterpret_cast<const std::byte*>(src.data() + 5), {8, 8}, {1, 1}, 2);
        CHECK(dst[0] == 60);
        // An empty axis copies nothing.
        dst.assign(3, 0);
        zarrxt::detail::strided_copy(reinterpret_cast<std::byte*>(dst.data()), {3, 1},
                                     reinterpret_cast<const std::byte*>(src.data()), {3, 1}, {0, 3}, 2);
        CHECK(dst == std::vector<std::uint16_t>{0, 0, 0});
    }

    TEST_CASE("bool normalisation turns any non-zero byte into 1")
    {
        std::vector<std::byte> v{std::byte{0}, std::byte{2}, std::byte{255}, std::byte{1}};
        zk::normalize_bool_box<1>(v.data(), {1}, {4});
        CHECK(v == std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1}, std::byte{1}});
    }
}
