// Zarr v2 interoperability with zarr-python 2.13 (Debian's python3-zarr), in both directions:
// zarr-python writes a matrix of arrays (tests/peers/zarr_python_peer.py, every numcodecs
// compressor and the PackBits filter) that zarrxt reads value for value, whole and in
// sub-regions; zarrxt writes the same matrix and zarr-python verifies it;
// zarrxt updates zarr-python's arrays in place and zarr-python reads the result. The committed
// fixtures in tests/data/v2 are read without Python.
#include "expect_error.hpp"
#include "interop.hpp"

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include <chrono>
#include <memory>

// The records of the peer's "nested.F.zlib" array, and one zarrxt writes (test "records ...").
struct py_inner
{
    float a;
    std::int64_t b;
};
ZARRXT_RECORD(py_inner, a, b);
struct py_nested
{
    py_inner p;
    std::int8_t k;
};
ZARRXT_RECORD(py_nested, p, k);
struct py_written
{
    std::int16_t id;
    std::array<float, 2> pos;
    py_inner inner;
    std::chrono::duration<std::int64_t, std::milli> dt;
};
ZARRXT_RECORD(py_written, id, pos, inner, dt);

namespace zi = zxtest::interop;
using namespace std::string_literals;
namespace zx = zarrxt;

namespace
{

std::string python_peer_script()
{
    return zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/zarr_python_peer.py";
}

/// The peer's output for one command, which must succeed.
std::string python_peer_output(const std::string& args)
{
    auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) + " " + args);
    REQUIRE_MESSAGE(r.status == 0, r.output);
    return r.output;
}

/// Every value of the string array (of rank 1 to 3) at `path`, C order, as the peer's strings_of
/// prints them: the byte types (|S, bytes) as hex, the text types as they are.
std::vector<std::string> string_values_of(const zx::filesystem_store& st, const std::string& path)
{
    std::vector<std::string> out;
    auto take = [&](const auto& a)
    {
        const zx::dtype_id id = a.metadata().dtype;
        const bool raw = id == zx::dtype_id::fixed_bytes || id == zx::dtype_id::vlen_bytes;
        for (const auto& v : a.read())
        {
            out.push_back(raw ? zi::hex(v) : v);
        }
    };
    const std::size_t rank = zx::open_any(st, path).rank();
    if (rank == 1)
    {
        take(zx::open<std::string, 1>(st, path));
    }
    else if (rank == 2)
    {
        take(zx::open<std::string, 2>(st, path));
    }
    else
    {
        REQUIRE(rank == 3);
        take(zx::open<std::string, 3>(st, path));
    }
    return out;
}

/// The first line of `zarrxt hash PATH` (the tool of this build, $ZARRXT_TOOL).
std::string tool_hash(const std::filesystem::path& p)
{
    auto r = zxtest::run(zxtest::quote(zxtest::env("ZARRXT_TOOL")) + " hash " + zxtest::quote(p.string()));
    REQUIRE_MESSAGE(r.status == 0, r.output);
    return r.output.substr(0, r.output.find('\n'));
}

/// The matrix zarr-python writes: generated once per process and shared by the test cases, so
/// the peer runs once however many of them are selected.
struct python_output
{
    zxtest::temp_dir dir{"zarrxt-py-write"};
    zxtest::command_result result;
    zx::json manifest;
};

const python_output& python_written()
{
    static const std::unique_ptr<python_output> out = []
    {
        auto o = std::make_unique<python_output>();
        o->result = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                " write " + zxtest::quote(o->dir.str()));
        if (o->result.status == 0)
        {
            o->manifest = zi::read_json(o->dir.path() / "manifest.json");
        }
        return o;
    }();
    return *out;
}

/// v2 create options for a manifest entry written by zarr_python_peer.py.
zx::v2_options v2_options_for(const zx::json& e, zx::json& expect)
{
    zx::v2_options o;
    o.shape = zi::to_shape(e.at("shape"));
    o.chunks = zi::to_shape(e.at("chunks"));
    expect = e.at("expect");
    const std::string typestr = expect.at("typestr").get<std::string>();
    o.big_endian = typestr[0] == '>';
    o.order = expect.at("order").get<std::string>()[0];
    o.dimension_separator = expect.at("dimension_separator").get<std::string>()[0];
    if (e.at("fill_value").is_null())
    {
        o.null_fill_value = true;
    }
    else
    {
        o.fill_value = zx::scalar::from_json(e.at("fill_value"));
    }
    // numcodecs' configurations without their id, as numcodecs.* codecs (PackBits, BZ2, LZMA).
    auto numcodecs_spec = [](const zx::json& cfg)
    {
        zx::json rest = cfg;
        rest.erase("id");
        return zx::codec_spec("numcodecs." + cfg.at("id").get<std::string>(), rest);
    };
    if (const auto f = expect.find("filters"); f != expect.end())
    {
        for (const auto& filter : *f)
        {
            o.filters.push_back(numcodecs_spec(filter));
        }
    }
    const auto& c = expect.at("compressor");
    if (c.is_null())
    {
        o.compressor = std::nullopt;
        return o;
    }
    const std::string id = c.at("id").get<std::string>();
    if (id == "gzip" || id == "zlib" || id == "zstd")
    {
        o.compressor = zx::codec_spec(id, {{"level", c.at("level")}});
        return o;
    }
    if (id == "bz2" || id == "lzma")
    {
        o.compressor = numcodecs_spec(c);
        return o;
    }
    REQUIRE(id == "blosc");
    // numcodecs' shuffle numbers; zarrxt cannot ask for AUTOSHUFFLE (-1), so it writes the
    // shuffle zarr-python would pick (byte shuffle for multi-byte types) and expects that back.
    int shuffle = c.at("shuffle").get<int>();
    if (shuffle == -1)
    {
        shuffle = zx::info(zi::dtype_named(e.at("dtype").get<std::string>())).size > 1 ? 1 : 0;
        expect["compressor"]["shuffle"] = shuffle;
    }
    const char* names[] = {"noshuffle", "shuffle", "bitshuffle"};
    o.compressor = zx::codec_spec("blosc", {{"cname", c.at("cname")},
                                            {"clevel", c.at("clevel")},
                                            {"shuffle", names[shuffle]},
                                            {"blocksize", c.at("blocksize")}});
    return o;
}

