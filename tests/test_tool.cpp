// The zarrxt command-line tool: info, tree, hash, cat, convert and verify on real arrays; help pages;
// the progress bar on a terminal (through util-linux's `script`) and its absence elsewhere; errors on
// stderr with an id, and the documented exit statuses (0 ok, 1 data error, 2 usage). Hashes are
// checked against coreutils' sha256sum of the expected bytes, sizes against the files on disk, not
// against zarrxt itself.
#include "array_support.hpp"

#include <zarrxt/store/open_store.hpp>

namespace zx = zarrxt;
using zxtest::quote;

namespace
{

std::string tool()
{
    return zxtest::env("ZARRXT_TOOL");
}

/// sha256sum (coreutils) of `bytes`, first 16 hex digits.
std::string reference_hash(const std::string& bytes, const std::filesystem::path& scratch)
{
    zxtest::write_file(scratch, bytes);
    auto r = zxtest::run("sha256sum " + quote(scratch.string()));
    REQUIRE(r.status == 0);
    return r.output.substr(0, 16);
}

template <class T, std::size_t N>
std::string raw_bytes(const xt::xtensor<T, N>& t)
{
    return std::string(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(T));
}

/// Bytes of the files under `dir` other than Zarr metadata documents (what "stored" counts).
std::uint64_t data_bytes_on_disk(const std::filesystem::path& dir)
{
    std::uint64_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    {
        const auto name = e.path().filename().string();
        if (e.is_regular_file() && name.rfind(".zarrxt-", 0) != 0 && name != "zarr.json" && name != ".zarray" && name != ".zattrs" && name != ".zgroup")
        {
            n += e.file_size();
        }
    }
    return n;
}

std::string two_decimals(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

/// Runs `cmd` with a pseudo-terminal as its stdin, stdout and stderr (util-linux's `script`), the
/// way a person at a terminal runs it; returns everything the terminal received.
zxtest::command_result run_on_terminal(const std::string& cmd)
{
    REQUIRE_MESSAGE(zxtest::run("command -v script").status == 0, "util-linux's script is needed (Debian: bsdutils)");
    return zxtest::run("script -qefc " + quote(cmd) + " /dev/null");
}

/// A hierarchy for tree, verify and the exit statuses: a group holding an uncompressed array, a
/// partly written v2 array and a group with a sharded zstd array.
void make_hierarchy(const std::filesystem::path& root)
{
    zx::filesystem_store s(root);
    zx::group<zx::filesystem_store>::create(s, "");
    zx::create<std::int16_t, 2>(s, "raw", zx::v3_options{.shape = {24, 32}, .chunk_shape = {8, 32},
                                                          .codecs = {zx::codec_spec("bytes", {{"endian", "little"}})}})
        .write({{0, 0}, {24, 32}}, zxtest::make_data<std::int16_t, 2>({24, 32}, 1));
    zx::create<std::uint8_t, 1>(s, "v2", zx::v2_options{.shape = {100}, .chunks = {10}, .compressor = std::nullopt})
        .write({{0}, {10}}, xt::xtensor<std::uint8_t, 1>(std::array<std::size_t, 1>{10}, 7));
    zx::create<std::int32_t, 2>(
        s, "g/sharded",
        zx::v3_options{.shape = {64, 64}, .chunk_shape = {32, 32},
                       .codecs = {zx::sharded({16, 16}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                         zx::codec_spec("zstd", {{"level", 3}, {"checksum", false}})})}})
        .write({{0, 0}, {64, 64}}, zxtest::make_data<std::int32_t, 2>({64, 64}));
}

} // namespace

