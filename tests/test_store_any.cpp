// any_store (store/any_store.hpp) and open_store (store/open_store.hpp): the store contract through
// the type-erased store, handles lent or emulated, typed errors for what the held store cannot do,
// URLs to stores, and arrays and groups through it.
#include "expect_error.hpp"
#include "store_conformance.hpp"
#include "test_support.hpp"

#include <zarrxt/store/open_store.hpp>
#include <zarrxt/zarrxt.hpp>

#include <string>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// A store with the basic calls only (no handles, no read_to): any_store emulates handles for it.
class handleless_store
{
public:
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return m_s.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return m_s.stat(key); }
    void set(std::string_view key, zx::byte_view data) { m_s.set(key, data); }
    bool erase(std::string_view key) { return m_s.erase(key); }
    std::vector<std::string> list(std::string_view prefix) const { return m_s.list(prefix); }
    std::vector<std::string> list_dir(std::string_view prefix) const { return m_s.list_dir(prefix); }
    auto lock_key(std::string_view key) const { return m_s.lock_key(key); }

private:
    zx::memory_store m_s;
};

/// Read-only, cannot list (what an HTTP server is to any_store).
class unlistable_read_only_store
{
public:
    explicit unlistable_read_only_store(zx::memory_store s)
        : m_s(std::move(s))
    {
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return m_s.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return m_s.stat(key); }

private:
    zx::memory_store m_s;
};

} // namespace

TEST_SUITE("store")
{
    TEST_CASE("any_store: the store contract through it, for stores with and without handles")
    {
        SUBCASE("memory_store (its handles are lent)")
        {
            zx::any_store s(zx::memory_store{}, "memory");
            zxtest::store_conformance(s);
            CHECK(s.writable());
            CHECK(s.listable());
            CHECK(s.describe() == "memory");
        }
        SUBCASE("filesystem_store")
        {
            zxtest::temp_dir d("zarrxt-any");
            zx::any_store s = zx::open_store(d.path().string());
            zxtest::store_conformance(s);
            CHECK(s.describe() == "file://" + d.path().string());
        }
        SUBCASE("a store without handles: emulated handles refuse another version (store.6)")
        {
            zx::any_store s(handleless_store{}, "plain");
            zxtest::store_conformance(s, false);
        }
    }

    TEST_CASE("any_store: what the held store cannot do is a typed error at run time")
    {
        zx::memory_store m;
        m.set("a/zarr.json", zx::as_bytes("{}"));
        zx::any_store s(unlistable_read_only_store(m), "https://example.org/x.zarr");
        CHECK_FALSE(s.writable());
        CHECK_FALSE(s.listable());
        CHECK(s.stat("a/zarr.json").has_value());
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "a/b", s.set("a/b", zx::as_bytes("x")));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "a/zarr.json", s.erase("a/zarr.json"));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.7", "a", s.list_dir("a"));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.7", "/", s.list(""));
        // Creating an array there is refused at its first write (the root group it needs).
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "zarr.json",
                        zx::create<float, 1>(s, "b", zx::v3_options{.shape = {4}, .chunk_shape = {2}}));
    }

    TEST_CASE("open_store: paths and URLs to stores; arrays and groups through any_store")
    {
        zxtest::temp_dir d("zarrxt-open-store");
        const std::string root = d.path().string();
        {
            zx::any_store s = zx::open_store("file://" + root);
            auto g = zx::group<zx::any_store>::create(s, "g", {.attributes = {{"k", 1}}});
            auto a = zx::create<std::int16_t, 2>(s, "g/a",
                                                 zx::v3_options{.shape = {10, 12}, .chunk_shape = {4, 5}});
            xt::xtensor<std::int16_t, 2> v = xt::xtensor<std::int16_t, 2>::from_shape({10, 12});
            for (std::size_t i = 0; i < v.size(); ++i)
            {
                v.data()[i] = static_cast<std::int16_t>(i * 3 - 100);
            }
            a.write({{0, 0}, {10, 12}}, v);
            auto sharded = zx::create<double, 1>(
                s, "g/s", zx::v3_options{.shape = {100}, .chunk_shape = {50}, .codecs = {zx::sharded({10})}});
            sharded.write({{0}, {100}}, xt::xtensor<double, 1>(xt::arange<double>(100) / 4.0));
        }
        // The same files through a filesystem_store directly: what any_store wrote is there.
        zx::filesystem_store fs{root};
        auto a = zx::open<std::int16_t, 2>(fs, "g/a");
        CHECK(a.read()(3, 4) == static_cast<std::int16_t>((3 * 12 + 4) * 3 - 100));
        // And read back through any_store: typed, untyped, groups, sharded (handles lent).
        zx::any_store s = zx::open_store(root);
        CHECK(zx::open<std::int16_t, 2>(s, "g/a").read() == a.read());
        CHECK(zx::open_any(s, "g/a").shape() == std::vector<std::uint64_t>{10, 12});
        CHECK(zx::open<double, 1>(s, "g/s").read({{13}, {7}}) ==
              xt::xtensor<double, 1>(xt::arange<double>(13, 20) / 4.0));
        auto g = zx::group<zx::any_store>::open(s, "g");
        CHECK(g.attributes().at("k") == 1);
        const auto kids = g.children();
        REQUIRE(kids.size() == 2);
        CHECK(kids[0].name == "a");
        CHECK(kids[1].name == "s");

        CHECK(zx::store_scheme("/x") == "file");
        CHECK(zx::store_scheme("HTTPS://h/x") == "https");
        CHECK(zx::is_remote_url("s3://b/p"));
        CHECK_FALSE(zx::is_remote_url("file:///x"));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.1", "", zx::open_store("ftp://host/x.zarr"));
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.1", "", zx::open_store("file://relative/x.zarr"));
        // Credentials in a URL never reach an error message.
        try
        {
            zx::open_store("gopher://user:hunter2@host/x");
            FAIL("no error");
        }
        catch (const zx::store_error& e)
        {
            CHECK(std::string(e.what()).find("hunter2") == std::string::npos);
        }
    }
}
