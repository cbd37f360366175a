/** @file codec/sharding_indexed.hpp
 *  `sharding_indexed` (array -> bytes): a shard holds a grid of inner chunks, each encoded with the
 *  inner codec chain, plus an index locating them.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html
 *
 *  Shard layout (index at the end; with index_location "start" the index comes first):
 *
 *      +----------+----------+-----+----------------------------------------------+
 *      | chunk a  | chunk b  | ... | index: (offset, nbytes) uint64 per inner     |
 *      | (inner   | encoded) |     | chunk in C order, encoded by index_codecs    |
 *      +----------+----------+-----+----------------------------------------------+
 *
 *  An entry of (2^64-1, 2^64-1) marks an inner chunk that is not stored (it reads as fill value).
 *  Every entry is validated before use: inside the shard, no overflow, not overlapping the index.
 *
 *  Reads are partial: the index is read once (or served by the index cache), then only the byte
 *  ranges of the inner chunks a request touches, with adjacent ranges coalesced. Writes rebuild a
 *  shard once per call: touched inner chunks are re-encoded, untouched ones are copied as encoded
 *  bytes without decoding, empty inner chunks are not stored, and a shard left with no inner chunk
 *  is erased. Nested sharding (a sharding codec as the inner chain) reads through byte ranges of
 *  the outer shard all the way down.
 */
#pragma once

