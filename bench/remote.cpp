// The remote-store benchmarks of issue 12 (bench/README.md, "Remote stores"): one trial per
// process, printed as one JSON object on the last line.
//
//   remote w1   --url BASE --array NAME --extent E [--threads P]
//   remote seed --store latency --op read|write --layout a|b|c|v2 --dir DIR --name NAME [--threads P]
//   [--delay-ms 30] remote seed --store http --op read --layout a|b|c|v2 --url BASE --name NAME [--threads P]
//   [--delay-ms 30] remote rps  --url BASE --key KEY --size 4096 --count N (w1, seed over http and rps also
//   take --connections C and --max-requests R: http_options' max_connections and max_concurrent_requests; the
//   defaults when absent. The floor opens as many connections as zarrxt may. w1 and seed over http
//   take --driver 1: a thread of the benchmark's own drives the store, http_store::drive.)
//
// w1: the E x E region at [7, 11] of a W1 array served over HTTP (http_store), every value
// checked against the formula and hashed; then its floor in the same process: libcurl's multi
// interface fetching exactly the objects and ranges the read needs (a shard: its index by a
// suffix request, then its touched inner chunks, exactly adjacent ones merged; a shard needed
// whole: one GET), all in flight at once, each decoded with the raw library as it arrives, then one memcpy of
// the output. seed: a whole W2 array (1e8 uint8, zstd) read or written over a store 30 ms away: a
// latency_store over a memory_store holding the array's files (loaded before the timing), or
// http_store through a proxy that delays every request. The latency floor is one round trip
// (every object requested whole at once, a shard's index with it) plus the local floor's decode
// (or encode) divided by the threads. The HTTP floor is
// the libcurl floor above on the same objects.
// rps: 4 KiB ranges of one object through one handle (read_ranges: one batch), ranges at
// (i * size) mod (object size - size) for i < N.
#include "executors.hpp"
#include "plans.hpp"

#include <zarrxt/store/http.hpp>
#include <zarrxt/store/latency.hpp>
#include <zarrxt/store/memory.hpp>
#include <zarrxt/zarrxt.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// The libcurl floor of a read plan whose paths are URLs (see the file comment).
class curl_floor
{
public:
    curl_floor(zxb::read_plan plan, long max_connections)
        : m_plan(std::move(plan))
    {
        m_multi = curl_multi_init();
        curl_multi_setopt(m_multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max_connections);
        curl_multi_setopt(m_multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_connections);
        curl_multi_setopt(m_multi, CURLMOPT_MAXCONNECTS, max_connections);
        m_decoded.reset(m_plan.chunk_bytes);
        m_staging.reset(m_plan.output_bytes);
        m_out.reset(m_plan.output_bytes);
        m_inflate = libdeflate_alloc_decompressor();
        m_zstd = ZSTD_createDCtx();
    }
    ~curl_floor()
    {
        curl_multi_cleanup(m_multi);
        libdeflate_free_decompressor(m_inflate);
        ZSTD_freeDCtx(m_zstd);
    }
    curl_floor(const curl_floor&) = delete;
    curl_floor& operator=(const curl_floor&) = delete;

    /// One pass; `decode` false: fetch only (the network part of the floor). Returns ns.
    std::uint64_t run(bool decode)
    {
        m_decode = decode;
        m_requests = 0;
        const std::uint64_t t0 = zxb::now_ns();
        for (std::size_t i = 0; i < m_plan.objects.size(); ++i)
        {
            if (m_plan.sharded && m_plan.objects[i].inner.size() < m_plan.inner_count)
            {
                add("bytes=-" + std::to_string(m_plan.index_bytes()), i, true, 0, 0);
            }
            else
            {
                add({}, i, false, 0, 0); // a chunk, or a shard all of whose inner chunks are needed
            }
        }
        // Until every transfer is finished and taken: a transfer that ends in one perform call
        // is read from info_read after it (running alone would miss it).
        while (!m_transfers.empty())
        {
            int running = 0;
            curl_multi_perform(m_multi, &running);
            int left = 0;
            while (CURLMsg* msg = curl_multi_info_read(m_multi, &left))
            {
                if (msg->msg == CURLMSG_DONE)
                {
                    finish(msg->easy_handle, msg->data.result);
                }
            }
            if (running > 0)
            {
                curl_multi_poll(m_multi, nullptr, 0, 1000, nullptr);
            }
        }
        if (!m_transfers.empty())
        {
            zxb::fail("floor: transfers left over");
        }
        std::memcpy(m_out.data(), m_staging.data(), m_plan.output_bytes);
        zxb::clobber(m_out.data());
        return zxb::now_ns() - t0;
    }
    std::uint64_t requests() const noexcept { return m_requests; }

private:
    struct transfer
    {
        std::size_t object;
        bool index;
        std::uint64_t begin; ///< a payload range: its first byte and the entries it holds
        std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;
        std::string body;
    };

