/** @file detail/half.hpp
 *  The float16 element type: xtl's IEEE 754 binary16 (`xtl::half_float`), which xtensor already
 *  knows how to hold and compute with. Kept behind detail/ like the other third-party includes.
 */
#pragma once

#include <xtl/xhalf_float.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace zarrxt
{
using float16 = xtl::half_float;

static_assert(sizeof(float16) == 2 && std::is_trivially_copyable_v<float16>,
              "zarrxt needs a 2-byte, trivially copyable binary16 type");

namespace detail
{
inline std::uint16_t half_bits(float16 h) noexcept
{
    return std::bit_cast<std::uint16_t>(h);
}

inline float16 half_from_bits(std::uint16_t b) noexcept
{
    return std::bit_cast<float16>(b);
}

/// A double rounded once, to nearest even, to binary16. There is no direct conversion: go through
/// float rounded to odd (truncate, then set the last bit when inexact), so that the second rounding
/// cannot land on a tie the double was not on; float keeps 13 more bits than binary16.
inline float16 half_from_double(double d) noexcept
{
    float f = static_cast<float>(d);
    if (std::isfinite(d) && static_cast<double>(f) != d)
    {
        if (std::fabs(static_cast<double>(f)) > std::fabs(d))
        {
            f = std::nextafter(f, 0.0f);
        }
        f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
    }
    return float16(f);
}
} // namespace detail
} // namespace zarrxt
