/** @file codec/sharding_indexed/read.hpp
 *  Reading a shard: the read plan (`plan_read`: the index, missing inner chunks as fill, nested
 *  shards read through, the rest grouped into batches of coalesced byte ranges), `read_batch`
 *  (fetch one batch, decode its inner chunks), the whole-shard `decode` used when the shard is not
 *  the whole chain, and `verify`. The last two go through codec::read_region like any partial read.
 */
#pragma once

#include "../../detail/fill.hpp"
#include "../../detail/odometer.hpp"
#include "../../detail/strided_copy.hpp"
#include "../partial_decode.hpp"
#include "config.hpp"
#include "declaration.hpp"
#include "index.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace zarrxt
{
namespace codec
{

template <class InnerChain, class IndexChain, class IndexCache>
bool sharding_indexed<InnerChain, IndexChain, IndexCache>::plan_read(range_reader& src, const box& region,
                                                                     piece_sink& sink, read_context& ctx,
                                                                     std::size_t workers,
                                                                     std::uint64_t budget,
                                                                     read_plan& plan) const
{
    plan.reset(region);
    const std::size_t rank = m_inner.size();
    dims lo(rank);
    dims hi(rank);
    for (std::size_t d = 0; d < rank; ++d)
    {
        if (region.extent[d] == 0)
        {
            return true;
        }
        lo[d] = region.offset[d] / m_inner[d];
        hi[d] = (region.offset[d] + region.extent[d] + m_inner[d] - 1) / m_inner[d];
    }
    const codec::sharding_base* nested = m_inner_chain.sharding();
    // Without a cache that keeps indexes, the index is validated where it was read and decoded
    // (the worker's reused buffer) and the walk below looks up only the inner chunks it touches:
    // no copy of the whole table, no fresh memory per read. Nested shards read their own indexes
    // through the same buffer in the middle of the walk, so they take the parsed copy.
    const bool in_place = nested == nullptr && (ctx.cache == nullptr || !ctx.cache.retains());
    buffer own_bytes;
    buffer& index_bytes = in_place && ctx.scratch != nullptr ? ctx.scratch->index : own_bytes;
    scratch_space decode_space; // the index chain's stages, when it has any; lives through the walk
    shard_index_view view;
    bool from_cache = false;
    shard_index_ptr idx;
    try
    {
        if (in_place)
        {
            if (const auto info = read_index_bytes(src, ctx, index_bytes))
            {
                const array_view v =
                    decode_index(index_bytes.mutable_view(), decode_space, info->size, src.key());
                if (v.element_size == 8 && v.elements() == 2 * m_count &&
                    v.strides == array_view::c_strides(v.shape))
                {
                    validate_index(v.data, info->size, src.key());
                    view.data = v.data;
                    plan.generation = info->generation;
                }
                else // an index chain that leaves the entries strided (a transpose): a C-order copy
                {
                    // Of the view decoded above: decoding the bytes again would run the chain's
                    // in-place stages (a big-endian swap) twice and fail the checksum.
                    idx = index_from(v, info->size, info->generation, src.key());
                }
            }
        }
        else
        {
            idx = fetch_index(src, ctx, from_cache);
        }
    }
    catch (error& e)
    {
        e.with_key(src.key());
        if (!ctx.tolerate(e))
        {
            throw;
        }
        idx = nullptr; // a bad index makes the whole shard read as missing
        view.data = nullptr;
    }
    if (!idx && view.data == nullptr)
    {
        sink.fill(region.offset, region.extent);
        return true;
    }
    if (idx)
    {
        plan.generation = idx->generation;
    }
    std::vector<hit>& hits = plan.hits;
    bool unverified = from_cache; // a cached index is confirmed by the generation of a payload read

    // Walk the touched inner chunks in C order.
    const auto walk = [&](const auto& entries) -> bool
    {
        dims c = lo;
        while (true)
        {
            std::size_t linear = 0;
            for (std::size_t d = 0; d < rank; ++d)
            {
                linear = linear * m_grid[d] + c[d];
            }
            if (entries.is_missing(linear))
            {
                sink.fill(origin_of(linear), m_inner);
            }
            else if (nested != nullptr)
            {
                if (unverified)
                {
                    auto st = src.stat();
                    if (!st || st->generation != plan.generation)
                    {
                        return false;
                    }
                    unverified = false;
                }
                const dims origin = origin_of(linear);
                sub_reader inner_src(src, entries.offset(linear), entries.nbytes(linear), plan.generation);
                offset_sink shifted(sink, origin);
                codec::read_region(*nested, inner_src, clip(region, origin, m_inner), shifted, ctx);
            }
            else
            {
                hits.push_back({entries.offset(linear), entries.nbytes(linear), linear});
            }
            if (!zarrxt::detail::next_index(c, lo, hi, rank))
            {
                return true;
            }
        }
    };
    if (!(idx ? walk(*idx) : walk(view)))
    {
        return false;
    }
    if (hits.empty())
    {
        if (unverified)
        {
            auto st = src.stat();
            if (!st || st->generation != plan.generation)
            {
                return false;
            }
        }
        return true;
    }
    plan.index = idx;

    std::sort(hits.begin(), hits.end(), [](const hit& a, const hit& b) { return a.offset < b.offset; });
    // One request is also one read of at most max_chunk_bytes (a single inner chunk may need all of it).
    // Batches are staged in the worker's buffer before their inner chunks decode: stage_max.
    const std::uint64_t cap =
        std::max<std::uint64_t>(1, std::min({stage_max, budget, ctx.limits.max_chunk_bytes}));
    std::size_t per_batch = hits.size();
    if (workers > 1)
    {
        // Enough batches that every worker gets about four (so they finish together), counted in
        // decoded bytes, which is the work; never so small that a batch is not worth a task.
        const std::uint64_t work =
            std::max<std::uint64_t>(spread_min, hits.size() * m_inner_bytes / (4 * workers));
        per_batch = static_cast<std::size_t>(
            std::max<std::uint64_t>(1, work / std::max<std::size_t>(1, m_inner_bytes)));
    }
    std::size_t i = 0;
    while (i < hits.size())
    {
        std::size_t j = i;
        const std::uint64_t begin = hits[i].offset;
        std::uint64_t end = begin + hits[i].nbytes;
        while (j + 1 < hits.size() && j + 1 - i < per_batch && hits[j + 1].offset <= end + coalesce_gap &&
               std::max(end, hits[j + 1].offset + hits[j + 1].nbytes) - begin <= cap)
        {
            ++j;
            end = std::max(end, hits[j].offset + hits[j].nbytes);
        }
        if (end - begin > ctx.limits.max_chunk_bytes)
        {
            limit_exceeded e("max_chunk_bytes", end - begin, ctx.limits.max_chunk_bytes);
            e.with_key(src.key());
            e.with_range(begin, end - begin);
            throw e;
        }
        plan.add_batch(begin, end, i, j + 1);
        i = j + 1;
    }
    return true;
}

template <class InnerChain, class IndexChain, class IndexCache>
bool sharding_indexed<InnerChain, IndexChain, IndexCache>::read_batch(range_reader& src,
                                                                      const read_plan& plan, std::size_t b,
                                                                      piece_sink& sink,
                                                                      read_context& ctx) const
{
    const read_plan::batch& bt = plan.batches[b];
    const std::uint64_t begin = bt.begin;
    const std::uint64_t end = bt.end;
    buffer local;
    buffer& data = ctx.scratch != nullptr ? ctx.scratch->io : local; // the worker's, reused
    stage_for(plan, data);
    auto info =
        src.read_to(byte_range::of(begin, end - begin), std::max<std::uint64_t>(end - begin, 1), data);
    if (!info || info->generation != plan.generation || data.size() != end - begin)
    {
        return false; // the shard changed (or vanished) since its index was read
    }
    if (ctx.counters)
    {
        ctx.counters->add_payload_read(data.size());
    }
    buffer dup; // decoding is in place; entries sharing bytes (deduplicated chunks) decode from a copy
    std::uint64_t prev_end = 0;
    for (std::size_t k = bt.first; k < bt.last; ++k)
    {
        const hit& h = plan.hits[k];
        const auto rel = static_cast<std::size_t>(h.offset - begin);
        const auto n = static_cast<std::size_t>(h.nbytes);
        mutable_byte_view bytes(data.data() + rel, n);
        if (k > bt.first && h.offset < prev_end && n != 0)
        {
            dup.resize_discard(n);
            std::memcpy(dup.data(), data.data() + rel, n);
            bytes = dup.mutable_view();
        }
        prev_end = std::max(prev_end, h.offset + h.nbytes);
        const dims origin = origin_of(h.linear);
        try
        {
            const mutable_byte_view dest = sink.destination(origin, m_inner);
            if (dest.size() == m_inner_bytes &&
                m_inner_chain.decode_into(bytes, dest, *ctx.scratch, ctx.limits))
            {
                sink.placed(dest); // decoded straight into the caller's array
            }
            else
            {
                const array_view v = m_inner_chain.decode(bytes, *ctx.scratch, ctx.limits);
                sink.piece(v, origin);
            }
        }
        catch (error& e)
        {
            e.with_key(src.key());
            e.with_range(h.offset, h.nbytes);
            if (!ctx.tolerate(e))
            {
                throw;
            }
            sink.fill(origin, m_inner); // this inner chunk reads as missing
        }
    }
    return true;
}

namespace detail
{

/// Writes pieces into a C-contiguous array (a whole shard being decoded in memory).
class buffer_sink final : public piece_sink
{
public:
    buffer_sink(std::byte* data, const dims& shape, std::size_t width, const fill_value& fill)
        : m_data(data)
        , m_shape(shape)
        , m_strides(array_view::c_strides(shape))
        , m_width(width)
        , m_fill(fill)
    {
    }
    void piece(const array_view& chunk, const dims& origin) override
    {
        zarrxt::detail::strided_copy(at(origin), m_strides, chunk.data, chunk.strides, chunk.shape, m_width);
    }
    void fill(const dims& origin, const dims& extent) override
    {
        zarrxt::detail::fill_box(at(origin), m_strides, extent, m_width, m_fill);
    }

private:
    std::byte* at(const dims& origin) const
    {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < origin.size(); ++d)
        {
            off += static_cast<std::int64_t>(origin[d]) * m_strides[d];
        }
        return m_data + off * static_cast<std::int64_t>(m_width);
    }
    std::byte* m_data;
    dims m_shape;
    sdims m_strides;
    std::size_t m_width;
    fill_value m_fill;
};

} // namespace detail

template <class InnerChain, class IndexChain, class IndexCache>
mutable_byte_view sharding_indexed<InnerChain, IndexChain, IndexCache>::decode(mutable_byte_view in,
                                                                               buffer& out,
                                                                               value_arena* arena) const
{
    const std::size_t n = zarrxt::detail::to_size(
        zarrxt::detail::checked_mul(zarrxt::detail::checked_product(m_ctx.chunk_shape, "shard elements"),
                                    m_ctx.element_size(), "shard bytes"),
        "shard bytes");
    check_limit("max_chunk_bytes", n, m_ctx.limits.max_chunk_bytes);
    out.resize_discard(n);
    memory_reader src(byte_view(in.data(), in.size()), "(shard in memory)");
    detail::buffer_sink sink(out.data(), m_ctx.chunk_shape, m_ctx.element_size(), m_ctx.fill);
    scratch_space scratch;
    scratch.arena = arena; // inner chunks of a variable-length type keep their values there
    read_context ctx;
    ctx.limits = m_ctx.limits;
    ctx.scratch = &scratch;
    box all{dims(m_ctx.chunk_shape.size(), 0), m_ctx.chunk_shape};
    codec::read_region(*this, src, all, sink, ctx);
    return out.mutable_view();
}

template <class InnerChain, class IndexChain, class IndexCache>
void sharding_indexed<InnerChain, IndexChain, IndexCache>::verify(range_reader& src, read_context& ctx) const
{
    class discard_sink final : public piece_sink
    {
    public:
        void piece(const array_view&, const dims&) override {}
        void fill(const dims&, const dims&) override {}
    } sink;
    box all{dims(m_ctx.chunk_shape.size(), 0), m_ctx.chunk_shape};
    read_context plain = ctx;
    plain.cache = nullptr;
    codec::read_region(*this, src, all, sink, plain);
}

} // namespace codec
} // namespace zarrxt