    static std::size_t on_body(char* p, std::size_t s, std::size_t n, void* self)
    {
        static_cast<transfer*>(self)->body.append(p, s * n);
        return s * n;
    }

    void add(const std::string& range, std::size_t object, bool index, std::uint64_t begin,
             std::vector<std::pair<std::uint64_t, std::uint64_t>>* entries)
    {
        auto t = std::make_unique<transfer>();
        t->object = object;
        t->index = index;
        t->begin = begin;
        if (entries != nullptr)
        {
            t->entries = std::move(*entries);
        }
        t->body.reserve(index ? m_plan.index_bytes() : std::size_t{1} << 16);
        CURL* e = curl_easy_init();
        curl_easy_setopt(e, CURLOPT_URL, m_plan.objects[object].path.c_str());
        if (!range.empty())
        {
            curl_easy_setopt(e, CURLOPT_RANGE, range.substr(6).c_str()); // "bytes=" is libcurl's
        }
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &curl_floor::on_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
        curl_easy_setopt(e, CURLOPT_PRIVATE, t.get());
        curl_multi_add_handle(m_multi, e);
        ++m_requests;
        m_transfers.emplace(e, std::move(t));
    }

    void finish(CURL* e, CURLcode code)
    {
        long status = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(m_multi, e);
        curl_easy_cleanup(e);
        auto node = m_transfers.extract(e);
        transfer& t = *node.mapped();
        const std::string& url = m_plan.objects[t.object].path;
        if (code != CURLE_OK || (status != 200 && status != 206))
        {
            zxb::fail("floor: " + url + ": " + curl_easy_strerror(code) + ", HTTP " + std::to_string(status));
        }
        const auto* bytes = reinterpret_cast<const std::byte*>(t.body.data());
        if (!m_plan.sharded)
        {
            decode(bytes, t.body.size());
            return;
        }
        const bool whole = !t.index && t.entries.empty(); // a whole shard: its index is at its end
        if (t.index || whole)
        {
            const std::uint64_t n = m_plan.index_bytes();
            if (t.body.size() < n || (t.index && t.body.size() != n))
            {
                zxb::fail("floor: the index of " + url + " has " + std::to_string(t.body.size()) + " bytes");
            }
            const std::byte* index = bytes + (t.body.size() - n);
            std::uint32_t stored;
            std::memcpy(&stored, index + n - 4, 4);
            if (zxb::floor_crc32c(index, n - 4) != stored)
            {
                zxb::fail("floor: index checksum mismatch in " + url);
            }
            std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;
            for (auto linear : m_plan.objects[t.object].inner)
            {
                const std::byte* p = index + 16 * linear;
                entries.emplace_back(zxb::load_le64(p), zxb::load_le64(p + 8));
            }
            std::sort(entries.begin(), entries.end());
            if (whole)
            {
                for (const auto& [off, len] : entries)
                {
                    if (off + len > t.body.size())
                    {
                        zxb::fail("floor: an inner chunk of " + url + " lies outside it");
                    }
                    decode(bytes + off, static_cast<std::size_t>(len));
                }
                return;
            }
            // Exactly adjacent ranges are one request (as the local floor's preads).
            std::size_t k = 0;
            while (k < entries.size())
            {
                std::size_t j = k;
                std::uint64_t end = entries[k].first + entries[k].second;
                while (j + 1 < entries.size() && entries[j + 1].first == end)
                {
                    ++j;
                    end += entries[j].second;
                }
                std::vector<std::pair<std::uint64_t, std::uint64_t>> part(
                    entries.begin() + static_cast<std::ptrdiff_t>(k),
                    entries.begin() + static_cast<std::ptrdiff_t>(j + 1));
                add("bytes=" + std::to_string(entries[k].first) + "-" + std::to_string(end - 1), t.object,
                    false, entries[k].first, &part);
                k = j + 1;
            }
            return;
        }
        for (const auto& [off, len] : t.entries)
        {
            if (off - t.begin + len > t.body.size())
            {
                zxb::fail("floor: short range of " + url);
            }
            decode(bytes + (off - t.begin), static_cast<std::size_t>(len));
        }
    }

