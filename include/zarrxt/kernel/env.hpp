/** @file kernel/env.hpp
 *  What a read or write kernel sees of an array: its metadata, bound chain, limits, counters, the
 *  operation's index cache, and the store, executor and scratch pool through references. Only the
 *  chain keeps its type (the kernels call it per chunk, where static dispatch pays), so a kernel is
 *  instantiated once per rank and chain, not once per set of policies: every store, executor, index
 *  cache and limits type shares the compiled kernels of the dynamic chain (kernel/instantiations.hpp).
 */
#pragma once

#include "../cache/index_cache.hpp"
#include "../codec/concepts.hpp"
#include "../detail/function_ref.hpp"
#include "../error.hpp"
#include "../exec/executor_ref.hpp"
#include "../io_counters.hpp"
#include "../limits.hpp"
#include "../metadata/array_metadata.hpp"
#include "../store/concepts.hpp"
#include "io.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace zarrxt::kernel
{

/// The stored objects of an array, for the kernels: a reader for one key, and a key's current
/// object and its replacement under the store's lock for that key.
class store_access
{
public:
    /// Call f with a reader of `key` (on the stack: no allocation).
    virtual void read_object(std::string key, zarrxt::detail::function_ref<void(range_reader&)> f) const = 0;
    /// A reader of `key` that outlives the call (plans read in one task, batches in others).
    virtual std::unique_ptr<range_reader> open_reader(std::string key) const = 0;
    /// Call f with the object at `key` while holding the store's lock for it (lockable_store).
    /// `max_whole` caps the whole-object read of a store without object handles.
    virtual void write_object(std::string key, std::uint64_t max_whole, write_posts* posts,
                              zarrxt::detail::function_ref<void(object_io&)> f) = 0;
    /// The posts of one write operation when the store is a posting_store (else null): at most
    /// `max_bytes` of posted objects are held in flight.
    virtual std::unique_ptr<write_posts> begin_posts(std::uint64_t max_bytes) = 0;
    /// Whether the store starts whole-object reads ahead (object_prefetching_store).
    virtual bool prefetches_objects() const noexcept = 0;
    /// Announce the objects about to be read whole; drop what was not read.
    virtual void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const = 0;
    virtual void cancel_prefetch(std::span<const std::string> keys) const = 0;

protected:
    ~store_access() = default;
};

template <class Store>
class store_access_for final : public store_access
{
public:
    explicit store_access_for(Store& s) noexcept
        : m_store(s)
    {
    }

    void read_object(std::string key, zarrxt::detail::function_ref<void(range_reader&)> f) const override
    {
        store_reader<Store> reader(m_store, std::move(key));
        f(reader);
    }

    std::unique_ptr<range_reader> open_reader(std::string key) const override
    {
        return std::make_unique<store_reader<Store>>(m_store, std::move(key));
    }

    void write_object(std::string key, std::uint64_t max_whole, write_posts* posts,
                      zarrxt::detail::function_ref<void(object_io&)> f) override
    {
        if constexpr (array_writable_store<Store>)
        {
            auto lock = m_store.lock_key(key);
            if constexpr (posting_store<Store>)
            {
                // A write of this key still in flight (another operation's) lands before the
                // current version is read: read-modify-write starts from the newest one.
                m_store.wait_posted(key);
            }
            store_object_io<Store> io(m_store, std::move(key), max_whole, posts);
            f(io);
        }
        else
        {
            // array<...>::write requires array_writable_store: a read-only store never gets here.
            throw array_error(array_errc::invalid_argument, "the store of this array is read-only");
        }
    }

    std::unique_ptr<write_posts> begin_posts(std::uint64_t max_bytes) override
    {
        if constexpr (array_writable_store<Store> && posting_store<Store>)
        {
            if constexpr (requires { m_store.posts_writes(); })
            {
                if (!m_store.posts_writes()) // a store that knows only at run time (any_store)
                {
                    return nullptr;
                }
            }
            return std::make_unique<posts_for>(m_store, max_bytes);
        }
        else
        {
            (void)max_bytes;
            return nullptr;
        }
    }

    bool prefetches_objects() const noexcept override
    {
        if constexpr (requires { m_store.prefetches_objects(); })
        {
            return m_store.prefetches_objects(); // a store that knows only at run time (any_store)
        }
        else
        {
            return object_prefetching_store<Store>;
        }
    }
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const override
    {
        if constexpr (object_prefetching_store<Store>)
        {
            m_store.prefetch_objects(keys, max_bytes);
        }
    }
    void cancel_prefetch(std::span<const std::string> keys) const override
    {
        if constexpr (object_prefetching_store<Store>)
        {
            m_store.cancel_prefetch(keys);
        }
    }

private:
    /// The tickets of one operation's posts, oldest first. When the bytes in flight pass the
    /// budget, the oldest are waited for before more are posted.
    class posts_for final : public write_posts
    {
    public:
        posts_for(Store& s, std::uint64_t max_bytes)
            : m_store(s)
            , m_max(std::max<std::uint64_t>(max_bytes, 1))
        {
        }
        ~posts_for() override
        {
            // An operation that failed before finish(): its writes still end before it returns
            // (their errors are dropped; the operation's own error is reported).
            for (auto& p : m_pending)
            {
                try
                {
                    p.ticket.wait();
                }
                catch (...)
                {
                }
            }
        }
        void post(const std::string& key, buffer bytes) override
        {
            const std::uint64_t n = bytes.size();
            wait_oldest_while([&](std::uint64_t in_flight) { return in_flight + n > m_max; });
            auto ticket = m_store.post(key, std::move(bytes));
            std::lock_guard<std::mutex> g(m_mutex);
            m_pending.push_back(entry{std::move(ticket), n});
            m_bytes += n;
        }
        void finish() override
        {
            wait_oldest_while([](std::uint64_t) { return true; });
            std::lock_guard<std::mutex> g(m_mutex);
            if (m_error)
            {
                std::rethrow_exception(std::exchange(m_error, nullptr));
            }
        }

    private:
        using ticket_type = decltype(std::declval<Store&>().post(std::string_view{}, buffer{}));
        struct entry
        {
            ticket_type ticket;
            std::uint64_t bytes;
        };
        /// Waits for the oldest posts, one at a time (the lock is not held while waiting), while
        /// there are any and `more(bytes in flight)` says so.
        template <class More>
        void wait_oldest_while(More more)
        {
            for (;;)
            {
                std::unique_lock<std::mutex> g(m_mutex);
                if (m_pending.empty() || !more(m_bytes))
                {
                    return;
                }
                entry oldest = std::move(m_pending.front());
                m_pending.pop_front();
                m_bytes -= oldest.bytes;
                g.unlock();
                wait_one(oldest);
            }
        }
        void wait_one(entry& e)
        {
            try
            {
                e.ticket.wait();
            }
            catch (...)
            {
                std::lock_guard<std::mutex> g(m_mutex);
                if (!m_error)
                {
                    m_error = std::current_exception();
                }
            }
        }

        Store& m_store;
        std::uint64_t m_max;
        std::mutex m_mutex;
        std::deque<entry> m_pending;
        std::uint64_t m_bytes = 0;
        std::exception_ptr m_error;
    };

    Store& m_store;
};

/// Per-worker scratch spaces of an array, lent to operations and taken back (their buffers are
/// reused by the next operation instead of allocated again).
class scratch_pool
{
public:
    class lease
    {
    public:
        /// n spaces; `arena` (the operation's, for variable-length values) is lent with them.
        lease(scratch_pool& pool, std::size_t n, value_arena* arena = nullptr)
            : m_pool(pool)
        {
            std::lock_guard<std::mutex> g(pool.m_mutex);
            for (std::size_t i = 0; i < n; ++i)
            {
                if (!pool.m_free.empty())
                {
                    m_items.push_back(std::move(pool.m_free.back()));
                    pool.m_free.pop_back();
                }
                else
                {
                    m_items.push_back(std::make_unique<codec::scratch_space>());
                }
                m_items.back()->arena = arena;
            }
        }
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease()
        {
            std::lock_guard<std::mutex> g(m_pool.m_mutex);
            // Keep at most a few spaces: they hold chunk-sized buffers. Large I/O buffers (batches
            // of a shard's inner chunks, reused within the operation) are released.
            for (auto& s : m_items)
            {
                s->arena = nullptr; // the operation's, gone with it
                s->release_large_buffers(std::size_t{16} << 20);
                if (m_pool.m_free.size() < 16)
                {
                    m_pool.m_free.push_back(std::move(s));
                }
            }
        }
        codec::scratch_space& operator[](std::size_t i) { return *m_items[i]; }

    private:
        scratch_pool& m_pool;
        std::vector<std::unique_ptr<codec::scratch_space>> m_items;
    };

private:
    std::mutex m_mutex;
    std::vector<std::unique_ptr<codec::scratch_space>> m_free;
};

/// The key of the chunk (or shard) at grid coordinates `coords` of the array at `path`.
inline std::string chunk_key_of(const std::string& path, const array_metadata& meta,
                                const std::uint64_t* coords, std::size_t rank)
{
    std::string k;
    k.reserve(path.size() + 8 + rank * 4);
    k += path;
    if (!path.empty())
    {
        k += '/';
    }
    meta.key_encoding.append_key(std::span<const std::uint64_t>(coords, rank), k);
    return k;
}

/// The chains of a rectilinear grid's chunks: a chain is bound to one chunk shape (codec_context),
/// and the chunks of such a grid have many. One is bound per shape on first use and kept; the
/// kept ones are bounded (a grid can have as many shapes as chunks), and a chain in use stays
/// alive through its shared_ptr when the set is cleared.
template <class Chain>
class shaped_chains
{
public:
    /// `base`: the context the array's own chain was bound to (its user codecs included).
    shaped_chains(const std::vector<codec_spec>& specs, codec::codec_context base)
        : m_specs(specs)
        , m_context(std::move(base))
    {
    }

    std::shared_ptr<const Chain> get(const dims& shape) const
    {
        std::vector<std::uint64_t> key = shape.to_vector();
        {
            std::lock_guard<std::mutex> g(m_mutex);
            if (const auto it = m_chains.find(key); it != m_chains.end())
            {
                return it->second;
            }
        }
        // Bound outside the lock: binding a sharding chain builds its inner chain too.
        codec::codec_context ctx = m_context;
        ctx.chunk_shape = shape;
        auto chain = std::make_shared<const Chain>(Chain::from_specs(m_specs, ctx));
        std::lock_guard<std::mutex> g(m_mutex);
        if (m_chains.size() >= max_kept)
        {
            m_chains.clear();
        }
        return m_chains.emplace(std::move(key), std::move(chain)).first->second;
    }

private:
    static constexpr std::size_t max_kept = 256;
    std::vector<codec_spec> m_specs;
    codec::codec_context m_context;
    mutable std::mutex m_mutex;
    mutable std::map<std::vector<std::uint64_t>, std::shared_ptr<const Chain>> m_chains;
};

/// Everything one operation of a kernel uses (built by array_core::run for each call).
template <class Chain>
struct kernel_env
{
    const array_metadata& meta;
    const std::string& path;
    const Chain& chain;
    const limit_values& limits;
    io_counters& counters;
    index_cache_ref cache; ///< the operation's index cache (a fresh one for per-operation policies)
    executor_ref exec;
    scratch_pool& scratch;
    store_access& store;
    /// Variable-length arrays: where this operation's decoded values are kept (vlen.hpp).
    value_arena* arena = nullptr;
    /// A rectilinear grid's chains per chunk shape (null on a regular grid: `chain` serves all).
    const shaped_chains<Chain>* shaped = nullptr;

    /// The chain of a chunk of `shape`: the array's own on a regular grid (not owned: no count
    /// is touched), else the one bound to that shape.
    std::shared_ptr<const Chain> chain_for(const dims& shape) const
    {
        if (shaped == nullptr)
        {
            return std::shared_ptr<const Chain>(std::shared_ptr<const Chain>(), &chain);
        }
        return shaped->get(shape);
    }

    std::string chunk_key(const std::uint64_t* coords, std::size_t rank) const
    {
        return chunk_key_of(path, meta, coords, rank);
    }
};

} // namespace zarrxt::kernel
