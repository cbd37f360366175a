/** @file detail/half.hpp
 *  The float16 element type: xtl's IEEE 754 binary16 (`xtl::half_float`), which xtensor already
 *  knows how to hold and compute with. Kept behind detail/ like the other third-party includes.
 */
#pragma once

#include <xtl/xhalf_float.hpp>

#include <bit>
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
} // namespace detail
} // namespace zarrxt
