// zip archives as stores (store/zip_store.hpp, store/zip_writer.hpp): what zip_writer packs,
// zip_store reads back by range; archives written by Python's zipfile (DEFLATE, ZIP64, long local
// extra fields, directory entries, a name given twice) and by zarr-python 2.13's ZipStore; ours
// read by zipfile, zarr-python and zarrita's ZipFileStore; a shard inside an archive read with a
// counted handful of requests; hostile archives; the tool's x.zarr.zip paths.
#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/config.hpp>
#if ZARRXT_HAS_CURL
#include "http_servers.hpp"

#include <zarrxt/store/http.hpp>
#endif

#include <zarrxt/store/counting.hpp>
#include <zarrxt/store/open_store.hpp>
#include <zarrxt/store/zip_writer.hpp>
#include <zarrxt/zarrxt.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// payload(n, k)[i] = (i * 7 + k) % 251, as tests/peers/zip_peer.py computes it.
std::string payload(std::size_t n, unsigned k)
{
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
    {
        s[i] = static_cast<char>((i * 7 + k) % 251);
    }
    return s;
}

std::string text_of(const std::optional<zx::buffer>& b)
{
    REQUIRE(b.has_value());
    return std::string(zx::as_string_view(*b));
}

zxtest::command_result python_peer(const std::string& verb, const std::filesystem::path& archive)
{
    return zxtest::run(zxtest::quote(zxtest::debian_python()) + " " +
                       zxtest::quote(zxtest::peer_script("zip_peer.py")) + " " + verb + " " +
                       zxtest::quote(archive.string()));
}

std::string bytes_of_file(const std::filesystem::path& p)
{
    return zxtest::read_file(p);
}

/// The offset of the central directory header naming `name` in a whole archive.
std::size_t central_header_of(const std::string& zip, const std::string& name)
{
    for (std::size_t at = zip.find("PK\x01\x02"); at != std::string::npos;
         at = zip.find("PK\x01\x02", at + 4))
    {
        if (zip.compare(at + 46, name.size(), name) == 0)
        {
            return at;
        }
    }
    FAIL("no central header for " << name);
    return 0;
}

