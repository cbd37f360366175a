/** @file codec/sharding_indexed/index_format.hpp
 *  The decoded form of a shard index (sharding_indexed): the table of (offset, nbytes) pairs that
 *  locates every inner chunk of one shard, validated before use, with the generation of the shard
 *  it was read from. The sharding codec reads and writes it; index caches hold it, which is why it
 *  is plain data depending on nothing of the codec (cache/index_cache.hpp includes it alone).
 *  Reading and validating an index is sharding_indexed/index.hpp.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace zarrxt
{

/// A decoded, validated shard index.
struct shard_index
{
    static constexpr std::uint64_t missing = ~std::uint64_t{0};

    std::vector<std::uint64_t> entries; ///< offset, nbytes for each inner chunk in C order
    std::uint64_t generation = 0;       ///< of the shard object the index was read from
    std::uint64_t object_size = 0;

    std::size_t chunks() const noexcept { return entries.size() / 2; }
    std::uint64_t offset(std::size_t i) const noexcept { return entries[2 * i]; }
    std::uint64_t nbytes(std::size_t i) const noexcept { return entries[2 * i + 1]; }
    bool is_missing(std::size_t i) const noexcept
    {
        return entries[2 * i] == missing && entries[2 * i + 1] == missing;
    }
    std::size_t memory_bytes() const noexcept
    {
        return entries.size() * sizeof(std::uint64_t) + sizeof(*this);
    }
};

using shard_index_ptr = std::shared_ptr<const shard_index>;

/// The entries of a decoded, validated index where they lie (native 64-bit pairs in C order),
/// for a read that keeps no index: it looks up the inner chunks it touches without copying the
/// table (a 256 KiB index copied per read was most of a small scattered read).
struct shard_index_view
{
    const std::byte* data = nullptr;

    std::uint64_t offset(std::size_t i) const noexcept { return load(16 * i); }
    std::uint64_t nbytes(std::size_t i) const noexcept { return load(16 * i + 8); }
    bool is_missing(std::size_t i) const noexcept
    {
        return offset(i) == shard_index::missing && nbytes(i) == shard_index::missing;
    }

private:
    std::uint64_t load(std::size_t at) const noexcept
    {
        std::uint64_t v;
        std::memcpy(&v, data + at, sizeof v); // the decoded bytes need not be 8-byte aligned
        return v;
    }
};

} // namespace zarrxt
