// Variable-length strings and bytes (vlen.hpp, codec/vlen_utf8.hpp, codec/vlen_bytes.hpp): the chunk
// layout byte for byte, strict decoding of hostile chunks, and arrays of std::string over both data
// types in both formats (fill values, missing chunks, rewrites, selections, sharding, F order).
#include "array_support.hpp"
#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace zx = zarrxt;
using namespace std::string_literals;

namespace
{

/// A chunk in the vlen layout, written out by hand: u32le count, then u32le length + bytes each.
std::string vlen_chunk(const std::vector<std::string>& values, std::uint32_t count)
{
    auto u32 = [](std::uint32_t v)
    {
        return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff),
                           static_cast<char>((v >> 16) & 0xff), static_cast<char>(v >> 24)};
    };
    std::string out = u32(count);
    for (const auto& v : values)
    {
        out += u32(static_cast<std::uint32_t>(v.size())) + v;
    }
    return out;
}

zx::byte_view bytes_of(const std::string& s)
{
    return zx::byte_view(reinterpret_cast<const std::byte*>(s.data()), s.size());
}

std::string hex(const std::string& b)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : b)
    {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string stored(const zx::memory_store& s, const std::string& key)
{
    return zxtest::as_string_of(zx::get(s, key));
}

} // namespace

