/** @file exec/executor_ref.hpp
 *  A non-owning reference to any executor policy. The kernels run through it, so they are compiled
 *  once per rank and codec chain rather than once per executor type; the cost is one indirect call
 *  per bulk call and per task, nothing next to a chunk's I/O and decode.
 */
#pragma once

#include "../detail/function_ref.hpp"
#include "executor.hpp"

#include <cstddef>

namespace zarrxt
{

class executor_ref
{
public:
    using task = detail::function_ref<void(std::size_t, std::size_t)>;

    template <executor_policy E>
    executor_ref(const E& e) noexcept // NOLINT(google-explicit-constructor)
        : m_obj(&e)
        , m_concurrency(e.concurrency())
        , m_bulk([](const void* obj, std::size_t n, task f) { static_cast<const E*>(obj)->bulk(n, f); })
    {
    }

    /// The executor's concurrency when the reference was made (one operation uses one value).
    std::size_t concurrency() const noexcept { return m_concurrency; }

    /// Run f(i, worker) for i in [0, n), as the executor's bulk does.
    template <class F>
    void bulk(std::size_t n, F&& f) const
    {
        m_bulk(m_obj, n, task(f));
    }

private:
    const void* m_obj;
    std::size_t m_concurrency;
    void (*m_bulk)(const void*, std::size_t, task);
};

} // namespace zarrxt
