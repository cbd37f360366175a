// Executors: the caller-owned thread pool runs every item exactly once, propagates the first
// exception, runs nested and concurrent bulk calls inline instead of deadlocking, keeps working in
// a forked child, and gives the same array results as the inline executor.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

#include <zarrxt/detail/fresh_memory.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>

namespace zx = zarrxt;

TEST_SUITE("executor")
{
    TEST_CASE("thread_pool runs every item once with worker ids in range")
    {
        zx::thread_pool pool(3);
        CHECK(pool.concurrency() == 4);
        std::vector<std::atomic<int>> hits(1000);
        std::atomic<std::size_t> max_worker{0};
        std::mutex m;
        std::set<std::thread::id> threads;
        pool.bulk(hits.size(), [&](std::size_t i, std::size_t worker) {
            hits[i].fetch_add(1);
            std::size_t cur = max_worker.load();
            while (worker > cur && !max_worker.compare_exchange_weak(cur, worker))
            {
            }
            std::lock_guard<std::mutex> g(m);
            threads.insert(std::this_thread::get_id());
        });
        for (auto& h : hits)
        {
            REQUIRE(h.load() == 1);
        }
        CHECK(max_worker.load() < pool.concurrency());
        CHECK(threads.size() >= 1);
    }

    TEST_CASE("the first exception is rethrown and the pool stays usable")
    {
        zx::thread_pool pool(2);
        CHECK_THROWS_WITH(pool.bulk(100, [](std::size_t i, std::size_t) {
            if (i == 37)
            {
                throw std::runtime_error("item 37");
            }
        }),
                          "item 37");
        std::atomic<int> n{0};
        pool.bulk(10, [&](std::size_t, std::size_t) { ++n; });
        CHECK(n == 10);
    }

    TEST_CASE("a bulk call from inside a task runs inline instead of deadlocking")
    {
        zx::thread_pool pool(2);
        std::atomic<int> inner{0};
        pool.bulk(4, [&](std::size_t, std::size_t) { pool.bulk(5, [&](std::size_t, std::size_t w) { inner += w == 0 ? 1 : 100; }); });
        CHECK(inner == 20);
    }

    TEST_CASE("a forked child can still use an array on a pool executor")
    {
        if (zxtest::env("ZARRXT_SANITIZE") == "1")
        {
            ZX_SKIP("fork with live threads under the sanitizers");
        }
        zx::thread_pool pool(2);
        zx::memory_store s;
        using pooled = zx::array<std::int32_t, 2, zx::dynamic_chain, zx::memory_store, zx::operation_index_cache<>,
                                 zx::thread_pool_executor>;
        auto a = pooled::create(s, "a", zx::v3_options{.shape = {64, 64}, .chunk_shape = {8, 8}}, zx::thread_pool_executor(pool));
        a.write({{0, 0}, {64, 64}}, zxtest::make_data<std::int32_t, 2>({64, 64}));
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
        {
            // The child has none of the pool's threads: bulk work must run inline, not wait for them.
            const auto r = a.read();
            a.write({{0, 0}, {8, 8}}, xt::zeros<std::int32_t>({8, 8}));
            ::_exit(zxtest::tensors_equal(r, zxtest::make_data<std::int32_t, 2>({64, 64})) ? 0 : 1);
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }

    TEST_CASE("reads and writes on a pool give the same results as inline, for plain and sharded arrays")
    {
        zx::thread_pool pool(3);
        for (auto codecs : {std::vector<zx::codec_spec>{zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("gzip", {{"level", 1}})},
                            std::vector<zx::codec_spec>{zx::sharded({4, 4})}})
        {
            zx::memory_store s;
            using pooled = zx::array<double, 2, zx::dynamic_chain, zx::memory_store, zx::lru_index_cache<>, zx::thread_pool_executor>;
            auto p = pooled::create(s, "a", zx::v3_options{.shape = {50, 70}, .chunk_shape = {8, 8}, .codecs = codecs},
                                    zx::thread_pool_executor(pool));
            const auto data = zxtest::make_data<double, 2>({50, 70});
            p.write({{0, 0}, {50, 70}}, data);
            p.write({{3, 5}, {20, 30}}, xt::xtensor<double, 2>(xt::view(data, xt::range(0, 20), xt::range(0, 30)) * 2.0));
            auto serial = zx::open<double, 2, zx::dynamic_chain, zx::no_index_cache>(s, "a");
            auto expect = data;
            xt::view(expect, xt::range(3, 23), xt::range(5, 35)) = xt::view(data, xt::range(0, 20), xt::range(0, 30)) * 2.0;
            CHECK(zxtest::tensors_equal(serial.read(), expect));
            CHECK(zxtest::tensors_equal(p.read({{1, 2}, {40, 60}}), xt::view(expect, xt::range(1, 41), xt::range(2, 62))));
        }
    }

    TEST_CASE("variable-length strings on a pool: every worker keeps its chunks' values in the one arena")
    {
        zx::thread_pool pool(3);
        for (auto codecs : {std::vector<zx::codec_spec>{zx::codec_spec("bytes"), zx::codec_spec("zstd", {{"level", 1}})},
                            std::vector<zx::codec_spec>{zx::sharded({4, 4})}})
        {
            zx::memory_store s;
            using pooled = zx::array<std::string, 2, zx::dynamic_chain, zx::memory_store, zx::operation_index_cache<>,
                                     zx::thread_pool_executor>;
            auto p = pooled::create(s, "a",
                                    zx::v3_options{.shape = {40, 30},
                                                   .chunk_shape = {8, 8},
                                                   .codecs = codecs,
                                                   .fill_value = "-",
                                                   .string = zx::variable_length_string()},
                                    zx::thread_pool_executor(pool));
            xt::xtensor<std::string, 2> data = xt::xtensor<std::string, 2>::from_shape({40, 30});
            for (std::size_t i = 0; i < 40; ++i)
            {
                for (std::size_t j = 0; j < 30; ++j)
                {
                    data(i, j) = std::string((i * 7 + j) % 13, static_cast<char>('a' + (i + j) % 26));
                }
            }
            p.write({{0, 0}, {40, 30}}, data);
            p.write({{3, 5}, {2, 3}}, xt::xtensor<std::string, 2>{{"x", "yy", "-"}, {"", "\u00e9", "zzz"}});
            data(3, 5) = "x";
            data(3, 6) = "yy";
            data(3, 7) = "-";
            data(4, 5) = "";
            data(4, 6) = "\u00e9";
            data(4, 7) = "zzz";
            CHECK(p.read() == data);
            CHECK(zx::open<std::string, 2>(s, "a").read({{1, 2}, {30, 20}}) ==
                  xt::xtensor<std::string, 2>(xt::view(data, xt::range(1, 31), xt::range(2, 22))));
        }
    }

    TEST_CASE("huge pages are kept while they pay and given up after a run of slow steps")
    {
        // Budget 1 ms a step, at most 8 ms saved up (the defaults).
        zx::detail::huge_page_governor fast;
        for (int i = 0; i < 100; ++i)
        {
            REQUIRE(fast.keep(300'000));
        }
        CHECK(fast.keep(5'000'000)); // one spike among fast steps is paid from what they saved
        CHECK(fast.keep(300'000));
        zx::detail::huge_page_governor saved;
        for (int i = 0; i < 100; ++i)
        {
            REQUIRE(saved.keep(0));
        }
        CHECK_FALSE(saved.keep(10'000'000)); // savings are capped: 8 ms + this step's 1 ms < 10 ms
        zx::detail::huge_page_governor cold;
        CHECK_FALSE(cold.keep(2'000'000)); // a slow first step: nothing saved to pay for it
        zx::detail::huge_page_governor even;
        for (int i = 0; i < 10; ++i)
        {
            REQUIRE(even.keep(1'000'000)); // exactly the budget is still worth it
        }
        zx::detail::huge_page_governor slow;
        CHECK(slow.keep(500'000));
        CHECK(slow.keep(1'200'000));
        CHECK_FALSE(slow.keep(1'400'000)); // 3 ms allowed, 3.1 ms spent
    }

    TEST_CASE("a large fresh result is mapped before the read, by every worker, and stays zero")
    {
        constexpr std::size_t huge = std::size_t{2} << 20;
        constexpr std::size_t page = 4096;
        const std::size_t n = 9 * huge + 3 * page; // over the threshold, neither end 2 MiB aligned
        auto resident = [](std::byte* b, std::size_t bytes)
        {
            std::vector<unsigned char> v(bytes / page);
            REQUIRE(::mincore(b, bytes, v.data()) == 0);
            return static_cast<std::size_t>(
                std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) != 0; }));
        };
        zx::thread_pool pool(1);
        for (int way = 0; way < 2; ++way)
        {
            CAPTURE(way);
            void* m =
                ::mmap(nullptr, n + 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            REQUIRE(m != MAP_FAILED);
            auto* base = static_cast<std::byte*>(m);
            std::byte* p = base + page; // a malloc'd block starts past a header, as here
            const auto a = reinterpret_cast<std::uintptr_t>(p);
            auto* first = reinterpret_cast<std::byte*>((a + huge - 1) / huge * huge);
            auto* last = reinterpret_cast<std::byte*>((a + n) / huge * huge);
            const std::size_t interior = static_cast<std::size_t>(last - first);
            REQUIRE(interior >= 8 * huge);
            CHECK(resident(first, interior) == 0); // nothing mapped before
            const zx::detail::fresh_report r =
                way == 0 ? zx::detail::prepare_fresh(p, n, zx::inline_executor{})
                         : zx::detail::prepare_fresh(p, n, zx::thread_pool_executor(pool));
            if (r.advice_only)
            {
                MESSAGE(
                    "this kernel cannot populate (before Linux 5.14): only the huge-page advice was given");
            }
            else
            {
                CHECK(r.huge_bytes + r.small_bytes == interior);
                CHECK(resident(first, interior) == interior / page);
            }
            CHECK(std::all_of(p, p + n, [](std::byte b) { return b == std::byte{0}; }));
            std::memset(p, 7, n); // and it is writable
            CHECK(std::to_integer<int>(p[n - 1]) == 7);
            ::munmap(m, n + 2 * huge);
        }
        // Below the threshold nothing is mapped: a small result is left to its first writes.
        void* m = ::mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(m != MAP_FAILED);
        const zx::detail::fresh_report small =
            zx::detail::prepare_fresh(m, zx::detail::huge_page_threshold - page, zx::inline_executor{});
        CHECK(small.huge_bytes + small.small_bytes == 0);
        CHECK(resident(static_cast<std::byte*>(m), 2 * huge) == 0);
        ::munmap(m, 2 * huge);
    }
}