    void decode(const std::byte* in, std::size_t n)
    {
        if (!m_decode)
        {
            return;
        }
        const std::size_t want = m_plan.chunk_bytes;
        switch (m_plan.codec)
        {
            case zxb::codec_kind::none:
                if (n != want)
                {
                    zxb::fail("floor: raw chunk has " + std::to_string(n) + " bytes");
                }
                return;
            case zxb::codec_kind::gzip:
            {
                std::size_t got = 0;
                if (libdeflate_gzip_decompress(m_inflate, in, n, m_decoded.data(), want, &got) !=
                        LIBDEFLATE_SUCCESS ||
                    got != want)
                {
                    zxb::fail("floor: gzip chunk does not decode");
                }
                break;
            }
            case zxb::codec_kind::zstd:
                if (ZSTD_decompressDCtx(m_zstd, m_decoded.data(), want, in, n) != want)
                {
                    zxb::fail("floor: zstd chunk does not decode");
                }
                break;
        }
        zxb::clobber(m_decoded.data());
    }

    zxb::read_plan m_plan;
    CURLM* m_multi = nullptr;
    std::map<CURL*, std::unique_ptr<transfer>> m_transfers;
    zxb::prefaulted m_decoded;
    zxb::prefaulted m_staging;
    zxb::prefaulted m_out;
    libdeflate_decompressor* m_inflate = nullptr;
    ZSTD_DCtx* m_zstd = nullptr;
    bool m_decode = true;
    std::uint64_t m_requests = 0;
};

/// GET of a delay proxy's control path (bench/peers/delay_proxy.mjs): "reset" or "stats".
std::string proxy_control(const std::string& base, const std::string& what)
{
    std::string body;
    CURL* e = curl_easy_init();
    const std::string url = base + "/__zx/" + what;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(
        e, CURLOPT_WRITEFUNCTION,
        +[](char* p, std::size_t s, std::size_t n, void* out)
        {
            static_cast<std::string*>(out)->append(p, s * n);
            return s * n;
        });
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &body);
    const CURLcode rc = curl_easy_perform(e);
    curl_easy_cleanup(e);
    if (rc != CURLE_OK)
    {
        zxb::fail("the delay proxy at " + base + " does not answer " + what);
    }
    return body;
}

/// http_options from --connections and --max-requests (the defaults when absent).
zx::http_options http_options_of(const zxb::args& args)
{
    zx::http_options o;
    o.max_connections = args.num("connections", o.max_connections);
    o.max_concurrent_requests = args.num("max-requests", o.max_concurrent_requests);
    return o;
}

/// The floor's fetch runs twice untimed first: its connections are open, as zarrxt's are after
/// open(); the decode pass is then the median of three.
zxb::json curl_floor_json(zxb::read_plan plan, unsigned threads, long connections)
{
    curl_floor f(std::move(plan), connections);
    (void)f.run(false);
    const std::uint64_t fetch = f.run(false);
    std::vector<std::uint64_t> full;
    for (int i = 0; i < 3; ++i)
    {
        full.push_back(f.run(true));
    }
    std::sort(full.begin(), full.end());
    const std::uint64_t one = full[1];
    return {{"floor_ns", one},
            {"floor_fetch_ns", fetch},
            // With P threads the decode divides, the fetch does not.
            {"floor_p_ns", std::max<std::uint64_t>(one / std::max(threads, 1u), fetch)},
            {"floor_requests", f.requests()}};
}

/// With `--driver 1`: a thread of the benchmark's own drives the store's engine
/// (http_store::drive) until the returned thread is destroyed, so requests move while the
/// readers decode. Without: none (the waiting readers drive it).
std::optional<std::jthread> driver_for(const zx::http_store& store, const zxb::args& args)
{
    if (args.num("driver", 0) == 0)
    {
        return std::nullopt;
    }
    return std::jthread([store](std::stop_token st) { store.drive(st); });
}

/*******
 * w1 *
 *******/

