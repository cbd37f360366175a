// The C API with the peers (suite c_api): zarr-python 2.13 and zarrita read what zarrxt.h calls
// wrote, zarrxt.h calls read what zarr-python wrote (a directory, a zip archive, and a consolidated
// hierarchy served by nginx over HTTP). Only the C API is called here (no zarrxt C++ header), so
// this is what a C program sees; values are checked against formulas, never against zarrxt's C++.
#include <zarrxt.h>

#include "http_servers.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace
{

std::string last_error()
{
    return std::string("[") + zarrxt_last_error_id() + "] " + zarrxt_last_error_message();
}

#define C_OK(call)                                                                                           \
    do                                                                                                       \
    {                                                                                                        \
        const zarrxt_status s_ = (call);                                                                     \
        INFO(last_error());                                                                                  \
        REQUIRE(s_ == ZARRXT_OK);                                                                            \
    } while (0)

/// Run `script` with Debian's python3 (zarr-python 2.13), `arg` as its sys.argv[1].
zxtest::command_result python(const std::filesystem::path& dir, const std::string& script,
                              const std::string& arg)
{
    const auto file = dir / "peer.py";
    zxtest::write_file(file, script);
    return zxtest::run(zxtest::quote(zxtest::debian_python()) + " " + zxtest::quote(file.string()) + " " +
                       zxtest::quote(arg));
}

/// The values zarr-python writes for this test: a formula both sides compute.
std::int16_t v2_value(std::uint64_t i, std::uint64_t j)
{
    return static_cast<std::int16_t>(static_cast<std::int64_t>(i * 37 + j) - 300);
}

const char* k_python_writes = R"(
import sys, numpy as np, zarr
out = sys.argv[1]
def make(store):
    root = zarr.group(store=store, overwrite=True)
    root.attrs['made_by'] = 'zarr-python'
    i, j = np.meshgrid(np.arange(40), np.arange(30), indexing='ij')
    a = root.create_dataset('sub/ints', shape=(40, 30), chunks=(16, 7), dtype='<i2',
                            compressor=zarr.Zlib(level=3))
    a[...] = (i * 37 + j - 300).astype('<i2')
    a.attrs['units'] = 'm'
    s = root.create_dataset('words', shape=(3,), chunks=(2,), dtype=str)
    s[...] = ['one', 'zwei', 'trois']
    return root
)";

/// Read every value of sub/ints of `root` through the C API and compare with the formula.
void check_python_hierarchy(zarrxt_node* root)
{
    std::size_t n = 0, len = 0;
    char name[64];
    zarrxt_node_kind kind{};
    C_OK(zarrxt_group_child_count(root, &n));
    REQUIRE(n == 2);
    C_OK(zarrxt_group_child(root, 0, name, sizeof name, &len, &kind));
    CHECK(std::string(name) == "sub");
    CHECK(kind == ZARRXT_NODE_GROUP);
    C_OK(zarrxt_group_child(root, 1, name, sizeof name, &len, &kind));
    CHECK(std::string(name) == "words");
    CHECK(kind == ZARRXT_NODE_ARRAY);
    char attrs[256];
    C_OK(zarrxt_node_attributes(root, attrs, sizeof attrs, &len));
    CHECK(std::string(attrs).find("zarr-python") != std::string::npos);
}

void check_python_ints(zarrxt_node* a)
{
    std::uint64_t shape[2];
    C_OK(zarrxt_array_shape(a, shape, 2));
    REQUIRE(shape[0] == 40);
    REQUIRE(shape[1] == 30);
    zarrxt_dtype dt{};
    C_OK(zarrxt_array_dtype(a, &dt));
    CHECK(dt == ZARRXT_INT16);
    std::vector<std::int16_t> v(40 * 30);
    const std::uint64_t off[2] = {0, 0};
    C_OK(zarrxt_array_read(a, off, shape, v.data(), v.size() * 2));
    for (std::uint64_t i = 0; i < 40; ++i)
    {
        for (std::uint64_t j = 0; j < 30; ++j)
        {
            if (v[i * 30 + j] != v2_value(i, j))
            {
                FAIL("element " << i << "," << j << " is " << v[i * 30 + j]);
            }
        }
    }
    std::size_t len = 0;
    char attrs[64];
    C_OK(zarrxt_node_attributes(a, attrs, sizeof attrs, &len));
    CHECK(std::string(attrs) == R"({"units":"m"})");
}

void check_python_words(zarrxt_node* w)
{
    zarrxt_strings* s = nullptr;
    const std::uint64_t off[1] = {0};
    const std::uint64_t ext[1] = {3};
    C_OK(zarrxt_array_read_strings(w, off, ext, &s));
    REQUIRE(zarrxt_strings_count(s) == 3);
    const char* want[3] = {"one", "zwei", "trois"};
    for (std::size_t i = 0; i < 3; ++i)
    {
        const char* data = nullptr;
        std::size_t n = 0;
        C_OK(zarrxt_strings_get(s, i, &data, &n));
        CHECK(std::string(data, n) == want[i]);
    }
    zarrxt_strings_free(s);
}

} // namespace

