// W2 large 1-d arrays (BENCHMARKS.md): one trial per process, printed as one JSON object.
//
//   w2 --op read  --dir DIR --name NAME --data KIND --n N --chunk C --shard S --codec CODEC [--threads P]
//         [--fresh WAY]
//   w2 --op write --dir SCRATCH --data KIND --n N --chunk C --shard S --codec CODEC [--threads P] [--keep]
//   w2 --op bandwidth [--threads P]
//
// KIND is repeated or semi_random, CODEC zstd (level 0, no checksum) or none, S the shard size in
// elements (0: no sharding). NAME may be a Zarr v3 or v2 array (v2: no sharding; its chunk keys are
// 0, 1, ... beside its .zarray). A read times `read()` of the whole array and checks every value; a
// write times `write_raw()` of the whole array into a new array under SCRATCH (created before the
// timing, after a sync), then reads it back and compares every byte. Each is followed, in the same process,
// by its floor (floor.hpp). `bandwidth` measures memcpy throughput with 1 and P threads, which bounds the
// P-thread floor.
//
// --fresh chooses how the timed read gets its fresh 100 MB result, to compare ways of preparing it
// in the same run (bench/fresh_ab.py): `read` (default) is read() itself; the others allocate the
// result as read() does and read_into it: `advice` gives it only the huge-page advice (what read()
// did before detail/fresh_memory.hpp), `plain` nothing, `populate` maps it with 4 KiB pages first.
#include "executors.hpp"
#include "floor.hpp"
#include "plans.hpp"

#include <zarrxt/zarrxt.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <iostream>

namespace zx = zarrxt;

namespace
{

struct w2_case
{
    std::string fresh = "read";
    std::string kind;
    bool semi_random = false;
    std::uint64_t n = 0;
    std::uint64_t chunk = 0;
    std::uint64_t shard = 0;
    zxb::codec_kind codec = zxb::codec_kind::none;
    unsigned threads = 1;
};

zxb::json stats_json(const zx::io_stats& s)
{
    return {{"index_reads", s.index_reads},
            {"index_bytes", s.index_bytes},
            {"payload_reads", s.payload_reads},
            {"payload_bytes", s.payload_bytes},
            {"writes", s.writes},
            {"write_bytes", s.write_bytes}};
}

std::uint64_t stored_bytes(const std::filesystem::path& dir)
{
    std::uint64_t total = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    {
        if (e.is_regular_file() && e.path().filename() != "zarr.json")
        {
            total += e.file_size();
        }
    }
    return total;
}

/// The whole array into a fresh result prepared the way --fresh says (not read()'s own way).
template <class A>
xt::xtensor<std::uint8_t, 1> read_fresh(const A& a, const w2_case& c)
{
    auto out = xt::xtensor<std::uint8_t, 1>::from_shape({static_cast<std::size_t>(c.n)});
    if (c.fresh == "advice")
    {
        zx::detail::advise_huge_pages(out.data(), out.size());
    }
    else if (c.fresh == "populate")
    {
        const auto b = (reinterpret_cast<std::uintptr_t>(out.data()) + 4095) / 4096 * 4096;
        const auto e = (reinterpret_cast<std::uintptr_t>(out.data()) + out.size()) / 4096 * 4096;
        if (b < e && ::madvise(reinterpret_cast<void*>(b), e - b, MADV_POPULATE_WRITE) != 0)
        {
            zxb::fail("madvise(MADV_POPULATE_WRITE) failed");
        }
    }
    else if (c.fresh != "plain")
    {
        zxb::fail("--fresh must be read, advice, plain or populate");
    }
    a.read_into(zx::region<1>{{0}, {c.n}}, out);
    return out;
}

template <class Executor>
zxb::json read_ours(const w2_case& c, const std::string& dir, const std::string& name, Executor exec)
{
    zxb::json j;
    zx::filesystem_store store{dir};
    auto a = zx::open<std::uint8_t, 1>(store, name, exec);
    if (a.shape()[0] != c.n)
    {
        zxb::fail("the array has " + std::to_string(a.shape()[0]) + " elements, expected " +
                  std::to_string(c.n));
    }
    const zxb::io_counts io0 = zxb::proc_io();
    const std::uint64_t t0 = zxb::now_ns();
    auto out = c.fresh == "read" ? a.read() : read_fresh(a, c);
    const std::uint64_t t1 = zxb::now_ns();
    const zxb::io_counts io1 = zxb::proc_io();
    j["ns"] = t1 - t0;
    j["rss_peak"] = zxb::peak_rss_bytes();
    j["stats"] = stats_json(a.stats());
    j["syscr"] = io1.syscr - io0.syscr;
    const std::int64_t bad = zxb::w2_first_mismatch(c.semi_random, 0, out.data(), out.size());
    if (bad >= 0)
    {
        zxb::fail("zarrxt read a wrong value at " + std::to_string(bad) + ": " +
                  std::to_string(out.data()[bad]));
    }
    j["verified"] = true;
    // The floor's condition (E): the same read again into the now faulted array, buffers warm
    // (median of three: the first repeat still meets some cold state, as a long-lived reader does not).
    std::vector<std::uint64_t> warm;
    for (int i = 0; i < 3; ++i)
    {
        const std::uint64_t w0 = zxb::now_ns();
        a.read_into(zx::region<1>{{0}, {c.n}}, out);
        warm.push_back(zxb::now_ns() - w0);
    }
    std::sort(warm.begin(), warm.end());
    j["into_ns"] = warm[1];
    j["sha256"] = zxb::sha256_hex(out.data(), out.size());
    return j;
}

std::vector<zx::codec_spec> inner_codecs(const w2_case& c)
{
    std::vector<zx::codec_spec> v{zx::codec_spec("bytes")};
    if (c.codec == zxb::codec_kind::zstd)
    {
        v.push_back(zx::codec_spec("zstd", {{"level", 0}, {"checksum", false}}));
    }
    return v;
}

template <class Executor>
zxb::json write_ours(const w2_case& c, const std::string& scratch, const std::uint8_t* src, Executor exec)
{
    zxb::json j;
    zx::filesystem_store store{scratch};
    zx::v3_options o;
    o.shape = {c.n};
    if (c.shard != 0)
    {
        o.chunk_shape = {c.shard};
        o.codecs = {zx::sharded({c.chunk}, inner_codecs(c))};
    }
    else
    {
        o.chunk_shape = {c.chunk};
        o.codecs = inner_codecs(c);
    }
    auto a = zx::create<std::uint8_t, 1>(store, "ours", o, exec);
    a.reset_stats();
    // Start from clean page cache state: no dirty pages of an earlier write being flushed meanwhile.
    ::sync();
    const std::uint64_t rss0 = zxb::current_rss_bytes();
    const std::uint64_t t0 = zxb::now_ns();
    a.write_raw(zx::region<1>{{0}, {c.n}}, src);
    const std::uint64_t t1 = zxb::now_ns();
    j["ns"] = t1 - t0;
    j["rss_peak"] = zxb::peak_rss_bytes();
    j["rss_before_write"] = rss0;
    j["stats"] = stats_json(a.stats());
    j["stored_bytes"] = stored_bytes(std::filesystem::path(scratch) / "ours");
    // Read the new array back (a fresh handle) and compare every byte with what was written.
    auto back = zx::open<std::uint8_t, 1>(store, "ours");
    auto got = back.read();
    if (got.size() != c.n || std::memcmp(got.data(), src, c.n) != 0)
    {
        zxb::fail("zarrxt's written array does not read back as written");
    }
    j["verified"] = true;
    return j;
}

} // namespace

