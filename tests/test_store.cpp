// Stores: the conformance suite for every store type, plus filesystem specifics (atomic replace,
// temporary files never visible, durability policy, nothing written outside the root).
#include "array_support.hpp"
#include "store_conformance.hpp"

#include <xtensor/xview.hpp>
#include <zarrxt/store/counting.hpp>
#include <zarrxt/store/filesystem.hpp>
#include <zarrxt/store/latency.hpp>
#include <zarrxt/store/memory.hpp>
#include <zarrxt/zarrxt.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// A read-only store without handles or any optional capability (what latency_store must not add).
class plain_store
{
public:
    explicit plain_store(zx::memory_store m)
        : m_m(std::move(m))
    {
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return m_m.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return m_m.stat(key); }

private:
    zx::memory_store m_m;
};

using lat_mem = zx::latency_store<zx::memory_store>;
using lat_fs = zx::latency_store<zx::filesystem_store>;
using lat_plain = zx::latency_store<plain_store>;

// Capabilities are forwarded exactly (plus open_object_and_read wherever there are handles).
static_assert(zx::array_writable_store<lat_mem> && zx::object_store<lat_mem> && zx::buffered_store<lat_mem> &&
              zx::direct_store<lat_mem> && zx::direct_object_store<lat_mem> &&
              zx::open_reading_store<lat_mem> && zx::prefetching_handle<lat_mem::object_handle>);
static_assert(!zx::streaming_store<lat_mem>);
static_assert(zx::array_writable_store<lat_fs> && zx::streaming_store<lat_fs> &&
              zx::direct_object_store<lat_fs>);
static_assert(zx::array_writable_store<zx::latency_store<zx::counting_store<zx::memory_store>>>);
static_assert(zx::store_policy<lat_plain> && !zx::object_store<lat_plain> && !zx::buffered_store<lat_plain> &&
              !zx::direct_store<lat_plain> && !zx::writable_store<lat_plain> &&
              !zx::erasable_store<lat_plain> && !zx::listable_store<lat_plain> &&
              !zx::lockable_store<lat_plain> && !zx::streaming_store<lat_plain>);

