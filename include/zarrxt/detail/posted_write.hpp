/** @file detail/posted_write.hpp
 *  The bookkeeping of a posting_store (store/concepts.hpp): writes started and not yet known to be
 *  done, each completed once by whoever waits for it first, and the ones in flight by key.
 */
#pragma once

#include "../error.hpp"

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace zarrxt::detail
{

/// One write in flight. `complete` finishes it (drives the request to its end, or sleeps out a
/// modelled round trip) and throws what it failed with; it runs once, on the first waiter, while
/// later waiters block on the mutex. A write nobody waited for is completed by the destructor: the
/// bytes it sends live in `complete`'s captures, so they must not be freed under a transfer.
class posted_state
{
public:
    explicit posted_state(std::function<void()> complete)
        : m_complete(std::move(complete))
    {
    }
    posted_state(const posted_state&) = delete;
    posted_state& operator=(const posted_state&) = delete;
    ~posted_state() { wait_quiet(); }

    void wait()
    {
        std::lock_guard<std::mutex> g(m_mutex);
        if (m_complete)
        {
            try
            {
                m_complete();
            }
            catch (...)
            {
                m_error = std::current_exception();
            }
            m_complete = nullptr; // the captured bytes and request go now
        }
        if (m_error)
        {
            std::rethrow_exception(m_error);
        }
    }
    void wait_quiet() noexcept
    {
        try
        {
            wait();
        }
        catch (...)
        {
            // The poster reports it (its own wait() throws the same error).
        }
    }

private:
    std::mutex m_mutex;
    std::function<void()> m_complete;
    std::exception_ptr m_error;
};

/// The writes of one store (shared by its copies) still in flight, by key. The newest write of a
/// key is the one that counts: lock_key holders wait for it before reading the key.
class posted_registry
{
public:
    void add(std::string_view key, const std::shared_ptr<posted_state>& s)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_by_key.insert_or_assign(std::string(key), s);
    }
    void wait_for(std::string_view key)
    {
        std::shared_ptr<posted_state> s;
        {
            std::lock_guard<std::mutex> g(m_mutex);
            auto it = m_by_key.find(key);
            if (it == m_by_key.end())
            {
                return;
            }
            s = it->second;
        }
        s->wait_quiet();
        forget(key, s);
    }
    void forget(std::string_view key, const std::shared_ptr<posted_state>& s) noexcept
    {
        std::lock_guard<std::mutex> g(m_mutex);
        auto it = m_by_key.find(key);
        if (it != m_by_key.end() && it->second == s)
        {
            m_by_key.erase(it);
        }
    }
    std::size_t in_flight() const
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_by_key.size();
    }

private:
    mutable std::mutex m_mutex;
    std::map<std::string, std::shared_ptr<posted_state>, std::less<>> m_by_key;
};

/// The ticket post() returns.
class posted_write
{
public:
    posted_write(std::string key, std::shared_ptr<posted_state> s, std::shared_ptr<posted_registry> r)
        : m_key(std::move(key))
        , m_state(std::move(s))
        , m_registry(std::move(r))
    {
        m_registry->add(m_key, m_state);
    }
    /// Waits for the write; throws what it failed with.
    void wait()
    {
        struct forget_on_exit
        {
            posted_write& w;
            ~forget_on_exit() { w.m_registry->forget(w.m_key, w.m_state); }
        } f{*this};
        try
        {
            m_state->wait();
        }
        catch (error& e)
        {
            e.with_key(m_key); // a store's failure names its key unless it did already
            throw;
        }
    }
    const std::string& key() const noexcept { return m_key; }

private:
    std::string m_key;
    std::shared_ptr<posted_state> m_state;
    std::shared_ptr<posted_registry> m_registry;
};

} // namespace zarrxt::detail
