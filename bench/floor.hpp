// The floor (BENCHMARKS.md, "The floor"): the least work any implementation must do for a read
// or a write, measured in the same process and run as zarrxt's figure.
//
//   read:  open/pread/close exactly the objects and byte ranges the read needs (for a shard: its
//          index, then its touched inner chunks, exactly adjacent ranges merged into one pread),
//          decode each with the best library call (libdeflate for gzip, libzstd for zstd) into
//          one reused buffer, then one memcpy of the output size into a pre-faulted, 64-byte
//          aligned buffer.
//   write: encode every chunk (libzstd / libdeflate) into a reused buffer, then create/write/close
//          each object; a shard is written with one writev of its inner chunks and its index.
//
// Everything the floor allocates is allocated and faulted in by the constructor, outside the
// timing. Nothing here uses zarrxt: a floor computed by the code under test would prove nothing.
#pragma once

#include "common.hpp"

#include <libdeflate.h>
#include <zstd.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace zxb
{

enum class codec_kind
{
    none,
    gzip,
    zstd,
};

inline codec_kind parse_codec(const std::string& s)
{
    if (s == "none" || s == "raw")
    {
        return codec_kind::none;
    }
    if (s == "gzip")
    {
        return codec_kind::gzip;
    }
    if (s == "zstd")
    {
        return codec_kind::zstd;
    }
    fail("unknown codec " + s);
}

/// CRC-32C with the SSE4.2 instruction, the fastest single-stream way on this machine.
#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline std::uint32_t floor_crc32c(const std::byte* p,
                                                                    std::size_t n) noexcept
{
    std::uint64_t c = 0xffffffffu;
    for (; n >= 8; n -= 8, p += 8)
    {
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
    }
    auto c32 = static_cast<std::uint32_t>(c);
    for (; n > 0; --n, ++p)
    {
        c32 = _mm_crc32_u8(c32, static_cast<std::uint8_t>(*p));
    }
    return ~c32;
}
#else
#error "the floor's crc32c uses SSE4.2; port floor_crc32c to this machine"
#endif

inline std::uint64_t load_le64(const std::byte* p) noexcept
{
    std::uint64_t v;
    std::memcpy(&v, p, 8); // x86-64 is little-endian, as Zarr's shard index is
    return v;
}

/// Keeps the compiler from dropping work whose result is never read.
inline void clobber(void* p) noexcept
{
    asm volatile("" : : "g"(p) : "memory");
}

/*********
 * reads *
 *********/

struct read_object
{
    std::string path;
    std::vector<std::uint64_t> inner; ///< sharded: linear indices of the inner chunks needed
};

struct read_plan
{
    codec_kind codec = codec_kind::none;
    bool sharded = false;
    bool index_cached = false;     ///< shard indexes are known already (an index cache hit)
    std::uint64_t chunk_bytes = 0; ///< decoded bytes of one chunk or inner chunk
    std::uint64_t inner_count = 0; ///< inner chunks per shard (index entries)
    std::uint64_t output_bytes = 0;
    std::vector<read_object> objects;

    std::uint64_t index_bytes() const noexcept { return inner_count * 16 + 4; }
};

struct phases
{
    std::uint64_t io_ns = 0;
    std::uint64_t decode_ns = 0;
    std::uint64_t copy_ns = 0;
};

class read_floor
{
public:
    explicit read_floor(read_plan plan)
        : m_plan(std::move(plan))
    {
        std::uint64_t largest = 0;
        for (const auto& o : m_plan.objects)
        {
            struct ::stat st; // filled by (f)stat
            if (::stat(o.path.c_str(), &st) != 0)
            {
                fail("floor: cannot stat " + o.path);
            }
            largest = std::max<std::uint64_t>(largest, static_cast<std::uint64_t>(st.st_size));
        }
        m_read.reset(largest + 64);
        m_decoded.reset(m_plan.chunk_bytes);
        m_staging.reset(m_plan.output_bytes);
        m_out.reset(m_plan.output_bytes);
        if (m_plan.sharded)
        {
            m_index.reset(m_plan.index_bytes());
            m_entries.reserve(m_plan.inner_count);
        }
        m_inflate = libdeflate_alloc_decompressor();
        m_zstd = ZSTD_createDCtx();
        if (m_plan.index_cached)
        {
            // What an index cache holds: the parsed entries of every shard, read before timing.
            for (const auto& o : m_plan.objects)
            {
                const int fd = ::open(o.path.c_str(), O_RDONLY | O_CLOEXEC);
                load_index(fd, o);
                ::close(fd);
                m_cached.push_back(m_entries);
            }
        }
    }
    ~read_floor()
    {
        libdeflate_free_decompressor(m_inflate);
        ZSTD_freeDCtx(m_zstd);
    }
    read_floor(const read_floor&) = delete;
    read_floor& operator=(const read_floor&) = delete;

