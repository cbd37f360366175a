// Scale-out benchmark: P MPI ranks write, then read, one float32 3-D field (2 GiB by default),
// each rank its own slab of whole shards, with zarrxt::mpi, with parallel HDF5 (collective I/O),
// and with floors that no library can beat. Run by bench/mpi/harness.py (scripts/bench-mpi), one
// fresh mpirun per trial and operation.
//
//   bench_mpi write CASE DIR [ROWS]   time writing the field into DIR (rank 0 prints one JSON line)
//   bench_mpi read CASE DIR [ROWS]    time reading it back; every value is checked against the formula
//   bench_mpi hash [ROWS]             SHA-256 of the field's bytes (the record's data hash)
//   bench_mpi codecs                  zstd level 1 and zlib (deflate) level 1 on the field's chunks:
//                                     the codecs' own speeds, one thread
//
// CASE: floor-io (each rank pwrites / preads its bytes to / from its own file), floor-zstd1 (each
// rank compresses its chunks with ZSTD_compress level 1 and pwrites them to its own files; reads
// pread and decompress them), both with std::thread::hardware_concurrency() threads per rank (a
// floor bounds what a rank could reach; zarrxt and HDF5 run one thread per rank), zarrxt-raw, zarrxt-zstd1 (Zarr v3, shards of 64 x 512 x 512, inner
// chunks of 32 x 128 x 128, `bytes` [+ zstd level 1], crc32c index at the end), hdf5-raw,
// hdf5-deflate1 (HDF5 chunked dataset, chunks of 32 x 128 x 128, [+ its deflate filter level 1],
// collective transfers, no fill values written).
//
// The field is [ROWS, 1024, 1024] float32 (ROWS = 512: 2 GiB). Each rank's slab is the same in
// every case: zarrxt::mpi::decompose's block over the shard grid. A timing is MPI_Wtime from a
// barrier before the job's open/create to a barrier after its close: the slowest rank's time.
#include <zarrxt/mpi.hpp>
#include <zarrxt/zarrxt.hpp>

#include "sha256.hpp"

#include <hdf5.h>
#include <zlib.h>
#include <zstd.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace zx = zarrxt;
namespace zm = zarrxt::mpi;

namespace
{

const MPI_Comm world = MPI_COMM_WORLD;
constexpr std::uint64_t cols = 1024;
constexpr std::array<std::uint64_t, 3> shard{64, 512, 512};
constexpr std::array<std::uint64_t, 3> chunk{32, 128, 128};

int my_rank()
{
    int r = 0;
    MPI_Comm_rank(world, &r);
    return r;
}

int ranks()
{
    int s = 1;
    MPI_Comm_size(world, &s);
    return s;
}

[[noreturn]] void fail(const std::string& what)
{
    std::cerr << "bench_mpi rank " << my_rank() << ": " << what << std::endl;
    MPI_Abort(world, 1);
    std::abort();
}

/// A triangle wave of integer period and amplitude: smooth, cheap, exactly reproducible.
std::int64_t tri(std::uint64_t x, std::uint64_t period, std::int64_t amp)
{
    const auto m = static_cast<std::int64_t>(x % period);
    const auto half = static_cast<std::int64_t>(period / 2);
    return amp * (m < half ? m : static_cast<std::int64_t>(period) - m);
}

/// The field: a smooth part plus 8 bits of noise, in steps of 1/4096 (every value exact in
/// float32; zstd and deflate shrink it by a realistic factor, not by a miracle).
float field(std::uint64_t i, std::uint64_t j, std::uint64_t k, std::uint64_t flat)
{
    const std::int64_t smooth = tri(i, 256, 4) + tri(j, 512, 2) + tri(k, 384, 3);
    const std::int64_t noise = static_cast<std::int64_t>((flat * 0x9E3779B97F4A7C15ull) >> 56);
    return static_cast<float>(smooth * 256 + noise) / 4096.0f;
}

/// This rank's slab: the block decomposition of the shard grid (the same in every case).
zx::region<3> my_region(std::uint64_t rows)
{
    auto d = zm::decompose<3>({rows, cols, cols}, shard, my_rank(), ranks());
    return d.empty() ? zx::region<3>{} : d.front();
}

void fill(const zx::region<3>& r, float* out)
{
    for (std::uint64_t i = 0; i < r.extent[0]; ++i)
    {
        for (std::uint64_t j = 0; j < r.extent[1]; ++j)
        {
            const std::uint64_t gi = r.offset[0] + i, gj = r.offset[1] + j;
            std::uint64_t flat = (gi * cols + gj) * cols + r.offset[2];
            for (std::uint64_t k = 0; k < r.extent[2]; ++k, ++flat)
            {
                *out++ = field(gi, gj, r.offset[2] + k, flat);
            }
        }
    }
}

std::uint64_t count_wrong(const zx::region<3>& r, const float* got)
{
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < r.extent[0]; ++i)
    {
        for (std::uint64_t j = 0; j < r.extent[1]; ++j)
        {
            const std::uint64_t gi = r.offset[0] + i, gj = r.offset[1] + j;
            std::uint64_t flat = (gi * cols + gj) * cols + r.offset[2];
            for (std::uint64_t k = 0; k < r.extent[2]; ++k, ++flat)
            {
                const float want = field(gi, gj, r.offset[2] + k, flat);
                bad += std::memcmp(got++, &want, sizeof(float)) != 0;
            }
        }
    }
    return bad;
}

