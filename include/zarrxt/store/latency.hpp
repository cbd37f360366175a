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

#include "../detail/posted_write.hpp"
#include "../zarrxt_fwd.hpp"
#include "concepts.hpp"

#include <algorithm>
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

    using clock = std::chrono::steady_clock;
    /// Each request's [start, answer) for requests_in_flight(); at most max_recorded are kept.
    static constexpr std::size_t max_recorded = std::size_t{1} << 20;
    std::mutex recorded_mutex;
    std::vector<std::pair<clock::time_point, clock::time_point>> recorded;
    /// Whole objects announced by prefetch_objects and not read yet: when their answer is ready.
    std::mutex prefetched_mutex;
    std::map<std::string, clock::time_point, std::less<>> prefetched;
    std::shared_ptr<posted_registry> posted = std::make_shared<posted_registry>();

    explicit latency_state(latency_options o)
        : options(o)
    {
    }

    void record(clock::time_point start, clock::time_point ready)
    {
        std::lock_guard<std::mutex> g(recorded_mutex);
        if (recorded.size() < max_recorded)
        {
            recorded.emplace_back(start, ready);
        }
    }

    /// A request sent now: when its answer is ready (drawn and recorded, not slept).
    clock::time_point send() noexcept
    {
        const auto now = clock::now();
        const auto ready = now + draw();
        record(now, ready);
        return ready;
    }

    /// The whole-object answer of `key` prefetched earlier, taken (once).
    std::optional<clock::time_point> take_prefetched(std::string_view key)
    {
        std::lock_guard<std::mutex> g(prefetched_mutex);
        auto it = prefetched.find(key);
        if (it == prefetched.end())
        {
            return std::nullopt;
        }
        const auto t = it->second;
        prefetched.erase(it);
        return t;
    }

    /// A whole read of `key`: its prefetched answer's time, or a fresh round trip.
    void arrive_whole(std::string_view key, byte_range r)
    {
        std::optional<clock::time_point> ready;
        if (r.is_all())
        {
            ready = take_prefetched(key);
        }
        if (ready)
        {
            prefetched_reads.fetch_add(1);
            sleep_until(*ready);
        }
        else
        {
            delay();
        }
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
    void delay() noexcept { sleep_until(send()); }
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
            const auto ready = m_s->send(); // one batch, one round trip
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
        m_s->arrive_whole(key, r);
        return m_inner.read(key, r, max);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max,
                                       buffer& out) const requires buffered_store<S>
    {
        m_s->arrive_whole(key, r);
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
        m_s->arrive_whole(key, r);
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
    /// A write sent now and acknowledged one round trip later (posting_store): the object is
    /// stored in S at once, and the ticket's wait() sleeps until the acknowledgement, so writes
    /// posted together overlap their round trips as requests in flight to a server do.
    detail::posted_write post(std::string_view key, buffer bytes) requires writable_store<S>
    {
        const auto ready = m_s->send();
        m_inner.set(key, bytes.view());
        auto state = std::make_shared<detail::posted_state>([s = m_s, ready] { s->sleep_until(ready); });
        return detail::posted_write(std::string(key), std::move(state), m_s->posted);
    }
    void wait_posted(std::string_view key) requires writable_store<S> { m_s->posted->wait_for(key); }

    /// Whole-object prefetches (object_prefetching_store): the announced objects are requested
    /// together, one round trip for all, and each later whole read of one waits for that time
    /// instead of a round trip of its own.
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max) const
    {
        if (keys.empty())
        {
            return;
        }
        const auto now = detail::latency_state::clock::now();
        const auto ready = now + m_s->draw();
        {
            std::lock_guard<std::mutex> g(m_s->prefetched_mutex);
            for (const auto& k : keys)
            {
                m_s->prefetched.emplace(k, ready); // an older announcement's time is kept
            }
        }
        for (std::size_t i = 0; i < keys.size(); ++i)
        {
            m_s->record(now, ready);
        }
        if constexpr (object_prefetching_store<S>)
        {
            m_inner.prefetch_objects(keys, max);
        }
    }
    void cancel_prefetch(std::span<const std::string> keys) const
    {
        {
            std::lock_guard<std::mutex> g(m_s->prefetched_mutex);
            for (const auto& k : keys)
            {
                m_s->prefetched.erase(k);
            }
        }
        if constexpr (object_prefetching_store<S>)
        {
            m_inner.cancel_prefetch(keys);
        }
    }
    /// Prefetched objects not read yet.
    std::size_t prefetched_pending() const
    {
        std::lock_guard<std::mutex> g(m_s->prefetched_mutex);
        return m_s->prefetched.size();
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
    /// Requests in flight over time, each from when it was sent to when its answer is ready
    /// (posted writes and prefetched objects included): the most at once, and the mean over the
    /// time at least one was in flight. Counts the first latency_state::max_recorded requests.
    struct in_flight_stats
    {
        std::size_t requests = 0;
        std::size_t peak = 0;
        double mean = 0;
        std::chrono::nanoseconds busy{0};
    };
    in_flight_stats requests_in_flight() const
    {
        using tp = detail::latency_state::clock::time_point;
        std::vector<std::pair<tp, int>> events;
        {
            std::lock_guard<std::mutex> g(m_s->recorded_mutex);
            events.reserve(m_s->recorded.size() * 2);
            for (const auto& [a, b] : m_s->recorded)
            {
                events.emplace_back(a, 1);
                events.emplace_back(b, -1);
            }
        }
        std::sort(events.begin(), events.end()); // at equal times the ends (-1) come first
        in_flight_stats st;
        st.requests = events.size() / 2;
        std::int64_t open = 0;
        double area_ns = 0;
        for (std::size_t i = 0; i < events.size(); ++i)
        {
            if (i > 0 && open > 0)
            {
                const auto dt =
                    std::chrono::duration<double, std::nano>(events[i].first - events[i - 1].first);
                area_ns += static_cast<double>(open) * dt.count();
                st.busy += std::chrono::duration_cast<std::chrono::nanoseconds>(events[i].first -
                                                                                events[i - 1].first);
            }
            open += events[i].second;
            st.peak = std::max(st.peak, static_cast<std::size_t>(std::max<std::int64_t>(open, 0)));
        }
        st.mean = st.busy.count() > 0 ? area_ns / static_cast<double>(st.busy.count()) : 0.0;
        return st;
    }
    /// Forgets the recorded requests (a benchmark measures one operation).
    void reset_requests_in_flight()
    {
        std::lock_guard<std::mutex> g(m_s->recorded_mutex);
        m_s->recorded.clear();
    }
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
