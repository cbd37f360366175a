// Resource limits against hostile input: metadata nesting and size, decompression bombs (gzip,
// zlib, zstd with and without a content size, blosc, bz2, lzma), an lzma header asking for a 4 GiB
// dictionary, oversized chunks, shard indexes and reads.
// A limit must stop the work before the memory is spent: each bomb runs in a child process that
// reports the error it got and how far its peak resident memory rose.
#include "hostile_support.hpp"

#include <zlib.h>
#include <zstd.h>
#if ZARRXT_HAS_BLOSC
#include <blosc.h>
#endif
#if ZARRXT_HAS_BZ2
#include <bzlib.h>
#endif
#if ZARRXT_HAS_LZMA
#include <lzma.h>
#endif
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

namespace zx = zarrxt;
namespace fs = std::filesystem;
using zx::json;
using zxhostile::get_bytes;
using zxhostile::put_bytes;

constexpr std::uint64_t mib = 1ull << 20;
constexpr std::uint64_t gib = 1ull << 30;

/// A limits policy of its own (not default_limits with other values), with small caps so that a
/// bomb is stopped long before it could hurt and the test sees whether it was.
struct strict_limits
{
    std::uint64_t max_metadata_bytes = 64 * 1024;
    std::uint64_t max_json_depth = 16;
    std::uint64_t max_chunk_bytes = 8 * mib;
    std::uint64_t max_shard_index_bytes = 1 * mib;
    std::uint64_t max_bytes_in_flight = 64 * mib;
    std::uint64_t max_read_elements = 1ull << 24;
};
static_assert(zx::limits_policy<strict_limits>);

template <class T, std::size_t N, class Store>
auto open_strict(const Store& s, const std::string& path, const strict_limits& l = {})
{
    return zx::open<T, N, zx::dynamic_chain, zx::operation_index_cache<>, zx::inline_executor, strict_limits>(
        s, path, zx::inline_executor{}, l);
}

template <class T, std::size_t N, class Store>
auto create_strict(Store& s, const std::string& path, const zx::v3_options& o, const strict_limits& l = {})
{
    return zx::create<T, N, zx::dynamic_chain, zx::operation_index_cache<>, zx::inline_executor,
                      strict_limits>(s, path, o, zx::inline_executor{}, l);
}

using zxhostile::bytes_le;

/// A nesting of `depth` arrays (or objects), closed or left open.
std::string nested(std::size_t depth, bool objects, bool closed = true)
{
    std::string s;
    s.reserve(depth * 6);
    for (std::size_t i = 0; i < depth; ++i)
    {
        s += objects ? "{\"a\":" : "[";
    }
    s += "1";
    if (closed)
    {
        for (std::size_t i = 0; i < depth; ++i)
        {
            s += objects ? "}" : "]";
        }
    }
    return s;
}

/// A valid zarr.json whose attributes hold `inner` (raw JSON text).
std::string zarr_json_with_attributes(const std::string& inner)
{
    json doc = zxhostile::v3_array_doc();
    doc["attributes"] = json::object();
    std::string text = doc.dump();
    const std::string marker = "\"attributes\":{}";
    const auto at = text.find(marker);
    REQUIRE(at != std::string::npos);
    return text.substr(0, at) + "\"attributes\":{\"x\":" + inner + "}" + text.substr(at + marker.size());
}

/*********
 * bombs *
 *********/

/// `n` zero bytes through zlib's deflate (`window_bits` 15: zlib container, 31: gzip), streamed
/// from a small buffer so that generating a gigabyte bomb costs no gigabyte.
std::string deflate_zeros(std::uint64_t n, int window_bits)
{
    z_stream zs{};
    REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, window_bits, 9, Z_RLE) == Z_OK);
    const std::string zeros(mib, '\0');
    std::string out;
    std::string buf(256 * 1024, '\0');
    std::uint64_t left = n;
    int flush = Z_NO_FLUSH;
    do
    {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
        left -= take;
        flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
        zs.avail_in = static_cast<uInt>(take);
        do
        {
            zs.next_out = reinterpret_cast<Bytef*>(buf.data());
            zs.avail_out = static_cast<uInt>(buf.size());
            deflate(&zs, flush);
            out.append(buf.data(), buf.size() - zs.avail_out);
        } while (zs.avail_out == 0);
    } while (flush != Z_FINISH);
    deflateEnd(&zs);
    return out;
}

/// `n` zero bytes as one zstd frame; with `content_size` the header records n (pledged), without
/// it the frame is streamed and its header says nothing about its size.
std::string zstd_zeros(std::uint64_t n, bool content_size)
{
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
    if (content_size)
    {
        ZSTD_CCtx_setPledgedSrcSize(c, n);
    }
    const std::string zeros(mib, '\0');
    std::string out;
    std::string buf(ZSTD_CStreamOutSize(), '\0');
    std::uint64_t left = n;
    while (true)
    {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
        left -= take;
        const auto mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
        ZSTD_inBuffer in{zeros.data(), take, 0};
        std::size_t remaining;
        do
        {
            ZSTD_outBuffer o{buf.data(), buf.size(), 0};
            remaining = ZSTD_compressStream2(c, &o, &in, mode);
            REQUIRE(!ZSTD_isError(remaining));
            out.append(buf.data(), o.pos);
        } while (mode == ZSTD_e_end ? remaining != 0 : in.pos < in.size);
        if (mode == ZSTD_e_end)
        {
            break;
        }
    }
    ZSTD_freeCCtx(c);
    return out;
}

#if ZARRXT_HAS_BZ2
/// `n` zero bytes as one bzip2 stream (block size 100 kB), fed from a small buffer.
std::string bz2_zeros(std::uint64_t n)
{
    bz_stream s{};
    REQUIRE(BZ2_bzCompressInit(&s, 1, 0, 0) == BZ_OK);
    std::string zeros(mib, '\0');
    std::string out;
    std::string buf(256 * 1024, '\0');
    std::uint64_t left = n;
    int r = BZ_RUN_OK;
    do
    {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
        left -= take;
        s.next_in = zeros.data();
        s.avail_in = static_cast<unsigned>(take);
        do
        {
            s.next_out = buf.data();
            s.avail_out = static_cast<unsigned>(buf.size());
            r = BZ2_bzCompress(&s, left == 0 ? BZ_FINISH : BZ_RUN);
            out.append(buf.data(), buf.size() - s.avail_out);
        } while (left == 0 ? r != BZ_STREAM_END : s.avail_in != 0);
    } while (left != 0);
    BZ2_bzCompressEnd(&s);
    return out;
}
#endif