    /// One timed pass; `ph` (optional) receives a per-phase breakdown at the price of clock reads.
    std::uint64_t run(phases* ph = nullptr)
    {
        const std::uint64_t t0 = now_ns();
        std::uint64_t io = 0;
        std::uint64_t dec = 0;
        for (std::size_t i = 0; i < m_plan.objects.size(); ++i)
        {
            const auto& o = m_plan.objects[i];
            std::uint64_t a = ph ? now_ns() : 0;
            const int fd = ::open(o.path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0)
            {
                fail("floor: cannot open " + o.path);
            }
            if (!m_plan.sharded)
            {
                const ssize_t n = ::pread(fd, m_read.data(), m_read.size(), 0);
                ::close(fd);
                if (n <= 0)
                {
                    fail("floor: cannot read " + o.path);
                }
                if (ph)
                {
                    const std::uint64_t b = now_ns();
                    io += b - a;
                    a = b;
                }
                decode(m_read.data(), static_cast<std::size_t>(n));
                if (ph)
                {
                    dec += now_ns() - a;
                }
                continue;
            }
            if (m_plan.index_cached)
            {
                m_entries = m_cached[i];
            }
            else
            {
                load_index(fd, o); // pread + crc32c + parse
            }
            if (ph)
            {
                io += now_ns() - a;
            }
            // Ranges in file order; exactly adjacent ones become one pread.
            std::size_t k = 0;
            while (k < m_entries.size())
            {
                std::size_t j = k;
                std::uint64_t end = m_entries[k].first + m_entries[k].second;
                while (j + 1 < m_entries.size() && m_entries[j + 1].first == end)
                {
                    ++j;
                    end += m_entries[j].second;
                }
                const std::uint64_t begin = m_entries[k].first;
                a = ph ? now_ns() : 0;
                if (!pread_all(fd, m_read.data(), end - begin, begin))
                {
                    fail("floor: short read of " + o.path);
                }
                std::uint64_t b = ph ? now_ns() : 0;
                for (std::size_t q = k; q <= j; ++q)
                {
                    decode(m_read.data() + (m_entries[q].first - begin),
                           static_cast<std::size_t>(m_entries[q].second));
                }
                if (ph)
                {
                    io += b - a;
                    dec += now_ns() - b;
                }
                k = j + 1;
            }
            const std::uint64_t c = ph ? now_ns() : 0;
            ::close(fd);
            if (ph)
            {
                io += now_ns() - c;
            }
        }
        const std::uint64_t c0 = ph ? now_ns() : 0;
        std::memcpy(m_out.data(), m_staging.data(), m_plan.output_bytes);
        clobber(m_out.data());
        const std::uint64_t t1 = now_ns();
        if (ph)
        {
            ph->io_ns = io;
            ph->decode_ns = dec;
            ph->copy_ns = t1 - c0;
        }
        return t1 - t0;
    }

