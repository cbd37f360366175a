// Reading what the rest of the ecosystem wrote: the conformance corpus in ../shared/corpus
// (zarr-python 2 and 3 through the zarrita.js fixtures, zarr_implementations). Every array in
// MANIFEST.jsonl either hashes to the digest independent readers agreed on, or is refused with a
// zarrxt::error naming the feature zarrxt lacks. Which arrays must be refused is derived from
// their metadata and the list of unsupported features below, so when the library learns a
// feature this test says so instead of silently passing.
#include "../tools/sha256.hpp"
#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// Features zarrxt does not implement (yet), as "<where>:<name>" keys. An array using one of
/// them must be refused with an error whose message names it. Remove an entry when the library
/// gains the feature: the arrays using it must then hash to their agreed digest.
const std::set<std::string> unsupported_features = {
    // v2 data type kinds zarrxt has no element for (numpy kind letter), and object codecs (the
    // first filter of a |O array) other than vlen-utf8 / vlen-bytes.
    "v2-dtype:V",
    "v2-filter:json2",
    "v2-filter:pickle",
    "v2-filter:msgpack2",
    "v2-filter:vlen-array",
    "v2-dtype:M",
    "v2-dtype:m",
    // v2 filters (numcodecs ids).
    "v2-filter:quantize",
    "v2-filter:categorize",
    "v2-filter:astype",
};

/// One feature an array uses: its key in the list above and the text an error must mention.
struct feature
{
    std::string key;
    std::string mention;
};

void collect_v3_codecs(const zx::json& codecs, std::vector<feature>& out)
{
    for (const auto& c : codecs)
    {
        const std::string name =
            c.is_object() && c.contains("name") ? c["name"].get<std::string>() : c.dump();
        out.push_back({"v3-codec:" + name, name});
        if (c.is_object() && c.contains("configuration"))
        {
            const auto& cfg = c["configuration"];
            for (const char* nested : {"codecs", "index_codecs"})
            {
                if (cfg.contains(nested) && cfg[nested].is_array())
                {
                    collect_v3_codecs(cfg[nested], out);
                }
            }
        }
    }
}

/// The features an array's own metadata document says it uses.
std::vector<feature> features_of(const std::filesystem::path& dir)
{
    std::vector<feature> out;
    if (std::filesystem::exists(dir / ".zarray"))
    {
        const auto doc = zx::json::parse(zxtest::read_file(dir / ".zarray"));
        const std::string dtype =
            doc.at("dtype").is_string() ? doc["dtype"].get<std::string>() : doc["dtype"].dump();
        const std::string kind = dtype.size() > 1 && doc["dtype"].is_string() ? dtype.substr(1, 1) : "V";
        out.push_back({"v2-dtype:" + kind, dtype});
        if (doc.contains("filters") && doc["filters"].is_array())
        {
            for (const auto& f : doc["filters"])
            {
                const std::string id = f.value("id", f.dump());
                out.push_back({"v2-filter:" + id, id});
            }
        }
        if (doc.contains("compressor") && doc["compressor"].is_object())
        {
            const std::string id = doc["compressor"].value("id", std::string("?"));
            out.push_back({"v2-compressor:" + id, id});
        }
    }
    else if (std::filesystem::exists(dir / "zarr.json"))
    {
        const auto doc = zx::json::parse(zxtest::read_file(dir / "zarr.json"));
        const auto& dt = doc.at("data_type");
        const std::string dtype = dt.is_string() ? dt.get<std::string>() : dt.value("name", dt.dump());
        out.push_back({"v3-dtype:" + dtype, dtype});
        collect_v3_codecs(doc.at("codecs"), out);
    }
    return out;
}