int main(int argc, char** argv)
{
    const zxb::args args(argc, argv);
    const std::string op = args.str("op");
    if (op == "bandwidth")
    {
        const auto p = static_cast<unsigned>(args.num("threads", std::thread::hardware_concurrency()));
        const std::size_t bytes = 256u << 20;
        std::cout << zxb::json{{"bytes_per_s_1", zxb::memcpy_bandwidth(1, bytes, 5)},
                               {"bytes_per_s_p", zxb::memcpy_bandwidth(p, bytes, 5)},
                               {"threads", p}}
                         .dump()
                  << "\n";
        return 0;
    }
    w2_case c;
    c.kind = args.str("data");
    if (c.kind != "repeated" && c.kind != "semi_random")
    {
        zxb::fail("--data must be repeated or semi_random");
    }
    c.semi_random = c.kind == "semi_random";
    c.n = args.num("n");
    c.chunk = args.num("chunk");
    c.shard = args.num("shard", 0);
    c.codec = zxb::parse_codec(args.str("codec"));
    c.threads = static_cast<unsigned>(args.num("threads", 1));
    c.fresh = args.str("fresh", "read");
    const std::string dir = args.str("dir");

    zxb::json j;
    j["rss_start"] = zxb::peak_rss_bytes();
    j["bytes"] = c.n;
    if (op == "read")
    {
        const std::string name = args.str("name");
        try
        {
            j.update(zxb::with_executor(c.threads, [&](auto exec) { return read_ours(c, dir, name, exec); }));
        }
        catch (const std::exception& ex)
        {
            zxb::fail(std::string("zarrxt failed: ") + ex.what());
        }
        zxb::read_floor floor(zxb::w2_plan(dir + "/" + name, c.n, c.chunk, c.shard, c.codec));
        j["floor_ns"] = floor.run();
        zxb::phases ph;
        floor.run(&ph);
        j["floor_phases"] = {{"io_ns", ph.io_ns}, {"decode_ns", ph.decode_ns}, {"copy_ns", ph.copy_ns}};
        j["fault_ns"] = zxb::fault_in_ns(c.n);
    }
    else if (op == "write")
    {
        const std::filesystem::path scratch(dir);
        if (std::filesystem::exists(scratch / "ours") || std::filesystem::exists(scratch / "floor"))
        {
            zxb::fail("scratch directory " + dir + " is not empty");
        }
        zxb::prefaulted src(c.n);
        zxb::w2_fill(c.semi_random, 0, reinterpret_cast<std::uint8_t*>(src.data()), c.n);
        try
        {
            j.update(zxb::with_executor(
                c.threads, [&](auto exec)
                { return write_ours(c, dir, reinterpret_cast<const std::uint8_t*>(src.data()), exec); }));
        }
        catch (const std::exception& ex)
        {
            zxb::fail(std::string("zarrxt failed: ") + ex.what());
        }
        zxb::write_plan wp;
        wp.codec = c.codec;
        wp.level = 0;
        wp.chunk_bytes = c.chunk;
        wp.chunks = c.n / c.chunk;
        wp.per_shard = c.shard == 0 ? 0 : c.shard / c.chunk;
        wp.dir = (scratch / "floor").string();
        zxb::write_floor floor(wp);
        std::uint64_t stored = 0;
        ::sync(); // as before zarrxt's write: our 100 MB must not be flushed during the floor's

        j["floor_ns"] = floor.run(src.data(), stored);
        j["floor_stored_bytes"] = stored;
        std::filesystem::remove_all(scratch / "floor");
        if (!args.has("keep"))
        {
            std::filesystem::remove_all(scratch / "ours");
        }
    }
    else
    {
        zxb::fail("--op must be read, write or bandwidth");
    }
    std::cout << j.dump() << "\n";
    return 0;
}