#include "../detail/fill.hpp"
#include "../detail/strided_copy.hpp"
#include "../kernel/io.hpp"
#include "../metadata/document.hpp"
#include "../zarrxt_fwd.hpp"
#include "codec_spec.hpp"
#include "concepts.hpp"
#include "partial_decode.hpp"
#include "partial_encode.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace zarrxt
{
namespace codec
{

/// What the kernels see of a sharding codec, whatever its inner and index chain types.
class sharding_base
    : public partial_decoder
    , public partial_encoder
{
public:
    // plan_read() fetches and validates the index (through the index cache), delivers missing
    // inner chunks as fill and reads nested shards, then groups the remaining inner chunks into
    // batches of byte ranges (sorted by offset, coalesced across small gaps); read_batch()
    // fetches one batch and decodes its inner chunks. write_region() streams a new version of
    // the shard (see stream_shard).

    /// The validated index of a shard (nullptr when the shard does not exist).
    virtual shard_index_ptr read_index(range_reader& src, read_context& ctx) const = 0;

    /// Decode every inner chunk of a shard (verification).
    virtual void verify(range_reader& src, read_context& ctx) const = 0;

    virtual const dims& inner_chunk_shape() const noexcept = 0;
    virtual bool index_at_end() const noexcept = 0;
    virtual std::size_t index_encoded_size() const noexcept = 0;
    virtual json configuration() const = 0;
};

template <class InnerChain, class IndexChain, class IndexCache>
class sharding_indexed final : public sharding_base
{
public:
    using codec_kind = array_to_bytes_tag;
    using inner_chain_type = InnerChain;
    using index_chain_type = IndexChain;
    using index_cache_type = IndexCache;
    static constexpr std::string_view name = "sharding_indexed";

    static sharding_indexed from_json(const json& cfg, const codec_context& ctx);
    json to_json() const { return configuration(); }
    json configuration() const override;

    /// Whole-shard decode/encode: used when the shard is not the only codec of its chain
    /// (a transpose before it or a compressor after it) and for nested shards being rewritten.
    mutable_byte_view decode(mutable_byte_view in, buffer& out) const;
    byte_view encode(byte_view in, buffer& out) const;

    bool plan_read(range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
                   std::size_t workers, std::uint64_t budget, read_plan& plan) const override;
    bool read_batch(range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                    read_context& ctx) const override;
    void write_region(object_io& io, const box& region, const box& bounds, const array_view& src,
                      write_context& ctx) const override;
    shard_index_ptr read_index(range_reader& src, read_context& ctx) const override;
    void verify(range_reader& src, read_context& ctx) const override;

    const dims& inner_chunk_shape() const noexcept override { return m_inner; }
    bool index_at_end() const noexcept override { return m_at_end; }
    std::size_t index_encoded_size() const noexcept override { return m_index_size; }
    const InnerChain& inner_chain() const noexcept { return m_inner_chain; }

    /// A shard write copies untouched inner chunks of the old shard in reads of at most this size.
    static constexpr std::uint64_t copy_window = 4u << 20;

private:
    using hit = read_plan::hit;

    shard_index_ptr fetch_index(range_reader& src, read_context& ctx, bool& from_cache) const;
    shard_index_ptr parse_index(mutable_byte_view bytes, std::uint64_t object_size, std::uint64_t generation,
                                const std::string& key) const;
    dims origin_of(std::size_t linear) const;
    bool stream_shard(object_output& out, const box& region, const box& bounds, const array_view* src,
                      range_reader* old_src, const shard_index* old, write_context& ctx) const;

    codec_context m_ctx; // the shard as an array (shape = shard shape)
    dims m_inner;        // inner chunk shape
    dims m_grid;         // inner chunks per axis
    std::size_t m_count = 0;
    bool m_at_end = true;
    std::size_t m_index_size = 0;
    std::size_t m_inner_bytes = 0;
    InnerChain m_inner_chain;
    IndexChain m_index_chain;
};

/******************
 * implementation *
 ******************/

namespace detail
{

inline std::vector<codec_spec> parse_codec_list(const json& j, std::string_view member)
{
    if (!j.is_array() || j.empty())
    {
        bad_config("sharding_indexed", "\"" + std::string(member) + "\" must be a non-empty array of codecs");
    }
    std::vector<codec_spec> out;
    for (const auto& c : j)
    {
        if (c.is_string())
        {
            out.emplace_back(c.get<std::string>());
        }
        else if (c.is_object() && c.contains("name") && c["name"].is_string())
        {
            json cfg = c.contains("configuration") ? c["configuration"] : json::object();
            if (!cfg.is_object())
            {
                bad_config("sharding_indexed", "codec configuration must be an object");
            }
            out.emplace_back(c["name"].get<std::string>(), std::move(cfg));
        }
        else
        {
            bad_config("sharding_indexed", "invalid codec in \"" + std::string(member) + "\": " + c.dump());
        }
    }
    return out;
}

inline json specs_to_json(const std::vector<codec_spec>& specs)
{
    json a = json::array();
    for (const auto& s : specs)
    {
        a.push_back(s.to_json());
    }
    return a;
}

} // namespace detail

template <class InnerChain, class IndexChain, class IndexCache>
sharding_indexed<InnerChain, IndexChain, IndexCache>
sharding_indexed<InnerChain, IndexChain, IndexCache>::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"chunk_shape", "codecs", "index_codecs", "index_location"});
    sharding_indexed s;
    s.m_ctx = ctx;
    const std::size_t rank = ctx.chunk_shape.size();
    auto cs = cfg.find("chunk_shape");
    if (cs == cfg.end() || !cs->is_array() || cs->size() != rank)
    {
        detail::bad_config(name, "\"chunk_shape\" must list " + std::to_string(rank) + " extents");
    }
    for (std::size_t d = 0; d < rank; ++d)
    {
        const json& e = (*cs)[d];
        if (!zarrxt::detail::is_nonnegative_integer(e) || e.get<std::uint64_t>() == 0)
        {
            detail::bad_config(name, "\"chunk_shape\" extents must be positive integers, got " + cs->dump());
        }
        const auto inner = e.get<std::uint64_t>();
        if (ctx.chunk_shape[d] % inner != 0)
        {
            detail::bad_config(name, "inner chunk shape " + cs->dump() +
                                         " does not divide the shard shape on axis " + std::to_string(d));
        }
        s.m_inner.push_back(inner);
        s.m_grid.push_back(ctx.chunk_shape[d] / inner);
    }
    s.m_count = zarrxt::detail::to_size(zarrxt::detail::checked_product(s.m_grid, "inner chunks per shard"),
                                        "inner chunks per shard");
    s.m_inner_bytes = zarrxt::detail::to_size(
        zarrxt::detail::checked_mul(zarrxt::detail::checked_product(s.m_inner, "inner chunk elements"),
                                    ctx.element_size(), "inner chunk bytes"),
        "inner chunk bytes");
    if (auto loc = cfg.find("index_location"); loc != cfg.end())
    {
        if (!loc->is_string() || (*loc != "start" && *loc != "end"))
        {
            detail::bad_config(name, "\"index_location\" must be \"start\" or \"end\", got " + loc->dump());
        }
        s.m_at_end = *loc == "end";
    }
    auto codecs = cfg.find("codecs");
    if (codecs == cfg.end())
    {
        detail::bad_config(name, "\"codecs\" is required");
    }
    auto index_codecs = cfg.find("index_codecs");
    if (index_codecs == cfg.end())
    {
        detail::bad_config(name, "\"index_codecs\" is required");
    }

    codec_context inner_ctx = ctx;
    inner_ctx.chunk_shape = s.m_inner;
    s.m_inner_chain = InnerChain::from_specs(detail::parse_codec_list(*codecs, "codecs"), inner_ctx);

    codec_context index_ctx;
    index_ctx.dtype = dtype_id::uint64;
    index_ctx.chunk_shape = s.m_grid;
    index_ctx.chunk_shape.push_back(2);
    index_ctx.fill = fill_value::of(shard_index::missing);
    index_ctx.limits = ctx.limits;
    // The index has its own cap: check it before binding the index chain (16 bytes per entry
    // decoded), and hold the chain's codecs, whose decoded size is the index, to that cap.
    check_limit("max_shard_index_bytes", zarrxt::detail::checked_mul(s.m_count, 16, "shard index bytes"),
                ctx.limits.max_shard_index_bytes);
    index_ctx.limits.max_chunk_bytes = ctx.limits.max_shard_index_bytes;
    s.m_index_chain =
        IndexChain::from_specs(detail::parse_codec_list(*index_codecs, "index_codecs"), index_ctx);
    auto fixed = s.m_index_chain.fixed_encoded_size();
    if (!fixed)
    {
        detail::bad_config(name,
                           "\"index_codecs\" must produce a fixed size (e.g. bytes, optionally crc32c); "
                           "compressors are not allowed there");
    }
    s.m_index_size = *fixed;
    check_limit("max_shard_index_bytes", s.m_index_size, ctx.limits.max_shard_index_bytes);
    return s;
}