int run_w1(const zxb::args& args)
{
    const std::string url = args.str("url");
    const zxb::w1_layout& l = zxb::w1_layout_of(args.str("array"));
    const std::uint64_t e = args.num("extent");
    const auto threads = static_cast<unsigned>(args.num("threads", 1));
    const zx::region<2> r{{7, 11}, {e, e}};
    zxb::json j;
    j["rss_start"] = zxb::peak_rss_bytes();
    try
    {
        j.update(zxb::with_executor(
            threads,
            [&](auto exec)
            {
                zxb::json o;
                zx::http_store store(url, http_options_of(args));
                const auto io = driver_for(store, args);
                auto a = zx::open<std::uint16_t, 2>(store, l.name, exec);
                const std::uint64_t before = store.requests_started();
                const std::uint64_t t0 = zxb::now_ns();
                auto out = a.read(r);
                o["read_ns"] = zxb::now_ns() - t0;
                o["rss_peak"] = zxb::peak_rss_bytes();
                o["requests"] = store.requests_started() - before;
                o["peak_in_flight"] = store.peak_in_flight();
                const std::int64_t bad = zxb::w1_first_mismatch(out.data(), 7, 11, e, e);
                if (bad >= 0)
                {
                    zxb::fail("zarrxt read a wrong value at linear index " + std::to_string(bad));
                }
                o["verified"] = true;
                o["sha256"] = zxb::sha256_hex(out.data(), out.size() * sizeof(std::uint16_t));
                return o;
            }));
    }
    catch (const std::exception& ex)
    {
        zxb::fail(std::string("zarrxt failed: ") + ex.what());
    }
    j["output_bytes"] = e * e * 2;
    j.update(curl_floor_json(zxb::w1_plan(l, url, 7, 11, e), threads,
                             static_cast<long>(http_options_of(args).max_connections)));
    std::cout << j.dump() << "\n";
    return 0;
}

/*********
 * seed *
 *********/

constexpr std::uint64_t seed_n = 100'000'000;
constexpr std::uint64_t seed_chunk = 100'000;

std::uint64_t shard_of(const std::string& layout)
{
    if (layout == "a" || layout == "v2")
    {
        return 0;
    }
    if (layout == "b")
    {
        return seed_chunk;
    }
    if (layout == "c")
    {
        return seed_n;
    }
    zxb::fail("--layout must be a, b, c or v2");
}

/// Round trips a whole read needs at the least, whatever the layout: one, every object fetched
/// whole at once (a shard's index travels with it).
constexpr std::uint64_t floor_round_trips = 1;

/// Every file below `root`/`name` as the key `name`/relative path.
zx::memory_store load_array(const std::filesystem::path& root, const std::string& name)
{
    zx::memory_store m;
    for (const auto& f : std::filesystem::recursive_directory_iterator(root / name))
    {
        if (!f.is_regular_file())
        {
            continue;
        }
        std::ifstream in(f.path(), std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        m.set(std::filesystem::relative(f.path(), root).generic_string(), zx::as_bytes(bytes));
    }
    return m;
}

/// The local floor's decode of the whole array (files in the page cache), median of three.
std::uint64_t local_decode_ns(const std::string& dir, const std::string& layout)
{
    zxb::read_floor f(zxb::w2_plan(dir, seed_n, seed_chunk, shard_of(layout), zxb::codec_kind::zstd));
    std::vector<std::uint64_t> v;
    for (int i = 0; i < 3; ++i)
    {
        v.push_back(f.run());
    }
    std::sort(v.begin(), v.end());
    return v[1];
}

/// The zstd encode of every chunk (level 0, one reused context), median of three.
std::uint64_t local_encode_ns(const std::uint8_t* src)
{
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 0);
    zxb::prefaulted out(ZSTD_compressBound(seed_chunk));
    std::vector<std::uint64_t> v;
    for (int r = 0; r < 3; ++r)
    {
        const std::uint64_t t0 = zxb::now_ns();
        for (std::uint64_t i = 0; i < seed_n / seed_chunk; ++i)
        {
            const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), src + i * seed_chunk, seed_chunk);
            if (ZSTD_isError(n))
            {
                zxb::fail("floor: zstd encode failed");
            }
            zxb::clobber(out.data());
        }
        v.push_back(zxb::now_ns() - t0);
    }
    ZSTD_freeCCtx(c);
    std::sort(v.begin(), v.end());
    return v[1];
}

zx::v3_options seed_options(const std::string& layout)
{
    zx::v3_options o;
    o.shape = {seed_n};
    const std::vector<zx::codec_spec> inner{zx::codec_spec("bytes"),
                                            zx::codec_spec("zstd", {{"level", 0}, {"checksum", false}})};
    const std::uint64_t shard = shard_of(layout);
    if (shard != 0)
    {
        o.chunk_shape = {shard};
        o.codecs = {zx::sharded({seed_chunk}, inner)};
    }
    else
    {
        o.chunk_shape = {seed_chunk};
        o.codecs = inner;
    }
    return o;
}

