/** @file detail/buffer.hpp
 *  An owned, 64-byte aligned, uninitialised byte buffer.
 *
 *  std::vector<std::byte> value-initialises on resize, which costs a full pass over memory that
 *  a decoder is about to overwrite anyway; for multi-megabyte chunks that pass is measurable.
 *  This buffer only allocates. Capacity is kept across resizes so a per-worker scratch buffer
 *  stops allocating after the first chunk of each size class.
 *
 *  Large allocations (shards being assembled, whole-shard reads) are advised to use transparent
 *  huge pages on Linux: touching fresh memory costs one page fault per 4 KiB page otherwise, and
 *  under virtualisation a fault can cost ~10 us (measured here: first touch of 1 GiB 3.0 s with
 *  4 KiB pages, 0.1 s with huge pages), which made a 64 MiB shard's assembly cost more than its I/O.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <span>
#include <string_view>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace zarrxt
{
namespace detail
{

/// Memory of at least this many bytes gets the huge-page advice before its first touch.
inline constexpr std::size_t huge_page_threshold = std::size_t{4} << 20;
/// The transparent huge page size of x86-64 and most 64-bit Arm kernels.
inline constexpr std::size_t huge_page_size = std::size_t{2} << 20;

/// The whole huge pages inside [p, p + n) as [begin, end), for memory of huge_page_threshold
/// bytes or more; begin == end otherwise (smaller memory is left to the kernel's defaults).
inline std::pair<std::byte*, std::byte*> huge_page_interior(void* p, std::size_t n) noexcept
{
    if (n < huge_page_threshold)
    {
        return {nullptr, nullptr};
    }
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t begin = (a + huge_page_size - 1) / huge_page_size * huge_page_size;
    const std::uintptr_t end = (a + n) / huge_page_size * huge_page_size;
    if (begin >= end)
    {
        return {nullptr, nullptr};
    }
    return {reinterpret_cast<std::byte*>(begin), reinterpret_cast<std::byte*>(end)};
}

/// Advise the kernel to back the whole 2 MiB pages inside [p, p + n) with transparent huge pages,
/// for memory about to be written for the first time (fresh shard buffers, scratch buffers; a
/// read() result is prepared by detail/fresh_memory.hpp instead): first-touch faults then cost one
/// per 2 MiB instead of one per 4 KiB, which is what numpy asks for large arrays too. Advice only:
/// without THP (or with it off) nothing changes.
inline void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const auto [begin, end] = huge_page_interior(p, n);
    if (begin != end)
    {
        ::madvise(begin, static_cast<std::size_t>(end - begin), MADV_HUGEPAGE);
    }
#endif
}

} // namespace detail

using byte_view = std::span<const std::byte>;
using mutable_byte_view = std::span<std::byte>;

class buffer
{
public:
    static constexpr std::size_t alignment = 64;

    buffer() noexcept = default;
    explicit buffer(std::size_t size) { resize_discard(size); }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    buffer(buffer&& other) noexcept
        : m_data(std::exchange(other.m_data, nullptr))
        , m_size(std::exchange(other.m_size, 0))
        , m_capacity(std::exchange(other.m_capacity, 0))
    {
    }
    buffer& operator=(buffer&& other) noexcept
    {
        if (this != &other)
        {
            release();
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
            m_capacity = std::exchange(other.m_capacity, 0);
        }
        return *this;
    }
    ~buffer() { release(); }

    static buffer copy_of(byte_view bytes)
    {
        buffer b(bytes.size());
        if (!bytes.empty())
        {
            std::memcpy(b.data(), bytes.data(), bytes.size());
        }
        return b;
    }

    std::byte* data() noexcept { return m_data; }
    const std::byte* data() const noexcept { return m_data; }
    std::size_t size() const noexcept { return m_size; }
    std::size_t capacity() const noexcept { return m_capacity; }
    bool empty() const noexcept { return m_size == 0; }

    byte_view view() const noexcept { return {m_data, m_size}; }
    mutable_byte_view mutable_view() noexcept { return {m_data, m_size}; }
    operator byte_view() const noexcept { return view(); }

    /// Resize without preserving content (the fast path for scratch space).
    void resize_discard(std::size_t size)
    {
        if (size > m_capacity)
        {
            release();
            allocate(size);
        }
        m_size = size;
    }

    /// Resize preserving the first min(old, new) bytes; new bytes are uninitialised.
    void resize(std::size_t size)
    {
        if (size > m_capacity)
        {
            grow_preserving(std::max(size, m_capacity + m_capacity / 2));
        }
        m_size = size;
    }

    /// Like resize, but a growth allocates exactly `size` (rounded to the alignment), not half as
    /// much again: for decoders that must never hold more than their cap.
    void resize_exact(std::size_t size)
    {
        reserve(size);
        m_size = size;
    }

    /// The capacity an allocation of `n` bytes gets (rounded up to the alignment).
    static constexpr std::size_t capacity_for(std::size_t n) noexcept
    {
        return (n + alignment - 1) / alignment * alignment;
    }

    void reserve(std::size_t capacity)
    {
        if (capacity > m_capacity)
        {
            grow_preserving(capacity);
        }
    }

    void append(byte_view bytes)
    {
        const std::size_t old = m_size;
        resize(old + bytes.size());
        if (!bytes.empty())
        {
            std::memcpy(m_data + old, bytes.data(), bytes.size());
        }
    }

    void clear() noexcept { m_size = 0; }

    /// Give the memory back when more than `keep` bytes are held (for buffers kept between
    /// operations, so a large one is not held for the lifetime of its owner).
    void release_if_above(std::size_t keep) noexcept
    {
        if (m_capacity > keep)
        {
            release();
        }
    }

private:
    void allocate(std::size_t capacity)
    {
        // Rounding up below must not wrap around to a tiny allocation.
        if (capacity > std::numeric_limits<std::size_t>::max() - alignment)
        {
            throw std::bad_alloc();
        }
        // Round up so vectorised codecs may over-read within the allocation.
        const std::size_t rounded = capacity_for(capacity);
        m_data = static_cast<std::byte*>(::operator new(rounded == 0 ? alignment : rounded,
                                                        std::align_val_t{alignment}));
        m_capacity = rounded;
        detail::advise_huge_pages(m_data, rounded);
    }

    void grow_preserving(std::size_t capacity)
    {
        std::byte* old = m_data;
        const std::size_t old_size = m_size;
        const std::size_t old_capacity = m_capacity;
        m_data = nullptr;
        allocate(capacity);
        if (old != nullptr)
        {
            if (old_size != 0)
            {
                std::memcpy(m_data, old, old_size);
            }
            ::operator delete(old, std::align_val_t{alignment});
        }
        (void)old_capacity;
    }

    void release() noexcept
    {
        if (m_data != nullptr)
        {
            ::operator delete(m_data, std::align_val_t{alignment});
            m_data = nullptr;
        }
        m_size = 0;
        m_capacity = 0;
    }

    std::byte* m_data = nullptr;
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
};

inline byte_view as_bytes(std::string_view s) noexcept
{
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

inline std::string_view as_string_view(byte_view b) noexcept
{
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

} // namespace zarrxt