TEST_SUITE("tool")
{
    TEST_CASE("hash, info and cat on v2, v3 and sharded arrays")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const auto data = zxtest::make_data<std::int32_t, 2>({7, 9});
        zx::create<std::int32_t, 2>(s, "v2", zx::v2_options{.shape = {7, 9}, .chunks = {3, 4}, .order = 'F'})
            .write({{0, 0}, {7, 9}}, data);
        zx::create<std::int32_t, 2>(s, "v3", zx::v3_options{.shape = {7, 9}, .chunk_shape = {4, 4},
                                                             .codecs = {zx::sharded({2, 2})}})
            .write({{0, 0}, {7, 9}}, data);
        const std::string expect = reference_hash(raw_bytes(data), dir.path() / "raw.bin");
        for (const char* p : {"v2", "v3"})
        {
            CAPTURE(p);
            auto r = zxtest::run(quote(tool()) + " hash " + quote((dir.path() / p).string()));
            CHECK(r.status == 0);
            CHECK(r.output == expect + "\n");
        }
        auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "v3").string()));
        CHECK(info.status == 0);
        CHECK(info.output.find("dtype: int32\n") != std::string::npos);
        CHECK(info.output.find("shape: [7, 9]\n") != std::string::npos);
        CHECK(info.output.find("shards: [4, 4]\n") != std::string::npos);
        CHECK(info.output.find("inner chunks: [2, 2]\n") != std::string::npos);
        CHECK(info.output.find("shard index: end, 68 bytes") != std::string::npos);
        CHECK(info.output.find("shards_stored: 6 of 6\n") != std::string::npos);
        auto info2 = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "v2").string()));
        CHECK(info2.output.find("dtype: int32 (<i4)\n") != std::string::npos);
        CHECK(info2.output.find("\"name\":\"transpose\"") != std::string::npos);
        CHECK(info2.output.find("chunks_stored: 9 of 9\n") != std::string::npos);
        auto root = zxtest::run(quote(tool()) + " info " + quote(dir.str()));
        CHECK(root.output.find("node: group") != std::string::npos);
        CHECK(root.output.find("  v2 (array)\n") != std::string::npos);

        auto cat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "v2").string()) + " --region 1:3,2:5");
        CHECK(cat.status == 0);
        const std::string line1 = "[1, 2:5] " + std::to_string(data(1, 2)) + " " + std::to_string(data(1, 3)) + " " +
                                  std::to_string(data(1, 4)) + "\n";
        CHECK(cat.output.substr(0, line1.size()) == line1);
        CHECK(std::count(cat.output.begin(), cat.output.end(), '\n') == 2);
    }

    TEST_CASE("convert between formats, chunkings, codecs and shards keeps every value")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const auto data = zxtest::make_data<double, 3>({10, 6, 5});
        zx::create<double, 3>(s, "src", zx::v2_options{.shape = {10, 6, 5}, .chunks = {4, 4, 4}, .fill_value = 0.5, .attributes = {{"k", 1}}})
            .write({{0, 0, 0}, {10, 6, 5}}, data);
        const auto src = (dir.path() / "src").string();
        const std::string expect = reference_hash(raw_bytes(data), dir.path() / "raw.bin");
        struct conversion
        {
            const char* dst;
            std::string args;
            int format;
        };
        for (const auto& c : std::vector<conversion>{{"a", "--zarr-format 3 --codec gzip:6", 3},
                                                     {"b", "--zarr-format 3 --chunks 2,3,5 --shards 4,6,5 --codec zstd:1", 3},
                                                     {"c", "--zarr-format 2 --codec none --chunks 5,5,5", 2},
#if ZARRXT_HAS_BLOSC
                                                     {"d", "--codec blosc:zstd:3", 2},
#endif
                                                     {"e", "", 2}})
        {
            CAPTURE(c.dst);
            const auto dst = (dir.path() / c.dst).string();
            auto r = zxtest::run(quote(tool()) + " convert " + quote(src) + " " + quote(dst) + " " + c.args);
            REQUIRE_MESSAGE(r.status == 0, r.output);
            auto h = zxtest::run(quote(tool()) + " hash " + quote(dst));
            CHECK(h.output == expect + "\n");
            auto any = zx::open_any(zx::filesystem_store(dst), "");
            CHECK(any.metadata().zarr_format == c.format);
            CHECK(any.metadata().attributes == zx::json{{"k", 1}});
            CHECK(any.metadata().fill.as<double>() == 0.5);
        }
        auto b = zx::open_any(zx::filesystem_store(dir.path() / "b"), "");
        REQUIRE(b.chain().any_sharding() != nullptr);
        CHECK(b.chain().any_sharding()->inner_chunk_shape() == zx::dims{2, 3, 5});
        auto a = zx::open_any(zx::filesystem_store(dir.path() / "a"), "");
        CHECK(a.codecs().back() == zx::codec_spec("gzip", {{"level", 6}}));
        // Refusing to overwrite, then overwriting.
        auto again = zxtest::run(quote(tool()) + " convert " + quote(src) + " " + quote((dir.path() / "a").string()));
        CHECK(again.status == 1);
        CHECK(again.output.find("[zarrxt.array.6]") != std::string::npos);
        CHECK(zxtest::run(quote(tool()) + " convert " + quote(src) + " " + quote((dir.path() / "a").string()) + " --overwrite").status == 0);
    }

    TEST_CASE(
        "convert of a hierarchy: zarr-python's consolidated v2 tree -> a v3 zip archive -> v2 again, read "
        "back by zarr-python")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir dir;
        // The writer and the checker compute the same arrays: the check compares with them, not
        // with anything zarrxt read.
        const std::string arrays = R"(
