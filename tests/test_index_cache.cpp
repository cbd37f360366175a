// The three shard-index cache policies of cache/index_cache.hpp, on their own and behind an array:
// hits, eviction by entries and by bytes (FIFO and LRU order, exact byte accounting), oversized
// indexes not retained, invalidation, a shard replaced behind the cache (generation change) on a
// memory and a filesystem store, and many threads sharing one cache.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

#include <atomic>
#include <thread>

namespace zx = zarrxt;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

/// An index of `chunks` inner chunks whose first entry records `tag`, so a lookup can be checked
/// to return the index that was inserted under that key.
zx::shard_index_ptr index_of(std::size_t chunks, std::uint64_t tag = 0)
{
    auto p = std::make_shared<zx::shard_index>();
    p->entries.assign(2 * chunks, 0);
    p->entries[0] = tag;
    return p;
}

/// memory_bytes() of an index of `chunks` inner chunks, computed from its definition: 16 bytes
/// per entry plus the struct itself.
std::size_t index_bytes(std::size_t chunks)
{
    return 16 * chunks + sizeof(zx::shard_index);
}

/// 16x16 uint16 array of 8x8 shards of 4x4 inner chunks, written whole.
template <class IndexCache, class Store>
auto make_zstd_sharded(Store& s, const std::string& path)
{
    auto a = zx::create<std::uint16_t, 2, zx::dynamic_chain, IndexCache>(
        s, path,
        zx::v3_options{.shape = {16, 16},
                       .chunk_shape = {8, 8},
                       .codecs = {zx::sharded({4, 4}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                       zx::codec_spec("zstd")})}});
    a.write({{0, 0}, {16, 16}}, make_data<std::uint16_t, 2>({16, 16}, 1));
    return a;
}

} // namespace

