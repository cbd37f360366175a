/** @file kernel/read.hpp
 *  Region reads: find the chunks a region touches, fetch and decode each (in parallel through the
 *  executor), and copy the part that falls inside the region into the destination with the
 *  rank-specialised run copy. Missing chunks and missing inner chunks become the fill value.
 *  Each worker writes a disjoint part of the destination, so no locking is needed on it.
 *
 *  Templated on the rank N and the array core, never on the element type.
 */
#pragma once

#include "../detail/array_core.hpp"
#include "../region.hpp"
#include "grid.hpp"
#include "io.hpp"
#include "scatter.hpp"

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

/// Read `reg` into `out` (element strides `out_strides`, any layout).
template <std::size_t N, class Core>
void read_region(Core& core, const region<N>& reg, std::byte* out, const strides_t<N>& out_strides)
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

    core.m_exec.bulk(range.count(), [&](std::size_t i, std::size_t worker) {
        const extents_t<N> coords = range.coords(i);
        extents_t<N> origin{};
        for (std::size_t d = 0; d < N; ++d)
        {
            origin[d] = coords[d] * m.chunk_shape[d];
        }
        region_sink<N> sink(out, out_strides, reg, origin, width, m.fill, is_bool);
        const std::string key = core.chunk_key(coords.data(), N);
        read_context ctx;
        ctx.limits = core.m_lv;
        ctx.cache = cache;
        ctx.counters = &core.m_counters;
        ctx.scratch = &scratch[worker];
        if (sharding != nullptr)
        {
            store_reader<typename Core::store_type> reader(core.m_store, key);
            box b{dims(N), dims(N)};
            for (std::size_t d = 0; d < N; ++d)
            {
                const std::uint64_t lo = std::max(origin[d], reg.offset[d]);
                const std::uint64_t hi = std::min(origin[d] + m.chunk_shape[d], reg.offset[d] + reg.extent[d]);
                b.offset[d] = lo - origin[d];
                b.extent[d] = hi - lo;
            }
            sharding->read_region(reader, b, sink, ctx);
            return;
        }
        auto res = core.m_store.read(key, byte_range::all(), core.m_lv.max_chunk_bytes);
        if (!res)
        {
            sink.fill(dims(N, 0), dims(m.chunk_shape));
            return;
        }
        core.m_counters.add_payload_read(res->bytes.size());
        try
        {
            const codec::array_view v = core.m_chain.decode(res->bytes.mutable_view(), scratch[worker], core.m_lv);
            sink.piece(v, dims(N, 0));
        }
        catch (error& e)
        {
            e.with_key(key);
            throw;
        }
    });
}

} // namespace zarrxt::kernel
