/** @file codec/partial_decode.hpp
 *  Partial decoding: how a codec chain reads a region of one stored object. Every read, whatever
 *  the chain, goes through the same two stages so the kernel has one path:
 *  - `plan_read` turns the region into a `read_plan`: the byte ranges of the object to fetch,
 *    grouped into batches, each within a memory budget (and, with several workers, small enough
 *    to give every worker some); what needs no fetch (missing data) is delivered to the sink here;
 *  - `read_batch` fetches one batch and decodes it into the sink; distinct batches may run on
 *    different workers at once.
 *  Three decoders exist: a chain that ends in an uncompressed `bytes` codec reads exactly the
 *  byte ranges of the region (`raw_decoder`, straight into the destination when it is contiguous
 *  there); the sharding codec reads its index, then the inner chunks' ranges; any other chain
 *  fetches the whole object and decodes it (one batch, no partial_decoder).
 *  A batch that finds the object replaced since it was planned returns false: the caller plans
 *  again (`read_region` does, a bounded number of times).
 */
#pragma once

#include "../detail/buffer.hpp"
#include "../detail/checked.hpp"
#include "../detail/endian.hpp"
#include "../kernel/io.hpp"
#include "concepts.hpp"

#include <algorithm>
#include <vector>

namespace zarrxt::codec
{

/// Ranges closer than this many bytes are read with one request.
inline constexpr std::uint64_t coalesce_gap = 4096;
/// A coalesced request never exceeds this many bytes (unless one inner chunk or one row alone does).
inline constexpr std::uint64_t coalesce_max = 32u << 20;
/// A coalesced request that is read into a worker's staging buffer (a shard's encoded inner chunks)
/// never exceeds this many bytes, unless one inner chunk alone does: the buffer is held, and first
/// touched, by every worker, so it is memory beside the result. Requests read straight into the
/// result keep coalesce_max. At 1 MiB a 100 MB shard read stays within its result + 8 MiB of peak
/// RSS on two workers, as fast as with 4 MiB batches (docs/benchmarks.md, 2026-12-07).
inline constexpr std::uint64_t stage_max = 1u << 20;
/// When one object's batches are spread over workers, none is cut below this much decoded data.
inline constexpr std::uint64_t spread_min = 128u << 10;

/// The read of a region of one object, split into batches (see the file comment).
struct read_plan
{
    /// An encoded piece of the object (an inner chunk of a shard).
    struct hit
    {
        std::uint64_t offset;
        std::uint64_t nbytes;
        std::size_t linear; ///< the inner chunk, in C order
    };
    /// Bytes [begin, end) of the object, read with one request. For a shard, hits[first, last) lie
    /// in it; for a raw chunk, rows [first, last) of the region along its first axis.
    struct batch
    {
        std::uint64_t begin;
        std::uint64_t end;
        std::size_t first;
        std::size_t last;
    };
    box region;                   ///< what was planned, in the object's coordinates
    bool whole = false;           ///< one batch: fetch the whole object and decode it
    std::uint64_t generation = 0; ///< the version every batch must read
    shard_index_ptr index;        ///< a shard's index (its generation is the shard's)
    std::vector<hit> hits;
    std::vector<batch> batches;
    std::uint64_t largest = 0; ///< bytes of the largest batch

    void reset(const box& r)
    {
        region = r;
        whole = false;
        generation = 0;
        index = nullptr;
        hits.clear();
        batches.clear();
        largest = 0;
    }

    void add_batch(std::uint64_t begin, std::uint64_t end, std::size_t first, std::size_t last)
    {
        batches.push_back({begin, end, first, last});
        largest = std::max(largest, end - begin);
    }
};

/// Make a worker's staging buffer large enough for every batch of `plan` before the first one is
/// read into it. Growing it batch by batch (each a little larger than the last) frees and
/// allocates a few MiB again and again, and glibc then serves them from its heap without giving
/// the freed ones back: measured on a 100 MB shard read with 2 MiB batches, 4 MiB more peak RSS on one
/// thread, and with 4 MiB batches 5-9 MiB more on two.
inline void stage_for(const read_plan& plan, buffer& staging)
{
    if (staging.capacity() < plan.largest)
    {
        staging.resize_discard(zarrxt::detail::to_size(plan.largest, "batch bytes"));
    }
}

/// What a codec that can read part of an object offers (the sharding codec, raw chunks).
class partial_decoder
{
public:
    virtual ~partial_decoder() = default;

