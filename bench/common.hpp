// Shared pieces of the benchmark programs (seed_reads, w2, bench_micro): clocks, memory
// measurements, pre-faulted buffers, the W1 and W2 value formulas, digests and a tiny argument
// parser. Kept free of zarrxt headers so the floor code that includes it stays independent of
// the library it is a floor for.
#pragma once

#include "sha256.hpp" // tools/sha256.hpp: the project's own SHA-256 (FIPS 180-4)

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace zxb
{

using json = nlohmann::json;

inline std::uint64_t now_ns() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Peak resident set of this process image (VmHWM in /proc/self/status).
///
/// Not getrusage's ru_maxrss: on Linux that value survives fork and exec, so a trial started by a
/// large parent (the Python harness has numpy loaded) would report the parent's peak, not its own.
/// VmHWM belongs to the address space the trial's exec created, so it is the trial's own.
inline std::uint64_t peak_rss_bytes()
{
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
    {
        if (line.rfind("VmHWM:", 0) == 0)
        {
            return std::stoull(line.substr(6)) * 1024u; // "VmHWM:   1234 kB"
        }
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru); // no /proc: the best there is
    return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024u;
}

/// Resident set right now (second field of /proc/self/statm, in pages).
inline std::uint64_t current_rss_bytes()
{
    std::ifstream f("/proc/self/statm");
    std::uint64_t size = 0;
    std::uint64_t resident = 0;
    f >> size >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

[[noreturn]] inline void fail(const std::string& msg)
{
    std::fprintf(stderr, "bench: %s\n", msg.c_str());
    std::exit(1);
}

/// 64-byte aligned memory, written once at allocation so no page fault lands inside a timing.
class prefaulted
{
public:
    prefaulted() = default;
    explicit prefaulted(std::size_t n) { reset(n); }
    prefaulted(const prefaulted&) = delete;
    prefaulted& operator=(const prefaulted&) = delete;
    ~prefaulted() { release(); }

    void reset(std::size_t n)
    {
        release();
        m_size = n;
        m_data = static_cast<std::byte*>(::operator new (std::max<std::size_t>(n, 64), std::align_val_t{64}));
        std::memset(m_data, 0x5a, n);
    }
    /// Grow (never shrink) and fault in the new capacity.
    void reserve(std::size_t n)
    {
        if (n > m_size)
        {
            reset(n);
        }
    }
    std::byte* data() noexcept { return m_data; }
    const std::byte* data() const noexcept { return m_data; }
    std::size_t size() const noexcept { return m_size; }

private:
    void release() noexcept
    {
        if (m_data != nullptr)
        {
            ::operator delete (m_data, std::align_val_t{64});
            m_data = nullptr;
        }
    }
    std::byte* m_data = nullptr;
    std::size_t m_size = 0;
};

inline std::string sha256_hex(const void* data, std::size_t n)
{
    zarrxt_tool::sha256 h;
    h.update(data, n);
    return zarrxt_tool::sha256::hex(h.finish());
}

/// read syscalls and bytes of this process so far (/proc/self/io: syscr, rchar).
struct io_counts
{
    std::uint64_t syscr = 0;
    std::uint64_t rchar = 0;
};

io_counts proc_io_raw()
{
    std::ifstream f("/proc/self/io");
    io_counts c;
    std::string k;
    std::uint64_t v = 0;
    while (f >> k >> v)
    {
        if (k == "syscr:")
        {
            c.syscr = v;
        }
        else if (k == "rchar:")
        {
            c.rchar = v;
        }
    }
    return c;
}

/// As proc_io_raw, minus the read calls and bytes that reading /proc/self/io itself costs, so
/// that the difference of two calls counts only the work between them.
io_counts proc_io()
{
    static const io_counts self_cost = []
    {
        const io_counts a = proc_io_raw();
        const io_counts b = proc_io_raw();
        return io_counts{b.syscr - a.syscr, b.rchar - a.rchar};
    }();
    io_counts c = proc_io_raw();
    static std::uint64_t calls = 0;
    ++calls;
    c.syscr -= calls * self_cost.syscr;
    c.rchar -= calls * self_cost.rchar;
    return c;
}

/*****************
 * W1: 2-d uint16 *
 *****************/

/// The W1 value of element (row, col): (row * 17 + col * 31) % 65521 + 1, never the fill value 0.
inline std::uint16_t w1_value(std::uint64_t row, std::uint64_t col) noexcept
{
    return static_cast<std::uint16_t>((row * 17 + col * 31) % 65521 + 1);
}

/// Index of the first element of a C-ordered box that differs from the formula, or -1.
inline std::int64_t w1_first_mismatch(const std::uint16_t* v, std::uint64_t r0, std::uint64_t c0,
                                      std::uint64_t rows, std::uint64_t cols) noexcept
{
    for (std::uint64_t r = 0; r < rows; ++r)
    {
        // Incremental form of the formula: one add and a conditional subtract per element.
        std::uint64_t x = ((r0 + r) * 17 + c0 * 31) % 65521;
        const std::uint16_t* row = v + r * cols;
        for (std::uint64_t c = 0; c < cols; ++c)
        {
            if (row[c] != x + 1)
            {
                return static_cast<std::int64_t>(r * cols + c);
            }
            x += 31;
            if (x >= 65521)
            {
                x -= 65521;
            }
        }
    }
    return -1;
}

/******************
 * W2: 1-d uint8   *
 ******************/

/// murmur3's 32-bit finaliser: a counter-based generator, so any element is computable alone
/// (the Python writer and the JavaScript reader evaluate the same function vectorised).
constexpr std::uint32_t fmix32(std::uint32_t h) noexcept
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

inline constexpr std::uint32_t w2_seed = 12345;

/// 256 samples of a sine of amplitude 50 around 128, rounded half up.
inline std::array<std::uint8_t, 256> w2_sine_table()
{
    std::array<std::uint8_t, 256> t{};
    for (int j = 0; j < 256; ++j)
    {
        t[static_cast<std::size_t>(j)] =
            static_cast<std::uint8_t>(std::floor(128.5 + 50.0 * std::sin(2.0 * M_PI * j / 256.0)));
    }
    return t;
}

/// semi_random element i: sine sample (i mod 256) plus noise in {-1, 0, 1}.
inline std::uint8_t w2_semi_random(const std::array<std::uint8_t, 256>& sine, std::uint64_t i) noexcept
{
    const std::uint32_t noise = fmix32(static_cast<std::uint32_t>(i) + w2_seed) % 3u;
    return static_cast<std::uint8_t>(sine[i & 255u] + noise - 1u);
}

/// Fill [first, first + n) of a W2 data set ("repeated" is all ones).
inline void w2_fill(bool semi_random, std::uint64_t first, std::uint8_t* out, std::uint64_t n)
{
    if (!semi_random)
    {
        std::memset(out, 1, n);
        return;
    }
    const auto sine = w2_sine_table();
    for (std::uint64_t k = 0; k < n; ++k)
    {
        out[k] = w2_semi_random(sine, first + k);
    }
}

/// Index of the first element of [first, first + n) that differs from the data set, or -1.
inline std::int64_t w2_first_mismatch(bool semi_random, std::uint64_t first, const std::uint8_t* v,
                                      std::uint64_t n)
{
    const auto sine = w2_sine_table();
    for (std::uint64_t k = 0; k < n; ++k)
    {
        const std::uint8_t want = semi_random ? w2_semi_random(sine, first + k) : std::uint8_t{1};
        if (v[k] != want)
        {
            return static_cast<std::int64_t>(k);
        }
    }
    return -1;
}

/*************
 * arguments *
 *************/

/// `--key value` pairs and bare `--flag`s.
class args
{
public:
    args(int argc, char** argv)
    {
        for (int i = 1; i < argc; ++i)
        {
            std::string k = argv[i];
            if (k.rfind("--", 0) != 0)
            {
                fail("unexpected argument " + k);
            }
            k = k.substr(2);
            // A bare flag reads as "1".
            const bool valued = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
            std::string v(valued ? argv[++i] : "1");
            m_values.insert_or_assign(std::move(k), std::move(v));
        }
    }
    bool has(const std::string& k) const { return m_values.count(k) != 0; }
    std::string str(const std::string& k, const std::string& def = "") const
    {
        auto it = m_values.find(k);
        if (it == m_values.end())
        {
            if (def.empty())
            {
                fail("missing --" + k);
            }
            return def;
        }
        return it->second;
    }
    std::uint64_t num(const std::string& k, std::uint64_t def = ~0ull) const
    {
        auto it = m_values.find(k);
        if (it == m_values.end())
        {
            if (def == ~0ull)
            {
                fail("missing --" + k);
            }
            return def;
        }
        // Accept 1e8-style counts as well as plain integers.
        return static_cast<std::uint64_t>(std::llround(std::stod(it->second)));
    }

private:
    std::map<std::string, std::string> m_values;
};

} // namespace zxb
