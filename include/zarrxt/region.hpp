/** @file region.hpp
 *  `region<N>`: a rectangular selection of an N-d array, as an offset and an extent per axis
 *  (`{{0, 64, 128}, {16, 64, 64}}` is 16x64x64 elements starting at [0, 64, 128]).
 *  Bounds are checked with overflow-safe arithmetic before any chunk is touched.
 */
#pragma once

#include "error.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace zarrxt
{

template <std::size_t N>
struct region
{
    std::array<std::uint64_t, N> offset{};
    std::array<std::uint64_t, N> extent{};

    /// The whole of an array of `shape`.
    static region all(const std::array<std::uint64_t, N>& shape) noexcept
    {
        region r;
        r.extent = shape;
        return r;
    }

    std::uint64_t elements() const noexcept
    {
        std::uint64_t n = 1;
        for (auto e : extent)
        {
            n *= e;
        }
        return n;
    }

    bool empty() const noexcept
    {
        for (auto e : extent)
        {
            if (e == 0)
            {
                return true;
            }
        }
        return false;
    }

    bool operator==(const region&) const = default;
};

namespace detail
{

inline std::string format_extents(const std::uint64_t* v, std::size_t n)
{
    std::string s = "[";
    for (std::size_t i = 0; i < n; ++i)
    {
        s += (i ? ", " : "") + std::to_string(v[i]);
    }
    return s + "]";
}

/// Throws array_error out_of_bounds unless `r` lies inside an array of `shape`.
template <std::size_t N>
void check_region(const region<N>& r, const std::vector<std::uint64_t>& shape)
{
    for (std::size_t d = 0; d < N; ++d)
    {
        std::uint64_t end = 0;
        if (__builtin_add_overflow(r.offset[d], r.extent[d], &end) || end > shape[d])
        {
            throw array_error(array_errc::out_of_bounds,
                              "region offset " + format_extents(r.offset.data(), N) + " extent "
                                  + format_extents(r.extent.data(), N) + " is outside the array shape "
                                  + format_extents(shape.data(), shape.size()));
        }
    }
}

} // namespace detail
} // namespace zarrxt