template <class A>
zxb::json timed_read(A& a)
{
    zxb::json o;
    const std::uint64_t t0 = zxb::now_ns();
    auto out = a.read();
    o["ns"] = zxb::now_ns() - t0;
    o["rss_peak"] = zxb::peak_rss_bytes();
    if (out.size() != seed_n)
    {
        zxb::fail("zarrxt read " + std::to_string(out.size()) + " elements");
    }
    const std::int64_t bad = zxb::w2_first_mismatch(true, 0, out.data(), out.size());
    if (bad >= 0)
    {
        zxb::fail("zarrxt read a wrong value at " + std::to_string(bad));
    }
    o["verified"] = true;
    o["sha256"] = zxb::sha256_hex(out.data(), out.size());
    return o;
}

/// The latency store's requests in flight over the timed operation (its record since the reset).
template <class S>
void add_in_flight(zxb::json& j, const zx::latency_store<S>& store)
{
    const auto st = store.requests_in_flight();
    j["peak_in_flight"] = st.peak;
    j["mean_in_flight"] = st.mean;
    j["recorded_requests"] = st.requests;
}

int run_seed(const zxb::args& args)
{
    const std::string store_kind = args.str("store");
    const std::string op = args.str("op");
    const std::string layout = args.str("layout");
    const auto threads = static_cast<unsigned>(args.num("threads", 1));
    const auto delay = std::chrono::milliseconds(args.num("delay-ms", 30));
    const std::uint64_t delay_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(delay).count());
    (void)shard_of(layout); // validates it
    zxb::json j;
    j["rss_start"] = zxb::peak_rss_bytes();
    j["bytes"] = seed_n;
    if (store_kind == "latency")
    {
        const std::string dir = args.str("dir");
        const zx::latency_options lo{
            .fixed = std::chrono::duration_cast<std::chrono::microseconds>(delay), .jitter = {}, .seed = 1};
        if (op == "read")
        {
            const std::string name = args.str("name");
            zx::latency_store<zx::memory_store> store(load_array(dir, name), lo);
            try
            {
                j.update(zxb::with_executor(threads,
                                            [&](auto exec)
                                            {
                                                auto a = zx::open<std::uint8_t, 1>(store, name, exec);
                                                store.reset_requests_in_flight();
                                                const std::uint64_t d0 = store.delays();
                                                zxb::json o = timed_read(a);
                                                o["requests"] = store.delays() - d0;
                                                return o;
                                            }));
            }
            catch (const std::exception& ex)
            {
                zxb::fail(std::string("zarrxt failed: ") + ex.what());
            }
            add_in_flight(j, store);
            const std::uint64_t dec = local_decode_ns(dir + "/" + name, layout);
            j["floor_decode_ns"] = dec;
            j["floor_ns"] = floor_round_trips * delay_ns + dec / std::max(threads, 1u);
        }
        else if (op == "write")
        {
            zxb::prefaulted src(seed_n);
            auto* bytes = reinterpret_cast<std::uint8_t*>(src.data());
            zxb::w2_fill(true, 0, bytes, seed_n);
            zx::latency_store<zx::memory_store> store(zx::memory_store{}, lo);
            try
            {
                j.update(zxb::with_executor(threads,
                                            [&](auto exec)
                                            {
                                                zxb::json o;
                                                auto a = zx::create<std::uint8_t, 1>(
                                                    store, "ours", seed_options(layout), exec);
                                                store.reset_requests_in_flight();
                                                const std::uint64_t d0 = store.delays();
                                                const std::uint64_t t0 = zxb::now_ns();
                                                a.write_raw(zx::region<1>{{0}, {seed_n}}, bytes);
                                                o["ns"] = zxb::now_ns() - t0;
                                                o["rss_peak"] = zxb::peak_rss_bytes();
                                                o["requests"] = store.delays() - d0;
                                                return o;
                                            }));
            }
            catch (const std::exception& ex)
            {
                zxb::fail(std::string("zarrxt failed: ") + ex.what());
            }
            add_in_flight(j, store);
            // Stored when write() returned: read back without delays, every byte compared.
            auto back = zx::open<std::uint8_t, 1>(store.inner(), "ours");
            auto got = back.read();
            if (got.size() != seed_n || std::memcmp(got.data(), bytes, seed_n) != 0)
            {
                zxb::fail("zarrxt's written array does not read back as written");
            }
            j["verified"] = true;
            const std::uint64_t enc = local_encode_ns(bytes);
            j["floor_encode_ns"] = enc;
            // One round trip: every object sent at once (a shard's index travels with it).
            j["floor_ns"] = delay_ns + enc / std::max(threads, 1u);
        }
        else
        {
            zxb::fail("--op must be read or write");
        }
    }
    else if (store_kind == "http")
    {
        if (op != "read")
        {
            zxb::fail("http_store is read-only: --op read");
        }
        const std::string url = args.str("url");
        const std::string name = args.str("name");
        try
        {
            j.update(zxb::with_executor(threads,
                                        [&](auto exec)
                                        {
                                            zx::http_store store(url, http_options_of(args));
                                            const auto io = driver_for(store, args);
                                            auto a = zx::open<std::uint8_t, 1>(store, name, exec);
                                            const std::uint64_t r0 = store.requests_started();
                                            // The proxy's view of the read alone (not of the open or the
                                            // floor).
                                            const std::string proxy = args.str("proxy-stats", "-");
                                            if (proxy != "-")
                                            {
                                                (void)proxy_control(proxy, "reset");
                                            }
                                            zxb::json o = timed_read(a);
                                            if (proxy != "-")
                                            {
                                                o["proxy"] = zxb::json::parse(proxy_control(proxy, "stats"));
                                            }
                                            o["requests"] = store.requests_started() - r0;
                                            o["peak_in_flight"] = store.peak_in_flight();
                                            return o;
                                        }));
        }
        catch (const std::exception& ex)
        {
            zxb::fail(std::string("zarrxt failed: ") + ex.what());
        }
        j.update(curl_floor_json(zxb::w2_plan(url + "/" + name, seed_n, seed_chunk, shard_of(layout),
                                              zxb::codec_kind::zstd, layout == "v2"),
                                 threads, static_cast<long>(http_options_of(args).max_connections)));
    }
    else
    {
        zxb::fail("--store must be latency or http");
    }
    std::cout << j.dump() << "\n";
    return 0;
}

