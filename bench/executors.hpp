// The executor of a benchmark trial: inline for one thread, else a pool of P - 1 threads beside
// the calling one. Shared by w2 and remote (seed_reads picks its own, with its index caches).
#pragma once

#include "common.hpp"

#include <zarrxt/zarrxt.hpp>

namespace zxb
{

/// f(executor) with the executor of `threads` workers; returns what f returns.
template <class F>
json with_executor(unsigned threads, F&& f)
{
    if (threads <= 1)
    {
        return f(zarrxt::inline_executor{});
    }
    zarrxt::thread_pool pool(threads - 1); // the calling thread is the other worker
    return f(zarrxt::thread_pool_executor(pool));
}

} // namespace zxb
