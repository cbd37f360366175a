/** @file store/counting.hpp
 *  `counting_store<S>` wraps any store and counts the raw requests it serves (reads, opens, stats,
 *  writes), beside the array's own io_counters (io_counters.hpp), which tell index reads from
 *  payload reads.
 */
#pragma once

#include "../io_counters.hpp"
#include "../zarrxt_fwd.hpp"
#include "concepts.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

namespace zarrxt
{

/// Raw request counts of a store.
struct store_stats
{
    std::uint64_t reads = 0;
    std::uint64_t read_bytes = 0;
    std::uint64_t misses = 0; ///< reads of absent keys
    std::uint64_t stats = 0;
    std::uint64_t writes = 0;
    std::uint64_t write_bytes = 0;
    std::uint64_t erases = 0;
    std::uint64_t lists = 0;
    /// Objects opened: every open_object() and every whole-call read (read, read_to, read_into),
    /// each of which opens its object once. A shard read through one handle counts one.
    std::uint64_t opens = 0;
    /// Prefetch announcements received by object handles, and the ranges they named.
    std::uint64_t announcements = 0;
    std::uint64_t announced_ranges = 0;
};

namespace detail
{

/// counting_store's object handle, declared only when the wrapped store hands out handles (so
/// that object_store<counting_store<S>> is exactly object_store<S>).
template <class S, class Counters, bool = object_store<S>>
struct counting_handles
{
};

template <class S, class Counters>
struct counting_handles<S, Counters, true>
{
    class object_handle
    {
    public:
        object_handle(typename S::object_handle h, std::shared_ptr<Counters> c)
            : m_h(std::move(h))
            , m_c(std::move(c))
        {
        }
        object_info info() const noexcept { return m_h.info(); }
        void read_to(byte_range r, std::uint64_t max, buffer& out) const
        {
            m_h.read_to(r, max, out);
            m_c->reads.fetch_add(1);
            m_c->read_bytes.fetch_add(out.size());
        }
        void read_into(std::uint64_t offset,
                       mutable_byte_view dest) const requires direct_handle<typename S::object_handle>
        {
            m_h.read_into(offset, dest);
            m_c->reads.fetch_add(1);
            m_c->read_bytes.fetch_add(dest.size());
        }
        /// Counted, then passed on when the wrapped handle prefetches.
        void prefetch(std::span<const byte_range> ranges) const
        {
            m_c->announcements.fetch_add(1);
            m_c->announced_ranges.fetch_add(ranges.size());
            if constexpr (prefetching_handle<typename S::object_handle>)
            {
                m_h.prefetch(ranges);
            }
        }
        void read_ranges(std::span<const byte_range> ranges, std::uint64_t max, std::span<buffer> out) const
        {
            m_h.read_ranges(ranges, max, out);
            m_c->reads.fetch_add(ranges.size());
            for (std::size_t i = 0; i < ranges.size() && i < out.size(); ++i)
            {
                m_c->read_bytes.fetch_add(out[i].size());
            }
        }