/// The hierarchy zarr-python writes (write-groups), generated once per process.
const python_output& python_groups_written()
{
    static const std::unique_ptr<python_output> out = []
    {
        auto o = std::make_unique<python_output>();
        o->result = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                " write-groups " + zxtest::quote(o->dir.str()));
        if (o->result.status == 0)
        {
            o->manifest = zi::read_json(o->dir.path() / "manifest.json");
        }
        return o;
    }();
    return *out;
}

/// Check a hierarchy against a manifest's "groups" and the attributes of its "arrays".
void check_hierarchy(const std::filesystem::path& root, const zx::json& manifest)
{
    using group_t = zx::group<zx::filesystem_store>;
    zx::filesystem_store store{(root / "arrays").string()};
    REQUIRE(manifest.at("groups").size() >= 5);
    for (const auto& g : manifest.at("groups"))
    {
        const std::string path = g.at("path").get<std::string>();
        INFO("group \"" << path << "\"");
        try
        {
            const auto grp = group_t::open(store, path);
            CHECK(grp.zarr_format() == 2);
            CHECK(grp.attributes() == g.at("attributes"));
            std::vector<std::string> groups, arrays;
            for (const auto& c : grp.children())
            {
                (c.kind == zx::node_kind::group ? groups : arrays).push_back(c.name);
            }
            CHECK(zx::json(groups) == g.at("groups"));
            CHECK(zx::json(arrays) == g.at("arrays"));
        }
        catch (const zx::error& e)
        {
            FAIL_CHECK("zarrxt refused the group: " << e.what());
        }
    }
    for (const auto& e : manifest.at("arrays"))
    {
        const std::string name = e.at("name").get<std::string>();
        INFO("array ", name);
        try
        {
            CHECK(zx::open_any(store, name).metadata().attributes == e.at("attributes"));
        }
        catch (const zx::error& err)
        {
            FAIL_CHECK("zarrxt refused the array: " << err.what());
        }
    }
}

/// zarrxt writes the array manifest entry `e` describes with `o`; the entry the peer checks (with
/// what zarrxt expects it to read) goes to out["arrays"]. A refusal is a failed check.
void write_manifest_array(zx::filesystem_store& store, const zx::json& e, const zx::v2_options& o,
                          const zx::json& expect, zx::json& out)
{
    try
    {
        zi::create_with_formula(store, e.at("name").get<std::string>(), o, e);
    }
    catch (const zx::error& err)
    {
        FAIL_CHECK("zarrxt could not write the array: " << err.what());
        return;
    }
    zx::json entry = e;
    entry.erase("expected");
    entry.erase("digest");
    entry["expect"] = expect;
    out["arrays"].push_back(entry);
}

/// zarrxt writes the hierarchy a write-groups manifest describes into `dir`/arrays (groups first,
/// parents before children, then arrays) and returns the manifest of what it wrote.
zx::json write_hierarchy(const zx::json& manifest, const std::filesystem::path& dir)
{
    zx::filesystem_store store{(dir / "arrays").string()};
    using group_t = zx::group<zx::filesystem_store>;
    // Groups first, parents before children (the manifest lists them that way), then arrays.
    for (const auto& g : manifest.at("groups"))
    {
        INFO("group ", g.at("path").get<std::string>());
        group_t::create(
            store, g.at("path").get<std::string>(),
            zx::group_options{.zarr_format = 2, .attributes = g.at("attributes"), .overwrite = true});
    }
    zx::json out = {{"writer", "zarrxt"}, {"arrays", zx::json::array()}, {"groups", manifest.at("groups")}};
    for (const auto& e : manifest.at("arrays"))
    {
        const std::string name = e.at("name").get<std::string>();
        INFO("array ", name);
        zx::json expect;
        zx::v2_options o = v2_options_for(e, expect);
        o.attributes = e.at("attributes");
        write_manifest_array(store, e, o, expect, out);
    }
    return out;
}

/// Remove every node's own metadata document below `root` (.zarray, .zgroup, .zattrs), keeping
/// .zmetadata: whatever still opens was read from the consolidated document. How many went.
std::size_t remove_node_metadata(const std::filesystem::path& root)
{
    std::vector<std::filesystem::path> doomed;
    for (const auto& f : std::filesystem::recursive_directory_iterator(root))
    {
        const std::string name = f.path().filename().string();
        if (name == ".zarray" || name == ".zgroup" || name == ".zattrs" || name == "zarr.json")
        {
            doomed.push_back(f.path());
        }
    }
    for (const auto& p : doomed)
    {
        std::filesystem::remove(p);
    }
    return doomed.size();
}

} // namespace