#if ZARRXT_HAS_LZMA
/// `n` zero bytes as one .xz stream (preset 0, CRC64), fed from a small buffer.
std::string xz_zeros(std::uint64_t n)
{
    lzma_stream s = LZMA_STREAM_INIT;
    REQUIRE(lzma_easy_encoder(&s, 0, LZMA_CHECK_CRC64) == LZMA_OK);
    const std::string zeros(mib, '\0');
    std::string out;
    std::string buf(256 * 1024, '\0');
    std::uint64_t left = n;
    lzma_ret r = LZMA_OK;
    do
    {
        const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, zeros.size()));
        left -= take;
        s.next_in = reinterpret_cast<const std::uint8_t*>(zeros.data());
        s.avail_in = take;
        do
        {
            s.next_out = reinterpret_cast<std::uint8_t*>(buf.data());
            s.avail_out = buf.size();
            r = lzma_code(&s, left == 0 ? LZMA_FINISH : LZMA_RUN);
            out.append(buf.data(), buf.size() - s.avail_out);
        } while (left == 0 ? r != LZMA_STREAM_END : s.avail_in != 0);
    } while (left != 0);
    lzma_end(&s);
    return out;
}
#endif

struct bomb_set
{
    std::string gzip;        ///< 1 GiB of zeros, as concatenated gzip members
    std::string zlib;        ///< 1 GiB of zeros, one zlib stream
    std::string zstd_sized;  ///< 4 GiB of zeros, one frame whose header says so
    std::string zstd_stream; ///< 4 GiB of zeros, one frame without a content size
    std::string zstd_frames; ///< 1 GiB of zeros as 1024 frames of 1 MiB, each with its size
    std::string zstd_forged; ///< a frame header declaring 2^60 bytes, then nothing useful
    std::string bz2;         ///< 256 MiB of zeros, one bzip2 stream
    std::string xz;          ///< 256 MiB of zeros, one .xz stream
};

const bomb_set& bombs()
{
    static const bomb_set b = []
    {
        bomb_set s;
        // gzip members may follow each other (RFC 1952); 64 members of 16 MiB make 1 GiB.
        const std::string member = deflate_zeros(16 * mib, 31);
        for (int i = 0; i < 64; ++i)
        {
            s.gzip += member;
        }
        s.zlib = deflate_zeros(gib, 15);
        s.zstd_sized = zstd_zeros(4 * gib, true);
        s.zstd_stream = zstd_zeros(4 * gib, false);
        const std::string frame = zstd_zeros(mib, true);
        for (int i = 0; i < 1024; ++i)
        {
            s.zstd_frames += frame;
        }
        // Magic, then a frame header descriptor with an 8-byte content size and no single segment,
        // a window descriptor, the size, and one empty raw last block.
        s.zstd_forged = std::string("\x28\xb5\x2f\xfd", 4);
        s.zstd_forged += static_cast<char>(0xc0);
        s.zstd_forged += static_cast<char>(0x58); // window descriptor: exponent 11, a 2 MiB window
        std::string size(8, '\0');
        zxhostile::put_le64(size, 0, std::uint64_t(1) << 60);
        s.zstd_forged += size;
        s.zstd_forged += std::string("\x01\x00\x00", 3); // last block, raw, 0 bytes
#if ZARRXT_HAS_BZ2
        s.bz2 = bz2_zeros(256 * mib);
#endif
#if ZARRXT_HAS_LZMA
        s.xz = xz_zeros(256 * mib);
#endif
        return s;
    }();
    return b;
}

/// Every bomb with the codec that decodes it.
struct bomb_case
{
    const char* codec;
    const std::string* bytes;
};

std::vector<bomb_case> bomb_cases()
{
    const auto& b = bombs();
    std::vector<bomb_case> cases{{"gzip", &b.gzip},        {"zlib", &b.zlib},        {"zstd", &b.zstd_sized},
                                 {"zstd", &b.zstd_stream}, {"zstd", &b.zstd_frames}, {"zstd", &b.zstd_forged}};
#if ZARRXT_HAS_BZ2
    cases.push_back({"numcodecs.bz2", &b.bz2});
#endif
#if ZARRXT_HAS_LZMA
    cases.push_back({"numcodecs.lzma", &b.xz});
#endif
    return cases;
}

struct bomb_report
{
    std::string outcome; ///< "<id> <key>" or "ok"
    std::optional<std::uint64_t> growth;
    double seconds = 0;
};

/// Read chunk [0, 0] of "a" in a child process; report the error and the peak memory growth.
template <class Store>
bomb_report read_in_child(const Store& s, const strict_limits& l)
{
    const auto r = zxhostile::run_isolated(
        [&]
        {
            const auto t0 = std::chrono::steady_clock::now();
            std::string outcome;
            const auto growth = zxhostile::peak_rss_growth(
                [&]
                {
                    outcome = zxhostile::outcome_of(
                        [&]
                        {
                            auto a = open_strict<float, 2>(s, "a", l);
                            (void)a.read({{0, 0}, {1, 1}});
                        });
                });
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return outcome + "|" + (growth ? std::to_string(*growth) : std::string("-")) + "|" +
                   std::to_string(secs);
        },
        std::chrono::seconds(120));
    CHECK_MESSAGE(!r.timed_out, "the read ran for more than 120 s");
    CHECK_MESSAGE(r.exited, "the child process died (signal " << r.signal << "), output: " << r.output);
    bomb_report rep;
    const auto p1 = r.output.find('|');
    const auto p2 = r.output.rfind('|');
    if (p1 == std::string::npos || p2 == p1)
    {
        rep.outcome = r.output;
        return rep;
    }
    rep.outcome = r.output.substr(0, p1);
    const std::string g = r.output.substr(p1 + 1, p2 - p1 - 1);
    if (g != "-")
    {
        rep.growth = std::stoull(g);
    }
    rep.seconds = std::stod(r.output.substr(p2 + 1));
    return rep;
}

