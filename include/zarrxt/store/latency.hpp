/** @file store/latency.hpp
 *  `latency_store<S>` wraps any store and makes every request to it cost a round trip: a fixed
 *  delay plus a uniform random jitter, slept on the calling thread before the request is passed
 *  on. It stands in for a remote store (an object store 30 ms away) in tests and benchmarks,
 *  with the values of the wrapped store.
 *
 *  The delay is per request, not per store: concurrent requests from different threads sleep at
 *  the same time, as requests in flight to a server do (nothing is locked while a caller sleeps).
 *  A handle's `prefetch(ranges)` stands for a batch of requests started together: it costs one
 *  delay, not slept but recorded as the time the whole batch is ready, and each later read of a
 *  prefetched range waits until that time instead of paying a fresh delay (a read plan of many
 *  ranges costs about one round trip, as over http_store). `read_ranges` is such a batch too.
 *
 *  A store with object handles also gets `open_object_and_read` (one delay), whether or not S has
 *  it: a remote store answers the first range of an object with its size and version in the same
 *  response, so opening an object costs no round trip of its own (http_store does this).
 */
#pragma once

#include "../zarrxt_fwd.hpp"
#include "concepts.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace zarrxt
{

/// The round trip a latency_store adds to each request.
struct latency_options
{
    /// Paid by every request.
    std::chrono::microseconds fixed{30000};
    /// A uniform random extra in [0, jitter], drawn per request.
    std::chrono::microseconds jitter{0};
    /// The jitter of the n-th request is a function of (seed, n): runs with one seed draw the same delays.
    std::uint64_t seed = 1;
};

namespace detail
{

/// What the copies of one latency_store share: the options and the counters.
struct latency_state
{
    latency_options options;
    std::atomic<std::uint64_t> requests{0}; ///< delays drawn (the n of the next draw)
    std::atomic<std::uint64_t> prefetched_reads{0};
    std::atomic<std::uint64_t> total_us{0};
    std::atomic<int> sleeping{0};
    std::atomic<int> peak_sleeping{0};

    explicit latency_state(latency_options o)
        : options(o)
    {
    }

    /// The delay of the next request: drawn without a lock (splitmix64 of seed and request number),
    /// so that concurrent requests never wait for each other to draw.
    std::chrono::microseconds draw() noexcept
    {
        const std::uint64_t n = requests.fetch_add(1, std::memory_order_relaxed);
        std::uint64_t extra = 0;
        if (options.jitter.count() > 0)
        {
            std::uint64_t z = options.seed + (n + 1) * 0x9e3779b97f4a7c15ull;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            z ^= z >> 31;
            extra = z % (static_cast<std::uint64_t>(options.jitter.count()) + 1);
        }
        const auto d = options.fixed + std::chrono::microseconds(static_cast<std::int64_t>(extra));
        total_us.fetch_add(static_cast<std::uint64_t>(d.count()), std::memory_order_relaxed);
        return d;
    }

    /// Sleeps on the calling thread until `t` (counted as one sleeper meanwhile).
    void sleep_until(std::chrono::steady_clock::time_point t) noexcept
    {
        const int now_sleeping = sleeping.fetch_add(1) + 1;
        int peak = peak_sleeping.load();
        while (now_sleeping > peak && !peak_sleeping.compare_exchange_weak(peak, now_sleeping))
        {
        }
        std::this_thread::sleep_until(t);
        sleeping.fetch_sub(1);
    }

    /// One request's round trip, slept now.
    void delay() noexcept
    {
        const auto d = draw();
        sleep_until(std::chrono::steady_clock::now() + d);
    }
};

/// latency_store's object handle, declared only when the wrapped store hands out handles (so
/// that object_store<latency_store<S>> is exactly object_store<S>).
template <class S, bool = object_store<S>>
struct latency_handles
{
};

template <class S>
struct latency_handles<S, true>
{
    class object_handle
    {
    public:
        object_handle(typename S::object_handle h, std::shared_ptr<latency_state> s)
            : m_h(std::move(h))
            , m_s(std::move(s))
            , m_pending(std::make_shared<pending>())
        {
        }
        object_info info() const noexcept { return m_h.info(); }
        void read_to(byte_range r, std::uint64_t max, buffer& out) const
        {
            const auto [begin, end] = resolve_range(r, m_h.info().size);
            arrive(begin, end);
            m_h.read_to(r, max, out);
        }
        void read_into(std::uint64_t offset,
                       mutable_byte_view dest) const requires direct_handle<typename S::object_handle>
        {
            arrive(offset, offset + dest.size());
            m_h.read_into(offset, dest);
        }
        /// One batch: one delay for all of it (the requests are in flight together).
        void read_ranges(std::span<const byte_range> ranges, std::uint64_t max, std::span<buffer> out) const
        {
            if (!ranges.empty())
            {
                m_s->delay();
            }
            m_h.read_ranges(ranges, max, out);
        }
        /// The batch is "started": it is ready one delay from now, whoever reads it and when.
        void prefetch(std::span<const byte_range> ranges) const
        {
            if (ranges.empty())
            {
                return;
            }
            const auto ready = std::chrono::steady_clock::now() + m_s->draw();
            {
                std::lock_guard<std::mutex> g(m_pending->mutex);
                for (const auto& r : ranges)
                {
                    const auto span = resolve_range(r, m_h.info().size);
                    m_pending->ready.emplace(span, ready); // an older batch's time is kept
                }
            }
            if constexpr (prefetching_handle<typename S::object_handle>)
            {
                m_h.prefetch(ranges);
            }
        }

    private:
        /// The ranges prefetched and not read yet, with the time their batch is ready. Shared by
        /// copies of the handle; the lock is never held while a caller sleeps.
        struct pending
        {
            std::mutex mutex;
            std::map<std::pair<std::uint64_t, std::uint64_t>, std::chrono::steady_clock::time_point> ready;
        };

        /// Waits for the answer to [begin, end): its batch's ready time when it was prefetched
        /// (once: a second read of it is a new request), else a fresh delay.
        void arrive(std::uint64_t begin, std::uint64_t end) const
        {
            std::optional<std::chrono::steady_clock::time_point> ready;
            {
                std::lock_guard<std::mutex> g(m_pending->mutex);
                auto it = m_pending->ready.find({begin, end});
                if (it != m_pending->ready.end())
                {
                    ready = it->second;
                    m_pending->ready.erase(it);
                }
            }
            if (ready)
            {
                m_s->prefetched_reads.fetch_add(1);
                m_s->sleep_until(*ready);
            }
            else
            {
                m_s->delay();
            }
        }

        typename S::object_handle m_h;
        std::shared_ptr<latency_state> m_s;
        std::shared_ptr<pending> m_pending;
    };
};

} // namespace detail

/// A store decorator that adds a round trip to every request (see the file comment).
template <class S>
class latency_store : public detail::latency_handles<S>
{
    static_assert(store_policy<S>, "zarrxt::latency_store<S>: S must satisfy zarrxt::store_policy "
                                   "(copyable, read, stat)");

public:
    explicit latency_store(S inner, latency_options options = {})
        : m_inner(std::move(inner))
        , m_s(std::make_shared<detail::latency_state>(options))
    {
    }

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max) const
    {
        m_s->delay();
        return m_inner.read(key, r, max);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max,
                                       buffer& out) const requires buffered_store<S>
    {
        m_s->delay();
        return m_inner.read_to(key, r, max, out);
    }
    std::optional<object_info> read_into(std::string_view key, std::uint64_t offset,
                                         mutable_byte_view dest) const requires direct_store<S>
    {
        m_s->delay();
        return m_inner.read_into(key, offset, dest);
    }
    std::optional<object_info> stat(std::string_view key) const
    {
        m_s->delay();
        return m_inner.stat(key);
    }
    /// A handle whose reads pay the delay (only when S hands out handles).
    auto open_object(std::string_view key) const requires object_store<S>
    {
        m_s->delay();
        return wrap(m_inner.open_object(key));
    }
    /// Open and a first read in one round trip (see the file comment).
    auto open_object_and_read(std::string_view key, byte_range r, std::uint64_t max,
                              buffer& out) const requires object_store<S>
    {
        m_s->delay();
        if constexpr (open_reading_store<S>)
        {
            return wrap(m_inner.open_object_and_read(key, r, max, out));
        }
        else
        {
            auto h = m_inner.open_object(key);
            if (h)
            {
                h->read_to(r, max, out);
            }
            return wrap(std::move(h));
        }
    }
    void set(std::string_view key, byte_view data) requires writable_store<S>
    {
        m_s->delay();
        m_inner.set(key, data);
    }
    /// Streams through S's writer: the pieces are gathered as an uploader would, and the commit
    /// (the request that publishes the object) pays the delay.
    template <class W>
    class latency_writer
    {
    public:
        latency_writer(W w, std::shared_ptr<detail::latency_state> s)
            : m_w(std::move(w))
            , m_s(std::move(s))
        {
        }
        void append(byte_view data) { m_w.append(data); }
        void write_at(std::uint64_t offset, byte_view data) { m_w.write_at(offset, data); }
        std::uint64_t size() const { return m_w.size(); }
        void commit()
        {
            m_s->delay();
            m_w.commit();
        }

    private:
        W m_w;
        std::shared_ptr<detail::latency_state> m_s;
    };
    auto begin_write(std::string_view key) requires streaming_store<S>
    {
        using inner_writer = decltype(m_inner.begin_write(key));
        return latency_writer<inner_writer>(m_inner.begin_write(key), m_s);
    }
    bool erase(std::string_view key) requires erasable_store<S>
    {
        m_s->delay();
        return m_inner.erase(key);
    }
    std::vector<std::string> list(std::string_view prefix) const requires listable_store<S>
    {
        m_s->delay();
        return m_inner.list(prefix);
    }
    std::vector<std::string> list_dir(std::string_view prefix) const requires listable_store<S>
    {
        m_s->delay();
        return m_inner.list_dir(prefix);
    }
    /// An in-process lock: no request, no delay.
    auto lock_key(std::string_view key) const requires lockable_store<S> { return m_inner.lock_key(key); }

    /// Delays drawn so far: one per request, one per prefetched batch (shared by copies).
    std::uint64_t delays() const noexcept { return m_s->requests.load(); }
    /// Reads answered at their prefetched batch's ready time instead of a delay of their own.
    std::uint64_t prefetched_reads() const noexcept { return m_s->prefetched_reads.load(); }
    /// The sum of the delays drawn.
    std::chrono::microseconds total_delay() const noexcept
    {
        return std::chrono::microseconds(static_cast<std::int64_t>(m_s->total_us.load()));
    }
    /// The most callers asleep in a delay at once (more than one: the delays overlapped).
    int peak_concurrent_delays() const noexcept { return m_s->peak_sleeping.load(); }
    const latency_options& options() const noexcept { return m_s->options; }
    const S& inner() const noexcept { return m_inner; }

private:
    template <class H>
    auto wrap(std::optional<H> h) const
    {
        using handle = typename latency_store::object_handle;
        if (!h)
        {
            return std::optional<handle>();
        }
        return std::optional<handle>(std::in_place, std::move(*h), m_s);
    }

    S m_inner;
    std::shared_ptr<detail::latency_state> m_s;
};

} // namespace zarrxt
