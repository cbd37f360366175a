/** @file detail/fresh_memory.hpp
 *  Mapping a large fresh result before a read writes it (read()'s output).
 *
 *  Writing fresh memory costs a page fault per 4 KiB page, and on a virtual machine one fault can
 *  cost several microseconds (100 MB: about 145 ms here). Transparent huge pages make that one
 *  fault per 2 MiB, and numpy asks for them on large arrays. But a huge page is only cheap when
 *  the host still backs the 2 MiB block it comes from: on a VM that hands free blocks back to its
 *  host (virtio free page reporting), memory freed a few seconds earlier comes back at 10-50 ms
 *  per huge page instead of 0.3 ms, ten times slower than 4 KiB pages (bench/fault_probe and
 *  docs/benchmarks.md, "Fresh outputs and huge pages"). Which case a fresh process meets cannot be
 *  known in advance, so it is measured: the memory is mapped 2 MiB at a time with
 *  MADV_POPULATE_WRITE (no fault per page), with huge pages while they cost less than 4 KiB pages
 *  would, and with 4 KiB pages for the rest once they stop paying.
 */
#pragma once

#include "buffer.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <cerrno>
#include <sys/mman.h>
#endif

namespace zarrxt
{
namespace detail
{

/// Keeps or drops huge pages for the rest of a fresh region, one 2 MiB step at a time. A step
/// may cost up to `budget_ns`, about what mapping 2 MiB as 4 KiB pages costs on the slow
/// machines measured (1.1-1.5 ms on the VM above, where a huge page costs 0.2-0.5 ms when the
/// host backs it); savings carry over to later steps up to `max_slack_ns`, so one slow step
/// among fast ones does not give up huge pages, while a run of slow ones (the host taking its
/// time) gives them up after wasting at most the slack and one step.
class huge_page_governor
{
public:
    static constexpr std::uint64_t default_budget_ns = 1'000'000;
    static constexpr std::uint64_t default_max_slack_ns = 8'000'000;

    explicit huge_page_governor(std::uint64_t budget_ns = default_budget_ns,
                                std::uint64_t max_slack_ns = default_max_slack_ns) noexcept
        : m_budget(static_cast<std::int64_t>(budget_ns))
        , m_max_slack(static_cast<std::int64_t>(max_slack_ns))
    {
    }

    /// Account one step mapped with huge pages that took `ns`; false once they no longer pay.
    bool keep(std::uint64_t ns) noexcept
    {
        const auto spent = static_cast<std::int64_t>(std::min<std::uint64_t>(ns, std::uint64_t{1} << 62));
        m_slack = std::min(m_slack + m_budget - spent, m_max_slack);
        return m_slack >= 0;
    }

private:
    std::int64_t m_budget;
    std::int64_t m_max_slack;
    std::int64_t m_slack = 0;
};

/// What prepare_fresh did (for tests and the benchmarks' notes).
struct fresh_report
{
    std::size_t huge_bytes = 0;  ///< mapped with huge-page advice in force
    std::size_t small_bytes = 0; ///< mapped as 4 KiB pages after huge pages stopped paying
    bool advice_only =
        false; ///< the kernel cannot populate (before Linux 5.14): advice given, nothing mapped
};

namespace fresh_detail
{

inline constexpr std::size_t step = huge_page_size;

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#ifdef MADV_POPULATE_WRITE
inline constexpr int populate_write = MADV_POPULATE_WRITE;
#else
inline constexpr int populate_write = 23; // Linux 5.14; older C libraries lack the name
#endif

inline std::uint64_t now_ns() noexcept
{
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

/// Map [begin, end) (2 MiB aligned, huge-page advice already given) step by step; errno of a
/// populate that failed, 0 when all went well.
inline int populate_slab(std::byte* begin, std::byte* end, fresh_report& r) noexcept
{
    huge_page_governor governor;
    for (std::byte* p = begin; p < end; p += step)
    {
        const std::uint64_t t0 = now_ns();
        if (::madvise(p, step, populate_write) != 0)
        {
            return errno;
        }
        r.huge_bytes += step;
        if (!governor.keep(now_ns() - t0) && p + step < end)
        {
            // Huge pages stopped paying: the rest as 4 KiB pages, mapped in one call.
            std::byte* rest = p + step;
            const auto n = static_cast<std::size_t>(end - rest);
            ::madvise(rest, n, MADV_NOHUGEPAGE);
            if (::madvise(rest, n, populate_write) != 0)
            {
                return errno;
            }
            r.small_bytes += n;
            return 0;
        }
    }
    return 0;
}
#endif

} // namespace fresh_detail

/// Prepare [p, p + n), fresh memory that is about to be written in full, so that writing it costs
/// no page faults: its whole 2 MiB pages are mapped now, by `exec`'s workers (a slab each), with
/// huge pages while they pay (huge_page_governor). Below huge_page_threshold, and outside Linux,
/// nothing is done. When the kernel cannot populate, only the huge-page advice is given (as numpy
/// does). A populate that fails otherwise (out of memory) stops preparing; the writes then fault
/// the pages in as they would have without it. The memory's content is unchanged: populating maps
/// the pages a first write would have mapped and leaves pages already mapped (memory malloc reused
/// from its heap) as they are.
template <class Executor>
fresh_report prepare_fresh(void* p, std::size_t n, const Executor& exec) noexcept
{
    fresh_report total;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    using fresh_detail::step;
    // Named copies, not structured bindings: the lambda below captures them (clang before 16
    // cannot capture a binding).
    const auto interior = huge_page_interior(p, n);
    std::byte* const begin = interior.first;
    std::byte* const end = interior.second;
    if (begin == end)
    {
        return total;
    }
    const auto steps = static_cast<std::size_t>(end - begin) / step;
    // One advice call for the whole interior (it takes the address space's lock for writing);
    // the workers then only populate, one slab each.
    ::madvise(begin, static_cast<std::size_t>(end - begin), MADV_HUGEPAGE);
    constexpr std::size_t max_slabs = 64;
    const std::size_t used = std::clamp<std::size_t>(exec.concurrency(), 1, std::min(steps, max_slabs));
    fresh_report reports[max_slabs];
    int errors[max_slabs] = {};
    try
    {
        exec.bulk(used,
                  [&](std::size_t i, std::size_t)
                  {
                      std::byte* b = begin + (steps * i / used) * step;
                      std::byte* e = begin + (steps * (i + 1) / used) * step;
                      errors[i] = fresh_detail::populate_slab(b, e, reports[i]);
                  });
    }
    catch (...)
    {
        // An executor that cannot run the work (it threw before any of it ran) leaves the memory
        // to be faulted in by the writes, with the advice given.
    }
    for (std::size_t i = 0; i < used; ++i)
    {
        total.huge_bytes += reports[i].huge_bytes;
        total.small_bytes += reports[i].small_bytes;
        if (errors[i] == EINVAL && reports[i].huge_bytes == 0)
        {
            total.advice_only = true; // populate is unknown to this kernel
        }
    }
#else
    (void)p;
    (void)n;
    (void)exec;
#endif
    return total;
}

} // namespace detail
} // namespace zarrxt