/// An array "a" of float32 [64, 64] in one chunk (16 KiB decoded) with `codecs`, and `stored` as
/// that chunk's bytes.
zx::memory_store array_with_chunk(std::vector<zx::codec_spec> codecs, const std::string& stored)
{
    zx::memory_store s;
    (void)create_strict<float, 2>(
        s, "a", zx::v3_options{.shape = {64, 64}, .chunk_shape = {64, 64}, .codecs = std::move(codecs)});
    put_bytes(s, "a/c/0/0", stored);
    return s;
}

constexpr std::uint64_t memory_budget = 64 * mib;

/// Runs `f`, which must fail with limit_exceeded on `limit` naming one of `keys` (a cap may be
/// enforced at more than one point, e.g. at open or at the first write); returns the error.
template <class F>
std::optional<zx::limit_exceeded> expect_limit_at_one_of(F&& f, const std::string& limit,
                                                         std::initializer_list<std::string> keys)
{
    try
    {
        f();
    }
    catch (const zx::limit_exceeded& e)
    {
        const std::string what = e.what();
        INFO("what(): " << what);
        CHECK(e.id() == "zarrxt.limit.1");
        CHECK(e.limit_name() == limit);
        CHECK(std::find(keys.begin(), keys.end(), e.key()) != keys.end());
        CHECK(zxhostile::contains(what, "key \"" + e.key() + "\""));
        return e;
    }
    catch (const std::exception& e)
    {
        FAIL_CHECK("expected [zarrxt.limit.1] on " << limit << ", got: " << std::string(e.what()));
        return std::nullopt;
    }
    FAIL_CHECK("expected [zarrxt.limit.1] on " << limit << ", but nothing was thrown");
    return std::nullopt;
}

void check_report(const bomb_report& r, const std::string& expected_outcome)
{
    INFO("outcome: " << r.outcome << ", peak RSS growth "
                     << (r.growth ? std::to_string(*r.growth / 1024) + " KiB" : std::string("unknown"))
                     << ", " << r.seconds << " s");
    CHECK(r.outcome == expected_outcome);
    if (r.growth)
    {
        CHECK(*r.growth < memory_budget);
    }
    else
    {
        MESSAGE("peak memory not measured: /proc/self/clear_refs is not writable here");
    }
    CHECK(r.seconds < 60.0);
}

} // namespace

/*****************
 * JSON metadata *
 *****************/

TEST_SUITE("hostile/limits")
{
    TEST_CASE("a document nested 100000 deep is stopped by max_json_depth, not by the stack")
    {
        const std::size_t depth = 100000;
        struct doc_case
        {
            const char* key;
            std::string text;
        };
        const std::vector<doc_case> cases{
            {"a/zarr.json", nested(depth, false)},
            {"a/zarr.json", nested(depth, true)},
            {"a/zarr.json", nested(depth, false, false)},
            {"a/zarr.json", zarr_json_with_attributes(nested(depth, false))},
            {"a/zarr.json", zarr_json_with_attributes(nested(depth, true, false))},
            {"a/.zarray", nested(depth, true)},
        };
        for (const auto& c : cases)
        {
            INFO("key " << std::string(c.key) << ", document " << c.text.substr(0, 40) << "...");
            zx::memory_store s;
            put_bytes(s, c.key, c.text);
            const auto t0 = std::chrono::steady_clock::now();
            auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", c.key, zx::open<float, 2>(s, "a"));
            CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
            if (e)
            {
                CHECK(e->limit_name() == "max_json_depth");
                CHECK(e->limit() == 64);
                CHECK(e->value() == 65);
            }
        }
        // v2 attributes live in their own document.
        zx::memory_store s;
        put_bytes(s, "a/.zarray", zxhostile::v2_array_doc().dump());
        put_bytes(s, "a/.zattrs", "{\"x\":" + nested(depth, false) + "}");
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/.zattrs", zx::open<float, 2>(s, "a"));
    }

    TEST_CASE("max_json_depth allows exactly its number of nested containers")
    {
        zx::limit_values lv = zx::limit_values::from(zx::default_limits{});
        lv.max_json_depth = 8;
        for (std::size_t d = 1; d <= 12; ++d)
        {
            INFO("depth " << d);
            const std::string text = nested(d, d % 2 == 0);
            if (d <= 8)
            {
                CHECK_NOTHROW((void)zx::parse_document(zx::as_bytes(text), lv, "doc"));
            }
            else
            {
                auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "doc",
                                         zx::parse_document(zx::as_bytes(text), lv, "doc"));
                if (e)
                {
                    CHECK(e->value() == 9);
                    CHECK(e->limit() == 8);
                }
            }
        }
        // The policy value reaches open().
        strict_limits l;
        l.max_json_depth = 4; // zarr.json needs 4: document, chunk_grid, configuration, chunk_shape
        zx::memory_store s;
        put_bytes(s, "a/zarr.json", zxhostile::v3_array_doc().dump());
        CHECK_NOTHROW(open_strict<float, 2>(s, "a", l));
        put_bytes(s, "a/zarr.json", zarr_json_with_attributes("[[[1]]]"));
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/zarr.json",
                        open_strict<float, 2>(s, "a", l));
    }

    TEST_CASE("a metadata document larger than max_metadata_bytes")
    {
        strict_limits l;
        l.max_metadata_bytes = 4096;
        const std::string base = zxhostile::v3_array_doc().dump();
        auto padded = [&](std::size_t total)
        {
            // {"...": ..., "attributes":{"pad":"xxxx"}}: grow the pad string to the exact total.
            const std::string head = zarr_json_with_attributes("\"\"");
            REQUIRE(head.size() <= total);
            const auto at = head.find("\"x\":\"\"") + 5;
            return head.substr(0, at) + std::string(total - head.size(), 'p') + head.substr(at);
        };
        SUBCASE("exactly at the cap opens")
        {
            zx::memory_store s;
            const std::string doc = padded(4096);
            REQUIRE(doc.size() == 4096);
            put_bytes(s, "a/zarr.json", doc);
            CHECK_NOTHROW(open_strict<float, 2>(s, "a", l));
        }
        SUBCASE("one byte over the cap is refused, naming the metadata limit and the key")
        {
            for (std::size_t size : {std::size_t(4097), std::size_t(100000), std::size_t(8 * mib)})
            {
                INFO("document of " << size << " bytes");
                zx::memory_store s;
                put_bytes(s, "a/zarr.json", padded(size));
                auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/zarr.json",
                                         open_strict<float, 2>(s, "a", l));
                if (e)
                {
                    CHECK(e->limit_name() == "max_metadata_bytes");
                    CHECK(e->value() == size);
                    CHECK(e->limit() == 4096);
                }
            }
        }
        SUBCASE("v2 .zarray and .zattrs")
        {
            zx::memory_store s;
            json doc = zxhostile::v2_array_doc();
            doc["pad"] = std::string(5000, 'p'); // v2 tolerates unknown members; the size does not
            put_bytes(s, "a/.zarray", doc.dump());
            auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/.zarray",
                                     open_strict<float, 2>(s, "a", l));
            if (e)
            {
                CHECK(e->limit_name() == "max_metadata_bytes");
            }
            put_bytes(s, "b/.zarray", zxhostile::v2_array_doc().dump());
            put_bytes(s, "b/.zattrs", json{{"pad", std::string(5000, 'p')}}.dump());
            auto f = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "b/.zattrs",
                                     open_strict<float, 2>(s, "b", l));
            if (f)
            {
                CHECK(f->limit_name() == "max_metadata_bytes");
            }
        }
        SUBCASE("parse_document names the document it refuses")
        {
            zx::limit_values lv = zx::limit_values::from(l);
            const std::string big = padded(5000);
            auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "x/zarr.json",
                                     zx::parse_document(zx::as_bytes(big), lv, "x/zarr.json"));
            if (e)
            {
                CHECK(e->limit_name() == "max_metadata_bytes");
            }
        }
        SUBCASE("a huge sparse zarr.json on disk is refused without being read")
        {
            zxtest::temp_dir t("zarrxt-limits");
            fs::create_directories(t.path() / "a");
            const int fd = ::open((t.path() / "a" / "zarr.json").c_str(), O_CREAT | O_WRONLY, 0644);
            REQUIRE(fd >= 0);
            REQUIRE(::ftruncate(fd, static_cast<off_t>(64 * gib)) == 0);
            ::close(fd);
            zx::filesystem_store s(t.path());
            auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/zarr.json",
                                     zx::open<float, 2>(s, "a"));
            if (e)
            {
                CHECK(e->limit_name() == "max_metadata_bytes");
                CHECK(e->value() == 64 * gib);
            }
        }
    }
}

