// The gzip and zlib codecs on whichever DEFLATE backend the build chose (detail/deflate.hpp):
// libdeflate when present, zlib otherwise. scripts/test --all builds its clang tree with
// -Dlibdeflate=disabled, so every case here runs on both backends; the first case checks that the
// build really uses the backend it asked for.
//
// References are independent of zarrxt: streams built by hand below, and streams from CPython's
// zlib and gzip modules (tests/peers/python_deflate.py: every level, stored/fixed/dynamic blocks,
// small windows, flushes, optional gzip header fields, several members), which also decodes what
// zarrxt encodes. Then deflate bombs, every truncation and single-byte corruption of a stream.
#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/codec/gzip.hpp>
#include <zarrxt/codec/zlib.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace zx = zarrxt;
namespace zc = zarrxt::codec;

namespace
{

std::vector<std::byte> deflate_bytes(std::initializer_list<int> v)
{
    std::vector<std::byte> out;
    for (int x : v)
    {
        out.push_back(static_cast<std::byte>(x));
    }
    return out;
}

std::vector<std::byte> deflate_bytes(const std::string& s)
{
    std::vector<std::byte> out(s.size());
    if (!s.empty()) // memcpy from/to null (the empty case) is undefined even for 0 bytes
    {
        std::memcpy(out.data(), s.data(), s.size());
    }
    return out;
}

std::string text_of(zx::byte_view v)
{
    return std::string(reinterpret_cast<const char*>(v.data()), v.size());
}

/// The two codecs behind one interface, by container name.
struct deflate_codec
{
    std::string container; ///< "gzip" or "zlib"
    int level = 6;

    void encode(zx::byte_view in, zx::buffer& out) const
    {
        if (container == "gzip")
        {
            zc::gzip{.level = level}.encode(in, out);
        }
        else
        {
            zc::zlib{.level = level}.encode(in, out);
        }
    }
    zx::mutable_byte_view decode(zx::mutable_byte_view in, zx::buffer& out, const zc::decode_hint& h) const
    {
        return container == "gzip" ? zc::gzip{}.decode(in, out, h) : zc::zlib{}.decode(in, out, h);
    }
    void decode_to(zx::mutable_byte_view in, zx::mutable_byte_view dest) const
    {
        container == "gzip" ? zc::gzip{}.decode_to(in, dest) : zc::zlib{}.decode_to(in, dest);
    }
};

/// Decodes `stream` (from a copy: decoders may work in place) with an exact size hint, with only
/// a cap, and straight into a destination of the expected size; each must give `want`.
void check_decodes_to(const deflate_codec& c, const std::string& stream, const std::string& want)
{
    zx::buffer out;
    {
        auto in = deflate_bytes(stream);
        CHECK(text_of(c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {want.size(), 1u << 30})) ==
              want);
    }
    {
        auto in = deflate_bytes(stream);
        CHECK(text_of(c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {std::nullopt, 1u << 30})) ==
              want);
    }
    {
        auto in = deflate_bytes(stream);
        std::vector<std::byte> dest(want.size());
        c.decode_to(zx::mutable_byte_view(in.data(), in.size()),
                    zx::mutable_byte_view(dest.data(), dest.size()));
        CHECK(text_of(zx::byte_view(dest.data(), dest.size())) == want);
    }
}

/// The reference streams of tests/peers/python_deflate.py, written once per process.
struct python_streams
{
    zxtest::temp_dir dir{"zarrxt-deflate"};
    zxtest::command_result result;
};

const python_streams& reference_streams()
{
    static const python_streams* s = []
    {
        auto* p = new python_streams;
        p->result =
            zxtest::run(zxtest::debian_python() + " " +
                        zxtest::quote(zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/python_deflate.py") +
                        " write " + zxtest::quote(p->dir.str()));
        return p;
    }();
    return *s;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size())
    {
        const std::size_t nl = text.find('\n', at);
        out.push_back(text.substr(at, nl - at));
        at = nl == std::string::npos ? text.size() : nl + 1;
    }
    return out;
}