    const read_plan& plan() const noexcept { return m_plan; }

private:
    static bool pread_all(int fd, std::byte* dst, std::uint64_t n, std::uint64_t off)
    {
        while (n > 0)
        {
            const ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(off));
            if (r <= 0)
            {
                return false;
            }
            dst += r;
            n -= static_cast<std::uint64_t>(r);
            off += static_cast<std::uint64_t>(r);
        }
        return true;
    }

    void load_index(int fd, const read_object& o)
    {
        struct ::stat st; // filled by (f)stat
        if (fd < 0 || ::fstat(fd, &st) != 0)
        {
            fail("floor: cannot open " + o.path);
        }
        const std::uint64_t n = m_plan.index_bytes();
        const auto size = static_cast<std::uint64_t>(st.st_size);
        if (size < n || !pread_all(fd, m_index.data(), n, size - n))
        {
            fail("floor: cannot read the index of " + o.path);
        }
        std::uint32_t stored;
        std::memcpy(&stored, m_index.data() + n - 4, 4);
        if (floor_crc32c(m_index.data(), n - 4) != stored)
        {
            fail("floor: index checksum mismatch in " + o.path);
        }
        m_entries.clear();
        for (auto linear : o.inner)
        {
            const std::byte* e = m_index.data() + 16 * linear;
            m_entries.emplace_back(load_le64(e), load_le64(e + 8));
        }
        std::sort(m_entries.begin(), m_entries.end());
    }

    void decode(const std::byte* in, std::size_t n)
    {
        const std::size_t want = m_plan.chunk_bytes;
        switch (m_plan.codec)
        {
            case codec_kind::none:
                if (n != want)
                {
                    fail("floor: raw chunk has " + std::to_string(n) + " bytes");
                }
                clobber(const_cast<std::byte*>(in));
                return;
            case codec_kind::gzip:
            {
                std::size_t got = 0;
                if (libdeflate_gzip_decompress(m_inflate, in, n, m_decoded.data(), want, &got) !=
                        LIBDEFLATE_SUCCESS ||
                    got != want)
                {
                    fail("floor: gzip chunk does not decode to " + std::to_string(want) + " bytes");
                }
                break;
            }
            case codec_kind::zstd:
                if (ZSTD_decompressDCtx(m_zstd, m_decoded.data(), want, in, n) != want)
                {
                    fail("floor: zstd chunk does not decode to " + std::to_string(want) + " bytes");
                }
                break;
        }
        clobber(m_decoded.data());
    }

    read_plan m_plan;
    prefaulted m_read;
    prefaulted m_decoded;
    prefaulted m_staging;
    prefaulted m_out;
    prefaulted m_index;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> m_entries;
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> m_cached;
    libdeflate_decompressor* m_inflate = nullptr;
    ZSTD_DCtx* m_zstd = nullptr;
};

/**********
 * writes *
 **********/

/// A 1-d array written whole: `chunks` chunks of `chunk_bytes`, grouped `per_shard` to a shard
/// (per_shard == 0: not sharded). Keys follow the v3 default encoding: c/<i>.
struct write_plan
{
    codec_kind codec = codec_kind::none;
    int level = 0;
    std::uint64_t chunk_bytes = 0;
    std::uint64_t chunks = 0;
    std::uint64_t per_shard = 0;
    std::string dir; ///< created by the floor (must not exist)
};

class write_floor
{
public:
    explicit write_floor(write_plan plan)
        : m_plan(std::move(plan))
    {
        const std::uint64_t per = std::max<std::uint64_t>(m_plan.per_shard, 1);
        const std::uint64_t bound = ZSTD_compressBound(m_plan.chunk_bytes);
        m_encoded.reset(per * bound + per * 16 + 4 + 64);
        m_entries.resize(2 * per);
        m_iov.resize(per + 1);
        m_zstd = ZSTD_createCCtx();
    }
    ~write_floor() { ZSTD_freeCCtx(m_zstd); }
    write_floor(const write_floor&) = delete;
    write_floor& operator=(const write_floor&) = delete;

