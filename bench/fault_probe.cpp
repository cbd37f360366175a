// fault_probe: what the first touch of a fresh output buffer costs on this machine, three ways,
// interleaved in one process so that they meet the same machine state:
//   plain      mmap, then write every byte (one page fault per 4 KiB page)
//   hugepage   mmap, madvise(MADV_HUGEPAGE) on the aligned interior, then write (what read() and
//              numpy do for large fresh arrays: one fault per 2 MiB page)
//   populate   mmap, madvise(MADV_POPULATE_WRITE) (Linux 5.14), then write (the kernel maps every
//              page in one call, no fault per page)
// It prints the deciles of each in ms. Of zarrxt it uses only the huge-page advice itself
// (detail/buffer.hpp), so it separates the machine's cost of fresh memory from the library's
// (docs/benchmarks.md, "Fresh outputs and huge pages"). Below 4 MiB that advice gives none.
//
//   fault_probe [TRIALS [BYTES [PAUSE_MS]]]   default 30 trials of 100,000,000 bytes, no pause
//
// PAUSE_MS sleeps before every buffer: memory the process gave back a moment ago is still mapped
// in the host of a virtual machine, while memory freed seconds ago may have been handed back to
// the host (virtio free page reporting) and costs host faults again, as a fresh process meets it.
#include <zarrxt/detail/buffer.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // linux/mman.h of 5.14; older C libraries lack the name
#endif

namespace
{

double now_ms()
{
    using clock = std::chrono::steady_clock;
    return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

enum class way
{
    plain,
    hugepage,
    populate
};

// One fresh buffer of n bytes, prepared one way and written once; its wall time in ms.
double touch_once(std::size_t n, way w)
{
    const double t0 = now_ms();
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
    {
        std::perror("mmap");
        std::exit(1);
    }
    if (w == way::hugepage)
    {
        zarrxt::detail::advise_huge_pages(p, n); // exactly the advice read() gives its result
    }
    else if (w == way::populate && ::madvise(p, n, MADV_POPULATE_WRITE) != 0)
    {
        std::perror("madvise(MADV_POPULATE_WRITE)");
        std::exit(1);
    }
    std::memset(p, 1, n);
    // Keep the writes: the compiler must not drop a memset of memory that is unmapped next.
    asm volatile("" : : "r"(p) : "memory");
    const double t1 = now_ms();
    ::munmap(p, n);
    return t1 - t0;
}

} // namespace

int main(int argc, char** argv)
{
    const int trials = argc > 1 ? std::atoi(argv[1]) : 30;
    const std::size_t n = argc > 2 ? std::stoull(argv[2]) : std::size_t{100000000};
    const int pause_ms = argc > 3 ? std::atoi(argv[3]) : 0;
    if (trials < 1 || n == 0 || pause_ms < 0)
    {
        std::fprintf(stderr, "usage: fault_probe [TRIALS [BYTES [PAUSE_MS]]]\n");
        return 2;
    }
    constexpr std::array ways{way::plain, way::hugepage, way::populate};
    constexpr std::array names{"plain", "hugepage", "populate"};
    std::array<std::vector<double>, 3> ms;
    for (int t = 0; t < trials; ++t)
    {
        for (std::size_t i = 0; i < ways.size(); ++i)
        {
            std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
            ms[i].push_back(touch_once(n, ways[i]));
        }
    }
    std::printf("%d trials of %zu bytes, %d ms pause, ms: min, deciles 10-90, max\n", trials, n, pause_ms);
    for (std::size_t i = 0; i < ways.size(); ++i)
    {
        auto& v = ms[i];
        std::sort(v.begin(), v.end());
        std::printf("%-9s", names[i]);
        for (int d = 0; d <= 10; ++d)
        {
            const std::size_t k = std::min(v.size() - 1, v.size() * static_cast<std::size_t>(d) / 10);
            std::printf(" %7.1f", d == 10 ? v.back() : v[k]);
        }
        std::printf("\n");
    }
    return 0;
}
