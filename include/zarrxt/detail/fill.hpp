/** @file detail/fill.hpp
 *  Filling memory with a fill value and testing whether a chunk holds only the fill value, on
 *  untyped bytes. The test compares bit patterns (so a chunk of -0.0 is not "empty" for a 0.0 fill
 *  and is stored; a NaN fill matches chunks holding that exact NaN), which never loses data.
 */
#pragma once

#include "../fill_value.hpp"
#include "odometer.hpp"
#include "small_vector.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zarrxt::detail
{

/// Fill `count` contiguous elements of `width` bytes with `fill`.
inline void fill_run(std::byte* dst, std::uint64_t count, std::size_t width, const fill_value& fill) noexcept
{
    if (count == 0)
    {
        return;
    }
    if (fill.all_zero(width))
    {
        std::memset(dst, 0, count * width);
        return;
    }
    if (width == 1)
    {
        std::memset(dst, static_cast<int>(fill.data()[0]), count);
        return;
    }
    // Double the filled prefix: log2(count) memcpy calls.
    std::memcpy(dst, fill.data(), width);
    std::uint64_t done = 1;
    while (done < count)
    {
        const std::uint64_t n = done < count - done ? done : count - done;
        std::memcpy(dst + done * width, dst, n * width);
        done += n;
    }
}

/// Fill a strided box (runtime rank) with `fill`; strides in elements.
inline void fill_box(std::byte* dst, const sdims& strides, const dims& extent, std::size_t width,
                     const fill_value& fill) noexcept
{
    const std::size_t rank = extent.size();
    for (auto e : extent)
    {
        if (e == 0)
        {
            return;
        }
    }
    if (rank == 0)
    {
        fill_run(dst, 1, width, fill);
        return;
    }
    const std::size_t inner = rank - 1;
    dims idx(rank, 0);
    const auto w = static_cast<std::int64_t>(width);
    while (true)
    {
        std::int64_t off = 0;
        for (std::size_t a = 0; a < inner; ++a)
        {
            off += static_cast<std::int64_t>(idx[a]) * strides[a];
        }
        if (strides[inner] == 1)
        {
            fill_run(dst + off * w, extent[inner], width, fill);
        }
        else
        {
            for (std::uint64_t i = 0; i < extent[inner]; ++i)
            {
                std::memcpy(dst + (off + static_cast<std::int64_t>(i) * strides[inner]) * w, fill.data(),
                            width);
            }
        }
        if (!next_index(idx, extent, inner))
        {
            return;
        }
    }
}

/// True when all `count` contiguous elements equal `fill` bit for bit.
inline bool all_equal_fill(const std::byte* data, std::uint64_t count, std::size_t width, const fill_value& fill) noexcept
{
    if (count == 0)
    {
        return true;
    }
    const std::uint64_t n = count * width;
    if (fill.all_zero(width))
    {
        // Word-at-a-time zero test.
        std::uint64_t i = 0;
        std::uint64_t acc = 0;
        for (; i + 8 <= n; i += 8)
        {
            std::uint64_t v;
            std::memcpy(&v, data + i, 8);
            acc |= v;
            if ((i & 4095) == 0 && acc != 0)
            {
                return false;
            }
        }
        for (; i < n; ++i)
        {
            acc |= static_cast<std::uint64_t>(data[i]);
        }
        return acc == 0;
    }
    // Compare the first element with the fill, then the rest with the array itself shifted by
    // one element: equal iff every element equals its predecessor.
    if (std::memcmp(data, fill.data(), width) != 0)
    {
        return false;
    }
    return std::memcmp(data, data + width, n - width) == 0;
}

} // namespace zarrxt::detail