    /// Writes `src` (chunks * chunk_bytes bytes); returns the elapsed ns and the stored bytes.
    std::uint64_t run(const std::byte* src, std::uint64_t& stored)
    {
        stored = 0;
        const std::uint64_t t0 = now_ns();
        std::filesystem::create_directories(m_plan.dir + "/c");
        const bool sharded = m_plan.per_shard != 0;
        const std::uint64_t objects = sharded ? m_plan.chunks / m_plan.per_shard : m_plan.chunks;
        const std::uint64_t per = sharded ? m_plan.per_shard : 1;
        for (std::uint64_t obj = 0; obj < objects; ++obj)
        {
            std::size_t niov = 0;
            std::uint64_t pos = 0;
            std::byte* enc = m_encoded.data();
            for (std::uint64_t k = 0; k < per; ++k)
            {
                const std::byte* chunk = src + (obj * per + k) * m_plan.chunk_bytes;
                std::size_t n = m_plan.chunk_bytes;
                if (m_plan.codec == codec_kind::none)
                {
                    m_iov[niov++] = {const_cast<std::byte*>(chunk), n};
                }
                else
                {
                    n = encode(chunk, enc);
                    m_iov[niov++] = {enc, n};
                    enc += n;
                }
                m_entries[2 * k] = pos;
                m_entries[2 * k + 1] = n;
                pos += n;
            }
            if (sharded)
            {
                std::byte* index = enc;
                std::memcpy(index, m_entries.data(), per * 16);
                const std::uint32_t crc = floor_crc32c(index, per * 16);
                std::memcpy(index + per * 16, &crc, 4);
                m_iov[niov++] = {index, per * 16 + 4};
                pos += per * 16 + 4;
            }
            const std::string path = m_plan.dir + "/c/" + std::to_string(obj);
            const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd < 0)
            {
                fail("floor: cannot create " + path);
            }
            write_all(fd, niov, pos);
            ::close(fd);
            stored += pos;
        }
        return now_ns() - t0;
    }

private:
    std::size_t encode(const std::byte* in, std::byte* out)
    {
        const std::size_t cap = ZSTD_compressBound(m_plan.chunk_bytes);
        const std::size_t n = ZSTD_compressCCtx(m_zstd, out, cap, in, m_plan.chunk_bytes, m_plan.level);
        if (ZSTD_isError(n))
        {
            fail("floor: zstd compression failed");
        }
        return n;
    }

    void write_all(int fd, std::size_t niov, std::uint64_t total)
    {
        // writev takes at most IOV_MAX (1024) pieces; larger shards go in several calls.
        std::size_t first = 0;
        std::uint64_t done = 0;
        while (done < total)
        {
            const int count = static_cast<int>(std::min<std::size_t>(niov - first, 1024));
            const ssize_t w = ::writev(fd, m_iov.data() + first, count);
            if (w <= 0)
            {
                fail("floor: write failed");
            }
            done += static_cast<std::uint64_t>(w);
            // Skip the pieces written completely; trim a partly written one.
            auto left = static_cast<std::size_t>(w);
            while (first < niov && left >= m_iov[first].iov_len)
            {
                left -= m_iov[first].iov_len;
                ++first;
            }
            if (left > 0)
            {
                m_iov[first].iov_base = static_cast<std::byte*>(m_iov[first].iov_base) + left;
                m_iov[first].iov_len -= left;
            }
        }
    }

    write_plan m_plan;
    prefaulted m_encoded;
    std::vector<std::uint64_t> m_entries;
    std::vector<iovec> m_iov;
    ZSTD_CCtx* m_zstd = nullptr;
};

/// Time to write `n` bytes of freshly mapped memory once: the page-fault cost of a new output.
inline std::uint64_t fault_in_ns(std::size_t n)
{
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
    {
        fail("mmap failed");
    }
    const std::uint64_t t0 = now_ns();
    std::memset(p, 1, n);
    clobber(p);
    const std::uint64_t t1 = now_ns();
    ::munmap(p, n);
    return t1 - t0;
}

/*******************
 * memory bandwidth *
 *******************/

/// Best memcpy throughput (bytes/s) of `threads` threads each copying its share of `bytes`.
inline double memcpy_bandwidth(unsigned threads, std::size_t bytes, int repeats)
{
    prefaulted src(bytes);
    prefaulted dst(bytes);
    double best = 0;
    for (int r = 0; r < repeats; ++r)
    {
        const std::size_t share = bytes / threads / 64 * 64;
        const std::uint64_t t0 = now_ns();
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t)
        {
            pool.emplace_back([&, t] { std::memcpy(dst.data() + t * share, src.data() + t * share, share); });
        }
        std::memcpy(dst.data(), src.data(), share);
        for (auto& th : pool)
        {
            th.join();
        }
        const std::uint64_t t1 = now_ns();
        clobber(dst.data());
        best = std::max(best, static_cast<double>(share * threads) / (static_cast<double>(t1 - t0) * 1e-9));
    }
    return best;
}

} // namespace zxb