template <class InnerChain, class IndexChain, class IndexCache>
json sharding_indexed<InnerChain, IndexChain, IndexCache>::configuration() const
{
    // The chains as bound: defaults filled in the same way as a top-level chain's.
    json j = json::object();
    j["chunk_shape"] = m_inner.to_vector();
    j["codecs"] = detail::specs_to_json(m_inner_chain.specs());
    j["index_codecs"] = detail::specs_to_json(m_index_chain.specs());
    j["index_location"] = m_at_end ? "end" : "start";
    return j;
}

template <class InnerChain, class IndexChain, class IndexCache>
dims sharding_indexed<InnerChain, IndexChain, IndexCache>::origin_of(std::size_t linear) const
{
    dims o(m_grid.size());
    for (std::size_t d = m_grid.size(); d-- > 0;)
    {
        o[d] = (linear % m_grid[d]) * m_inner[d];
        linear /= m_grid[d];
    }
    return o;
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::parse_index(
    mutable_byte_view bytes, std::uint64_t object_size, std::uint64_t generation,
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
    auto idx = std::make_shared<shard_index>();
    idx->generation = generation;
    idx->object_size = object_size;
    idx->entries.resize(2 * m_count);
    scratch_space local;
    array_view v;
    try
    {
        v = m_index_chain.decode(bytes, local, m_ctx.limits);
    }
    catch (error& e)
    {
        e.with_key(key);
        e.within_stage("sharding_indexed/index");
        e.with_range(m_at_end ? object_size - m_index_size : 0, m_index_size);
        throw;
    }
    zarrxt::detail::strided_copy(reinterpret_cast<std::byte*>(idx->entries.data()),
                                 array_view::c_strides(v.shape), v.data, v.strides, v.shape, 8);
    // Validate: an entry is missing (both all-ones) or lies inside the shard, outside the index.
    const std::uint64_t payload_begin = m_at_end ? 0 : m_index_size;
    const std::uint64_t payload_end = m_at_end ? object_size - m_index_size : object_size;
    for (std::size_t i = 0; i < m_count; ++i)
    {
        const std::uint64_t off = idx->offset(i);
        const std::uint64_t n = idx->nbytes(i);
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
    return idx;
}

template <class InnerChain, class IndexChain, class IndexCache>
shard_index_ptr sharding_indexed<InnerChain, IndexChain, IndexCache>::fetch_index(range_reader& src,
                                                                                  read_context& ctx,
                                                                                  bool& from_cache) const
{
    from_cache = false;
    if (ctx.cache != nullptr)
    {
        if (auto p = ctx.cache->find(src.cache_key()))
        {
            from_cache = true;
            if (ctx.counters)
            {
                ctx.counters->add_cache_hit();
            }
            return p;
        }
    }
    if (m_index_size > ctx.limits.max_shard_index_bytes)
    {
        limit_exceeded e("max_shard_index_bytes", m_index_size, ctx.limits.max_shard_index_bytes);
        e.with_key(src.key());
        throw e;
    }
    auto res =
        src.read(m_at_end ? byte_range::last(m_index_size) : byte_range::of(0, m_index_size), m_index_size);
    if (!res)
    {
        return nullptr;
    }
    if (ctx.counters)
    {
        ctx.counters->add_index_read(res->bytes.size());
    }
    auto idx = parse_index(res->bytes.mutable_view(), res->object_size, res->generation, src.key());
    if (ctx.cache != nullptr)
    {
        ctx.cache->insert(src.cache_key(), idx);
        if (ctx.counters)
        {
            ctx.counters->note_cached_bytes(ctx.cache->cached_bytes());
        }
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
    bool from_cache = false;
    shard_index_ptr idx;
    try
    {
        idx = fetch_index(src, ctx, from_cache);
    }
    catch (error& e)
    {
        e.with_key(src.key());
        if (!ctx.tolerate(e))
        {
            throw;
        }
        idx = nullptr; // a bad index makes the whole shard read as missing
    }
    if (!idx)
    {
        sink.fill(region.offset, region.extent);
        return true;
    }
    const codec::sharding_base* nested = m_inner_chain.sharding();
    std::vector<hit>& hits = plan.hits;
    bool unverified = from_cache; // a cached index is confirmed by the generation of a payload read

    // Walk the touched inner chunks in C order.
    dims c = lo;
    while (true)
    {
        std::size_t linear = 0;
        for (std::size_t d = 0; d < rank; ++d)
        {
            linear = linear * m_grid[d] + c[d];
        }
        dims origin(rank);
        for (std::size_t d = 0; d < rank; ++d)
        {
            origin[d] = c[d] * m_inner[d];
        }
        if (idx->is_missing(linear))
        {
            sink.fill(origin, m_inner);
        }
        else if (nested != nullptr)
        {
            if (unverified)
            {
                auto st = src.stat();
                if (!st || st->generation != idx->generation)
                {
                    return false;
                }
                unverified = false;
            }
            sub_reader inner_src(src, idx->offset(linear), idx->nbytes(linear), idx->generation);
            offset_sink shifted(sink, origin);
            codec::read_region(*nested, inner_src, clip(region, origin, m_inner), shifted, ctx);
        }
        else
        {
            hits.push_back({idx->offset(linear), idx->nbytes(linear), linear});
        }
        std::size_t d = rank;
        bool done = true;
        while (d > 0)
        {
            --d;
            if (++c[d] < hi[d])
            {
                done = false;
                break;
            }
            c[d] = lo[d];
        }
        if (done || rank == 0)
        {
            break;
        }
    }
    if (hits.empty())
    {
        if (unverified)
        {
            auto st = src.stat();
            if (!st || st->generation != idx->generation)
            {
                return false;
            }
        }
        return true;
    }
    plan.index = idx;

    std::sort(hits.begin(), hits.end(), [](const hit& a, const hit& b) { return a.offset < b.offset; });
    // One request is also one read of at most max_chunk_bytes (a single inner chunk may need all of it).
    const std::uint64_t cap =
        std::max<std::uint64_t>(1, std::min({coalesce_max, budget, ctx.limits.max_chunk_bytes}));
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
        plan.batches.push_back({begin, end, i, j + 1});
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
    auto info = src.read_to(byte_range::of(begin, end - begin), std::max<std::uint64_t>(end - begin, 1), data);
    if (!info || info->generation != plan.index->generation || data.size() != end - begin)
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
                                                                               buffer& out) const
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
    read_context ctx;
    ctx.limits = m_ctx.limits;
    ctx.scratch = &scratch;
    box all{dims(m_ctx.chunk_shape.size(), 0), m_ctx.chunk_shape};
    codec::read_region(*this, src, all, sink, ctx);
    return out.mutable_view();
}

template <class InnerChain, class IndexChain, class IndexCache>
byte_view sharding_indexed<InnerChain, IndexChain, IndexCache>::encode(byte_view in, buffer& out) const
{
    array_view src;
    src.data = const_cast<std::byte*>(in.data());
    src.element_size = m_ctx.element_size();
    src.shape = m_ctx.chunk_shape;
    src.strides = array_view::c_strides(src.shape);
    box all{dims(m_ctx.chunk_shape.size(), 0), m_ctx.chunk_shape};
    scratch_space scratch;
    write_context ctx;
    ctx.limits = m_ctx.limits;
    ctx.scratch = &scratch;
    buffer_output sink(out);
    stream_shard(sink, all, all, &src, nullptr, nullptr, ctx);
    return out.view();
}

// Writes a shard to `out` as a stream: inner chunks in C order, each appended once, then the index
// (at the end, or into space reserved at the start). Untouched inner chunks of the old shard are
// copied as encoded bytes, by range, without decoding them; touched ones are built (old contents
// read and decoded only when the write covers them partly), encoded and appended. With
// ctx.spread, up to spread->slots.size() touched inner chunks are encoded concurrently, each in its
// own slot, and appended in order; otherwise one at a time in ctx.scratch. Memory: the slots (one
// inner chunk decoded and encoded each), a copy window and the index, whatever the shard's size.
// Returns false when no inner chunk holds data (the caller erases the shard instead).
template <class InnerChain, class IndexChain, class IndexCache>
bool sharding_indexed<InnerChain, IndexChain, IndexCache>::stream_shard(
    object_output& out, const box& region, const box& bounds, const array_view* src, range_reader* old_src,
    const shard_index* old, write_context& ctx) const
{
    const std::size_t rank = m_inner.size();
    const std::size_t width = m_ctx.element_size();
    const sdims chunk_strides = array_view::c_strides(m_inner);
    std::vector<std::uint64_t> entries(2 * m_count, shard_index::missing);
    if (!m_at_end)
    {
        static constexpr std::size_t zeros_size = 64u << 10;
        static const std::byte zeros[zeros_size] = {};
        for (std::size_t left = m_index_size; left > 0;)
        {
            const std::size_t n = std::min(left, zeros_size);
            out.append(byte_view(zeros, n));
            left -= n;
        }
    }
    bool any = false;

    // One inner chunk to build and encode; `enc` is valid until its slot is used again.
    struct job
    {
        std::size_t linear = 0;
        bool empty = false;
        byte_view enc;
    };
    // What goes into the shard next, in order: an old inner chunk copied as it is, or a job.
    struct item
    {
        std::size_t linear;
        bool copy;
    };
    std::vector<job> jobs;
    std::vector<item> items;
    const bool spread = ctx.spread != nullptr && ctx.spread->slots.size() > 1;
    std::size_t window = spread ? ctx.spread->slots.size() : 1;
    if (m_inner_bytes != 0)
    {
        // Every slot holds an inner chunk decoded and (at most about) encoded.
        const std::uint64_t per = 2 * std::uint64_t{m_inner_bytes};
        window = static_cast<std::size_t>(
            std::clamp<std::uint64_t>(ctx.limits.max_bytes_in_flight / per, 1, std::uint64_t{window}));
    }
    jobs.reserve(window);

    // Bytes [at, at + n) of the old shard into `into`, whole, counted as payload. The index
    // validated every entry against the shard's size, so a short read means the shard changed.
    auto read_old = [&](std::uint64_t at, std::uint64_t n, std::uint64_t max_bytes, buffer& into)
    {
        if (!old_src->read_to(byte_range::of(at, n), max_bytes, into) || into.size() != n)
        {
            shard_error e(shard_errc::entry_out_of_range, "bytes [" + std::to_string(at) + ", " +
                                                              std::to_string(at + n) +
                                                              ") of the old shard could not be read");
            throw e;
        }
        if (ctx.counters)
        {
            ctx.counters->add_payload_read(n);
        }
    };

    auto build = [&](job& j, scratch_space& s)
    {
        const std::size_t linear = j.linear;
        const dims origin = origin_of(linear);
        // Inner-chunk coordinates: the written part `ov` and the part inside the array `in`.
        const box ov = clip(region, origin, m_inner);
        const box in = clip(bounds, origin, m_inner);
        const bool covered = ov.offset == in.offset && ov.extent == in.extent; // every in-bounds element
        bool fully_in_bounds = true;
        std::int64_t src_off = 0;
        bool direct = covered;
        for (std::size_t d = 0; d < rank; ++d)
        {
            fully_in_bounds = fully_in_bounds && in.offset[d] == 0 && in.extent[d] == m_inner[d];
            src_off +=
                static_cast<std::int64_t>(origin[d] + ov.offset[d] - region.offset[d]) * src->strides[d];
            direct = direct && (m_inner[d] == 1 || src->strides[d] == chunk_strides[d]);
        }
        direct = direct && fully_in_bounds;
        const std::byte* src_at = src->data + src_off * static_cast<std::int64_t>(width);
        array_view cv;
        cv.element_size = width;
        cv.shape = m_inner;
        cv.strides = chunk_strides;
        if (direct)
        {
            // The inner chunk is one C-ordered block of the source: encode it from there.
            cv.data = const_cast<std::byte*>(src_at);
        }
        else
        {
            check_limit("max_chunk_bytes", m_inner_bytes, ctx.limits.max_chunk_bytes);
            buffer& chunk = s.work;
            chunk.resize_discard(m_inner_bytes);
            const bool has_old = old != nullptr && !old->is_missing(linear);
            if (!covered && has_old)
            {
                read_old(old->offset(linear), old->nbytes(linear), ctx.limits.max_chunk_bytes, s.io);
                const array_view v = m_inner_chain.decode(s.io.mutable_view(), s, ctx.limits);
                zarrxt::detail::strided_copy(chunk.data(), chunk_strides, v.data, v.strides, v.shape, width);
            }
            else if (!covered || !fully_in_bounds)
            {
                zarrxt::detail::fill_run(chunk.data(), m_inner_bytes / width, width, m_ctx.fill);
            }
            std::int64_t dst_off = 0;
            for (std::size_t d = 0; d < rank; ++d)
            {
                dst_off += static_cast<std::int64_t>(ov.offset[d]) * chunk_strides[d];
            }
            zarrxt::detail::strided_copy(chunk.data() + dst_off * static_cast<std::int64_t>(width),
                                         chunk_strides, src_at, src->strides, ov.extent, width);
            cv.data = chunk.data();
        }
        if (!ctx.write_empty_chunks &&
            zarrxt::detail::all_equal_fill(cv.data, m_inner_bytes / width, width, m_ctx.fill))
        {
            j.empty = true;
            return;
        }
        j.empty = false;
        j.enc = m_inner_chain.encode(cv, s);
    };

    // Old inner chunks lying back to back in the old shard are copied with one read per window.
    std::uint64_t run_begin = 0;
    std::uint64_t run_end = 0;
    auto flush_run = [&]
    {
        for (std::uint64_t at = run_begin; at < run_end;)
        {
            const std::uint64_t n = std::min(copy_window, run_end - at);
            buffer& io = ctx.scratch->io;
            read_old(at, n, n, io);
            out.append(io.view());
            at += n;
        }
        run_begin = run_end = 0;
    };
    auto emit = [&]
    {
        if (jobs.size() > 1 && spread)
        {
            ctx.spread->run(jobs.size(), [&](std::size_t i) { build(jobs[i], *ctx.spread->slots[i]); });
        }
        else if (jobs.size() == 1)
        {
            build(jobs[0], spread ? *ctx.spread->slots[0] : *ctx.scratch);
        }
        std::size_t next_job = 0;
        for (const item& it : items)
        {
            if (it.copy)
            {
                const std::uint64_t off = old->offset(it.linear);
                const std::uint64_t n = old->nbytes(it.linear);
                if (run_end != run_begin && off != run_end)
                {
                    flush_run();
                }
                if (run_end == run_begin)
                {
                    run_begin = run_end = off;
                }
                entries[2 * it.linear] = out.size() + (run_end - run_begin);
                entries[2 * it.linear + 1] = n;
                run_end += n;
                any = true;
                continue;
            }
            flush_run();
            const job& j = jobs[next_job++];
            if (j.empty)
            {
                continue;
            }
            entries[2 * it.linear] = out.size();
            entries[2 * it.linear + 1] = j.enc.size();
            out.append(j.enc);
            any = true;
        }
        flush_run();
        jobs.clear();
        items.clear();
    };

    for (std::size_t linear = 0; linear < m_count; ++linear)
    {
        const bool touched = src != nullptr && clip(region, origin_of(linear), m_inner).elements() != 0;
        if (!touched)
        {
            if (old != nullptr && !old->is_missing(linear))
            {
                items.push_back({linear, true});
            }
            continue;
        }
        items.push_back({linear, false});
        jobs.push_back(job{linear, false, {}});
        if (jobs.size() == window)
        {
            emit();
        }
    }
    emit();
    if (!any)
    {
        return false;
    }

    // Encode the index and put it in place.
    array_view iv;
    iv.data = reinterpret_cast<std::byte*>(entries.data());
    iv.element_size = 8;
    iv.shape = m_grid;
    iv.shape.push_back(2);
    iv.strides = array_view::c_strides(iv.shape);
    scratch_space index_scratch;
    const byte_view index_bytes = m_index_chain.encode(iv, index_scratch);
    if (index_bytes.size() != m_index_size)
    {
        throw codec_error(codec_errc::size_mismatch, "sharding_indexed/index",
                          "index encodes to " + std::to_string(index_bytes.size()) + " bytes, expected " +
                              std::to_string(m_index_size));
    }
    if (m_at_end)
    {
        out.append(index_bytes);
    }
    else
    {
        out.write_at(0, index_bytes);
    }
    return true;
}

template <class InnerChain, class IndexChain, class IndexCache>
void sharding_indexed<InnerChain, IndexChain, IndexCache>::write_region(object_io& io, const box& region,
                                                                        const box& bounds,
                                                                        const array_view& src,
                                                                        write_context& ctx) const
{
    // The old shard is needed unless the region covers every in-bounds element of the shard. It is
    // read through one handle: its index, then only the ranges the new shard takes from it.
    bool need_old = false;
    for (std::size_t d = 0; d < region.offset.size(); ++d)
    {
        need_old = need_old || region.offset[d] != bounds.offset[d] || region.extent[d] != bounds.extent[d];
    }
    range_reader* old_src = nullptr;
    shard_index_ptr old_index;
    if (need_old)
    {
        read_context rc;
        rc.limits = ctx.limits;
        rc.counters = ctx.counters;
        rc.scratch = ctx.scratch;
        bool from_cache = false;
        old_index = fetch_index(io.current(), rc, from_cache); // never from the cache: this version's
        old_src = old_index ? &io.current() : nullptr;
    }
    auto out = io.begin_write();
    bool any = false;
    try
    {
        any = stream_shard(*out, region, bounds, &src, old_src, old_index.get(), ctx);
    }
    catch (error& e)
    {
        e.with_key(io.key());
        throw;
    }
    if (ctx.cache)
    {
        ctx.cache->invalidate(io.key());
    }
    if (!any)
    {
        // Every inner chunk is fill value: the shard is removed (erase reports whether it existed).
        out.reset(); // abandons the new version
        if (io.erase() && ctx.counters)
        {
            ctx.counters->add_erase();
        }
        return;
    }
    out->commit();
    if (ctx.counters)
    {
        ctx.counters->add_write(out->size());
    }
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
