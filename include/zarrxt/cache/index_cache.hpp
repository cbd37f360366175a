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

#include "../codec/sharding_indexed/index_format.hpp"
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
/// What an IndexCache policy provides. Named requirements, no base class: a cache is any default
/// constructible type with these members, safe to call from several threads at once.
/// `per_operation`: true for a cache that lives for one read or write call (a fresh one per call),
/// false for one that lives as long as the array and serves every call.
template <class C>
concept index_cache_policy = std::default_initializable<C> &&
    requires(C& c, const C& cc, std::string_view key, shard_index_ptr index)
{
    {
        C::per_operation
        } -> std::convertible_to<bool>;
    {
        c.find(key)
        } -> std::same_as<shard_index_ptr>;
    c.insert(key, std::move(index));
    c.invalidate(key);
    {
        cc.cached_bytes()
        } -> std::convertible_to<std::size_t>;
};

/// The IndexCache of a sharding codec bound at run time (the codec registry's): it uses whatever
/// cache the array supplies, through index_cache_ref. A sharding codec compiled with a concrete
/// IndexCache calls that type's members directly.
struct any_index_cache
{
};

/// A non-owning reference to an index cache of any policy type, or to none. The read and write
/// contexts carry one: the sharding codec of a dynamic chain is chosen at run time, so it cannot
/// name the array's cache type; a static sharding codec recovers the type with get<C>().
class index_cache_ref
{
public:
    index_cache_ref() noexcept = default;
    index_cache_ref(std::nullptr_t) noexcept {}
    template <index_cache_policy C>
    index_cache_ref(C& cache) noexcept
        : m_obj(&cache)
        , m_ops(&ops_of<C>)
    {
    }

    explicit operator bool() const noexcept { return m_obj != nullptr; }
    bool operator==(std::nullptr_t) const noexcept { return m_obj == nullptr; }

    shard_index_ptr find(std::string_view key) const { return m_ops->find(m_obj, key); }
    void insert(std::string_view key, shard_index_ptr index) const
    {
        m_ops->insert(m_obj, key, std::move(index));
    }
    void invalidate(std::string_view key) const { m_ops->invalidate(m_obj, key); }
    std::size_t cached_bytes() const { return m_ops->cached_bytes(m_obj); }
    /// False for a cache that never keeps what it is given (a policy declaring `retains = false`,
    /// such as no_index_cache): a reader then need not build an index worth keeping.
    bool retains() const noexcept { return m_ops->retains; }

    /// The cache as its own type when it is a C, else nullptr.
    template <class C>
    C* get() const noexcept
    {
        return m_ops == &ops_of<C> ? static_cast<C*>(m_obj) : nullptr;
    }

private:
    struct ops
    {
        shard_index_ptr (*find)(void*, std::string_view);
        void (*insert)(void*, std::string_view, shard_index_ptr);
        void (*invalidate)(void*, std::string_view);
        std::size_t (*cached_bytes)(const void*);
        bool retains;
    };
    template <class C>
    static constexpr bool retains_of()
    {
        if constexpr (requires { C::retains; })
        {
            return C::retains;
        }
        else
        {
            return true;
        }
    }
    // One table per cache type; an inline variable, so its address identifies the type in every
    // translation unit (get<C>() compares it).
    template <class C>
    static constexpr ops ops_of{
        [](void* c, std::string_view k) { return static_cast<C*>(c)->find(k); },
        [](void* c, std::string_view k, shard_index_ptr i) { static_cast<C*>(c)->insert(k, std::move(i)); },
        [](void* c, std::string_view k) { static_cast<C*>(c)->invalidate(k); },
        [](const void* c) { return static_cast<std::size_t>(static_cast<const C*>(c)->cached_bytes()); },
        retains_of<C>()};

    void* m_obj = nullptr;
    const ops* m_ops = nullptr;
};

class no_index_cache
{
public:
    static constexpr bool per_operation = true;
    static constexpr bool retains = false; // a read validates the index in place and keeps nothing
    shard_index_ptr find(std::string_view) { return nullptr; }
    void insert(std::string_view, shard_index_ptr) {}
    void invalidate(std::string_view) {}
    std::size_t cached_bytes() const { return 0; }
};

/// FIFO bounded by bytes and entries, for the duration of one call (shared by that call's workers).
template <std::size_t MaxBytes, std::size_t MaxEntries>
class operation_index_cache
{
public:
    static constexpr bool per_operation = true;
    static constexpr std::size_t max_bytes = MaxBytes;
    static constexpr std::size_t max_entries = MaxEntries;

    shard_index_ptr find(std::string_view key)
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

    void insert(std::string_view key, shard_index_ptr index)
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

    void invalidate(std::string_view key)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(key);
    }

    std::size_t cached_bytes() const
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
class lru_index_cache
{
public:
    static constexpr bool per_operation = false;
    static constexpr std::size_t max_bytes = MaxBytes;

    shard_index_ptr find(std::string_view key)
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

    void insert(std::string_view key, shard_index_ptr index)
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

    void invalidate(std::string_view key)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        erase_locked(std::string(key));
    }

    std::size_t cached_bytes() const
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