/// Page-aligned, pre-faulted memory for a rank's slab (outside every timing).
struct values
{
    std::unique_ptr<float[]> p;
    std::uint64_t n = 0;
    explicit values(std::uint64_t count)
        : p(new float[std::max<std::uint64_t>(count, 1)])
        , n(count)
    {
        std::memset(p.get(), 0, n * sizeof(float));
    }
    float* data() { return p.get(); }
};

/********
 * HDF5 *
 ********/

void h5check(herr_t e, const char* what)
{
    if (e < 0)
    {
        fail(std::string("HDF5: ") + what + " failed");
    }
}

hid_t h5check_id(hid_t id, const char* what)
{
    if (id < 0)
    {
        fail(std::string("HDF5: ") + what + " failed");
    }
    return id;
}

void hdf5_job(bool write, bool deflate, const std::string& path, std::uint64_t rows, const zx::region<3>& r,
              float* data)
{
    const hid_t fapl = h5check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
    h5check(H5Pset_fapl_mpio(fapl, world, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    hid_t file, dset;
    if (write)
    {
        file = h5check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
        const hsize_t dims[3] = {rows, cols, cols};
        const hid_t space = H5Screate_simple(3, dims, nullptr);
        const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        const hsize_t cdims[3] = {chunk[0], chunk[1], chunk[2]};
        h5check(H5Pset_chunk(dcpl, 3, cdims), "H5Pset_chunk");
        h5check(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
        if (deflate)
        {
            h5check(H5Pset_deflate(dcpl, 1), "H5Pset_deflate");
        }
        dset = h5check_id(H5Dcreate2(file, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                          "H5Dcreate2");
        H5Pclose(dcpl);
        H5Sclose(space);
    }
    else
    {
        file = h5check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), "H5Fopen");
        dset = h5check_id(H5Dopen2(file, "field", H5P_DEFAULT), "H5Dopen2");
    }
    const hid_t fspace = H5Dget_space(dset);
    const hsize_t start[3] = {r.offset[0], r.offset[1], r.offset[2]};
    const hsize_t count[3] = {r.extent[0], r.extent[1], r.extent[2]};
    const hid_t mspace = H5Screate_simple(3, count, nullptr);
    if (r.empty())
    {
        H5Sselect_none(fspace);
        H5Sselect_none(mspace);
    }
    else
    {
        h5check(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, count, nullptr),
                "H5Sselect_hyperslab");
    }
    const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    h5check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    if (write)
    {
        h5check(H5Dwrite(dset, H5T_NATIVE_FLOAT, mspace, fspace, dxpl, data), "H5Dwrite");
    }
    else
    {
        h5check(H5Dread(dset, H5T_NATIVE_FLOAT, mspace, fspace, dxpl, data), "H5Dread");
    }
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
    h5check(H5Fclose(file), "H5Fclose");
    H5Pclose(fapl);
}

/**********
 * floors *
 **********/

/// Writes in 256 KiB steps, as the filesystem store does (detail::write_step): the page cache sizes
/// its folios by the length of each write, and on a VM that reports free memory to its host
/// (virtio-balloon free page reporting, order 9) the 2 MiB folios a 1 GiB write asks for come from
/// blocks the host has taken back and cost several times more to fill. A floor that paid for that
/// would be no floor.
void full_pwrite(int fd, const void* p, std::size_t n, std::uint64_t at)
{
    const auto* b = static_cast<const char*>(p);
    while (n > 0)
    {
        const ssize_t w = ::pwrite(fd, b, std::min(n, zx::detail::write_step), static_cast<off_t>(at));
        if (w <= 0)
        {
            fail("pwrite failed");
        }
        b += w;
        n -= static_cast<std::size_t>(w);
        at += static_cast<std::uint64_t>(w);
    }
}

void full_pread(int fd, void* p, std::size_t n, std::uint64_t at)
{
    auto* b = static_cast<char*>(p);
    while (n > 0)
    {
        const ssize_t got = ::pread(fd, b, std::min<std::size_t>(n, 1u << 30), static_cast<off_t>(at));
        if (got <= 0)
        {
            fail("pread failed");
        }
        b += got;
        n -= static_cast<std::size_t>(got);
        at += static_cast<std::uint64_t>(got);
    }
}

/// The threads a floor uses per rank: every core (zarrxt's default inline_executor uses one).
unsigned floor_threads()
{
    return std::max(1u, std::thread::hardware_concurrency());
}

/// Run f(t) for t in [0, threads) on that many threads; the first failure aborts the job.
template <class F>
void on_threads(unsigned threads, F&& f)
{
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t)
    {
        pool.emplace_back([&f, t] { f(t); });
    }
    f(0u);
    for (auto& th : pool)
    {
        th.join();
    }
}

