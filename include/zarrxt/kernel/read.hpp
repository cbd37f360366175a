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
#include "../region.hpp"
#include "env.hpp"
#include "grid.hpp"
#include "io.hpp"
#include "scatter.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zarrxt::kernel
{

/// Receives decoded chunks of one outer chunk and copies what lies inside the read region.
template <std::size_t N>
class region_sink final : public piece_sink
{
public:
    region_sink(std::byte* out, const strides_t<N>& out_strides, const region<N>& reg,
                const extents_t<N>& chunk_origin, std::size_t width, const fill_value& fill,
                bool normalize_bool)
        : m_out(out)
        , m_out_strides(out_strides)
        , m_reg(reg)
        , m_box(box_of(reg))
        , m_origin(chunk_origin)
        , m_width(width)
        , m_fill(fill)
        , m_bool(normalize_bool)
    {
    }

    void piece(const codec::array_view& chunk, const dims& origin) override
    {
        const dims at = absolute(origin);
        const box part = clip(m_box, at, chunk.shape);
        extents_t<N> ext{};
        strides_t<N> ss{};
        std::int64_t src_off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            if (part.extent[d] == 0)
            {
                return;
            }
            ext[d] = part.extent[d];
            ss[d] = chunk.strides[d];
            src_off += static_cast<std::int64_t>(part.offset[d]) * chunk.strides[d];
        }
        const auto w = static_cast<std::int64_t>(m_width);
        std::byte* dst = m_out + out_offset(at, part) * w;
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
            if (a < m_reg.offset[d] || a + shape[d] > m_reg.offset[d] + m_reg.extent[d] ||
                (shape[d] != 1 && m_out_strides[d] != expect))
            {
                return {};
            }
            expect *= static_cast<std::int64_t>(shape[d]);
            dst_off += static_cast<std::int64_t>(a - m_reg.offset[d]) * m_out_strides[d];
        }
        return {m_out + dst_off * static_cast<std::int64_t>(m_width),
                static_cast<std::size_t>(expect) * m_width};
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
        const dims at = absolute(origin);
        const box part = clip(m_box, at, extent);
        extents_t<N> ext{};
        for (std::size_t d = 0; d < N; ++d)
        {
            if (part.extent[d] == 0)
            {
                return;
            }
            ext[d] = part.extent[d];
        }
        fill_box<N>(m_out + out_offset(at, part) * static_cast<std::int64_t>(m_width), m_out_strides, ext,
                    m_width, m_fill);
    }

private:
    dims absolute(const dims& origin) const
    {
        dims at(N);
        for (std::size_t d = 0; d < N; ++d)
        {
            at[d] = m_origin[d] + origin[d];
        }
        return at;
    }
    /// Element offset in the destination of `part` (in the coordinates of a block at `at`).
    std::int64_t out_offset(const dims& at, const box& part) const
    {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            off += static_cast<std::int64_t>(at[d] + part.offset[d] - m_reg.offset[d]) * m_out_strides[d];
        }
        return off;
    }

    std::byte* m_out;
    strides_t<N> m_out_strides;
    region<N> m_reg;
    box m_box; // m_reg as a box
    extents_t<N> m_origin;
    std::size_t m_width;
    fill_value m_fill;
    bool m_bool;
};

