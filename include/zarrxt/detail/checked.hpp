/** @file detail/checked.hpp
 *  Overflow-checked arithmetic for shapes, offsets and byte counts. Metadata comes from strangers:
 *  a shape of [2^40, 2^40] must become an error, never a wrapped product and a small allocation.
 */
#pragma once

#include "../error.hpp"

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

namespace zarrxt::detail
{

[[noreturn]] inline void throw_overflow(std::string_view what)
{
    throw metadata_error(metadata_errc::invalid_value,
                         std::string(what) + " overflows 64-bit arithmetic");
}

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what)
{
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
    {
        throw_overflow(what);
    }
    return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what)
{
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
    {
        throw_overflow(what);
    }
    return r;
}

/// Product of all extents; 1 for rank 0.
template <class Container>
std::uint64_t checked_product(const Container& extents, std::string_view what)
{
    std::uint64_t r = 1;
    for (auto e : extents)
    {
        r = checked_mul(r, static_cast<std::uint64_t>(e), what);
    }
    return r;
}

/// Values above this are refused as sizes of anything held in memory: they cannot be allocated and
/// keeping every size below 2^62 lets later sums of a few of them stay exact.
inline constexpr std::uint64_t max_in_memory_bytes = std::uint64_t(1) << 62;

inline std::size_t to_size(std::uint64_t v, std::string_view what)
{
    if (v > max_in_memory_bytes || v > std::numeric_limits<std::size_t>::max())
    {
        throw_overflow(what);
    }
    return static_cast<std::size_t>(v);
}

} // namespace zarrxt::detail
