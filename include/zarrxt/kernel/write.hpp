/** @file kernel/write.hpp
 *  Region writes. The source is an already evaluated array of the region's shape. Every chunk (or
 *  shard) the region touches is rewritten through the chain's partial encoder
 *  (codec/partial_encode.hpp), in parallel through the executor and under the store's per-key lock,
 *  so concurrent writers in this process lose no update:
 *  - a whole chunk: encoded straight from the source when covered and contiguous there, else
 *    gathered (over its old contents when covered only partly: read-modify-write) and encoded;
 *  - a shard: the sharding codec streams its new version to the store (touched inner chunks
 *    encoded, untouched ones copied by range); with fewer shards than workers the shards go one
 *    at a time and the workers share the encoding of each one's inner chunks;
 *  - a chunk or shard that ends up holding only the fill value is erased instead of stored
 *    (unless the array keeps empty chunks).
 *  On a posting_store the whole objects are posted (many writes in flight) and the operation
 *  waits for all of them before it returns.
 *  Edge chunks are stored at full size with the part outside the array set to the fill value,
 *  as zarr-python does.
 */
#pragma once

#include "../codec/partial_encode.hpp"
#include "../codec/sharding_indexed.hpp"
#include "../region.hpp"
#include "env.hpp"
#include "grid.hpp"
#include "io.hpp"
#include "scatter.hpp"

namespace zarrxt::kernel
{

/// Write `src` (element strides `src_strides`, shaped like `reg`) into `reg`. `keep_empty`: store
/// chunks that hold only the fill value instead of erasing them (the handle's write_empty_chunks).
///
/// One path for every chain: each stored object the region touches is rewritten through the
/// chain's partial encoder (codec/partial_encode.hpp), under the store's per-key lock.
///
/// `mask` (optional, one byte per element with the source's strides): only the elements where it
/// is non-zero are written; the others keep their stored values (selection writes).
template <std::size_t N, class Chain>
void write_region(const kernel_env<Chain>& env, const region<N>& reg, const std::byte* src,
                  const strides_t<N>& src_strides, bool keep_empty, const std::uint8_t* mask = nullptr)
{
    const array_metadata& m = env.meta;
    if (reg.empty())
    {
        return;
    }
    const std::size_t width = m.element_size();
    const chunk_range<N> range(m, reg);
    scratch_pool::lease scratch(env.scratch, env.exec.concurrency(), env.arena);
    const Chain& chain = env.chain;
    const box reg_box = box_of(reg);
    box array_box{dims(N, 0), dims(N)};
    for (std::size_t d = 0; d < N; ++d)
    {
        array_box.extent[d] = m.shape[d];
    }
    // A partial encoder (a shard) holds the old and the new object within half the in-flight
    // budget each when the store has no object handles; a whole chunk is bounded by its own cap.
    const std::uint64_t max_whole =
        chain.partial_encoder() != nullptr
            ? std::min(env.limits.max_chunk_bytes, env.limits.max_bytes_in_flight / 2)
            : env.limits.max_chunk_bytes;

    // On a posting store (S3, a latency model of one) the objects are sent as they are encoded,
    // many in flight, and all of them are waited for below: a write that returned is stored.
    const std::unique_ptr<write_posts> posts = env.store.begin_posts(env.limits.max_bytes_in_flight / 2);

    auto write_one = [&](std::size_t i, std::size_t worker, const encode_spread* spread)
    {
        const extents_t<N> coords = range.coords(i);
        const dims origin = range.origin(coords);
        const dims chunk_shape = range.shape(coords); // per chunk on a rectilinear grid
        const auto own = env.chain_for(chunk_shape);
        // In chunk coordinates: the written part and the part inside the array.
        const box written = clip(reg_box, origin, chunk_shape);
        const box bounds = clip(array_box, origin, chunk_shape);
        codec::array_view sv;
        sv.element_size = width;
        sv.shape = written.extent;
        sv.strides = sdims(N);
        std::int64_t src_off = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            sv.strides[d] = src_strides[d];
            src_off +=
                static_cast<std::int64_t>(origin[d] + written.offset[d] - reg.offset[d]) * src_strides[d];
        }
        sv.data = const_cast<std::byte*>(src + src_off * static_cast<std::int64_t>(width));
        sv.mask = mask != nullptr ? mask + src_off : nullptr;
        std::string key = env.chunk_key(coords.data(), N);

        write_context ctx;
        ctx.limits = env.limits;
        ctx.cache = env.cache;
        ctx.counters = &env.counters;
        ctx.scratch = &scratch[worker];
        ctx.write_empty_chunks = keep_empty;
        ctx.spread = spread;
        env.store.write_object(std::move(key), max_whole, posts.get(),
                               [&](object_io& io)
                               { codec::write_region(*own, io, written, bounds, sv, ctx); });
    };

    const std::size_t workers = env.exec.concurrency();
    if (chain.partial_encoder() != nullptr && workers > 1 && range.count() < workers)
    {
        // Fewer shards than workers: the shards are written one after the other and the inner
        // chunks of each are encoded by all the workers, a window of them at a time (each job in
        // its own scratch slot), and streamed to the store in order.
        const std::size_t nslots = 2 * workers;
        scratch_pool::lease slot_lease(env.scratch, nslots, env.arena);
        std::vector<codec::scratch_space*> slots(nslots);
        for (std::size_t k = 0; k < nslots; ++k)
        {
            slots[k] = &slot_lease[k];
        }
        encode_spread spread;
        spread.slots = slots;
        spread.run = [&](std::size_t n, const std::function<void(std::size_t)>& fn)
        { env.exec.bulk(n, [&](std::size_t k, std::size_t) { fn(k); }); };
        for (std::size_t i = 0; i < range.count(); ++i)
        {
            write_one(i, 0, &spread);
        }
    }
    else
    {
        env.exec.bulk(range.count(),
                      [&](std::size_t i, std::size_t worker) { write_one(i, worker, nullptr); });
    }
    if (posts)
    {
        posts->finish();
    }
}

} // namespace zarrxt::kernel