/**********************
 * decompression bombs *
 **********************/

TEST_SUITE("hostile/bombs")
{
    TEST_CASE("the bombs are what they claim to be")
    {
        const auto& b = bombs();
        INFO("gzip " << b.gzip.size() << " B, zlib " << b.zlib.size() << " B, zstd sized "
                     << b.zstd_sized.size() << " B, zstd streamed " << b.zstd_stream.size()
                     << " B, zstd frames " << b.zstd_frames.size() << " B");
        CHECK(b.gzip.size() < 2 * mib);
        CHECK(b.zlib.size() < 2 * mib);
        CHECK(b.zstd_sized.size() < 1 * mib);
        CHECK(b.zstd_stream.size() < 1 * mib);
        CHECK(ZSTD_getFrameContentSize(b.zstd_sized.data(), b.zstd_sized.size()) == 4 * gib);
        CHECK(ZSTD_getFrameContentSize(b.zstd_stream.data(), b.zstd_stream.size()) ==
              ZSTD_CONTENTSIZE_UNKNOWN);
        CHECK(ZSTD_getFrameContentSize(b.zstd_forged.data(), b.zstd_forged.size()) ==
              (std::uint64_t(1) << 60));
#if ZARRXT_HAS_BZ2
        INFO("bz2 " << b.bz2.size() << " B");
        CHECK(b.bz2.size() < 64 * 1024);
        // The bzip2 stream really inflates: its first megabyte of zeros comes out.
        {
            std::string out(mib, '\1');
            unsigned n = static_cast<unsigned>(out.size());
            std::string in = b.bz2;
            CHECK(BZ2_bzBuffToBuffDecompress(out.data(), &n, in.data(), static_cast<unsigned>(in.size()), 0, 0) ==
                  BZ_OUTBUFF_FULL);
            CHECK(out == std::string(mib, '\0'));
        }
#endif
#if ZARRXT_HAS_LZMA
        INFO("xz " << b.xz.size() << " B");
        CHECK(b.xz.size() < 1 * mib);
        // The .xz stream really inflates: its first megabyte of zeros comes out.
        {
            lzma_stream d = LZMA_STREAM_INIT;
            REQUIRE(lzma_stream_decoder(&d, UINT64_MAX, 0) == LZMA_OK);
            std::string out(mib, '\1');
            d.next_in = reinterpret_cast<const std::uint8_t*>(b.xz.data());
            d.avail_in = b.xz.size();
            d.next_out = reinterpret_cast<std::uint8_t*>(out.data());
            d.avail_out = out.size();
            CHECK(lzma_code(&d, LZMA_RUN) == LZMA_OK);
            CHECK(d.avail_out == 0);
            CHECK(out == std::string(mib, '\0'));
            lzma_end(&d);
        }
#endif
        // The first gzip member really inflates (16 MiB of zeros).
        std::string out(16 * mib + 1, '\1');
        z_stream zs{};
        REQUIRE(inflateInit2(&zs, 31) == Z_OK);
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(b.gzip.data()));
        zs.avail_in = static_cast<uInt>(b.gzip.size());
        zs.next_out = reinterpret_cast<Bytef*>(out.data());
        zs.avail_out = static_cast<uInt>(out.size());
        CHECK(inflate(&zs, Z_FINISH) == Z_STREAM_END);
        CHECK(zs.total_out == 16 * mib);
        inflateEnd(&zs);
    }

    TEST_CASE("a bomb where the chunk's decoded size is known fails as a size mismatch, without inflating")
    {
        for (const auto& c : bomb_cases())
        {
            INFO("codec " << std::string(c.codec) << ", bomb of " << c.bytes->size() << " bytes");
            auto s = array_with_chunk({bytes_le(), zx::codec_spec(c.codec)}, *c.bytes);
            check_report(read_in_child(s, strict_limits{}), "zarrxt.codec.2 a/c/0/0");
        }
    }

    TEST_CASE("a bomb of unknown decoded size stops at max_chunk_bytes")
    {
        // The outer compressor of [bytes, X, X] decodes to the inner stream, whose size is unknown.
        for (const auto& c : bomb_cases())
        {
            INFO("codec " << std::string(c.codec) << ", bomb of " << c.bytes->size() << " bytes");
            auto s =
                array_with_chunk({bytes_le(), zx::codec_spec(c.codec), zx::codec_spec(c.codec)}, *c.bytes);
            check_report(read_in_child(s, strict_limits{}), "zarrxt.limit.1 a/c/0/0");
        }
        // Behind a shard: the compressor after sharding_indexed decodes a whole shard of unknown size.
        zx::memory_store s;
        (void)create_strict<float, 2>(
            s, "a",
            zx::v3_options{.shape = {64, 64},
                           .chunk_shape = {64, 64},
                           .codecs = {zx::sharded({32, 32}, {bytes_le()}), zx::codec_spec("zstd")}});
        put_bytes(s, "a/c/0/0", bombs().zstd_stream);
        check_report(read_in_child(s, strict_limits{}), "zarrxt.limit.1 a/c/0/0");
    }

    TEST_CASE("an inner chunk bomb inside a shard names the shard key and the inner byte range")
    {
        const auto& b = bombs();
        zx::memory_store s;
        (void)create_strict<float, 2>(
            s, "a",
            zx::v3_options{.shape = {64, 64},
                           .chunk_shape = {64, 64},
                           .codecs = {zx::sharded({32, 32}, {bytes_le(), zx::codec_spec("zstd")})}});
        // One inner chunk holding the bomb, three missing; index bytes + crc32c at the end.
        std::string index(4 * 16 + 4, '\xff');
        zxhostile::put_le64(index, 0, 0);
        zxhostile::put_le64(index, 8, b.zstd_stream.size());
        zxhostile::put_le32(index, 64,
                            zx::detail::crc32c(zx::as_bytes(std::string_view(index).substr(0, 64))));
        put_bytes(s, "a/c/0/0", b.zstd_stream + index);
        check_report(read_in_child(s, strict_limits{}), "zarrxt.codec.2 a/c/0/0");
        auto a = open_strict<float, 2>(s, "a");
        auto e = ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.2", "a/c/0/0", a.read({{0, 0}, {1, 1}}));
        if (e)
        {
            REQUIRE(e->range().has_value());
            CHECK(e->range()->offset == 0);
            CHECK(e->range()->length == b.zstd_stream.size());
        }
    }