    /// Plan the read of `region` (object coordinates). `budget` is what one batch may hold; with
    /// `workers` > 1 batches are also cut small enough to give every worker several. False when the
    /// object changed while it was planned (plan again).
    virtual bool plan_read(range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
                           std::size_t workers, std::uint64_t budget, read_plan& plan) const = 0;

    /// Fetch batch `b` of `plan` and decode it into `sink`; thread-safe for distinct batches (each
    /// worker passes its own context). False when the object changed since it was planned.
    virtual bool read_batch(range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                            read_context& ctx) const = 0;
};

/// A chunk stored as its elements in C order (the `bytes` codec, full-width `packbits`): a region
/// is a set of byte runs, read exactly, one row (along the first axis) or a slab of rows per batch.
class raw_decoder final : public partial_decoder
{
public:
    /// `swap_word`: the stored words are byte-swapped in units of this many bytes (1: not at all).
    raw_decoder(const dims& shape, std::size_t element_size, std::size_t swap_word)
        : m_shape(shape)
        , m_strides(array_view::c_strides(shape))
        , m_width(element_size)
        , m_swap(swap_word)
    {
        std::uint64_t n = element_size;
        for (auto e : shape)
        {
            n *= e;
        }
        m_bytes = n;
    }

    bool plan_read(range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
                   std::size_t workers, std::uint64_t budget, read_plan& plan) const override;
    bool read_batch(range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                    read_context& ctx) const override;

private:
    /// Byte offset of the region's first element in row `r` (along axis 0) of the region.
    std::uint64_t row_begin(const box& region, std::uint64_t r) const
    {
        std::uint64_t off = 0;
        for (std::size_t d = 0; d < m_shape.size(); ++d)
        {
            off += (region.offset[d] + (d == 0 ? r : 0)) * static_cast<std::uint64_t>(m_strides[d]);
        }
        return off * m_width;
    }
    /// Bytes from the first to the end of the last element of one row of the region.
    std::uint64_t row_span(const box& region) const
    {
        std::uint64_t last = 0;
        for (std::size_t d = 1; d < m_shape.size(); ++d)
        {
            last += (region.extent[d] - 1) * static_cast<std::uint64_t>(m_strides[d]);
        }
        return (last + 1) * m_width;
    }

