// Zarr v3 interoperability with zarrita.js 0.7.5, in both directions: zarrita writes a matrix of
// arrays (tests/peers/zarrita_peer.mjs) that zarrxt reads value for value, whole and in
// sub-regions; zarrxt writes the same matrix, plus sharded, zstd-checksum, numcodecs.zlib,
// cast_value and scale_offset variants that zarrita cannot write, and zarrita reads every value
// back; zarrxt also updates zarrita's arrays in place, and converts a v2 zlib array to v3 for
// zarrita to read. What zarrita cannot encode is listed in the peer's header comment.
#include "interop.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>

namespace zi = zxtest::interop;
namespace zx = zarrxt;

namespace
{

std::string zarrita_peer_script()
{
    return zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/zarrita_peer.mjs";
}

/// The zarrita version these tests were written against (scripts/lib.sh installs it).
constexpr const char* zarrita_version = "0.7.5";

/// Why the zarrita peer cannot run here, or "" when it can.
std::string zarrita_missing()
{
    if (zxtest::node_program().empty())
    {
        return "Node.js is not installed";
    }
    const std::string nm = zxtest::env("ZARRXT_NODE_MODULES");
    if (nm.empty() || !std::filesystem::exists(std::filesystem::path(nm) / "zarrita" / "package.json"))
    {
        return "zarrita is not installed in $ZARRXT_NODE_MODULES (scripts/test installs it)";
    }
    return {};
}

/// Not "" when the zarrita found is not the version the tests were written against: a failure,
/// never a skip.
std::string zarrita_wrong()
{
    const auto pkg = std::filesystem::path(zxtest::env("ZARRXT_NODE_MODULES")) / "zarrita" / "package.json";
    const std::string version = zi::read_json(pkg).value("version", std::string("?"));
    if (version != zarrita_version)
    {
        return pkg.string() + " is zarrita " + version + "; the v3 peer must be zarrita " + zarrita_version;
    }
    return {};
}

/// In a test case: skip (or fail under ZARRXT_REQUIRE_PEERS=1) without zarrita, fail with another version.
#define ZX_REQUIRE_ZARRITA()                                                                                 \
    do                                                                                                       \
    {                                                                                                        \
        if (const auto why = zarrita_missing(); !why.empty())                                                \
        {                                                                                                    \
            ZX_SKIP_PEER(why);                                                                               \
        }                                                                                                    \
        if (const auto wrong = zarrita_wrong(); !wrong.empty())                                              \
        {                                                                                                    \
            FAIL(wrong);                                                                                     \
        }                                                                                                    \
    } while (0)

std::string peer_command(const std::string& verb, const std::string& dir)
{
    return "ZARRXT_NODE_MODULES=" + zxtest::quote(zxtest::env("ZARRXT_NODE_MODULES")) + " " +
           zxtest::quote(zxtest::node_program()) + " " + zxtest::quote(zarrita_peer_script()) + " " + verb +
           " " + zxtest::quote(dir);
}

/// The matrix zarrita writes, generated once per process and shared by the test cases.
struct zarrita_output
{
    zxtest::temp_dir dir{"zarrxt-zarrita-write"};
    zxtest::command_result result;
    zx::json manifest;
};

const zarrita_output& zarrita_written()
{
    static const std::unique_ptr<zarrita_output> out = []
    {
        auto o = std::make_unique<zarrita_output>();
        o->result = zxtest::run(peer_command("write", o->dir.str()));
        if (o->result.status == 0)
        {
            o->manifest = zi::read_json(o->dir.path() / "manifest.json");
        }
        return o;
    }();
    return *out;
}

zx::v3_options v3_options_for(const zx::json& e)
{
    zx::v3_options o;
    o.shape = zi::to_shape(e.at("shape"));
    o.chunk_shape = zi::to_shape(e.at("chunks"));
    o.codecs.clear();
    for (const auto& c : e.at("codecs"))
    {
        o.codecs.emplace_back(c.at("name").get<std::string>(), c.value("configuration", zx::json::object()));
    }
    o.fill_value = zx::scalar::from_json(e.at("fill_value"));
    const auto& key = e.at("chunk_key_encoding");
    o.v2_chunk_key_encoding = key.at("name") == "v2";
    o.separator = key.at("configuration").at("separator").get<std::string>()[0];
    if (e.contains("dimension_names"))
    {
        o.dimension_names.emplace();
        for (const auto& n : e.at("dimension_names"))
        {
            o.dimension_names->push_back(n.is_null() ? std::nullopt : std::optional(n.get<std::string>()));
        }
    }
    return o;
}

/// An array's dimension_names as JSON (null when it has none), to compare with a manifest entry.
zx::json dimension_names_json(const zx::array_metadata& m)
{
    if (!m.dimension_names)
    {
        return nullptr;
    }
    zx::json out = zx::json::array();
    for (const auto& n : *m.dimension_names)
    {
        out.push_back(n ? zx::json(*n) : zx::json(nullptr));
    }
    return out;
}

/// The number in the verify summary "(N inner-chunk crc32c checked)", or -1.
long inner_checksums_checked(const std::string& output)
{
    const auto at = output.rfind(" inner-chunk crc32c checked)");
    if (at == std::string::npos)
    {
        return -1;
    }
    const auto open = output.rfind('(', at);
    return open == std::string::npos ? -1 : std::stol(output.substr(open + 1, at - open - 1));
}

/// A sharded variant of a manifest entry, inner chunks encoded with the entry's codecs and the
/// index at the end (the only place zarrita looks). Two flavours alternate: shards of twice the
/// chunk shape with the default index codecs (bytes + crc32c), and shards of three times the
/// chunk shape with a big-endian index without crc32c. Either way the outer edge is ragged, so
/// shards hold inner chunks that lie wholly outside the array, and partly written arrays have
/// missing shards and (with the larger shards) missing inner chunks in a stored shard.
zx::json sharded_entry(const zx::json& e, bool index_with_crc)
{
    const std::uint64_t factor = index_with_crc ? 2 : 3;
    zx::json s = e;
    s["name"] = e.at("name").get<std::string>() + (index_with_crc ? ".sharded" : ".sharded-nocrc");
    zx::json shard_shape = zx::json::array();
    for (const auto& c : e.at("chunks"))
    {
        shard_shape.push_back(factor * c.get<std::uint64_t>());
    }
    s["chunks"] = shard_shape;
    s["read_chunks"] = e.at("chunks"); // zarrita reports the inner chunk shape of sharded arrays
    zx::json index_codecs =
        index_with_crc ? zx::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                          {{"name", "crc32c"}}})
                       : zx::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}});
    s["codecs"] = zx::json::array({{{"name", "sharding_indexed"},
                                    {"configuration",
                                     {{"chunk_shape", e.at("chunks")},
                                      {"codecs", e.at("codecs")},
                                      {"index_codecs", index_codecs},
                                      {"index_location", "end"}}}}});
    s.erase("expected");
    s.erase("digest");
    return s;
}