TEST_SUITE("vlen")
{
    TEST_CASE("the chunk layout: a count, then each value's length and bytes, little-endian")
    {
        zx::memory_store s;
        auto a = zx::create<std::string, 1>(s, "t",
                                            zx::v3_options{.shape = {3},
                                                           .chunk_shape = {3},
                                                           .codecs = {zx::codec_spec("bytes")},
                                                           .string = zx::variable_length_string()});
        a.write({{0}, {3}}, xt::xtensor<std::string, 1>{"a", "h\u00e9llo", ""});
        // 3 values: 1 byte "a", 6 bytes "h\xc3\xa9llo", 0 bytes.
        CHECK(stored(s, "t/c/0") == "\x03\0\0\0"s
                                    "\x01\0\0\0a"s
                                    "\x06\0\0\0h\xc3\xa9llo"s
                                    "\0\0\0\0"s);
        const zx::json doc = zx::json::parse(stored(s, "t/zarr.json"));
        CHECK(doc["data_type"] == "string");
        CHECK(doc["codecs"] == zx::json::parse(R"([{"name": "vlen-utf8"}])"));
        CHECK(doc["fill_value"] == "");
        // A chunk written by hand reads back, inner NULs and all.
        s.set("t/c/0", bytes_of(vlen_chunk({"x\0y"s, "", "\U0001F600"}, 3)));
        CHECK(a.read() == xt::xtensor<std::string, 1>{"x\0y"s, "", "\U0001F600"});

        auto b = zx::create<std::string, 1>(s, "b",
                                            zx::v2_options{.shape = {2},
                                                           .chunks = {2},
                                                           .compressor = std::nullopt,
                                                           .string = zx::variable_length_bytes()});
        b.write({{0}, {2}}, xt::xtensor<std::string, 1>{"\xff\x00\xfe"s, "z"});
        CHECK(stored(s, "b/0") == vlen_chunk({"\xff\x00\xfe"s, "z"}, 2));
        const zx::json bdoc = zx::json::parse(stored(s, "b/.zarray"));
        CHECK(bdoc["dtype"] == "|O");
        CHECK(bdoc["filters"] == zx::json::parse(R"([{"id": "vlen-bytes"}])"));
        CHECK(bdoc["fill_value"].is_null()); // as zarr-python 2.13 writes an empty bytes fill
        CHECK(b.read() == xt::xtensor<std::string, 1>{"\xff\x00\xfe"s, "z"});
    }

    TEST_CASE("hostile chunks: wrong counts, lengths past the end, trailing bytes, text that is no UTF-8")
    {
        zx::memory_store s;
        auto a = zx::create<std::string, 1>(s, "h",
                                            zx::v3_options{.shape = {4},
                                                           .chunk_shape = {2},
                                                           .codecs = {zx::codec_spec("bytes")},
                                                           .fill_value = "f",
                                                           .string = zx::variable_length_string()});
        a.write({{0}, {4}}, xt::xtensor<std::string, 1>{"a", "b", "c", "d"});
        struct bad
        {
            std::string chunk;
            const char* id;
        };
        const std::vector<bad> cases = {
            {"", "zarrxt.codec.5"},                                  // no count
            {"\x02\0\0"s, "zarrxt.codec.5"},                         // a short count
            {vlen_chunk({"a"}, 1), "zarrxt.codec.2"},                // one value for two elements
            {vlen_chunk({"a", "b", "c"}, 3), "zarrxt.codec.2"},      // three
            {"\x02\0\0\0\x01\0\0\0a\x01\0"s, "zarrxt.codec.5"},      // the second length cut short
            {"\x02\0\0\0\x01\0\0\0a\xff\xff\xff\xff"s, "zarrxt.codec.5"}, // 4 GiB claimed
            {"\x02\0\0\0\x01\0\0\0a\x05\0\0\0ab"s, "zarrxt.codec.5"},     // runs past the end
            {vlen_chunk({"a", "b"}, 2) + "x", "zarrxt.codec.3"},     // a byte after the last value
            {vlen_chunk({"a", "\xc3("}, 2), "zarrxt.codec.9"},        // a bad continuation byte
            {vlen_chunk({"a", "\xed\xa0\x80"}, 2), "zarrxt.codec.9"}, // a UTF-16 surrogate
            {vlen_chunk({"a", "\xc0\xaf"}, 2), "zarrxt.codec.9"},     // an overlong '/'
            {vlen_chunk({"a", "\xf4\x90\x80\x80"}, 2), "zarrxt.codec.9"}, // above U+10FFFF
        };
        for (const auto& c : cases)
        {
            CAPTURE(hex(c.chunk));
            s.set("h/c/1", bytes_of(c.chunk));
            ZX_EXPECT_ERROR(zx::codec_error, c.id, "h/c/1", a.read());
            // The collect policy reads the chunk as the fill value and says which chunk and why.
            const auto checked = a.read_checked({{0}, {4}});
            CHECK(checked.data == xt::xtensor<std::string, 1>{"a", "b", "f", "f"});
            REQUIRE(checked.problems.size() == 1);
            CHECK(checked.problems[0].key == "h/c/1");
            CHECK(checked.problems[0].id == c.id);
        }
        // vlen-bytes takes any bytes; the same layout rules hold.
        auto b = zx::create<std::string, 1>(s, "hb",
                                            zx::v3_options{.shape = {2},
                                                           .chunk_shape = {2},
                                                           .codecs = {zx::codec_spec("bytes")},
                                                           .string = zx::variable_length_bytes()});
        s.set("hb/c/0", bytes_of(vlen_chunk({"\xc3(", "\xff"}, 2)));
        CHECK(b.read() == xt::xtensor<std::string, 1>{"\xc3(", "\xff"});
        s.set("hb/c/0", bytes_of(vlen_chunk({"a", "b"}, 2) + "\0"s));
        ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.3", "hb/c/0", b.read());
    }

    TEST_CASE("values are kept within the operation's max_bytes_in_flight")
    {
        zx::memory_store s;
        auto a = zx::create<std::string, 1>(s, "m",
                                            zx::v3_options{.shape = {4},
                                                           .chunk_shape = {1},
                                                           .codecs = {zx::codec_spec("bytes")},
                                                           .string = zx::variable_length_string()});
        const std::string big(1000, 'x');
        a.write({{0}, {4}}, xt::xtensor<std::string, 1>{big, big, big, big});
        zx::default_limits tight;
        tight.max_bytes_in_flight = 2500; // two chunks' values, not four
        auto t = zx::open<std::string, 1, zx::dynamic_chain, zx::operation_index_cache<>, zx::inline_executor,
                          zx::default_limits>(s, "m", zx::inline_executor{}, tight);
        CHECK(t.read({{0}, {2}}) == xt::xtensor<std::string, 1>{big, big});
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "m/c/2", t.read());
    }

    TEST_CASE("std::string arrays of both types in v2 and v3: fills, missing chunks, rewrites, selections, "
              "sharding, F order, all-fill chunks not stored")
    {
        zx::memory_store s;
        // v3 string, sharded with a compressor inside: the bytes codec of the default inner chain
        // becomes vlen-utf8.
        auto a = zx::create<std::string, 2>(
            s, "s",
            zx::v3_options{.shape = {5, 6},
                           .chunk_shape = {4, 4},
                           .codecs = {zx::sharded({2, 2})},
                           .fill_value = "n/a",
                           .string = zx::variable_length_string()});
        const zx::json doc = zx::json::parse(stored(s, "s/zarr.json"));
        CHECK(doc["codecs"][0]["configuration"]["codecs"][0] == zx::json::parse(R"({"name": "vlen-utf8"})"));
        CHECK(doc["fill_value"] == "n/a");
        CHECK(a.fill_value() == "n/a");
        xt::xtensor<std::string, 2> v = {{"a", "\u65e5\u672c", "", "n/a"}, {"long value " + std::string(300, 'q'), "x\0y"s, "z", "w"}};
        a.write({{1, 1}, {2, 4}}, v);
        a.write({{2, 2}, {1, 1}}, xt::xtensor<std::string, 2>{{"new"}}); // rewrites one inner chunk
        v(1, 1) = "new";
        auto all = zx::open<std::string, 2>(s, "s").read();
        for (std::size_t i = 0; i < 2; ++i)
        {
            for (std::size_t j = 0; j < 4; ++j)
            {
                CHECK(all(i + 1, j + 1) == v(i, j));
            }
        }
        CHECK(all(0, 0) == "n/a");
        CHECK(all(4, 5) == "n/a");
        CHECK(a.at(2, 1) == v(1, 0));
        CHECK(a.read(xt::keep(1, 2), 2) == xt::xtensor<std::string, 1>{v(0, 1), v(1, 1)});
        a.write(zx::select(xt::keep(4), xt::keep(0, 5)), xt::xtensor<std::string, 2>{{"p", "q"}});
        CHECK(a.read_points({{4, 0}, {4, 5}, {4, 1}}) == xt::xtensor<std::string, 1>{"p", "q", "n/a"});
        // Only values equal to the fill: the chunk is not stored (the inner chunks of shard 1/1
        // hold nothing else).
        zx::memory_store s2;
        auto e = zx::create<std::string, 1>(
            s2, "e",
            zx::v3_options{.shape = {4}, .chunk_shape = {2}, .fill_value = "z", .string = zx::variable_length_string()});
        e.write({{0}, {4}}, xt::xtensor<std::string, 1>{"z", "z", "a", "z"});
        CHECK_FALSE(s2.stat("e/c/0").has_value());
        CHECK(s2.stat("e/c/1").has_value());
        e.write({{2}, {1}}, xt::xtensor<std::string, 1>{"z"});
        CHECK_FALSE(s2.stat("e/c/1").has_value());

        // v2 |O with vlen-utf8, F order, blosc; text that is no UTF-8 is refused before anything
        // is written.
        auto f = zx::create<std::string, 2>(s, "f",
                                            zx::v2_options{.shape = {3, 2},
                                                           .chunks = {2, 2},
                                                           .compressor = zx::codec_spec("blosc", {{"cname", "lz4"}}),
                                                           .fill_value = "-",
                                                           .order = 'F',
                                                           .string = zx::variable_length_string()});
        const zx::json fdoc = zx::json::parse(stored(s, "f/.zarray"));
        CHECK(fdoc["dtype"] == "|O");
        CHECK(fdoc["filters"] == zx::json::parse(R"([{"id": "vlen-utf8"}])"));
        CHECK(fdoc["fill_value"] == "-");
        CHECK(fdoc["order"] == "F");
        f.write({{0, 0}, {2, 2}}, xt::xtensor<std::string, 2>{{"00", "01"}, {"10", "11"}});
        CHECK(f.read() == xt::xtensor<std::string, 2>{{"00", "01"}, {"10", "11"}, {"-", "-"}});
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        f.write({{2, 0}, {1, 2}}, xt::xtensor<std::string, 2>{{"ok", "\xff"}}));
        CHECK_FALSE(s.stat("f/1.0").has_value());

        // v3 bytes in F order: zarr-python 3's data type name "bytes" and a base64 fill.
        auto b = zx::create<std::string, 2>(s, "b",
                                            zx::v3_options{.shape = {2, 3},
                                                           .chunk_shape = {2, 2},
                                                           .codecs = {zx::codec_spec("transpose", {{"order", {1, 0}}}),
                                                                      zx::codec_spec("bytes"), zx::codec_spec("gzip")},
                                                           .fill_value = "\x01\x02\x03",
                                                           .string = zx::variable_length_bytes()});
        const zx::json bdoc = zx::json::parse(stored(s, "b/zarr.json"));
        CHECK(bdoc["data_type"] == "bytes");
        CHECK(bdoc["fill_value"] == "AQID");
        b.write({{0, 0}, {2, 2}}, xt::xtensor<std::string, 2>{{"\xff"s, ""}, {"\0"s, "ab"}});
        CHECK(b.read() == xt::xtensor<std::string, 2>{{"\xff"s, "", "\x01\x02\x03"}, {"\0"s, "ab", "\x01\x02\x03"}});

        // resize keeps the values and clears the cut part of an edge chunk to the fill value.
        f.resize({1, 2});
        f.resize({3, 2});
        CHECK(f.read() == xt::xtensor<std::string, 2>{{"00", "01"}, {"-", "-"}, {"-", "-"}});
    }

    TEST_CASE("metadata: the names, fill forms and object codecs readers meet; what is refused")
    {
        zx::memory_store s;
        auto put = [&](const std::string& key, const std::string& doc) { s.set(key, bytes_of(doc)); };
        // v3 "bytes" and its older name, fill as byte values or base64.
        for (const std::string dt : {R"("bytes")", R"("variable_length_bytes")", R"({"name": "bytes"})"})
        {
            CAPTURE(dt);
            for (const std::string fill : {R"([1, 2, 3])", R"("AQID")"})
            {
                put("v/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": )" + dt +
                                       R"(, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                     "chunk_key_encoding": {"name": "default"}, "fill_value": )" +
                                       fill + R"(, "codecs": [{"name": "vlen-bytes", "configuration": {}}]})");
                auto a = zx::open<std::string, 1>(s, "v");
                CHECK(a.metadata().dtype == zx::dtype_id::vlen_bytes);
                CHECK(a.fill_value() == "\x01\x02\x03");
                CHECK(a.read() == xt::xtensor<std::string, 1>{"\x01\x02\x03", "\x01\x02\x03"});
            }
        }
        // v2 |O: zarr-python 2.13 turns the default fill 0 of dtype=str into "0"; older writers
        // stored the number itself.
        auto v2 = [&](const std::string& fill, const std::string& filters)
        {
            put("o/.zarray", R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "|O", "order": "C",
                 "compressor": null, "fill_value": )" +
                                 fill + R"(, "filters": )" + filters + "}");
        };
        v2("0", R"([{"id": "vlen-utf8"}])");
        CHECK(zx::open<std::string, 1>(s, "o").fill_value() == "0");
        v2("\"0\"", R"([{"id": "vlen-utf8"}])");
        CHECK(zx::open<std::string, 1>(s, "o").read() == xt::xtensor<std::string, 1>{"0", "0"});
        v2("null", R"([{"id": "vlen-bytes"}])");
        CHECK(zx::open<std::string, 1>(s, "o").fill_value() == "");
        // Object codecs zarrxt has no values for, or none: metadata.5 naming what is there.
        for (const std::string filters :
             {R"([{"id": "json2"}])", R"([{"id": "pickle"}])", R"([{"id": "msgpack2"}])", R"([{"id": "vlen-array", "dtype": "<i4"}])",
              R"(null)", R"([])", R"([{"id": "zlib"}, {"id": "vlen-utf8"}])"})
        {
            CAPTURE(filters);
            v2("null", filters);
            ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.5", "o/.zarray", zx::open_any(s, "o"));
        }
        // A string array with the bytes codec, and a vlen codec on numbers, are refused at open.
        put("x/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "string",
              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
              "chunk_key_encoding": {"name": "default"}, "fill_value": "", "codecs": [{"name": "bytes"}]})");
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.12", "x/zarr.json", zx::open_any(s, "x"));
        put("x/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "int32",
              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
              "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "vlen-utf8"}]})");
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.12", "x/zarr.json", zx::open_any(s, "x"));
        // Fill values that are not of the type.
        put("x/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "string",
              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
              "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "vlen-utf8"}]})");
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "x/zarr.json", zx::open_any(s, "x"));
        put("x/zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "bytes",
              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
              "chunk_key_encoding": {"name": "default"}, "fill_value": [1, 256], "codecs": [{"name": "vlen-bytes"}]})");
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "x/zarr.json", zx::open_any(s, "x"));
        // Reading untyped bytes of a variable-length array needs an arena for the values.
        v2("null", R"([{"id": "vlen-utf8"}])");
        auto any = zx::open_any(s, "o");
        std::vector<zx::vlen_element> raw(2);
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        any.read_bytes({0}, {2}, reinterpret_cast<std::byte*>(raw.data())));
        zx::value_arena arena;
        any.read_bytes({0}, {2}, reinterpret_cast<std::byte*>(raw.data()), nullptr, &arena);
        CHECK(raw[0].size == 0);
        CHECK(raw[1].size == 0);
    }
}
