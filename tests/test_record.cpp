// Structured records (record.hpp): the packed layout and its byte swapping, worked out by hand;
// v2 field lists and v3 struct documents, their fill values, C++ structs described by
// ZARRXT_RECORD read and written in both formats, and the documents that are refused.
#include "array_support.hpp"
#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace zx = zarrxt;

struct rec_point
{
    std::int32_t x;
    double y;
    std::array<std::uint16_t, 2> v;

    bool operator==(const rec_point&) const = default;
};
ZARRXT_RECORD(rec_point, x, y, v);

struct rec_inner
{
    float a;
    std::int64_t b;

    bool operator==(const rec_inner&) const = default;
};
ZARRXT_RECORD(rec_inner, a, b);

struct rec_outer
{
    rec_inner p;
    std::int8_t k;
    std::chrono::sys_time<std::chrono::seconds> t;

    bool operator==(const rec_outer&) const = default;
};
ZARRXT_RECORD(rec_outer, p, k, t);

struct rec_other
{
    std::int32_t x;
    float y; // not the stored float64
};
ZARRXT_RECORD(rec_other, x, y);

namespace
{

std::string record_stored(const zx::memory_store& s, const std::string& key)
{
    return zxtest::as_string_of(zx::get(s, key));
}

void record_put(zx::memory_store& s, const std::string& key, const std::string& text)
{
    s.set(key, zx::byte_view(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

zx::record_field record_field_of(std::string name, zx::dtype_id id, std::vector<std::uint64_t> shape = {})
{
    zx::record_field f;
    f.name = std::move(name);
    f.type.id = id;
    f.shape = std::move(shape);
    return f;
}

} // namespace

TEST_SUITE("record")
{
    TEST_CASE("data_type: one value for a type; the kind converts both ways; equality sees every parameter")
    {
        const zx::data_type f32 = zx::dtype_id::float32;
        CHECK(f32 == zx::dtype_id::float32);
        CHECK(zx::dtype_id::float32 == f32);
        CHECK(f32 != zx::dtype_id::int32);
        const zx::dtype_id kind = f32;
        CHECK(kind == zx::dtype_id::float32);
        CHECK((f32.name() == "float32" && f32.size() == 4 && f32.swap_word() == 4 && !f32.variable()));
        const zx::data_type text = zx::dtype_id::string;
        CHECK((text.variable() && text.size() == sizeof(zx::vlen_element) && text.swap_word() == 1));
        // The parameters: units, element sizes and fields make types of one kind differ.
        const zx::data_type ns(zx::dtype_id::datetime64, zx::time_unit{zx::time_base::ns, 1}, 0, {});
        const zx::data_type us(zx::dtype_id::datetime64, zx::time_unit{zx::time_base::us, 1}, 0, {});
        CHECK((ns == zx::dtype_id::datetime64 && us == zx::dtype_id::datetime64));
        CHECK_FALSE(ns == us);
        CHECK(ns == zx::data_type(zx::dtype_id::datetime64, zx::time_unit{zx::time_base::ns, 1}, 0, {}));
        const zx::data_type s7(zx::dtype_id::fixed_bytes, {}, 7, {});
        CHECK(s7.size() == 7);
        CHECK(s7 != zx::data_type(zx::dtype_id::fixed_bytes, {}, 8, {}));
        std::vector<zx::record_field> xy = {record_field_of("x", zx::dtype_id::int32),
                                            record_field_of("y", zx::dtype_id::float64)};
        std::vector<zx::record_field> xz = {record_field_of("x", zx::dtype_id::int32),
                                            record_field_of("z", zx::dtype_id::float64)};
        const std::size_t size = zx::layout_record(xy);
        CHECK(zx::layout_record(xz) == size);
        const zx::data_type r_xy(zx::dtype_id::structured, {}, size, xy);
        CHECK(r_xy.size() == 12);
        CHECK(r_xy == zx::data_type(zx::dtype_id::structured, {}, size, xy));
        CHECK(r_xy != zx::data_type(zx::dtype_id::structured, {}, size, xz));
        // A switch reads the kind.
        auto kind_name = [](const zx::data_type& t)
        {
            switch (t)
            {
                case zx::dtype_id::structured:
                    return "record";
                default:
                    return "other";
            }
        };
        CHECK(std::string(kind_name(r_xy)) == "record");
        CHECK(std::string(kind_name(f32)) == "other");
    }

    TEST_CASE("codec chains keep a type's parameters through codecs that keep its kind")
    {
        // A transpose before `bytes` once rebound the chain to the bare kind, so a <U3 chunk was
        // expected to hold 0 bytes; each chain must size the stored chunk from the whole type.
        zx::codec::codec_context ctx;
        ctx.chunk_shape = {2, 3};
        const zx::json order = {{"order", {1, 0}}};
        ctx.dtype = zx::data_type(zx::dtype_id::fixed_utf32, {}, 12, {});
        auto strings = zx::dynamic_chain::from_specs(
            {zx::codec_spec("transpose", order), zx::codec_spec("bytes", {{"endian", "little"}})}, ctx);
        CHECK(strings.fixed_encoded_size() == std::optional<std::size_t>(2 * 3 * 12));
        std::vector<zx::record_field> xy = {record_field_of("x", zx::dtype_id::int32),
                                            record_field_of("y", zx::dtype_id::float64)};
        const std::size_t size = zx::layout_record(xy);
        ctx.dtype = zx::data_type(zx::dtype_id::structured, {}, size, xy);
        ctx.record_runs = zx::record_swap_runs(xy);
        auto records = zx::dynamic_chain::from_specs(
            {zx::codec_spec("transpose", order), zx::codec_spec("bytes", {{"endian", "little"}})}, ctx);
        CHECK(records.fixed_encoded_size() == std::optional<std::size_t>(2 * 3 * 12));
        // The static chains' rule: the type passes unchanged unless a codec stores another kind.
        struct keeps_kind
        {
        };
        struct stores_bytes
        {
            zx::dtype_id encoded_dtype(zx::dtype_id) const { return zx::dtype_id::uint8; }
        };
        CHECK(zx::codec::encoded_type_of(keeps_kind{}, ctx.dtype) == ctx.dtype);
        const zx::data_type f64 = zx::dtype_id::float64;
        CHECK(zx::codec::encoded_type_of(stores_bytes{}, f64) == zx::data_type(zx::dtype_id::uint8));
    }

    TEST_CASE("layout: fields packed in order, subarrays and nested records included; the scalars to swap")
    {
        std::vector<zx::record_field> fields = {record_field_of("x", zx::dtype_id::int32),
                                                record_field_of("y", zx::dtype_id::float64, {3}),
                                                record_field_of("n", zx::dtype_id::structured)};
        fields[2].type.fields = {record_field_of("a", zx::dtype_id::int8),
                                 record_field_of("b", zx::dtype_id::uint16)};
        // x: 4 bytes at 0; y: 3 x 8 at 4; n: {a: 1 at 28, b: 2 at 29}; 31 bytes.
        CHECK(zx::layout_record(fields) == 31);
        CHECK(fields[1].offset == 4);
        CHECK(fields[1].size == 24);
        CHECK(fields[2].offset == 28);
        CHECK(fields[2].type.fields[1].offset == 1);
        const auto runs = zx::record_swap_runs(fields);
        REQUIRE(runs.size() == 3);
        CHECK((runs[0].offset == 0 && runs[0].word == 4 && runs[0].count == 1));
        CHECK((runs[1].offset == 4 && runs[1].word == 8 && runs[1].count == 3));
        CHECK((runs[2].offset == 29 && runs[2].word == 2 && runs[2].count == 1));
        CHECK(zx::describe_fields(fields) == "{x: int32, y: float64[3], n: {a: int8, b: uint16}}");
        // A described struct's fields: the same rules.
        const auto described = zx::record_fields_of<rec_point>();
        CHECK(zx::describe_fields(described) == "{x: int32, y: float64, v: uint16[2]}");
        CHECK(described.back().offset == 12);
        CHECK(described.back().size == 4);
    }

    TEST_CASE("v2 records: mixed byte orders stored as stated, subarrays, a base64 fill value")
    {
        zx::memory_store s;
        // What numpy stores for [("x", "<i4"), ("y", ">f8"), ("s", "|S3")]: (1, 2.5, b"ab") is
        // 01 00 00 00 | 40 04 00 00 00 00 00 00 | 61 62 00; the fill (7, 1.5, b"") base64 of
        // 07 00 00 00 3f f8 00 .. 00 00 00 00 is "BwAAAD/4AAAAAAAAAAAA".
        record_put(s, "r/.zarray",
                   R"({"zarr_format": 2, "shape": [3], "chunks": [2], "order": "C", "compressor": null,
            "filters": null, "fill_value": "BwAAAD/4AAAAAAAAAAAA",
            "dtype": [["x", "<i4"], ["y", ">f8"], ["s", "|S3"]]})");
        std::string chunk =
            std::string("\x01\0\0\0", 4) + std::string("\x40\x04\0\0\0\0\0\0", 8) + std::string("ab\0", 3);
        chunk +=
            std::string("\xfe\xff\xff\xff", 4) + std::string("\xc0\0\0\0\0\0\0\0", 8) + std::string("xyz", 3);
        record_put(s, "r/0", chunk);
        auto a = zx::open_any(s, "r");
        REQUIRE(a.dtype() == zx::dtype_id::structured);
        CHECK(a.metadata().dtype.fixed_size == 15);
        const zx::data_type t = a.metadata().dtype; // the descriptor as one value
        CHECK(t.name() == "struct");
        CHECK(t.size() == 15);
        CHECK_FALSE(t.variable());
        CHECK(t.fields.size() == 3);
        std::vector<std::byte> raw(3 * 15);
        a.read_bytes({0}, {3}, raw.data());
        auto field_at = [&](std::size_t i, std::size_t off, auto v)
        {
            std::memcpy(&v, raw.data() + i * 15 + off, sizeof v);
            return v;
        };
        // The elements come back packed and native.
        CHECK(field_at(0, 0, std::int32_t{}) == 1);
        CHECK(field_at(0, 4, double{}) == 2.5);
        CHECK(std::memcmp(raw.data() + 12, "ab\0", 3) == 0);
        CHECK(field_at(1, 0, std::int32_t{}) == -2);
        CHECK(field_at(1, 4, double{}) == -2.0);
        CHECK(field_at(2, 0, std::int32_t{}) == 7); // chunk 1 was never written: the fill
        CHECK(field_at(2, 4, double{}) == 1.5);
        // Written back: the same document.
        const zx::json doc = zx::json::parse(record_stored(s, "r/.zarray"));
        const auto& m = a.metadata();
        CHECK(zx::make_v2_array_document(m.shape, m.chunk_shape, m.dtype, m.fill,
                                         zx::v2_layout_of(m))["dtype"] == doc["dtype"]);
        CHECK(zx::fill_value_to_json(m.fill, m.dtype, 2) == "BwAAAD/4AAAAAAAAAAAA");

        // A described struct over a v2 big-endian array with a subarray field: the chunk bytes are
        // the values big-endian, packed.
        auto p = zx::create<rec_point, 1>(
            s, "p",
            zx::v2_options{.shape = {2}, .chunks = {2}, .compressor = std::nullopt, .big_endian = true});
        const zx::json pdoc = zx::json::parse(record_stored(s, "p/.zarray"));
        CHECK(pdoc["dtype"] == zx::json::parse(R"([["x", ">i4"], ["y", ">f8"], ["v", ">u2", [2]]])"));
        p.write({{0}, {2}},
                xt::xtensor<rec_point, 1>{rec_point{1, 2.5, {3, 4}}, rec_point{-1, 0.0, {0, 65535}}});
        const std::string want = std::string("\0\0\0\x01", 4) + std::string("\x40\x04\0\0\0\0\0\0", 8) +
                                 std::string("\0\x03\0\x04", 4) + std::string("\xff\xff\xff\xff", 4) +
                                 std::string(8, '\0') + std::string("\0\0\xff\xff", 4);
        CHECK(record_stored(s, "p/0") == want);
        CHECK(p.read() ==
              xt::xtensor<rec_point, 1>{rec_point{1, 2.5, {3, 4}}, rec_point{-1, 0.0, {0, 65535}}});
        CHECK(p.at(1).v[1] == 65535);
    }

    TEST_CASE("v3 struct: nested records and time fields, object fill values, selections, sharding")
    {
        zx::memory_store s;
        const rec_outer fill{rec_inner{0.5f, -1}, 9, std::chrono::sys_seconds(std::chrono::seconds(60))};
        auto a = zx::create<rec_outer, 2>(
            s, "o",
            zx::v3_options{.shape = {4, 3},
                           .chunk_shape = {4, 2},
                           .codecs = {zx::sharded({2, 1}, {zx::codec_spec("bytes", {{"endian", "big"}}),
                                                           zx::codec_spec("gzip")})},
                           .fill_value = zx::scalar::from_json(
                               zx::json::parse(R"({"p": {"a": 0.5, "b": -1}, "k": 9, "t": 60})"))});
        const zx::json doc = zx::json::parse(record_stored(s, "o/zarr.json"));
        CHECK(doc["data_type"] == zx::json::parse(R"({"name": "struct", "configuration": {"fields": [
            {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "a", "data_type": "float32"}, {"name": "b", "data_type": "int64"}]}}},
            {"name": "k", "data_type": "int8"},
            {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}}]}})"));
        CHECK(doc["fill_value"] == zx::json::parse(R"({"p": {"a": 0.5, "b": -1}, "k": 9, "t": 60})"));
        CHECK(a.fill_value() == fill);
        const rec_outer v1{rec_inner{1.25f, 1ll << 40}, -3,
                           std::chrono::sys_seconds(std::chrono::seconds(1577836800))};
        const rec_outer v2{rec_inner{-2.0f, 7}, 4, std::chrono::sys_seconds(std::chrono::seconds(-1))};
        a.write({{1, 0}, {1, 2}}, xt::xtensor<rec_outer, 2>{{v1, v2}});
        const auto all = zx::open<rec_outer, 2>(s, "o").read();
        CHECK(all(1, 0) == v1);
        CHECK(all(1, 1) == v2);
        CHECK(all(0, 0) == fill);
        CHECK(all(3, 2) == fill);
        CHECK(a.read(xt::keep(1), xt::range(0, 2)) == xt::xtensor<rec_outer, 2>{{v1, v2}});
        a.write_points({{3, 2}}, xt::xtensor<rec_outer, 1>{v2});
        CHECK(a.at(3, 2) == v2);
        // Only fill records in a chunk: nothing stored for it.
        zx::memory_store s2;
        auto e = zx::create<rec_inner, 1>(
            s2, "e",
            zx::v3_options{.shape = {4},
                           .chunk_shape = {2},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "little"}})}});
        e.write({{0}, {4}}, xt::xtensor<rec_inner, 1>{rec_inner{0, 0}, rec_inner{0, 0}, rec_inner{1, 0},
                                                      rec_inner{0, 0}});
        CHECK_FALSE(s2.stat("e/c/0").has_value());
        CHECK(s2.stat("e/c/1").has_value());
        // A little-endian chunk, byte for byte: (1.0f, 0) is 00 00 80 3f | 8 zero bytes, then (0, 0).
        CHECK(record_stored(s2, "e/c/1") ==
              std::string("\0\0\x80\x3f", 4) + std::string(8, '\0') + std::string(12, '\0'));
    }

    TEST_CASE("zarr-python's struct documents (corpus): the data type, the fill value cases")
    {
        const std::filesystem::path dir = zxtest::env("ZARRXT_CORPUS") + "/zarr-python-metadata";
        if (!std::filesystem::exists(dir / "v3" / "data_type" / "struct"))
        {
            ZX_SKIP_CORPUS("corpus folder absent: zarr-python's struct documents not checked");
        }
        const zx::json dt = zx::json::parse(zxtest::read_file(dir / "v3/data_type/struct/data_type.json"));
        zx::json doc = zx::json::parse(R"({"zarr_format": 3, "node_type": "array", "shape": [2],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
        doc["data_type"] = dt;
        const zx::json fills =
            zx::json::parse(zxtest::read_file(dir / "v3/data_type/struct/fill_values.json"));
        REQUIRE(fills.contains("all_fields"));
        doc["fill_value"] = fills["all_fields"];
        const auto m = zx::parse_v3_array(doc);
        CHECK(zx::describe_fields(m.dtype.fields) == "{x: float32, y: float32, when: numpy.datetime64[ns]}");
        CHECK(m.dtype.fixed_size == 16);
        float x = -1, y = -1;
        std::int64_t when = -1;
        std::memcpy(&x, m.fill.data(), 4);
        std::memcpy(&y, m.fill.data() + 4, 4);
        std::memcpy(&when, m.fill.data() + 8, 8);
        CHECK(x == 0.0f);
        CHECK(y == 1.0f);
        CHECK(when == 0);
        // Written back: the same data type and fill value.
        const zx::json back = zx::make_v3_array_document(m);
        CHECK(back["data_type"] == dt);
        CHECK(back["fill_value"] == fills["all_fields"]);
        // The v2 document with a subarray field.
        const auto v2 =
            zx::parse_v2_array(zx::json::parse(zxtest::read_file(dir / "v2/array/structured_dtype.json")));
        CHECK(zx::describe_fields(v2.dtype.fields) == "{x: float32, y: float32, coords: int32[3]}");
        CHECK(v2.dtype.fixed_size == 20);
    }

    TEST_CASE("records that do not match, and record documents that are refused")
    {
        zx::memory_store s;
        zx::create<rec_point, 1>(s, "p", zx::v2_options{.shape = {2}, .chunks = {2}});
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "p", zx::open<rec_other, 1>(s, "p"));
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "p", zx::open<std::int32_t, 1>(s, "p"));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "q/.zarray",
            zx::create<std::int32_t, 1>(
                s, "q",
                zx::v2_options{.shape = {2}, .chunks = {2}, .fields = zx::record_fields_of<rec_point>()}));
        // v3 cannot state a subarray field.
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.14", "q/zarr.json",
                        zx::create<rec_point, 1>(s, "q", zx::v3_options{.shape = {2}, .chunk_shape = {2}}));

        auto v2 = [&](const std::string& dtype)
        {
            record_put(s, "b/.zarray",
                       R"({"zarr_format": 2, "shape": [2], "chunks": [2], "order": "C", "compressor": null,
                "filters": null, "fill_value": null, "dtype": )" +
                           dtype + "}");
            return zx::open_any(s, "b");
        };
        struct bad
        {
            const char* dtype;
            const char* id;
        };
        for (const bad& c : std::vector<bad>{
                 {R"([])", "zarrxt.metadata.4"},                                       // no fields
                 {R"([["x", "<i4"], ["x", "<f8"]])", "zarrxt.metadata.4"},             // a name twice
                 {R"([["", "<i4"]])", "zarrxt.metadata.4"},                            // no name
                 {R"([["x", "|O"]])", "zarrxt.metadata.5"},                            // objects have no size
                 {R"([["x", "<i4", [0]]])", "zarrxt.metadata.4"},                      // an empty subarray
                 {R"([["x", "<f8", [4294967296, 4294967296]]])", "zarrxt.metadata.4"}, // 2^67 bytes
                 {R"([["x", "<f8", [1073741824]]])", "zarrxt.metadata.4"},             // 8 GiB records
                 {R"([["x", "<i4", [-1]]])", "zarrxt.metadata.4"},                     // a negative extent
                 {R"([["x"]])", "zarrxt.metadata.3"},                                  // no type
                 {R"([["x", "<i4", [2], 1]])", "zarrxt.metadata.3"},                   // four members
                 {R"([[1, "<i4"]])", "zarrxt.metadata.3"},                             // a number for a name
                 {R"([["x", 4]])", "zarrxt.metadata.3"},                               // a number for a type
                 {R"([["x", "<q9"]])", "zarrxt.metadata.5"},                           // no such type
             })
        {
            CAPTURE(c.dtype);
            ZX_EXPECT_ERROR(zx::metadata_error, c.id, "b/.zarray", v2(c.dtype));
        }
        // Nesting: 20 records deep opens; 40 deep is refused by the JSON depth limit before any
        // recursion over the fields (record.hpp bounds its own at 32 levels besides).
        auto nested = [](int levels)
        {
            std::string deep = R"(["x", "<i4"])";
            for (int i = 0; i < levels; ++i)
            {
                deep = R"(["n", [)" + deep + "]]";
            }
            return "[" + deep + "]";
        };
        CHECK(v2(nested(20)).metadata().dtype.fixed_size == 4);
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "b/.zarray", v2(nested(40)));

        auto v3 = [&](const std::string& dtype, const std::string& fill)
        {
            record_put(s, "c/zarr.json",
                       R"({"zarr_format": 3, "node_type": "array", "shape": [2],
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
                "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "data_type": )" +
                           dtype + R"(, "fill_value": )" + fill + "}");
            return zx::open_any(s, "c");
        };
        const std::string xy =
            R"({"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "int32"},
            {"name": "y", "data_type": "float64"}]}})";
        CHECK(v3(xy, R"({"x": 1, "y": "NaN"})").metadata().dtype.fixed_size == 12);
        CHECK(v3(R"({"name": "structured", "configuration": {"fields": [["x", "int32"], ["y", "float64"]]}})",
                 R"({"x": 1, "y": 2})")
                  .metadata()
                  .dtype.fixed_size == 12); // zarr-python 3's earlier name and field form
        CHECK(v3(xy, R"("AQAAAAAAAAAAAABA")").metadata().dtype.fixed_size == 12); // base64 too
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json", v3(xy, R"({"x": 1})"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json",
                        v3(xy, R"({"x": 1, "y": 2, "z": 3})"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json",
                        v3(xy, R"({"x": 1.5, "y": 2})"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json", v3(xy, "0"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json", v3(xy, R"("AQAA")"));
        ZX_EXPECT_ERROR(
            zx::metadata_error, "zarrxt.metadata.4", "c/zarr.json",
            v3(R"({"name": "struct", "configuration": {"fields": [{"name": "s", "data_type": "string"}]}})",
               R"({"s": ""})"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.5", "c/zarr.json", v3(R"("struct")", "0"));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.2", "c/zarr.json",
                        v3(R"({"name": "struct"})", "0"));
        ZX_EXPECT_ERROR(
            zx::metadata_error, "zarrxt.metadata.7", "c/zarr.json",
            v3(R"({"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "int8", "z": 1}]}})",
               R"({"x": 0})"));
        // bfloat16 and float8 fields: their sizes, and their fill values as the field types read them
        // (bfloat16 "NaN" 0x7fc0 native, float8_e5m2 -2 is 0xc0); an unwritten chunk reads the fill.
        const std::string hq =
            R"({"name": "struct", "configuration": {"fields": [{"name": "h", "data_type": "bfloat16"},
            {"name": "q", "data_type": "float8_e5m2"}]}})";
        auto small = v3(hq, R"({"h": "NaN", "q": -2})");
        CHECK(small.metadata().dtype.fixed_size == 3);
        std::string raw(6, '\0');
        small.read_bytes({0}, {2}, reinterpret_cast<std::byte*>(raw.data()));
        CHECK(raw == std::string("\xc0\x7f\xc0\xc0\x7f\xc0", 6));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "c/zarr.json",
                        v3(hq, R"({"h": 1, "q": "0x7fc0"})"));
    }
}
