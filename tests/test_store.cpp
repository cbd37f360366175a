// Stores: the conformance suite for every store type, plus filesystem specifics (atomic replace,
// temporary files never visible, durability policy, nothing written outside the root).
#include "store_conformance.hpp"

#include <zarrxt/store/counting.hpp>
#include <zarrxt/store/filesystem.hpp>
#include <zarrxt/store/memory.hpp>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

namespace zx = zarrxt;

TEST_SUITE("store")
{
    TEST_CASE("memory_store passes the conformance suite")
    {
        zx::memory_store s;
        zxtest::store_conformance(s);
        zx::memory_store copy = s; // a handle: copies share contents
        copy.set("shared", zx::as_bytes("1"));
        CHECK(s.stat("shared").has_value());
    }

    TEST_CASE("filesystem_store passes the conformance suite")
    {
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path() / "root");
        zxtest::store_conformance(s);
        CHECK(std::filesystem::exists(dir.path() / "root" / "a" / "b" / "c"));
    }

    TEST_CASE("filesystem_store with fsync durability passes the conformance suite")
    {
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path(), zx::durability::fsync);
        zxtest::store_conformance(s);
    }

    TEST_CASE("counting_store passes the conformance suite and counts")
    {
        zx::counting_store<zx::memory_store> s{zx::memory_store{}};
        zxtest::store_conformance(s);
        const auto st = s.stats();
        CHECK(st.writes == 9); // the refused sets do not count
        CHECK(st.opens >= 3);  // open_object() calls and whole reads each open once
        CHECK(st.reads >= 10);
        CHECK(st.misses >= 1);
        s.reset();
        CHECK(s.stats().reads == 0);
    }

    TEST_CASE("filesystem_store never lists temporary files and never escapes its root")
    {
        zxtest::temp_dir dir;
        const auto sentinel = dir.path() / "sentinel";
        zxtest::write_file(sentinel, "keep");
        zx::filesystem_store s(dir.path() / "root");
        s.set("k", zx::as_bytes("v"));
        // A writer killed mid-write leaves its temporary file behind; it must stay invisible.
        zxtest::write_file(dir.path() / "root" / ".zarrxt-tmp-123-0-k", "partial");
        CHECK(s.list("") == std::vector<std::string>{"k"});
        CHECK(s.list_dir("") == std::vector<std::string>{"k"});
        CHECK_THROWS_AS(s.set("../sentinel", zx::as_bytes("overwritten")), zx::store_error);
        CHECK_THROWS_AS(s.erase("../sentinel"), zx::store_error);
        CHECK(zxtest::read_file(sentinel) == "keep");
        // A directory is not an object.
        s.set("dir/child", zx::as_bytes("x"));
        CHECK_FALSE(s.read("dir", zx::byte_range::all(), 100).has_value());
        CHECK_FALSE(s.erase("dir"));
    }

    TEST_CASE(
        "filesystem_store streams an object: pieces, write_at, commit publishes, no commit leaves the key")
    {
        static_assert(zx::streaming_store<zx::filesystem_store>);
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        s.set("k", zx::as_bytes("old"));
        // Appends of every size around the 2 MiB piece: small ones gathered, a large one written
        // partly from the gathered piece and partly straight, a remainder gathered again.
        constexpr std::size_t piece = zx::filesystem_store::object_writer::piece;
        std::vector<std::byte> expect;
        auto part = [&](std::size_t n, unsigned seed)
        {
            std::vector<std::byte> v(n);
            for (std::size_t i = 0; i < n; ++i)
            {
                v[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
            }
            return v;
        };
        {
            auto w = s.begin_write("k");
            std::size_t k = 0;
            for (const std::size_t n : {std::size_t{16}, std::size_t{100000}, 3 * piece + 12345, piece - 7,
                                        std::size_t{0}, piece, std::size_t{5}})
            {
                const auto v = part(n, static_cast<unsigned>(++k));
                w.append(zx::byte_view(v.data(), v.size()));
                expect.insert(expect.end(), v.begin(), v.end());
                CHECK(w.size() == expect.size());
            }
            const auto head = part(16, 99);
            w.write_at(0, zx::byte_view(head.data(), head.size())); // over the first append
            std::copy(head.begin(), head.end(), expect.begin());
            CHECK_THROWS_AS(w.write_at(expect.size() - 3, zx::byte_view(head.data(), 4)), std::out_of_range);
            // Nothing is visible before the commit.
            CHECK(zx::get(s, "k")->size() == 3);
            w.commit();
            CHECK_THROWS_AS(w.append(zx::byte_view(head.data(), 1)), std::logic_error);
        }
        const auto got = zx::get(s, "k");
        REQUIRE(got.has_value());
        REQUIRE(got->size() == expect.size());
        CHECK(std::memcmp(got->data(), expect.data(), expect.size()) == 0);
        {
            auto w = s.begin_write("k"); // abandoned: the key keeps its value, no temporary file stays
            const auto v = part(piece + 3, 1);
            w.append(zx::byte_view(v.data(), v.size()));
        }
        CHECK(zx::get(s, "k")->size() == expect.size());
        CHECK(s.list("") == std::vector<std::string>{"k"});
        for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        {
            CHECK_FALSE(zx::filesystem_store::is_temp_name(e.path().filename().string()));
        }
        // A new key in a new directory; counting_store forwards the writer and counts one write.
        zx::counting_store<zx::filesystem_store> c(s);
        auto w = c.begin_write("d/e/new");
        w.append(zx::as_bytes("abc"));
        w.commit();
        CHECK(zxtest::read_file(dir.path() / "d/e/new") == "abc");
        CHECK(c.stats().writes == 1);
        CHECK(c.stats().write_bytes == 3);
    }

    TEST_CASE("filesystem_store replaces atomically under concurrent readers")
    {
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        const std::string a(100000, 'a');
        const std::string b(200000, 'b');
        s.set("obj", zx::as_bytes(a));
        std::atomic<bool> stop{false};
        std::atomic<int> torn{0};
        std::thread reader([&] {
            while (!stop)
            {
                auto r = s.read("obj", zx::byte_range::all(), ~0ull);
                if (!r)
                {
                    ++torn; // the key must never disappear during a replace
                    continue;
                }
                const std::string v = zxtest::as_string(r->bytes);
                if (v != a && v != b)
                {
                    ++torn;
                }
            }
        });
        for (int i = 0; i < 200; ++i)
        {
            s.set("obj", zx::as_bytes(i % 2 ? a : b));
        }
        stop = true;
        reader.join();
        CHECK(torn == 0);
        CHECK(s.list("") == std::vector<std::string>{"obj"});
    }

    TEST_CASE("store keys: join and normalize")
    {
        CHECK(zx::join_key("", "zarr.json") == "zarr.json");
        CHECK(zx::join_key("a/b", "c/0") == "a/b/c/0");
        CHECK(zx::normalize_path("/a/b/") == "a/b");
        CHECK(zx::normalize_path("") == "");
        CHECK_THROWS_AS(zx::normalize_path("a/../b"), zx::store_error);
    }
}