    private:
        typename S::object_handle m_h;
        std::shared_ptr<Counters> m_c;
    };
};

struct store_counters
{
    std::atomic<std::uint64_t> reads{0}, read_bytes{0}, misses{0}, stats{0}, writes{0}, write_bytes{0},
        erases{0}, lists{0}, opens{0}, announcements{0}, announced_ranges{0};
};

} // namespace detail

/// A store decorator that counts every request (zarrs' performance-metrics adapter, in spirit).
template <class S>
class counting_store : public detail::counting_handles<S, detail::store_counters>
{
    static_assert(store_policy<S>, "zarrxt::counting_store<S>: S must satisfy zarrxt::store_policy "
                                   "(copyable, read, stat)");
    using counters = detail::store_counters;

public:
    explicit counting_store(S inner) : m_inner(std::move(inner)), m_c(std::make_shared<counters>()) {}

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max) const
    {
        auto res = m_inner.read(key, r, max);
        m_c->reads.fetch_add(1);
        m_c->opens.fetch_add(1);
        if (res)
        {
            m_c->read_bytes.fetch_add(res->bytes.size());
        }
        else
        {
            m_c->misses.fetch_add(1);
        }
        return res;
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max, buffer& out) const
        requires buffered_store<S>
    {
        auto res = m_inner.read_to(key, r, max, out);
        m_c->reads.fetch_add(1);
        m_c->opens.fetch_add(1);
        if (res)
        {
            m_c->read_bytes.fetch_add(out.size());
        }
        else
        {
            m_c->misses.fetch_add(1);
        }
        return res;
    }
    std::optional<object_info> read_into(std::string_view key, std::uint64_t offset, mutable_byte_view dest) const
        requires direct_store<S>
    {
        auto res = m_inner.read_into(key, offset, dest);
        m_c->reads.fetch_add(1);
        m_c->opens.fetch_add(1);
        if (res)
        {
            m_c->read_bytes.fetch_add(std::min<std::uint64_t>(dest.size(), res->size > offset ? res->size - offset : 0));
        }
        else
        {
            m_c->misses.fetch_add(1);
        }
        return res;
    }
    /// A counting handle (only when S hands out handles; see detail::counting_handles).
    auto open_object(std::string_view key) const requires object_store<S>
    {
        using handle = typename counting_store::object_handle;
        m_c->opens.fetch_add(1);
        auto h = m_inner.open_object(key);
        if (!h)
        {
            m_c->misses.fetch_add(1);
            return std::optional<handle>();
        }
        return std::optional<handle>(std::in_place, std::move(*h), m_c);
    }
    std::optional<object_info> stat(std::string_view key) const
    {
        m_c->stats.fetch_add(1);
        return m_inner.stat(key);
    }
    void set(std::string_view key, byte_view data) requires writable_store<S>
    {
        m_inner.set(key, data);
        m_c->writes.fetch_add(1);
        m_c->write_bytes.fetch_add(data.size());
    }
    /// Streams a new object through S's writer; counted as one write, of its final size, at commit.
    template <class W>
    class counting_writer
    {
    public:
        counting_writer(W w, std::shared_ptr<counters> c)
            : m_w(std::move(w))
            , m_c(std::move(c))
        {
        }
        void append(byte_view data) { m_w.append(data); }
        void write_at(std::uint64_t offset, byte_view data) { m_w.write_at(offset, data); }
        std::uint64_t size() const { return m_w.size(); }
        void commit()
        {
            m_w.commit();
            m_c->writes.fetch_add(1);
            m_c->write_bytes.fetch_add(m_w.size());
        }

    private:
        W m_w;
        std::shared_ptr<counters> m_c;
    };
    auto begin_write(std::string_view key) requires streaming_store<S>
    {
        using inner_writer = decltype(m_inner.begin_write(key));
        return counting_writer<inner_writer>(m_inner.begin_write(key), m_c);
    }
    bool erase(std::string_view key) requires erasable_store<S>
    {
        m_c->erases.fetch_add(1);
        return m_inner.erase(key);
    }
    std::vector<std::string> list(std::string_view prefix) const requires listable_store<S>
    {
        m_c->lists.fetch_add(1);
        return m_inner.list(prefix);
    }
    std::vector<std::string> list_dir(std::string_view prefix) const requires listable_store<S>
    {
        m_c->lists.fetch_add(1);
        return m_inner.list_dir(prefix);
    }
    auto lock_key(std::string_view key) const requires lockable_store<S> { return m_inner.lock_key(key); }

    store_stats stats() const
    {
        return {m_c->reads.load(),  m_c->read_bytes.load(),    m_c->misses.load(),          m_c->stats.load(),
                m_c->writes.load(), m_c->write_bytes.load(),   m_c->erases.load(),          m_c->lists.load(),
                m_c->opens.load(),  m_c->announcements.load(), m_c->announced_ranges.load()};
    }
    void reset()
    {
        for (auto* a :
             {&m_c->reads, &m_c->read_bytes, &m_c->misses, &m_c->stats, &m_c->writes, &m_c->write_bytes,
              &m_c->erases, &m_c->lists, &m_c->opens, &m_c->announcements, &m_c->announced_ranges})
        {
            a->store(0);
        }
    }
    const S& inner() const noexcept { return m_inner; }

private:
    S m_inner;
    std::shared_ptr<counters> m_c;
};

} // namespace zarrxt