    dims m_shape;
    sdims m_strides;
    std::size_t m_width;
    std::size_t m_swap;
    std::uint64_t m_bytes = 0;
};

/// The codec chains' side of partial decoding (both `chain<...>` and `dynamic_chain` model it).
template <class Chain>
concept partially_decodable = requires(const Chain& c, mutable_byte_view in, mutable_byte_view dest,
                                       scratch_space& s, const limit_values& l)
{
    {
        c.partial_decoder()
        } -> std::same_as<const partial_decoder*>;
    {
        c.decode(in, s, l)
        } -> std::same_as<array_view>;
    {
        c.decode_into(in, dest, s, l)
        } -> std::same_as<bool>;
    c.context().chunk_shape;
};

/// Plan the read of `region` of one object through `chain` (see partial_decoder::plan_read).
template <partially_decodable Chain>
bool plan_read(const Chain& chain, range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
               std::size_t workers, std::uint64_t budget, read_plan& plan)
{
    if (const partial_decoder* p = chain.partial_decoder())
    {
        return p->plan_read(src, region, sink, ctx, workers, budget, plan);
    }
    plan.reset(region);
    plan.whole = true;
    if (region.elements() != 0)
    {
        plan.add_batch(0, 0, 0, 0);
    }
    return true;
}

/// Fetch and decode batch `b` of `plan` (see partial_decoder::read_batch).
template <partially_decodable Chain>
bool read_batch(const Chain& chain, range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                read_context& ctx)
{
    if (!plan.whole)
    {
        return chain.partial_decoder()->read_batch(src, plan, b, sink, ctx);
    }
    // Fetch the whole object and decode it, straight into the destination when the chunk lies
    // wholly in the request and its part of the destination is one C-ordered block.
    scratch_space local;
    scratch_space& sc = ctx.scratch != nullptr ? *ctx.scratch : local;
    const dims& shape = chain.context().chunk_shape;
    const dims zero(shape.size(), 0);
    try
    {
        if (!src.read_to(byte_range::all(), ctx.limits.max_chunk_bytes, sc.io))
        {
            sink.fill(plan.region.offset, plan.region.extent);
            return true;
        }
        if (ctx.counters != nullptr)
        {
            ctx.counters->add_payload_read(sc.io.size());
        }
        const mutable_byte_view dest = sink.destination(zero, shape);
        if (!dest.empty() && chain.decode_into(sc.io.mutable_view(), dest, sc, ctx.limits))
        {
            sink.placed(dest);
            return true;
        }
        sink.piece(chain.decode(sc.io.mutable_view(), sc, ctx.limits), zero);
    }
    catch (error& e)
    {
        e.with_key(src.key());
        if (!ctx.tolerate(e))
        {
            throw;
        }
        sink.fill(plan.region.offset, plan.region.extent); // a damaged chunk reads as missing
    }
    return true;
}

/// Tell `src` the byte ranges of a plan's batches, all at once, before any is read (the fetch
/// stage's batch: a store with many requests in flight starts them together). Only the leading
/// batches that fit `budget` bytes are announced, so what a store may fetch ahead stays within the
/// operation's bytes in flight; a plan of one batch announces nothing (it is read right away).
inline void announce_batches(range_reader& src, const read_plan& plan, std::uint64_t budget)
{
    if (plan.batches.size() < 2)
    {
        return;
    }
    std::vector<byte_range> ranges;
    ranges.reserve(plan.batches.size());
    std::uint64_t total = 0;
    for (const auto& b : plan.batches)
    {
        total += b.end - b.begin;
        if (total > budget && !ranges.empty())
        {
            break;
        }
        ranges.push_back(byte_range::of(b.begin, b.end - b.begin));
    }
    src.will_read(ranges);
}

/// Deliver every element of `region` of one object to `sink`, batch after batch on this thread.
/// One batch holds at most the operation's budget for bytes in flight (an inner chunk or a row
/// alone may need more; max_chunk_bytes caps that).
inline void read_region(const partial_decoder& p, range_reader& src, const box& region, piece_sink& sink,
                        read_context& ctx)
{
    // An object replaced while it is read shows up as a generation change: start over (bounded).
    for (int attempt = 0; attempt < 8; ++attempt)
    {
        read_plan plan;
        bool ok = p.plan_read(src, region, sink, ctx, 1, ctx.limits.max_bytes_in_flight, plan);
        if (ok)
        {
            announce_batches(src, plan, ctx.limits.max_bytes_in_flight);
        }
        for (std::size_t b = 0; ok && b < plan.batches.size(); ++b)
        {
            ok = p.read_batch(src, plan, b, sink, ctx);
        }
        if (ok)
        {
            return;
        }
        if (ctx.cache != nullptr)
        {
            ctx.cache.invalidate(src.cache_key());
        }
    }
    shard_error e(shard_errc::unstable, "the object kept changing while it was read (8 attempts)");
    e.with_key(src.key());
    throw e;
}

template <partially_decodable Chain>
void read_region(const Chain& chain, range_reader& src, const box& region, piece_sink& sink,
                 read_context& ctx)
{
    if (const partial_decoder* p = chain.partial_decoder())
    {
        read_region(*p, src, region, sink, ctx);
        return;
    }
    read_plan plan;
    plan_read(chain, src, region, sink, ctx, 1, ctx.limits.max_bytes_in_flight, plan);
    for (std::size_t b = 0; b < plan.batches.size(); ++b)
    {
        read_batch(chain, src, plan, b, sink, ctx);
    }
}

/******************
 * implementation *
 ******************/

inline bool raw_decoder::plan_read(range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
                                   std::size_t workers, std::uint64_t budget, read_plan& plan) const
{
    plan.reset(region);
    if (region.elements() == 0)
    {
        return true;
    }
    try
    {
        const auto st = src.stat();
        if (!st)
        {
            sink.fill(region.offset, region.extent);
            return true;
        }
        if (st->size > ctx.limits.max_chunk_bytes)
        {
            // The same refusal a whole-chunk read gives, before anything is read.
            throw limit_exceeded("max_chunk_bytes", st->size, ctx.limits.max_chunk_bytes);
        }
        if (st->size != m_bytes)
        {
            throw codec_error(codec_errc::size_mismatch, "bytes",
                              "chunk has " + std::to_string(st->size) + " bytes, expected " +
                                  std::to_string(m_bytes));
        }
        plan.generation = st->generation;
    }
    catch (error& e)
    {
        e.with_key(src.key());
        if (!ctx.tolerate(e))
        {
            throw;
        }
        sink.fill(region.offset, region.extent); // a damaged chunk reads as missing
        return true;
    }
    if (m_shape.empty())
    {
        plan.add_batch(0, m_bytes, 0, 1);
        return true;
    }
    // Rows along the first axis are the unit: within a row the bytes between the region's runs
    // are read too (they are at most one row of the chunk); rows further apart than a small gap
    // are separate requests.
    const std::uint64_t rows = region.extent[0];
    const std::uint64_t span = row_span(region);
    const std::uint64_t pitch = static_cast<std::uint64_t>(m_strides[0]) * m_width;
    const std::uint64_t cap =
        std::max<std::uint64_t>(1, std::min({coalesce_max, budget, ctx.limits.max_chunk_bytes}));
    std::uint64_t per_batch = pitch - span > coalesce_gap ? 1 : std::max<std::uint64_t>(1, cap / pitch);
    if (workers > 1)
    {
        // Enough batches that every worker gets about four, never below spread_min of data each.
        std::uint64_t row_bytes = m_width;
        for (std::size_t d = 1; d < m_shape.size(); ++d)
        {
            row_bytes *= region.extent[d];
        }
        const std::uint64_t work = std::max<std::uint64_t>(spread_min, rows * row_bytes / (4 * workers));
        per_batch = std::min(per_batch, std::max<std::uint64_t>(1, work / row_bytes));
    }
    for (std::uint64_t r = 0; r < rows; r += per_batch)
    {
        const std::uint64_t last = std::min(rows, r + per_batch);
        plan.add_batch(row_begin(region, r), row_begin(region, last - 1) + span, static_cast<std::size_t>(r),
                       static_cast<std::size_t>(last));
    }
    return true;
}

inline bool raw_decoder::read_batch(range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                                    read_context& ctx) const
{
    const read_plan::batch& bt = plan.batches[b];
    box slab = plan.region;
    bool contiguous = true; // the slab is one run of the chunk
    if (!m_shape.empty())
    {
        slab.offset[0] += bt.first;
        slab.extent[0] = bt.last - bt.first;
        for (std::size_t d = 1; d < m_shape.size(); ++d)
        {
            contiguous = contiguous && slab.extent[d] == m_shape[d];
        }
    }
    const std::uint64_t n = bt.end - bt.begin;
    auto same_version = [&](const std::optional<object_info>& info)
    { return info && info->generation == plan.generation && info->size == m_bytes; };
    try
    {
        const mutable_byte_view dest =
            contiguous ? sink.destination(slab.offset, slab.extent) : mutable_byte_view{};
        if (!dest.empty() && dest.size() == n)
        {
            // Straight into the caller's array: one read, then the byte swap if the order differs.
            if (!same_version(src.read_into(bt.begin, dest)))
            {
                return false;
            }
            if (ctx.counters != nullptr)
            {
                ctx.counters->add_payload_read(n);
            }
            zarrxt::detail::byteswap_in_place(dest.data(), dest.size(), m_swap);
            sink.placed(dest);
            return true;
        }
        buffer local;
        buffer& data = ctx.scratch != nullptr ? ctx.scratch->io : local;
        if (!same_version(src.read_to(byte_range::of(bt.begin, n), std::max<std::uint64_t>(n, 1), data)) ||
            data.size() != n)
        {
            return false;
        }
        if (ctx.counters != nullptr)
        {
            ctx.counters->add_payload_read(n);
        }
        zarrxt::detail::byteswap_in_place(data.data(), data.size(), m_swap);
        array_view v;
        v.data = data.data();
        v.element_size = m_width;
        v.shape = slab.extent;
        v.strides = m_strides;
        sink.piece(v, slab.offset);
    }
    catch (error& e)
    {
        e.with_key(src.key());
        e.with_range(bt.begin, n);
        if (!ctx.tolerate(e))
        {
            throw;
        }
        sink.fill(slab.offset, slab.extent);
    }
    return true;
}

} // namespace zarrxt::codec
