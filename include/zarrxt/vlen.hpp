/** @file vlen.hpp
 *  How variable-length values (the `string` and `bytes` data types, v2 `|O` with `vlen-utf8` /
 *  `vlen-bytes`) travel through the fixed-size kernels.
 *
 *  The read and write kernels move elements of one fixed width with memcpy. A variable-length
 *  element is therefore carried as a `vlen_element`: a pointer and a length (16 bytes), naming
 *  bytes that live elsewhere for the duration of one operation:
 *  - values decoded from a chunk live in the operation's `value_arena` (the vlen codecs copy each
 *    decoded chunk's payload there once, so the element survives the reuse of the scratch buffer
 *    it was decoded in);
 *  - values being written live in the caller's strings;
 *  - the fill value lives in the array's metadata (`fill_value::text`).
 *  A value equal to the fill value always points at the fill value's own bytes, so the kernels'
 *  byte-wise "is this chunk all fill?" test (detail/fill.hpp) holds for variable-length data too.
 *  Nothing but the vlen codecs and the typed front (array<std::string, N>) looks inside an element.
 */
#pragma once

#include "error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// One variable-length value as the kernels carry it: `size` bytes at `data` (null when empty).
struct vlen_element
{
    const char* data = nullptr;
    std::uint64_t size = 0;

    std::string_view view() const noexcept
    {
        return size == 0 ? std::string_view() : std::string_view(data, static_cast<std::size_t>(size));
    }
};
static_assert(sizeof(vlen_element) == 16, "a vlen_element is the 16-byte element of the vlen data types");
static_assert(std::is_trivially_copyable_v<vlen_element>, "the kernels copy elements with memcpy");

/// Where one operation keeps the payloads of the variable-length chunks it decodes: append-only,
/// thread-safe (the executor's workers decode chunks at once), freed as a whole when the operation's
/// caller drops it. Its size is capped (`max_bytes`, the operation's max_bytes_in_flight) so that a
/// read of a few elements of many huge chunks stops with limit_exceeded instead of filling memory.
class value_arena
{
public:
    explicit value_arena(std::uint64_t max_bytes = ~std::uint64_t{0}) noexcept
        : m_max(max_bytes)
    {
    }
    value_arena(const value_arena&) = delete;
    value_arena& operator=(const value_arena&) = delete;

    /// A copy of `n` bytes at `p` that lives as long as the arena.
    const char* keep(const std::byte* p, std::size_t n)
    {
        if (n == 0)
        {
            return nullptr;
        }
        std::unique_ptr<char[]> block(new char[n]);
        std::memcpy(block.get(), p, n);
        std::lock_guard<std::mutex> g(m_mutex);
        if (n > m_max - m_bytes)
        {
            throw limit_exceeded("max_bytes_in_flight", m_bytes + n, m_max);
        }
        m_bytes += n;
        m_blocks.push_back(std::move(block));
        return m_blocks.back().get();
    }

    /// Bytes kept so far.
    std::uint64_t bytes() const
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_bytes;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<std::unique_ptr<char[]>> m_blocks;
    std::uint64_t m_max;
    std::uint64_t m_bytes = 0;
};

} // namespace zarrxt
