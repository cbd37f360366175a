/** @file detail/endian.hpp
 *  Byte-order helpers. Zarr stores the byte order in metadata (the bytes codec, or the v2 dtype);
 *  swapping happens in place, per element, with the element width known only at run time so the
 *  same code serves every dtype.
 */
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace zarrxt
{

enum class endian
{
    little,
    big,
};

inline constexpr endian native_endian = std::endian::native == std::endian::little ? endian::little
                                                                                    : endian::big;

namespace detail
{

inline std::uint16_t bswap(std::uint16_t v) noexcept { return __builtin_bswap16(v); }
inline std::uint32_t bswap(std::uint32_t v) noexcept { return __builtin_bswap32(v); }
inline std::uint64_t bswap(std::uint64_t v) noexcept { return __builtin_bswap64(v); }

template <class U>
inline void swap_words(std::byte* data, std::size_t count) noexcept
{
    for (std::size_t i = 0; i < count; ++i)
    {
        U v;
        std::memcpy(&v, data + i * sizeof(U), sizeof(U));
        v = bswap(v);
        std::memcpy(data + i * sizeof(U), &v, sizeof(U));
    }
}

/// Reverse the bytes of each `width`-byte word of `data` (width 1 is a no-op).
inline void byteswap_in_place(std::byte* data, std::size_t bytes, std::size_t width) noexcept
{
    switch (width)
    {
    case 2:
        swap_words<std::uint16_t>(data, bytes / 2);
        break;
    case 4:
        swap_words<std::uint32_t>(data, bytes / 4);
        break;
    case 8:
        swap_words<std::uint64_t>(data, bytes / 8);
        break;
    default:
        break;
    }
}

inline std::uint32_t load_le32(const std::byte* p) noexcept
{
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return native_endian == endian::little ? v : bswap(v);
}

inline std::uint64_t load_le64(const std::byte* p) noexcept
{
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return native_endian == endian::little ? v : bswap(v);
}

inline void store_le32(std::byte* p, std::uint32_t v) noexcept
{
    if (native_endian != endian::little)
    {
        v = bswap(v);
    }
    std::memcpy(p, &v, 4);
}

inline void store_le64(std::byte* p, std::uint64_t v) noexcept
{
    if (native_endian != endian::little)
    {
        v = bswap(v);
    }
    std::memcpy(p, &v, 8);
}

} // namespace detail
} // namespace zarrxt