#define ZX_REQUIRE_CPYTHON()                                                                                 \
    do                                                                                                       \
    {                                                                                                        \
        if (zxtest::debian_python().empty())                                                                 \
        {                                                                                                    \
            ZX_SKIP_PEER("/usr/bin/python3 (CPython's zlib and gzip modules) is not installed");             \
        }                                                                                                    \
    } while (0)

} // namespace

TEST_SUITE("deflate")
{
    TEST_CASE("the build uses the DEFLATE backend it asked for")
    {
        const std::string backend = ZARRXT_HAS_LIBDEFLATE ? "libdeflate" : "zlib";
        MESSAGE("gzip and zlib codecs backed by " << backend);
        // meson states which backend it configured (tests/meson.build); the headers must agree.
        const std::string expected = zxtest::env("ZARRXT_EXPECT_DEFLATE");
        REQUIRE_MESSAGE(!expected.empty(), "ZARRXT_EXPECT_DEFLATE is set by tests/meson.build");
        CHECK(backend == expected);
    }

    TEST_CASE("hand-built streams: stored blocks, fixed Huffman, empty payloads, gzip header fields")
    {
        // zlib: CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (check bits: 0x7801 % 31 == 0), one
        // final stored block (BFINAL 1, BTYPE 00) of LEN 5 / NLEN ~5, "hello", adler32("hello")
        // = 0x062c0215 big-endian.
        const auto stored = deflate_bytes(
            {0x78, 0x01, 0x01, 0x05, 0x00, 0xfa, 0xff, 'h', 'e', 'l', 'l', 'o', 0x06, 0x2c, 0x02, 0x15});
        check_decodes_to({"zlib"}, text_of(zx::byte_view(stored.data(), stored.size())), "hello");
        // zlib, empty payload in one fixed-Huffman block: 0x03 0x00 is BFINAL 1, BTYPE 01 and the
        // end-of-block code; adler32 of nothing is 1.
        const auto empty_zlib = deflate_bytes({0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
        check_decodes_to({"zlib"}, text_of(zx::byte_view(empty_zlib.data(), empty_zlib.size())), "");
        // gzip, empty payload: header (ID1 ID2 CM=8 FLG=0 MTIME=0 XFL=0 OS=3), the same empty
        // fixed block, CRC-32 0 and ISIZE 0.
        const auto empty_gzip = deflate_bytes(
            {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0});
        check_decodes_to({"gzip"}, text_of(zx::byte_view(empty_gzip.data(), empty_gzip.size())), "");
        // gzip with FNAME "a" (FLG 0x08) around a stored block of "hi": CRC-32("hi") = 0xd8932aac
        // little-endian, ISIZE 2.
        const auto named =
            deflate_bytes({0x1f, 0x8b, 0x08, 0x08, 0,   0,    0,    0,    0x00, 0xff, 'a',  0x00, 0x01, 0x02,
                           0x00, 0xfd, 0xff, 'h',  'i', 0xac, 0x2a, 0x93, 0xd8, 0x02, 0x00, 0x00, 0x00});
        check_decodes_to({"gzip"}, text_of(zx::byte_view(named.data(), named.size())), "hi");
        // A wrong adler32 / CRC-32 is corruption, never data.
        auto bad_adler = stored;
        bad_adler.back() ^= std::byte{1};
        zx::buffer out;
        ZX_EXPECT_ERROR(
            zx::codec_error, "zarrxt.codec.1", "",
            zc::zlib{}.decode(zx::mutable_byte_view(bad_adler.data(), bad_adler.size()), out, {5, 100}));
        auto bad_crc = named;
        bad_crc[19] ^= std::byte{1};
        ZX_EXPECT_ERROR(
            zx::codec_error, "zarrxt.codec.1", "",
            zc::gzip{}.decode(zx::mutable_byte_view(bad_crc.data(), bad_crc.size()), out, {2, 100}));
        // Containers are not interchangeable, and raw deflate (no container) is refused.
        auto stored_copy = stored;
        CHECK_THROWS_AS(
            zc::gzip{}.decode(zx::mutable_byte_view(stored_copy.data(), stored_copy.size()), out, {5, 100}),
            zx::codec_error);
        auto raw = deflate_bytes({0x01, 0x05, 0x00, 0xfa, 0xff, 'h', 'e', 'l', 'l', 'o'});
        CHECK_THROWS_AS(zc::zlib{}.decode(zx::mutable_byte_view(raw.data(), raw.size()), out, {5, 100}),
                        zx::codec_error);
        // A zlib stream asking for a preset dictionary (FDICT, FLG 0x20 -> 0x78 0xbb) is refused.
        auto fdict = deflate_bytes({0x78, 0xbb, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
        CHECK_THROWS_AS(zc::zlib{}.decode(zx::mutable_byte_view(fdict.data(), fdict.size()), out, {0, 100}),
                        zx::codec_error);
    }

    TEST_CASE("CPython's streams decode: every level, block type, window, flush and gzip header form")
    {
        ZX_REQUIRE_CPYTHON();
        const auto& ref = reference_streams();
        REQUIRE_MESSAGE(ref.result.status == 0, ref.result.output);
        const auto names = lines_of(zxtest::read_file(ref.dir.path() / "index.txt"));
        REQUIRE(names.size() > 50);
        for (const auto& name : names)
        {
            CAPTURE(name);
            const std::string container = name.substr(name.rfind('.') + 1);
            const std::string base = name.substr(0, name.rfind('.'));
            const std::string want = zxtest::read_file(ref.dir.path() / (base + ".in"));
            check_decodes_to({container}, zxtest::read_file(ref.dir.path() / name), want);
        }
    }

    TEST_CASE("zarrxt's streams decode in CPython, at every level and size")
    {
        ZX_REQUIRE_CPYTHON();
        const auto& ref = reference_streams();
        REQUIRE_MESSAGE(ref.result.status == 0, ref.result.output);
        zxtest::temp_dir dir("zarrxt-deflate-out");
        std::size_t written = 0;
        std::map<std::string, std::string> sources; // payload name -> bytes
        for (const char* p :
             {"empty.l0", "one.l0", "hello.l0", "text.l0", "noise.l0", "ramp.l0", "floats.l0"})
        {
            sources[std::string(p).substr(0, std::string(p).find('.'))] =
                zxtest::read_file(ref.dir.path() / (std::string(p) + ".in"));
        }
        // Sizes around the 64 KiB and 32 KiB boundaries of stored blocks and windows.
        zxtest::lcg rng(3);
        for (std::size_t n : {32767, 32768, 65535, 65536, 65537})
        {
            std::string s(n, '\0');
            for (auto& ch : s)
            {
                ch = static_cast<char>(rng.next() % 7);
            }
            sources["sized" + std::to_string(n)] = s;
        }
        for (const auto& source : sources)
        {
            const std::string& name = source.first;
            const std::string& payload = source.second;
            for (const char* container : {"gzip", "zlib"})
            {
                for (int level : {0, 1, 5, 9})
                {
                    const std::string stem = name + ".zx" + std::to_string(level);
                    zx::buffer enc;
                    deflate_codec{container, level}.encode(
                        zx::byte_view(reinterpret_cast<const std::byte*>(payload.data()), payload.size()),
                        enc);
                    zxtest::write_file(dir.path() / (stem + ".in"), payload);
                    zxtest::write_file(dir.path() / (stem + "." + container + ".zarrxt"),
                                       text_of(enc.view()));
                    ++written;
                    // And back through zarrxt itself.
                    check_decodes_to({container}, text_of(enc.view()), payload);
                }
            }
        }
        const auto r =
            zxtest::run(zxtest::debian_python() + " " +
                        zxtest::quote(zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/python_deflate.py") +
                        " check " + zxtest::quote(dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        CHECK(r.output.find("decoded " + std::to_string(written) + " streams written by zarrxt: 0 failed") !=
              std::string::npos);
    }

    TEST_CASE("encoding into the buffer that holds the input")
    {
        for (const char* container : {"gzip", "zlib"})
        {
            CAPTURE(container);
            const std::string payload(100000, 'z');
            zx::buffer b = zx::buffer::copy_of(
                zx::byte_view(reinterpret_cast<const std::byte*>(payload.data()), payload.size()));
            deflate_codec{container, 6}.encode(b.view(), b);
            check_decodes_to({container}, text_of(b.view()), payload);
        }
    }

    TEST_CASE("deflate bombs: a 64 MiB stream of 64 KB costs at most the cap")
    {
        ZX_REQUIRE_CPYTHON();
        const auto& ref = reference_streams();
        REQUIRE_MESSAGE(ref.result.status == 0, ref.result.output);
        for (const char* container : {"gzip", "zlib"})
        {
            CAPTURE(container);
            auto bomb = deflate_bytes(zxtest::read_file(ref.dir.path() / (std::string("bomb.") + container)));
            REQUIRE(bomb.size() < (1 << 17));
            const deflate_codec c{container};
            {
                // Only a cap: a limit error, and the buffer never grew beyond the cap (+1 byte
                // that detects "too long"), rounded up to the buffer's alignment.
                auto in = bomb;
                zx::buffer out;
                ZX_EXPECT_ERROR(
                    zx::limit_exceeded, "zarrxt.limit.1", "",
                    c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {std::nullopt, 1 << 20}));
                CHECK(out.capacity() <= zx::buffer::capacity_for((1 << 20) + 1));
            }
            {
                // An exact size smaller than the stream's: a size error, the buffer stays small.
                auto in = bomb;
                zx::buffer out;
                ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.2", "",
                                c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {4096, 1 << 30}));
                CHECK(out.capacity() <= zx::buffer::capacity_for(4096 + 1));
            }
            {
                // An exact size above the cap is refused before anything is allocated.
                auto in = bomb;
                zx::buffer out;
                ZX_EXPECT_ERROR(
                    zx::limit_exceeded, "zarrxt.limit.1", "",
                    c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {64u << 20, 1 << 20}));
                CHECK(out.capacity() == 0);
            }
            {
                // Straight into a destination: the stream may not write past it.
                auto in = bomb;
                std::vector<std::byte> dest(1 << 16);
                ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.2", "",
                                c.decode_to(zx::mutable_byte_view(in.data(), in.size()),
                                            zx::mutable_byte_view(dest.data(), dest.size())));
            }
        }
    }

    TEST_CASE("every truncation and every single-byte corruption is an error or the exact payload")
    {
        std::string payload;
        for (int i = 0; i < 300; ++i)
        {
            payload += "chunk " + std::to_string(i * i % 71) + ";";
        }
        for (const char* container : {"gzip", "zlib"})
        {
            CAPTURE(container);
            const deflate_codec c{container};
            zx::buffer enc;
            c.encode(zx::byte_view(reinterpret_cast<const std::byte*>(payload.data()), payload.size()), enc);
            const std::string stream = text_of(enc.view());
            int refused = 0;
            for (std::size_t n = 0; n < stream.size(); ++n)
            {
                CAPTURE(n);
                auto in = deflate_bytes(stream.substr(0, n));
                zx::buffer out;
                // A cut stream must never decode, with or without the expected size.
                CHECK_THROWS_AS(
                    c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {payload.size(), 1 << 20}),
                    zx::codec_error);
                in = deflate_bytes(stream.substr(0, n));
                CHECK_THROWS_AS(
                    c.decode(zx::mutable_byte_view(in.data(), in.size()), out, {std::nullopt, 1 << 20}),
                    zx::error);
                ++refused;
            }
            CHECK(refused == static_cast<int>(stream.size()));
            int silent = 0;
            for (std::size_t i = 0; i < stream.size(); ++i)
            {
                for (int flip : {0x01, 0x80, 0xff})
                {
                    auto in = deflate_bytes(stream);
                    in[i] ^= static_cast<std::byte>(flip);
                    zx::buffer out;
                    try
                    {
                        // Fields no decoder checks (gzip MTIME, XFL, OS, FTEXT; padding bits after
                        // the last block) may change and still give the payload; nothing else.
                        const auto got = text_of(c.decode(zx::mutable_byte_view(in.data(), in.size()), out,
                                                          {payload.size(), 1 << 20}));
                        if (got != payload)
                        {
                            ++silent;
                            FAIL_CHECK("byte " << i << " ^ " << flip
                                               << " decoded to other data without an error");
                        }
                    }
                    catch (const zx::error&)
                    {
                    }
                }
            }
            CHECK(silent == 0);
        }
    }
}
