// http_store (store/http.hpp) against real servers on loopback: nginx serving files the test
// writes and the conformance corpus, a canned server for the faults nginx does not commit, and a
// fault proxy in front of nginx that spoils the requests a test picks.
#include "../tools/sha256.hpp"
#include "expect_error.hpp"
#include "http_servers.hpp"
#include "test_support.hpp"

#include <xtensor/xview.hpp>
#include <zarrxt/store/http.hpp>
#include <zarrxt/store/open_store.hpp>
#include <zarrxt/zarrxt.hpp>

#include <bit>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace zx = zarrxt;

namespace
{

std::string text_of(const zx::buffer& b)
{
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

/// Bytes 0..n-1 with a pattern that differs at every offset modulo 251.
std::string pattern(std::size_t n)
{
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
    {
        s[i] = static_cast<char>((i * 7 + i / 251) % 251);
    }
    return s;
}

zx::http_options quick_options()
{
    zx::http_options o;
    o.retry_base = std::chrono::milliseconds(5);
    o.retry_cap = std::chrono::milliseconds(20);
    o.request_timeout = std::chrono::milliseconds(5000);
    o.deadline = std::chrono::milliseconds(20000);
    return o;
}

/// Writes the 128 x 96 int32 array "many" (8 x 8 chunks of 16 x 12, default codecs) under `root`, the value
/// at flat index i being i * mul % mod; returns the values.
xt::xtensor<std::int32_t, 2> write_many(const std::filesystem::path& root, std::size_t mul, std::size_t mod)
{
    xt::xtensor<std::int32_t, 2> a = xt::xtensor<std::int32_t, 2>::from_shape({128, 96});
    for (std::size_t i = 0; i < a.size(); ++i)
    {
        a.data()[i] = static_cast<std::int32_t>(i * mul % mod);
    }
    zx::filesystem_store fs{root.string()};
    zx::create<std::int32_t, 2>(fs, "many", zx::v3_options{.shape = {128, 96}, .chunk_shape = {16, 12}})
        .write({{0, 0}, {128, 96}}, a);
    return a;
}

/// f must throw store_error `id` naming `key`, and its message must mention `mention`.
template <class F>
void expect_store(F&& f, const char* id, const char* key, const char* mention = "")
{
    auto e = zxtest::expect_error<zx::store_error>(std::forward<F>(f), id, key);
    if (e && *mention != '\0')
    {
        CHECK(std::string(e->what()).find(mention) != std::string::npos);
    }
}

/// The array's elements, C order, little-endian, as the corpus digests hash them.
template <class Store>
std::string digest_of(const zx::any_array<Store>& a)
{
    const auto& shape = a.shape();
    const auto& di = zx::info(a.dtype());
    std::uint64_t n = 1;
    for (auto e : shape)
    {
        n *= e;
    }
    std::vector<std::byte> buf(static_cast<std::size_t>(n * di.size));
    a.read_bytes(std::vector<std::uint64_t>(shape.size(), 0), shape, buf.data());
    if constexpr (std::endian::native == std::endian::big)
    {
        for (std::size_t i = 0; i < buf.size(); i += di.word)
        {
            std::reverse(buf.begin() + i, buf.begin() + i + di.word);
        }
    }
    zarrxt_tool::sha256 h;
    h.update(buf.data(), buf.size());
    return zarrxt_tool::sha256::hex(h.finish(), 16);
}

/// Options for the fault tests: quick retries, a short attempt timeout (stalls), one deadline.
zx::http_options fault_options()
{
    zx::http_options o;
    o.max_retries = 3;
    o.retry_base = std::chrono::milliseconds(2);
    o.retry_cap = std::chrono::milliseconds(10);
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.request_timeout = std::chrono::milliseconds(300);
    o.deadline = std::chrono::milliseconds(8000);
    return o;
}

const char* name_of(zxtest::fault f)
{
    using zxtest::fault;
    switch (f)
    {
        case fault::status_503:
            return "503";
        case fault::status_429:
            return "429";
        case fault::status_503_wait_1:
            return "503 with Retry-After: 1";
        case fault::stall:
            return "stall";
        case fault::stall_mid_body:
            return "stall mid-body";
        case fault::reset:
            return "reset";
        case fault::reset_mid_headers:
            return "reset mid-headers";
        case fault::reset_mid_body:
            return "reset mid-body";
        case fault::truncate:
            return "truncated body";
        case fault::short_body:
            return "short body";
        case fault::shift_range:
            return "shifted Content-Range";
        case fault::wrong_total:
            return "wrong total in Content-Range";
    }
    return "?";
}

/// The transient faults: each must be retried into the right bytes.
constexpr zxtest::fault transient_faults[] = {zxtest::fault::status_503,     zxtest::fault::status_429,
                                              zxtest::fault::stall,          zxtest::fault::stall_mid_body,
                                              zxtest::fault::reset,          zxtest::fault::reset_mid_headers,
                                              zxtest::fault::reset_mid_body, zxtest::fault::truncate};

} // namespace

TEST_SUITE("remote")
{
    TEST_CASE("http_store against nginx: whole objects, ranges, suffixes, absent keys, ETags")
    {
        zxtest::temp_dir root("zarrxt-http");
        const std::string data = pattern(100000);
        zxtest::write_file(root.path() / "a" / "obj", data);
        zxtest::write_file(root.path() / "small", "hello");
        zxtest::write_file(root.path() / "name with space", "spaced");
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        const zx::http_store s(nginx.url(), quick_options());
        zx::buffer out;

        auto info = s.read_to("a/obj", zx::byte_range::all(), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(text_of(out) == data);
        CHECK(info->size == data.size());
        CHECK(info->generation != 0);

        info = s.read_to("a/obj", zx::byte_range::of(1000, 300), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(text_of(out) == data.substr(1000, 300));
        CHECK(info->size == data.size()); // from Content-Range
        const std::uint64_t gen = info->generation;

        info = s.read_to("a/obj", zx::byte_range::last(68), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(text_of(out) == data.substr(data.size() - 68));
        CHECK(info->generation == gen);

        // Past the end: clamped; wholly past the end: empty, with the size.
        info = s.read_to("a/obj", zx::byte_range::of(99990, 100), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(text_of(out) == data.substr(99990));
        info = s.read_to("a/obj", zx::byte_range::of(200000, 10), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(out.size() == 0);
        CHECK(info->size == data.size());
        // A suffix longer than the object is the whole object.
        info = s.read_to("small", zx::byte_range::last(1000), UINT64_MAX, out);
        REQUIRE(info);
        CHECK(text_of(out) == "hello");

        CHECK_FALSE(s.read_to("a/missing", zx::byte_range::all(), UINT64_MAX, out));
        CHECK_FALSE(s.stat("nothing/here"));
        CHECK_FALSE(s.open_object("nothing/here"));
        const auto st = s.stat("a/obj");
        REQUIRE(st);
        CHECK(st->size == data.size());
        CHECK(st->generation == gen);
        REQUIRE(s.read_to("name with space", zx::byte_range::all(), UINT64_MAX, out));
        CHECK(text_of(out) == "spaced");
        CHECK(s.url_of("name with space") == nginx.url("name%20with%20space"));
        CHECK_THROWS_AS(s.url_of("../etc/passwd"), zx::store_error);

        // The cap: a whole object larger than max_bytes is refused while it arrives.
        CHECK_THROWS_AS(s.read_to("a/obj", zx::byte_range::all(), 5000, out), zx::limit_exceeded);
        CHECK_THROWS_AS(s.read_to("a/obj", zx::byte_range::of(0, 6000), 5000, out), zx::limit_exceeded);

        SUBCASE("an object handle: prefetched ranges arrive together and match")
        {
            auto h = s.open_object("a/obj");
            REQUIRE(h);
            CHECK(h->info().size == data.size());
            CHECK(h->info().generation == gen);
            std::vector<zx::byte_range> ranges;
            for (std::uint64_t i = 0; i < 40; ++i)
            {
                ranges.push_back(zx::byte_range::of(i * 2400, 700));
            }
            const std::uint64_t started = s.requests_started();
            h->prefetch(ranges);
            for (std::size_t i = ranges.size(); i-- > 0;) // in reverse: each waits for its own
            {
                h->read_to(ranges[i], UINT64_MAX, out);
                CHECK(text_of(out) == data.substr(i * 2400, 700));
            }
            CHECK(s.requests_started() - started == ranges.size()); // each range asked once
            CHECK(s.peak_in_flight() > 1);
            std::vector<zx::buffer> outs(3);
            const zx::byte_range three[] = {zx::byte_range::of(5, 5), zx::byte_range::last(3),
                                            zx::byte_range::of(99999, 10)};
            h->read_ranges(three, UINT64_MAX, outs);
            CHECK(text_of(outs[0]) == data.substr(5, 5));
            CHECK(text_of(outs[1]) == data.substr(data.size() - 3));
            CHECK(text_of(outs[2]) == data.substr(99999));
        }
        SUBCASE("a handle pinned to one version refuses ranges of the next (If-Match)")
        {
            auto h = s.open_object("a/obj");
            REQUIRE(h);
            h->read_to(zx::byte_range::of(0, 10), UINT64_MAX, out);
            CHECK(text_of(out) == data.substr(0, 10));
            zxtest::write_file(root.path() / "a" / "obj", data + "longer"); // a new size: a new ETag
            expect_store([&] { h->read_to(zx::byte_range::of(10, 10), UINT64_MAX, out); }, "zarrxt.store.6",
                         "a/obj");
            const auto fresh = s.stat("a/obj");
            REQUIRE(fresh);
            CHECK(fresh->generation != gen);
            CHECK(fresh->size == data.size() + 6);
        }
    }

    TEST_CASE("http_store: a server that ignores ranges is answered by slicing, never by the whole object")
    {
        zxtest::temp_dir root("zarrxt-http");
        const std::string data = pattern(300000);
        zxtest::write_file(root.path() / "obj", data);
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        const zx::http_store s(nginx.url("noranges"), quick_options());
        zx::buffer out;
        auto info = s.read_to("obj", zx::byte_range::of(123456, 1000), 1000, out); // cap: the range only
        REQUIRE(info);
        CHECK(text_of(out) == data.substr(123456, 1000));
        info = s.read_to("obj", zx::byte_range::last(500), 500, out);
        REQUIRE(info);
        CHECK(text_of(out) == data.substr(data.size() - 500));
        CHECK(info->size == data.size());
        auto h = s.open_object("obj");
        REQUIRE(h);
        h->read_to(zx::byte_range::of(7, 9), UINT64_MAX, out);
        CHECK(text_of(out) == data.substr(7, 9));
    }

    TEST_CASE("http_store: transient failures are retried, then a typed error within the deadline")
    {
        zxtest::temp_dir root("zarrxt-http");
        zxtest::write_file(root.path() / "obj", "x");
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        zx::http_options o = quick_options();
        o.max_retries = 3;
        const zx::http_store s(nginx.url("unavailable"), o);
        zx::buffer out;
        const auto t0 = std::chrono::steady_clock::now();
        expect_store([&] { s.read_to("obj", zx::byte_range::all(), UINT64_MAX, out); }, "zarrxt.store.4",
                     "obj", "HTTP 503");
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
        try
        {
            s.read_to("obj", zx::byte_range::all(), UINT64_MAX, out);
        }
        catch (const zx::store_error& e)
        {
            CHECK(std::string(e.what()).find("4 attempts") != std::string::npos); // 1 + max_retries
            CHECK(std::string(e.what()).find("/unavailable/obj") != std::string::npos);
        }

        // Nothing listens: connection refused, retried, then store.4.
        const int port = zxtest::free_loopback_port();
        const zx::http_store nowhere("http://127.0.0.1:" + std::to_string(port), o);
        expect_store([&] { nowhere.read_to("k", zx::byte_range::all(), UINT64_MAX, out); }, "zarrxt.store.4",
                     "k");
        // Credentials in the URL never appear in errors.
        const zx::http_store secret("http://user:hunter2@127.0.0.1:" + std::to_string(port), o);
        try
        {
            secret.stat("k");
            FAIL("no error");
        }
        catch (const zx::store_error& e)
        {
            CHECK(std::string(e.what()).find("hunter2") == std::string::npos);
        }
    }

    TEST_CASE("http_store: answers that do not match the request are typed errors, never data")
    {
        zx::http_options o = quick_options();
        o.max_retries = 2;
        zx::buffer out;
        SUBCASE("a 206 with another range")
        {
            zxtest::canned_server srv({"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-9/100\r\n"
                                       "Content-Length: 10\r\nConnection: close\r\n\r\n0123456789"});
            const zx::http_store s(srv.url(""), o);
            expect_store([&] { s.read_to("k", zx::byte_range::of(20, 10), UINT64_MAX, out); },
                         "zarrxt.store.5", "k", "does not answer the range requested");
        }
        SUBCASE("a body shorter than its Content-Range")
        {
            zxtest::canned_server srv({"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 20-29/100\r\n"
                                       "Content-Length: 4\r\nConnection: close\r\n\r\n0123"});
            const zx::http_store s(srv.url(""), o);
            expect_store([&] { s.read_to("k", zx::byte_range::of(20, 10), UINT64_MAX, out); },
                         "zarrxt.store.5", "k", "promised 10");
        }
        SUBCASE("a connection cut before the promised length: retried, then store.4")
        {
            zxtest::canned_server srv(
                {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort"});
            const zx::http_store s(srv.url(""), o);
            expect_store([&] { s.read_to("k", zx::byte_range::all(), UINT64_MAX, out); }, "zarrxt.store.4",
                         "k");
            CHECK(srv.requests() == 3);
        }
        SUBCASE("429, then 503, then the answer: the right bytes")
        {
            zxtest::canned_server srv(
                {"HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                 "HTTP/1.1 503 Slow Down\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                 "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfresh"});
            const zx::http_store s(srv.url(""), o);
            const auto info = s.read_to("k", zx::byte_range::all(), UINT64_MAX, out);
            REQUIRE(info);
            CHECK(text_of(out) == "fresh");
            CHECK(info->generation == zx::detail::generation_of("\"v1\""));
            CHECK(srv.requests() == 3);
        }
        SUBCASE("a handle sends its ETag as If-Match, and 412 is store.6")
        {
            zxtest::canned_server srv(
                {"HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Length: 100\r\nConnection: close\r\n\r\n",
                 "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"});
            const zx::http_store s(srv.url(""), o);
            auto h = s.open_object("k");
            REQUIRE(h);
            expect_store([&] { h->read_to(zx::byte_range::of(0, 10), UINT64_MAX, out); }, "zarrxt.store.6",
                         "k");
            const auto got = srv.received();
            REQUIRE(got.size() == 2);
            CHECK(got[0].rfind("HEAD /k ", 0) == 0);
            CHECK(got[1].find("If-Match: \"v1\"") != std::string::npos);
            CHECK(got[1].find("Range: bytes=0-9") != std::string::npos);
        }
    }

    TEST_CASE("arrays over HTTP: zarrxt's own read equal to the files, the corpus to its digests")
    {
        zxtest::temp_dir root("zarrxt-http");
        {
            zx::filesystem_store fs{root.path().string()};
            auto v3 = zx::create<std::uint16_t, 2>(
                fs, "v3", zx::v3_options{.shape = {100, 90}, .chunk_shape = {16, 32}});
            auto sh = zx::create<std::int32_t, 2>(
                fs, "sharded",
                zx::v3_options{
                    .shape = {64, 64},
                    .chunk_shape = {32, 32},
                    .codecs = {zx::sharded(
                        {8, 8}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")})}});
            auto raw = zx::create<float, 2>(
                fs, "raw",
                zx::v3_options{.shape = {50, 40},
                               .chunk_shape = {25, 40},
                               .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})}});
            auto v2 =
                zx::create<double, 2>(fs, "v2",
                                      zx::v2_options{.shape = {30, 30},
                                                     .chunks = {7, 9},
                                                     .compressor = zx::codec_spec("zlib", {{"level", 1}})});
            xt::xtensor<std::uint16_t, 2> a = xt::xtensor<std::uint16_t, 2>::from_shape({100, 90});
            for (std::size_t i = 0; i < a.size(); ++i)
            {
                a.data()[i] = static_cast<std::uint16_t>(i * 31 % 65521);
            }
            v3.write({{0, 0}, {100, 90}}, a);
            sh.write({{0, 0}, {64, 64}},
                     xt::cast<std::int32_t>(xt::view(a, xt::range(0, 64), xt::range(0, 64))) - 700);
            raw.write({{0, 0}, {50, 40}},
                      xt::cast<float>(xt::view(a, xt::range(0, 50), xt::range(0, 40))) * 0.5f);
            v2.write({{0, 0}, {30, 30}},
                     xt::cast<double>(xt::view(a, xt::range(0, 30), xt::range(0, 30))) / 3.0);
        }
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        const zx::http_store s(nginx.url(), quick_options());
        zx::filesystem_store fs{root.path().string()};
        for (const char* path : {"v3", "sharded", "raw", "v2"})
        {
            CAPTURE(path);
            const auto remote = zx::open_any(s, path);
            const auto local = zx::open_any(fs, path);
            CHECK(digest_of(remote) == digest_of(local));
        }
        // A region of the sharded array: the inner chunks' ranges through one handle per shard.
        auto sh = zx::open<std::int32_t, 2>(s, "sharded");
        auto shl = zx::open<std::int32_t, 2>(fs, "sharded");
        CHECK(sh.read({{3, 5}, {40, 50}}) == shl.read({{3, 5}, {40, 50}}));
        // One inner chunk: the index by one suffix request (no HEAD first), then its one range.
        const std::uint64_t before = s.requests_started();
        CHECK(sh.read({{8, 8}, {8, 8}}) == shl.read({{8, 8}, {8, 8}}));
        CHECK(s.requests_started() - before == 2);
        // A compressed chunk is one GET, a missing one too (its 404).
        auto v3 = zx::open<std::uint16_t, 2>(s, "v3");
        const std::uint64_t before_v3 = s.requests_started();
        CHECK(v3.read({{0, 0}, {16, 32}}) == zx::open<std::uint16_t, 2>(fs, "v3").read({{0, 0}, {16, 32}}));
        CHECK(s.requests_started() - before_v3 == 1);
        auto raw = zx::open<float, 2>(s, "raw");
        CHECK(raw.read({{7, 3}, {30, 11}}) == zx::open<float, 2>(fs, "raw").read({{7, 3}, {30, 11}}));

        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        zxtest::nginx_server corpus_server(corpus);
        ZX_REQUIRE_SERVER(corpus_server);
        std::istringstream lines(zxtest::read_file(corpus / "MANIFEST.jsonl"));
        std::string line;
        int hashed = 0;
        while (std::getline(lines, line))
        {
            if (line.empty())
            {
                continue;
            }
            const auto entry = zx::json::parse(line);
            if (entry.at("digest").is_null())
            {
                continue;
            }
            const std::string path = entry.at("path").get<std::string>();
            CAPTURE(path);
            // Arrays the library refuses over a filesystem (corpus test) are refused over HTTP too.
            std::string local_digest;
            try
            {
                zx::filesystem_store local{(corpus / path).string()};
                local_digest = digest_of(zx::open_any(local, ""));
            }
            catch (const zx::error&)
            {
                continue;
            }
            const zx::http_store remote(corpus_server.url(path), quick_options());
            const std::string got = digest_of(zx::open_any(remote, ""));
            CHECK(got == local_digest);
            CHECK(got == entry.at("digest").get<std::string>());
            ++hashed;
        }
        MESSAGE("corpus over HTTP: " << hashed << " arrays hash to their agreed digest");
        CHECK(hashed >= 60);
    }

    TEST_CASE("fault proxy: every transient fault is retried into exactly the bytes of the range")
    {
        zxtest::temp_dir root("zarrxt-http");
        const std::string data = pattern(100000);
        zxtest::write_file(root.path() / "obj", data);
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        zxtest::fault_proxy proxy(nginx.port());
        const zx::http_store s(proxy.url(), fault_options());
        const zx::http_store noranges(proxy.url("noranges"), fault_options());
        zx::buffer out;
        for (const auto f : transient_faults)
        {
            CAPTURE(name_of(f));
            const int before = proxy.faults(f);
            proxy.inject(f, 1, "GET /obj");
            auto info = s.read_to("obj", zx::byte_range::all(), UINT64_MAX, out);
            REQUIRE(info);
            CHECK(text_of(out) == data);
            CHECK(info->size == data.size());

            proxy.inject(f, 1, "GET /obj");
            info = s.read_to("obj", zx::byte_range::of(1000, 300), UINT64_MAX, out);
            REQUIRE(info);
            CHECK(text_of(out) == data.substr(1000, 300));
            CHECK(info->size == data.size());

            proxy.inject(f, 1, "GET /obj");
            info = s.read_to("obj", zx::byte_range::last(68), UINT64_MAX, out);
            REQUIRE(info);
            CHECK(text_of(out) == data.substr(data.size() - 68));

            // A handle: its HEAD, then a range with If-Match, each spoiled once.
            proxy.inject(f, 1, "HEAD /obj");
            auto h = s.open_object("obj");
            REQUIRE(h);
            CHECK(h->info().size == data.size());
            proxy.inject(f, 1, "GET /obj");
            h->read_to(zx::byte_range::of(5000, 777), UINT64_MAX, out);
            CHECK(text_of(out) == data.substr(5000, 777));

            // A server that ignores ranges (200 to a range request), spoiled too.
            proxy.inject(f, 1, "GET /noranges/obj");
            info = noranges.read_to("obj", zx::byte_range::of(70000, 500), 500, out);
            REQUIRE(info);
            CHECK(text_of(out) == data.substr(70000, 500));

            // Every fault was committed (a HEAD has no body: the body faults pass it through).
            const bool body_fault = f == zxtest::fault::stall_mid_body ||
                                    f == zxtest::fault::reset_mid_body || f == zxtest::fault::truncate;
            CHECK(proxy.faults(f) - before == (body_fault ? 5 : 6));
            proxy.clear();
        }
    }

    TEST_CASE("fault proxy: a fault that does not pass is a typed error within the deadline")
    {
        zxtest::temp_dir root("zarrxt-http");
        const std::string data = pattern(10000);
        zxtest::write_file(root.path() / "obj", data);
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        zxtest::fault_proxy proxy(nginx.port());
        const zx::http_options o = fault_options();
        const zx::http_store s(proxy.url(), o);
        zx::buffer out;
        // Slack over the deadline for the engine's own steps: a correctness bound, not a speed one.
        const auto bound = o.deadline + std::chrono::milliseconds(2000);

        SUBCASE("retried faults: store.4 after 1 + max_retries attempts")
        {
            for (const auto f : transient_faults)
            {
                CAPTURE(name_of(f));
                proxy.inject(f, -1, "GET /obj");
                const int before = proxy.faults(f);
                const auto t0 = std::chrono::steady_clock::now();
                expect_store([&] { s.read_to("obj", zx::byte_range::of(100, 1000), UINT64_MAX, out); },
                             "zarrxt.store.4", "obj", "4 attempts");
                CHECK(std::chrono::steady_clock::now() - t0 < bound);
                // libcurl may resend a request itself when a reused connection dies before answering.
                CHECK(proxy.faults(f) - before >= 1 + o.max_retries);
                proxy.clear();
            }
        }
        SUBCASE("answers that contradict the request: store.5 at once, not retried, never data")
        {
            struct lie
            {
                zxtest::fault f;
                zx::byte_range r;
                const char* mention;
            };
            const lie lies[] = {
                {zxtest::fault::shift_range, zx::byte_range::of(100, 1000),
                 "does not answer the range requested"},
                {zxtest::fault::shift_range, zx::byte_range::last(100),
                 "does not answer the range requested"},
                {zxtest::fault::wrong_total, zx::byte_range::last(100),
                 "does not answer the range requested"},
                {zxtest::fault::short_body, zx::byte_range::of(100, 1000), "promised 1000"},
                {zxtest::fault::short_body, zx::byte_range::last(100), "promised 100"},
            };
            for (const auto& l : lies)
            {
                CAPTURE(name_of(l.f));
                CAPTURE(l.r.suffix);
                proxy.inject(l.f, -1, "GET /obj");
                const int before = proxy.faults(l.f);
                out.clear();
                out.append(zx::as_bytes("untouched"));
                expect_store([&] { s.read_to("obj", l.r, UINT64_MAX, out); }, "zarrxt.store.5", "obj",
                             l.mention);
                CHECK(proxy.faults(l.f) - before == 1);
                CHECK(text_of(out) == "untouched"); // nothing of the answer was handed out
                proxy.clear();
            }
        }
        SUBCASE("a handle's range whose Content-Range gives another size for the same ETag: store.5")
        {
            auto h = s.open_object("obj");
            REQUIRE(h);
            proxy.inject(zxtest::fault::wrong_total, -1, "GET /obj");
            expect_store([&] { h->read_to(zx::byte_range::of(100, 1000), UINT64_MAX, out); },
                         "zarrxt.store.5", "obj", "10000");
            CHECK(proxy.faults(zxtest::fault::wrong_total) == 1);
        }
        SUBCASE("a stall that outlasts the deadline ends at the deadline, not an attempt later")
        {
            zx::http_options d = o;
            d.max_retries = 50;
            d.request_timeout = std::chrono::milliseconds(1000);
            d.deadline = std::chrono::milliseconds(1500);
            const zx::http_store slow(proxy.url(), d);
            proxy.inject(zxtest::fault::stall, -1, "GET /obj");
            const auto t0 = std::chrono::steady_clock::now();
            expect_store([&] { slow.read_to("obj", zx::byte_range::all(), UINT64_MAX, out); },
                         "zarrxt.store.4", "obj");
            const auto elapsed = std::chrono::steady_clock::now() - t0;
            CHECK(elapsed >= d.deadline - std::chrono::milliseconds(100));
            // The second attempt starts about 1 s in; with its full 1 s timeout it would end near 2 s.
            CHECK(elapsed < d.deadline + std::chrono::milliseconds(400));
        }
    }

    TEST_CASE("fault proxy: arrays read through intermittent 503s and resets equal their files")
    {
        zxtest::temp_dir root("zarrxt-http");
        zx::filesystem_store fs{root.path().string()};
        const zx::v3_options sharded{
            .shape = {128, 128},
            .chunk_shape = {64, 64},
            .codecs = {zx::sharded(
                {16, 16}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")})}};
        auto sh = zx::create<std::int32_t, 2>(fs, "sharded", sharded);
        auto v3 = zx::create<std::uint16_t, 2>(fs, "v3",
                                               zx::v3_options{.shape = {100, 90}, .chunk_shape = {16, 32}});
        xt::xtensor<std::int32_t, 2> a = xt::xtensor<std::int32_t, 2>::from_shape({128, 128});
        for (std::size_t i = 0; i < a.size(); ++i)
        {
            a.data()[i] = static_cast<std::int32_t>(i * 2654435761u % 100003) - 5000;
        }
        sh.write({{0, 0}, {128, 128}}, a);
        v3.write({{0, 0}, {100, 90}},
                 xt::cast<std::uint16_t>(xt::view(a, xt::range(0, 100), xt::range(0, 90))));
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        zxtest::fault_proxy proxy(nginx.port());
        zx::http_options o = fault_options();
        o.max_retries = 10; // faults are periodic, and retries of concurrent requests interleave
        o.request_timeout = std::chrono::milliseconds(5000);
        o.deadline = std::chrono::milliseconds(30000);
        const zx::http_store s(proxy.url(), o);
        proxy.inject(zxtest::fault::status_503, -1, "", 5);
        proxy.inject(zxtest::fault::reset_mid_body, -1, "GET ", 7);
        proxy.inject(zxtest::fault::truncate, -1, "GET ", 11);

        auto rsh = zx::open<std::int32_t, 2>(s, "sharded");
        CHECK(rsh.read() == a);
        CHECK(rsh.read({{3, 5}, {100, 77}}) == xt::view(a, xt::range(3, 103), xt::range(5, 82)));
        auto rv3 = zx::open<std::uint16_t, 2>(s, "v3");
        CHECK(rv3.read() == zx::open<std::uint16_t, 2>(fs, "v3").read());
        // Many requests in flight at once through a pool, spoiled the same way.
        zx::thread_pool pool(2);
        auto pooled =
            zx::array<std::int32_t, 2, zx::dynamic_chain, zx::http_store, zx::operation_index_cache<>,
                      zx::thread_pool_executor>::open(s, "sharded", zx::thread_pool_executor(pool));
        CHECK(pooled.read() == a);
        MESSAGE("through the fault proxy: " << proxy.requests() << " requests, " << proxy.faults()
                                            << " spoiled");
        CHECK(proxy.faults(zxtest::fault::status_503) > 0);
        CHECK(proxy.faults(zxtest::fault::reset_mid_body) > 0);
        CHECK(proxy.faults(zxtest::fault::truncate) > 0);
    }

    TEST_CASE("Retry-After is honoured: no retry sooner than the server asked, none past the deadline")
    {
        zxtest::temp_dir root;
        zxtest::write_file(root.path() / "obj", std::string(1000, 'x'));
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        zxtest::fault_proxy proxy(nginx.port());
        zx::http_options o = fault_options();
        o.retry_base = std::chrono::milliseconds(1); // without the header, a retry within ~1 ms
        o.retry_cap = std::chrono::milliseconds(2);
        {
            const zx::http_store s(proxy.url(), o);
            proxy.inject(zxtest::fault::status_503_wait_1, 1, "GET /obj");
            const auto t0 = std::chrono::steady_clock::now();
            const auto got = s.read("obj", zx::byte_range::all(), UINT64_MAX);
            const auto waited = std::chrono::steady_clock::now() - t0;
            REQUIRE(got);
            CHECK(got->bytes.size() == 1000);
            CHECK(proxy.faults(zxtest::fault::status_503_wait_1) == 1);
            CHECK(waited >= std::chrono::milliseconds(1000));
        }
        {
            // The wait asked for does not fit the deadline: the request fails now, typed, instead
            // of sleeping past it.
            o.deadline = std::chrono::milliseconds(500);
            const zx::http_store s(proxy.url(), o);
            proxy.inject(zxtest::fault::status_503_wait_1, 1, "GET /obj");
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.4", "obj",
                            s.read("obj", zx::byte_range::all(), UINT64_MAX));
        }
    }

    TEST_CASE("consolidated metadata over HTTP: a server that cannot list lists the hierarchy, its metadata "
              "in one GET")
    {
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "zarrita.js" / "fixtures"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/zarrita.js/fixtures)");
        }
        zxtest::nginx_server server(corpus);
        ZX_REQUIRE_SERVER(server);
        using view_t = zx::consolidated_store<zx::http_store>;
        const auto names = [](const view_t& v, const std::string& path)
        {
            std::vector<std::string> out;
            for (const auto& c : zx::group<view_t>::open(v, path).children())
            {
                out.push_back(c.name + (c.kind == zx::node_kind::group ? "/" : ""));
            }
            return out;
        };
        // zarr-python 3's inline document: one GET opens the group, its children and its arrays.
        const zx::http_store v3(server.url("zarrita.js/fixtures/v3/data.zarr"), quick_options());
        const auto view = zx::open_consolidated(v3, "consolidated", zx::consolidated_mode::always);
        CHECK(v3.requests_started() == 1);
        CHECK(names(view, "consolidated") ==
              std::vector<std::string>{"1d.chunked.i2", "2d.contiguous.i2", "nested/"});
        CHECK(names(view, "consolidated/nested") == std::vector<std::string>{"1d.i2"});
        auto a = zx::open<std::int16_t, 1>(view, "consolidated/nested/1d.i2");
        CHECK(v3.requests_started() == 1);
        CHECK(a.read() == xt::xtensor<std::int16_t, 1>{10, 20, 30, 40});
        CHECK(v3.requests_started() > 1); // the chunks, from the server
        // zarr-python 2's .zmetadata: a 404 for zarr.json, then the document.
        const zx::http_store v2(server.url("zarrita.js/fixtures/v2/data.zarr"), quick_options());
        const auto view2 = zx::open_consolidated(v2, "");
        REQUIRE(view2.has_snapshot());
        CHECK(v2.requests_started() == 2);
        CHECK(names(view2, "").size() == 33);
        CHECK(zx::group<view_t>::open(view2, "my group with spaces").attributes() ==
              zx::json{{"description", "A group with spaces in the name"}});
        CHECK(v2.requests_started() == 2);
        zx::filesystem_store local{(corpus / "zarrita.js/fixtures/v2/data.zarr").string()};
        CHECK(digest_of(zx::open_any(view2, "3d.chunked.mixed.i2.F")) ==
              digest_of(zx::open_any(local, "3d.chunked.mixed.i2.F")));
        // Without consolidated metadata there is nothing to list from.
        const auto plain = zx::open_consolidated(v2, "", zx::consolidated_mode::never);
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.7", "/", names(plain, ""));

        // The same through any_store (open_store, the tool, the C API): the HTTP store inside
        // cannot list at run time, so the snapshot answers instead of the server's store.7.
        const zx::any_store any = zx::open_store(server.url("zarrita.js/fixtures/v2/data.zarr"));
        REQUIRE_FALSE(any.listable());
        const zx::any_store view_any(zx::open_consolidated(any, ""), "consolidated");
        CHECK(zx::group<zx::any_store>::open(view_any, "").children().size() == 33);
        ZX_EXPECT_ERROR(
            zx::store_error, "zarrxt.store.7", "/",
            zx::group<zx::any_store>::open(
                zx::any_store(zx::open_consolidated(any, "", zx::consolidated_mode::never), "plain"), "")
                .children());
    }

    TEST_CASE("a read of many compressed chunks keeps their GETs in flight together (prefetch_objects)")
    {
        zxtest::temp_dir root("zarrxt-http");
        auto a = write_many(root.path(), 7919, 100003);
        {
            // A band of chunks left out: their 404s are fill values, also when prefetched.
            zx::filesystem_store fs{root.path().string()};
            zx::open<std::int32_t, 2>(fs, "many")
                .write({{0, 0}, {16, 96}}, xt::xtensor<std::int32_t, 2>(xt::zeros<std::int32_t>({16, 96})));
            xt::view(a, xt::range(0, 16), xt::all()) = 0;
        }
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        const zx::http_store s(nginx.url(), quick_options());
        auto arr = zx::open<std::int32_t, 2>(s, "many"); // inline executor: one worker
        const auto before = s.requests_started();
        CHECK(arr.read() == a);
        // 64 chunk GETs (8 of them 404s), each sent once, many in flight although one thread read.
        CHECK(s.requests_started() - before == 64);
        CHECK(s.peak_in_flight() >= 16);
        CHECK(s.prefetched_pending() == 0);
        // A region: only its chunks are fetched.
        const auto before_region = s.requests_started();
        CHECK(arr.read({{20, 30}, {40, 30}}) ==
              xt::xtensor<std::int32_t, 2>(xt::view(a, xt::range(20, 60), xt::range(30, 60))));
        CHECK(s.requests_started() - before_region == 3 * 3);
        // A read that fails midway (a corrupt chunk) leaves nothing announced behind.
        zxtest::write_file(root.path() / "many/c/5/3", "not zstd");
        zxtest::expect_error<zx::codec_error>([&] { (void)arr.read(); }, "zarrxt.codec.1", "many/c/5/3");
        CHECK(s.prefetched_pending() == 0);
    }

    TEST_CASE("drive: a thread the caller owns moves requests that nobody waits for; stopping it returns")
    {
        zxtest::temp_dir root("zarrxt-http");
        const auto a = write_many(root.path(), 6007, 99991);
        zxtest::nginx_server nginx(root.path());
        ZX_REQUIRE_SERVER(nginx);
        std::vector<std::string> keys;
        for (int i = 0; i < 8; ++i)
        {
            for (int j = 0; j < 8; ++j)
            {
                keys.push_back("many/c/" + std::to_string(i) + "/" + std::to_string(j));
            }
        }
        const auto started_within =
            [](const zx::http_store& st, std::uint64_t want, std::chrono::milliseconds limit)
        {
            const auto until = std::chrono::steady_clock::now() + limit;
            while (st.requests_started() < want && std::chrono::steady_clock::now() < until)
            {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            return st.requests_started();
        };
        // Without a driver, announced requests wait for a reader to wait.
        const zx::http_store idle(nginx.url(), quick_options());
        idle.prefetch_objects(keys, 1u << 20);
        CHECK(started_within(idle, 64, std::chrono::milliseconds(300)) == 0);
        idle.cancel_prefetch(keys);

        // With one, they are all sent (and answered) while this thread only sleeps.
        const zx::http_store s(nginx.url(), quick_options());
        std::jthread io([s](std::stop_token st) { s.drive(st); });
        s.prefetch_objects(keys, 1u << 20);
        CHECK(started_within(s, 64, std::chrono::seconds(10)) == 64);
        s.cancel_prefetch(keys);
        CHECK(s.prefetched_pending() == 0);
        // Reads go on while it drives (waiters leave the stepping to it), with the same values.
        zx::thread_pool pool(2);
        auto arr = zx::open<std::int32_t, 2, zx::dynamic_chain, zx::operation_index_cache<>,
                            zx::thread_pool_executor>(s, "many", zx::thread_pool_executor(pool));
        CHECK(arr.read() == a);
        CHECK(arr.read({{20, 30}, {40, 30}}) ==
              xt::xtensor<std::int32_t, 2>(xt::view(a, xt::range(20, 60), xt::range(30, 60))));
        // Idle (nothing queued, nothing in flight), the driver sleeps instead of stepping every
        // 50 ms: 400 ms cost at most a step or two (the one that saw the last answer, then one
        // long poll), not eight.
        const auto steps_before = s.engine_steps();
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        CHECK(s.engine_steps() - steps_before <= 2);
        // Stopping ends the loop at once (its poll is woken), and reads drive themselves again.
        const auto t0 = std::chrono::steady_clock::now();
        io.request_stop();
        io.join();
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
        CHECK(zx::open<std::int32_t, 2>(s, "many").read() == a);
    }

    TEST_CASE(
        "HTTPS with HTTP/2: certificates verified by default; a region's GETs multiplexed on one connection")
    {
        zxtest::temp_dir root("zarrxt-http");
        const auto a = write_many(root.path(), 104729, 65521);
        zxtest::nginx_server nginx(root.path(), zxtest::nginx_mode::https_h2);
        ZX_REQUIRE_SERVER(nginx);
        REQUIRE(nginx.url().rfind("https://", 0) == 0);
        {
            // The certificate is self-signed: refused unless verification is turned off.
            const zx::http_store strict(nginx.url(), quick_options());
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.4", "many/zarr.json",
                            zx::open<std::int32_t, 2>(strict, "many"));
        }
        zx::http_options o = quick_options();
        o.verify_tls = false;
        o.max_connections = 1; // HTTP/2 streams, not connections, carry the requests in flight
        const zx::http_store s(nginx.url(), o);
        auto arr = zx::open<std::int32_t, 2>(s, "many");
        CHECK(arr.read() == a);
        CHECK(s.peak_in_flight() >= 16);
        const auto log = nginx.access_log();
        std::size_t chunk_gets = 0;
        std::set<std::string> connections;
        for (const auto& line : log)
        {
            INFO(line);
            CHECK(line.rfind("HTTP/2.0 ", 0) == 0);
            std::istringstream in(line);
            std::string protocol, connection, uri;
            in >> protocol >> connection >> uri;
            if (uri.rfind("/many/c/", 0) == 0)
            {
                ++chunk_gets;
                connections.insert(connection);
            }
        }
        CHECK(chunk_gets == 64);
        CHECK(connections.size() == 1);
    }
}
