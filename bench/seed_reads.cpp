// W1 region reads (BENCHMARKS.md): one trial per process, printed as one JSON object.
//
//   seed_reads --data DIR --array NAME --extent E [--cache op|lru|none] [--threads P]
//
// The process opens DIR/NAME with zarrxt, times `read()` of the E x E region at [7, 11] (the
// read call only), takes its peak RSS, checks every value against the formula and hashes the
// region (SHA-256, compared with the peers by the harness). Then, in the same process, it
// measures the floor of the same read (floor.hpp) and the cost of faulting in a fresh output.
// Arrays: v2_gzip, v3_raw, v3_gzip, v3_sharded (4096 x 4096 uint16) and index_stress
// (1024 x 1024, one shard of 8 x 8 inner chunks); see bench/README.md for how they are written.
#include "floor.hpp"
#include "plans.hpp"

#include <zarrxt/zarrxt.hpp>

#include <algorithm>
#include <iostream>
#include <vector>

namespace zx = zarrxt;

namespace
{

zxb::json stats_json(const zx::io_stats& s)
{
    return {{"index_reads", s.index_reads},           {"index_bytes", s.index_bytes},
            {"payload_reads", s.payload_reads},       {"payload_bytes", s.payload_bytes},
            {"index_cache_hits", s.index_cache_hits}, {"peak_cached_index_bytes", s.peak_cached_index_bytes}};
}

template <class Cache, class Executor>
zxb::json read_ours(const std::string& dir, const zxb::w1_layout& l, const zx::region<2>& r, Executor exec,
                    bool prime)
{
    zxb::json j;
    zx::filesystem_store store{dir};
    auto a = zx::open<std::uint16_t, 2, zx::dynamic_chain, Cache>(store, l.name, exec);
    if (prime)
    {
        // A long-lived reader: an earlier read elsewhere in the shard left its index in the cache.
        (void)a.read({{l.shape - 8, l.shape - 8}, {8, 8}});
    }
    a.reset_stats();
    const zxb::io_counts io0 = zxb::proc_io();
    const std::uint64_t t0 = zxb::now_ns();
    auto out = a.read(r);
    const std::uint64_t t1 = zxb::now_ns();
    const zxb::io_counts io1 = zxb::proc_io();
    j["read_ns"] = t1 - t0;
    j["rss_peak"] = zxb::peak_rss_bytes();
    j["stats"] = stats_json(a.stats());
    j["syscr"] = io1.syscr - io0.syscr;
    j["rchar"] = io1.rchar - io0.rchar;

    const std::int64_t bad =
        zxb::w1_first_mismatch(out.data(), r.offset[0], r.offset[1], r.extent[0], r.extent[1]);
    if (bad >= 0)
    {
        const auto row = r.offset[0] + static_cast<std::uint64_t>(bad) / r.extent[1];
        const auto col = r.offset[1] + static_cast<std::uint64_t>(bad) % r.extent[1];
        zxb::fail("zarrxt read a wrong value at [" + std::to_string(row) + ", " + std::to_string(col) +
                  "]: " + std::to_string(out.data()[bad]) + ", expected " +
                  std::to_string(zxb::w1_value(row, col)));
    }
    j["verified"] = true;
    // The floor's condition (E): the same read again into the now faulted destination, with the
    // process's buffers warm as the floor's are (the floor allocates and faults them untimed).
    std::vector<std::uint64_t> warm;
    for (int i = 0; i < 3; ++i)
    {
        const std::uint64_t w0 = zxb::now_ns();
        a.read_into(r, out);
        warm.push_back(zxb::now_ns() - w0);
    }
    std::sort(warm.begin(), warm.end());
    j["read_into_ns"] = warm[1];
    j["sha256"] = zxb::sha256_hex(out.data(), out.size() * sizeof(std::uint16_t));
    return j;
}

template <class Cache>
zxb::json read_with(const std::string& dir, const zxb::w1_layout& l, const zx::region<2>& r, unsigned threads,
                    bool prime)
{
    if (threads <= 1)
    {
        return read_ours<Cache>(dir, l, r, zx::inline_executor{}, prime);
    }
    zx::thread_pool pool(threads - 1); // the calling thread is the other worker
    return read_ours<Cache>(dir, l, r, zx::thread_pool_executor(pool), prime);
}

} // namespace

int main(int argc, char** argv)
{
    const zxb::args args(argc, argv);
    const std::string dir = args.str("data");
    const zxb::w1_layout& l = zxb::w1_layout_of(args.str("array"));
    const std::uint64_t e = args.num("extent");
    const std::string cache = args.str("cache", "op");
    const auto threads = static_cast<unsigned>(args.num("threads", 1));
    const zx::region<2> r{{7, 11}, {e, e}};
    if (7 + e > l.shape || 11 + e > l.shape)
    {
        zxb::fail("the region does not fit the array");
    }

    zxb::json j;
    j["rss_start"] = zxb::peak_rss_bytes();
    zxb::json ours;
    try
    {
        if (cache == "op")
        {
            ours = read_with<zx::operation_index_cache<>>(dir, l, r, threads, false);
        }
        else if (cache == "lru")
        {
            ours = read_with<zx::lru_index_cache<>>(dir, l, r, threads, true);
        }
        else if (cache == "none")
        {
            ours = read_with<zx::no_index_cache>(dir, l, r, threads, false);
        }
        else
        {
            zxb::fail("unknown --cache " + cache);
        }
    }
    catch (const std::exception& ex)
    {
        zxb::fail(std::string("zarrxt failed: ") + ex.what());
    }
    j.update(ours);
    j["output_bytes"] = e * e * 2;

    // The floor, after our figures are taken (it allocates its own pre-faulted buffers).
    zxb::read_plan plan = zxb::w1_plan(l, dir, 7, 11, e);
    plan.index_cached = cache == "lru";
    zxb::read_floor floor(std::move(plan));
    const zxb::io_counts io0 = zxb::proc_io();
    j["floor_ns"] = floor.run();
    const zxb::io_counts io1 = zxb::proc_io();
    zxb::phases ph;
    floor.run(&ph);
    j["floor_phases"] = {{"io_ns", ph.io_ns}, {"decode_ns", ph.decode_ns}, {"copy_ns", ph.copy_ns}};
    j["floor_syscr"] = io1.syscr - io0.syscr;
    j["floor_objects"] = floor.plan().objects.size();

    // What returning a new array costs by itself: first touch of output_bytes of fresh memory
    // (mmap'ed here, so no recycled heap pages can hide the page faults).
    j["fault_ns"] = zxb::fault_in_ns(e * e * 2);
    std::cout << j.dump() << "\n";
    return 0;
}
