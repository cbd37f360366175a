/** @file detail/odometer.hpp
 *  The step of a multi-index walking a box in C order (the last axis fastest), for the loops that
 *  visit the runs or cells of a box one at a time.
 */
#pragma once

#include <cstddef>

namespace zarrxt::detail
{

/// Steps `idx` to the next index of the box [lo, hi) along its first `axes` axes; an axis that
/// passes its end goes back to `lo` and carries into the one before. False when the walk is over
/// (the index wrapped around, or there are no axes to step).
template <class Index, class Lo, class Hi>
constexpr bool next_index(Index& idx, const Lo& lo, const Hi& hi, std::size_t axes) noexcept
{
    for (std::size_t a = axes; a-- > 0;)
    {
        if (++idx[a] < hi[a])
        {
            return true;
        }
        idx[a] = lo[a];
    }
    return false;
}

/// next_index over the box [0, extent).
template <class Index, class Extent>
constexpr bool next_index(Index& idx, const Extent& extent, std::size_t axes) noexcept
{
    for (std::size_t a = axes; a-- > 0;)
    {
        if (++idx[a] < extent[a])
        {
            return true;
        }
        idx[a] = 0;
    }
    return false;
}

} // namespace zarrxt::detail