/********
 * rps *
 ********/

int run_rps(const zxb::args& args)
{
    const std::string url = args.str("url");
    const std::string key = args.str("key");
    const std::uint64_t size = args.num("size", 4096);
    const std::uint64_t count = args.num("count", 10000);
    zx::http_store store(url, http_options_of(args));
    auto h = store.open_object(key);
    if (!h)
    {
        zxb::fail("no object " + key);
    }
    const std::uint64_t object_size = h->info().size;
    if (object_size <= size || count > (object_size - size) / size)
    {
        zxb::fail("the object is too small for " + std::to_string(count) + " distinct ranges");
    }
    std::vector<zx::byte_range> ranges;
    for (std::uint64_t i = 0; i < count; ++i)
    {
        ranges.push_back(zx::byte_range::of((i * size) % (object_size - size), size));
    }
    std::vector<zx::buffer> outs(count);
    const std::uint64_t r0 = store.requests_started();
    const std::uint64_t t0 = zxb::now_ns();
    h->read_ranges(ranges, size, outs);
    const std::uint64_t ns = zxb::now_ns() - t0;
    zarrxt_tool::sha256 hash; // every range's bytes in order: what curl fetched must hash the same
    for (const auto& b : outs)
    {
        if (b.size() != size)
        {
            zxb::fail("a range came back with " + std::to_string(b.size()) + " bytes");
        }
        hash.update(b.data(), b.size());
    }
    const double seconds = static_cast<double>(ns) / 1e9;
    std::cout << zxb::json{{"requests", store.requests_started() - r0},
                           {"seconds", seconds},
                           {"requests_per_s", static_cast<double>(count) / seconds},
                           {"object_size", object_size},
                           {"peak_in_flight", store.peak_in_flight()},
                           {"sha256", zarrxt_tool::sha256::hex(hash.finish())}}
                     .dump()
              << "\n";
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2)
    {
        zxb::fail("usage: remote w1|seed|rps --option value ...");
    }
    const std::string mode = argv[1];
    const zxb::args args(argc - 1, argv + 1);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (mode == "w1")
    {
        return run_w1(args);
    }
    if (mode == "seed")
    {
        return run_seed(args);
    }
    if (mode == "rps")
    {
        return run_rps(args);
    }
    zxb::fail("unknown mode " + mode);
}