/// SHA-256 (first 16 hex digits) of the whole array: C order, little-endian, bool as one byte.
std::string corpus_digest(const zx::any_array<zx::filesystem_store>& a)
{
    const auto& shape = a.shape();
    const auto& di = zx::info(a.dtype());
    zarrxt_tool::sha256 h;
    // Slabs along axis 0 keep memory small for the 512 x 512 x 3 images.
    std::uint64_t row = 1;
    for (std::size_t d = 1; d < shape.size(); ++d)
    {
        row *= shape[d];
    }
    const std::uint64_t rows = shape.empty() ? 1 : shape[0];
    const std::uint64_t step = 64;
    std::vector<std::byte> buf;
    for (std::uint64_t r = 0; r < rows; r += step)
    {
        std::vector<std::uint64_t> off(shape.size(), 0), ext = shape;
        std::uint64_t n = 1;
        if (!shape.empty())
        {
            off[0] = r;
            ext[0] = std::min(step, rows - r);
            n = ext[0] * row;
        }
        const std::size_t width = a.metadata().element_size();
        buf.resize(n * width);
        zx::value_arena arena; // the values of variable-length arrays
        a.read_bytes(off, ext, buf.data(), nullptr, &arena);
        if (zx::is_string_like(a.dtype()))
        {
            // The text rule of docs/tool.md: each value after its byte length (little-endian uint32).
            for (std::uint64_t i = 0; i < n; ++i)
            {
                std::string v;
                if (zx::is_vlen(a.dtype()))
                {
                    zx::vlen_element e;
                    std::memcpy(&e, buf.data() + i * width, sizeof e);
                    v = std::string(e.view());
                }
                else
                {
                    v = zx::decode_fixed_string(a.dtype(), buf.data() + i * width, width);
                }
                const auto len = static_cast<std::uint32_t>(v.size());
                const std::byte le[4] = {std::byte(len & 0xff), std::byte((len >> 8) & 0xff),
                                         std::byte((len >> 16) & 0xff), std::byte(len >> 24)};
                h.update(le, 4);
                h.update(reinterpret_cast<const std::byte*>(v.data()), v.size());
            }
            continue;
        }
        if constexpr (std::endian::native == std::endian::big)
        {
            for (std::size_t i = 0; i < buf.size(); i += di.word)
            {
                std::reverse(buf.begin() + i, buf.begin() + i + di.word);
            }
        }
        h.update(buf.data(), buf.size());
    }
    return zarrxt_tool::sha256::hex(h.finish(), 16);
}

/// A corpus hierarchy as a server that cannot list and has lost every node's own metadata
/// document except `keep` (the consolidated one): whatever opens through it came from that.
struct consolidated_only_store
{
    zx::filesystem_store inner;
    std::string keep;

    bool hidden(std::string_view key) const
    {
        const std::string_view name =
            key.substr(key.rfind('/') == std::string_view::npos ? 0 : key.rfind('/') + 1);
        return key != keep &&
               (name == "zarr.json" || name == ".zarray" || name == ".zgroup" || name == ".zattrs");
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return hidden(key) ? std::nullopt : inner.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const
    {
        return hidden(key) ? std::nullopt : inner.stat(key);
    }
};

} // namespace

