/** @file kernel/scatter.hpp
 *  Rank-specialised box copy and fill: the inner loop of every read and write.
 *
 *  The outer axes are walked by a fixed-size odometer (N is a compile-time constant, so the index
 *  and the strides live in registers or on the stack); the innermost run is one memcpy when both
 *  sides are contiguous along it. Trailing axes that are contiguous on both sides are merged first,
 *  so copying a whole chunk into a matching region is one memcpy, and copying a chunk row by row
 *  costs one call per row, never one per element. Strided runs (a transposed chunk) fall back to a
 *  fixed-width element loop.
 */
#pragma once

#include "../detail/fill.hpp"
#include "../detail/odometer.hpp"
#include "../detail/strided_copy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zarrxt::kernel
{

template <std::size_t N>
using strides_t = std::array<std::int64_t, N>;
template <std::size_t N>
using extents_t = std::array<std::uint64_t, N>;

/// Element strides of a C-ordered buffer holding exactly a box of these extents.
template <std::size_t N>
constexpr strides_t<N> c_strides(const extents_t<N>& extent) noexcept
{
    strides_t<N> s{};
    std::int64_t acc = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        s[d] = acc;
        acc *= static_cast<std::int64_t>(extent[d]);
    }
    return s;
}

namespace detail
{

/// Number of trailing axes (>= 1) that both sides can treat as one contiguous run, and its length.
template <std::size_t N>
inline std::size_t merge_contiguous(const strides_t<N>& ds, const strides_t<N>& ss, const extents_t<N>& ext,
                                    std::uint64_t& run) noexcept
{
    run = ext[N - 1];
    std::size_t m = N - 1; // axes [0, m) remain as outer axes
    if (ds[N - 1] != 1 || ss[N - 1] != 1)
    {
        return m;
    }
    while (m > 0 && ds[m - 1] == static_cast<std::int64_t>(run) && ss[m - 1] == static_cast<std::int64_t>(run))
    {
        run *= ext[m - 1];
        --m;
    }
    return m;
}

} // namespace detail

/// dst[box] = src[box]; strides in elements, `width` bytes per element.
template <std::size_t N>
void copy_box(std::byte* dst, const strides_t<N>& ds, const std::byte* src, const strides_t<N>& ss,
              const extents_t<N>& ext, std::size_t width) noexcept
{
    if constexpr (N == 0)
    {
        std::memcpy(dst, src, width);
    }
    else
    {
        for (auto e : ext)
        {
            if (e == 0)
            {
                return;
            }
        }
        std::uint64_t run = 0;
        const std::size_t outer = detail::merge_contiguous<N>(ds, ss, ext, run);
        const auto w = static_cast<std::int64_t>(width);
        const bool contiguous = ds[N - 1] == 1 && ss[N - 1] == 1;
        auto copy_run = [&](std::byte* d, const std::byte* s) {
            if (contiguous)
            {
                std::memcpy(d, s, run * width);
            }
            else
            {
                zarrxt::detail::copy_run(d, ds[N - 1], s, ss[N - 1], run, width);
            }
        };
        if (outer == 0)
        {
            copy_run(dst, src);
            return;
        }
        extents_t<N> idx{};
        std::byte* d = dst;
        const std::byte* s = src;
        while (true)
        {
            copy_run(d, s);
            // Advance the odometer over axes [0, outer).
            std::size_t a = outer;
            while (true)
            {
                --a;
                d += ds[a] * w;
                s += ss[a] * w;
                if (++idx[a] < ext[a])
                {
                    break;
                }
                d -= ds[a] * w * static_cast<std::int64_t>(ext[a]);
                s -= ss[a] * w * static_cast<std::int64_t>(ext[a]);
                idx[a] = 0;
                if (a == 0)
                {
                    return;
                }
            }
        }
    }
}

/// dst[box] = fill.
template <std::size_t N>
void fill_box(std::byte* dst, const strides_t<N>& ds, const extents_t<N>& ext, std::size_t width,
              const fill_value& fill) noexcept
{
    if constexpr (N == 0)
    {
        zarrxt::detail::fill_run(dst, 1, width, fill);
    }
    else
    {
        for (auto e : ext)
        {
            if (e == 0)
            {
                return;
            }
        }
        // Merge trailing contiguous axes (only the destination matters here).
        std::uint64_t run = ext[N - 1];
        std::size_t outer = N - 1;
        if (ds[N - 1] == 1)
        {
            while (outer > 0 && ds[outer - 1] == static_cast<std::int64_t>(run))
            {
                run *= ext[outer - 1];
                --outer;
            }
        }
        const auto w = static_cast<std::int64_t>(width);
        auto fill_one = [&](std::byte* d) {
            if (ds[N - 1] == 1)
            {
                zarrxt::detail::fill_run(d, run, width, fill);
            }
            else
            {
                for (std::uint64_t i = 0; i < run; ++i)
                {
                    std::memcpy(d + static_cast<std::int64_t>(i) * ds[N - 1] * w, fill.data(), width);
                }
            }
        };
        if (outer == 0)
        {
            fill_one(dst);
            return;
        }
        extents_t<N> idx{};
        std::byte* d = dst;
        while (true)
        {
            fill_one(d);
            std::size_t a = outer;
            while (true)
            {
                --a;
                d += ds[a] * w;
                if (++idx[a] < ext[a])
                {
                    break;
                }
                d -= ds[a] * w * static_cast<std::int64_t>(ext[a]);
                idx[a] = 0;
                if (a == 0)
                {
                    return;
                }
            }
        }
    }
}

/// Bool elements are stored as bytes; anything but 0 reads as true (as numpy does). Loading a
/// byte other than 0 or 1 as `bool` is undefined behaviour, so decoded bool data is normalised.
template <std::size_t N>
void normalize_bool_box(std::byte* dst, const strides_t<N>& ds, const extents_t<N>& ext) noexcept
{
    if constexpr (N == 0)
    {
        *dst = *dst != std::byte{0} ? std::byte{1} : std::byte{0};
    }
    else
    {
        for (auto e : ext)
        {
            if (e == 0)
            {
                return;
            }
        }
        extents_t<N> idx{};
        while (true)
        {
            std::int64_t off = 0;
            for (std::size_t a = 0; a + 1 < N; ++a)
            {
                off += static_cast<std::int64_t>(idx[a]) * ds[a];
            }
            for (std::uint64_t i = 0; i < ext[N - 1]; ++i)
            {
                std::byte& b = dst[off + static_cast<std::int64_t>(i) * ds[N - 1]];
                b = b != std::byte{0} ? std::byte{1} : std::byte{0};
            }
            if (!zarrxt::detail::next_index(idx, ext, N - 1))
            {
                return;
            }
        }
    }
}

} // namespace zarrxt::kernel