zx::latency_options no_delay()
{
    return {.fixed = std::chrono::microseconds(0), .jitter = std::chrono::microseconds(0), .seed = 1};
}

} // namespace

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

    TEST_CASE("latency_store passes the conformance suite with the values of the store it wraps")
    {
        lat_mem s{zx::memory_store{}, no_delay()};
        zxtest::store_conformance(s);
        CHECK(s.delays() > 20); // every request drew its delay
        zxtest::temp_dir dir;
        lat_fs f{zx::filesystem_store(dir.path()), no_delay()};
        zxtest::store_conformance(f);
        // Reads through it are the wrapped store's reads, byte for byte.
        s.set("k", zx::as_bytes("0123456789"));
        zx::buffer out;
        REQUIRE(s.read_to("k", zx::byte_range::last(4), UINT64_MAX, out));
        CHECK(zxtest::as_string(out) == "6789");
        CHECK(s.stat("k")->generation == s.inner().stat("k")->generation);
        std::string dest(3, '\0');
        REQUIRE(s.read_into("k", 2, zx::mutable_byte_view(reinterpret_cast<std::byte*>(dest.data()), 3)));
        CHECK(dest == "234");
        lat_plain p{plain_store(s.inner()), no_delay()};
        REQUIRE(p.read("k", zx::byte_range::of(1, 2), UINT64_MAX));
        CHECK(zxtest::as_string(p.read("k", zx::byte_range::of(1, 2), UINT64_MAX)->bytes) == "12");
        CHECK(p.delays() == 2);
    }

    TEST_CASE("latency_store: one delay per request, one per prefetched batch")
    {
        lat_mem s{zx::memory_store{}, no_delay()};
        std::string data(1000, '\0');
        for (std::size_t i = 0; i < data.size(); ++i)
        {
            data[i] = static_cast<char>(i % 251);
        }
        s.set("obj", zx::as_bytes(data));
        CHECK(s.delays() == 1);
        zx::buffer out;
        s.stat("obj");
        s.read("obj", zx::byte_range::all(), UINT64_MAX);
        s.list("");
        s.list_dir("");
        CHECK(s.delays() == 5);
        {
            auto guard = s.lock_key("obj"); // in-process: no request
        }
        CHECK(s.delays() == 5);

        auto h = s.open_object("obj");
        REQUIRE(h);
        CHECK(s.delays() == 6);
        std::vector<zx::byte_range> ranges;
        for (std::uint64_t i = 0; i < 40; ++i)
        {
            ranges.push_back(zx::byte_range::of(i * 25, 10));
        }
        ranges.push_back(zx::byte_range::last(7));
        h->prefetch(ranges); // 41 ranges, one batch: one delay
        CHECK(s.delays() == 7);
        for (std::size_t i = ranges.size(); i-- > 0;)
        {
            h->read_to(ranges[i], UINT64_MAX, out);
            CHECK(zxtest::as_string(out) == (i == 40 ? data.substr(993) : data.substr(i * 25, 10)));
        }
        CHECK(s.delays() == 7); // every read waited for its batch, none paid a delay of its own
        CHECK(s.prefetched_reads() == 41);
        h->read_to(ranges[0], UINT64_MAX, out); // read again: a new request
        CHECK(s.delays() == 8);
        std::string dest(5, '\0');
        h->read_into(100, zx::mutable_byte_view(reinterpret_cast<std::byte*>(dest.data()), 5));
        CHECK(dest == data.substr(100, 5));
        CHECK(s.delays() == 9);
        std::vector<zx::buffer> outs(3);
        h->read_ranges(std::span(ranges).first(3), UINT64_MAX, outs); // a batch: one delay
        CHECK(s.delays() == 10);
        CHECK(zxtest::as_string(outs[2]) == data.substr(50, 10));
        auto h2 = s.open_object_and_read("obj", zx::byte_range::of(3, 4), UINT64_MAX, out); // one round trip
        REQUIRE(h2);
        CHECK(zxtest::as_string(out) == data.substr(3, 4));
        CHECK(h2->info().size == data.size());
        CHECK(s.delays() == 11);
        CHECK_FALSE(s.open_object_and_read("missing", zx::byte_range::all(), UINT64_MAX, out));
        CHECK_FALSE(s.open_object("missing"));
        CHECK(s.erase("obj"));
        CHECK(s.delays() == 14);
        lat_mem copy = s; // copies share the counters
        copy.stat("obj");
        CHECK(s.delays() == 15);
    }

    TEST_CASE("latency_store: the delays drawn are fixed plus jitter, the same for the same seed")
    {
        const zx::latency_options o{
            .fixed = std::chrono::microseconds(10), .jitter = std::chrono::microseconds(200), .seed = 42};
        lat_mem a{zx::memory_store{}, o};
        lat_mem b{zx::memory_store{}, o};
        lat_mem c{zx::memory_store{}, {.fixed = o.fixed, .jitter = o.jitter, .seed = 43}};
        for (int i = 0; i < 50; ++i)
        {
            a.stat("k");
            b.stat("k");
            c.stat("k");
        }
        CHECK(a.delays() == 50);
        CHECK(a.total_delay() == b.total_delay());
        CHECK(a.total_delay() != c.total_delay());
        CHECK(a.total_delay() >= 50 * o.fixed);
        CHECK(a.total_delay() <= 50 * (o.fixed + o.jitter));
        CHECK(a.total_delay() > 50 * o.fixed); // the jitter is not always 0
    }

    TEST_CASE("latency_store: delays are slept on the calling thread, concurrent ones overlap")
    {
        // Each delay is long next to starting a thread: with no lock held while sleeping, the
        // four requests released together are asleep at the same time (a lock would keep one).
        lat_mem s{zx::memory_store{}, {.fixed = std::chrono::milliseconds(300), .jitter = {}, .seed = 1}};
        s.inner().stat("k"); // not through the decorator: no delay
        std::latch go(4);
        std::vector<std::thread> threads;
        for (int i = 0; i < 4; ++i)
        {
            threads.emplace_back(
                [&]
                {
                    go.arrive_and_wait();
                    s.stat("k");
                });
        }
        for (auto& t : threads)
        {
            t.join();
        }
        CHECK(s.delays() == 4);
        CHECK(s.peak_concurrent_delays() >= 2);

        // A prefetched range is ready one delay after its batch started, never sooner.
        zx::memory_store m;
        m.set("k", zx::as_bytes("abcdef"));
        lat_mem p{m, {.fixed = std::chrono::milliseconds(50), .jitter = {}, .seed = 1}};
        auto h = p.open_object("k");
        REQUIRE(h);
        const zx::byte_range r[] = {zx::byte_range::of(1, 2)};
        const auto t0 = std::chrono::steady_clock::now();
        h->prefetch(r);
        zx::buffer out;
        h->read_to(r[0], UINT64_MAX, out);
        CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(50));
        CHECK(zxtest::as_string(out) == "bc");
        CHECK(p.prefetched_reads() == 1);
    }

    TEST_CASE("latency_store: an array written and read through it matches, a shard's ranges in one delay")
    {
        lat_mem s{zx::memory_store{}, no_delay()};
        const zx::v3_options opts{
            .shape = {512, 512},
            .chunk_shape = {512, 512},
            .codecs = {zx::sharded({64, 64}, {zx::codec_spec("bytes", {{"endian", "little"}})})}};
        auto a = zx::create<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "a", opts);
        const auto data = zxtest::make_data<std::uint16_t, 2>({512, 512}, 3);
        a.write({{0, 0}, {512, 512}}, data);
        auto plain = zx::open<std::uint16_t, 2>(s.inner(), "a");
        CHECK(zxtest::tensors_equal(plain.read(), data));
        auto b = zx::create<float, 2>(s, "b", zx::v3_options{.shape = {100, 90}, .chunk_shape = {16, 32}});
        const auto fdata = zxtest::make_data<float, 2>({100, 90}, 5);
        b.write({{0, 0}, {100, 90}}, fdata);
        CHECK(zxtest::tensors_equal(zx::open<float, 2>(s, "b").read({{3, 4}, {60, 70}}),
                                    xt::view(fdata, xt::range(3, 63), xt::range(4, 74))));

        // A band of one inner-chunk column: 8 inner chunks 64 KiB apart, 8 batches announced at
        // once. The index costs one delay (opened by its read), the 8 ranges one batch.
        // (The read of b above took its 12 compressed chunks from one announced batch.)
        CHECK(s.prefetched_reads() == 12);
        const std::uint64_t before = s.delays();
        CHECK(zxtest::tensors_equal(a.read({{0, 64}, {512, 64}}),
                                    xt::view(data, xt::all(), xt::range(64, 128))));
        CHECK(s.delays() - before == 2);
        CHECK(s.prefetched_reads() == 12 + 8);
    }

    TEST_CASE("latency_store: a write posts its chunks, many in flight; a read takes prefetched chunks")
    {
        // 64 chunks and one thread. Posted, the writes' round trips overlap: the model records
        // each request from its sending to its answer, and far more than one are in flight at
        // once (one at a time, as set() would be, the peak is 1).
        static_assert(zx::posting_store<lat_mem> && zx::object_prefetching_store<lat_mem>);
        static_assert(!zx::posting_store<zx::latency_store<plain_store>>);
        lat_mem s{zx::memory_store{}, {.fixed = std::chrono::milliseconds(20), .jitter = {}, .seed = 1}};
        auto a = zx::create<std::uint16_t, 2>(s, "a",
                                              zx::v3_options{.shape = {256, 256},
                                                             .chunk_shape = {32, 32},
                                                             .codecs = {zx::codec_spec("bytes")}});
        const auto data = zxtest::make_data<std::uint16_t, 2>({256, 256}, 7);
        s.reset_requests_in_flight();
        a.write({{0, 0}, {256, 256}}, data);
        const auto w = s.requests_in_flight();
        CHECK(w.requests == 64);
        CHECK(w.peak >= 16);
        CHECK(w.mean > 2.0);
        // Every chunk is stored by the time write() returns, byte for byte.
        CHECK(zxtest::tensors_equal(zx::open<std::uint16_t, 2>(s.inner(), "a").read(), data));
        CHECK(s.inner().list("a/c").size() == 64);

        // The read announces its chunks (prefetch_objects): they are answered from the batch.
        const std::uint64_t before = s.prefetched_reads();
        s.reset_requests_in_flight();
        CHECK(zxtest::tensors_equal(a.read(), data));
        CHECK(s.prefetched_reads() - before == 64);
        CHECK(s.prefetched_pending() == 0);
        CHECK(s.requests_in_flight().peak >= 16);

        // Shards wholly covered by the read are fetched whole, announced together: one request
        // each instead of an index and then its chunks, one shard after the other. A read that
        // covers them only in part fetches small ones whole too, larger ones by index and ranges.
        auto b = zx::create<std::uint16_t, 2>(
            s, "b",
            zx::v3_options{
                .shape = {256, 256},
                .chunk_shape = {64, 64},
                .codecs = {zx::sharded({32, 32}, {zx::codec_spec("bytes"), zx::codec_spec("zstd")})}});
        b.write({{0, 0}, {256, 256}}, data);
        const std::uint64_t p0 = s.prefetched_reads();
        const std::uint64_t d0 = s.delays();
        CHECK(zxtest::tensors_equal(b.read(), data));
        CHECK(s.prefetched_reads() - p0 == 16);
        CHECK(s.delays() - d0 == 1); // one batch for the 16 shards
        // Small shards (at most 1 MiB decoded) are fetched whole even when a read needs part of them.
        const std::uint64_t p1 = s.prefetched_reads();
        CHECK(zxtest::tensors_equal(b.read({{1, 0}, {200, 256}}),
                                    xt::view(data, xt::range(1, 201), xt::all())));
        CHECK(s.prefetched_reads() - p1 == 16);
        CHECK(s.prefetched_pending() == 0);

        // Larger shards that a read covers only in part keep to their index and the ranges needed.
        const auto big = zxtest::make_data<std::uint8_t, 2>({2200, 1000}, 3);
        auto c = zx::create<std::uint8_t, 2>(
            s, "c",
            zx::v3_options{.shape = {2200, 1000},
                           .chunk_shape = {1100, 1000}, // 1.1 MB decoded
                           .codecs = {zx::sharded({100, 100}, {zx::codec_spec("bytes")})}});
        c.write({{0, 0}, {2200, 1000}}, big);
        const std::uint64_t p2 = s.prefetched_reads();
        const std::uint64_t d2 = s.delays();
        CHECK(zxtest::tensors_equal(c.read({{1000, 0}, {200, 1000}}),
                                    xt::view(big, xt::range(1000, 1200), xt::all())));
        CHECK(s.delays() - d2 >= 4); // per shard: its index, then its batch of ranges
        CHECK(s.prefetched_pending() == 0);
        CHECK(s.prefetched_reads() == p2); // nothing fetched whole
    }

    TEST_CASE("latency_store: concurrent partial writes of one chunk lose nothing while posts are in flight")
    {
        // Two threads each write their own half of every chunk, many times over. Each
        // read-modify-write must start from the other's posted version (wait_posted under the
        // key's lock), or a half would come back as the fill value.
        lat_mem s{zx::memory_store{}, {.fixed = std::chrono::milliseconds(2), .jitter = {}, .seed = 1}};
        auto a = zx::create<std::int32_t, 1>(s, "a", zx::v3_options{.shape = {64}, .chunk_shape = {16}});
        std::vector<std::thread> threads;
        for (int t = 0; t < 2; ++t)
        {
            threads.emplace_back(
                [&, t]
                {
                    for (int round = 1; round <= 10; ++round)
                    {
                        for (std::uint64_t c = 0; c < 4; ++c)
                        {
                            xt::xtensor<std::int32_t, 1> v = xt::ones<std::int32_t>({8}) * (round * 10 + t);
                            a.write({{c * 16 + static_cast<std::uint64_t>(t) * 8}, {8}}, v);
                        }
                    }
                });
        }
        for (auto& th : threads)
        {
            th.join();
        }
        const auto got = zx::open<std::int32_t, 1>(s.inner(), "a").read();
        for (std::size_t i = 0; i < 64; ++i)
        {
            CHECK(got(i) == (i % 16 < 8 ? 100 : 101));
        }
    }

    TEST_CASE("a write whose posted requests fail reports the failure, after every post ended")
    {
        // A posting store that refuses one key: the write throws that error, and no post of the
        // operation is left in flight when it does.
        struct failing_posts
        {
            zx::memory_store inner;
            std::shared_ptr<std::atomic<int>> waited = std::make_shared<std::atomic<int>>(0);
            std::shared_ptr<zx::detail::posted_registry> reg =
                std::make_shared<zx::detail::posted_registry>();
            std::optional<zx::read_result> read(std::string_view k, zx::byte_range r, std::uint64_t m) const
            {
                return inner.read(k, r, m);
            }
            std::optional<zx::object_info> stat(std::string_view k) const { return inner.stat(k); }
            void set(std::string_view k, zx::byte_view d) { inner.set(k, d); }
            bool erase(std::string_view k) { return inner.erase(k); }
            std::vector<std::string> list(std::string_view p) const { return inner.list(p); }
            std::vector<std::string> list_dir(std::string_view p) const { return inner.list_dir(p); }
            auto lock_key(std::string_view k) const { return inner.lock_key(k); }
            zx::detail::posted_write post(std::string_view k, zx::buffer b)
            {
                const bool bad = k == "a/c/2";
                auto bytes = std::make_shared<zx::buffer>(std::move(b));
                zx::memory_store m = inner;
                std::string key(k);
                auto w = waited;
                auto st = std::make_shared<zx::detail::posted_state>(
                    [=]() mutable
                    {
                        ++*w;
                        if (bad)
                        {
                            throw zx::store_error(zx::store_errc::remote, "refused: " + key);
                        }
                        m.set(key, bytes->view());
                    });
                return zx::detail::posted_write(std::string(k), std::move(st), reg);
            }
            void wait_posted(std::string_view k) { reg->wait_for(k); }
        };
        static_assert(zx::posting_store<failing_posts> && zx::array_writable_store<failing_posts>);
        failing_posts s;
        auto a = zx::create<std::uint8_t, 1>(s, "a", zx::v3_options{.shape = {80}, .chunk_shape = {10}});
        const xt::xtensor<std::uint8_t, 1> v = xt::ones<std::uint8_t>({80});
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.4", "a/c/2", a.write({{0}, {80}}, v));
        CHECK(*s.waited == 8); // every post was waited for, the failing one included
        CHECK(s.reg->in_flight() == 0);
        CHECK_FALSE(s.inner.stat("a/c/2"));
        CHECK(s.inner.stat("a/c/7"));
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
        // Appends of every size around the piece (256 KiB): small ones gathered, a large one written
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
