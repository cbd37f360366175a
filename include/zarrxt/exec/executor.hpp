/** @file exec/executor.hpp
 *  Executors: the Executor policy of zarrxt::array. An executor runs `f(i, worker)` for every
 *  i in [0, n) and returns when all are done, rethrowing the first exception. `worker` is in
 *  [0, concurrency()) and identifies the thread's scratch space.
 *
 *  - `inline_executor` (default): the calling thread does everything. No threads exist.
 *  - `thread_pool` is owned by the caller; `thread_pool_executor` is a cheap handle to one. The
 *    calling thread works too (it is worker 0), so progress never depends on pool threads being
 *    free: a bulk call made while the pool is busy (or from inside a task) runs inline instead of
 *    waiting. A process forked from one that owns a pool runs bulk calls inline: the child has
 *    none of the pool's threads, and never touches the pool's locks.
 *  zarrxt itself starts no thread and keeps no global state.
 */
#pragma once

#include <atomic>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace zarrxt
{

template <class E>
concept executor_policy = std::copy_constructible<E> && requires(const E& e, void (*f)(std::size_t, std::size_t)) {
    {
        e.concurrency()
    } -> std::convertible_to<std::size_t>;
    e.bulk(std::size_t{}, f);
};

class inline_executor
{
public:
    std::size_t concurrency() const noexcept { return 1; }

    template <class F>
    void bulk(std::size_t n, F&& f) const
    {
        for (std::size_t i = 0; i < n; ++i)
        {
            f(i, std::size_t{0});
        }
    }
};

class thread_pool
{
public:
    /// Starts `threads` worker threads (the caller of bulk() is an additional worker).
    explicit thread_pool(std::size_t threads = default_threads())
        : m_pid(::getpid())
    {
        for (std::size_t i = 0; i < threads; ++i)
        {
            m_threads.emplace_back([this, i] { work(i + 1); });
        }
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;

    ~thread_pool()
    {
        if (::getpid() != m_pid)
        {
            // In a forked child the threads do not exist; the vector's thread objects must not be
            // joined. Leaking them is the only safe option.
            for (auto& t : m_threads)
            {
                new (&t) std::thread();
            }
            return;
        }
        {
            std::lock_guard<std::mutex> g(m_mutex);
            m_stop = true;
        }
        m_work.notify_all();
        for (auto& t : m_threads)
        {
            t.join();
        }
    }

    /// Hardware threads minus the caller's, at least 1.
    static std::size_t default_threads() noexcept
    {
        const unsigned h = std::thread::hardware_concurrency();
        return h > 1 ? h - 1 : 1;
    }

    std::size_t concurrency() const noexcept { return m_threads.size() + 1; }

    template <class F>
    void bulk(std::size_t n, F&& f)
    {
        if (n == 0)
        {
            return;
        }
        const auto run_inline = [&] {
            for (std::size_t i = 0; i < n; ++i)
            {
                f(i, std::size_t{0});
            }
        };
        if (n == 1 || m_threads.empty() || ::getpid() != m_pid)
        {
            run_inline();
            return;
        }
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::exception_ptr error;
        std::mutex error_mutex;
        job j;
        j.body = [&](std::size_t worker) {
            while (!failed.load(std::memory_order_relaxed))
            {
                const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
                if (i >= n)
                {
                    break;
                }
                try
                {
                    f(i, worker);
                }
                catch (...)
                {
                    std::lock_guard<std::mutex> g(error_mutex);
                    if (!error)
                    {
                        error = std::current_exception();
                    }
                    failed = true;
                }
            }
        };
        {
            std::lock_guard<std::mutex> g(m_mutex);
            if (m_job != nullptr)
            {
                // Busy (another bulk call, or a nested one from inside a task): run here.
                j.open = false;
            }
            else
            {
                m_job = &j;
                ++m_generation;
            }
        }
        if (!j.open)
        {
            run_inline();
            return;
        }
        m_work.notify_all();
        j.body(0);
        {
            std::unique_lock<std::mutex> lk(m_mutex);
            j.open = false;
            m_done.wait(lk, [&] { return j.running == 0; });
            m_job = nullptr;
        }
        if (error)
        {
            std::rethrow_exception(error);
        }
    }

private:
    struct job
    {
        std::function<void(std::size_t)> body;
        std::size_t running = 0;
        bool open = true;
    };

    void work(std::size_t id)
    {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lk(m_mutex);
        while (true)
        {
            m_work.wait(lk, [&] { return m_stop || (m_job != nullptr && m_generation != seen); });
            if (m_stop)
            {
                return;
            }
            seen = m_generation;
            job* j = m_job;
            if (!j->open)
            {
                continue;
            }
            ++j->running;
            lk.unlock();
            j->body(id);
            lk.lock();
            if (--j->running == 0)
            {
                m_done.notify_all();
            }
        }
    }

    pid_t m_pid;
    std::vector<std::thread> m_threads;
    std::mutex m_mutex;
    std::condition_variable m_work;
    std::condition_variable m_done;
    job* m_job = nullptr;
    std::uint64_t m_generation = 0;
    bool m_stop = false;
};

/// A handle to a caller-owned pool (the pool must outlive every array using it).
class thread_pool_executor
{
public:
    explicit thread_pool_executor(thread_pool& pool) noexcept : m_pool(&pool) {}

    std::size_t concurrency() const noexcept { return m_pool->concurrency(); }

    template <class F>
    void bulk(std::size_t n, F&& f) const
    {
        m_pool->bulk(n, std::forward<F>(f));
    }

private:
    thread_pool* m_pool;
};

} // namespace zarrxt
