/** @file cache/index_cache.hpp
 *  Shard-index caches: the IndexCache policy of zarrxt::array (and of a static sharding_indexed).
 *
 *  A shard index is the table of (offset, nbytes) pairs that locates every inner chunk in a shard.
 *  Reading it costs one request per shard; caching it makes repeated small reads of one shard cost
 *  only their payload. Three policies:
 *  - `no_index_cache`: read the index every time (lowest memory; one-shot scans).
 *  - `operation_index_cache<MaxBytes, MaxEntries>`: a FIFO that lives for one read/write call, so a
 *    call touching many inner chunks of a shard reads its index once (the default).
 *  - `lru_index_cache<MaxBytes>`: a bounded LRU shared by every call on the array (interactive
 *    viewers, random access services). Thread-safe.
 *  Entries carry the shard's generation (size + mtime on files); a reader that finds the shard was
 *  replaced drops the entry and reads the index again, and the array's own writes invalidate it.
 *  An index larger than the cap is used for its call and not retained.
 */
#pragma once

#include "../codec/shard_index.hpp"
#include "../zarrxt_fwd.hpp"

#include <atomic>
#include <concepts>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace zarrxt
{

/// What the untyped sharding code sees of a cache.
class index_cache_base
{
public:
    virtual ~index_cache_base() = default;
    /// The cached index of `key`, possibly stale (the caller checks the generation), or null.
    virtual shard_index_ptr find(std::string_view key) = 0;
    virtual void insert(std::string_view key, shard_index_ptr index) = 0;
    virtual void invalidate(std::string_view key) = 0;
    /// Bytes currently held.
    virtual std::size_t cached_bytes() const = 0;
};

/// An IndexCache policy: default constructible, an index_cache_base, and says whether it lives
/// for one operation (a fresh instance per read/write call) or for the array's lifetime.
template <class C>
concept index_cache_policy = std::default_initializable<C> && std::derived_from<C, index_cache_base> && requires {
    {
        C::per_operation
    } -> std::convertible_to<bool>;
};

class no_index_cache final : public index_cache_base
{
public:
    static constexpr bool per_operation = true;
    shard_index_ptr find(std::string_view) override { return nullptr; }
    void insert(std::string_view, shard_index_ptr) override {}
    void invalidate(std::string_view) override {}
    std::size_t cached_bytes() const override { return 0; }
};

/// FIFO bounded by bytes and entries, for the duration of one call (shared by that call's workers).
template <std::size_t MaxBytes, std::size_t MaxEntries>
class operation_index_cache final : public index_cache_base
{
public:
    static constexpr bool per_operation = true;
    static constexpr std::size_t max_bytes = MaxBytes;
    static constexpr std::size_t max_entries = MaxEntries;

    shard_index_ptr find(std::string_view key) override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        for (const auto& e : m_entries)
        {
            if (e.first == key)
            {
                return e.second;
            }
        }
        return nullptr;
    }

    void insert(std::string_view key, shard_index_ptr index) override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(key);
        const std::size_t b = index->memory_bytes();
        if (b > MaxBytes || MaxEntries == 0)
        {
            return; // used by the caller, not retained
        }
        while (!m_entries.empty() && (m_bytes + b > MaxBytes || m_entries.size() >= MaxEntries))
        {
            m_bytes -= m_entries.front().second->memory_bytes();
            m_entries.pop_front();
        }
        m_entries.emplace_back(std::string(key), std::move(index));
        m_bytes += b;
    }

    void invalidate(std::string_view key) override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(key);
    }

    std::size_t cached_bytes() const override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_bytes;
    }

private:
    void erase_locked(std::string_view key)
    {
        for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
        {
            if (it->first == key)
            {
                m_bytes -= it->second->memory_bytes();
                m_entries.erase(it);
                return;
            }
        }
    }

    mutable std::mutex m_mutex;
    std::deque<std::pair<std::string, shard_index_ptr>> m_entries;
    std::size_t m_bytes = 0;
};

/// Least-recently-used cache bounded by bytes, shared across calls and threads.
template <std::size_t MaxBytes>
class lru_index_cache final : public index_cache_base
{
public:
    static constexpr bool per_operation = false;
    static constexpr std::size_t max_bytes = MaxBytes;

    shard_index_ptr find(std::string_view key) override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        auto it = m_map.find(std::string(key));
        if (it == m_map.end())
        {
            return nullptr;
        }
        m_order.splice(m_order.begin(), m_order, it->second);
        return it->second->second;
    }

    void insert(std::string_view key, shard_index_ptr index) override
    {
        const std::size_t b = index->memory_bytes();
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(std::string(key));
        if (b > MaxBytes)
        {
            return;
        }
        while (!m_order.empty() && m_bytes + b > MaxBytes)
        {
            auto& last = m_order.back();
            m_bytes -= last.second->memory_bytes();
            m_map.erase(last.first);
            m_order.pop_back();
        }
        m_order.emplace_front(std::string(key), std::move(index));
        m_map[m_order.front().first] = m_order.begin();
        m_bytes += b;
    }

    void invalidate(std::string_view key) override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(std::string(key));
    }

    std::size_t cached_bytes() const override
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_bytes;
    }

private:
    void erase_locked(const std::string& key)
    {
        auto it = m_map.find(key);
        if (it != m_map.end())
        {
            m_bytes -= it->second->second->memory_bytes();
            m_order.erase(it->second);
            m_map.erase(it);
        }
    }

    using entry = std::pair<std::string, shard_index_ptr>;
    mutable std::mutex m_mutex;
    std::list<entry> m_order;
    std::unordered_map<std::string, std::list<entry>::iterator> m_map;
    std::size_t m_bytes = 0;
};

} // namespace zarrxt