TEST_SUITE("interop")
{
    TEST_CASE("corpus: every manifest array hashes to its agreed digest or is refused by name")
    {
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        std::istringstream lines(zxtest::read_file(corpus / "MANIFEST.jsonl"));
        std::string line;
        int hashed = 0, refused = 0, unverified = 0;
        while (std::getline(lines, line))
        {
            if (line.empty())
            {
                continue;
            }
            const auto entry = zx::json::parse(line);
            const std::string path = entry.at("path").get<std::string>();
            const auto dir = corpus / path;
            INFO("corpus array ", path);
            std::vector<std::string> missing; // unsupported features the array uses
            std::vector<std::string> mentions;
            for (const auto& f : features_of(dir))
            {
                if (unsupported_features.count(f.key) != 0)
                {
                    missing.push_back(f.key);
                    mentions.push_back(f.mention);
                }
            }
            const bool expect_refusal = !missing.empty();
            const std::optional<std::string> digest = entry.at("digest").is_null()
                                                          ? std::nullopt
                                                          : std::optional(entry["digest"].get<std::string>());

            std::optional<std::string> got;
            std::string refusal;
            try
            {
                zx::filesystem_store store{dir.string()};
                auto a = zx::open_any(store, "");
                // The manifest gives v3 names, or numpy type strings for byte-swapped v2 arrays.
                const std::string mdtype = entry.at("dtype").get<std::string>();
                bool big_endian = false;
                const auto want = zx::dtype_from_v3_name(mdtype)
                                      ? zx::dtype_from_v3_name(mdtype)
                                      : zx::dtype_from_v2_typestr(mdtype, big_endian);
                // numpy's "object" is what the array's object codec makes of it.
                const bool object = mdtype == "object" && zx::is_vlen(a.dtype());
                CHECK_MESSAGE((object || (want && *want == a.dtype())),
                              "zarrxt sees " << zx::name(a.dtype()) << ", the manifest says " << mdtype);
                got = corpus_digest(a);
            }
            catch (const zx::error& e)
            {
                refusal = e.what();
            }
            catch (const std::exception& e)
            {
                FAIL_CHECK("refused with an exception that is not a zarrxt::error: " << e.what());
                continue;
            }

            if (got)
            {
                if (expect_refusal)
                {
                    // The library learned a feature: say which list entry to drop.
                    if (digest && *got == *digest)
                    {
                        FAIL_CHECK("zarrxt now reads this array correctly: remove "
                                   << missing.front()
                                   << " from unsupported_features in tests/test_corpus.cpp");
                    }
                    else
                    {
                        FAIL_CHECK("zarrxt reads an array using "
                                   << missing.front() << " but its bytes hash to " << *got
                                   << (digest ? ", not " + *digest : std::string()));
                    }
                }
                else if (digest)
                {
                    CHECK(*got == *digest);
                    ++hashed;
                }
                else
                {
                    ++unverified; // no agreed digest: reading without error is all that is asked
                }
                continue;
            }
            if (!expect_refusal)
            {
                // digest null allows a refusal, but it must name what is unsupported; an array with
                // an agreed digest and only supported features must be read.
                CHECK_MESSAGE(!digest.has_value(), "zarrxt refused an array it should read: " << refusal);
                if (!digest)
                {
                    ++refused;
                }
                continue;
            }
            bool named = false;
            for (const auto& m : mentions)
            {
                named = named || refusal.find(m) != std::string::npos;
            }
            CHECK_MESSAGE(named, "the refusal does not name the unsupported feature (" << missing.front()
                                                                                       << "): " << refusal);
            ++refused;
        }
        MESSAGE("corpus: " << hashed << " arrays hash to their agreed digest, " << refused
                           << " refused by name, " << unverified << " read without an agreed digest");
        // The corpus README promises 60 agreed digests zarrxt can read today; fewer means arrays
        // went missing or the manifest changed shape.
        CHECK(hashed >= 60);
    }

    TEST_CASE("corpus: the pre-final v3 draft (zarrita.zr3) is refused, never misread")
    {
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        const auto root = corpus / "zarr_implementations" / "examples" / "zarrita.zr3";
        if (corpus.empty() || !std::filesystem::exists(root))
        {
            ZX_SKIP_CORPUS(
                "no conformance corpus ($ZARRXT_CORPUS/zarr_implementations/examples/zarrita.zr3)");
        }
        zx::filesystem_store store{root.string()};
        auto refused_as_draft = [](auto&& open)
        {
            try
            {
                open();
            }
            catch (const zx::metadata_error& e)
            {
                CHECK_MESSAGE(e.id() == "zarrxt.metadata.10", e.what());
                return;
            }
            catch (const std::exception& e)
            {
                FAIL_CHECK("expected metadata_error zarrxt.metadata.10, got: " << e.what());
                return;
            }
            FAIL_CHECK("the pre-final draft was opened instead of refused");
        };
        {
            INFO("the root (open_any)");
            refused_as_draft([&] { zx::open_any(store, ""); });
        }
        {
            INFO("the root (group::open)");
            refused_as_draft([&] { zx::group<zx::filesystem_store>::open(store, ""); });
        }
        for (const char* path : {"raw", "gzip", "zlib", "blosc/lz4"})
        {
            INFO("array ", path);
            refused_as_draft([&] { zx::open_any(store, path); });
            refused_as_draft([&] { zx::open<std::uint8_t, 3>(store, path); });
        }
        // Opened one level down, at the draft's data folder, there is no metadata at all.
        zx::filesystem_store data{(root / "data" / "root" / "raw").string()};
        CHECK_THROWS_AS(zx::open_any(data, ""), zx::error);
    }

    TEST_CASE("corpus: groups, their attributes and children, and arrays opened through them")
    {
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "zarrita.js" / "fixtures"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/zarrita.js/fixtures)");
        }
        using group_t = zx::group<zx::filesystem_store>;
        // What each group holds, stated here from the corpus's files (not from zarrxt): format,
        // attributes, child groups, and the number of child arrays.
        struct expected_group
        {
            const char* store;
            const char* path;
            int format;
            const char* attributes;
            std::vector<std::string> groups;
            std::size_t arrays;
        };
        const std::vector<expected_group> groups = {
            {"zarrita.js/fixtures/v2/data.zarr", "", 2, R"({"answer": 42})", {"my group with spaces"}, 32},
            {"zarrita.js/fixtures/v2/data.zarr",
             "my group with spaces",
             2,
             R"({"description": "A group with spaces in the name"})",
             {},
             0},
            {"zarrita.js/fixtures/v3/data.zarr", "", 3, "{}", {"consolidated", "my group with spaces"}, 42},
            {"zarrita.js/fixtures/v3/data.zarr",
             "my group with spaces",
             3,
             R"({"description": "A group with spaces in the name"})",
             {},
             0},
            {"zarrita.js/fixtures/v3/data.zarr", "consolidated", 3, R"({"answer": 42})", {"nested"}, 2},
            {"zarrita.js/fixtures/v3/data.zarr",
             "consolidated/nested",
             3,
             R"({"description": "A nested group"})",
             {},
             1},
            {"zarr_implementations/examples/zarr.zr", "", 2, "{}", {}, 4},
        };
        for (const auto& want : groups)
        {
            INFO("group \"" << std::string(want.path) << "\" in " << std::string(want.store));
            zx::filesystem_store store{(corpus / want.store).string()};
            try
            {
                const auto g = group_t::open(store, want.path);
                CHECK(g.zarr_format() == want.format);
                CHECK(g.attributes() == zx::json::parse(want.attributes));
                std::vector<std::string> child_groups;
                std::size_t child_arrays = 0;
                for (const auto& c : g.children())
                {
                    CHECK(c.path ==
                          (std::string(want.path).empty() ? c.name : std::string(want.path) + "/" + c.name));
                    if (c.kind == zx::node_kind::group)
                    {
                        child_groups.push_back(c.name);
                    }
                    else
                    {
                        ++child_arrays;
                    }
                }
                CHECK(child_groups == want.groups);
                CHECK(child_arrays == want.arrays);
            }
            catch (const zx::error& e)
            {
                FAIL_CHECK("zarrxt refused the group: " << e.what());
            }
        }
        // Arrays inside nested groups, opened by their path from the hierarchy's root, with the
        // values their chunk files hold (little-endian int16: 0a00 1400 1e00 2800, 0100 ... 0400).
        zx::filesystem_store v3{(corpus / "zarrita.js/fixtures/v3/data.zarr").string()};
        CHECK(zx::open<std::int16_t, 1>(v3, "consolidated/nested/1d.i2").read() ==
              xt::xtensor<std::int16_t, 1>{10, 20, 30, 40});
        CHECK(zx::open<std::int16_t, 2>(v3, "consolidated/2d.contiguous.i2").read() ==
              xt::xtensor<std::int16_t, 2>{{1, 2}, {3, 4}});
    }

    TEST_CASE("corpus: consolidated metadata written by zarr-python 2 (.zmetadata) and 3 (inline) opens the "
              "hierarchy alone")
    {
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "zarrita.js" / "fixtures"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/zarrita.js/fixtures)");
        }
        using store_t = zx::consolidated_store<consolidated_only_store>;
        const auto names = [](const store_t& s, const std::string& path)
        {
            std::vector<std::string> out;
            for (const auto& c : zx::group<store_t>::open(s, path).children())
            {
                out.push_back(c.name + (c.kind == zx::node_kind::group ? "/" : ""));
            }
            return out;
        };
        // zarr-python 3 (>= 3.1): the group "consolidated" holds its nodes, flattened, in its zarr.json.
        const consolidated_only_store v3{
            zx::filesystem_store{(corpus / "zarrita.js/fixtures/v3/data.zarr").string()},
            "consolidated/zarr.json"};
        CHECK_THROWS_AS(zx::open_any(v3, "consolidated/nested/1d.i2"), zx::array_error);
        const auto cs3 = zx::open_consolidated(v3, "consolidated", zx::consolidated_mode::always);
        CHECK(cs3.snapshot()->zarr_format == 3);
        CHECK(zx::group<store_t>::open(cs3, "consolidated").attributes() == zx::json{{"answer", 42}});
        CHECK(names(cs3, "consolidated") ==
              std::vector<std::string>{"1d.chunked.i2", "2d.contiguous.i2", "nested/"});
        CHECK(names(cs3, "consolidated/nested") == std::vector<std::string>{"1d.i2"});
        CHECK(zx::group<store_t>::open(cs3, "consolidated/nested").attributes() ==
              zx::json{{"description", "A nested group"}});
        // The values the chunk files hold (as in the test above, read there from the nodes' own metadata).
        CHECK(zx::open<std::int16_t, 1>(cs3, "consolidated/nested/1d.i2").read() ==
              xt::xtensor<std::int16_t, 1>{10, 20, 30, 40});
        CHECK(zx::open<std::int16_t, 2>(cs3, "consolidated/2d.contiguous.i2").read() ==
              xt::xtensor<std::int16_t, 2>{{1, 2}, {3, 4}});
        CHECK(zx::open<std::int16_t, 1>(cs3, "consolidated/1d.chunked.i2").read() ==
              xt::xtensor<std::int16_t, 1>{1, 2, 3, 4});
        // The store's root was never consolidated (zarr-python 3 wrote "consolidated_metadata": null).
        CHECK(!zx::open_consolidated(v3, "").has_snapshot());

        // zarr-python 2: .zmetadata at the root, every array and group of the hierarchy in it.
        const zx::filesystem_store v2_files{(corpus / "zarrita.js/fixtures/v2/data.zarr").string()};
        const consolidated_only_store v2{v2_files, ".zmetadata"};
        const auto cs2 = zx::open_consolidated(v2, "", zx::consolidated_mode::always);
        CHECK(cs2.snapshot()->zarr_format == 2);
        const auto g2 = zx::group<store_t>::open(cs2, "");
        CHECK(g2.attributes() == zx::json{{"answer", 42}});
        const auto kids = names(cs2, "");
        CHECK(kids.size() == 33); // 32 arrays and "my group with spaces", as the test above counts them
        CHECK(std::count(kids.begin(), kids.end(), "my group with spaces/") == 1);
        CHECK(zx::group<store_t>::open(cs2, "my group with spaces").attributes() ==
              zx::json{{"description", "A group with spaces in the name"}});
        for (const char* path :
             {"1d.contiguous.i4", "1d.chunked.ragged.i2", "2d.chunked.i2", "3d.chunked.mixed.i2.F"})
        {
            INFO("array ", path);
            const auto a = zx::open_any(cs2, path);
            const auto b = zx::open_any(v2_files, path);
            CHECK(a.metadata().shape == b.metadata().shape);
            const std::size_t n = std::accumulate(b.shape().begin(), b.shape().end(), std::size_t{1},
                                                  [](std::size_t x, std::uint64_t y) { return x * y; });
            std::vector<std::byte> got(n * zx::info(a.dtype()).size), want(got.size());
            a.read_bytes(std::vector<std::uint64_t>(a.rank(), 0), a.shape(), got.data());
            b.read_bytes(std::vector<std::uint64_t>(b.rank(), 0), b.shape(), want.data());
            CHECK(got == want);
        }
    }
}
