/** @file limits.hpp
 *  Resource limits: the Limits policy of zarrxt::array.
 *
 *  Metadata and chunks come from strangers. Every size that decides an allocation is checked
 *  against one of these caps *before* allocating, and decompressors are bounded while they
 *  inflate, so a 1 KB gzip bomb stops at the cap instead of after filling memory.
 *  A limits policy is any type satisfying `limits_policy`; its values may be changed per array.
 */
#pragma once

#include "error.hpp"

#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>

namespace zarrxt
{

/// Caps with defaults suited to an interactive or server process on a normal machine.
struct default_limits
{
    std::uint64_t max_metadata_bytes = 16ull << 20;   ///< one zarr.json / .zarray / .zattrs document
    std::uint64_t max_json_depth = 64;                ///< nesting depth of a metadata document
    std::uint64_t max_chunk_bytes = 2ull << 30;       ///< decoded (or encoded) bytes of one chunk/shard
    std::uint64_t max_shard_index_bytes = 256ull << 20; ///< encoded bytes of one shard index
    std::uint64_t max_bytes_in_flight = 4ull << 30;   ///< bytes one operation may hold at once
    std::uint64_t max_read_elements = 1ull << 40;     ///< elements returned by one read
};

/// No caps beyond what 64-bit arithmetic allows (for trusted data only).
struct unlimited_limits
{
    static constexpr std::uint64_t big = std::numeric_limits<std::uint64_t>::max() / 4;
    std::uint64_t max_metadata_bytes = big;
    std::uint64_t max_json_depth = 10000;
    std::uint64_t max_chunk_bytes = big;
    std::uint64_t max_shard_index_bytes = big;
    std::uint64_t max_bytes_in_flight = big;
    std::uint64_t max_read_elements = big;
};

/// A limits policy names every cap as an unsigned 64-bit member.
template <class L>
concept limits_policy = std::copyable<L> && requires(const L& l) {
    {
        l.max_metadata_bytes
    } -> std::convertible_to<std::uint64_t>;
    {
        l.max_json_depth
    } -> std::convertible_to<std::uint64_t>;
    {
        l.max_chunk_bytes
    } -> std::convertible_to<std::uint64_t>;
    {
        l.max_shard_index_bytes
    } -> std::convertible_to<std::uint64_t>;
    {
        l.max_bytes_in_flight
    } -> std::convertible_to<std::uint64_t>;
    {
        l.max_read_elements
    } -> std::convertible_to<std::uint64_t>;
};

/// The values untyped code works with (a limits policy is converted to this once per array).
struct limit_values
{
    std::uint64_t max_metadata_bytes;
    std::uint64_t max_json_depth;
    std::uint64_t max_chunk_bytes;
    std::uint64_t max_shard_index_bytes;
    std::uint64_t max_bytes_in_flight;
    std::uint64_t max_read_elements;

    template <limits_policy L>
    static limit_values from(const L& l) noexcept
    {
        return {l.max_metadata_bytes, l.max_json_depth,        l.max_chunk_bytes,
                l.max_shard_index_bytes, l.max_bytes_in_flight, l.max_read_elements};
    }
};

inline void check_limit(std::string_view name, std::uint64_t value, std::uint64_t limit)
{
    if (value > limit)
    {
        throw limit_exceeded(name, value, limit);
    }
}

} // namespace zarrxt
