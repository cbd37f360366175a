// Sharding: round trips checked by an independent spec reader (index at the end and at the start,
// nested shards), the I/O shape of partial reads through the counters, the three index-cache
// policies, write semantics (untouched inner chunks copied as encoded bytes, empty inner chunks not
// stored, empty shards erased), a static sharding chain, and concurrent writers of one shard.
#include "array_support.hpp"
#include "spec_shard_reader.hpp"

#include <xtensor/xview.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace zx = zarrxt;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

zx::codec_spec inner_gzip_crc()
{
    return zx::sharded({4, 4}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("gzip", {{"level", 1}}),
                                zx::codec_spec("crc32c")});
}

/// 16x16 uint16 array of 8x8 shards holding 4x4 inner chunks (4 shards, 16 inner chunks each).
template <class IndexCache = zx::operation_index_cache<>, class Store>
auto make_sharded(Store& s, const std::string& path, zx::codec_spec codec = inner_gzip_crc())
{
    auto a = zx::create<std::uint16_t, 2, zx::dynamic_chain, IndexCache>(
        s, path, zx::v3_options{.shape = {16, 16}, .chunk_shape = {8, 8}, .codecs = {codec}});
    a.write({{0, 0}, {16, 16}}, make_data<std::uint16_t, 2>({16, 16}, 1));
    return a;
}

template <class A>
concept can_write_raw = requires(A& a, const typename A::tensor_type::value_type* p)
{
    a.write_raw(typename A::region_type{}, p);
};

/// Runs tasks in order on the calling thread, claiming two workers (each task gets worker i % 2,
/// so both scratch spaces are used), and records the size of every bulk call.
struct recording_executor
{
    std::shared_ptr<std::vector<std::size_t>> calls = std::make_shared<std::vector<std::size_t>>();
    std::size_t concurrency() const noexcept { return 2; }
    template <class F>
    void bulk(std::size_t n, F&& f) const
    {
        calls->push_back(n);
        for (std::size_t i = 0; i < n; ++i)
        {
            f(i, i % 2);
        }
    }
};

template <class T>
std::vector<unsigned char> le_bytes(const xt::xtensor<T, 2>& t)
{
    std::vector<unsigned char> out(t.size() * sizeof(T));
    std::memcpy(out.data(), t.data(), out.size()); // the test machine is little-endian (checked below)
    return out;
}

/// A filesystem store that records how objects reach it: set() calls, and for streamed objects
/// the largest single append (the writer's memory need, beside its own 1 MiB gathering buffer).
class stream_probe_store
{
public:
    struct record
    {
        std::atomic<std::size_t> sets{0}, streams{0}, largest_append{0};
    };
    explicit stream_probe_store(const std::filesystem::path& root)
        : m_inner(root)
        , m_r(std::make_shared<record>())
    {
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return m_inner.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return m_inner.stat(key); }
    using object_handle = zx::filesystem_store::object_handle;
    std::optional<object_handle> open_object(std::string_view key) const { return m_inner.open_object(key); }
    void set(std::string_view key, zx::byte_view data)
    {
        ++m_r->sets;
        m_inner.set(key, data);
    }
    class writer
    {
    public:
        writer(zx::filesystem_store::object_writer w, std::shared_ptr<record> r)
            : m_w(std::move(w))
            , m_r(std::move(r))
        {
        }
        void append(zx::byte_view d)
        {
            std::size_t seen = m_r->largest_append.load();
            while (d.size() > seen && !m_r->largest_append.compare_exchange_weak(seen, d.size()))
            {
            }
            m_w.append(d);
        }
        void write_at(std::uint64_t off, zx::byte_view d) { m_w.write_at(off, d); }
        std::uint64_t size() const { return m_w.size(); }
        void commit()
        {
            ++m_r->streams;
            m_w.commit();
        }

    private:
        zx::filesystem_store::object_writer m_w;
        std::shared_ptr<record> m_r;
    };
    writer begin_write(std::string_view key) { return writer(m_inner.begin_write(key), m_r); }
    bool erase(std::string_view key) { return m_inner.erase(key); }
    std::vector<std::string> list(std::string_view prefix) const { return m_inner.list(prefix); }
    std::vector<std::string> list_dir(std::string_view prefix) const { return m_inner.list_dir(prefix); }
    auto lock_key(std::string_view key) const { return m_inner.lock_key(key); }
    record& rec() const { return *m_r; }

private:
    zx::filesystem_store m_inner;
    std::shared_ptr<record> m_r;
};
static_assert(zx::streaming_store<stream_probe_store> && zx::object_store<stream_probe_store>);
static_assert(zx::streaming_store<zx::counting_store<zx::filesystem_store>>);
static_assert(!zx::streaming_store<zx::memory_store>);

bool has_temp_files(const std::filesystem::path& dir)
{
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    {
        if (zx::filesystem_store::is_temp_name(e.path().filename().string()))
        {
            return true;
        }
    }
    return false;
}

} // namespace