#if ZARRXT_HAS_BLOSC
    TEST_CASE("blosc frames declaring a large decoded size are checked before allocating")
    {
        // 256 MiB of zeros compress to a small frame whose header states the decoded size.
        const std::string zeros(256 * mib, '\0');
        std::string frame(zeros.size() + BLOSC_MAX_OVERHEAD, '\0');
        const int n = blosc_compress_ctx(9, BLOSC_SHUFFLE, 4, zeros.size(), zeros.data(), frame.data(),
                                         frame.size(), "lz4", 0, 1);
        REQUIRE(n > 0);
        frame.resize(static_cast<std::size_t>(n));
        INFO("blosc frame of " << frame.size() << " bytes");
        auto known = array_with_chunk({bytes_le(), zx::codec_spec("blosc")}, frame);
        check_report(read_in_child(known, strict_limits{}), "zarrxt.codec.2 a/c/0/0");
        auto unknown =
            array_with_chunk({bytes_le(), zx::codec_spec("blosc"), zx::codec_spec("blosc")}, frame);
        check_report(read_in_child(unknown, strict_limits{}), "zarrxt.limit.1 a/c/0/0");
    }
#endif
}

#if ZARRXT_HAS_LZMA
namespace
{

/// 16 KiB of zeros (one float32 [64, 64] chunk) in an lzma container whose header asks the decoder
/// for a dictionary of 4 GiB - 1: `.xz` (the LZMA2 property byte of the block header set to 40 and
/// the header's CRC32 recomputed) or `.lzma` (the header's dictionary size set to 2^32 - 1). Both
/// stay valid streams of the same data.
std::string lzma_forged_dictionary(bool xz)
{
    const std::string zeros(64 * 64 * 4, '\0');
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_options_lzma opt;
    REQUIRE(lzma_lzma_preset(&opt, 0) == false);
    REQUIRE((xz ? lzma_easy_encoder(&s, 0, LZMA_CHECK_CRC64) : lzma_alone_encoder(&s, &opt)) == LZMA_OK);
    std::string out(64 * 1024, '\0');
    s.next_in = reinterpret_cast<const std::uint8_t*>(zeros.data());
    s.avail_in = zeros.size();
    s.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    s.avail_out = out.size();
    REQUIRE(lzma_code(&s, LZMA_FINISH) == LZMA_STREAM_END);
    out.resize(out.size() - s.avail_out);
    lzma_end(&s);
    if (xz)
    {
        // Stream header (12 bytes), then the block header: size byte 0x02 (12 bytes), flags, filter
        // id 0x21 (LZMA2), property size 1, the property, padding, CRC32 of the first 8 bytes.
        REQUIRE(out[12] == '\x02');
        REQUIRE(out[14] == '\x21');
        out[16] = static_cast<char>(40);
        const auto crc = ::crc32(0, reinterpret_cast<const Bytef*>(out.data() + 12), 8);
        zxhostile::put_le32(out, 20, static_cast<std::uint32_t>(crc));
    }
    else
    {
        zxhostile::put_le32(out, 1, 0xffffffffu);
    }
    return out;
}

/// Caps this process's address space at its current size plus `extra` bytes (an allocation the
/// size of a forged dictionary then fails instead of being granted as untouched pages).
void limit_address_space(std::uint64_t extra)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    std::uint64_t vm_kib = 0;
    while (std::getline(status, line))
    {
        if (line.rfind("VmSize:", 0) == 0)
        {
            vm_kib = std::stoull(line.substr(7));
        }
    }
    const rlim_t cap = static_cast<rlim_t>(vm_kib * 1024 + extra);
    const rlimit r{cap, cap};
    ::setrlimit(RLIMIT_AS, &r);
}

} // namespace