TEST_SUITE("interop")
{
    TEST_CASE("zarr-python v2 arrays read by zarrxt, whole and in sub-regions")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_written();
        INFO(py.result.output);
        REQUIRE(py.result.status == 0);
        zi::check_manifest_arrays(py.dir.path(), py.manifest);
    }

    TEST_CASE("zarrxt hash agrees with the SHA-256 of zarr-python's bytes")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const std::string tool = zxtest::env("ZARRXT_TOOL");
        if (tool.empty() || !std::filesystem::exists(tool))
        {
            ZX_SKIP("the zarrxt tool is not built (meson option tools=false)");
        }
        const auto& py = python_written();
        REQUIRE(py.result.status == 0);
        zi::check_tool_hashes(tool, py.dir.path(), py.manifest);
    }

    TEST_CASE("zarrxt writes the same v2 matrix and zarr-python verifies it")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_written();
        REQUIRE(py.result.status == 0);
        zxtest::temp_dir dir("zarrxt-py-verify");
        zx::filesystem_store store{(dir.path() / "arrays").string()};
        zx::json out = {{"writer", "zarrxt"}, {"arrays", zx::json::array()}};
        for (const auto& e : py.manifest.at("arrays"))
        {
            const std::string name = e.at("name").get<std::string>();
            INFO("array ", name);
            zx::json expect;
            const zx::v2_options o = v2_options_for(e, expect);
            write_manifest_array(store, e, o, expect, out);
        }
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        const auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                   " verify " + zxtest::quote(dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
    }

    TEST_CASE("zarrxt updates zarr-python's arrays in place and zarr-python reads the result")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_written();
        REQUIRE(py.result.status == 0);
        zxtest::temp_dir dir("zarrxt-py-update");
        const zx::json out = zi::update_in_place(py.dir.path(), py.manifest, dir.path());
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        const auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                   " verify " + zxtest::quote(dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
    }

    TEST_CASE("float16 fill values round once, to the nearest binary16, as zarr-python reads them")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        // JSON numbers just past a binary16 rounding tie. Rounded to float first they land exactly
        // on the tie, which then goes to the even neighbour: the wrong one. zarr-python (numpy)
        // rounds the double once. zarr-python itself writes exact binary16 values, but any writer
        // may put the user's double in the metadata.
        const char* fills[] = {
            "1.0004882812500009",    // 1 + 2^-11 + 2^-50: 0x3c01, not 0x3c00
            "-1.0004882812500009",   // its negative: 0xbc01
            "2.980232327587373e-08", // 2^-25 + 2^-50: the smallest subnormal 0x0001, not 0
            "1.0004882812500000",    // an exact tie: even, 0x3c00 (the control)
        };
        zxtest::temp_dir dir("zarrxt-f16-fill");
        zx::filesystem_store store{dir.str()};
        for (std::size_t i = 0; i < std::size(fills); ++i)
        {
            INFO("fill_value ", std::string(fills[i]));
            // Appended, not "f" + to_string(i): GCC 12 reports a false -Wrestrict for that
            // operator+ once the unity build inlines it (GCC bug 105329).
            std::string name = "f";
            name += std::to_string(i);
            zxtest::write_file(
                dir.path() / name / ".zarray",
                std::string(R"({"chunks": [4], "compressor": null, "dtype": "<f2", "fill_value": )") +
                    fills[i] + R"(, "filters": null, "order": "C", "shape": [4], "zarr_format": 2})");
            const auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                       " dump " + zxtest::quote((dir.path() / name).string()));
            REQUIRE_MESSAGE(r.status == 0, r.output);
            std::string got;
            try
            {
                const auto v = zx::open<zx::float16, 1>(store, name).read();
                zi::append_le(got, v.data(), v.size());
            }
            catch (const zx::error& e)
            {
                FAIL_CHECK(e.what());
            }
            CHECK(zi::hex(got) + "\n" == r.output);
        }
    }

    TEST_CASE("resize and append both ways with zarr-python; a cut edge chunk never brings old rows back")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        using tensor = xt::xtensor<std::int32_t, 2>;
        zxtest::temp_dir dir("zarrxt-py-resize");
        zx::filesystem_store store{dir.str()};
        const std::string path = (dir.path() / "a").string();
        auto peer = python_peer_output;
        // What zarr-python reads: its shape and its values must be the model's.
        auto python_reads = [&](const tensor& want)
        {
            std::string bytes;
            zi::append_le(bytes, want.data(), want.size());
            const std::string out = peer("dump-shape " + zxtest::quote(path));
            const auto eol = out.find('\n');
            REQUIRE(eol != std::string::npos);
            CHECK(zx::json::parse(out.substr(0, eol)) == zx::json({want.shape()[0], want.shape()[1]}));
            CHECK(out.substr(eol + 1) == zi::hex(bytes) + "\n");
        };
        // 3 * (C-order index) + 1, the values the peer's append writes.
        auto peer_values = [](std::size_t r, std::size_t c)
        {
            tensor t = tensor::from_shape({r, c});
            for (std::size_t i = 0; i < t.size(); ++i)
            {
                t.data()[i] = static_cast<std::int32_t>(3 * i + 1);
            }
            return t;
        };
        auto pad = [](const tensor& t, std::size_t r, std::size_t c)
        {
            tensor out = tensor::from_shape({r, c});
            out.fill(-1);
            const std::size_t rr = std::min(r, t.shape()[0]), cc = std::min(c, t.shape()[1]);
            xt::view(out, xt::range(0, rr), xt::range(0, cc)) =
                xt::view(t, xt::range(0, rr), xt::range(0, cc));
            return out;
        };
        auto a =
            zx::create<std::int32_t, 2>(store, "a",
                                        zx::v2_options{.shape = {10, 7},
                                                       .chunks = {4, 3},
                                                       .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                       .fill_value = zx::scalar(-1)});
        tensor model = tensor::from_shape({10, 7});
        for (std::size_t i = 0; i < model.size(); ++i)
        {
            model.data()[i] = static_cast<std::int32_t>(i * 7919 % 1000);
        }
        a.write({{0, 0}, {10, 7}}, model);
        // zarrxt shrinks across chunk boundaries, then grows: zarr-python sees fill where the cut was.
        a.resize({6, 5});
        model = pad(model, 6, 5);
        python_reads(model);
        CHECK(!std::filesystem::exists(dir.path() / "a" / "2.0")); // wholly outside: erased
        a.resize({13, 9});
        model = pad(model, 13, 9);
        python_reads(model);
        // zarrxt appends rows; zarr-python appends columns; each reads the other's.
        const tensor rows = peer_values(3, 9);
        a.append(0, rows);
        model = xt::concatenate(xt::xtuple(model, rows), 0);
        python_reads(model);
        peer("append " + zxtest::quote(path) + " 1 2");
        model = xt::concatenate(xt::xtuple(model, peer_values(16, 2)), 1);
        a.refresh();
        CHECK(a.shape() == std::array<std::uint64_t, 2>{16, 11});
        CHECK(a.read() == model);
        // zarr-python 2.13 shrinks by erasing the chunks outside and leaves the cut rows in the
        // edge chunks; grown again by zarr-python, they would come back. Grown by zarrxt, they do not.
        peer("resize " + zxtest::quote(path) + " 5,4");
        a.resize({8, 8});
        model = pad(pad(model, 5, 4), 8, 8);
        CHECK(a.read() == model);
        python_reads(model);
    }

    TEST_CASE(
        "datetime64 and timedelta64 both ways with zarr-python: counts, units, NaT fill values, numpy's "
        "text")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        namespace ch = std::chrono;
        zxtest::temp_dir dir("zarrxt-py-times");
        zx::filesystem_store store{dir.str()};
        auto peer = [](const std::string& args) { return zx::json::parse(python_peer_output(args)); };
        // Every count as stored, C order, whatever the rank (raw int64 access to a time array).
        auto counts_of = [&](const std::string& name)
        {
            auto a = zx::open_any(store, name);
            std::size_t n = 1;
            for (auto e : a.shape())
            {
                n *= static_cast<std::size_t>(e);
            }
            std::vector<std::int64_t> out(n);
            a.read_bytes(std::vector<std::uint64_t>(a.rank(), 0), a.shape(),
                         reinterpret_cast<std::byte*>(out.data()));
            return out;
        };
        // zarr-python writes; zarrxt reads units, fill values, counts, and prints numpy's text.
        const zx::json written = peer("write-times " + zxtest::quote(dir.str()));
        REQUIRE(written.size() == 6);
        for (const auto& e : written)
        {
            const std::string name = e["name"];
            CAPTURE(name);
            auto a = zx::open_any(store, name);
            const auto& m = a.metadata();
            const std::string typestr = e["dtype"];
            bool big = false;
            zx::time_unit unit;
            CHECK(zx::dtype_from_v2_typestr(typestr, big, &unit) == m.dtype);
            CHECK(unit == m.dtype.unit);
            CHECK(zx::v2_typestr(m.dtype, big, m.dtype.unit) == typestr);
            CHECK(m.fill.as<std::int64_t>() ==
                  (e["fill"] == "NaT" ? zx::nat : e["fill"].get<std::int64_t>()));
            const auto got = counts_of(name);
            CHECK(got == e["counts"].get<std::vector<std::int64_t>>());
            if (e.contains("text"))
            {
                for (std::size_t i = 0; i < got.size(); ++i)
                {
                    CAPTURE(got[i]);
                    CHECK(zx::format_datetime(got[i], m.dtype.unit) == e["text"][i].get<std::string>());
                }
            }
        }
        // Typed: std::chrono values of the stored unit (a unit of the same length spelt otherwise
        // is the same unit), and a unit of another length refused.
        {
            auto a = zx::open<ch::sys_time<ch::nanoseconds>, 1>(store, "ns.nat");
            const auto v = a.read();
            CHECK(v(3).time_since_epoch().count() == 1583020800123456789);
            CHECK(v(6).time_since_epoch().count() == zx::nat); // the unwritten chunk: the NaT fill
            CHECK(zx::open<ch::sys_days, 2>(store, "D.be.F").read()(0, 2) ==
                  ch::sys_days(ch::year(2000) / 2 / 29));
            const auto ts = zx::open<ch::duration<std::int64_t, std::ratio<10>>, 1>(store, "10s").read();
            CHECK(ts(1).count() == 7);
            CHECK(zx::open<ch::hours, 2>(store, "h.td").read()(0, 1) == ch::hours(-24));
            ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "10s",
                            zx::open<ch::seconds, 1>(store, "10s"));
            ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "ns.nat",
                            zx::open<ch::sys_time<ch::microseconds>, 1>(store, "ns.nat"));
            ZX_EXPECT_ERROR(
                zx::dtype_mismatch, "zarrxt.array.1", "10s",
                zx::open<ch::sys_time<ch::duration<std::int64_t, std::ratio<10>>>, 1>(store, "10s"));
        }
        // zarrxt writes; zarr-python reads type strings, fill values and counts.
        using ms_time = ch::sys_time<ch::milliseconds>;
        auto ms = zx::create<ms_time, 2>(store, "ms.be.F",
                                         zx::v2_options{.shape = {3, 5},
                                                        .chunks = {2, 2},
                                                        .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                        .fill_value = zx::scalar::from_json("NaT"),
                                                        .order = 'F',
                                                        .big_endian = true});
        xt::xtensor<ms_time, 2> mv = xt::xtensor<ms_time, 2>::from_shape({2, 5});
        for (std::size_t i = 0; i < mv.size(); ++i)
        {
            mv.data()[i] = ms_time(ch::milliseconds(static_cast<std::int64_t>(i * 86400123) - 5));
        }
        ms.write({{0, 0}, {2, 5}}, mv); // row 2 stays unwritten: NaT
        using tenmin = ch::duration<std::int64_t, std::ratio<600>>;
        auto td = zx::create<tenmin, 1>(store, "10m",
                                        zx::v2_options{.shape = {4}, .chunks = {3}, .fill_value = tenmin(5)});
        td.write({{0}, {2}}, xt::xtensor<tenmin, 1>{tenmin(-1), tenmin(zx::nat)});
        {
            const zx::json e = peer("dump-times " + zxtest::quote((dir.path() / "ms.be.F").string()));
            CHECK(e["dtype"] == ">M8[ms]");
            CHECK(e["fill"] == "NaT");
            std::vector<std::int64_t> want;
            for (std::size_t r = 0; r < 3; ++r)
            {
                for (std::size_t c = 0; c < 5; ++c)
                {
                    want.push_back(r < 2 ? mv(r, c).time_since_epoch().count() : zx::nat);
                }
            }
            CHECK(e["counts"].get<std::vector<std::int64_t>>() == want);
            for (std::size_t i = 0; i < want.size(); ++i)
            {
                CHECK(e["text"][i].get<std::string>() ==
                      zx::format_datetime(want[i], {zx::time_base::ms, 1}));
            }
            const zx::json t = peer("dump-times " + zxtest::quote((dir.path() / "10m").string()));
            CHECK(t["dtype"] == "<m8[10m]");
            CHECK(t["fill"] == 5);
            CHECK(t["counts"] == zx::json({-1, zx::nat, 5, 5}));
        }
    }

    TEST_CASE("fixed-width strings |S n, <U n, >U n both ways with zarr-python; the corpus's string arrays "
              "value for value; zarrxt hash follows the text rule")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir dir("zarrxt-py-strings");
        zx::filesystem_store store{dir.str()};
        auto peer = [](const std::string& args) { return zx::json::parse(python_peer_output(args)); };
        // A value as the peer prints it: |S bytes as hex, <U text as it is.
        auto printed = [](zx::dtype_id id, const std::string& v)
        { return id == zx::dtype_id::fixed_utf32 ? v : zi::hex(v); };
        auto values_of = string_values_of;
        const std::string tool = zxtest::env("ZARRXT_TOOL");

        // zarr-python writes (internal NULs, non-UTF-8 bytes, astral code points, F order, big
        // endian, fill values in unwritten chunks, zlib and blosc); zarrxt reads.
        const zx::json written = peer("write-strings " + zxtest::quote(dir.str()));
        REQUIRE(written.size() == 4);
        for (const auto& e : written)
        {
            const std::string name = e["name"];
            CAPTURE(name);
            auto a = zx::open_any(store, name);
            const auto& m = a.metadata();
            CHECK(zx::v2_typestr(m.dtype, e["dtype"].get<std::string>()[0] == '>', {}, m.dtype.fixed_size) ==
                  e["dtype"]);
            CHECK(values_of(store, name) == e["values"].get<std::vector<std::string>>());
            CHECK(printed(m.dtype, zx::decode_fixed_string(m.dtype, m.fill.data(), m.dtype.fixed_size)) ==
                  e["fill"]);
            if (!tool.empty())
            {
                CHECK(tool_hash(dir.path() / name) == e["hash"]);
            }
        }

        // The corpus's fixed-width string arrays (zarrita.js's v2 fixtures), read by both.
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        const std::filesystem::path fixtures = corpus / "zarrita.js/fixtures/v2/data.zarr";
        zx::filesystem_store fx{fixtures.string()};
        for (const std::string name : {"1d.contiguous.S7", "1d.contiguous.U13.be", "1d.contiguous.U13.le",
                                       "1d.contiguous.U7", "2d.chunked.U7"})
        {
            CAPTURE(name);
            const zx::json e = peer("dump-strings " + zxtest::quote((fixtures / name).string()));
            CHECK(values_of(fx, name) == e["values"].get<std::vector<std::string>>());
            CHECK(e["values"].size() == 4);
            if (!tool.empty())
            {
                CHECK(tool_hash(fixtures / name) == e["hash"]);
            }
        }

        // zarrxt writes (big-endian F order with a fill value and a partial write; |S with bytes
        // that are no text and a fill of a NUL-free prefix); zarr-python reads.
        auto u = zx::create<std::string, 2>(store, "U4.be.F",
                                            zx::v2_options{.shape = {3, 5},
                                                           .chunks = {2, 2},
                                                           .fill_value = "f\u00fcll",
                                                           .order = 'F',
                                                           .big_endian = true,
                                                           .string = zx::fixed_length_utf32(4)});
        xt::xtensor<std::string, 2> uv = {{"a", "\u00e9\u00e9", "", "\U0001F600", "abcd"},
                                          {"x\ty", "\u65e5", "a\0b"s, "zz", "q"}};
        u.write({{0, 0}, {2, 5}}, uv);
        u.write({{1, 1}, {1, 2}}, xt::xtensor<std::string, 2>{{"new", "val"}}); // read-modify-write
        uv(1, 1) = "new";
        uv(1, 2) = "val";
        {
            const zx::json e = peer("dump-strings " + zxtest::quote((dir.path() / "U4.be.F").string()));
            CHECK(e["dtype"] == ">U4");
            CHECK(e["fill"] == "f\u00fcll");
            std::vector<std::string> want(uv.begin(), uv.end());
            for (int i = 0; i < 5; ++i)
            {
                want.push_back("f\u00fcll"); // row 2: never written
            }
            CHECK(e["values"].get<std::vector<std::string>>() == want);
        }
        auto b =
            zx::create<std::string, 1>(store, "S5",
                                       zx::v2_options{.shape = {5},
                                                      .chunks = {2},
                                                      .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                      .fill_value = "\x01z",
                                                      .string = zx::null_terminated_bytes(5)});
        b.write({{0}, {3}}, xt::xtensor<std::string, 1>{"\xff\xfe", "a\0b"s, "12345"});
        {
            const zx::json e = peer("dump-strings " + zxtest::quote((dir.path() / "S5").string()));
            CHECK(e["dtype"] == "|S5");
            CHECK(e["fill"] == "017a");
            CHECK(e["values"] == zx::json({"fffe", "610062", "3132333435", "017a", "017a"}));
        }
    }

    TEST_CASE("variable-length strings and bytes (|O with vlen-utf8 / vlen-bytes) both ways with zarr-python; "
              "the corpus's object array; zarrxt hash follows the text rule")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir dir("zarrxt-py-vlen");
        zx::filesystem_store store{dir.str()};
        auto peer = [](const std::string& args) { return zx::json::parse(python_peer_output(args)); };
        auto values_of = string_values_of;
        const std::string tool = zxtest::env("ZARRXT_TOOL");

        // zarr-python writes (dtype=str with its fill "0", F order with zlib, bytes with a null
        // fill and an unwritten chunk, blosc); zarrxt reads value for value.
        const zx::json written = peer("write-vlen " + zxtest::quote(dir.str()));
        REQUIRE(written.size() == 4);
        for (const auto& e : written)
        {
            const std::string name = e["name"];
            CAPTURE(name);
            const auto a = zx::open_any(store, name);
            CHECK(a.dtype() == (e["object_codec"] == "vlen-utf8" ? zx::dtype_id::string : zx::dtype_id::vlen_bytes));
            CHECK(values_of(store, name) == e["values"].get<std::vector<std::string>>());
            if (!tool.empty())
            {
                CHECK(tool_hash(dir.path() / name) == e["hash"]);
            }
        }

        // The corpus's vlen-utf8 object array (zarrita.js's v2 fixtures, blosc lz4), read by both.
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        const std::filesystem::path fixtures = corpus / "zarrita.js/fixtures/v2/data.zarr";
        {
            zx::filesystem_store fx{fixtures.string()};
            const zx::json e = peer("dump-strings " + zxtest::quote((fixtures / "3d.chunked.O").string()));
            CHECK(e["object_codec"] == "vlen-utf8");
            CHECK(e["values"].size() == 8);
            CHECK(values_of(fx, "3d.chunked.O") == e["values"].get<std::vector<std::string>>());
        }

        // zarrxt writes (text in F order with a fill value, a rewrite of part of a chunk and an
        // unwritten chunk; bytes that are no text with zlib); zarr-python reads.
        auto u = zx::create<std::string, 2>(store, "str.F",
                                            zx::v2_options{.shape = {3, 5},
                                                           .chunks = {2, 2},
                                                           .fill_value = "f\u00fcll",
                                                           .order = 'F',
                                                           .string = zx::variable_length_string()});
        xt::xtensor<std::string, 2> uv = {{"a", "\u00e9\u00e9", "", "\U0001F600", std::string(500, 'L')},
                                          {"x\ty", "\u65e5", "a\0b"s, "zz", "q"}};
        u.write({{0, 0}, {2, 5}}, uv);
        u.write({{1, 1}, {1, 2}}, xt::xtensor<std::string, 2>{{"new", "f\u00fcll"}}); // read-modify-write
        uv(1, 1) = "new";
        uv(1, 2) = "f\u00fcll";
        {
            const zx::json e = peer("dump-strings " + zxtest::quote((dir.path() / "str.F").string()));
            CHECK(e["dtype"] == "|O");
            CHECK(e["object_codec"] == "vlen-utf8");
            CHECK(e["fill"] == "f\u00fcll");
            std::vector<std::string> want(uv.begin(), uv.end());
            for (int i = 0; i < 5; ++i)
            {
                want.push_back("f\u00fcll"); // row 2: never written
            }
            CHECK(e["values"].get<std::vector<std::string>>() == want);
            if (!tool.empty())
            {
                CHECK(tool_hash(dir.path() / "str.F") == e["hash"]);
            }
        }
        auto b = zx::create<std::string, 1>(store, "bytes",
                                            zx::v2_options{.shape = {5},
                                                           .chunks = {2},
                                                           .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                           .string = zx::variable_length_bytes()});
        b.write({{0}, {3}}, xt::xtensor<std::string, 1>{"\xff\xfe", "a\0b"s, ""});
        {
            const zx::json e = peer("dump-strings " + zxtest::quote((dir.path() / "bytes").string()));
            CHECK(e["object_codec"] == "vlen-bytes");
            CHECK(e["fill"].is_null());
            // zarr-python reads the unwritten chunk's elements as None (printed as the empty value).
            CHECK(e["values"] == zx::json({"fffe", "610062", "", "", ""}));
        }
    }

    TEST_CASE("records (structured dtypes) both ways with zarr-python: mixed byte orders, subarrays, nested "
              "records, times, base64 fill values; zarrxt hash follows the record rule")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir dir("zarrxt-py-records");
        zx::filesystem_store store{dir.str()};
        auto peer = [](const std::string& args) { return zx::json::parse(python_peer_output(args)); };
        const std::string tool = zxtest::env("ZARRXT_TOOL");

        // zarr-python writes; zarrxt opens each as the same fields and hashes the values as
        // zarr-python's values hash.
        const zx::json written = peer("write-records " + zxtest::quote(dir.str()));
        REQUIRE(written.size() == 3);
        for (const auto& e : written)
        {
            const std::string name = e["name"];
            CAPTURE(name);
            const auto a = zx::open_any(store, name);
            REQUIRE(a.dtype() == zx::dtype_id::structured);
            // The field list written back is the one zarr-python wrote (orders, subarrays, nesting).
            const auto& m = a.metadata();
            CHECK(zx::make_v2_array_document(m.shape, m.chunk_shape, m.dtype, m.fill, zx::v2_layout_of(m))["dtype"] ==
                  e["dtype"]);
            if (!tool.empty())
            {
                CHECK(tool_hash(dir.path() / name) == e["hash"]);
            }
        }
        // Value for value through a described struct: the nested records in F order.
        {
            const auto nested = zx::open<py_nested, 2>(store, "nested.F.zlib").read();
            const zx::json& want = written[1]["values"];
            REQUIRE(want.size() == nested.size());
            std::size_t i = 0;
            for (const auto& r : nested)
            {
                CAPTURE(i);
                CHECK(r.p.a == want[i][0][0].get<float>());
                CHECK(r.p.b == want[i][0][1].get<std::int64_t>());
                CHECK(r.k == want[i][1].get<int>());
                ++i;
            }
        }
        // The base64 fill value zarr-python reads for the unwritten chunk, zarrxt reads too.
        {
            const auto gap = zx::open_any(store, "fill.gap");
            std::vector<std::byte> raw(5 * 6);
            gap.read_bytes({0}, {5}, raw.data());
            std::int16_t x = 0;
            float y = 0;
            std::memcpy(&x, raw.data() + 4 * 6, 2);
            std::memcpy(&y, raw.data() + 4 * 6 + 2, 4);
            CHECK(x == written[2]["fill"][0].get<int>());
            CHECK(y == written[2]["fill"][1].get<float>());
        }

        // zarrxt writes (big-endian, a subarray and a nested record, a timedelta, a fill value and
        // an unwritten chunk, zstd); zarr-python reads.
        auto w = zx::create<py_written, 1>(
            store, "zarrxt",
            zx::v2_options{.shape = {5},
                           .chunks = {2},
                           .compressor = zx::codec_spec("zstd", {{"level", 3}}),
                           .fill_value = zx::scalar::from_json("//9AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                           .big_endian = true});
        const xt::xtensor<py_written, 1> values = {
            py_written{1, {0.5f, -1.5f}, py_inner{2.25f, 1ll << 40}, std::chrono::milliseconds(1500)},
            py_written{-2, {3.0f, 4.0f}, py_inner{-0.0f, -7}, std::chrono::milliseconds(-20)},
            py_written{32767, {0.0f, 1e30f}, py_inner{1.0f, 0}, std::chrono::milliseconds(0)}};
        w.write({{0}, {3}}, values);
        const zx::json got = peer("dump-records " + zxtest::quote((dir.path() / "zarrxt").string()));
        CHECK(got["dtype"] == zx::json::parse(R"([["id", ">i2"], ["pos", ">f4", [2]],
            ["inner", [["a", ">f4"], ["b", ">i8"]]], ["dt", ">m8[ms]"]])"));
        REQUIRE(got["values"].size() == 5);
        for (std::size_t i = 0; i < 3; ++i)
        {
            CAPTURE(i);
            const zx::json& v = got["values"][i];
            CHECK(v[0] == values(i).id);
            CHECK(v[1][0].get<float>() == values(i).pos[0]);
            CHECK(v[1][1].get<float>() == values(i).pos[1]);
            CHECK(v[2][0].get<float>() == values(i).inner.a);
            CHECK(v[2][1] == values(i).inner.b);
            CHECK(v[3] == values(i).dt.count());
        }
        // The fill value, base64 of the stored (big-endian) record: id -1 (ff ff), pos [3.0, 0]
        // (40 40 00 00, 00 00 00 00), the rest zero.
        CHECK(got["fill"] == zx::json::parse("[-1, [3.0, 0.0], [0.0, 0], 0]"));
        CHECK(got["values"][4] == got["fill"]); // element 4: the chunk never written
        CHECK(got["values"][3] == got["fill"]); // element 3: written as the fill by the partial chunk
        if (!tool.empty())
        {
            CHECK(tool_hash(dir.path() / "zarrxt") == got["hash"]);
        }
    }

    TEST_CASE("zstd checksum frames: numcodecs 0.11 refuses the member, reads and verifies the frames")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir dir("zarrxt-py-zstdsum");
        zx::filesystem_store store{dir.str()};
        auto a = zx::create<std::int32_t, 2>(
            store, "a",
            zx::v2_options{.shape = {11, 9},
                           .chunks = {4, 4},
                           .compressor = zx::codec_spec("zstd", {{"level", 3}, {"checksum", true}})});
        xt::xtensor<std::int32_t, 2> v = xt::xtensor<std::int32_t, 2>::from_shape({11, 9});
        for (std::size_t i = 0; i < v.size(); ++i)
        {
            v.data()[i] = static_cast<std::int32_t>(i * 7919) - 40000;
        }
        a.write({{0, 0}, {11, 9}}, v);
        std::string want;
        zi::append_le(want, v.data(), v.size());
        const auto zarray = dir.path() / "a" / ".zarray";
        zx::json doc = zi::read_json(zarray);
        REQUIRE(doc["compressor"] == zx::json({{"id", "zstd"}, {"level", 3}, {"checksum", true}}));
        auto dump = [&]
        {
            return zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                               " dump " + zxtest::quote((dir.path() / "a").string()));
        };
        // numcodecs 0.11's Zstd takes no checksum argument: it cannot open this array at all.
        auto r = dump();
        CHECK(r.status != 0);
        CHECK_MESSAGE(r.output.find("unexpected keyword argument 'checksum'") != std::string::npos, r.output);
        // Without the member it reads the frames, and libzstd checks each frame's checksum there.
        doc["compressor"].erase("checksum");
        zxtest::write_file(zarray, doc.dump());
        r = dump();
        REQUIRE_MESSAGE(r.status == 0, r.output);
        CHECK(r.output == zi::hex(want) + "\n");
        // A frame whose checksum no longer matches: numcodecs refuses it, and so does zarrxt (codec.4).
        const auto chunk = dir.path() / "a" / "1.1";
        std::string bytes = zxtest::read_file(chunk);
        REQUIRE((static_cast<unsigned char>(bytes[4]) & 0x04) != 0); // the frame declares a checksum
        bytes.back() = static_cast<char>(bytes.back() ^ 0x01);
        zxtest::write_file(chunk, bytes);
        r = dump();
        CHECK(r.status != 0);
        CHECK_MESSAGE(r.output.find("checksum") != std::string::npos, r.output);
        try
        {
            (void)zx::open<std::int32_t, 2>(store, "a").read({{4, 4}, {1, 1}});
            FAIL_CHECK("zarrxt read a chunk whose checksum does not match");
        }
        catch (const zx::codec_error& e)
        {
            CHECK(e.id() == "zarrxt.codec.4");
            CHECK(e.key() == "a/1.1");
        }
    }

    TEST_CASE("committed zarr-python v2 fixtures (tests/data/v2) read without Python")
    {
        const std::filesystem::path root =
            std::filesystem::path(zxtest::env("ZARRXT_SOURCE_DIR")) / "tests" / "data" / "v2";
        REQUIRE_MESSAGE(std::filesystem::exists(root / "manifest.json"),
                        "the fixtures are part of the repository: " << root.string());
        const zx::json manifest = zi::read_json(root / "manifest.json");
        zi::check_manifest_arrays(root, manifest);
        // Values stated here, independent of every generator.
        zx::filesystem_store store{(root / "arrays").string()};
        {
            auto a = zx::open<std::int16_t, 3>(store, "int16.be.gzip.F.slash");
            const auto v = a.read({{0, 0, 0}, {1, 1, 2}});
            // seed 1: k = 7919 and 7920, top 16 bits of k * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
            // (mod 2^64) are 0x993a and 0x3771.
            CHECK(v(0, 0, 0) == -26310);
            CHECK(v(0, 0, 1) == 14193);
        }
        {
            auto a = zx::open<float, 2>(store, "float32.le.zlib.C.dot.nan");
            const auto v = a.read({{0, 2}, {2, 1}});
            // [0, 2] was never written: the NaN fill value; [1, 2] is flat index 9 of seed 2, so
            // k = 15847, r = (37 k mod 2001) - 1000 = -954 and the value is float(-954 / 7).
            CHECK(std::bit_cast<std::uint32_t>(v(0, 0)) == 0x7fc00000u);
            CHECK(std::bit_cast<std::uint32_t>(v(1, 0)) == 0xc3084925u);
        }
    }

    TEST_CASE("zarr-python hierarchies read by zarrxt: nested groups, attributes, children, arrays inside")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_groups_written();
        INFO(py.result.output);
        REQUIRE(py.result.status == 0);
        check_hierarchy(py.dir.path(), py.manifest);
        zi::check_manifest_arrays(py.dir.path(), py.manifest);
    }

    TEST_CASE("zarrxt writes the hierarchy and zarr-python verifies groups, attributes, children and values")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_groups_written();
        REQUIRE(py.result.status == 0);
        zxtest::temp_dir dir("zarrxt-py-groups");
        const zx::json out = write_hierarchy(py.manifest, dir.path());
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        // zarrxt itself reads back what it wrote the same way it reads zarr-python's.
        check_hierarchy(dir.path(), out);
        const auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                   " verify-groups " + zxtest::quote(dir.str()));
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
    }

    TEST_CASE("zarr-python's consolidated metadata opens its hierarchy in zarrxt, every node's own metadata "
              "removed")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_groups_written();
        REQUIRE(py.result.status == 0);
        zxtest::temp_dir dir("zarrxt-py-consolidated");
        std::filesystem::copy(py.dir.path() / "arrays", dir.path() / "arrays",
                              std::filesystem::copy_options::recursive);
        const auto r = zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                                   " consolidate " + zxtest::quote(dir.str()));
        REQUIRE_MESSAGE(r.status == 0, r.output);
        REQUIRE(std::filesystem::exists(dir.path() / "arrays" / ".zmetadata"));
        CHECK(remove_node_metadata(dir.path() / "arrays") >=
              py.manifest.at("groups").size() + py.manifest.at("arrays").size());
        zx::filesystem_store plain{(dir.path() / "arrays").string()};
        CHECK_THROWS_AS(zx::group<zx::filesystem_store>::open(plain, ""), zx::array_error);
        const auto cs = zx::open_consolidated(plain, "", zx::consolidated_mode::always);
        using group_t = zx::group<zx::consolidated_store<zx::filesystem_store>>;
        for (const auto& g : py.manifest.at("groups"))
        {
            const std::string path = g.at("path").get<std::string>();
            INFO("group \"" << path << "\"");
            const auto grp = group_t::open(cs, path);
            CHECK(grp.zarr_format() == 2);
            CHECK(grp.attributes() == g.at("attributes"));
            std::vector<std::string> groups, arrays;
            for (const auto& c : grp.children())
            {
                (c.kind == zx::node_kind::group ? groups : arrays).push_back(c.name);
            }
            CHECK(zx::json(groups) == g.at("groups"));
            CHECK(zx::json(arrays) == g.at("arrays"));
        }
        for (const auto& e : py.manifest.at("arrays"))
        {
            const std::string name = e.at("name").get<std::string>();
            INFO("array ", name);
            const auto a = zx::open_any(cs, name);
            CHECK(std::string(zx::name(a.dtype())) == e.at("dtype").get<std::string>());
            CHECK(a.shape() == zi::to_shape(e.at("shape")));
            CHECK(a.metadata().attributes == e.at("attributes"));
            const std::string want = zxtest::read_file(py.dir.path() / e.at("expected").get<std::string>());
            std::string got(want.size(), '\0');
            a.read_bytes(std::vector<std::uint64_t>(a.rank(), 0), a.shape(),
                         reinterpret_cast<std::byte*>(got.data()));
            CHECK_MESSAGE(got == want, zi::describe_difference(got, want, zx::info(a.dtype()).size));
        }
    }

    TEST_CASE("zarrxt's consolidated metadata opens in zarr-python's open_consolidated, every node's own "
              "metadata removed")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        const auto& py = python_groups_written();
        REQUIRE(py.result.status == 0);
        zxtest::temp_dir dir("zarrxt-py-consolidate");
        const zx::json out = write_hierarchy(py.manifest, dir.path());
        zxtest::write_file(dir.path() / "manifest.json", out.dump(1));
        zx::filesystem_store store{(dir.path() / "arrays").string()};
        CHECK(zx::consolidate(store, "") ==
              py.manifest.at("groups").size() - 1 + py.manifest.at("arrays").size());
        CHECK(remove_node_metadata(dir.path() / "arrays") >=
              py.manifest.at("groups").size() + py.manifest.at("arrays").size());
        const auto verify = [&]
        {
            return zxtest::run(zxtest::debian_python() + " " + zxtest::quote(python_peer_script()) +
                               " verify-consolidated " + zxtest::quote(dir.str()));
        };
        auto r = verify();
        CHECK_MESSAGE(r.status == 0, r.output);
        MESSAGE(r.output.substr(r.output.rfind('\n', r.output.size() - 2) + 1));
        // Without the consolidated document nothing of the hierarchy is left to open.
        std::filesystem::remove(dir.path() / "arrays" / ".zmetadata");
        r = verify();
        CHECK_MESSAGE(r.status != 0, r.output);
    }
}