TEST_SUITE("sharding")
{
    TEST_CASE("sharded arrays written by zarrxt match the independent spec reader")
    {
        REQUIRE(zx::native_endian == zx::endian::little);
        struct layout
        {
            const char* label;
            zx::codec_spec codec;
        };
        const std::vector<layout> layouts{
            {"index at end, gzip + crc32c", inner_gzip_crc()},
            {"index at start, zstd", zx::sharded({2, 4}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")}, false)},
            {"big-endian inner chunks", zx::sharded({8, 1}, {zx::codec_spec("bytes", {{"endian", "big"}})})},
            {"nested shards", zx::sharded({4, 4}, {zx::sharded({2, 2}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                                        zx::codec_spec("gzip", {{"level", 1}})})})},
            {"nested shards, index at start inside", zx::sharded({4, 8}, {zx::sharded({1, 4}, {zx::codec_spec("bytes", {{"endian", "little"}})}, false)})},
        };
        for (const auto& l : layouts)
        {
            CAPTURE(l.label);
            zxtest::temp_dir dir;
            zx::filesystem_store s(dir.path());
            // Ragged: 19x21 with 8x8 shards; part of it left unwritten (fill value 3).
            auto a = zx::create<std::uint16_t, 2>(
                s, "a", zx::v3_options{.shape = {19, 21}, .chunk_shape = {8, 8}, .codecs = {l.codec}, .fill_value = 3});
            const auto data = make_data<std::uint16_t, 2>({19, 15}, 11);
            a.write({{0, 0}, {19, 15}}, data);
            auto expect = xt::xtensor<std::uint16_t, 2>::from_shape({19, 21});
            expect.fill(3);
            xt::view(expect, xt::all(), xt::range(0, 15)) = data;
            const std::vector<unsigned char> fill{3, 0};
            CHECK(zxtest::spec::read_sharded_array(dir.path() / "a", 2, fill) == le_bytes(expect));
            CHECK(tensors_equal(zx::open<std::uint16_t, 2>(s, "a").read(), expect));
            CHECK(tensors_equal(a.read({{5, 6}, {10, 12}}), xt::view(expect, xt::range(5, 15), xt::range(6, 18))));
        }
    }

    TEST_CASE("inner chunks that land contiguously are decoded straight into the destination")
    {
        zx::memory_store s;
        // 1-D: every inner chunk is one block of the result; 2-D: inner chunks span whole rows.
        auto a = zx::create<std::uint8_t, 1>(s, "a", zx::v3_options{.shape = {1000}, .chunk_shape = {400},
                                                                     .codecs = {zx::sharded({50}, zx::default_v3_codecs())}});
        const auto d1 = make_data<std::uint8_t, 1>({1000});
        a.write({{0}, {1000}}, d1);
        CHECK(tensors_equal(a.read(), d1));
        CHECK(tensors_equal(a.read({{25}, {900}}), xt::view(d1, xt::range(25, 925))));
        auto b = zx::create<std::int16_t, 2>(s, "b", zx::v3_options{.shape = {12, 8}, .chunk_shape = {12, 8},
                                                                     .codecs = {zx::sharded({3, 8}, {zx::codec_spec("bytes", {{"endian", "big"}})})}});
        const auto d2 = make_data<std::int16_t, 2>({12, 8});
        b.write({{0, 0}, {12, 8}}, d2);
        CHECK(tensors_equal(b.read(), d2));
        // Bool data decoded in place is normalised too.
        auto c = zx::create<bool, 1>(s, "c", zx::v3_options{.shape = {8}, .chunk_shape = {8},
                                                             .codecs = {zx::sharded({4}, {zx::codec_spec("bytes")})}});
        c.write({{0}, {8}}, xt::xtensor<bool, 1>{true, false, true, true, false, false, true, false});
        auto shard = zx::get(s, "c/c/0");
        shard->data()[0] = std::byte{7}; // inner chunk 0 starts at offset 0, uncompressed
        s.set("c/c/0", shard->view());
        CHECK(c.read() == xt::xtensor<bool, 1>{true, false, true, true, false, false, true, false});
    }

    TEST_CASE("a read touching one inner chunk costs one index read and one payload read")
    {
        zx::memory_store s;
        auto a = make_sharded(s, "a");
        const auto shard_size = s.stat("a/c/0/0")->size;
        a.reset_stats();
        auto v = a.read({{1, 1}, {2, 2}});
        CHECK(tensors_equal(v, xt::view(make_data<std::uint16_t, 2>({16, 16}, 1), xt::range(1, 3), xt::range(1, 3))));
        const auto st = a.stats();
        CHECK(st.index_reads == 1);
        CHECK(st.index_bytes == 16 * 4 + 4);
        CHECK(st.payload_reads == 1);
        CHECK(st.payload_bytes < shard_size / 2); // only that inner chunk, never the whole shard
        CHECK(st.index_cache_hits == 0);

        SUBCASE("adjacent inner chunks of one shard are fetched with one coalesced request")
        {
            a.reset_stats();
            a.read({{0, 0}, {4, 8}}); // two inner chunks side by side
            CHECK(a.stats().index_reads == 1);
            CHECK(a.stats().payload_reads == 1);
        }
        SUBCASE("a read across four shards reads four indexes once each")
        {
            a.reset_stats();
            a.read({{6, 6}, {4, 4}});
            CHECK(a.stats().index_reads == 4);
            CHECK(a.stats().payload_reads == 4);
        }
    }

    TEST_CASE("a read of many scattered inner chunks opens the shard once")
    {
        // 64x64 uint16, one shard of 8x8 inner chunks (64 of them); no index cache.
        zxtest::temp_dir dir;
        zx::counting_store<zx::filesystem_store> s{zx::filesystem_store(dir.path())};
        auto a = zx::create<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(
            s, "a",
            zx::v3_options{.shape = {64, 64},
                           .chunk_shape = {64, 64},
                           .codecs = {zx::sharded({8, 8}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                           zx::codec_spec("zstd")})}});
        const auto data = make_data<std::uint16_t, 2>({64, 64}, 5);
        a.write({{0, 0}, {64, 64}}, data);
        s.reset();
        a.reset_stats();
        CHECK(tensors_equal(a.read(), data));
        CHECK(s.stats().opens == 1);
        CHECK(a.stats().index_reads == 1);
        // Scattered single elements, one per inner chunk on the anti-diagonal: one open per call.
        s.reset();
        for (std::uint64_t i = 0; i < 8; ++i)
        {
            const auto part = a.read({{i * 8 + 3, (7 - i) * 8 + 1}, {1, 1}});
            CHECK(part(0, 0) == data(i * 8 + 3, (7 - i) * 8 + 1));
        }
        CHECK(s.stats().opens == 8);
        // Four reads of a row of inner chunks each: one open per read.
        s.reset();
        a.reset_stats();
        xt::xtensor<std::uint16_t, 2> got = xt::zeros<std::uint16_t>({64, 64});
        for (std::uint64_t r = 0; r < 64; r += 16)
        {
            a.read_into({{r, 0}, {8, 64}}, xt::view(got, xt::range(r, r + 8), xt::all()));
        }
        CHECK(s.stats().opens == 4);
        s.reset();
        a.reset_stats();
        const auto band = a.read({{8, 0}, {40, 64}});
        CHECK(tensors_equal(band, xt::view(data, xt::range(8, 48), xt::all())));
        CHECK(s.stats().opens == 1);
        CHECK(a.stats().index_reads == 1);
        CHECK(s.stats().reads == 1 + a.stats().payload_reads); // all through the one handle
    }

    TEST_CASE("a shard read stages at most 1 MiB per request, or one larger inner chunk")
    {
        // Every request of a shard read is staged in a worker's buffer before its inner chunks
        // decode, so its size is the memory a read holds beside its result.
        constexpr std::uint64_t bound = std::uint64_t{1} << 20; // the bound docs/sharding.md gives
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        auto check = [&](const std::string& name, std::uint64_t n, std::uint64_t inner)
        {
            auto a = zx::create<std::uint8_t, 1, zx::dynamic_chain, zx::no_index_cache>(
                s, name,
                zx::v3_options{.shape = {n},
                               .chunk_shape = {n},
                               .codecs = {zx::sharded({inner}, {zx::codec_spec("bytes")})}});
            xt::xtensor<std::uint8_t, 1> data = xt::empty<std::uint8_t>({n});
            for (std::uint64_t i = 0; i < n; ++i)
            {
                data(i) = static_cast<std::uint8_t>(i * 7 + i / 251);
            }
            a.write({{0}, {n}}, data);
            a.reset_stats();
            CHECK(tensors_equal(a.read(), data));
            // The inner chunks lie back to back: as many per request as fit in the bound, at least one.
            const std::uint64_t per = std::max<std::uint64_t>(1, bound / inner);
            const std::uint64_t chunks = n / inner;
            CHECK(a.stats().payload_bytes == n);
            CHECK(a.stats().payload_reads == (chunks + per - 1) / per);
        };
        SUBCASE("small inner chunks: several requests, none above 1 MiB")
        {
            // 40 inner chunks of 100 kB: 4 MB, which one request could cover if it were not capped.
            check("small", 4'000'000, 100'000);
        }
        SUBCASE("inner chunks larger than 1 MiB: one request each")
        {
            check("large", 3 * (bound + 4096), bound + 4096);
        }
    }

    TEST_CASE("the batches of a shard read are announced to the store at once, before any is read")
    {
        // One 512x512 uint16 shard of 64x64 uncompressed inner chunks (8 KiB each). A band of one
        // inner-chunk column touches 8 inner chunks 64 KiB apart: 8 batches, too far apart to
        // coalesce. A store that keeps requests in flight (prefetching_handle) is told all 8 ranges
        // in one call, whichever kernel path reads them.
        zxtest::temp_dir dir;
        zx::counting_store<zx::filesystem_store> s{zx::filesystem_store(dir.path())};
        const zx::v3_options opts{
            .shape = {512, 512},
            .chunk_shape = {512, 512},
            .codecs = {zx::sharded({64, 64}, {zx::codec_spec("bytes", {{"endian", "little"}})})}};
        auto a = zx::create<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "a", opts);
        const auto data = make_data<std::uint16_t, 2>({512, 512}, 9);
        a.write({{0, 0}, {512, 512}}, data);
        const zx::region<2> band{{0, 64}, {512, 64}};
        const auto expect = xt::view(data, xt::all(), xt::range(64, 128));

        s.reset();
        a.reset_stats();
        CHECK(tensors_equal(a.read(band), expect)); // inline executor: one object, read in turn
        CHECK(a.stats().payload_reads == 8);
        CHECK(s.stats().announcements == 1);
        CHECK(s.stats().announced_ranges == 8);
        CHECK(s.stats().reads == 1 + 8); // every announced range is still read (the index, then 8)

        // Two workers: planned on one, the batches spread over both.
        using pooled =
            zx::array<std::uint16_t, 2, zx::dynamic_chain, zx::counting_store<zx::filesystem_store>,
                      zx::no_index_cache, recording_executor>;
        auto p = pooled::open(s, "a", recording_executor{});
        s.reset();
        CHECK(tensors_equal(p.read(band), expect));
        CHECK(s.stats().announcements == 1);
        CHECK(s.stats().announced_ranges == 8);

        // One inner chunk is one batch: nothing to announce.
        s.reset();
        CHECK(
            tensors_equal(a.read({{0, 64}, {64, 64}}), xt::view(data, xt::range(0, 64), xt::range(64, 128))));
        CHECK(s.stats().announcements == 0);
    }

    TEST_CASE(
        "one shard's inner chunks are spread over the workers, and a shard replaced mid-read is read again")
    {
        zx::memory_store s;
        using pooled = zx::array<std::uint16_t, 2, zx::dynamic_chain, zx::memory_store, zx::lru_index_cache<>,
                                 recording_executor>;
        // One 512x512 shard of 64x64 inner chunks (8 KiB each decoded, 512 KiB in all).
        const zx::v3_options opts{
            .shape = {512, 512},
            .chunk_shape = {512, 512},
            .codecs = {zx::sharded(
                {64, 64}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")})}};
        const recording_executor exec;
        auto a = pooled::create(s, "a", opts, exec);
        const auto first = make_data<std::uint16_t, 2>({512, 512}, 5);
        a.write({{0, 0}, {512, 512}}, first);
        exec.calls->clear();
        CHECK(tensors_equal(a.read(), first));
        // One shard: planned by one task, then its 64 inner chunks (all ranges of one shard) cut
        // into batches of 128 KiB of decoded data (16 inner chunks) for the two workers, then no
        // shard to read again.
        REQUIRE(exec.calls->size() == 3);
        CHECK((*exec.calls)[0] == 1);
        CHECK((*exec.calls)[1] == 4);
        CHECK((*exec.calls)[2] == 0); // no shard changed: no re-read tasks
        CHECK(tensors_equal(a.read({{5, 7}, {500, 333}}),
                            xt::view(first, xt::range(5, 505), xt::range(7, 340))));

        // The same on a real pool (ThreadSanitizer runs this suite): batches of one shard decoded
        // on three threads at once, into one destination.
        zx::thread_pool pool(2);
        using threaded = zx::array<std::uint16_t, 2, zx::dynamic_chain, zx::memory_store, zx::operation_index_cache<>,
                                   zx::thread_pool_executor>;
        const auto t = threaded::open(s, "a", zx::thread_pool_executor(pool));
        for (int k = 0; k < 3; ++k)
        {
            CHECK(tensors_equal(t.read(), first));
            CHECK(tensors_equal(t.read({{5, 7}, {500, 333}}), xt::view(first, xt::range(5, 505), xt::range(7, 340))));
        }

        // Replace the shard behind the array's cached index: the batches read the new shard, see
        // the generation differ from the cached index, and the shard is read again from the start.
        const auto second = make_data<std::uint16_t, 2>({512, 512}, 9);
        zx::open<std::uint16_t, 2>(s, "a").write({{0, 0}, {512, 512}}, second);
        a.reset_stats();
        CHECK(tensors_equal(a.read(), second));
        CHECK(a.stats().index_reads == 1);
        CHECK(a.stats().index_cache_hits >= 1);
    }

    TEST_CASE("an uncompressed chunk is read by the byte ranges of the region, not whole")
    {
        // One 16 x 8192 uint8 chunk stored raw: rows are 8 KiB apart, further than the coalescing
        // gap, so a narrow region costs one small request per row.
        zxtest::temp_dir dir;
        zx::counting_store<zx::filesystem_store> s{zx::filesystem_store(dir.path())};
        auto a = zx::create<std::uint8_t, 2>(s, "a",
                                             zx::v3_options{.shape = {16, 8192},
                                                            .chunk_shape = {16, 8192},
                                                            .codecs = {zx::codec_spec("bytes")}});
        const auto data = make_data<std::uint8_t, 2>({16, 8192}, 3);
        a.write({{0, 0}, {16, 8192}}, data);
        auto fresh = [&]
        {
            s.reset();
            a.reset_stats();
        };

        fresh();
        CHECK(tensors_equal(a.read({{0, 100}, {16, 1}}), xt::view(data, xt::all(), xt::range(100, 101))));
        CHECK(a.stats().payload_bytes == 16); // one byte per row
        CHECK(a.stats().payload_reads == 16);
        CHECK(s.stats().opens == 1);

        fresh();
        CHECK(
            tensors_equal(a.read({{2, 10}, {5, 100}}), xt::view(data, xt::range(2, 7), xt::range(10, 110))));
        CHECK(a.stats().payload_bytes == 500);

        fresh();
        CHECK(tensors_equal(a.read({{4, 0}, {3, 8192}}), xt::view(data, xt::range(4, 7), xt::all())));
        CHECK(a.stats().payload_bytes == 3 * 8192); // whole rows: one contiguous request
        CHECK(a.stats().payload_reads == 1);

        fresh();
        CHECK(tensors_equal(a.read(), data));
        CHECK(a.stats().payload_bytes == 16 * 8192);
        CHECK(s.stats().opens == 1);

        SUBCASE("big-endian elements are swapped in every partial read")
        {
            auto b = zx::create<std::uint16_t, 3>(
                s, "b",
                zx::v3_options{.shape = {9, 40, 70},
                               .chunk_shape = {4, 32, 64},
                               .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})}});
            const auto d = make_data<std::uint16_t, 3>({9, 40, 70}, 11);
            b.write({{0, 0, 0}, {9, 40, 70}}, d);
            const auto stored = zx::get(s, "b/c/0/0/0");
            REQUIRE(stored.has_value());
            REQUIRE(stored->size() == 4 * 32 * 64 * 2);
            CHECK(std::to_integer<unsigned>(stored->data()[1]) == (d(0, 0, 0) & 0xffu)); // big-endian on disk
            CHECK(tensors_equal(b.read(), d));
            CHECK(tensors_equal(b.read({{1, 3, 5}, {7, 30, 61}}),
                                xt::view(d, xt::range(1, 8), xt::range(3, 33), xt::range(5, 66))));
            CHECK(tensors_equal(b.read({{3, 31, 63}, {2, 2, 2}}),
                                xt::view(d, xt::range(3, 5), xt::range(31, 33), xt::range(63, 65))));
        }
        SUBCASE("a raw chunk of the wrong size is a typed error, or fill value under the fill policy")
        {
            const std::vector<std::byte> junk(100, std::byte{7});
            s.set("a/c/0/0", zx::byte_view(junk.data(), junk.size()));
            try
            {
                (void)a.read({{0, 100}, {16, 1}});
                FAIL("a truncated raw chunk was read");
            }
            catch (const zx::codec_error& e)
            {
                CHECK(std::string(e.what()).find("[zarrxt.codec.2]") != std::string::npos);
                CHECK(std::string(e.what()).find("a/c/0/0") != std::string::npos);
            }
            a = a.with_corruption_policy(zx::corruption_policy::fill);
            CHECK(xt::all(xt::equal(a.read({{0, 100}, {16, 1}}), 0)));
        }
    }

    TEST_CASE("one large uncompressed chunk is read by every worker, in batches of its rows")
    {
        zx::memory_store s;
        using pooled = zx::array<std::uint8_t, 1, zx::dynamic_chain, zx::memory_store, zx::no_index_cache,
                                 recording_executor>;
        const recording_executor exec;
        auto a = pooled::create(s, "a",
                                zx::v3_options{.shape = {1u << 20},
                                               .chunk_shape = {1u << 20},
                                               .codecs = {zx::codec_spec("bytes")}},
                                exec);
        const auto data = make_data<std::uint8_t, 1>({1u << 20}, 7);
        a.write({{0}, {1u << 20}}, data);
        exec.calls->clear();
        CHECK(tensors_equal(a.read(), data));
        // Planned by one task, then 1 MiB cut into 128 KiB batches (about four per worker), then
        // nothing to read again.
        REQUIRE(exec.calls->size() == 3);
        CHECK((*exec.calls)[0] == 1);
        CHECK((*exec.calls)[1] == 8);
        CHECK((*exec.calls)[2] == 0);

        zx::thread_pool pool(2);
        using threaded = zx::array<std::uint8_t, 1, zx::dynamic_chain, zx::memory_store, zx::no_index_cache,
                                   zx::thread_pool_executor>;
        const auto t = threaded::open(s, "a", zx::thread_pool_executor(pool));
        for (int k = 0; k < 3; ++k)
        {
            CHECK(tensors_equal(t.read(), data));
            CHECK(tensors_equal(t.read({{12345}, {700000}}), xt::view(data, xt::range(12345, 712345))));
        }
    }

    TEST_CASE("a read-only store backs an array; writing through it does not compile")
    {
        // Only read() and stat(): no set, erase, lock or list (an HTTP server, a read-only mount).
        struct read_only_store
        {
            zx::memory_store inner;
            std::optional<zx::read_result> read(std::string_view key, zx::byte_range r,
                                                std::uint64_t max) const
            {
                return inner.read(key, r, max);
            }
            std::optional<zx::object_info> stat(std::string_view key) const { return inner.stat(key); }
        };
        static_assert(zx::store_policy<read_only_store>);
        static_assert(!zx::array_writable_store<read_only_store>);
        static_assert(!zx::object_store<read_only_store>);
        using ro_array = zx::array<std::uint16_t, 2, zx::dynamic_chain, read_only_store>;
        static_assert(!can_write_raw<ro_array>);
        static_assert(can_write_raw<zx::array<std::uint16_t, 2>>);

        zx::memory_store m;
        make_sharded(m, "sharded");
        zx::create<std::uint16_t, 2>(m, "plain", zx::v2_options{.shape = {16, 16}, .chunks = {5, 5}})
            .write({{0, 0}, {16, 16}}, make_data<std::uint16_t, 2>({16, 16}, 1));
        const read_only_store ro{m};
        for (const char* path : {"sharded", "plain"})
        {
            CAPTURE(path);
            auto a = ro_array::open(ro, path);
            CHECK(tensors_equal(a.read(), make_data<std::uint16_t, 2>({16, 16}, 1)));
            CHECK(tensors_equal(a.read({{3, 2}, {9, 11}}), xt::view(make_data<std::uint16_t, 2>({16, 16}, 1),
                                                                    xt::range(3, 12), xt::range(2, 13))));
        }
    }

    TEST_CASE("index cache policies: none, per-operation FIFO, persistent LRU")
    {
        zx::memory_store s;
        make_sharded(s, "a");
        SUBCASE("lru: the second read of a shard makes no index read")
        {
            auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(s, "a");
            a.read({{0, 0}, {2, 2}});
            CHECK(a.stats().index_reads == 1);
            a.reset_stats();
            auto v = a.read({{4, 4}, {2, 2}});
            CHECK(a.stats().index_reads == 0);
            CHECK(a.stats().index_cache_hits == 1);
            CHECK(a.stats().payload_reads == 1);
            CHECK(v(0, 0) == zxtest::value_at<std::uint16_t>(4 * 16 + 4 + 1));
            CHECK(a.index_cache().cached_bytes() > 0);
        }
        SUBCASE("operation cache: each call reads each index once, calls do not share")
        {
            auto a = zx::open<std::uint16_t, 2>(s, "a");
            a.read({{0, 0}, {2, 2}});
            a.read({{4, 4}, {2, 2}});
            CHECK(a.stats().index_reads == 2);
            CHECK(a.stats().index_cache_hits == 0);
        }
        SUBCASE("no cache: one index read per shard touched per call")
        {
            auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "a");
            a.read({{0, 0}, {8, 8}});
            CHECK(a.stats().index_reads == 1);
            CHECK(a.stats().payload_reads == 1);
            CHECK(a.stats().peak_cached_index_bytes == 0);
        }
    }

    TEST_CASE("an index chain that transposes and swaps bytes reads alike with every index cache")
    {
        // The index decodes to a strided view (transpose) after an in-place byte swap (big-endian):
        // a reader that keeps no index copies that view, and must not decode the bytes twice.
        zx::memory_store s;
        const std::vector<zx::codec_spec> index_codecs{zx::codec_spec("transpose", {{"order", {2, 0, 1}}}),
                                                       zx::codec_spec("bytes", {{"endian", "big"}}),
                                                       zx::codec_spec("crc32c")};
        auto w = zx::create<std::uint16_t, 2>(
            s, "t",
            zx::v3_options{.shape = {8, 8},
                           .chunk_shape = {8, 8},
                           .codecs = {zx::sharded({2, 4}, zx::default_v3_codecs(), true, index_codecs)}});
        xt::xtensor<std::uint16_t, 2> data = xt::zeros<std::uint16_t>({8, 8});
        for (std::size_t i = 0; i < data.size(); ++i)
        {
            data.data()[i] = static_cast<std::uint16_t>(3 * i + 1);
        }
        data(6, 0) = 0; // one inner chunk of fill value: a missing entry in the index
        data(6, 1) = data(6, 2) = data(6, 3) = data(7, 0) = data(7, 1) = data(7, 2) = data(7, 3) = 0;
        w.write({{0, 0}, {8, 8}}, data);
        const zx::region<2> part{{1, 2}, {6, 5}};
        const auto expect = xt::eval(xt::view(data, xt::range(1, 7), xt::range(2, 7)));
        CHECK(zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "t").read(part) == expect);
        CHECK(zx::open<std::uint16_t, 2>(s, "t").read(part) == expect);
        CHECK(zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(s, "t").read(part) ==
              expect);
        CHECK(zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::no_index_cache>(s, "t").read() == data);
    }

    TEST_CASE("the LRU cache notices a shard replaced behind its back and our own writes")
    {
        zx::memory_store s;
        make_sharded(s, "a");
        auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(s, "a");
        CHECK(a.read({{0, 0}, {1, 1}})(0, 0) == zxtest::value_at<std::uint16_t>(1));
        // Another handle (another program, in effect) rewrites the shard with different offsets.
        auto other = zx::open<std::uint16_t, 2>(s, "a");
        other.write({{0, 0}, {8, 8}}, make_data<std::uint16_t, 2>({8, 8}, 500));
        const auto v = a.read({{0, 0}, {8, 8}});
        CHECK(tensors_equal(v, make_data<std::uint16_t, 2>({8, 8}, 500)));
        // Our own write invalidates the entry.
        a.write({{0, 0}, {1, 1}}, xt::xtensor<std::uint16_t, 2>{{42}});
        CHECK(a.read({{0, 0}, {1, 1}})(0, 0) == 42);
        // The shard disappearing is seen too.
        a.read({{0, 0}, {1, 1}});
        s.erase("a/c/0/0");
        CHECK(a.read({{0, 0}, {1, 1}})(0, 0) == 0);
    }

    TEST_CASE("cache capacity: entries and bytes are bounded, oversized indexes are not retained")
    {
        zx::operation_index_cache<1000, 2> fifo;
        auto idx = [](std::size_t n) {
            auto p = std::make_shared<zx::shard_index>();
            p->entries.resize(2 * n);
            return zx::shard_index_ptr(p);
        };
        fifo.insert("a", idx(4));
        fifo.insert("b", idx(4));
        fifo.insert("c", idx(4));
        CHECK(fifo.find("a") == nullptr); // first in, first out
        CHECK(fifo.find("c") != nullptr);
        fifo.insert("huge", idx(1000));
        CHECK(fifo.find("huge") == nullptr);
        CHECK(fifo.cached_bytes() <= 1000);

        zx::lru_index_cache<500> lru; // room for two of the three entries below
        lru.insert("a", idx(10));
        lru.insert("b", idx(10));
        lru.find("a"); // a is now the most recent
        lru.insert("c", idx(10));
        CHECK(lru.find("b") == nullptr);
        CHECK(lru.find("a") != nullptr);
        CHECK(lru.cached_bytes() <= 500);
        lru.invalidate("a");
        CHECK(lru.find("a") == nullptr);
    }

    TEST_CASE("partial shard writes copy untouched inner chunks as encoded bytes")
    {
        zx::memory_store s;
        auto a = make_sharded(s, "a");
        const auto before = zx::get(s, "a/c/0/0");
        REQUIRE(before.has_value());
        auto entries = [](const zx::buffer& shard) { // 4 inner chunks: 8 values before the 4-byte crc
            std::vector<std::uint64_t> e(8);
            for (std::size_t i = 0; i < 8; ++i)
            {
                e[i] = zx::detail::load_le64(shard.data() + shard.size() - 4 - 16 * 4 + 8 * i);
            }
            return e;
        };
        const auto old_e = entries(*before);
        a.write({{0, 0}, {1, 1}}, xt::xtensor<std::uint16_t, 2>{{9}}); // touches inner chunk 0 only
        const auto after = zx::get(s, "a/c/0/0");
        const auto new_e = entries(*after);
        for (std::size_t c = 1; c < 4; ++c) // inner chunks 1..3 are byte-identical
        {
            CAPTURE(c);
            REQUIRE(new_e[2 * c + 1] == old_e[2 * c + 1]);
            CHECK(std::memcmp(after->data() + new_e[2 * c], before->data() + old_e[2 * c], old_e[2 * c + 1]) == 0);
        }
        CHECK(a.read({{0, 0}, {1, 1}})(0, 0) == 9);
        CHECK(a.read({{0, 1}, {1, 1}})(0, 0) == zxtest::value_at<std::uint16_t>(2));
    }

    TEST_CASE(
        "a shard write streams to the store in bounded pieces and copies untouched inner chunks by range")
    {
        // One 1-d shard of 8 MiB: 128 raw inner chunks of 64 KiB. A write of one inner chunk in
        // the middle reads the old shard's index and copies the other 127 inner chunks in windows
        // of at most copy_window bytes; nothing is appended in a piece larger than that.
        using codec_t = zx::codec::sharding_indexed<zx::dynamic_chain, zx::dynamic_chain, zx::no_index_cache>;
        for (const bool at_end : {true, false})
        {
            CAPTURE(at_end);
            zxtest::temp_dir dir;
            stream_probe_store s(dir.path());
            const std::uint64_t n = std::uint64_t{8} << 20;
            auto a = zx::create<std::uint8_t, 1>(
                s, "a",
                zx::v3_options{.shape = {n},
                               .chunk_shape = {n},
                               .codecs = {zx::sharded({65536}, {zx::codec_spec("bytes")}, at_end)}});
            auto data = make_data<std::uint8_t, 1>({n}, 3);
            const std::size_t sets = s.rec().sets; // metadata documents
            a.write({{0}, {n}}, data);
            CHECK(s.rec().sets == sets); // the shard was streamed, not set
            CHECK(s.rec().streams == 1);
            CHECK(s.rec().largest_append <= 65536);
            const auto before = zxtest::spec::read_file_bytes(dir.path() / "a/c/0");

            a.reset_stats();
            auto patch = make_data<std::uint8_t, 1>({65536}, 77);
            a.write({{64 * 65536}, {65536}}, patch);
            xt::view(data, xt::range(64 * 65536, 65 * 65536)) = patch;
            CHECK(s.rec().sets == sets);
            CHECK(s.rec().streams == 2);
            CHECK(s.rec().largest_append <= codec_t::copy_window);
            const auto st = a.stats();
            CHECK(st.index_reads == 1);
            CHECK(st.payload_bytes == 127 * 65536); // the untouched inner chunks, nothing else
            CHECK(st.payload_reads >= (st.payload_bytes + codec_t::copy_window - 1) / codec_t::copy_window);
            const auto after = zxtest::spec::read_file_bytes(dir.path() / "a/c/0");
            REQUIRE(after.size() == before.size()); // raw inner chunks: same layout, same offsets
            const std::size_t base = at_end ? 0 : 128 * 16 + 4;
            CHECK(std::equal(after.begin() + base, after.begin() + base + 64 * 65536, before.begin() + base));
            CHECK(std::equal(after.begin() + base + 65 * 65536, after.end(),
                             before.begin() + base + 65 * 65536));
            CHECK(tensors_equal(a.read(), data));
            CHECK(zxtest::spec::read_sharded_array(dir.path() / "a", 1, {0}) ==
                  std::vector<unsigned char>(data.begin(), data.end()));
            CHECK_FALSE(has_temp_files(dir.path()));
        }
    }

    TEST_CASE(
        "one shard and two workers: its inner chunks are encoded in parallel windows and appended in order")
    {
        zx::memory_store s;
        using spread = zx::array<std::uint16_t, 2, zx::dynamic_chain, zx::memory_store,
                                 zx::operation_index_cache<>, recording_executor>;
        const recording_executor exec;
        // One 256x256 shard of 32x32 inner chunks: 64 of them, zstd.
        auto a = spread::create(s, "a",
                                zx::v3_options{.shape = {256, 256},
                                               .chunk_shape = {256, 256},
                                               .codecs = {zx::sharded({32, 32}, {zx::codec_spec("bytes"),
                                                                                 zx::codec_spec("zstd")})}},
                                exec);
        const auto data = make_data<std::uint16_t, 2>({256, 256}, 8);
        exec.calls->clear();
        a.write({{0, 0}, {256, 256}}, data);
        // Windows of 2 x workers = 4 inner chunks: 16 bulk calls of 4 jobs.
        CHECK(*exec.calls == std::vector<std::size_t>(16, 4));
        CHECK(tensors_equal(a.read(), data));
        // A partial rewrite touching 3 inner chunks (part of each): one window of 3.
        exec.calls->clear();
        a.write({{40, 8}, {8, 80}}, xt::zeros<std::uint16_t>({8, 80}));
        CHECK(*exec.calls == std::vector<std::size_t>{3});
        auto expect = data;
        xt::view(expect, xt::range(40, 48), xt::range(8, 88)) = xt::zeros<std::uint16_t>({8, 80});
        CHECK(tensors_equal(a.read(), expect));

        // The same with real threads (run under ThreadSanitizer in the sanitizer tier).
        zx::thread_pool pool(2);
        using threaded = zx::array<std::uint16_t, 2, zx::dynamic_chain, zx::memory_store,
                                   zx::operation_index_cache<>, zx::thread_pool_executor>;
        auto t = threaded::open(s, "a", zx::thread_pool_executor(pool));
        const auto again = make_data<std::uint16_t, 2>({256, 256}, 9);
        t.write({{0, 0}, {256, 256}}, again);
        CHECK(tensors_equal(t.read(), again));
        t.write({{100, 100}, {50, 50}}, xt::view(expect, xt::range(0, 50), xt::range(0, 50)));
        auto expect2 = again;
        xt::view(expect2, xt::range(100, 150), xt::range(100, 150)) =
            xt::view(expect, xt::range(0, 50), xt::range(0, 50));
        CHECK(tensors_equal(t.read(), expect2));
    }

    TEST_CASE("a shard write that fails midway leaves the old shard as it was and no temporary file")
    {
        zxtest::temp_dir dir;
        zx::filesystem_store s(dir.path());
        auto a = make_sharded(s, "a"); // gzip + crc32c inner chunks
        const auto key = dir.path() / "a/c/0/0";
        auto bytes = zxtest::spec::read_file_bytes(key);
        // Flip a byte in the middle of inner chunk 0 (index at the end: 4 entries, then a crc32c).
        const std::size_t at = bytes.size() - 4 - 64;
        const auto off0 = zxtest::spec::le64(bytes.data() + at);
        const auto n0 = zxtest::spec::le64(bytes.data() + at + 8);
        REQUIRE(n0 > 8);
        bytes[off0 + n0 / 2] ^= 0x5a; // its checksum fails
        {
            std::ofstream f(key, std::ios::binary | std::ios::trunc);
            f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        }
        // Writing part of inner chunk 0 must decode it: the write fails, after inner chunks were
        // streamed or not, and publishes nothing.
        CHECK_THROWS_AS(a.write({{0, 0}, {1, 1}}, xt::xtensor<std::uint16_t, 2>{{9}}), zx::error);
        CHECK(zxtest::spec::read_file_bytes(key) == bytes);
        CHECK_FALSE(has_temp_files(dir.path()));
        // Rewriting the whole inner chunk needs no old contents and succeeds.
        a.write({{0, 0}, {4, 4}}, make_data<std::uint16_t, 2>({4, 4}, 5));
        CHECK(tensors_equal(a.read({{0, 0}, {4, 4}}), make_data<std::uint16_t, 2>({4, 4}, 5)));
    }

    TEST_CASE("empty inner chunks are not stored and a shard of fill value is erased")
    {
        zx::memory_store s;
        auto a = make_sharded(s, "a");
        a.write({{0, 0}, {4, 4}}, xt::zeros<std::uint16_t>({4, 4}));
        const auto shard = zx::get(s, "a/c/0/0");
        CHECK(zx::detail::load_le64(shard->data() + shard->size() - 4 - 64) == zx::shard_index::missing);
        CHECK(a.read({{0, 0}, {4, 4}}) == xt::zeros<std::uint16_t>({4, 4}));
        a.reset_stats();
        a.write({{0, 0}, {8, 8}}, xt::zeros<std::uint16_t>({8, 8}));
        CHECK_FALSE(s.stat("a/c/0/0").has_value());
        CHECK(a.stats().erases == 1);
        a.write({{8, 8}, {4, 8}}, xt::zeros<std::uint16_t>({4, 8}));
        CHECK(s.stat("a/c/1/1").has_value()); // half the shard still holds data
    }

    TEST_CASE("whole-shard writes do not read the old shard")
    {
        zx::memory_store s;
        auto a = make_sharded(s, "a");
        a.reset_stats();
        a.write({{0, 0}, {8, 16}}, make_data<std::uint16_t, 2>({8, 16}, 99));
        CHECK(a.stats().payload_reads == 0);
        CHECK(a.stats().index_reads == 0);
        CHECK(a.stats().writes == 2);
    }

    TEST_CASE("a static sharding chain decodes exactly like the dynamic one")
    {
        zx::memory_store s;
        make_sharded(s, "a");
        using inner = zx::chain<zx::codec::bytes<>, zx::codec::gzip, zx::codec::crc32c>;
        using index = zx::chain<zx::codec::bytes<>, zx::codec::crc32c>;
        using sharded = zx::codec::sharding_indexed<inner, index, zx::lru_index_cache<>>;
        auto st = zx::open<std::uint16_t, 2, sharded, zx::lru_index_cache<>>(s, "a");
        auto dyn = zx::open<std::uint16_t, 2>(s, "a");
        CHECK(tensors_equal(st.read(), dyn.read()));
        // The codec uses the array's LRU cache (its own IndexCache type): a second read of one
        // inner chunk is served from it.
        st.reset_stats();
        (void)st.read({{0, 0}, {2, 2}});
        (void)st.read({{0, 0}, {2, 2}});
        CHECK(st.stats().index_cache_hits >= 1);
        CHECK(st.index_cache().cached_bytes() > 0);
        st.write({{3, 3}, {2, 2}}, xt::xtensor<std::uint16_t, 2>{{1, 2}, {3, 4}});
        CHECK(dyn.read({{3, 3}, {2, 2}}) == xt::xtensor<std::uint16_t, 2>{{1, 2}, {3, 4}});
        // A metadata chain that differs is refused, naming the difference.
        zx::memory_store s2;
        make_sharded(s2, "b", zx::sharded({4, 4}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")}));
        CHECK_THROWS_WITH_AS((zx::open<std::uint16_t, 2, sharded, zx::lru_index_cache<>>(s2, "b")),
                             doctest::Contains("codec #1 is \"zstd\", the chain type expects \"gzip\""),
                             zx::chain_mismatch);
    }

    TEST_CASE("many threads writing overlapping regions of one shard lose no update")
    {
        zxtest::slow_store<zx::memory_store> s{zx::memory_store{}, std::chrono::microseconds(200)};
        auto a = zx::create<std::int32_t, 2>(s, "a", zx::v3_options{.shape = {32, 32}, .chunk_shape = {32, 32}, .codecs = {inner_gzip_crc()}});
        constexpr int threads = 8;
        std::atomic<int> ready{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
        {
            ts.emplace_back([&, t] {
                ++ready;
                while (ready < threads)
                {
                }
                // Thread t owns rows t, t+8, ...; each write is 2 rows, its own and the next one
                // (the row before for the last row), so regions overlap another thread's rows too.
                // Every row is written with the value it must end with (row + 1), so the final
                // state does not depend on the order of the writes, only on none being lost.
                for (std::uint64_t r = static_cast<std::uint64_t>(t); r < 32; r += threads)
                {
                    const std::uint64_t first = r + 1 < 32 ? r : r - 1;
                    auto rows = xt::xtensor<std::int32_t, 2>::from_shape({2, 32});
                    xt::view(rows, 0, xt::all()) = static_cast<std::int32_t>(first + 1);
                    xt::view(rows, 1, xt::all()) = static_cast<std::int32_t>(first + 2);
                    a.write({{first, 0}, {2, 32}}, rows);
                }
            });
        }
        for (auto& t : ts)
        {
            t.join();
        }
        const auto r = a.read();
        int lost = 0;
        for (std::size_t i = 0; i < 32; ++i)
        {
            for (std::size_t j = 0; j < 32; ++j)
            {
                lost += r(i, j) != static_cast<std::int32_t>(i + 1) ? 1 : 0;
            }
        }
        CHECK(lost == 0);
    }

    TEST_CASE("sharding configuration is validated at open")
    {
        zx::memory_store s;
        auto bad = [&](zx::codec_spec c) {
            return zx::create<std::uint16_t, 2>(s, "x", zx::v3_options{.shape = {8, 8}, .chunk_shape = {8, 8}, .codecs = {c}, .overwrite = true});
        };
        CHECK_THROWS_WITH_AS(bad(zx::sharded({3, 4})),
                             doctest::Contains("inner chunk shape [3,4] does not divide the shard shape on axis 0"),
                             zx::metadata_error);
        CHECK_THROWS_WITH_AS(bad(zx::sharded({4, 4}, zx::default_v3_codecs(), true,
                                             {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("gzip")})),
                             doctest::Contains("\"index_codecs\" must produce a fixed size"), zx::metadata_error);
        CHECK_THROWS_AS(bad(zx::codec_spec("sharding_indexed", {{"chunk_shape", {4, 4}}})), zx::metadata_error);
    }
}
