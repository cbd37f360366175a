/** @file kernel/write.hpp
 *  Region writes. The source is an already evaluated array of the region's shape. For each chunk
 *  the region touches (in parallel through the executor):
 *  - a chunk fully covered whose data is contiguous in the source is encoded straight from it;
 *  - a chunk fully covered otherwise is gathered into scratch with the run copy;
 *  - a partially covered chunk is read, decoded, patched and re-encoded (read-modify-write),
 *    under the store's per-key lock so concurrent writers in this process lose no update;
 *  - a chunk that ends up holding only the fill value is erased instead of stored (unless the
 *    array keeps empty chunks);
 *  - a sharded chunk (shard) is handed to the sharding codec, which streams its new version to
 *    the store (copying untouched inner chunks by range); with fewer shards than workers the
 *    shards go one at a time and the workers share the encoding of each one's inner chunks.
 *  Edge chunks are stored at full size with the part outside the array set to the fill value,
 *  as zarr-python does.
 */
#pragma once

#include "../codec/sharding_indexed.hpp"
#include "../detail/array_core.hpp"
#include "../region.hpp"
#include "grid.hpp"
#include "io.hpp"
#include "scatter.hpp"

namespace zarrxt::kernel
{

/// Write `src` (element strides `src_strides`, shaped like `reg`) into `reg`.
template <std::size_t N, class Core>
void write_region(Core& core, const region<N>& reg, const std::byte* src, const strides_t<N>& src_strides)
{
    const array_metadata& m = core.m_meta;
    if (reg.empty())
    {
        return;
    }
    const std::size_t width = m.element_size();
    const chunk_range<N> range(m.chunk_shape, reg);
    std::optional<typename Core::index_cache_type> local_cache;
    index_cache_base* cache = core.op_cache(local_cache);
    typename Core::scratch_lease scratch(core, core.m_exec.concurrency());
    const codec::sharding_base* sharding = core.m_chain.sharding();
    const bool keep_empty = core.m_write_empty_chunks.load(std::memory_order_relaxed); // one value per write
    extents_t<N> chunk_ext{};
    for (std::size_t d = 0; d < N; ++d)
    {
        chunk_ext[d] = m.chunk_shape[d];
    }
    const codec::array_view chunk_shape_view{nullptr, width, dims(m.chunk_shape), codec::array_view::c_strides(dims(m.chunk_shape))};
    strides_t<N> chunk_strides{};
    for (std::size_t d = 0; d < N; ++d)
    {
        chunk_strides[d] = chunk_shape_view.strides[d];
    }
    const std::uint64_t chunk_elements = m.chunk_elements();
    const std::size_t chunk_bytes = zarrxt::detail::to_size(chunk_elements * width, "chunk bytes");

    auto write_one = [&](std::size_t i, std::size_t worker, const encode_spread* spread)
    {
        codec::scratch_space& s = scratch[worker];
        const extents_t<N> coords = range.coords(i);
        // Boxes in chunk coordinates: the written part `w` and the in-bounds part `bounds`.
        extents_t<N> origin{};
        extents_t<N> w_off{};
        extents_t<N> w_ext{};
        extents_t<N> b_ext{};
        bool covered = true;
        bool fully_in = true;
        std::int64_t src_off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            origin[d] = coords[d] * chunk_ext[d];
            const std::uint64_t lo = std::max(origin[d], reg.offset[d]);
            const std::uint64_t hi = std::min(origin[d] + chunk_ext[d], reg.offset[d] + reg.extent[d]);
            const std::uint64_t bhi = std::min(origin[d] + chunk_ext[d], m.shape[d]);
            w_off[d] = lo - origin[d];
            w_ext[d] = hi - lo;
            b_ext[d] = bhi - origin[d];
            covered = covered && w_off[d] == 0 && w_ext[d] == b_ext[d];
            fully_in = fully_in && b_ext[d] == chunk_ext[d];
            src_off += static_cast<std::int64_t>(lo - reg.offset[d]) * src_strides[d];
        }
        const std::byte* src_at = src + src_off * static_cast<std::int64_t>(width);
        const std::string key = core.chunk_key(coords.data(), N);
        auto lock = core.m_store.lock_key(key);

        write_context ctx;
        ctx.limits = core.m_lv;
        ctx.cache = cache;
        ctx.counters = &core.m_counters;
        ctx.scratch = &s;
        ctx.write_empty_chunks = keep_empty;
        ctx.spread = spread;

        if (sharding != nullptr)
        {
            box region_box{dims(N), dims(N)};
            box bounds_box{dims(N, 0), dims(N)};
            codec::array_view sv;
            sv.data = const_cast<std::byte*>(src_at);
            sv.element_size = width;
            sv.shape = dims(N);
            sv.strides = sdims(N);
            for (std::size_t d = 0; d < N; ++d)
            {
                region_box.offset[d] = w_off[d];
                region_box.extent[d] = w_ext[d];
                bounds_box.extent[d] = b_ext[d];
                sv.shape[d] = w_ext[d];
                sv.strides[d] = src_strides[d];
            }
            // A store without object handles gives the old shard whole (one consistent version);
            // the old and the new shard are then both held, within half the in-flight budget each.
            store_object_io<typename Core::store_type> io(
                core.m_store, key, std::min(core.m_lv.max_chunk_bytes, core.m_lv.max_bytes_in_flight / 2));
            sharding->write_region(io, region_box, bounds_box, sv, ctx);
            return;
        }

        // A chunk above the cap could not be read back; refuse it before allocating for it.
        if (chunk_bytes > core.m_lv.max_chunk_bytes)
        {
            limit_exceeded e("max_chunk_bytes", chunk_bytes, core.m_lv.max_chunk_bytes);
            e.with_key(key);
            throw e;
        }

        // Is the chunk's data one contiguous C-ordered block of the source?
        bool direct = covered && fully_in;
        for (std::size_t d = 0; direct && d < N; ++d)
        {
            direct = chunk_ext[d] == 1 || src_strides[d] == chunk_strides[d];
        }
        const std::byte* data = src_at;
        if (!direct)
        {
            s.work.resize_discard(chunk_bytes);
            if (!covered)
            {
                auto old = core.m_store.read(key, byte_range::all(), core.m_lv.max_chunk_bytes);
                if (old)
                {
                    core.m_counters.add_payload_read(old->bytes.size());
                    try
                    {
                        const codec::array_view v = core.m_chain.decode(old->bytes.mutable_view(), s, core.m_lv);
                        strides_t<N> vs{};
                        for (std::size_t d = 0; d < N; ++d)
                        {
                            vs[d] = v.strides[d];
                        }
                        copy_box<N>(s.work.data(), chunk_strides, v.data, vs, chunk_ext, width);
                    }
                    catch (error& e)
                    {
                        e.with_key(key);
                        throw;
                    }
                }
                else
                {
                    zarrxt::detail::fill_run(s.work.data(), chunk_elements, width, m.fill);
                }
            }
            else if (!fully_in)
            {
                zarrxt::detail::fill_run(s.work.data(), chunk_elements, width, m.fill);
            }
            std::int64_t dst_off = 0;
            for (std::size_t d = 0; d < N; ++d)
            {
                dst_off += static_cast<std::int64_t>(w_off[d]) * chunk_strides[d];
            }
            copy_box<N>(s.work.data() + dst_off * static_cast<std::int64_t>(width), chunk_strides, src_at, src_strides,
                        w_ext, width);
            data = s.work.data();
        }
        if (!keep_empty && zarrxt::detail::all_equal_fill(data, chunk_elements, width, m.fill))
        {
            if (core.m_store.erase(key))
            {
                core.m_counters.add_erase();
            }
            return;
        }
        codec::array_view cv = chunk_shape_view;
        cv.data = const_cast<std::byte*>(data);
        try
        {
            const byte_view enc = core.m_chain.encode(cv, s);
            core.m_store.set(key, enc);
            core.m_counters.add_write(enc.size());
        }
        catch (error& e)
        {
            e.with_key(key);
            throw;
        }
    };

    const std::size_t workers = core.m_exec.concurrency();
    if (sharding != nullptr && workers > 1 && range.count() < workers)
    {
        // Fewer shards than workers: the shards are written one after the other and the inner
        // chunks of each are encoded by all the workers, a window of them at a time (each job in
        // its own scratch slot), and streamed to the store in order.
        const std::size_t nslots = 2 * workers;
        typename Core::scratch_lease slot_lease(core, nslots);
        std::vector<codec::scratch_space*> slots(nslots);
        for (std::size_t k = 0; k < nslots; ++k)
        {
            slots[k] = &slot_lease[k];
        }
        encode_spread spread;
        spread.slots = slots;
        spread.run = [&](std::size_t n, const std::function<void(std::size_t)>& fn)
        { core.m_exec.bulk(n, [&](std::size_t k, std::size_t) { fn(k); }); };
        for (std::size_t i = 0; i < range.count(); ++i)
        {
            write_one(i, 0, &spread);
        }
        return;
    }
    core.m_exec.bulk(range.count(),
                     [&](std::size_t i, std::size_t worker) { write_one(i, worker, nullptr); });
}

} // namespace zarrxt::kernel
