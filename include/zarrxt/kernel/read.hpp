/** @file kernel/read.hpp
 *  Region reads: find the chunks a region touches, fetch and decode each (in parallel through the
 *  executor), and copy the part that falls inside the region into the destination with the
 *  rank-specialised run copy. Missing chunks and missing inner chunks become the fill value.
 *  Each worker writes a disjoint part of the destination, so no locking is needed on it.
 *
 *  Templated on the rank N and the array core, never on the element type.
 */
#pragma once

#include "../codec/sharding_indexed.hpp"
#include "../detail/array_core.hpp"
#include "../region.hpp"
#include "grid.hpp"
#include "io.hpp"
#include "scatter.hpp"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace zarrxt::kernel
{

/// Receives decoded chunks of one outer chunk and copies what lies inside the read region.
template <std::size_t N>
class region_sink final : public piece_sink
{
public:
    region_sink(std::byte* out, const strides_t<N>& out_strides, const region<N>& reg, const extents_t<N>& chunk_origin,
                std::size_t width, const fill_value& fill, bool normalize_bool)
        : m_out(out)
        , m_out_strides(out_strides)
        , m_reg(reg)
        , m_origin(chunk_origin)
        , m_width(width)
        , m_fill(fill)
        , m_bool(normalize_bool)
    {
    }

    void piece(const codec::array_view& chunk, const dims& origin) override
    {
        extents_t<N> ext{};
        strides_t<N> ss{};
        std::int64_t src_off = 0;
        std::int64_t dst_off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            const std::uint64_t a = m_origin[d] + origin[d];
            const std::uint64_t b = std::max(a, m_reg.offset[d]);
            const std::uint64_t e = std::min(a + chunk.shape[d], m_reg.offset[d] + m_reg.extent[d]);
            if (b >= e)
            {
                return;
            }
            ext[d] = e - b;
            ss[d] = chunk.strides[d];
            src_off += static_cast<std::int64_t>(b - a) * chunk.strides[d];
            dst_off += static_cast<std::int64_t>(b - m_reg.offset[d]) * m_out_strides[d];
        }
        const auto w = static_cast<std::int64_t>(m_width);
        std::byte* dst = m_out + dst_off * w;
        copy_box<N>(dst, m_out_strides, chunk.data + src_off * w, ss, ext, m_width);
        if (m_bool)
        {
            normalize_bool_box<N>(dst, m_out_strides, ext);
        }
    }

    mutable_byte_view destination(const dims& origin, const dims& shape) override
    {
        std::int64_t dst_off = 0;
        std::int64_t expect = 1;
        for (std::size_t d = N; d-- > 0;)
        {
            const std::uint64_t a = m_origin[d] + origin[d];
            if (a < m_reg.offset[d] || a + shape[d] > m_reg.offset[d] + m_reg.extent[d]
                || (shape[d] != 1 && m_out_strides[d] != expect))
            {
                return {};
            }
            expect *= static_cast<std::int64_t>(shape[d]);
            dst_off += static_cast<std::int64_t>(a - m_reg.offset[d]) * m_out_strides[d];
        }
        return {m_out + dst_off * static_cast<std::int64_t>(m_width), static_cast<std::size_t>(expect) * m_width};
    }

    void placed(mutable_byte_view v) override
    {
        if (m_bool)
        {
            normalize_bool_box<1>(v.data(), {1}, {v.size()});
        }
    }

    void fill(const dims& origin, const dims& extent) override
    {
        extents_t<N> ext{};
        std::int64_t dst_off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            const std::uint64_t a = m_origin[d] + origin[d];
            const std::uint64_t b = std::max(a, m_reg.offset[d]);
            const std::uint64_t e = std::min(a + extent[d], m_reg.offset[d] + m_reg.extent[d]);
            if (b >= e)
            {
                return;
            }
            ext[d] = e - b;
            dst_off += static_cast<std::int64_t>(b - m_reg.offset[d]) * m_out_strides[d];
        }
        fill_box<N>(m_out + dst_off * static_cast<std::int64_t>(m_width), m_out_strides, ext, m_width, m_fill);
    }

private:
    std::byte* m_out;
    strides_t<N> m_out_strides;
    region<N> m_reg;
    extents_t<N> m_origin;
    std::size_t m_width;
    fill_value m_fill;
    bool m_bool;
};

/// Read a whole object into a reusable buffer (no allocation per chunk when the store supports it).
template <class Store>
std::optional<object_info> read_object(const Store& store, const std::string& key, std::uint64_t max, buffer& out)
{
    if constexpr (buffered_store<Store>)
    {
        return store.read_to(key, byte_range::all(), max, out);
    }
    else
    {
        auto res = store.read(key, byte_range::all(), max);
        if (!res)
        {
            return std::nullopt;
        }
        out = std::move(res->bytes);
        return object_info{res->object_size, res->generation};
    }
}

