/** @file codec/sharding_indexed/write.hpp
 *  Writing a shard: `write_region` rewrites part of a shard by streaming a new version of it
 *  (`stream_shard`: untouched inner chunks copied by range, touched ones re-encoded, the index
 *  last), and the whole-shard `encode` used when the shard is not the whole chain is the same stream
 *  into a buffer, so both produce the same bytes.
 */
#pragma once

#include "../../detail/fill.hpp"
#include "../../detail/strided_copy.hpp"
#include "../partial_encode.hpp"
#include "config.hpp"
#include "declaration.hpp"
#include "index.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace zarrxt
{
namespace codec
{

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
        const bool covered = src->mask == nullptr && ov.offset == in.offset &&
                             ov.extent == in.extent; // every in-bounds element
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
            if (src->mask != nullptr)
            {
                zarrxt::detail::masked_strided_copy(chunk.data() + dst_off * static_cast<std::int64_t>(width),
                                                    chunk_strides, src_at, src->strides, src->mask + src_off,
                                                    ov.extent, width);
            }
            else
            {
                zarrxt::detail::strided_copy(chunk.data() + dst_off * static_cast<std::int64_t>(width),
                                             chunk_strides, src_at, src->strides, ov.extent, width);
            }
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

    // Encode the index and put it in place, even when no inner chunk holds data: a whole-shard
    // encode (the shard followed by a compressor) must still be a valid shard, and with the index
    // at the start the space reserved above would otherwise read as entries (0, 0).
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
    return any;
}

template <class InnerChain, class IndexChain, class IndexCache>
void sharding_indexed<InnerChain, IndexChain, IndexCache>::write_region(object_io& io, const box& region,
                                                                        const box& bounds,
                                                                        const array_view& src,
                                                                        write_context& ctx) const
{
    // The old shard is needed unless the region covers every in-bounds element of the shard. It is
    // read through one handle: its index, then only the ranges the new shard takes from it.
    bool need_old = src.mask != nullptr; // a masked write keeps old elements inside its region
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
        with_cache(ctx.cache, [&](auto& c) { c.invalidate(io.key()); });
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

} // namespace codec
} // namespace zarrxt