TEST_SUITE("hostile/bombs")
{
    TEST_CASE("an lzma header asking for a 4 GiB dictionary gets one no larger than the chunk")
    {
        if (zxtest::env("ZARRXT_SANITIZE") == "1")
        {
            ZX_SKIP("an address-space limit and the sanitizers' shadow memory do not mix");
        }
        for (bool xz : {true, false})
        {
            INFO((xz ? ".xz stream" : ".lzma stream"));
            const std::string stream = lzma_forged_dictionary(xz);
            // The control: liblzma's own decoder allocates what the header says, and fails under a
            // 256 MiB address-space allowance. This is what makes the zarrxt check below meaningful.
            const auto control = zxhostile::run_isolated(
                [&] {
                    limit_address_space(256 * mib);
                    lzma_stream d = LZMA_STREAM_INIT;
                    if ((xz ? lzma_stream_decoder(&d, UINT64_MAX, 0) : lzma_alone_decoder(&d, UINT64_MAX)) != LZMA_OK)
                    {
                        return std::string("init failed");
                    }
                    std::string out(64 * 64 * 4, '\0');
                    d.next_in = reinterpret_cast<const std::uint8_t*>(stream.data());
                    d.avail_in = stream.size();
                    d.next_out = reinterpret_cast<std::uint8_t*>(out.data());
                    d.avail_out = out.size();
                    const lzma_ret r = lzma_code(&d, LZMA_FINISH);
                    lzma_end(&d);
                    return std::to_string(static_cast<int>(r));
                },
                std::chrono::seconds(60));
            CHECK(control.output == std::to_string(static_cast<int>(LZMA_MEM_ERROR)));
            // zarrxt reads the chunk under the same allowance: the dictionary it allocates is bounded by
            // the 16 KiB the chunk may decode to.
            const zx::json cfg = xz ? zx::json::object() : zx::json{{"format", 2}};
            auto s = array_with_chunk({bytes_le(), zx::codec_spec("numcodecs.lzma", cfg)}, stream);
            const auto r = zxhostile::run_isolated(
                [&] {
                    limit_address_space(256 * mib);
                    return zxhostile::outcome_of([&] {
                        const auto v = open_strict<float, 2>(s, "a").read({{0, 0}, {64, 64}});
                        if (v(63, 63) != 0.0f)
                        {
                            throw std::runtime_error("wrong value");
                        }
                    });
                },
                std::chrono::seconds(60));
            CHECK(r.output == "ok");
        }
    }
}
#endif

/*****************************
 * chunk, shard, region caps *
 *****************************/

namespace
{

/// A policy that means "no chunk cap" the way a user would write it.
struct no_chunk_cap_limits
{
    std::uint64_t max_metadata_bytes = 16 * mib;
    std::uint64_t max_json_depth = 64;
    std::uint64_t max_chunk_bytes = ~std::uint64_t(0);
    std::uint64_t max_shard_index_bytes = 256 * mib;
    std::uint64_t max_bytes_in_flight = ~std::uint64_t(0);
    std::uint64_t max_read_elements = ~std::uint64_t(0);
};

/// `data` as one zstd frame without a content size (a streaming writer's output).
std::string zstd_streamed(const std::string& data)
{
    ZSTD_CCtx* c = ZSTD_createCCtx();
    std::string out(ZSTD_compressBound(data.size()) + 64, '\0');
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue);
    while (ZSTD_compressStream2(c, &o, &in, ZSTD_e_end) != 0)
    {
    }
    ZSTD_freeCCtx(c);
    out.resize(o.pos);
    return out;
}

} // namespace

TEST_SUITE("hostile/limits")
{
    TEST_CASE("a limits policy with a chunk cap of 2^64-1 still decodes a frame of unknown size")
    {
        // The cap plus one must not wrap to zero and leave the decoder without room to grow.
        zx::memory_store s;
        auto a = zx::create<float, 2, zx::dynamic_chain, zx::operation_index_cache<>, zx::inline_executor,
                            no_chunk_cap_limits>(
            s, "a",
            zx::v3_options{.shape = {8, 8},
                           .chunk_shape = {8, 8},
                           .codecs = {bytes_le(), zx::codec_spec("zstd"), zx::codec_spec("zstd")}});
        xt::xtensor<float, 2> data = xt::ones<float>({8, 8}) * 3.0f;
        a.write({{0, 0}, {8, 8}}, data);
        // Re-wrap the outer frame as a streamed one: same bytes inside, no content size outside.
        const std::string outer = get_bytes(s, "a/c/0/0");
        std::string inner(ZSTD_getFrameContentSize(outer.data(), outer.size()), '\0');
        REQUIRE(ZSTD_decompress(inner.data(), inner.size(), outer.data(), outer.size()) == inner.size());
        put_bytes(s, "a/c/0/0", zstd_streamed(inner));
        const auto r = zxhostile::run_isolated(
            [&]
            {
                return zxhostile::outcome_of(
                    [&]
                    {
                        auto v = a.read({{0, 0}, {8, 8}});
                        if (v(7, 7) != 3.0f)
                        {
                            throw std::runtime_error("wrong value");
                        }
                    });
            },
            std::chrono::seconds(20));
        CHECK_MESSAGE(!r.timed_out,
                      "decoding a streamed zstd frame with max_chunk_bytes = 2^64-1 did not finish in 20 s");
        CHECK(r.output == "ok");
    }
}