/// Decode a whole chunk straight into `dest` (exactly its decoded bytes); false when the chain or
/// the store cannot, having written nothing. A missing chunk is filled here.
template <class Core>
bool read_chunk_in_place(Core& core, const std::string& key, mutable_byte_view dest, codec::scratch_space& sc)
{
    const array_metadata& m = core.m_meta;
    try
    {
        if constexpr (direct_store<typename Core::store_type>)
        {
            if (core.m_chain.is_raw())
            {
                // One pread into the destination; then only the size check and, if needed, the swap.
                auto info = core.m_store.read_into(key, 0, dest);
                if (!info)
                {
                    zarrxt::detail::fill_run(dest.data(), dest.size() / m.element_size(), m.element_size(), m.fill);
                    return true;
                }
                if (info->size != dest.size())
                {
                    throw codec_error(codec_errc::size_mismatch, "bytes",
                                      "chunk has " + std::to_string(info->size) + " bytes, expected " + std::to_string(dest.size()));
                }
                core.m_counters.add_payload_read(dest.size());
                core.m_chain.finish_raw(dest);
                return true;
            }
        }
        auto info = read_object(core.m_store, key, core.m_lv.max_chunk_bytes, sc.io);
        if (!info)
        {
            zarrxt::detail::fill_run(dest.data(), dest.size() / m.element_size(), m.element_size(), m.fill);
            return true;
        }
        core.m_counters.add_payload_read(sc.io.size());
        if (core.m_chain.decode_into(sc.io.mutable_view(), dest, sc, core.m_lv))
        {
            return true;
        }
        // The chain cannot target the destination: decode normally and copy (rare: a2a codecs).
        const codec::array_view v = core.m_chain.decode(sc.io.mutable_view(), sc, core.m_lv);
        zarrxt::detail::strided_copy(dest.data(), codec::array_view::c_strides(dims(m.chunk_shape)), v.data, v.strides,
                                     v.shape, m.element_size());
        return true;
    }
    catch (error& e)
    {
        e.with_key(key);
        throw;
    }
}

