// Executors: the caller-owned thread pool runs every item exactly once, propagates the first
// exception, runs nested and concurrent bulk calls inline instead of deadlocking, keeps working in
// a forked child, and gives the same array results as the inline executor.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

#include <atomic>
#include <set>
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
}
