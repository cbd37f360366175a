// The zarrxt command-line tool: info, hash, cat and convert on real arrays, and errors reported on
// stderr with an id and a non-zero status. Hashes are checked against coreutils' sha256sum of the
// expected bytes, not against zarrxt itself.
#include "array_support.hpp"

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
}