/// floor-io: the rank's bytes to / from its own file, cut into one contiguous piece per thread,
/// one pwrite / pread each.
void floor_io(bool write, const std::string& dir, const zx::region<3>& r, float* data)
{
    const std::string path = dir + "/rank-" + std::to_string(my_rank()) + ".bin";
    const std::size_t n = static_cast<std::size_t>(r.elements()) * sizeof(float);
    const int fd =
        write ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : ::open(path.c_str(), O_RDONLY);
    if (fd < 0)
    {
        fail("open " + path);
    }
    const unsigned threads = floor_threads();
    const std::size_t piece = (n / threads + 4095) / 4096 * 4096;
    on_threads(threads, [&](unsigned t) {
        const std::size_t at = std::min(n, piece * t);
        const std::size_t len = std::min(n - at, piece);
        auto* p = reinterpret_cast<char*>(data) + at;
        if (write)
        {
            full_pwrite(fd, p, len, at);
        }
        else
        {
            full_pread(fd, p, len, at);
        }
    });
    ::close(fd);
}

/// floor-zstd1: the rank's slab cut into the chunks of the array (32 x 128 x 128); thread t of T
/// takes chunks t, t + T, ..., compresses each with ZSTD_compress level 1 and appends it to its
/// own file (sizes in a small table at the file's start); reading preads and decompresses each
/// straight into place. This is what any zstd-compressed layout must at least do; it has no
/// shards, no index, no checksum.
void floor_zstd(bool write, const std::string& dir, const zx::region<3>& r, float* data)
{
    const std::uint64_t nc[3] = {r.extent[0] / chunk[0], r.extent[1] / chunk[1], r.extent[2] / chunk[2]};
    const std::uint64_t count = nc[0] * nc[1] * nc[2];
    const std::size_t raw = static_cast<std::size_t>(chunk[0] * chunk[1] * chunk[2]) * sizeof(float);
    const unsigned threads = floor_threads();
    on_threads(threads, [&](unsigned t) {
        const std::string path =
            dir + "/rank-" + std::to_string(my_rank()) + "-" + std::to_string(t) + ".zst";
        std::vector<float> scratch(chunk[0] * chunk[1] * chunk[2]);
        std::vector<char> packed(ZSTD_compressBound(raw));
        const std::uint64_t mine = count > t ? (count - t + threads - 1) / threads : 0;
        std::vector<std::uint64_t> sizes(mine);
        ZSTD_CCtx* cctx = ZSTD_createCCtx();
        ZSTD_DCtx* dctx = ZSTD_createDCtx();
        const int fd =
            write ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) : ::open(path.c_str(), O_RDONLY);
        if (fd < 0)
        {
            fail("open " + path);
        }
        std::uint64_t at = mine * sizeof(std::uint64_t);
        if (!write && mine > 0)
        {
            full_pread(fd, sizes.data(), mine * sizeof(std::uint64_t), 0);
        }
        for (std::uint64_t k = 0; k < mine; ++k)
        {
            const std::uint64_t c = t + k * threads;
            const std::uint64_t a = c / (nc[1] * nc[2]), b = c / nc[2] % nc[1], d = c % nc[2];
            // The chunk's rows inside the slab, C order: chunk[0] x chunk[1] runs of chunk[2].
            auto row = [&](std::uint64_t i, std::uint64_t j) {
                return data + ((a * chunk[0] + i) * r.extent[1] + b * chunk[1] + j) * r.extent[2] + d * chunk[2];
            };
            if (write)
            {
                float* s = scratch.data();
                for (std::uint64_t i = 0; i < chunk[0]; ++i)
                {
                    for (std::uint64_t j = 0; j < chunk[1]; ++j, s += chunk[2])
                    {
                        std::memcpy(s, row(i, j), chunk[2] * sizeof(float));
                    }
                }
                const std::size_t z = ZSTD_compressCCtx(cctx, packed.data(), packed.size(), scratch.data(), raw, 1);
                if (ZSTD_isError(z))
                {
                    fail("ZSTD_compress");
                }
                full_pwrite(fd, packed.data(), z, at);
                sizes[k] = z;
            }
            else
            {
                full_pread(fd, packed.data(), sizes[k], at);
                const std::size_t z = ZSTD_decompressDCtx(dctx, scratch.data(), raw, packed.data(), sizes[k]);
                if (z != raw)
                {
                    fail("ZSTD_decompress");
                }
                const float* s = scratch.data();
                for (std::uint64_t i = 0; i < chunk[0]; ++i)
                {
                    for (std::uint64_t j = 0; j < chunk[1]; ++j, s += chunk[2])
                    {
                        std::memcpy(row(i, j), s, chunk[2] * sizeof(float));
                    }
                }
            }
            at += sizes[k];
        }
        if (write && mine > 0)
        {
            full_pwrite(fd, sizes.data(), mine * sizeof(std::uint64_t), 0);
        }
        ::close(fd);
        ZSTD_freeCCtx(cctx);
        ZSTD_freeDCtx(dctx);
    });
}