void put_le(std::string& zip, std::size_t at, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
    {
        zip[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
    }
}

std::uint64_t get_le(const std::string& zip, std::size_t at, int bytes)
{
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
    {
        v |= std::uint64_t{static_cast<unsigned char>(zip[at + static_cast<std::size_t>(i)])} << (8 * i);
    }
    return v;
}

/// The small archive the hostile cases damage: three STORED objects, packed by zip_writer.
std::string small_archive(const std::filesystem::path& dir)
{
    zx::zip_writer w(dir / "base.zip");
    w.set("aa/x", zx::as_bytes(payload(100, 1)));
    w.set("b", zx::as_bytes(payload(2000, 2)));
    w.set("c", zx::as_bytes(payload(10, 3)));
    w.commit();
    return bytes_of_file(dir / "base.zip");
}

zx::zip_store<zx::filesystem_store> open_zip(const std::filesystem::path& dir, const std::string& name,
                                             zx::zip_options o = {})
{
    return zx::zip_store<zx::filesystem_store>(zx::filesystem_store(dir), name, std::move(o));
}

std::uint16_t sharded_value(std::size_t i, std::size_t j)
{
    return static_cast<std::uint16_t>(i * 256 + j);
}

/// A v3 hierarchy with a sharded uint16 array (256 x 256, one shard of 16 x 16 inner chunks, no
/// compression: the inner chunk ranges are ranges of the archive), a zstd array and a group.
void write_hierarchy(zx::any_store& s)
{
    auto g = zx::group<zx::any_store>::create(s, "g", {.attributes = {{"answer", 42}}});
    auto sh = zx::create<std::uint16_t, 2>(
        s, "g/sharded",
        zx::v3_options{.shape = {256, 256},
                       .chunk_shape = {256, 256},
                       .codecs = {zx::sharded({16, 16}, {zx::codec_spec("bytes", {{"endian", "little"}})})}});
    xt::xtensor<std::uint16_t, 2> v = xt::xtensor<std::uint16_t, 2>::from_shape({256, 256});
    for (std::size_t i = 0; i < 256; ++i)
    {
        for (std::size_t j = 0; j < 256; ++j)
        {
            v(i, j) = sharded_value(i, j);
        }
    }
    sh.write({{0, 0}, {256, 256}}, v);
    auto z = zx::create<double, 1>(s, "g/reals", zx::v3_options{.shape = {100}, .chunk_shape = {16}});
    z.write({{0}, {100}}, xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
}

} // namespace

TEST_SUITE("zip")
{
    TEST_CASE("zip_writer packs objects; zip_store reads them whole, by range and by listing")
    {
        zxtest::temp_dir d("zarrxt-zip");
        const auto dest = d.path() / "a.zip";
        const std::string big = payload(300000, 9);
        {
            zx::zip_writer w(dest);
            w.set("zarr.json", zx::as_bytes(std::string_view("{}")));
            w.set("g/c/0", zx::as_bytes(std::string_view("first")));
            w.set("g/c/0", zx::as_bytes(std::string_view("hello"))); // rewritten: the last one counts
            w.set("g/empty", {});
            w.set("big", zx::as_bytes(big));
            w.set("gone", zx::as_bytes(std::string_view("x")));
            CHECK(w.erase("gone"));
            CHECK(text_of(zx::get(w, "g/c/0")) == "hello"); // the writer reads what it holds
            CHECK_FALSE(std::filesystem::exists(dest));     // nothing published before commit
            CHECK(w.commit() == 4);
            CHECK(std::filesystem::exists(dest));
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "x", w.set("x", {}));
            CHECK(text_of(zx::get(w, "big")) == big); // and still reads
        }
        // The staging directory went with the writer.
        for (const auto& e : std::filesystem::directory_iterator(d.path()))
        {
            CHECK(e.path().filename() == "a.zip");
        }
        auto z = open_zip(d.path(), "a.zip");
        CHECK(z.entry_count() == 4);
        CHECK(text_of(zx::get(z, "g/c/0")) == "hello");
        CHECK(text_of(zx::get(z, "g/empty")).empty());
        CHECK(text_of(zx::get(z, "big")) == big);
        CHECK_FALSE(zx::get(z, "gone").has_value());
        CHECK_FALSE(z.stat("nothing").has_value());
        CHECK(z.stat("big")->size == big.size());
        auto r = z.read("big", zx::byte_range::of(12345, 1000), 1 << 20);
        CHECK(std::string(zx::as_string_view(r->bytes)) == big.substr(12345, 1000));
        CHECK(r->object_size == big.size());
        r = z.read("big", zx::byte_range::last(77), 1 << 20);
        CHECK(std::string(zx::as_string_view(r->bytes)) == big.substr(big.size() - 77));
        r = z.read("big", zx::byte_range::of(big.size() - 5, 100), 1 << 20); // clamped at the end
        CHECK(r->bytes.size() == 5);
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "big",
                        z.read("big", zx::byte_range::all(), 1000));
        CHECK(z.list("") == std::vector<std::string>{"big", "g/c/0", "g/empty", "zarr.json"});
        CHECK(z.list("g") == std::vector<std::string>{"g/c/0", "g/empty"});
        CHECK(z.list_dir("") == std::vector<std::string>{"big", "g", "zarr.json"});
        CHECK(z.list_dir("g") == std::vector<std::string>{"c", "empty"});
        // Rooted inside the archive.
        auto inner = open_zip(d.path(), "a.zip", {.root = "g"});
        CHECK(text_of(zx::get(inner, "c/0")) == "hello");
        CHECK(inner.list("") == std::vector<std::string>{"c/0", "empty"});
        CHECK_FALSE(zx::get(inner, "big").has_value());
        // open_store: a path with a .zip segment, rooted at what follows it.
        auto s = zx::open_store((d.path() / "a.zip" / "g").string());
        CHECK(text_of(zx::get(s, "c/0")) == "hello");
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "c/0", s.set("c/0", {}));
        // The same objects make the same archive, byte for byte (fixed timestamps, key order).
        {
            zx::zip_writer w(d.path() / "b.zip");
            w.set("big", zx::as_bytes(big));
            w.set("g/empty", {});
            w.set("zarr.json", zx::as_bytes(std::string_view("{}")));
            w.set("g/c/0", zx::as_bytes(std::string_view("hello")));
            w.commit();
        }
        CHECK(bytes_of_file(d.path() / "b.zip") == bytes_of_file(dest));
        // A writer dropped without commit publishes nothing and leaves an existing archive alone.
        {
            zx::zip_writer w(dest);
            w.set("other", zx::as_bytes(std::string_view("x")));
        }
        CHECK(bytes_of_file(d.path() / "b.zip") == bytes_of_file(dest));
    }

    TEST_CASE("zip_writer's archives, ZIP64 forced or not, pass Python's zipfile with every CRC")
    {
        if (zxtest::debian_python().empty())
        {
            ZX_SKIP_PEER("/usr/bin/python3 is missing");
        }
        zxtest::temp_dir d("zarrxt-zip-py");
        for (const bool zip64 : {false, true})
        {
            CAPTURE(zip64);
            const auto dest = d.path() / (zip64 ? "z64.zip" : "z.zip");
            zx::zip_writer w(dest, {.force_zip64 = zip64});
            w.set("one", zx::as_bytes(payload(1000, 1)));
            w.set("dir/two", zx::as_bytes(payload(70000, 2)));
            w.set("dir/empty", {});
            w.commit();
            const auto r = python_peer("zipfile-check", dest);
            INFO(r.output);
            REQUIRE(r.status == 0);
            // The SHA-256 values of payload(1000, 1), payload(70000, 2) and b"" as Python prints them.
            CHECK(r.output.find("one 0 ") != std::string::npos);
            CHECK(r.output.find(
                      "dir/empty 0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") !=
                  std::string::npos);
            const std::string bytes = bytes_of_file(dest);
            CHECK((bytes.find(std::string("PK\x06\x06", 4)) != std::string::npos) == zip64);
            auto z = open_zip(d.path(), dest.filename().string());
            CHECK(text_of(zx::get(z, "dir/two")) == payload(70000, 2));
            CHECK(std::string(zx::as_string_view(z.read("one", zx::byte_range::of(10, 5), 100)->bytes)) ==
                  payload(1000, 1).substr(10, 5));
        }
    }

    TEST_CASE("archives written by Python's zipfile: DEFLATE, ZIP64, a long local extra field, a name twice")
    {
        if (zxtest::debian_python().empty())
        {
            ZX_SKIP_PEER("/usr/bin/python3 is missing");
        }
        zxtest::temp_dir d("zarrxt-zip-pyw");
        const auto r = python_peer("zipfile-write", d.path() / "p.zip");
        INFO(r.output);
        REQUIRE(r.status == 0);
        auto z = open_zip(d.path(), "p.zip");
        CHECK(text_of(zx::get(z, "stored")) == payload(1000, 1));
        CHECK(text_of(zx::get(z, "deflated")) == payload(50000, 2));
        CHECK(text_of(zx::get(z, "empty")).empty());
        CHECK(text_of(zx::get(z, "dir/zip64")) == payload(3000, 3));
        CHECK(text_of(zx::get(z, "dir/zip64-deflated")) == payload(70000, 4));
        CHECK(text_of(zx::get(z, "long-extra")) == payload(500, 5));
        CHECK(text_of(zx::get(z, "twice")) == payload(20, 7));
        // A range of a DEFLATE entry (inflated whole, served in part) and of the long-extra one
        // before and after its data offset is known.
        CHECK(std::string(zx::as_string_view(z.read("deflated", zx::byte_range::of(40000, 9), 100)->bytes)) ==
              payload(50000, 2).substr(40000, 9));
        auto fresh = open_zip(d.path(), "p.zip");
        CHECK(
            std::string(zx::as_string_view(fresh.read("long-extra", zx::byte_range::last(3), 100)->bytes)) ==
            payload(500, 5).substr(497));
        CHECK(z.list_dir("") ==
              std::vector<std::string>{"deflated", "dir", "empty", "long-extra", "stored", "twice"});
        CHECK(z.list("dir") == std::vector<std::string>{"dir/zip64", "dir/zip64-deflated"});
        // DEFLATE entries read in part are bounded by max_inflated_entry_bytes.
        zx::zip_options tight_options;
        tight_options.max_inflated_entry_bytes = 60000;
        auto tight = open_zip(d.path(), "p.zip", tight_options);
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "p.zip:dir/zip64-deflated",
                        tight.read("dir/zip64-deflated", zx::byte_range::of(0, 10), 100));
        CHECK(text_of(zx::get(tight, "dir/zip64-deflated")) == payload(70000, 4)); // whole: the caller's cap
    }

    TEST_CASE("zarr-python 2.13's ZipStore both ways")
    {
        ZX_REQUIRE_PYTHON_ZARR();
        zxtest::temp_dir d("zarrxt-zip-zarr");
        const auto theirs = d.path() / "theirs.zarr.zip";
        const auto w = python_peer("zarr-write", theirs);
        INFO(w.output);
        REQUIRE(w.status == 0);
        auto s = zx::open_store(theirs.string());
        auto ints = zx::open<std::int32_t, 2>(s, "g/ints");
        const auto a = ints.read();
        REQUIRE(a.shape()[0] == 20);
        REQUIRE(a.shape()[1] == 30);
        for (std::size_t i = 0; i < 20; ++i)
        {
            for (std::size_t j = 0; j < 30; ++j)
            {
                CHECK(a(i, j) == static_cast<std::int32_t>(i * 1000 + j) - 500);
            }
        }
        CHECK(zx::open<double, 1>(s, "g/reals").read() ==
              xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
        CHECK(zx::group<zx::any_store>::open(s, "g").attributes().at("answer") == 42);
        // The same array through a path inside the archive.
        auto g = zx::open_store((theirs / "g").string());
        CHECK(zx::open<std::int32_t, 2>(g, "ints").read() == a);

        // zarrxt writes the same hierarchy into an archive; zarr-python reads it.
        const auto ours = d.path() / "ours.zarr.zip";
        {
            zx::zip_writer zw(ours);
            zx::any_store o(zw, "zip");
            zx::group<zx::any_store>::create(o, "", {.zarr_format = 2});
            zx::group<zx::any_store>::create(o, "g", {.zarr_format = 2, .attributes = {{"answer", 42}}});
            zx::v2_options io{.shape = {20, 30}, .chunks = {7, 8}};
            io.compressor = zx::codec_spec("zlib", {{"level", 5}});
            zx::create<std::int32_t, 2>(o, "g/ints", io).write({{0, 0}, {20, 30}}, a);
            zx::v2_options ro{.shape = {100}, .chunks = {16}};
            ro.compressor = std::nullopt;
            zx::create<double, 1>(o, "g/reals", ro)
                .write({{0}, {100}}, xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
            zw.commit();
        }
        const auto r = python_peer("zarr-read", ours);
        INFO(r.output);
        CHECK(r.status == 0);
        CHECK(r.output.find("zarr-read ok") != std::string::npos);
    }

    TEST_CASE("a sharded array in an archive: written, read by range with few requests, read by zarrita")
    {
        zxtest::temp_dir d("zarrxt-zip-shard");
        const auto dest = d.path() / "h.zarr.zip";
        {
            zx::zip_writer w(dest);
            zx::any_store s(w, "zip");
            write_hierarchy(s);
            w.commit();
        }
        // Every inner chunk, whole array and a corner, through open_store.
        auto s = zx::open_store(dest.string());
        const auto all = zx::open<std::uint16_t, 2>(s, "g/sharded").read();
        for (std::size_t i = 0; i < 256; i += 17)
        {
            for (std::size_t j = 0; j < 256; j += 5)
            {
                CHECK(all(i, j) == sharded_value(i, j));
            }
        }
        CHECK(zx::open<double, 1>(s, "g/reals").read() ==
              xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
        CHECK(zx::group<zx::any_store>::open(s, "g").attributes().at("answer") == 42);

        // One inner chunk, counted at the archive: the shard's local header once, its index (a
        // suffix of the entry) and the chunk; far fewer bytes than the 128 KiB shard.
        zx::counting_store<zx::filesystem_store> counted{zx::filesystem_store(d.path())};
        zx::any_store z(zx::zip_store<zx::counting_store<zx::filesystem_store>>(counted, "h.zarr.zip"),
                        "zip");
        auto a = zx::open<std::uint16_t, 2>(z, "g/sharded");
        counted.reset();
        const auto box = a.read({{32, 48}, {16, 16}});
        CHECK(box(0, 0) == sharded_value(32, 48));
        CHECK(box(15, 15) == sharded_value(47, 63));
        const auto st = counted.stats();
        CHECK(st.reads == 3);
        // 30 (local header) + 16 * 16 index entries of 16 bytes and the index's crc32c + 16 * 16 uint16.
        CHECK(st.read_bytes == 30 + 16 * 16 * 16 + 4 + 16 * 16 * 2);
        counted.reset();
        CHECK(a.read({{0, 0}, {16, 16}})(3, 4) == sharded_value(3, 4)); // header offset now known
        CHECK(counted.stats().reads <= 2);

        const std::string nm = zxtest::env("ZARRXT_NODE_MODULES");
        if (zxtest::node_program().empty() || nm.empty() ||
            !std::filesystem::exists(std::filesystem::path(nm) / "zarrita"))
        {
            ZX_SKIP_PEER("zarrita (Node.js and $ZARRXT_NODE_MODULES/zarrita) is not installed");
        }
        const auto r = zxtest::run("ZARRXT_NODE_MODULES=" + zxtest::quote(nm) + " " +
                                   zxtest::quote(zxtest::node_program()) + " " +
                                   zxtest::quote(zxtest::peer_script("zarrita_peer.mjs")) + " dump-zip " +
                                   zxtest::quote(dest.string()) + " g/sharded");
        INFO(r.output.substr(0, 2000));
        REQUIRE(r.status == 0);
        const auto j = zx::json::parse(r.output);
        REQUIRE(j["shape"] == zx::json::array({256, 256}));
        REQUIRE(j["data"].size() == 65536);
        for (std::size_t k = 0; k < 65536; ++k)
        {
            if (j["data"][k].get<std::uint64_t>() != sharded_value(k / 256, k % 256))
            {
                FAIL("zarrita reads element " << k << " as " << j["data"][k]);
            }
        }
    }

#if ZARRXT_HAS_CURL
    TEST_CASE("an archive over HTTP (nginx): open_store of its URL, a shard read by range requests")
    {
        zxtest::temp_dir d("zarrxt-zip-http");
        {
            zx::zip_writer w(d.path() / "h.zarr.zip");
            zx::any_store s(w, "zip");
            write_hierarchy(s);
            w.commit();
        }
        zxtest::nginx_server nginx(d.path());
        ZX_REQUIRE_SERVER(nginx);
        auto s = zx::open_store(nginx.url("h.zarr.zip"));
        const auto all = zx::open<std::uint16_t, 2>(s, "g/sharded").read();
        for (std::size_t i = 0; i < 256; i += 3)
        {
            CHECK(all(i, (i * 7) % 256) == sharded_value(i, (i * 7) % 256));
        }
        CHECK(zx::open<double, 1>(s, "g/reals").read() ==
              xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
        auto inner = zx::open_store(nginx.url("h.zarr.zip/g"));
        CHECK(zx::open<std::uint16_t, 2>(inner, "sharded").read({{32, 48}, {16, 16}})(1, 2) ==
              sharded_value(33, 50));
        // Counted at the server: the shard's local header, its index and the inner chunk.
        zx::http_store h(nginx.url());
        zx::any_store z(zx::zip_store<zx::http_store>(h, "h.zarr.zip"), "zip");
        auto a = zx::open<std::uint16_t, 2>(z, "g/sharded");
        const std::uint64_t before = h.requests_started();
        CHECK(a.read({{32, 48}, {16, 16}})(15, 15) == sharded_value(47, 63));
        CHECK(h.requests_started() - before == 3);
    }
#endif

    TEST_CASE("hostile archives: typed errors with the archive's key")
    {
        zxtest::temp_dir d("zarrxt-zip-bad");
        const std::string good = small_archive(d.path());
        auto open_bytes = [&](const std::string& bytes, zx::zip_options o = {})
        {
            zxtest::write_file(d.path() / "bad.zip", bytes);
            return open_zip(d.path(), "bad.zip", std::move(o));
        };
        CHECK(text_of(zx::get(open_bytes(good), "b")) == payload(2000, 2));
        const std::size_t end = good.size() - 22;
        REQUIRE(good.compare(end, 4, "PK\x05\x06") == 0);

        // Not an archive; an archive cut short; an empty file; a missing one.
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(payload(5000, 1)));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip",
                        open_bytes(good.substr(0, good.size() - 10)));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(""));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "none.zip", open_zip(d.path(), "none.zip"));
        // A comment holding an end-record signature does not fool the search.
        {
            std::string b = good;
            const std::string comment = std::string("PK\x05\x06", 4) + "0123456789012345678";
            put_le(b, end + 20, comment.size(), 2);
            CHECK(text_of(zx::get(open_bytes(b + comment), "c")) == payload(10, 3));
        }
        // The central directory outside the archive; a count it cannot hold.
        {
            std::string b = good;
            put_le(b, end + 16, good.size() + 100, 4);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, end + 8, 60000, 2);
            put_le(b, end + 10, 60000, 2);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, end + 12, get_le(good, end + 12, 4) + 1, 4); // one byte more than there is
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
        }
        // ZIP64 markers without a locator; a locator pointing outside the archive.
        {
            std::string b = good;
            put_le(b, end + 16, 0xFFFFFFFF, 4);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            std::string locator("PK\x06\x07", 4);
            locator += std::string(16, '\0');
            put_le(locator, 8, 1u << 30, 8);
            put_le(locator, 16, 1, 4);
            b = good.substr(0, end) + locator + good.substr(end);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
        }
        // An entry whose local header offset or size reaches past the directory; a name that is
        // not a valid key; encryption and an unknown method.
        {
            const std::size_t h = central_header_of(good, "b");
            std::string b = good;
            put_le(b, h + 42, good.size() - 30, 4);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, h + 20, 1u << 20, 4);
            put_le(b, h + 24, 1u << 20, 4);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            b = good;
            const std::size_t n = central_header_of(good, "aa/x");
            b.replace(n + 46, 2, "..");
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, h + 8, 1, 2);
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.11", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, h + 10, 12, 2); // bzip2
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.11", "bad.zip", open_bytes(b));
            b = good;
            put_le(b, h + 10, 8, 2); // DEFLATE, but the bytes are not a stream of 2000 bytes
            try
            {
                (void)zx::get(open_bytes(b), "b");
                FAIL("STORED bytes read as a DEFLATE stream were accepted");
            }
            catch (const zx::codec_error& e)
            {
                CHECK(e.key() == "bad.zip:b");
            }
        }
        // A damaged byte of STORED data: the CRC says so on a whole read.
        {
            std::string b = good;
            const std::size_t at = b.find(payload(2000, 2));
            REQUIRE(at != std::string::npos);
            b[at + 1000] = static_cast<char>(b[at + 1000] ^ 0x40);
            ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.4", "bad.zip:b", zx::get(open_bytes(b), "b"));
        }
        // A local header that is not one, or names another file.
        {
            std::string b = good;
            const std::size_t local =
                static_cast<std::size_t>(get_le(good, central_header_of(good, "c") + 42, 4));
            b[local] = 'X';
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", zx::get(open_bytes(b), "c"));
            b = good;
            b[local + 30] = 'd';
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.10", "bad.zip", zx::get(open_bytes(b), "c"));
        }
        // A central directory larger than allowed is refused before it is read.
        zx::zip_options small_directory;
        small_directory.max_directory_bytes = 64;
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "bad.zip", open_bytes(good, small_directory));
        // The archive replaced while open: store.6, not a mix of two directories.
        {
            auto z = open_bytes(good);
            zxtest::write_file(d.path() / "bad.zip", good + "trailing");
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.6", "bad.zip", zx::get(z, "b"));
        }
    }

    TEST_CASE("DEFLATE entries that lie about their size: refused before or while inflating")
    {
        if (zxtest::debian_python().empty())
        {
            ZX_SKIP_PEER("/usr/bin/python3 is missing");
        }
        zxtest::temp_dir d("zarrxt-zip-bomb");
        const auto r = python_peer("zipfile-write", d.path() / "p.zip");
        REQUIRE(r.status == 0);
        const std::string good = bytes_of_file(d.path() / "p.zip");
        const std::size_t h = central_header_of(good, "deflated");
        // Declared smaller than it inflates to: codec.2 at the declared size, nothing more written.
        std::string b = good;
        put_le(b, h + 24, 1000, 4);
        zxtest::write_file(d.path() / "small.zip", b);
        ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.2", "small.zip:deflated",
                        zx::get(open_zip(d.path(), "small.zip"), "deflated"));
        // Declared huge: the read's cap refuses it before anything is allocated.
        b = good;
        put_le(b, h + 24, 0xFFFFFFF0u, 4);
        zxtest::write_file(d.path() / "huge.zip", b);
        auto z = open_zip(d.path(), "huge.zip");
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "deflated",
                        z.read("deflated", zx::byte_range::all(), 1 << 20));
        ZX_EXPECT_ERROR(zx::limit_exceeded, "zarrxt.limit.1", "huge.zip:deflated",
                        z.read("deflated", zx::byte_range::of(0, 10), 1 << 20));
    }

    TEST_CASE("the tool: convert to and from x.zarr.zip, info and hash inside it")
    {
        const std::string tool = zxtest::env("ZARRXT_TOOL");
        if (tool.empty())
        {
            ZX_SKIP("the zarrxt tool is not built");
        }
        zxtest::temp_dir d("zarrxt-zip-tool");
        {
            zx::filesystem_store fs(d.path() / "src.zarr");
            auto a = zx::create<std::int32_t, 2>(fs, "",
                                                 zx::v3_options{.shape = {40, 50}, .chunk_shape = {16, 16}});
            a.write({{0, 0}, {40, 50}},
                    xt::xtensor<std::int32_t, 2>(xt::reshape_view(xt::arange<std::int32_t>(2000), {40, 50})));
        }
        auto tool_run = [&](const std::string& args)
        {
            auto r = zxtest::run(zxtest::quote(tool) + " " + args);
            INFO(args << "\n" << r.output);
            return r;
        };
        const std::string src = zxtest::quote((d.path() / "src.zarr").string());
        const std::string zip = zxtest::quote((d.path() / "out.zarr.zip").string());
        auto r = tool_run("convert --no-progress --shards 32,32 --chunks 16,16 " + src + " " + zip);
        REQUIRE(r.status == 0);
        r = tool_run("convert --no-progress " + src + " " + zip);
        CHECK(r.status == 1); // exists: --overwrite replaces it
        r = tool_run("info " + zip);
        CHECK(r.status == 0);
        CHECK(r.output.find("shards: [32, 32]\n") != std::string::npos);
        const auto h1 = tool_run("hash " + src);
        const auto h2 = tool_run("hash " + zip);
        REQUIRE(h1.status == 0);
        CHECK(h2.status == 0);
        CHECK(h1.output.size() == 17); // 16 hex digits and a newline
        CHECK(h2.output == h1.output);
        r = tool_run("convert --no-progress " + zip + " " + zxtest::quote((d.path() / "back.zarr").string()));
        REQUIRE(r.status == 0);
        CHECK(tool_run("hash " + zxtest::quote((d.path() / "back.zarr").string())).output == h1.output);
        r = tool_run("verify " + zip);
        CHECK(r.status == 0);
        r = tool_run("info " + zxtest::quote((d.path() / "missing.zarr.zip").string()));
        CHECK(r.status == 1);
    }
}