/// Read `reg` into `out` (element strides `out_strides`, any layout). Under the fill and collect
/// corruption policies a chunk that cannot be decoded reads as the fill value (and is reported).
///
/// One path for every chain: each stored object the region touches is read through the chain's
/// partial decoder (codec/partial_decode.hpp): planned into batches of byte ranges, each fetched
/// and decoded into the destination.
template <std::size_t N, class Chain>
void read_region(const kernel_env<Chain>& env, const region<N>& reg, std::byte* out,
                 const strides_t<N>& out_strides,
                 corruption_policy on_corruption = corruption_policy::throw_error,
                 problem_list* problems = nullptr)
{
    const array_metadata& m = env.meta;
    if (reg.empty())
    {
        return;
    }
    const std::size_t width = m.element_size();
    const bool is_bool = m.dtype == dtype_id::bool_;
    const chunk_range<N> range(m, reg);
    const std::size_t workers = env.exec.concurrency();
    scratch_pool::lease scratch(env.scratch, workers, env.arena);
    // Each worker holds one batch at a time: batches are cut to an equal share of the operation's
    // budget for bytes in flight.
    const std::uint64_t budget = std::max<std::uint64_t>(1, env.limits.max_bytes_in_flight / workers);
    const box reg_box = box_of(reg);
    auto context = [&](std::size_t worker)
    {
        read_context ctx;
        ctx.limits = env.limits;
        ctx.limits.max_bytes_in_flight = budget;
        ctx.cache = env.cache;
        ctx.counters = &env.counters;
        ctx.scratch = &scratch[worker];
        ctx.on_corruption = on_corruption;
        ctx.problems = problems;
        return ctx;
    };
    auto origin_of = [&](std::size_t i) { return range.origin(range.coords(i)); };
    // A chunk's shape, and the chain bound to it: one for all on a regular grid, per shape on a
    // rectilinear one.
    auto shape_of = [&](std::size_t i) { return range.shape(range.coords(i)); };
    auto key_of = [&](std::size_t i)
    {
        const extents_t<N> coords = range.coords(i);
        return env.chunk_key(coords.data(), N);
    };
    auto sink_of = [&](const dims& origin)
    {
        extents_t<N> o{};
        for (std::size_t d = 0; d < N; ++d)
        {
            o[d] = origin[d];
        }
        return region_sink<N>(out, out_strides, reg, o, width, m.fill, is_bool);
    };
    const Chain& chain = env.chain;

    if (workers > 1 && range.count() < 4 * workers)
    {
        // Few objects for many workers (one shard, a few large chunks): plan every object on one
        // worker each, then spread all their batches over every worker, so one object decodes on
        // all cores.
        const std::size_t objects = range.count();
        std::vector<std::unique_ptr<range_reader>> readers(objects);
        std::vector<region_sink<N>> sinks;
        sinks.reserve(objects);
        for (std::size_t i = 0; i < objects; ++i)
        {
            sinks.push_back(sink_of(origin_of(i)));
        }
        std::vector<codec::read_plan> plans(objects);
        std::vector<std::shared_ptr<const Chain>> chains(objects);
        const std::uint64_t announce_budget =
            std::max<std::uint64_t>(1, env.limits.max_bytes_in_flight / objects);
        std::unique_ptr<std::atomic<bool>[]> changed(new std::atomic<bool>[objects]);
        env.exec.bulk(objects,
                      [&](std::size_t i, std::size_t worker)
                      {
                          readers[i] = env.store.open_reader(key_of(i));
                          read_context ctx = context(worker);
                          const dims shape = shape_of(i);
                          chains[i] = env.chain_for(shape);
                          changed[i] =
                              !codec::plan_read(*chains[i], *readers[i], clip(reg_box, origin_of(i), shape),
                                                sinks[i], ctx, workers, budget, plans[i]);
                          if (!changed[i])
                          {
                              // The objects share the operation's budget for what a store may fetch
                              // ahead; their batches are then read by every worker.
                              codec::announce_batches(*readers[i], plans[i], announce_budget);
                          }
                      });
        std::vector<std::pair<std::size_t, std::size_t>> batches; // (object, batch)
        for (std::size_t i = 0; i < objects; ++i)
        {
            for (std::size_t b = 0; !changed[i] && b < plans[i].batches.size(); ++b)
            {
                batches.emplace_back(i, b);
            }
        }
        env.exec.bulk(batches.size(),
                      [&](std::size_t t, std::size_t worker)
                      {
                          const auto [i, b] = batches[t];
                          if (changed[i])
                          {
                              return;
                          }
                          read_context ctx = context(worker);
                          if (!codec::read_batch(*chains[i], *readers[i], plans[i], b, sinks[i], ctx))
                          {
                              changed[i] = true;
                          }
                      });
        // An object replaced while its batches were read is read again from the start, on its own
        // (every element it covers is rewritten, so nothing of the older version survives). Usually
        // none is: then no third round of tasks is started.
        std::vector<std::size_t> again;
        for (std::size_t i = 0; i < objects; ++i)
        {
            if (changed[i])
            {
                again.push_back(i);
            }
        }
        env.exec.bulk(again.size(),
                      [&](std::size_t k, std::size_t worker)
                      {
                          const std::size_t i = again[k];
                          read_context ctx = context(worker);
                          env.store.read_object(
                              key_of(i),
                              [&](range_reader& reader) {
                                  codec::read_region(*chains[i], reader,
                                                     clip(reg_box, origin_of(i), shape_of(i)), sinks[i], ctx);
                              });
                      });
        return;
    }

    // Many objects: one task each, its batches read in turn.
    auto read_chunk = [&](std::size_t i, std::size_t worker)
    {
        const dims origin = origin_of(i);
        const dims shape = shape_of(i);
        const auto own = env.chain_for(shape);
        region_sink<N> sink = sink_of(origin);
        read_context ctx = context(worker);
        env.store.read_object(key_of(i), [&](range_reader& reader)
                              { codec::read_region(*own, reader, clip(reg_box, origin, shape), sink, ctx); });
    };
    std::uint64_t chunk_bytes = width;
    for (const auto e : m.chunk_shape)
    {
        chunk_bytes *= std::max<std::uint64_t>(1, e);
    }
    // Objects read by ranges (shards, uncompressed chunks: a chain with a partial decoder) are
    // fetched whole too, announced like compressed chunks, when all their bytes are needed anyway
    // (the region covers each one's part inside the array) or when they are small (at most 1 MiB
    // decoded, where one more round trip costs more than the bytes a range would spare), and one
    // is small next to the cap on an object: then each costs one request in a window of many,
    // instead of an index or size request and a data request in turn.
    constexpr std::uint64_t small_object = std::uint64_t{1} << 20;
    bool whole_ranged = chain.partial_decoder() != nullptr && 2 * chunk_bytes <= env.limits.max_chunk_bytes;
    bool covered = true;
    for (std::size_t d = 0; d < N; ++d)
    {
        const std::uint64_t end = reg.offset[d] + reg.extent[d];
        covered = covered && m.on_chunk_boundary(d, reg.offset[d]) && m.on_chunk_boundary(d, end);
    }
    whole_ranged = whole_ranged && (covered || chunk_bytes <= small_object);
    if ((chain.partial_decoder() != nullptr && !whole_ranged) || !env.store.prefetches_objects() ||
        range.count() < 2)
    {
        env.exec.bulk(range.count(), read_chunk);
        return;
    }
    auto read_whole = [&](std::size_t i, std::size_t worker)
    {
        const dims origin = origin_of(i);
        const dims shape = shape_of(i);
        const auto own = env.chain_for(shape);
        region_sink<N> sink = sink_of(origin);
        read_context ctx = context(worker);
        env.store.read_object(
            key_of(i),
            [&](range_reader& reader)
            {
                buffer whole;
                const auto info = reader.read_to(byte_range::all(), env.limits.max_chunk_bytes, whole);
                memory_reader bytes = info ? memory_reader(whole.view(), reader.key(), info->generation)
                                           : memory_reader::absent(reader.key());
                codec::read_region(*own, bytes, clip(reg_box, origin, shape), sink, ctx);
            });
    };
    // Whole objects from a store that fetches ahead (many requests in flight): the chunks are
    // announced a window at the time, the next window while the current one is read, so that the
    // workers wait for their own chunk only. A window holds what the operation's budget for bytes
    // in flight allows, counting each chunk at its decoded size (compressed ones are smaller).
    const std::size_t window = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(env.limits.max_bytes_in_flight / (2 * chunk_bytes), 2 * workers, 4096));
    const std::size_t count = range.count();
    auto keys_of = [&](std::size_t begin)
    {
        std::vector<std::string> keys;
        for (std::size_t i = begin; i < std::min(count, begin + window); ++i)
        {
            keys.push_back(key_of(i));
        }
        return keys;
    };
    std::vector<std::string> current = keys_of(0);
    std::vector<std::string> next;
    // Whatever was announced and not read (an error midway) is dropped before returning.
    struct cancel_guard
    {
        const store_access& store;
        std::vector<std::string>& a;
        std::vector<std::string>& b;
        ~cancel_guard()
        {
            store.cancel_prefetch(a);
            store.cancel_prefetch(b);
        }
    } guard{env.store, current, next};
    env.store.prefetch_objects(current, env.limits.max_chunk_bytes);
    for (std::size_t begin = 0; begin < count; begin += window)
    {
        next = begin + window < count ? keys_of(begin + window) : std::vector<std::string>{};
        env.store.prefetch_objects(next, env.limits.max_chunk_bytes);
        const std::size_t n = std::min(window, count - begin);
        env.exec.bulk(n,
                      [&](std::size_t k, std::size_t worker)
                      {
                          if (whole_ranged)
                          {
                              read_whole(begin + k, worker);
                          }
                          else
                          {
                              read_chunk(begin + k, worker);
                          }
                      });
        env.store.cancel_prefetch(current); // normally nothing is left
        current.swap(next);
    }
}

} // namespace zarrxt::kernel