/**********
 * zarrxt *
 **********/

void zarrxt_job(bool write, bool zstd, const std::string& dir, std::uint64_t rows, const zx::region<3>& r,
                float* data)
{
    zx::filesystem_store store{dir};
    if (write)
    {
        std::vector<zx::codec_spec> inner{zx::codec::bytes{}};
        if (zstd)
        {
            inner.push_back(zx::codec::zstd{.level = 1});
        }
        auto a = zm::create<float, 3>(
            world, store, "field",
            zx::v3_options{.shape = {rows, cols, cols},
                           .chunk_shape = {shard[0], shard[1], shard[2]},
                           .codecs = {zx::sharded({chunk[0], chunk[1], chunk[2]}, inner)},
                           .overwrite = true});
        zm::write_raw(world, a, r, data);
    }
    else
    {
        const auto a = zm::open<float, 3>(world, store, "field");
        zm::read_raw(world, a, r, data);
    }
}

/**********
 * driver *
 **********/

std::uint64_t stored_bytes(const std::string& dir)
{
    std::uint64_t n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    {
        if (e.is_regular_file())
        {
            n += e.file_size();
        }
    }
    return n;
}

long peak_rss_kib()
{
    struct rusage ru;
    ::getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int run_case(bool write, const std::string& name, const std::string& dir, std::uint64_t rows)
{
    const zx::region<3> r = my_region(rows);
    values v(r.elements());
    if (write)
    {
        fill(r, v.data());
    }
    long rss_before = peak_rss_kib();
    MPI_Barrier(world);
    const double t0 = MPI_Wtime();
    if (name == "floor-io")
    {
        floor_io(write, dir, r, v.data());
    }
    else if (name == "floor-zstd1")
    {
        floor_zstd(write, dir, r, v.data());
    }
    else if (name == "zarrxt-raw" || name == "zarrxt-zstd1")
    {
        zarrxt_job(write, name == "zarrxt-zstd1", dir, rows, r, v.data());
    }
    else if (name == "hdf5-raw" || name == "hdf5-deflate1")
    {
        hdf5_job(write, name == "hdf5-deflate1", dir + "/field.h5", rows, r, v.data());
    }
    else
    {
        fail("unknown case " + name);
    }
    MPI_Barrier(world);
    const double seconds = MPI_Wtime() - t0;
    // Check the answer of every read (and, after a write, nothing: the read that follows checks).
    std::uint64_t bad = write ? 0 : count_wrong(r, v.data()), bad_all = 0;
    MPI_Allreduce(&bad, &bad_all, 1, MPI_UINT64_T, MPI_SUM, world);
    long rss[2] = {peak_rss_kib(), peak_rss_kib() - rss_before}, rss_max[2] = {0, 0};
    MPI_Allreduce(rss, rss_max, 2, MPI_LONG, MPI_MAX, world);
    if (my_rank() == 0)
    {
        std::cout << "{\"case\": \"" << name << "\", \"op\": \"" << (write ? "write" : "read")
                  << "\", \"ranks\": " << ranks() << ", \"seconds\": " << seconds
                  << ", \"bytes\": " << rows * cols * cols * sizeof(float)
                  << ", \"stored_bytes\": " << stored_bytes(dir) << ", \"wrong_values\": " << bad_all
                  << ", \"peak_rss_kib\": " << rss_max[0] << ", \"rss_growth_kib\": " << rss_max[1] << "}"
                  << std::endl;
    }
    return bad_all == 0 ? 0 : 3;
}

int hash(std::uint64_t rows)
{
    zarrxt_tool::sha256 h;
    std::vector<float> row(cols);
    for (std::uint64_t i = 0; i < rows; ++i)
    {
        for (std::uint64_t j = 0; j < cols; ++j)
        {
            fill(zx::region<3>{{i, j, 0}, {1, 1, cols}}, row.data());
            h.update(row.data(), cols * sizeof(float));
        }
    }
    std::cout << zarrxt_tool::sha256::hex(h.finish()) << std::endl;
    return 0;
}

/// The codecs' own speeds on the field's chunks (one thread): what the ratio of HDF5-deflate to
/// zarrxt-zstd times should approach when both are bound by their codec.
int codecs()
{
    const std::uint64_t n = chunk[0] * chunk[1] * chunk[2];
    const std::size_t raw = static_cast<std::size_t>(n) * sizeof(float);
    const int count = 16; // 16 chunks (32 MiB) from different places of the field
    std::vector<std::vector<float>> chunks(count, std::vector<float>(n));
    for (int c = 0; c < count; ++c)
    {
        const std::uint64_t i0 = (static_cast<std::uint64_t>(c) * 97 % 16) * chunk[0];
        fill(zx::region<3>{{i0, static_cast<std::uint64_t>(c % 8) * chunk[1],
                            static_cast<std::uint64_t>(c / 8) * chunk[2]},
                           {chunk[0], chunk[1], chunk[2]}},
             chunks[c].data());
    }
    std::vector<char> packed(std::max<std::size_t>(ZSTD_compressBound(raw), compressBound(raw)));
    std::vector<float> out(n);
    auto best_of = [](int reps, auto&& f)
    {
        double best = 1e30;
        for (int k = 0; k < reps; ++k)
        {
            const auto t0 = std::chrono::steady_clock::now();
            f();
            best =
                std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        return best;
    };
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    std::uint64_t zbytes = 0, dbytes = 0;
    const double zc =
        best_of(3,
                [&]
                {
                    zbytes = 0;
                    for (auto& c : chunks)
                    {
                        zbytes += ZSTD_compressCCtx(cctx, packed.data(), packed.size(), c.data(), raw, 1);
                    }
                });
    std::vector<std::vector<char>> zs, ds;
    for (auto& c : chunks)
    {
        const std::size_t z = ZSTD_compressCCtx(cctx, packed.data(), packed.size(), c.data(), raw, 1);
        zs.emplace_back(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(z));
        uLongf d = static_cast<uLongf>(packed.size());
        compress2(reinterpret_cast<Bytef*>(packed.data()), &d, reinterpret_cast<const Bytef*>(c.data()), raw,
                  1);
        ds.emplace_back(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(d));
    }
    const double zd =
        best_of(3,
                [&]
                {
                    for (auto& z : zs)
                    {
                        if (ZSTD_decompressDCtx(dctx, out.data(), raw, z.data(), z.size()) != raw)
                        {
                            fail("zstd round trip");
                        }
                    }
                });
    const double dc = best_of(3,
                              [&]
                              {
                                  dbytes = 0;
                                  for (auto& c : chunks)
                                  {
                                      uLongf d = static_cast<uLongf>(packed.size());
                                      if (compress2(reinterpret_cast<Bytef*>(packed.data()), &d,
                                                    reinterpret_cast<const Bytef*>(c.data()), raw, 1) != Z_OK)
                                      {
                                          fail("compress2");
                                      }
                                      dbytes += d;
                                  }
                              });
    const double dd =
        best_of(3,
                [&]
                {
                    for (auto& z : ds)
                    {
                        uLongf d = static_cast<uLongf>(raw);
                        if (uncompress(reinterpret_cast<Bytef*>(out.data()), &d,
                                       reinterpret_cast<const Bytef*>(z.data()), z.size()) != Z_OK ||
                            d != raw)
                        {
                            fail("zlib round trip");
                        }
                    }
                });
    const double mb = static_cast<double>(raw) * count / 1e6;
    std::cout << "{\"zstd1_compress_mbps\": " << mb / zc << ", \"zstd1_decompress_mbps\": " << mb / zd
              << ", \"zstd1_ratio\": " << static_cast<double>(raw) * count / static_cast<double>(zbytes)
              << ", \"deflate1_compress_mbps\": " << mb / dc << ", \"deflate1_decompress_mbps\": " << mb / dd
              << ", \"deflate1_ratio\": " << static_cast<double>(raw) * count / static_cast<double>(dbytes)
              << ", \"zstd_version\": \"" << ZSTD_versionString() << "\", \"zlib_version\": \""
              << zlibVersion() << "\"}" << std::endl;
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int status = 2;
    const std::string cmd = argc > 1 ? argv[1] : "";
    try
    {
        if ((cmd == "write" || cmd == "read") && (argc == 4 || argc == 5))
        {
            const std::uint64_t rows = argc == 5 ? std::stoull(argv[4]) : 512;
            if (rows % shard[0] != 0)
            {
                fail("ROWS must be a multiple of " + std::to_string(shard[0]));
            }
            status = run_case(cmd == "write", argv[2], argv[3], rows);
        }
        else if (cmd == "hash")
        {
            status = hash(argc > 2 ? std::stoull(argv[2]) : 512);
        }
        else if (cmd == "codecs")
        {
            status = codecs();
        }
        else if (my_rank() == 0)
        {
            std::cerr << "usage: bench_mpi write|read CASE DIR [ROWS] | hash [ROWS] | codecs\n";
        }
    }
    catch (const std::exception& e)
    {
        std::cerr << "bench_mpi rank " << my_rank() << ": " << e.what() << std::endl;
        status = 1;
    }
    MPI_Finalize();
    return status;
}