/// Read `reg` into `out` (element strides `out_strides`, any layout). Under the fill and collect
/// corruption policies a chunk that cannot be decoded reads as the fill value (and is reported).
template <std::size_t N, class Core>
void read_region(Core& core, const region<N>& reg, std::byte* out, const strides_t<N>& out_strides,
                 corruption_policy on_corruption = corruption_policy::throw_error, problem_list* problems = nullptr)
{
    const array_metadata& m = core.m_meta;
    if (reg.empty())
    {
        return;
    }
    const std::size_t width = m.element_size();
    const bool is_bool = m.dtype == dtype_id::bool_;
    const chunk_range<N> range(m.chunk_shape, reg);
    std::optional<typename std::remove_reference_t<Core>::index_cache_type> local_cache;
    index_cache_base* cache = core.op_cache(local_cache);
    typename Core::scratch_lease scratch(core, core.m_exec.concurrency());
    const codec::sharding_base* sharding = core.m_chain.sharding();
    strides_t<N> chunk_strides{};
    std::int64_t acc = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        chunk_strides[d] = acc;
        acc *= static_cast<std::int64_t>(m.chunk_shape[d]);
    }
    const std::size_t chunk_bytes = zarrxt::detail::to_size(m.chunk_elements() * width, "chunk bytes");
    const std::size_t workers = core.m_exec.concurrency();
    auto context = [&](std::size_t worker)
    {
        read_context ctx;
        ctx.limits = core.m_lv;
        ctx.cache = cache;
        ctx.counters = &core.m_counters;
        ctx.scratch = &scratch[worker];
        ctx.on_corruption = on_corruption;
        ctx.problems = problems;
        return ctx;
    };
    auto origin_of = [&](const extents_t<N>& coords)
    {
        extents_t<N> origin{};
        for (std::size_t d = 0; d < N; ++d)
        {
            origin[d] = coords[d] * m.chunk_shape[d];
        }
        return origin;
    };
    // The part of the region inside the shard at `origin`, in shard coordinates.
    auto shard_box = [&](const extents_t<N>& origin)
    {
        box b{dims(N), dims(N)};
        for (std::size_t d = 0; d < N; ++d)
        {
            const std::uint64_t lo = std::max(origin[d], reg.offset[d]);
            const std::uint64_t hi = std::min(origin[d] + m.chunk_shape[d], reg.offset[d] + reg.extent[d]);
            b.offset[d] = lo - origin[d];
            b.extent[d] = hi - lo;
        }
        return b;
    };
    using reader_type = store_reader<typename Core::store_type>;

    if (sharding != nullptr && workers > 1 && range.count() < 4 * workers)
    {
        // Few shards for many workers: plan every shard (index, missing and nested inner chunks)
        // on one worker each, then spread all their batches of inner chunks over every worker, so
        // one shard decodes on all cores. Each worker holds one batch at a time, so batches are
        // cut to an equal share of the operation's budget for bytes in flight.
        const std::size_t shards = range.count();
        std::vector<std::unique_ptr<reader_type>> readers(shards);
        std::vector<region_sink<N>> sinks;
        sinks.reserve(shards);
        for (std::size_t i = 0; i < shards; ++i)
        {
            sinks.emplace_back(out, out_strides, reg, origin_of(range.coords(i)), width, m.fill, is_bool);
        }
        std::vector<codec::shard_read_plan> plans(shards);
        std::unique_ptr<std::atomic<bool>[]> changed(new std::atomic<bool>[shards]);
        const std::uint64_t budget = std::max<std::uint64_t>(1, core.m_lv.max_bytes_in_flight / workers);
        core.m_exec.bulk(shards,
                         [&](std::size_t i, std::size_t worker)
                         {
                             const extents_t<N> coords = range.coords(i);
                             readers[i] = std::make_unique<reader_type>(core.m_store,
                                                                        core.chunk_key(coords.data(), N));
                             read_context ctx = context(worker);
                             changed[i] = !sharding->plan_read(*readers[i], shard_box(origin_of(coords)),
                                                               sinks[i], ctx, workers, budget, plans[i]);
                         });
        std::vector<std::pair<std::size_t, std::size_t>> batches; // (shard, batch)
        for (std::size_t i = 0; i < shards; ++i)
        {
            for (std::size_t b = 0; !changed[i] && b < plans[i].batches.size(); ++b)
            {
                batches.emplace_back(i, b);
            }
        }
        core.m_exec.bulk(batches.size(),
                         [&](std::size_t t, std::size_t worker)
                         {
                             const auto [i, b] = batches[t];
                             if (changed[i])
                             {
                                 return;
                             }
                             read_context ctx = context(worker);
                             if (!sharding->read_batch(*readers[i], plans[i], b, sinks[i], ctx))
                             {
                                 changed[i] = true;
                             }
                         });
        // A shard replaced while its batches were read is read again from the start, on its own
        // (every element it covers is rewritten, so nothing of the older version survives). Usually
        // none is: then no third round of tasks is started.
        std::vector<std::size_t> again;
        for (std::size_t i = 0; i < shards; ++i)
        {
            if (changed[i])
            {
                again.push_back(i);
            }
        }
        core.m_exec.bulk(again.size(),
                         [&](std::size_t k, std::size_t worker)
                         {
                             const std::size_t i = again[k];
                             const extents_t<N> coords = range.coords(i);
                             reader_type reader(core.m_store, core.chunk_key(coords.data(), N));
                             read_context ctx = context(worker);
                             sharding->read_region(reader, shard_box(origin_of(coords)), sinks[i], ctx);
                         });
        return;
    }

    core.m_exec.bulk(
        range.count(),
        [&](std::size_t i, std::size_t worker)
        {
            const extents_t<N> coords = range.coords(i);
            const extents_t<N> origin = origin_of(coords);
            region_sink<N> sink(out, out_strides, reg, origin, width, m.fill, is_bool);
            const std::string key = core.chunk_key(coords.data(), N);
            read_context ctx = context(worker);
            if (sharding != nullptr)
            {
                // Many shards: one per task, each read on its own with a worker's share of the budget.
                ctx.limits.max_bytes_in_flight =
                    std::max<std::uint64_t>(1, core.m_lv.max_bytes_in_flight / workers);
                reader_type reader(core.m_store, key);
                sharding->read_region(reader, shard_box(origin), sink, ctx);
                return;
            }
            codec::scratch_space& sc = scratch[worker];
            // Fast path: the whole chunk lies in the region and its part of the destination is one
            // C-ordered block, so it can be decoded (or, for raw chunks, read) straight into place.
            bool in_place = true;
            for (std::size_t d = 0; d < N && in_place; ++d)
            {
                in_place = origin[d] >= reg.offset[d] &&
                           origin[d] + m.chunk_shape[d] <= reg.offset[d] + reg.extent[d] &&
                           (m.chunk_shape[d] == 1 || out_strides[d] == chunk_strides[d]);
            }
            try
            {
                if (in_place)
                {
                    std::int64_t dst_off = 0;
                    for (std::size_t d = 0; d < N; ++d)
                    {
                        dst_off += static_cast<std::int64_t>(origin[d] - reg.offset[d]) * out_strides[d];
                    }
                    mutable_byte_view dest(out + dst_off * static_cast<std::int64_t>(width), chunk_bytes);
                    if (read_chunk_in_place(core, key, dest, sc))
                    {
                        if (is_bool)
                        {
                            normalize_bool_box<1>(dest.data(), {1}, {dest.size()});
                        }
                        return;
                    }
                }
                std::optional<object_info> info =
                    read_object(core.m_store, key, core.m_lv.max_chunk_bytes, sc.io);
                if (!info)
                {
                    sink.fill(dims(N, 0), dims(m.chunk_shape));
                    return;
                }
                core.m_counters.add_payload_read(sc.io.size());
                try
                {
                    const codec::array_view v = core.m_chain.decode(sc.io.mutable_view(), sc, core.m_lv);
                    sink.piece(v, dims(N, 0));
                }
                catch (error& e)
                {
                    e.with_key(key);
                    throw;
                }
            }
            catch (error& e)
            {
                if (!ctx.tolerate(e))
                {
                    throw;
                }
                sink.fill(dims(N, 0), dims(m.chunk_shape)); // a damaged chunk reads as missing
            }
        });
}

} // namespace zarrxt::kernel
