/** @file io_counters.hpp
 *  I/O accounting of an array: `io_counters` are kept by every array and updated by the read and
 *  write paths; they tell index reads from payload reads, which is what a test (or a user tuning a
 *  cache) needs to see the I/O shape of a call. `array::stats()` returns an `io_stats` snapshot.
 *  Not a store concern: a store counts its own requests (store/counting.hpp).
 */
#pragma once

#include <atomic>
#include <cstdint>

namespace zarrxt
{

/// A plain copy of the counters at one moment.
struct io_stats
{
    std::uint64_t index_reads = 0; ///< shard-index requests sent to the store
    std::uint64_t index_bytes = 0;
    std::uint64_t payload_reads = 0; ///< chunk / inner-chunk data requests (after coalescing)
    std::uint64_t payload_bytes = 0;
    std::uint64_t index_cache_hits = 0; ///< shard indexes served from the cache
    std::uint64_t peak_cached_index_bytes = 0;
    std::uint64_t writes = 0; ///< objects written (chunks, shards)
    std::uint64_t write_bytes = 0;
    std::uint64_t erases = 0; ///< objects erased (chunks/shards that became fill value)
};

/// Thread-safe counters (relaxed atomics: they count, they do not order).
class io_counters
{
public:
    void add_index_read(std::uint64_t bytes) noexcept
    {
        m_index_reads.fetch_add(1, std::memory_order_relaxed);
        m_index_bytes.fetch_add(bytes, std::memory_order_relaxed);
    }
    void add_payload_read(std::uint64_t bytes) noexcept
    {
        m_payload_reads.fetch_add(1, std::memory_order_relaxed);
        m_payload_bytes.fetch_add(bytes, std::memory_order_relaxed);
    }
    void add_cache_hit() noexcept { m_index_cache_hits.fetch_add(1, std::memory_order_relaxed); }
    void note_cached_bytes(std::uint64_t bytes) noexcept
    {
        std::uint64_t cur = m_peak.load(std::memory_order_relaxed);
        while (bytes > cur && !m_peak.compare_exchange_weak(cur, bytes, std::memory_order_relaxed))
        {
        }
    }
    void add_write(std::uint64_t bytes) noexcept
    {
        m_writes.fetch_add(1, std::memory_order_relaxed);
        m_write_bytes.fetch_add(bytes, std::memory_order_relaxed);
    }
    void add_erase() noexcept { m_erases.fetch_add(1, std::memory_order_relaxed); }

    io_stats snapshot() const noexcept
    {
        io_stats s;
        s.index_reads = m_index_reads.load(std::memory_order_relaxed);
        s.index_bytes = m_index_bytes.load(std::memory_order_relaxed);
        s.payload_reads = m_payload_reads.load(std::memory_order_relaxed);
        s.payload_bytes = m_payload_bytes.load(std::memory_order_relaxed);
        s.index_cache_hits = m_index_cache_hits.load(std::memory_order_relaxed);
        s.peak_cached_index_bytes = m_peak.load(std::memory_order_relaxed);
        s.writes = m_writes.load(std::memory_order_relaxed);
        s.write_bytes = m_write_bytes.load(std::memory_order_relaxed);
        s.erases = m_erases.load(std::memory_order_relaxed);
        return s;
    }

    void reset() noexcept
    {
        for (auto* c : {&m_index_reads, &m_index_bytes, &m_payload_reads, &m_payload_bytes,
                        &m_index_cache_hits, &m_peak, &m_writes, &m_write_bytes, &m_erases})
        {
            c->store(0, std::memory_order_relaxed);
        }
    }

private:
    std::atomic<std::uint64_t> m_index_reads{0};
    std::atomic<std::uint64_t> m_index_bytes{0};
    std::atomic<std::uint64_t> m_payload_reads{0};
    std::atomic<std::uint64_t> m_payload_bytes{0};
    std::atomic<std::uint64_t> m_index_cache_hits{0};
    std::atomic<std::uint64_t> m_peak{0};
    std::atomic<std::uint64_t> m_writes{0};
    std::atomic<std::uint64_t> m_write_bytes{0};
    std::atomic<std::uint64_t> m_erases{0};
};

} // namespace zarrxt