TEST_SUITE("hostile/limits")
{
    TEST_CASE("an encoded chunk larger than max_chunk_bytes is refused before it is read")
    {
        strict_limits l;
        l.max_chunk_bytes = 1 * mib;
        zx::memory_store s;
        (void)create_strict<float, 2>(s, "a",
                                      zx::v3_options{.shape = {64, 64},
                                                     .chunk_shape = {64, 64},
                                                     .codecs = {bytes_le(), zx::codec_spec("zstd")}},
                                      l);
        put_bytes(s, "a/c/0/0", std::string(2 * mib, 'z'));
        auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/c/0/0",
                                 open_strict<float, 2>(s, "a", l).read({{0, 0}, {1, 1}}));
        if (e)
        {
            CHECK(e->limit_name() == "max_chunk_bytes");
            CHECK(e->value() == 2 * mib);
        }

        // A sparse 4 GiB chunk file costs nothing on disk; with the default 2 GiB cap it must not be read.
        zxtest::temp_dir t("zarrxt-limits");
        zx::filesystem_store fs_store(t.path());
        (void)zx::create<float, 2>(
            fs_store, "a",
            zx::v3_options{.shape = {64, 64}, .chunk_shape = {64, 64}, .codecs = {bytes_le()}});
        fs::create_directories(t.path() / "a" / "c" / "0");
        const int fd = ::open((t.path() / "a" / "c" / "0" / "0").c_str(), O_CREAT | O_WRONLY, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(::ftruncate(fd, static_cast<off_t>(4 * gib)) == 0);
        ::close(fd);
        const auto r = zxhostile::run_isolated(
            [&]
            {
                std::string out;
                const auto growth = zxhostile::peak_rss_growth(
                    [&] {
                        out = zxhostile::outcome_of(
                            [&] {
                                (void)zx::open<float, 2>(fs_store, "a").read({{0, 0}, {1, 1}});
                            });
                    });
                return out + "|" + (growth ? std::to_string(*growth) : std::string("0"));
            },
            std::chrono::seconds(120));
        CHECK(r.exited);
        INFO("child: " << r.output);
        CHECK(r.output.rfind("zarrxt.limit.1 a/c/0/0|", 0) == 0);
        const auto bar = r.output.find('|');
        if (bar != std::string::npos)
        {
            CHECK(std::stoull(r.output.substr(bar + 1)) < memory_budget);
        }
    }

    TEST_CASE("a chunk whose decoded size exceeds max_chunk_bytes is never allocated for a write")
    {
        // The cap may be enforced when the array is created or opened (the chunk geometry is known
        // then) or when the chunk is written; either way with the limit's name and the key of the
        // document or chunk concerned, and before anything chunk-sized is allocated or stored.
        strict_limits l;
        l.max_chunk_bytes = 1 * mib;
        xt::xtensor<std::uint8_t, 1> one = xt::ones<std::uint8_t>({1});
        SUBCASE("plain chunks")
        {
            zx::memory_store s;
            const auto e = expect_limit_at_one_of(
                [&]
                {
                    auto a = create_strict<std::uint8_t, 1>(
                        s, "a",
                        zx::v3_options{.shape = {8 * mib}, .chunk_shape = {4 * mib}, .codecs = {bytes_le()}},
                        l);
                    a.write({{0}, {1}}, one);
                },
                "max_chunk_bytes", {"a/zarr.json", "a/c/0"});
            if (e)
            {
                CHECK(e->value() == 4 * mib);
            }
            CHECK(!zx::get(s, "a/c/0").has_value());
        }
        SUBCASE("inner chunks of a shard")
        {
            zx::memory_store s;
            expect_limit_at_one_of(
                [&]
                {
                    auto a = create_strict<std::uint8_t, 1>(
                        s, "a",
                        zx::v3_options{.shape = {8 * mib},
                                       .chunk_shape = {8 * mib},
                                       .codecs = {zx::sharded({4 * mib}, {bytes_le()})}},
                        l);
                    a.write({{0}, {1}}, one);
                },
                "max_chunk_bytes", {"a/zarr.json", "a/c/0"});
            CHECK(!zx::get(s, "a/c/0").has_value());
        }
        SUBCASE("hostile metadata with a 2^50-byte chunk and the default limits")
        {
            // Run in a child: without a check, the write asks the allocator for a petabyte.
            zx::memory_store s;
            json doc = zxhostile::v3_array_doc();
            doc["data_type"] = "uint8";
            doc["shape"] = json::array({std::uint64_t(1) << 50});
            doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({std::uint64_t(1) << 50});
            put_bytes(s, "a/zarr.json", doc.dump());
            const auto r = zxhostile::run_isolated(
                [&]
                {
                    return zxhostile::outcome_of(
                        [&]
                        {
                            auto a = zx::open<std::uint8_t, 1>(s, "a");
                            a.write({{0}, {1}}, one);
                        });
                },
                std::chrono::seconds(60));
            INFO("child: " << r.output);
            CHECK_MESSAGE(r.exited, "the child process died (signal " << r.signal << ")");
            CHECK((r.output == "zarrxt.limit.1 a/zarr.json" || r.output == "zarrxt.limit.1 a/c/0"));
        }
    }

    TEST_CASE("a shard index larger than max_shard_index_bytes is refused at open")
    {
        strict_limits l; // 1 MiB of index: 65536 inner chunks
        zx::memory_store s;
        json doc = zxhostile::v3_array_doc();
        doc["data_type"] = "uint8";
        doc["shape"] = json::array({std::uint64_t(1) << 20});
        doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({std::uint64_t(1) << 20});
        doc["codecs"] = json::array({zxhostile::codec_json(
            "sharding_indexed",
            {{"chunk_shape", {1}},
             {"codecs", json::array({zxhostile::codec_json("bytes")})},
             {"index_codecs", json::array({zxhostile::codec_json("bytes", {{"endian", "little"}}),
                                           zxhostile::codec_json("crc32c")})}})});
        put_bytes(s, "a/zarr.json", doc.dump());
        auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a/zarr.json",
                                 open_strict<std::uint8_t, 1>(s, "a", l));
        if (e)
        {
            CHECK(e->limit_name() == "max_shard_index_bytes");
            CHECK(e->value() >= 16 * mib);
        }
        // 2^40 inner chunks with the default limits: a 16 TiB index, refused by arithmetic, not by
        // allocation.
        doc["shape"] = json::array({std::uint64_t(1) << 40});
        doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({std::uint64_t(1) << 40});
        put_bytes(s, "b/zarr.json", doc.dump());
        auto f = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "b/zarr.json",
                                 zx::open<std::uint8_t, 1>(s, "b"));
        if (f)
        {
            CHECK(f->limit_name() == "max_shard_index_bytes");
        }
    }

    TEST_CASE("a shard index entry larger than max_chunk_bytes is not read")
    {
        // A sparse shard file: 256 MiB of nothing, then an index whose first entry spans all of it.
        strict_limits l;
        l.max_chunk_bytes = 1 * mib;
        zxtest::temp_dir t("zarrxt-limits");
        zx::filesystem_store s(t.path());
        (void)create_strict<std::uint8_t, 1>(
            s, "a",
            zx::v3_options{.shape = {64}, .chunk_shape = {64}, .codecs = {zx::sharded({32}, {bytes_le()})}},
            l);
        const std::uint64_t payload = 256 * mib;
        std::string index(2 * 16 + 4, '\xff');
        zxhostile::put_le64(index, 0, 0);
        zxhostile::put_le64(index, 8, payload);
        zxhostile::put_le32(index, 32,
                            zx::detail::crc32c(zx::as_bytes(std::string_view(index).substr(0, 32))));
        fs::create_directories(t.path() / "a" / "c");
        const int fd = ::open((t.path() / "a" / "c" / "0").c_str(), O_CREAT | O_WRONLY, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(::ftruncate(fd, static_cast<off_t>(payload)) == 0);
        REQUIRE(::pwrite(fd, index.data(), index.size(), static_cast<off_t>(payload)) ==
                static_cast<ssize_t>(index.size()));
        ::close(fd);

        const auto r = zxhostile::run_isolated(
            [&]
            {
                std::string out;
                std::optional<zx::error_range> range;
                const auto growth = zxhostile::peak_rss_growth(
                    [&]
                    {
                        out = zxhostile::outcome_of(
                            [&]
                            {
                                try
                                {
                                    (void)open_strict<std::uint8_t, 1>(s, "a", l).read({{0}, {1}});
                                }
                                catch (const zx::error& e)
                                {
                                    range = e.range();
                                    throw;
                                }
                            });
                    });
                return out + "|" + (growth ? std::to_string(*growth) : std::string("0")) + "|" +
                       (range ? std::to_string(range->offset) + "+" + std::to_string(range->length)
                              : std::string("none"));
            },
            std::chrono::seconds(120));
        CHECK(r.exited);
        INFO("child: " << r.output);
        CHECK(r.output.rfind("zarrxt.limit.1 a/c/0|", 0) == 0);
        CHECK(zxhostile::contains(r.output, "|0+" + std::to_string(payload)));
        const auto b1 = r.output.find('|');
        const auto b2 = r.output.rfind('|');
        if (b1 != std::string::npos && b2 > b1)
        {
            CHECK(std::stoull(r.output.substr(b1 + 1, b2 - b1 - 1)) < memory_budget);
        }
    }

    TEST_CASE(
        "a partial write of a shard larger than max_chunk_bytes reads its index and ranges, never the whole")
    {
        strict_limits l;
        l.max_chunk_bytes = 1 * mib;
        zx::memory_store s;
        auto a =
            create_strict<std::uint8_t, 1>(s, "a",
                                           zx::v3_options{.shape = {2 * mib},
                                                          .chunk_shape = {2 * mib},
                                                          .codecs = {zx::sharded({64 * 1024}, {bytes_le()})}},
                                           l);
        // A valid 2 MiB shard is written, partly rewritten and read under the 1 MiB cap: no step
        // holds more than an inner chunk or a copy window of it.
        auto data = xt::xtensor<std::uint8_t, 1>::from_shape({2 * mib});
        for (std::size_t i = 0; i < data.size(); ++i)
        {
            data(i) = static_cast<std::uint8_t>(i * 7 % 251);
        }
        a.write({{0}, {2 * mib}}, data);
        xt::xtensor<std::uint8_t, 1> one = xt::ones<std::uint8_t>({1});
        a.reset_stats();
        a.write({{1000}, {1}}, one);
        data(1000) = 1;
        CHECK(a.stats().index_reads == 1);
        CHECK(a.stats().payload_bytes == 2 * mib); // 31 inner chunks copied, the touched one decoded
        CHECK(a.read() == data);
        // Garbage where the shard should be: its index (the last 32 * 16 + 4 bytes) fails its
        // checksum; nothing else of the 2 MiB is read.
        put_bytes(s, "a/c/0", std::string(2 * mib, 's'));
        a.reset_stats();
        ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.4", "a/c/0", a.write({{0}, {1}}, one));
        CHECK(a.stats().payload_bytes == 0);
    }

    TEST_CASE("a read of more elements than max_read_elements is refused before allocating")
    {
        strict_limits l;
        l.max_read_elements = 100;
        zx::memory_store s;
        (void)create_strict<float, 2>(s, "a", zx::v3_options{.shape = {64, 64}, .chunk_shape = {8, 8}}, l);
        auto a = open_strict<float, 2>(s, "a", l);
        CHECK(a.read({{0, 0}, {10, 10}}).size() == 100);
        auto e = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "a", a.read({{0, 0}, {11, 10}}));
        if (e)
        {
            CHECK(e->limit_name() == "max_read_elements");
            CHECK(e->value() == 110);
        }
        // Hostile shape, default limits: a whole-array read of 2^50 elements is refused, not attempted.
        json doc = zxhostile::v3_array_doc();
        doc["data_type"] = "uint8";
        doc["shape"] = json::array({std::uint64_t(1) << 25, std::uint64_t(1) << 25});
        doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({64, 64});
        put_bytes(s, "b/zarr.json", doc.dump());
        auto b = zx::open<std::uint8_t, 2>(s, "b");
        auto f = ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "b", b.read());
        if (f)
        {
            CHECK(f->limit_name() == "max_read_elements");
        }
    }
}