import json, sys, numpy as np, zarr
def expected():
    i, j = np.meshgrid(np.arange(30), np.arange(20), indexing='ij')
    return {'a/ints': ((i * 20 + j) % 251 - 100).astype('<i2'),
            'a/b/floats': np.linspace(-1, 1, 48).reshape(6, 8).astype('<f8'),
            'top': np.arange(7, dtype='<u4') * 3}
)";
        zxtest::write_file(dir.path() / "write.py", arrays + R"(
root = zarr.open_group(sys.argv[1], mode='w')
root.attrs['title'] = 'tree'
for name, v in expected().items():
    a = root.create_dataset(name, data=v, chunks=tuple(max(1, n // 3) for n in v.shape), compressor=zarr.Zlib(level=1))
    a.attrs['name'] = name
root['a'].attrs['level'] = 1
root.create_group('empty')
zarr.consolidate_metadata(sys.argv[1])
)");
        zxtest::write_file(dir.path() / "check.py", arrays + R"(
root = zarr.open_consolidated(sys.argv[1], mode='r')
ok = root.attrs['title'] == 'tree' and root['a'].attrs['level'] == 1 and 'empty' in root
for name, v in expected().items():
    a = root[name]
    ok = ok and a.attrs['name'] == name and a.dtype == v.dtype and a.shape == v.shape and (a[...] == v).all()
print('same' if ok else 'different')
)");
        const auto src = (dir.path() / "src.zarr").string();
        const auto zip = (dir.path() / "tree.zarr.zip").string();
        const auto back = (dir.path() / "back.zarr").string();
        const auto py = quote(zxtest::debian_python()) + " ";
        auto r = zxtest::run(py + quote((dir.path() / "write.py").string()) + " " + quote(src));
        REQUIRE_MESSAGE(r.status == 0, r.output);
        r = zxtest::run(quote(tool()) + " convert --no-progress " + quote(src) + " " + quote(zip) +
                        " --zarr-format 3");
        REQUIRE_MESSAGE(r.status == 0, r.output);
        CHECK(r.output.find("3 arrays, 4 groups") != std::string::npos);
        // The archive holds a v3 tree with inline consolidated metadata (the source had some).
        {
            const auto z = zx::open_store(zip);
            const auto g = zx::group<zx::any_store>::open(z, "a");
            CHECK(g.zarr_format() == 3);
            CHECK(g.attributes() == zx::json{{"level", 1}});
            CHECK(zx::open_any(z, "a/b/floats").metadata().zarr_format == 3);
            const auto root_doc = z.read("zarr.json", zx::byte_range::all(), 1 << 20);
            REQUIRE(root_doc);
            CHECK(zx::json::parse(zx::as_string_view(root_doc->bytes))["consolidated_metadata"]["metadata"]
                      .contains("a/b/floats"));
        }
        r = zxtest::run(quote(tool()) + " convert --no-progress " + quote(zip) + " " + quote(back) +
                        " --zarr-format 2");
        REQUIRE_MESSAGE(r.status == 0, r.output);
        r = zxtest::run(py + quote((dir.path() / "check.py").string()) + " " + quote(back));
        CHECK_MESSAGE(r.output == "same\n", r.output);
        // Hashes of every array are the source's.
        for (const char* name : {"a/ints", "a/b/floats", "top"})
        {
            CAPTURE(name);
            CHECK(zxtest::run(quote(tool()) + " hash " + quote(src + "/" + name)).output ==
                  zxtest::run(quote(tool()) + " hash " + quote(back + "/" + name)).output);
        }
        // One array's chunk shape is for one array: a group with --chunks is a usage error.
        r = zxtest::run(quote(tool()) + " convert " + quote(src) + " " + quote(dir.path().string() + "/x") +
                        " --chunks 2,2");
        CHECK(r.status == 2);
        // An existing destination tree is kept unless --overwrite.
        r = zxtest::run(quote(tool()) + " convert --no-progress " + quote(src) + " " + quote(back));
        CHECK(r.status == 1);
        CHECK(r.output.find("[zarrxt.array.6]") != std::string::npos);
        r = zxtest::run(quote(tool()) + " convert --no-progress " + quote(src) + " " + quote(back) +
                        " --overwrite");
        CHECK_MESSAGE(r.status == 0, r.output);
    }

    TEST_CASE("datetimes: cat prints ISO text, info the unit; convert v2 -> v3 -> v2 keeps unit, NaT fill "
              "and counts")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        namespace ch = std::chrono;
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        using ms_time = ch::sys_time<ch::milliseconds>;
        // 2000-02-29T12:00:00.250 is 951825600250 ms after the epoch (stated, not computed here).
        const xt::xtensor<ms_time, 1> v = {ms_time(ch::milliseconds(951825600250)),
                                           ms_time(ch::milliseconds(-1)), ms_time(ch::milliseconds(zx::nat))};
        zx::create<ms_time, 1>(
            s, "src", zx::v2_options{.shape = {4}, .chunks = {2}, .fill_value = zx::scalar::from_json("NaT")})
            .write({{0}, {3}}, v);
        auto cat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "src").string()));
        REQUIRE(cat.status == 0);
        CHECK(cat.output == "[0:4] 2000-02-29T12:00:00.250 1969-12-31T23:59:59.999 NaT NaT\n");
        auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "src").string()));
        CHECK(info.output.find("dtype: numpy.datetime64[ms]") != std::string::npos);
        for (const auto& [from, to, format] : {std::tuple{"src", "v3", "3"}, std::tuple{"v3", "back", "2"}})
        {
            auto r = zxtest::run(quote(tool()) + " convert " + quote((dir.path() / from).string()) + " " +
                                 quote((dir.path() / to).string()) + " --zarr-format " + format +
                                 " --no-progress");
            REQUIRE_MESSAGE(r.status == 0, r.output);
        }
        const zx::json v3 = zx::json::parse(zxtest::read_file(dir.path() / "v3" / "zarr.json"));
        CHECK(v3["data_type"] ==
              zx::json::parse(
                  R"({"name": "numpy.datetime64", "configuration": {"unit": "ms", "scale_factor": 1}})"));
        CHECK(v3["fill_value"] == "NaT");
        const zx::json v2 = zx::json::parse(zxtest::read_file(dir.path() / "back" / ".zarray"));
        CHECK(v2["dtype"] == "<M8[ms]");
        CHECK(v2["fill_value"] == zx::nat);
        const auto back = zx::open<ms_time, 1>(s, "back").read();
        for (std::size_t i = 0; i < 3; ++i)
        {
            CHECK(back(i) == v(i));
        }
        CHECK(back(3).time_since_epoch().count() == zx::nat);
    }

    TEST_CASE(
        "fixed-width strings: cat prints them quoted, info the element size; convert v2 -> v3 -> v2 keeps "
        "type, fill and values; hash is by value, whatever the byte order")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const xt::xtensor<std::string, 1> v = {"a\"b", "\u00e9", "tab\t"};
        zx::create<std::string, 1>(s, "src",
                                   zx::v2_options{.shape = {4},
                                                  .chunks = {2},
                                                  .fill_value = "-",
                                                  .big_endian = true,
                                                  .string = zx::fixed_length_utf32(4)})
            .write({{0}, {3}}, v);
        auto cat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "src").string()));
        REQUIRE(cat.status == 0);
        CHECK(cat.output == "[0:4] \"a\\\"b\" \"\u00e9\" \"tab\\t\" \"-\"\n");
        auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "src").string()));
        CHECK(info.output.find("dtype: fixed_length_utf32[16 bytes]") != std::string::npos);
        zx::create<std::string, 1>(
            s, "bytes",
            zx::v3_options{.shape = {2}, .chunk_shape = {2}, .string = zx::null_terminated_bytes(3)})
            .write({{0}, {2}}, xt::xtensor<std::string, 1>{"\x01\xff", "ok"});
        auto bcat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "bytes").string()));
        CHECK(bcat.output == "[0:2] \"\\x01\\xff\" \"ok\"\n");
        for (const auto& [from, to, format] : {std::tuple{"src", "v3", "3"}, std::tuple{"v3", "back", "2"}})
        {
            auto r = zxtest::run(quote(tool()) + " convert " + quote((dir.path() / from).string()) + " " +
                                 quote((dir.path() / to).string()) + " --zarr-format " + format +
                                 " --no-progress");
            REQUIRE_MESSAGE(r.status == 0, r.output);
        }
        const zx::json v3 = zx::json::parse(zxtest::read_file(dir.path() / "v3" / "zarr.json"));
        CHECK(v3["data_type"] ==
              zx::json::parse(R"({"name": "fixed_length_utf32", "configuration": {"length_bytes": 16}})"));
        CHECK(v3["fill_value"] == "-");
        const zx::json v2 = zx::json::parse(zxtest::read_file(dir.path() / "back" / ".zarray"));
        CHECK(v2["dtype"] == "<U4");
        CHECK(v2["fill_value"] == "-");
        CHECK(zx::open<std::string, 1>(s, "back").read() ==
              xt::xtensor<std::string, 1>{"a\"b", "\u00e9", "tab\t", "-"});
        // The digest of the text rule, spelt out: len32le + UTF-8 bytes per value, here for the
        // big-endian source, its little-endian copy, and the same values built by hand.
        auto hash_of = [&](const char* name)
        {
            auto r = zxtest::run(quote(tool()) + " hash " + quote((dir.path() / name).string()));
            REQUIRE_MESSAGE(r.status == 0, r.output);
            return r.output;
        };
        std::string bytes;
        for (const std::string value : {"a\"b", "\u00e9", "tab\t", "-"})
        {
            bytes += std::string{static_cast<char>(value.size()), 0, 0, 0} + value;
        }
        CHECK(hash_of("src") == reference_hash(bytes, dir.path() / "expected.bin") + "\n");
        CHECK(hash_of("back") == hash_of("src"));
    }

    TEST_CASE(
        "bfloat16 and float8: cat prints numbers (nan, inf as for float16); hash is of little-endian bytes; "
        "no v2")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        auto b = zx::create<zx::bfloat16, 1>(
            s, "b",
            zx::v3_options{.shape = {5},
                           .chunk_shape = {2},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})},
                           .fill_value = zx::scalar::from_json("NaN")});
        b.write({{0}, {4}}, xt::xtensor<zx::bfloat16, 1>{zx::bfloat16(1.0), zx::bfloat16(-2.5),
                                                         zx::bfloat16::from_bits(0xff80), zx::bfloat16(0.1)});
        auto cat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "b").string()));
        REQUIRE_MESSAGE(cat.status == 0, cat.output);
        CHECK(cat.output == "[0:5] 1 -2.5 -inf 0.1001 nan\n");
        // The stored bytes are big-endian; the digest is of the values' little-endian bytes.
        const std::string le{"\x80\x3f\x20\xc0\x80\xff\xcd\x3d\xc0\x7f", 10};
        auto h = zxtest::run(quote(tool()) + " hash " + quote((dir.path() / "b").string()));
        REQUIRE_MESSAGE(h.status == 0, h.output);
        CHECK(h.output == reference_hash(le, dir.path() / "b.bin") + "\n");
        auto e = zx::create<zx::float8_e4m3b11fnuz, 1>(
            s, "e",
            zx::v3_options{.shape = {3}, .chunk_shape = {3}, .fill_value = zx::scalar::from_json("NaN")});
        e.write({{0}, {2}}, xt::xtensor<zx::float8_e4m3b11fnuz, 1>{zx::float8_e4m3b11fnuz(-0.0),
                                                                   zx::float8_e4m3b11fnuz(30.0)});
        auto ecat = zxtest::run(quote(tool()) + " cat " + quote((dir.path() / "e").string()));
        CHECK(ecat.output == "[0:3] 0 30 nan\n");
        auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "e").string()));
        CHECK(info.output.find("float8_e4m3b11fnuz") != std::string::npos);
        auto v2 = zxtest::run(quote(tool()) + " convert " + quote((dir.path() / "b").string()) + " " +
                              quote((dir.path() / "v2").string()) + " --zarr-format 2 --no-progress");
        CHECK(v2.status != 0);
        CHECK(v2.output.find("[zarrxt.metadata.5] bfloat16 has no Zarr v2 (numpy) data type") !=
              std::string::npos);
    }

    TEST_CASE("convert keeps dimension names: v2 _ARRAY_DIMENSIONS <-> v3 dimension_names; info shows them")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const auto data = zxtest::make_data<std::int16_t, 2>({5, 4});
        zx::create<std::int16_t, 2>(s, "src",
                                    zx::v2_options{.shape = {5, 4},
                                                   .chunks = {2, 2},
                                                   .dimension_names = zx::dimension_name_list{"lat", "lon"},
                                                   .attributes = {{"units", "K"}}})
            .write({{0, 0}, {5, 4}}, data);
        auto convert = [&](const char* from, const char* to, const char* format)
        {
            auto r = zxtest::run(quote(tool()) + " convert " + quote((dir.path() / from).string()) + " " +
                                 quote((dir.path() / to).string()) + " --zarr-format " + format);
            REQUIRE_MESSAGE(r.status == 0, r.output);
        };
        convert("src", "v3", "3");
        const auto v3 = zx::json::parse(zxtest::read_file(dir.path() / "v3" / "zarr.json"));
        CHECK(v3["dimension_names"] == zx::json::parse(R"(["lat", "lon"])"));
        CHECK(v3["attributes"] == zx::json{{"units", "K"}}); // moved, not copied
        convert("v3", "back", "2");
        CHECK(zx::json::parse(zxtest::read_file(dir.path() / "back" / ".zattrs")) ==
              zx::json::parse(R"({"_ARRAY_DIMENSIONS": ["lat", "lon"], "units": "K"})"));
        CHECK(zx::open<std::int16_t, 2>(zx::filesystem_store(dir.path()), "back").read() == data);

        // An unnamed axis survives v3 -> v2 -> v3 as null.
        zx::create<std::int16_t, 1>(s, "partly",
                                    zx::v3_options{.shape = {3},
                                                   .chunk_shape = {3},
                                                   .dimension_names = zx::dimension_name_list{std::nullopt}});
        convert("partly", "partly2", "2");
        CHECK(zx::json::parse(zxtest::read_file(dir.path() / "partly2" / ".zattrs")) ==
              zx::json::parse(R"({"_ARRAY_DIMENSIONS": [null]})"));
        convert("partly2", "partly3", "3");
        CHECK(zx::json::parse(zxtest::read_file(dir.path() / "partly3" / "zarr.json"))["dimension_names"] ==
              zx::json::parse("[null]"));

        for (const char* p : {"src", "v3", "back"})
        {
            CAPTURE(p);
            auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / p).string()));
            CHECK(info.output.find("dimension_names: [\"lat\", \"lon\"]\n") != std::string::npos);
            CHECK(info.output.find("attributes: {\"units\":\"K\"}\n") != std::string::npos);
        }
        // A malformed attribute is reported as such and stays an attribute through a conversion.
        zxtest::write_file(dir.path() / "src" / ".zattrs", R"({"_ARRAY_DIMENSIONS": ["lat"]})");
        auto info = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "src").string()));
        CHECK(info.output.find(
                  "dimension_names: none (the _ARRAY_DIMENSIONS attribute is not a list of 2 strings") !=
              std::string::npos);
        convert("src", "kept", "3");
        const auto kept = zx::json::parse(zxtest::read_file(dir.path() / "kept" / "zarr.json"));
        CHECK_FALSE(kept.contains("dimension_names"));
        CHECK(kept["attributes"] == zx::json::parse(R"({"_ARRAY_DIMENSIONS": ["lat"]})"));
    }

    TEST_CASE("convert names zlib numcodecs.zlib in v3 and keeps v2 filters")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const auto data = zxtest::make_data<double, 2>({9, 7});
        zx::create<double, 2>(s, "z", zx::v2_options{.shape = {9, 7}, .chunks = {4, 4}, .compressor = zx::codec_spec("zlib", {{"level", 1}})})
            .write({{0, 0}, {9, 7}}, data);
        const auto v3 = (dir.path() / "z3").string();
        auto r = zxtest::run(quote(tool()) + " convert " + quote((dir.path() / "z").string()) + " " + quote(v3) + " --zarr-format 3");
        REQUIRE_MESSAGE(r.status == 0, r.output);
        const auto doc = zx::json::parse(zxtest::read_file(std::filesystem::path(v3) / "zarr.json"));
        CHECK(doc["codecs"] == zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                                                   {"name": "numcodecs.zlib", "configuration": {"level": 1}}])"));
        CHECK(zxtest::run(quote(tool()) + " hash " + quote(v3)).output ==
              zxtest::run(quote(tool()) + " hash " + quote((dir.path() / "z").string())).output);
        // A bool array with numcodecs' PackBits filter: v2 -> v3 keeps the filter before the bytes
        // codec, v3 -> v2 writes it back as a v2 filter.
        xt::xtensor<bool, 1> flags = xt::xtensor<bool, 1>::from_shape({13});
        for (std::size_t i = 0; i < 13; ++i)
        {
            flags(i) = i % 3 == 0;
        }
        zx::create<bool, 1>(s, "p", zx::v2_options{.shape = {13}, .chunks = {5}, .compressor = std::nullopt,
                                                  .filters = {zx::codec_spec("numcodecs.packbits")}})
            .write({{0}, {13}}, flags);
        const auto p3 = (dir.path() / "p3").string();
        const auto p2 = (dir.path() / "p2").string();
        REQUIRE(zxtest::run(quote(tool()) + " convert " + quote((dir.path() / "p").string()) + " " + quote(p3) + " --zarr-format 3").status == 0);
        REQUIRE(zxtest::run(quote(tool()) + " convert " + quote(p3) + " " + quote(p2) + " --zarr-format 2").status == 0);
        const auto d3 = zx::json::parse(zxtest::read_file(std::filesystem::path(p3) / "zarr.json"));
        CHECK(d3["codecs"][0]["name"] == "numcodecs.packbits");
        const auto d2 = zx::json::parse(zxtest::read_file(std::filesystem::path(p2) / ".zarray"));
        CHECK(d2["filters"] == zx::json::parse(R"([{"id": "packbits"}])"));
        for (const auto& path : {p3, p2})
        {
            const auto back = zx::open<bool, 1>(zx::filesystem_store(path), "").read();
            CHECK(back == flags);
        }
    }

    TEST_CASE("errors go to stderr with an id and a non-zero status")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        auto missing = zxtest::run("(" + quote(tool()) + " hash " + quote((dir.path() / "nope").string()) + " 2>/dev/null)");
        CHECK(missing.status == 1);
        CHECK(missing.output.empty()); // nothing on stdout
        CHECK(zxtest::run(quote(tool()) + " hash " + quote((dir.path() / "nope").string())).output.find("[zarrxt.array.7]")
              != std::string::npos);
        CHECK(zxtest::run(quote(tool()) + " frobnicate x").status == 2);
        CHECK(zxtest::run(quote(tool())).status == 2);
        CHECK(zxtest::run(quote(tool()) + " cat " + quote(dir.str()) + " --region 1:").status != 0);
        // A corrupt chunk: codec error with the key.
        zx::filesystem_store s(dir.path());
        zx::create<std::int16_t, 1>(s, "bad", zx::v3_options{.shape = {4}, .chunk_shape = {4}})
            .write({{0}, {4}}, xt::xtensor<std::int16_t, 1>{1, 2, 3, 4});
        zxtest::write_file(dir.path() / "bad" / "c" / "0", "garbage");
        auto bad = zxtest::run(quote(tool()) + " hash " + quote((dir.path() / "bad").string()));
        CHECK(bad.status == 1);
        CHECK(bad.output.find("[zarrxt.codec.") != std::string::npos);
        CHECK(bad.output.find("key \"c/0\"") != std::string::npos);
        // The pre-final v3 draft is refused clearly.
        zxtest::write_file(dir.path() / "draft" / "zarr.json",
                           R"({"zarr_format": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_encoding": "https://purl.org/zarr/spec/protocol/core/3.0", "metadata_key_suffix": ".json", "extensions": []})");
        auto draft = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "draft").string()));
        CHECK(draft.status == 1);
        CHECK(draft.output.find("[zarrxt.metadata.10]") != std::string::npos);
    }

    TEST_CASE("verify decodes every chunk of a hierarchy and reports each problem")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        zx::group<zx::filesystem_store>::create(s, "");
        zx::create<std::int16_t, 2>(s, "plain", zx::v2_options{.shape = {8, 8}, .chunks = {4, 4}})
            .write({{0, 0}, {8, 8}}, zxtest::make_data<std::int16_t, 2>({8, 8}));
        zx::create<std::int16_t, 2>(s, "g/sharded", zx::v3_options{.shape = {8, 8}, .chunk_shape = {8, 8},
                                                                   .codecs = {zx::sharded({4, 4}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("crc32c")})}})
            .write({{0, 0}, {8, 8}}, zxtest::make_data<std::int16_t, 2>({8, 8}));
        const std::string cmd = quote(tool()) + " verify " + quote(dir.str());
        auto ok = zxtest::run(cmd);
        CHECK(ok.status == 0);
        CHECK(ok.output.find("2 arrays, 5 chunks checked, 0 problems") != std::string::npos);

        // Damage one v2 chunk and one inner chunk of the shard; leave a writer's temporary file.
        zxtest::write_file(dir.path() / "plain" / "1.1", "junk");
        auto shard = zxtest::read_file(dir.path() / "g" / "sharded" / "c" / "0" / "0");
        shard[5] ^= 0x01; // inside inner chunk 0 (offset 0, 36 bytes)
        zxtest::write_file(dir.path() / "g" / "sharded" / "c" / "0" / "0", shard);
        zxtest::write_file(dir.path() / "plain" / ".zarrxt-tmp-99-0-0.0", "partial");
        auto bad = zxtest::run(cmd);
        CHECK(bad.status == 1);
        CHECK(bad.output.find("PROBLEM plain/1.1: [zarrxt.codec.") != std::string::npos);
        CHECK(bad.output.find("PROBLEM g/sharded/c/0/0 bytes 0..36: [zarrxt.codec.4]") != std::string::npos);
        CHECK(bad.output.find("2 problems") != std::string::npos);
        CHECK(bad.output.find("leftover temporary file plain/.zarrxt-tmp-99-0-0.0") != std::string::npos);
        CHECK(zxtest::run(cmd + " --clean").output.find("1 temporary files removed") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(dir.path() / "plain" / ".zarrxt-tmp-99-0-0.0"));
    }

    TEST_CASE("tree shows the hierarchy with shape, dtype, chunking, codecs, stored size and ratio")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        make_hierarchy(dir.path());
        const auto r = zxtest::run(quote(tool()) + " tree " + quote(dir.str()));
        REQUIRE_MESSAGE(r.status == 0, r.output);
        const std::uint64_t sharded_stored = data_bytes_on_disk(dir.path() / "g" / "sharded");
        const std::uint64_t total_stored = data_bytes_on_disk(dir.path());
        CAPTURE(r.output);
        std::istringstream lines(r.output);
        std::vector<std::string> l;
        for (std::string line; std::getline(lines, line);)
        {
            l.push_back(line);
        }
        REQUIRE(l.size() == 6);
        CHECK(l[0] == dir.str() + "  group v3");
        CHECK(l[1] == "├── g  group v3");
        // 16 KiB of int32 in four shards of 2 x 2 zstd chunks; the stored size is what is on disk.
        CHECK(l[2].rfind("│   └── sharded  array v3  int32 [64, 64]  shards [32, 32] of chunks [16, 16]  codecs "
                         "[bytes(endian=little), zstd(level=3, checksum=false)] index [bytes(endian=little), crc32c] "
                         "at end  stored ",
                         0)
              == 0);
        CHECK(l[2].find(" of 16.0 KiB, ratio " + two_decimals(16384.0 / static_cast<double>(sharded_stored))) != std::string::npos);
        CHECK(l[3] == "├── raw  array v3  int16 [24, 32]  chunks [8, 32]  codecs [bytes(endian=little)]  stored 1.50 KiB of "
                      "1.50 KiB, ratio 1.00");
        // One chunk of ten bytes written, nine left to the fill value.
        CHECK(l[4].rfind("└── v2  array v2  uint8 [100]  chunks [10]  codecs [", 0) == 0);
        CHECK(l[4].find("  stored 10 B of 100 B, ratio 10.00") != std::string::npos);
        const std::uint64_t raw_total = 16384 + 1536 + 100;
        CHECK(l[5].rfind("3 arrays, 2 groups, stored ", 0) == 0);
        CHECK(l[5].find(", ratio " + two_decimals(static_cast<double>(raw_total) / static_cast<double>(total_stored)))
              != std::string::npos);

        // One array alone, and an unreadable node: shown with its error id, exit status 1.
        const auto one = zxtest::run(quote(tool()) + " tree " + quote((dir.path() / "raw").string()));
        CHECK(one.status == 0);
        CHECK(one.output.find("  array v3  int16 [24, 32]") != std::string::npos);
        CHECK(one.output.find("1 array, 0 groups, stored 1.50 KiB of 1.50 KiB, ratio 1.00\n") != std::string::npos);
        zxtest::write_file(dir.path() / "g" / "broken" / "zarr.json", "{\"zarr_format\": 3, \"node_type\": \"array\"");
        zxtest::write_file(dir.path() / "g" / "no_shape" / "zarr.json", R"({"zarr_format": 3, "node_type": "array"})");
        const auto broken = zxtest::run(quote(tool()) + " tree " + quote(dir.str()));
        CAPTURE(broken.output);
        CHECK(broken.status == 1);
        CHECK(broken.output.find("\n│   ├── broken  ERROR [zarrxt.metadata.1] ") != std::string::npos);
        CHECK(broken.output.find("\n│   ├── no_shape  ERROR [zarrxt.metadata.2] ") != std::string::npos);
        CHECK(broken.output.find("\n│   └── sharded  array v3") != std::string::npos); // its siblings still shown
        CHECK(broken.output.find("3 arrays, 2 groups, stored ") != std::string::npos);
        CHECK(broken.output.find("2 nodes unreadable") != std::string::npos);
    }

    TEST_CASE("info gives raw and stored sizes in bytes and for people, and the compression ratio")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        // 2 MiB of uint8, one 768 KiB chunk row written uncompressed.
        zx::create<std::uint8_t, 2>(s, "a", zx::v2_options{.shape = {1024, 2048}, .chunks = {384, 2048}, .compressor = std::nullopt})
            .write({{0, 0}, {384, 2048}}, xt::xtensor<std::uint8_t, 2>(std::array<std::size_t, 2>{384, 2048}, 3));
        const auto r = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "a").string()));
        REQUIRE_MESSAGE(r.status == 0, r.output);
        CHECK(r.output.find("raw_bytes: 2097152 (2.00 MiB)\n") != std::string::npos);
        CHECK(r.output.find("stored_bytes: 786432 (768 KiB)\n") != std::string::npos);
        CHECK(r.output.find("ratio: 2.67\n") != std::string::npos);
        CHECK(r.output.find("chunks_stored: 1 of 3\n") != std::string::npos);
        // Nothing stored yet: no ratio.
        zx::create<std::uint8_t, 1>(s, "empty", zx::v3_options{.shape = {1000}, .chunk_shape = {100}});
        const auto e = zxtest::run(quote(tool()) + " info " + quote((dir.path() / "empty").string()));
        CHECK(e.output.find("raw_bytes: 1000 (1000 B)\n") != std::string::npos);
        CHECK(e.output.find("stored_bytes: 0 (0 B)\nratio: -\n") != std::string::npos);
    }

    TEST_CASE("consolidate writes consolidated metadata; --check tells when it is stale")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir("zarrxt-tool-consolidate");
        for (int format : {2, 3})
        {
            CAPTURE(format);
            const auto root = dir.path() / ("v" + std::to_string(format));
            zx::filesystem_store s(root);
            zx::group<zx::filesystem_store>::create(s, "", zx::group_options{.zarr_format = format});
            zx::group<zx::filesystem_store>::create(s, "g", zx::group_options{.zarr_format = format});
            if (format == 3)
            {
                zx::create<std::int16_t, 1>(s, "g/a", zx::v3_options{.shape = {6}, .chunk_shape = {3}});
            }
            else
            {
                zx::create<std::int16_t, 1>(s, "g/a", zx::v2_options{.shape = {6}, .chunks = {3}});
            }
            const std::string cmd = quote(tool()) + " consolidate ";
            auto r = zxtest::run(cmd + "--check " + quote(root.string()) + " 2>&1");
            CHECK(r.status == 1);
            CHECK(r.output.rfind("no consolidated metadata", 0) == 0);
            r = zxtest::run(cmd + quote(root.string()) + " 2>&1");
            CHECK(r.status == 0);
            CHECK(r.output == (format == 2
                                   ? "wrote .zmetadata: 2 nodes, 3 documents\n"
                                   : "wrote consolidated_metadata in zarr.json: 2 nodes, 2 documents\n"));
            CHECK(std::filesystem::exists(root / ".zmetadata") == (format == 2));
            r = zxtest::run(cmd + "--check " + quote(root.string()) + " 2>&1");
            CHECK_MESSAGE(r.status == 0, r.output);
            // A metadata write through zarrxt does not update the snapshot: --check says so.
            zx::open<std::int16_t, 1>(s, "g/a").set_attributes({{"units", "m"}});
            r = zxtest::run(cmd + "--check " + quote(root.string()) + " 2>&1");
            CHECK(r.status == 1);
            const std::string changed =
                format == 2 ? "STALE g/a/.zattrs: missing from" : "STALE g/a: differs in";
            CHECK_MESSAGE(r.output.find(changed) != std::string::npos, r.output);
            std::filesystem::remove_all(root / "g");
            r = zxtest::run(cmd + "--check " + quote(root.string()) + " 2>&1");
            CHECK(r.status == 1);
            CHECK_MESSAGE(r.output.find("no longer in the hierarchy") != std::string::npos, r.output);
            r = zxtest::run(cmd + quote(root.string()) + " && " + cmd + "--check " + quote(root.string()) +
                            " 2>&1");
            CHECK_MESSAGE(r.status == 0, r.output);
        }
        // A hierarchy mixing formats has no consolidated form (metadata.16); a URL is a usage error.
        make_hierarchy(dir.path() / "mixed");
        auto r =
            zxtest::run(quote(tool()) + " consolidate " + quote((dir.path() / "mixed").string()) + " 2>&1");
        CHECK(r.status == 1);
        CHECK_MESSAGE(r.output.find("[zarrxt.metadata.16]") != std::string::npos, r.output);
        CHECK(zxtest::run(quote(tool()) + " consolidate https://example.org/data.zarr 2>/dev/null").status ==
              2);
        // zarr-python's own consolidated documents in the corpus are what zarrxt would write, entry by entry.
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "zarrita.js" / "fixtures"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/zarrita.js/fixtures)");
        }
        for (const char* p :
             {"zarrita.js/fixtures/v2/data.zarr", "zarrita.js/fixtures/v3/data.zarr/consolidated"})
        {
            CAPTURE(p);
            r = zxtest::run(quote(tool()) + " consolidate --check " + quote((corpus / p).string()) + " 2>&1");
            CHECK_MESSAGE(r.status == 0, r.output);
            CHECK_MESSAGE(r.output.find(" 0 stale\n") != std::string::npos, r.output);
        }
    }

    TEST_CASE("help: an overview, a page per command, --help on every command")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        const std::vector<std::string> names = {"info",    "tree",   "hash",        "cat",
                                                "convert", "verify", "consolidate", "help"};
        for (const char* overview : {" help", " --help", " -h"})
        {
            CAPTURE(overview);
            const auto r = zxtest::run("(" + quote(tool()) + overview + " 2>/dev/null)");
            CHECK(r.status == 0);
            CHECK(r.output.rfind("usage: zarrxt COMMAND", 0) == 0);
            for (const auto& n : names)
            {
                CHECK_MESSAGE(r.output.find("\n  " + n + " ") != std::string::npos, n);
            }
            CHECK(r.output.find("exit status:\n  0  success\n  1  data error") != std::string::npos);
            CHECK(r.output.find("\n  2  usage error") != std::string::npos);
        }
        for (const auto& n : names)
        {
            CAPTURE(n);
            const auto page = zxtest::run("(" + quote(tool()) + " help " + n + " 2>/dev/null)");
            CHECK(page.status == 0);
            CHECK(page.output.rfind("usage: zarrxt " + n + " ", 0) == 0);
            CHECK(page.output.find("exit status:") != std::string::npos);
            // `COMMAND --help` (anywhere among its arguments) is the same page, and runs nothing.
            const auto flag = zxtest::run("(" + quote(tool()) + " " + n + " --help 2>/dev/null)");
            CHECK(flag.status == 0);
            CHECK(flag.output == page.output);
            const auto late = zxtest::run("(" + quote(tool()) + " " + n + " /nonexistent -h 2>/dev/null)");
            CHECK(late.status == 0);
            CHECK(late.output == page.output);
        }
        const auto convert = zxtest::run(quote(tool()) + " help convert");
        for (const char* option : {"--zarr-format", "--chunks", "--shards", "--codec", "--overwrite", "--no-progress"})
        {
            CHECK_MESSAGE(convert.output.find(option) != std::string::npos, option);
        }
        const auto version = zxtest::run(quote(tool()) + " --version");
        CHECK(version.status == 0);
        CHECK(version.output == std::string("zarrxt ") + ZARRXT_VERSION_STRING + "\n");
    }

    TEST_CASE("exit status: 0 success, 1 data error, 2 usage error; messages on stderr only")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        make_hierarchy(dir.path() / "h");
        const std::string h = quote((dir.path() / "h").string());
        const std::string raw = quote((dir.path() / "h" / "raw").string());
        const std::string missing = quote((dir.path() / "missing").string());
        zx::filesystem_store s(dir.path());
        zx::create<std::int16_t, 1>(s, "bad", zx::v3_options{.shape = {4}, .chunk_shape = {4}})
            .write({{0}, {4}}, xt::xtensor<std::int16_t, 1>{1, 2, 3, 4});
        zxtest::write_file(dir.path() / "bad" / "c" / "0", "garbage");
        const std::string bad = quote((dir.path() / "bad").string());
        const std::string out = quote((dir.path() / "out").string());
        struct expectation
        {
            std::string args;
            int status;
            bool findings_on_stdout = false; ///< verify reports what it found as its result
        };
        const std::vector<expectation> cases = {
            {"info " + raw, 0},
            {"tree " + h, 0},
            {"hash " + raw, 0},
            {"cat " + raw + " --region 0:1,0:2", 0},
            {"verify " + h, 0},
            {"convert " + raw + " " + out + " --codec zstd:1", 0},
            {"help tree", 0},
            // Data errors.
            {"info " + missing, 1},
            {"tree " + missing, 1},
            {"hash " + bad, 1},
            {"cat " + bad, 1},
            {"verify " + bad, 1, true},
            {"convert " + raw + " " + out, 1}, // exists, no --overwrite
            {"hash " + h, 1},                  // a group has no elements
            // Usage errors.
            {"", 2},
            {"frobnicate", 2},
            {"help frobnicate", 2},
            {"hash", 2},
            {"hash " + raw + " " + raw, 2},
            {"hash " + raw + " --bogus", 2},
            {"cat " + raw + " --region", 2},
            {"cat " + raw + " --region 0:1", 2},
            {"cat " + raw + " --region 0:1,5:2", 2},
            {"cat " + raw + " --region 0:1,0:33", 2},
            {"cat " + raw + " --region a:b,0:1", 2},
            {"convert " + raw, 2},
            {"convert " + raw + " " + out + " --zarr-format 4", 2},
            {"convert " + raw + " " + out + " --codec snappy:3", 2},
            {"convert " + raw + " " + out + " --chunks 4 --overwrite", 2},
            {"convert " + raw + " " + out + " --zarr-format 2 --shards 8,8", 2},
        };
        for (const auto& c : cases)
        {
            CAPTURE(c.args);
            const auto r = zxtest::run("(" + quote(tool()) + " " + c.args + " 2>/dev/null)");
            CHECK(r.status == c.status);
            if (c.status != 0 && !c.findings_on_stdout)
            {
                CHECK(r.output.empty()); // errors go to stderr
                const auto e = zxtest::run("(" + quote(tool()) + " " + c.args + " 2>&1 >/dev/null)");
                CHECK(e.output.rfind("zarrxt: ", 0) == 0);
                if (c.status == 2 && !c.args.empty())
                {
                    CHECK(e.output.find("zarrxt help") != std::string::npos); // says where help is
                }
            }
        }
        // The usage error names the command's synopsis.
        const auto u = zxtest::run("(" + quote(tool()) + " cat " + raw + " --region 0:1 2>&1 >/dev/null)");
        CHECK(u.output.find("usage: zarrxt cat PATH [--region START:STOP,...]") != std::string::npos);
    }

    TEST_CASE("progress bar with rate and ETA on a terminal, none elsewhere")
    {
        if (tool().empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        zxtest::temp_dir dir;
        make_hierarchy(dir.path() / "h");
        const std::string h = quote((dir.path() / "h").string());
        const std::string raw = quote((dir.path() / "h" / "raw").string());

        // On a terminal: verify draws a bar after its first chunk (with a rate and the time left) and
        // a last one at 100 % with the time it took; the report lines stay whole.
        const auto v = run_on_terminal(quote(tool()) + " verify " + h);
        CAPTURE(v.output);
        CHECK(v.status == 0);
        CHECK(v.output.find("\rverify ") != std::string::npos);
        CHECK(v.output.find("/s ETA ") != std::string::npos);
        CHECK(v.output.find("#] 100% 17.6 KiB / 17.6 KiB ") != std::string::npos);
        CHECK(v.output.find("/s in 0:") != std::string::npos);
        CHECK(v.output.find("3 arrays, 17 chunks checked, 0 problems") != std::string::npos);
        const auto c = run_on_terminal(quote(tool()) + " convert " + raw + " " + quote((dir.path() / "c1").string())
                                       + " --chunks 4,32");
        CHECK(c.status == 0);
        CHECK(c.output.find("\rconvert ") != std::string::npos);
        CHECK(c.output.find("/s ETA ") != std::string::npos);
        CHECK(c.output.find("#] 100% 1.50 KiB / 1.50 KiB ") != std::string::npos);

        // --no-progress, and stderr not a terminal (even with stdout on one): no bar.
        for (const std::string& cmd : {quote(tool()) + " verify " + h + " --no-progress",
                                       quote(tool()) + " verify " + h + " 2>/dev/null"})
        {
            CAPTURE(cmd);
            const auto quiet = run_on_terminal(cmd);
            CHECK(quiet.status == 0);
            CHECK(quiet.output.find("3 arrays, 17 chunks checked, 0 problems") != std::string::npos);
            CHECK(quiet.output.find("ETA") == std::string::npos);
            CHECK(quiet.output.find('\r') == quiet.output.find("\r\n")); // only the terminal's line ends
        }
        // Not on a terminal at all: plain lines.
        for (const std::string& args : {" verify " + h, " convert " + raw + " " + quote((dir.path() / "c2").string())})
        {
            CAPTURE(args);
            const auto plain = zxtest::run(quote(tool()) + args);
            CHECK(plain.status == 0);
            CHECK(plain.output.find('\r') == std::string::npos);
            CHECK(plain.output.find("ETA") == std::string::npos);
            CHECK(plain.output.find('#') == std::string::npos);
        }
        // A problem found with the bar drawn is printed on a line of its own.
        zxtest::write_file(dir.path() / "h" / "raw" / "c" / "1" / "0", "junk");
        const auto bad = run_on_terminal(quote(tool()) + " verify " + h);
        CHECK(bad.status == 1);
        CHECK(bad.output.find("\r\033[KPROBLEM raw/c/1/0: [zarrxt.") != std::string::npos);
    }
}
