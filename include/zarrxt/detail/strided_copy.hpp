/** @file detail/strided_copy.hpp
 *  Untyped N-d copy between strided arrays of the same shape, with the rank known only at run time.
 *  Used by codecs (transpose encode) and by slow paths; the typed kernels in kernel/ have a
 *  rank-specialised version of the same loop. The innermost axis is copied with memcpy when both
 *  sides are contiguous along it, otherwise element by element with a fixed-width load/store.
 */
#pragma once

#include "odometer.hpp"
#include "small_vector.hpp"
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zarrxt::detail
{

template <std::size_t W>
inline void copy_strided_run(std::byte* dst, std::int64_t dst_stride, const std::byte* src,
                             std::int64_t src_stride, std::uint64_t n) noexcept
{
    for (std::uint64_t i = 0; i < n; ++i)
    {
        std::memcpy(dst, src, W);
        dst += dst_stride * static_cast<std::int64_t>(W);
        src += src_stride * static_cast<std::int64_t>(W);
    }
}

/// Copy one innermost run of `n` elements of `width` bytes with element strides.
inline void copy_run(std::byte* dst, std::int64_t dst_stride, const std::byte* src, std::int64_t src_stride,
                     std::uint64_t n, std::size_t width) noexcept
{
    if (dst_stride == 1 && src_stride == 1)
    {
        std::memcpy(dst, src, n * width);
        return;
    }
    switch (width)
    {
    case 1:
        copy_strided_run<1>(dst, dst_stride, src, src_stride, n);
        return;
    case 2:
        copy_strided_run<2>(dst, dst_stride, src, src_stride, n);
        return;
    case 4:
        copy_strided_run<4>(dst, dst_stride, src, src_stride, n);
        return;
    case 8:
        copy_strided_run<8>(dst, dst_stride, src, src_stride, n);
        return;
    case 16:
        copy_strided_run<16>(dst, dst_stride, src, src_stride, n);
        return;
    default:
        for (std::uint64_t i = 0; i < n; ++i)
        {
            std::memcpy(dst + static_cast<std::int64_t>(i) * dst_stride * static_cast<std::int64_t>(width),
                        src + static_cast<std::int64_t>(i) * src_stride * static_cast<std::int64_t>(width), width);
        }
    }
}

/// Call run(dst offset, src offset) (in elements) at the start of every innermost row of `shape`,
/// walking the outer axes with an odometer; nothing for an empty shape, once for rank 0.
template <class Run>
inline void for_each_row(const sdims& dst_strides, const sdims& src_strides, const dims& shape, Run&& run)
{
    const std::size_t rank = shape.size();
    for (auto e : shape)
    {
        if (e == 0)
        {
            return;
        }
    }
    if (rank == 0)
    {
        run(std::int64_t{0}, std::int64_t{0});
        return;
    }
    dims idx(rank, 0);
    const std::size_t inner = rank - 1;
    while (true)
    {
        std::int64_t doff = 0;
        std::int64_t soff = 0;
        for (std::size_t a = 0; a < inner; ++a)
        {
            doff += static_cast<std::int64_t>(idx[a]) * dst_strides[a];
            soff += static_cast<std::int64_t>(idx[a]) * src_strides[a];
        }
        run(doff, soff);
        if (!next_index(idx, shape, inner)) // odometer over the outer axes
        {
            return;
        }
    }
}

/// dst[i...] = src[i...] for every index of `shape`; strides in elements.
inline void strided_copy(std::byte* dst, const sdims& dst_strides, const std::byte* src,
                         const sdims& src_strides, const dims& shape, std::size_t width)
{
    const auto w = static_cast<std::int64_t>(width);
    if (shape.empty())
    {
        std::memcpy(dst, src, width);
        return;
    }
    // Axes along which both sides are contiguous with the axis inside them merge into one, so a
    // copy between two C-contiguous arrays is one memcpy, not one per row (a shard index, whose
    // innermost axis has two entries, was 16,384 of them). Axes of extent 1 add no offset and drop.
    dims merged;
    sdims merged_dst;
    sdims merged_src;
    for (std::size_t a = shape.size(); a-- > 0;)
    {
        if (shape[a] == 0)
        {
            return;
        }
        if (shape[a] == 1)
        {
            continue;
        }
        const std::size_t k = merged.size();
        if (k != 0 && dst_strides[a] == merged_dst[k - 1] * static_cast<std::int64_t>(merged[k - 1]) &&
            src_strides[a] == merged_src[k - 1] * static_cast<std::int64_t>(merged[k - 1]))
        {
            merged[k - 1] *= shape[a];
            continue;
        }
        merged.push_back(shape[a]);
        merged_dst.push_back(dst_strides[a]);
        merged_src.push_back(src_strides[a]);
    }
    if (merged.empty()) // every axis of extent 1: one element
    {
        std::memcpy(dst, src, width);
        return;
    }
    std::reverse(merged.begin(), merged.end());
    std::reverse(merged_dst.begin(), merged_dst.end());
    std::reverse(merged_src.begin(), merged_src.end());
    const std::size_t inner = merged.size() - 1;
    const std::uint64_t run = merged[inner];
    const std::int64_t run_dst = merged_dst[inner];
    const std::int64_t run_src = merged_src[inner];
    for_each_row(merged_dst, merged_src, merged,
                 [&](std::int64_t doff, std::int64_t soff)
                 { copy_run(dst + doff * w, run_dst, src + soff * w, run_src, run, width); });
}

/// dst[i...] = src[i...] where mask[i...] is non-zero (the mask has the source's strides): a write
/// of scattered elements (a strided or orthogonal selection) over the old contents of a chunk.
inline void masked_strided_copy(std::byte* dst, const sdims& dst_strides, const std::byte* src,
                                const sdims& src_strides, const std::uint8_t* mask, const dims& shape,
                                std::size_t width)
{
    const auto w = static_cast<std::int64_t>(width);
    const std::size_t rank = shape.size();
    const std::uint64_t n = rank == 0 ? 1 : shape[rank - 1];
    const std::int64_t ds = rank == 0 ? 0 : dst_strides[rank - 1];
    const std::int64_t ss = rank == 0 ? 0 : src_strides[rank - 1];
    for_each_row(dst_strides, src_strides, shape,
                 [&](std::int64_t doff, std::int64_t soff)
                 {
                     for (std::uint64_t i = 0; i < n; ++i)
                     {
                         const std::int64_t si = soff + static_cast<std::int64_t>(i) * ss;
                         if (mask[si] != 0)
                         {
                             std::memcpy(dst + (doff + static_cast<std::int64_t>(i) * ds) * w, src + si * w,
                                         width);
                         }
                     }
                 });
}

} // namespace zarrxt::detail