/// The entry with zstd's content checksum switched on (zarrita cannot write those frames; its
/// decoder must accept them), or nullopt when the entry does not use zstd.
std::optional<zx::json> zstd_checksum_entry(const zx::json& e)
{
    zx::json s = e;
    bool found = false;
    for (auto& c : s["codecs"])
    {
        if (c.at("name") == "zstd")
        {
            c["configuration"]["checksum"] = true;
            found = true;
        }
    }
    if (!found)
    {
        return std::nullopt;
    }
    s["name"] = e.at("name").get<std::string>() + ".zstdsum";
    s.erase("expected");
    s.erase("digest");
    return s;
}

/// Variants of an entry stored little-endian without a compressor ("bytes-le"), with codecs zarrita
/// 0.7.5 decodes but does not encode: numcodecs.zlib (the v3 name zarrxt writes for zlib) for every
/// data type, and chains that read back exactly: numcodecs.bitround keeping every mantissa bit,
/// cast_value to a wider type, and scale_offset on
/// integers (modulo 2^bits, so every value survives) followed by cast_value. Floats get no
/// scale_offset here: (-0.0 - offset) * scale + ... cannot give back -0.0, which the formula has.
std::vector<zx::json> codec_variants(const zx::json& e)
{
    std::vector<zx::json> out;
    const std::string name = e.at("name").get<std::string>();
    if (name.find(".bytes-le.") == std::string::npos)
    {
        return out;
    }
    const std::string dtype = e.at("dtype").get<std::string>();
    const zx::json bytes_le = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    const zx::json bytes_be = {{"name", "bytes"}, {"configuration", {{"endian", "big"}}}};
    auto variant = [&](const std::string& label, zx::json codecs)
    {
        zx::json v = e;
        v["name"] = name + "." + label;
        v["codecs"] = std::move(codecs);
        v.erase("expected");
        v.erase("digest");
        out.push_back(v);
    };
    variant("numcodecs-zlib",
            zx::json::array({bytes_le, {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}}));
    auto cast = [](const char* to, zx::json extra = zx::json::object())
    {
        zx::json cfg = {{"data_type", to}};
        cfg.update(extra);
        return zx::json{{"name", "cast_value"}, {"configuration", cfg}};
    };
    if (dtype == "int16")
    {
        variant("cast-int32", zx::json::array({cast("int32"), bytes_be}));
    }
    else if (dtype == "uint8")
    {
        variant("cast-uint16", zx::json::array({cast("uint16", {{"out_of_range", "clamp"}}), bytes_le}));
    }
    else if (dtype == "float32")
    {
        variant("cast-float64",
                zx::json::array({cast("float64"),
                                 bytes_le,
                                 {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", true}}}}}));
    }
    if (dtype == "float32" || dtype == "float64")
    {
        // numcodecs.bitround in v3, keeping every mantissa bit (so the values survive exactly).
        variant("numcodecs-bitround",
                zx::json::array({{{"name", "numcodecs.bitround"},
                                  {"configuration", {{"keepbits", dtype == "float32" ? 23 : 52}}}},
                                 bytes_le}));
    }
    else if (dtype == "int32")
    {
        variant("scale-offset-cast", zx::json::array({{{"name", "scale_offset"},
                                                       {"configuration", {{"offset", 7}, {"scale", -1}}}},
                                                      cast("int64"),
                                                      bytes_be}));
    }
    else if (dtype == "uint32")
    {
        variant("scale-offset",
                zx::json::array(
                    {{{"name", "scale_offset"}, {"configuration", {{"offset", 4000000000u}}}}, bytes_le}));
    }
    return out;
}

} // namespace

TEST_SUITE("interop")
{
    TEST_CASE("zarrita v3 arrays read by zarrxt, whole and in sub-regions")
    {
        ZX_REQUIRE_ZARRITA();
        const auto& z = zarrita_written();
        INFO(z.result.output);
        REQUIRE(z.result.status == 0);
        zi::check_manifest_arrays(z.dir.path(), z.manifest);
    }

    TEST_CASE("dimension_names written by zarrita are read by zarrxt, null entries included")
    {
        ZX_REQUIRE_ZARRITA();
        const auto& z = zarrita_written();
        REQUIRE(z.result.status == 0);
        zx::filesystem_store store{(z.dir.path() / "arrays").string()};
        int named = 0, with_null = 0, unnamed = 0;
        for (const auto& e : z.manifest.at("arrays"))
        {
            const std::string name = e.at("name").get<std::string>();
            INFO("array ", name);
            const zx::json want = e.value("dimension_names", zx::json(nullptr));
            CHECK(dimension_names_json(zx::open_any(store, name).metadata()) == want);
            named += want.is_array() ? 1 : 0;
            unnamed += want.is_null() ? 1 : 0;
            with_null +=
                want.is_array() && std::find(want.begin(), want.end(), nullptr) != want.end() ? 1 : 0;
        }
        // The matrix has all three kinds (tests/peers/zarrita_peer.mjs, dimensionNamesFor).
        CHECK(named > 10);
        CHECK(with_null > 3);
        CHECK(unnamed > 10);
    }

    TEST_CASE("zarrxt hash agrees with the SHA-256 of zarrita's bytes")
    {
        ZX_REQUIRE_ZARRITA();
        const std::string tool = zxtest::env("ZARRXT_TOOL");
        if (tool.empty() || !std::filesystem::exists(tool))
        {
            ZX_SKIP("the zarrxt tool is not built (meson option tools=false)");
        }
        const auto& z = zarrita_written();
        REQUIRE(z.result.status == 0);
        zi::check_tool_hashes(tool, z.dir.path(), z.manifest);
    }

    TEST_CASE("zarrxt writes the same v3 matrix, plus sharded variants, and zarrita verifies it")
    {
        ZX_REQUIRE_ZARRITA();
        const auto& z = zarrita_written();
        REQUIRE(z.result.status == 0);
        std::vector<zx::json> entries;
        std::size_t i = 0;
        for (const auto& e : z.manifest.at("arrays"))
        {
            zx::json plain = e;
            plain.erase("expected");
            plain.erase("digest");
            entries.push_back(plain);
            const auto shape = zi::to_shape(e.at("shape"));
            // Every third array, and every partly written one, again as a sharded array.
            if (!shape.empty() && zi::product(shape) > 0 && (i % 3 == 0 || !e.at("written").is_null()))
            {
                entries.push_back(sharded_entry(e, (i / 3) % 2 == 0));
            }
            if (auto z = zstd_checksum_entry(e))
            {
                entries.push_back(*z);
            }
            for (auto& v : codec_variants(e))
            {
                entries.push_back(std::move(v));
            }
            ++i;
        }
        zxtest::temp_dir dir("zarrxt-zarrita-verify");
        zx::filesystem_store store{(dir.path() / "arrays").string()};
        zx::json out = {{"writer", "zarrxt"}, {"arrays", zx::json::array()}};
        std::size_t sharded = 0;
        for (const auto& e : entries)
        {
            const std::string name = e.at("name").get<std::string>();
            INFO("array ", name);
            try
            {
                const zx::v3_options o = v3_options_for(e);
                zi::create_with_formula(store, name, o, e);
            }
            catch (const zx::error& err)
            {
                FAIL_CHECK("zarrxt could not write the array: " << err.what());
                continue;
            }
            sharded += e.contains("read_chunks") ? 1 : 0;
            out["arrays"].push_back(e);
        }
        CHECK(sharded >= 20);
        CHECK(std::count_if(entries.begin(), entries.end(),
                            [](const zx::json& e) {
                                return e.at("name").get<std::string>().find(".numcodecs-zlib") !=
                                       std::string::npos;
                            }) >= 12);
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        const auto r = zxtest::run(peer_command("verify", dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
        // The peer walked the shards and checked the inner chunks' crc32c itself.
        CHECK(inner_checksums_checked(r.output) > 50);
    }

    TEST_CASE("zarrxt convert turns a v2 zlib array into v3 numcodecs.zlib, and zarrita reads it")
    {
        if (const auto why = zarrita_missing(); !why.empty())
        {
            ZX_SKIP_PEER(why);
        }
        const std::string tool = zxtest::env("ZARRXT_TOOL");
        if (tool.empty() || !std::filesystem::exists(tool))
        {
            ZX_SKIP("the zarrxt tool is not built (meson option tools=false)");
        }
        const auto& z = zarrita_written();
        REQUIRE(z.result.status == 0);
        zxtest::temp_dir dir("zarrxt-zarrita-convert");
        zx::filesystem_store v2_store{(dir.path() / "v2").string()};
        zx::json out = {{"writer", "zarrxt (v2 zlib, then zarrxt convert with default options)"},
                        {"arrays", zx::json::array()}};
        for (const auto& e : z.manifest.at("arrays"))
        {
            const std::string name = e.at("name").get<std::string>();
            if (name.find(".bytes-le.") == std::string::npos || e.at("shape").empty())
            {
                continue;
            }
            INFO("array ", name);
            zx::v2_options o;
            o.shape = zi::to_shape(e.at("shape"));
            o.chunks = zi::to_shape(e.at("chunks"));
            o.compressor = zx::codec_spec("zlib", {{"level", 1}});
            o.fill_value = zx::scalar::from_json(e.at("fill_value"));
            if (e.contains("dimension_names"))
            {
                // _ARRAY_DIMENSIONS in v2; the conversion makes them v3 dimension_names again.
                o.dimension_names.emplace();
                for (const auto& n : e.at("dimension_names"))
                {
                    o.dimension_names->push_back(
                        n.is_null() ? std::nullopt : std::optional<std::string>(n.get<std::string>()));
                }
            }
            zi::create_with_formula(v2_store, name, o, e);
            const auto dst = dir.path() / "arrays" / name;
            const auto r = zxtest::run(zxtest::quote(tool) + " convert " +
                                       zxtest::quote((dir.path() / "v2" / name).string()) + " " +
                                       zxtest::quote(dst.string()) + " --zarr-format 3");
            REQUIRE_MESSAGE(r.status == 0, r.output);
            const zx::json doc = zi::read_json(dst / "zarr.json");
            REQUIRE(doc.at("codecs").size() == 2);
            CHECK(doc["codecs"][1] ==
                  zx::json({{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}));
            zx::json entry = e;
            entry.erase("expected");
            entry.erase("digest");
            entry["codecs"] = doc["codecs"];
            entry["chunk_key_encoding"] = doc["chunk_key_encoding"];
            out["arrays"].push_back(entry);
        }
        REQUIRE(out["arrays"].size() >= 12);
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        const auto r = zxtest::run(peer_command("verify", dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
    }

    TEST_CASE("the peer's own crc32c checks fail on a corrupted checksum zarrita would accept")
    {
        ZX_REQUIRE_ZARRITA();
        // A sharded array with crc32c on the inner chunks and on the index (zarrita strips both
        // without checking), and an array with crc32c on whole chunks.
        zxtest::temp_dir dir("zarrxt-zarrita-crc");
        zx::filesystem_store store{(dir.path() / "arrays").string()};
        const zx::json codecs_inner = zx::json::array(
            {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
        zx::json sharded = {
            {"name", "sharded"},
            {"dtype", "int32"},
            {"shape", {8, 8}},
            {"chunks", {8, 8}},
            {"read_chunks", {4, 4}},
            {"seed", 3},
            {"written", nullptr},
            {"fill_value", 0},
            {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}}};
        sharded["codecs"] = zx::json::array({{{"name", "sharding_indexed"},
                                              {"configuration",
                                               {{"chunk_shape", {4, 4}},
                                                {"codecs", codecs_inner},
                                                {"index_codecs", codecs_inner},
                                                {"index_location", "end"}}}}});
        zx::json whole = sharded;
        whole["name"] = "whole";
        whole.erase("read_chunks");
        whole["chunks"] = {4, 4};
        whole["codecs"] = codecs_inner;
        zx::json manifest = {{"writer", "zarrxt"}, {"arrays", {sharded, whole}}};
        for (const auto& e : manifest["arrays"])
        {
            zi::create_with_formula(store, e.at("name").get<std::string>(), v3_options_for(e), e);
        }
        zxtest::write_file(dir.path() / "manifest.json", manifest.dump(1));
        const auto clean = zxtest::run(peer_command("verify", dir.str()));
        REQUIRE_MESSAGE(clean.status == 0, clean.output);
        CHECK(inner_checksums_checked(clean.output) == 4);

        // One byte of inner chunk 0's stored checksum, found through the index (little-endian
        // offset and size of entry 0, 16 * 4 + 4 bytes from the end of the shard).
        const auto shard_path = dir.path() / "arrays" / "sharded" / "c" / "0" / "0";
        const std::string pristine = zxtest::read_file(shard_path);
        std::uint64_t offset = 0, nbytes = 0;
        const std::size_t index_at = pristine.size() - (16 * 4 + 4);
        std::memcpy(&offset, pristine.data() + index_at, 8);
        std::memcpy(&nbytes, pristine.data() + index_at + 8, 8);
        REQUIRE(offset + nbytes <= index_at);
        std::string bad = pristine;
        bad[offset + nbytes - 1] = static_cast<char>(bad[offset + nbytes - 1] ^ 0x10);
        zxtest::write_file(shard_path, bad);
        const auto r = zxtest::run(peer_command("verify", dir.str()));
        CHECK_MESSAGE(r.status != 0, r.output);
        CHECK(r.output.find("FAIL sharded: shard c/0/0: inner chunk 0 crc32c mismatch") != std::string::npos);
        CHECK(r.output.find("ok   whole") != std::string::npos);
        // zarrxt itself refuses the damaged inner chunk.
        CHECK_THROWS_AS((zx::open<std::int32_t, 2>(store, "sharded").read()), zx::codec_error);

        // A damaged whole-chunk checksum is caught the same way.
        zxtest::write_file(shard_path, pristine);
        const auto chunk_path = dir.path() / "arrays" / "whole" / "c" / "1" / "1";
        std::string chunk = zxtest::read_file(chunk_path);
        chunk[0] = static_cast<char>(chunk[0] ^ 0x01);
        zxtest::write_file(chunk_path, chunk);
        const auto r2 = zxtest::run(peer_command("verify", dir.str()));
        CHECK_MESSAGE(r2.status != 0, r2.output);
        CHECK(r2.output.find("FAIL whole: ") != std::string::npos);
        CHECK(r2.output.find("chunk c/1/1: crc32c mismatch") != std::string::npos);
        CHECK(r2.output.find("ok   sharded") != std::string::npos);
    }

    TEST_CASE("zarrxt updates zarrita's arrays in place and zarrita reads the result")
    {
        ZX_REQUIRE_ZARRITA();
        const auto& z = zarrita_written();
        REQUIRE(z.result.status == 0);
        zxtest::temp_dir dir("zarrxt-zarrita-update");
        const zx::json out = zi::update_in_place(z.dir.path(), z.manifest, dir.path());
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        const auto r = zxtest::run(peer_command("verify", dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
    }

    TEST_CASE(
        "fixed-width strings zarrxt writes in v2 (<U, >U in F order, |S, fill values, unwritten chunks) "
        "read by zarrita value for value")
    {
        ZX_REQUIRE_ZARRITA();
        zxtest::temp_dir dir("zarrxt-zarrita-strings");
        zx::filesystem_store store{dir.str()};
        // zarrita drops every NUL of a value (numpy keeps inner ones) and decodes |S as UTF-8, so the
        // values here are NUL-free text.
        const xt::xtensor<std::string, 2> u = {{"a", "\u00e9\U0001F600", "", "four"},
                                               {"x\ty", "\u65e5\u672c", "q", "zz"}};
        zx::create<std::string, 2>(store, "be.F",
                                   zx::v2_options{.shape = {3, 4},
                                                  .chunks = {2, 3},
                                                  .fill_value = "\u00f8",
                                                  .order = 'F',
                                                  .big_endian = true,
                                                  .string = zx::fixed_length_utf32(4)})
            .write({{0, 0}, {2, 4}}, u);
        zx::create<std::string, 2>(store, "le",
                                   zx::v2_options{.shape = {2, 4},
                                                  .chunks = {1, 4},
                                                  .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                  .string = zx::fixed_length_utf32(4)})
            .write({{0, 0}, {2, 4}}, u);
        // zarrita 0.7.5 takes an |S fill value's base64 text for the value (docs/compat.md): a
        // non-empty fill is only read back from stored chunks, an empty one from unwritten chunks too.
        zx::create<std::string, 1>(
            store, "S",
            zx::v2_options{
                .shape = {4}, .chunks = {2}, .fill_value = "-", .string = zx::null_terminated_bytes(3)})
            .write({{0}, {3}}, xt::xtensor<std::string, 1>{"ab", "xyz", ""});
        zx::create<std::string, 1>(
            store, "S0", zx::v2_options{.shape = {5}, .chunks = {2}, .string = zx::null_terminated_bytes(3)})
            .write({{0}, {2}}, xt::xtensor<std::string, 1>{"ab", "xyz"});
        auto dump = [&](const std::string& name)
        {
            const std::string cmd =
                "ZARRXT_NODE_MODULES=" + zxtest::quote(zxtest::env("ZARRXT_NODE_MODULES")) + " " +
                zxtest::quote(zxtest::node_program()) + " " + zxtest::quote(zarrita_peer_script()) +
                " dump-strings " + zxtest::quote(dir.str()) + " " + zxtest::quote(name);
            const auto r = zxtest::run(cmd);
            REQUIRE_MESSAGE(r.status == 0, r.output);
            return zx::json::parse(r.output);
        };
        std::vector<std::string> want(u.begin(), u.end());
        const zx::json be = dump("be.F");
        CHECK(be["dtype"] == "v2:U4");
        std::vector<std::string> be_want = want;
        for (int i = 0; i < 4; ++i)
        {
            be_want.push_back("\u00f8"); // row 2 was never written
        }
        CHECK(be["values"].get<std::vector<std::string>>() == be_want);
        CHECK(dump("le")["values"].get<std::vector<std::string>>() == want);
        const zx::json sb = dump("S");
        CHECK(sb["dtype"] == "v2:S3");
        CHECK(sb["values"] == zx::json({"ab", "xyz", "", "-"}));
        CHECK(dump("S0")["values"] == zx::json({"ab", "xyz", "", "", ""}));
    }

    TEST_CASE(
        "variable-length strings: zarrxt's v3 string and v2 |O vlen-utf8 arrays read by zarrita value for "
        "value; the corpus's v3 string arrays (zarr-python 3.1) read as zarrita reads them")
    {
        ZX_REQUIRE_ZARRITA();
        zxtest::temp_dir dir("zarrxt-zarrita-vlen");
        zx::filesystem_store store{dir.str()};
        auto dump = [&](const std::string& where, const std::string& name, const std::string& version)
        {
            const std::string cmd =
                "ZARRXT_NODE_MODULES=" + zxtest::quote(zxtest::env("ZARRXT_NODE_MODULES")) + " " +
                zxtest::quote(zxtest::node_program()) + " " + zxtest::quote(zarrita_peer_script()) +
                " dump-strings " + zxtest::quote(where) + " " + zxtest::quote(name) + " " + version;
            const auto r = zxtest::run(cmd);
            REQUIRE_MESSAGE(r.status == 0, r.output);
            return zx::json::parse(r.output);
        };
        // zarrita drops NULs inside values; the values here have none.
        const xt::xtensor<std::string, 2> v = {{"a", "\u00e9\U0001F600", "", std::string(300, 'w')},
                                               {"x\ty", "\u65e5\u672c", "n/a", "zz"}};
        // v3: sharded with zstd inside, a fill value, an unwritten shard; plain chunks with gzip.
        zx::create<std::string, 2>(store, "sharded",
                                   zx::v3_options{.shape = {3, 4},
                                                  .chunk_shape = {2, 4},
                                                  .codecs = {zx::sharded({1, 2})},
                                                  .fill_value = "n/a",
                                                  .string = zx::variable_length_string()})
            .write({{0, 0}, {2, 4}}, v);
        zx::create<std::string, 2>(store, "gzip",
                                   zx::v3_options{.shape = {2, 4},
                                                  .chunk_shape = {2, 3},
                                                  .codecs = {zx::codec_spec("bytes"), zx::codec_spec("gzip")},
                                                  .string = zx::variable_length_string()})
            .write({{0, 0}, {2, 4}}, v);
        // v2 |O with vlen-utf8 (what zarr-python 2 writes for dtype=str).
        zx::create<std::string, 2>(
            store, "v2",
            zx::v2_options{
                .shape = {2, 4}, .chunks = {1, 3}, .fill_value = "-", .string = zx::variable_length_string()})
            .write({{0, 0}, {2, 4}}, v);
        std::vector<std::string> want(v.begin(), v.end());
        const zx::json sharded = dump(dir.str(), "sharded", "v3");
        CHECK(sharded["dtype"] == "string");
        std::vector<std::string> sharded_want = want;
        for (int i = 0; i < 4; ++i)
        {
            sharded_want.push_back("n/a"); // row 2 was never written
        }
        CHECK(sharded["values"].get<std::vector<std::string>>() == sharded_want);
        CHECK(dump(dir.str(), "gzip", "v3")["values"].get<std::vector<std::string>>() == want);
        CHECK(dump(dir.str(), "v2", "v2")["values"].get<std::vector<std::string>>() == want);

        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        const std::filesystem::path fixtures = corpus / "zarrita.js/fixtures/v3/data.zarr";
        zx::filesystem_store fx{fixtures.string()};
        for (const std::string name :
             {"1d.chunked.string.vlen", "1d.contiguous.string.compressed", "1d.contiguous.string.vlen",
              "1d.string.empty", "1d.string.unicode", "2d.chunked.string.vlen"})
        {
            CAPTURE(name);
            const zx::json e = dump(fixtures.string(), name, "v3");
            std::vector<std::string> got;
            if (zx::open_any(fx, name).rank() == 1)
            {
                const auto a = zx::open<std::string, 1>(fx, name).read();
                got.assign(a.begin(), a.end());
            }
            else
            {
                const auto a = zx::open<std::string, 2>(fx, name).read();
                got.assign(a.begin(), a.end());
            }
            CHECK(got == e["values"].get<std::vector<std::string>>());
            CHECK(!got.empty());
        }
    }
}