TEST_SUITE("index cache")
{
    TEST_CASE("no_index_cache retains nothing and every call reads the index again")
    {
        zx::no_index_cache c;
        c.insert("a", index_of(4));
        CHECK(c.find("a") == nullptr);
        CHECK(c.cached_bytes() == 0);
        static_assert(zx::no_index_cache::per_operation);
        // The erased reference says so, and the sharding codec then validates each index in place
        // instead of building a table to hand over; a cache that keeps entries says the opposite.
        CHECK_FALSE(zx::index_cache_ref(c).retains());
        zx::operation_index_cache<> op;
        zx::lru_index_cache<1u << 20> lru;
        CHECK(zx::index_cache_ref(op).retains());
        CHECK(zx::index_cache_ref(lru).retains());

        zx::memory_store s;
        make_zstd_sharded<zx::no_index_cache>(s, "a");
        auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "a");
        for (int i = 0; i < 3; ++i)
        {
            a.read({{0, 0}, {2, 2}});
        }
        CHECK(a.stats().index_reads == 3);
        CHECK(a.stats().index_cache_hits == 0);
        a.reset_stats();
        a.read({{0, 0}, {8, 8}});
        CHECK(a.stats().index_cache_hits == 0);
        CHECK(a.stats().peak_cached_index_bytes == 0);
    }

    TEST_CASE("operation_index_cache: hits, FIFO eviction by entries and by bytes, exact accounting")
    {
        static_assert(zx::operation_index_cache<1000, 2>::per_operation);
        SUBCASE("a hit returns the index inserted under that key")
        {
            zx::operation_index_cache<1 << 20, 8> c;
            c.insert("a", index_of(4, 11));
            c.insert("b", index_of(4, 22));
            REQUIRE(c.find("a") != nullptr);
            CHECK(c.find("a")->entries[0] == 11);
            CHECK(c.find("b")->entries[0] == 22);
            CHECK(c.find("c") == nullptr);
            CHECK(c.cached_bytes() == 2 * index_bytes(4));
        }
        SUBCASE("eviction by entries: first in, first out, whatever was used since")
        {
            zx::operation_index_cache<1 << 20, 2> c;
            c.insert("a", index_of(4, 1));
            c.insert("b", index_of(4, 2));
            CHECK(c.find("a") != nullptr); // a use does not protect an entry from FIFO eviction
            c.insert("c", index_of(4, 3));
            CHECK(c.find("a") == nullptr);
            CHECK(c.find("b") != nullptr);
            CHECK(c.find("c") != nullptr);
            CHECK(c.cached_bytes() == 2 * index_bytes(4));
        }
        SUBCASE("eviction by bytes: as many of the oldest as it takes")
        {
            // Room for 3 indexes of 4 chunks; one of 8 chunks needs the room of the two oldest.
            constexpr std::size_t cap = 3 * (16 * 4 + sizeof(zx::shard_index));
            zx::operation_index_cache<cap, 100> c;
            c.insert("a", index_of(4));
            c.insert("b", index_of(4));
            c.insert("c", index_of(4));
            CHECK(c.cached_bytes() == 3 * index_bytes(4));
            c.insert("d", index_of(8));
            CHECK(c.find("a") == nullptr);
            CHECK(c.find("b") == nullptr);
            CHECK(c.find("c") != nullptr);
            CHECK(c.find("d") != nullptr);
            CHECK(c.cached_bytes() == index_bytes(4) + index_bytes(8));
            CHECK(c.cached_bytes() <= cap);
        }
        SUBCASE("an index larger than the cap is not retained and evicts nothing")
        {
            zx::operation_index_cache<1000, 8> c;
            c.insert("small", index_of(4));
            c.insert("huge", index_of(1000));
            CHECK(c.find("huge") == nullptr);
            CHECK(c.find("small") != nullptr);
            CHECK(c.cached_bytes() == index_bytes(4));
        }
        SUBCASE("inserting a key again replaces it; invalidate removes it and its bytes")
        {
            zx::operation_index_cache<1 << 20, 8> c;
            c.insert("a", index_of(4, 1));
            c.insert("a", index_of(6, 2));
            CHECK(c.find("a")->entries[0] == 2);
            CHECK(c.cached_bytes() == index_bytes(6));
            c.invalidate("a");
            CHECK(c.find("a") == nullptr);
            CHECK(c.cached_bytes() == 0);
            c.invalidate("never there"); // harmless
        }
        SUBCASE("no entries allowed: nothing is retained")
        {
            zx::operation_index_cache<1 << 20, 0> c;
            c.insert("a", index_of(4));
            CHECK(c.find("a") == nullptr);
            CHECK(c.cached_bytes() == 0);
        }
        SUBCASE("behind an array: one index read per shard per call, calls do not share")
        {
            zx::memory_store s;
            make_zstd_sharded<zx::operation_index_cache<>>(s, "a");
            auto a = zx::open<std::uint16_t, 2>(s, "a");
            // All 16 inner chunks of two shards in one call.
            const auto v = a.read({{0, 0}, {8, 16}});
            CHECK(tensors_equal(
                v, xt::view(make_data<std::uint16_t, 2>({16, 16}, 1), xt::range(0, 8), xt::all())));
            CHECK(a.stats().index_reads == 2);
            a.reset_stats();
            a.read({{0, 0}, {8, 16}});
            CHECK(a.stats().index_reads == 2); // a new call starts with an empty cache
            CHECK(a.stats().index_cache_hits == 0);
        }
    }

    TEST_CASE("lru_index_cache: hits, least-recently-used eviction by bytes, invalidation")
    {
        static_assert(!zx::lru_index_cache<1000>::per_operation);
        constexpr std::size_t cap = 2 * (16 * 10 + sizeof(zx::shard_index)); // two indexes of 10 chunks
        zx::lru_index_cache<cap> c;
        c.insert("a", index_of(10, 1));
        c.insert("b", index_of(10, 2));
        CHECK(c.cached_bytes() == 2 * index_bytes(10));
        REQUIRE(c.find("a") != nullptr); // a becomes the most recent
        c.insert("c", index_of(10, 3));
        CHECK(c.find("b") == nullptr); // the least recently used went
        REQUIRE(c.find("a") != nullptr);
        CHECK(c.find("a")->entries[0] == 1);
        CHECK(c.find("c")->entries[0] == 3);
        CHECK(c.cached_bytes() == 2 * index_bytes(10));
        // One larger index evicts both.
        c.insert("d", index_of(15, 4));
        CHECK(c.find("a") == nullptr);
        CHECK(c.find("c") == nullptr);
        CHECK(c.cached_bytes() == index_bytes(15));
        // Oversized: not retained, nothing evicted.
        c.insert("huge", index_of(100));
        CHECK(c.find("huge") == nullptr);
        CHECK(c.find("d") != nullptr);
        // Re-insert replaces; invalidate removes and gives the bytes back.
        c.insert("d", index_of(2, 5));
        CHECK(c.find("d")->entries[0] == 5);
        CHECK(c.cached_bytes() == index_bytes(2));
        c.invalidate("d");
        CHECK(c.find("d") == nullptr);
        CHECK(c.cached_bytes() == 0);
    }

    TEST_CASE("lru behind an array: repeated reads hit, shards replaced behind it are seen")
    {
        auto check_store = [](auto& s, auto& other_writer_store)
        {
            make_zstd_sharded<zx::operation_index_cache<>>(s, "a");
            auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(s, "a");
            const auto original = make_data<std::uint16_t, 2>({16, 16}, 1);
            CHECK(tensors_equal(a.read({{0, 0}, {2, 2}}),
                                xt::view(original, xt::range(0, 2), xt::range(0, 2))));
            CHECK(a.stats().index_reads == 1);
            for (int i = 0; i < 5; ++i)
            {
                a.read({{4, 4}, {2, 2}});
            }
            CHECK(a.stats().index_reads == 1);
            CHECK(a.stats().index_cache_hits == 5);
            a.read({{0, 8}, {1, 1}}); // shard (0, 1) is cached too
            CHECK(a.stats().index_reads == 2);
            // Another handle rewrites shard (0, 0) with other values: its inner chunks move, so the
            // cached index is stale. The generation (memory store: a counter; files: size and
            // mtime) tells the reader, which reads the index again and returns the new values.
            {
                auto other = zx::open<std::uint16_t, 2>(other_writer_store, "a");
                auto repl = make_data<std::uint16_t, 2>({8, 8}, 5000);
                repl(0, 0) = 0; // an inner chunk that compresses differently, so offsets change
                other.write({{0, 0}, {8, 8}}, repl);
            }
            a.reset_stats();
            const auto after = a.read({{0, 0}, {8, 8}});
            auto want = make_data<std::uint16_t, 2>({8, 8}, 5000);
            want(0, 0) = 0;
            CHECK(tensors_equal(after, want));
            CHECK(a.stats().index_reads >= 1);
            // Shard (0, 1) was not touched: still served from the cache.
            a.reset_stats();
            CHECK(tensors_equal(a.read({{0, 8}, {8, 8}}),
                                xt::view(original, xt::range(0, 8), xt::range(8, 16))));
            CHECK(a.stats().index_reads == 0);
            CHECK(a.stats().index_cache_hits == 1);
            // Our own write invalidates the entry of the shard it rewrites.
            a.write({{8, 8}, {1, 1}}, xt::xtensor<std::uint16_t, 2>{{42}});
            a.reset_stats();
            CHECK(a.read({{8, 8}, {1, 1}})(0, 0) == 42);
            CHECK(a.stats().index_reads == 1);
        };
        SUBCASE("memory store")
        {
            zx::memory_store s; // copies share the objects
            zx::memory_store view = s;
            check_store(s, view);
        }
        SUBCASE("filesystem store")
        {
            zxtest::temp_dir dir;
            zx::filesystem_store s(dir.path());
            zx::filesystem_store other(dir.path());
            check_store(s, other);
        }
    }

    TEST_CASE("a cache shared by many threads stays consistent and within its bounds")
    {
        constexpr int threads = 8;
        constexpr int rounds = 4000;
        constexpr std::size_t cap = 20 * (16 * 4 + sizeof(zx::shard_index));
        zx::lru_index_cache<cap> lru;
        zx::operation_index_cache<cap, 12> fifo;
        std::atomic<int> ready{0};
        std::atomic<int> wrong{0};
        std::atomic<bool> over{false};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
        {
            ts.emplace_back(
                [&, t]
                {
                    ++ready;
                    while (ready < threads)
                    {
                    }
                    zxtest::lcg rng(static_cast<std::uint64_t>(t) + 1);
                    for (int i = 0; i < rounds; ++i)
                    {
                        const std::uint64_t k = rng.next() % 40;
                        const std::string key = "shard/" + std::to_string(k);
                        for (const zx::index_cache_ref c :
                             {zx::index_cache_ref(lru), zx::index_cache_ref(fifo)})
                        {
                            switch (rng.next() % 4)
                            {
                                case 0:
                                    c.insert(key, index_of(4, k));
                                    break;
                                case 1:
                                    c.invalidate(key);
                                    break;
                                default:
                                    if (const auto p = c.find(key); p && p->entries[0] != k)
                                    {
                                        ++wrong; // another key's index
                                    }
                            }
                            if (c.cached_bytes() > cap)
                            {
                                over = true;
                            }
                        }
                    }
                });
        }
        for (auto& t : ts)
        {
            t.join();
        }
        CHECK(wrong == 0);
        CHECK_FALSE(over);
        // The byte count still matches what is held: emptying the caches key by key brings it to 0.
        for (int k = 0; k < 40; ++k)
        {
            lru.invalidate("shard/" + std::to_string(k));
            fifo.invalidate("shard/" + std::to_string(k));
        }
        CHECK(lru.cached_bytes() == 0);
        CHECK(fifo.cached_bytes() == 0);
    }

    TEST_CASE("threads reading one array through a shared LRU cache get the right values")
    {
        zx::memory_store s;
        make_zstd_sharded<zx::operation_index_cache<>>(s, "a");
        auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(s, "a");
        const auto data = make_data<std::uint16_t, 2>({16, 16}, 1);
        std::atomic<int> bad{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < 6; ++t)
        {
            ts.emplace_back(
                [&, t]
                {
                    zxtest::lcg rng(static_cast<std::uint64_t>(t) + 100);
                    for (int i = 0; i < 200; ++i)
                    {
                        const std::size_t r = rng.next() % 14;
                        const std::size_t c = rng.next() % 14;
                        const auto v = a.read({{r, c}, {3, 3}});
                        for (std::size_t y = 0; y < 3; ++y) // no doctest assertions off the main thread
                        {
                            for (std::size_t x = 0; x < 3; ++x)
                            {
                                bad += v(y, x) != data(r + y, c + x) ? 1 : 0;
                            }
                        }
                    }
                });
        }
        for (auto& t : ts)
        {
            t.join();
        }
        CHECK(bad == 0);
        // Four shards: at most a few index reads (threads may race to fill the same entry), the
        // rest hits.
        CHECK(a.stats().index_reads <= 4 * 6);
        CHECK(a.stats().index_cache_hits > 1000);
    }
}