TEST_SUITE("c_api")
{
    TEST_CASE("the C API reads what zarr-python 2.13 wrote: a directory and a zip archive")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir d;
        const auto r = python(d.path(), std::string(k_python_writes) + R"(
make(zarr.DirectoryStore(out + '/py.zarr'))
with zarr.ZipStore(out + '/py.zarr.zip', mode='w') as z:
    make(z)
)",
                              d.path().string());
        INFO(r.output);
        REQUIRE(r.status == 0);
        for (const std::string& url : {d.path().string() + "/py.zarr", d.path().string() + "/py.zarr.zip"})
        {
            CAPTURE(url);
            zarrxt_store* store = nullptr;
            zarrxt_node* root = nullptr;
            zarrxt_node* a = nullptr;
            zarrxt_node* w = nullptr;
            C_OK(zarrxt_store_open(url.c_str(), 0, &store));
            C_OK(zarrxt_node_open(store, "", &root));
            check_python_hierarchy(root);
            C_OK(zarrxt_node_open(store, "sub/ints", &a));
            check_python_ints(a);
            C_OK(zarrxt_node_open(store, "words", &w));
            check_python_words(w);
            // A zip archive is read-only: writes are refused with the store's id.
            if (url.ends_with(".zip"))
            {
                const std::uint64_t off[2] = {0, 0};
                const std::uint64_t ext[2] = {1, 1};
                const std::int16_t one = 1;
                CHECK(zarrxt_array_write(a, off, ext, &one, 2) == ZARRXT_ERR_STORE);
                CHECK(std::string(zarrxt_last_error_id()) == "zarrxt.store.9");
            }
            zarrxt_node_close(w);
            zarrxt_node_close(a);
            zarrxt_node_close(root);
            zarrxt_store_close(store);
        }
    }

    TEST_CASE("zarr-python 2.13 reads v2 arrays written through the C API")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir d;
        const std::string url = d.path().string() + "/c.zarr";
        zarrxt_store* store = nullptr;
        zarrxt_node* g = nullptr;
        zarrxt_node* a = nullptr;
        zarrxt_node* b = nullptr;
        C_OK(zarrxt_store_open(url.c_str(), 0, &store));
        C_OK(zarrxt_group_create(store, "", 2, R"({"origin": "C"})", 0, &g));
        const std::uint64_t shape[2] = {50, 20};
        const std::uint64_t chunks[2] = {16, 16};
        C_OK(zarrxt_array_create_simple(store, "f", 2, ZARRXT_FLOAT64, 2, shape, chunks, 0, &a));
        std::vector<double> v(1000);
        for (std::size_t k = 0; k < v.size(); ++k)
        {
            v[k] = static_cast<double>(k) / 8.0 - 20.0;
        }
        const std::uint64_t off[2] = {0, 0};
        C_OK(zarrxt_array_write(a, off, shape, v.data(), v.size() * sizeof(double)));
        C_OK(zarrxt_node_set_attributes(a, R"({"_ARRAY_DIMENSIONS": ["y", "x"], "scale": 0.125})"));
        // A v2 document with a zlib compressor, big-endian, in F order, with a fill value.
        C_OK(zarrxt_array_create(store, "u",
                                 R"({"zarr_format": 2, "shape": [9, 5], "chunks": [4, 4], "dtype": ">u2",
                                     "compressor": {"id": "zlib", "level": 1}, "fill_value": 9,
                                     "filters": null, "order": "F"})",
                                 0, &b));
        std::vector<std::uint16_t> u(4 * 3);
        for (std::size_t k = 0; k < u.size(); ++k)
        {
            u[k] = static_cast<std::uint16_t>(1000 + k);
        }
        const std::uint64_t uoff[2] = {2, 1};
        const std::uint64_t uext[2] = {4, 3};
        C_OK(zarrxt_array_write(b, uoff, uext, u.data(), u.size() * 2));
        zarrxt_node_close(b);
        zarrxt_node_close(a);
        zarrxt_node_close(g);
        zarrxt_store_close(store);

        const auto run = python(d.path(), R"(
import json, sys, zarr
root = zarr.open_group(sys.argv[1], mode='r')
f, u = root['f'], root['u']
print(json.dumps({'attrs': root.attrs.asdict(), 'f_attrs': f.attrs.asdict(), 'f_dtype': str(f.dtype),
                  'f': f[...].ravel().tolist(), 'u_dtype': u.dtype.str, 'u_order': u.order,
                  'u': u[...].ravel().tolist()}))
)",
                                url);
        INFO(run.output.substr(0, 2000));
        REQUIRE(run.status == 0);
        const auto j = nlohmann::json::parse(run.output);
        CHECK(j["attrs"]["origin"] == "C");
        CHECK(j["f_attrs"]["scale"] == 0.125);
        CHECK(j["f_attrs"]["_ARRAY_DIMENSIONS"] == nlohmann::json::array({"y", "x"}));
        CHECK(j["f_dtype"] == "float64");
        REQUIRE(j["f"].size() == 1000);
        for (std::size_t k = 0; k < 1000; ++k)
        {
            CHECK(j["f"][k].get<double>() == static_cast<double>(k) / 8.0 - 20.0);
        }
        CHECK(j["u_dtype"] == ">u2");
        CHECK(j["u_order"] == "F");
        REQUIRE(j["u"].size() == 45);
        for (std::uint64_t i = 0; i < 9; ++i)
        {
            for (std::uint64_t k = 0; k < 5; ++k)
            {
                const bool inside = i >= 2 && i < 6 && k >= 1 && k < 4;
                const std::uint64_t want = inside ? 1000 + (i - 2) * 3 + (k - 1) : 9;
                CHECK(j["u"][i * 5 + k].get<std::uint64_t>() == want);
            }
        }
    }

    TEST_CASE("zarrita reads a sharded v3 array created from its document through the C API")
    {
        const std::string nm = zxtest::env("ZARRXT_NODE_MODULES");
        if (zxtest::node_program().empty() || nm.empty() ||
            !std::filesystem::exists(std::filesystem::path(nm) / "zarrita"))
        {
            ZX_SKIP_PEER("zarrita (Node.js and $ZARRXT_NODE_MODULES/zarrita) is not installed");
        }
        zxtest::temp_dir d;
        const std::string url = d.path().string() + "/v3.zarr";
        zarrxt_store* store = nullptr;
        zarrxt_node* a = nullptr;
        C_OK(zarrxt_store_open(url.c_str(), 0, &store));
        C_OK(zarrxt_array_create(store, "s",
                                 R"({"zarr_format": 3, "node_type": "array", "shape": [40, 24],
            "data_type": "int32", "fill_value": -1,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [20, 12]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 4],
              "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd",
                "configuration": {"level": 3, "checksum": false}}],
              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
              "index_location": "end"}}]})",
                                 0, &a));
        // Everything but the last 4 rows: they stay the fill value.
        std::vector<std::int32_t> v(36 * 24);
        for (std::size_t k = 0; k < v.size(); ++k)
        {
            v[k] = static_cast<std::int32_t>(k * 11) - 5000;
        }
        const std::uint64_t off[2] = {0, 0};
        const std::uint64_t ext[2] = {36, 24};
        C_OK(zarrxt_array_write(a, off, ext, v.data(), v.size() * 4));
        zarrxt_node_close(a);
        zarrxt_store_close(store);

        const auto r = zxtest::run(
            "ZARRXT_NODE_MODULES=" + zxtest::quote(nm) + " " + zxtest::quote(zxtest::node_program()) + " " +
            zxtest::quote(zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/zarrita_peer.mjs") + " dump " +
            zxtest::quote(url) + " s");
        INFO(r.output.substr(0, 2000));
        REQUIRE(r.status == 0);
        const auto j = nlohmann::json::parse(r.output);
        REQUIRE(j["shape"] == nlohmann::json::array({40, 24}));
        REQUIRE(j["data"].size() == 960);
        for (std::size_t k = 0; k < 960; ++k)
        {
            const std::int64_t want = k < v.size() ? v[k] : -1;
            if (j["data"][k].get<std::int64_t>() != want)
            {
                FAIL("zarrita reads element " << k << " as " << j["data"][k]);
            }
        }
    }

