/** @file codec/sharding_indexed/index.hpp
 *  Reading a shard's index: served by the index cache or fetched by one range (the start or the end
 *  of the shard), decoded with the index chain, and validated entry by entry (inside the shard, no
 *  overflow, clear of the index) before any reader trusts an offset. The index as data, which the
 *  caches hold too, is index_format.hpp; this part needs the codec (its index chain and geometry).
 */
#pragma once

#include "../../detail/strided_copy.hpp"
#include "../../error.hpp"
#include "config.hpp"
#include "declaration.hpp"
#include "index_format.hpp"

#include <memory>
#include <optional>
#include <string>

namespace zarrxt
{
namespace codec
{

template <class InnerChain, class IndexChain, class IndexCache>
array_view sharding_indexed<InnerChain, IndexChain, IndexCache>::decode_index(mutable_byte_view bytes,
                                                                              scratch_space& local,
                                                                              std::uint64_t object_size,
                                                                              const std::string& key) const
{
    if (bytes.size() != m_index_size)
    {
        shard_error e(shard_errc::index_size, "shard has " + std::to_string(object_size) +
                                                  " bytes, its index alone needs " +
                                                  std::to_string(m_index_size));
        e.with_key(key);
        throw e;
    }
    try
    {
        return m_index_chain.decode(bytes, local, m_ctx.limits);
    }
    catch (error& e)
    {
        e.with_key(key);
        e.within_stage("sharding_indexed/index");
        e.with_range(m_at_end ? object_size - m_index_size : 0, m_index_size);
        throw;
    }
}

template <class InnerChain, class IndexChain, class IndexCache>
void sharding_indexed<InnerChain, IndexChain, IndexCache>::validate_index(const std::byte* entries,
                                                                          std::uint64_t object_size,
                                                                          const std::string& key) const
{
    // An entry is missing (both all-ones) or lies inside the shard, outside the index.
    const shard_index_view idx{entries};
    const std::uint64_t payload_begin = m_at_end ? 0 : m_index_size;
    const std::uint64_t payload_end = m_at_end ? object_size - m_index_size : object_size;
    // One pass without branches first (it vectorises; a shard of 16,384 inner chunks is checked on
    // every read that keeps no index). An entry passes when both fields are the missing marker (their
    // AND is all ones only then) or it lies in [payload_begin, payload_end), written so that nothing
    // overflows; a marker in one field alone fails the second test, as payload_end < 2^64 - 1.
    bool all_valid = true;
    for (std::size_t i = 0; i < m_count; ++i)
    {
        const std::uint64_t off = idx.offset(i);
        const std::uint64_t n = idx.nbytes(i);
        const bool missing = (off & n) == shard_index::missing;
        const bool inside = off >= payload_begin && off <= payload_end && n <= payload_end - off;
        all_valid &= missing | inside;
    }
    if (all_valid)
    {
        return;
    }
    // Find the first bad entry and say what is wrong with it.
    for (std::size_t i = 0; i < m_count; ++i)
    {
        const std::uint64_t off = idx.offset(i);
        const std::uint64_t n = idx.nbytes(i);
        if (off == shard_index::missing && n == shard_index::missing)
        {
            continue;
        }
        auto fail = [&](shard_errc code, const std::string& why)
        {
            shard_error e(
                code, "index entry " + std::to_string(i) + " (inner chunk at " +
                          [&]
                          {
                              std::string s = "[";
                              const dims o = origin_of(i);
                              for (std::size_t d = 0; d < o.size(); ++d)
                              {
                                  s += (d ? ", " : "") + std::to_string(o[d]);
                              }
                              return s + "]";
                          }() +
                          "): offset " + std::to_string(off) + ", nbytes " + std::to_string(n) + ": " + why);
            e.with_key(key);
            throw e;
        };
        if (off == shard_index::missing || n == shard_index::missing)
        {
            fail(shard_errc::invalid_entry, "only one of offset and nbytes is the missing marker");
        }
        std::uint64_t end = 0;
        if (__builtin_add_overflow(off, n, &end))
        {
            fail(shard_errc::entry_out_of_range, "offset + nbytes overflows");
        }
        if (end > object_size)
        {
            fail(shard_errc::entry_out_of_range,
                 "extends past the end of the " + std::to_string(object_size) + "-byte shard");
        }
        if (off < payload_begin || end > payload_end)
        {
            fail(shard_errc::entry_overlaps_index, "overlaps the shard index");
        }
    }
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::parse_index(
    mutable_byte_view bytes, std::uint64_t object_size, std::uint64_t generation,
    const std::string& key) const
{
    scratch_space local;
    return index_from(decode_index(bytes, local, object_size, key), object_size, generation, key);
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::index_from(const array_view& v,
                                                                                 std::uint64_t object_size,
                                                                                 std::uint64_t generation,
                                                                                 const std::string& key) const
{
    auto idx = std::make_shared<shard_index>();
    idx->generation = generation;
    idx->object_size = object_size;
    idx->entries.resize(2 * m_count);
    zarrxt::detail::strided_copy(reinterpret_cast<std::byte*>(idx->entries.data()),
                                 array_view::c_strides(v.shape), v.data, v.strides, v.shape, 8);
    validate_index(reinterpret_cast<const std::byte*>(idx->entries.data()), object_size, key);
    return idx;
}

template <class InnerChain, class IndexChain, class IndexCache>
std::optional<object_info> sharding_indexed<InnerChain, IndexChain, IndexCache>::read_index_bytes(
    range_reader& src, read_context& ctx, buffer& out) const
{
    if (m_index_size > ctx.limits.max_shard_index_bytes)
    {
        limit_exceeded e("max_shard_index_bytes", m_index_size, ctx.limits.max_shard_index_bytes);
        e.with_key(src.key());
        throw e;
    }
    auto info = src.read_to(m_at_end ? byte_range::last(m_index_size) : byte_range::of(0, m_index_size),
                            m_index_size, out);
    if (info && ctx.counters)
    {
        ctx.counters->add_index_read(out.size());
    }
    return info;
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::fetch_index(range_reader& src,
                                                                                  read_context& ctx,
                                                                                  bool& from_cache) const
{
    from_cache = false;
    if (ctx.cache != nullptr)
    {
        if (auto p = with_cache(ctx.cache, [&](auto& c) { return c.find(src.cache_key()); }))
        {
            from_cache = true;
            if (ctx.counters)
            {
                ctx.counters->add_cache_hit();
            }
            return p;
        }
    }
    buffer bytes;
    const auto info = read_index_bytes(src, ctx, bytes);
    if (!info)
    {
        return nullptr;
    }
    auto idx = parse_index(bytes.mutable_view(), info->size, info->generation, src.key());
    if (ctx.cache != nullptr)
    {
        with_cache(ctx.cache,
                   [&](auto& c)
                   {
                       c.insert(src.cache_key(), idx);
                       if (ctx.counters)
                       {
                           ctx.counters->note_cached_bytes(c.cached_bytes());
                       }
                   });
    }
    return idx;
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::read_index(range_reader& src,
                                                                                 read_context& ctx) const
{
    read_context plain = ctx;
    plain.cache = nullptr;
    bool from_cache = false;
    return fetch_index(src, plain, from_cache);
}

} // namespace codec
} // namespace zarrxt
