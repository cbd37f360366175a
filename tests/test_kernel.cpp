// The rank-specialised copy and fill kernels against a naive element-by-element reference, over
// random boxes, strides (including transposed and negative ones) and element widths.
#include "test_support.hpp"

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

    TEST_CASE("bool normalisation turns any non-zero byte into 1")
    {
        std::vector<std::byte> v{std::byte{0}, std::byte{2}, std::byte{255}, std::byte{1}};
        zk::normalize_bool_box<1>(v.data(), {1}, {4});
        CHECK(v == std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1}, std::byte{1}});
    }
}