#if ZARRXT_HAS_CURL
    TEST_CASE("the C API over HTTP: nginx serves a consolidated hierarchy zarr-python wrote")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir d;
        const auto run = python(d.path(), std::string(k_python_writes) + R"(
root = make(zarr.DirectoryStore(out + '/served.zarr'))
zarr.consolidate_metadata(zarr.DirectoryStore(out + '/served.zarr'))
)",
                                d.path().string());
        INFO(run.output);
        REQUIRE(run.status == 0);
        zxtest::nginx_server nginx(d.path());
        ZX_REQUIRE_SERVER(nginx);
        const std::string url = nginx.url("served.zarr");
        CAPTURE(url);
        // HTTP cannot list: the consolidated metadata lists the groups, with or without the flag.
        for (unsigned flags : {0u, unsigned(ZARRXT_CONSOLIDATED)})
        {
            zarrxt_store* store = nullptr;
            zarrxt_node* root = nullptr;
            zarrxt_node* a = nullptr;
            C_OK(zarrxt_store_open(url.c_str(), flags, &store));
            C_OK(zarrxt_node_open(store, "", &root));
            check_python_hierarchy(root);
            C_OK(zarrxt_node_open(store, "sub/ints", &a));
            check_python_ints(a);
            zarrxt_node_close(a);
            zarrxt_node_close(root);
            zarrxt_store_close(store);
        }
        // A node that is not there, and a server that is not there: typed errors.
        zarrxt_node* none = nullptr;
        CHECK(zarrxt_open((url + "/nothing").c_str(), 0, &none) == ZARRXT_ERR_ARRAY);
        CHECK(std::string(zarrxt_last_error_id()) == "zarrxt.array.7");
        CHECK(none == nullptr);
    }
#endif
}
