// The MPI programs behind run_peers.sh and run_kill.sh (meson suite "mpi").
//
//   mpi_tool peers DIR              (many ranks) write v2 arrays into DIR/v2 and sharded v3 arrays
//                                   into DIR/v3 with the interop formula, in shard-aligned blocks,
//                                   block-cyclic slabs and unaligned bands (owner routing); rank 0
//                                   writes each peer's manifest.json and consolidated metadata
//   mpi_tool generations DIR A B    (many ranks) write generations A..B of the kill-test array in
//                                   turn (A = 1 creates it); odd generations in shard-aligned
//                                   blocks, even ones in unaligned bands; each rank first leaves
//                                   its pid in DIR/pid-<rank>
//   mpi_tool check DIR LO HI        (one rank) every shard of the kill-test array must hold one
//                                   generation in LO..HI, whole (never a mix, never undecodable),
//                                   and at most two consecutive generations may be present (the
//                                   old and the new)
#define DOCTEST_CONFIG_DISABLE // the interop helpers use doctest macros this program does not need
#include "interop.hpp"
#include "mpi_support.hpp"

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace zx = zarrxt;
namespace zm = zarrxt::mpi;
namespace zi = zxtest::interop;
using zxtest::mpi::rank;
using zxtest::mpi::size;

namespace
{

const MPI_Comm world = MPI_COMM_WORLD;

template <std::size_t N>
using shape_of = std::array<std::uint64_t, N>;

template <std::size_t N>
std::uint64_t flat_of(const shape_of<N>& shape, const shape_of<N>& at)
{
    std::uint64_t f = 0;
    for (std::size_t d = 0; d < N; ++d)
    {
        f = f * shape[d] + at[d];
    }
    return f;
}

/// Call f(flat index in the whole array) for every element of r, in C order.
template <std::size_t N, class F>
void for_each_flat(const zx::region<N>& r, const shape_of<N>& shape, F&& f)
{
    if (r.empty())
    {
        return;
    }
    shape_of<N> i{};
    while (true)
    {
        shape_of<N> at{};
        for (std::size_t d = 0; d < N; ++d)
        {
            at[d] = r.offset[d] + i[d];
        }
        f(flat_of(shape, at));
        std::size_t d = N;
        while (d-- > 0)
        {
            if (++i[d] < r.extent[d])
            {
                break;
            }
            i[d] = 0;
        }
        if (d == static_cast<std::size_t>(-1))
        {
            return;
        }
    }
}

/// Bands of `extent` along `axis` starting at `offset`, one per rank, with edges that fall inside
/// stored objects and overlap the next band by one element (so the pieces must travel).
template <std::size_t N>
std::vector<zx::region<N>> bands(const zx::region<N>& box, std::size_t axis)
{
    const auto p = static_cast<std::uint64_t>(size());
    const auto r = static_cast<std::uint64_t>(rank());
    const std::uint64_t n = box.extent[axis];
    std::uint64_t lo = n * r / p, hi = n * (r + 1) / p;
    lo = lo > 0 ? lo - 1 : lo;
    hi = hi < n ? hi + 1 : hi;
    hi = std::max(hi, lo);
    zx::region<N> out = box;
    out.offset[axis] = box.offset[axis] + lo;
    out.extent[axis] = std::min(hi, n) - lo;
    if (out.empty())
    {
        return {};
    }
    return {out};
}

/// Write the interop formula (seed `seed`) into this rank's regions, collectively.
template <class A>
void write_formula(A& a, const std::vector<typename A::region_type>& mine, std::uint64_t seed)
{
    using T = typename A::value_type;
    constexpr std::size_t N = A::rank;
    std::vector<std::unique_ptr<T[]>> data;
    std::vector<zm::piece<T, N>> pieces;
    for (const auto& r : mine)
    {
        data.emplace_back(new T[static_cast<std::size_t>(r.elements())]);
        T* out = data.back().get();
        for_each_flat(r, a.shape(),
                      [&](std::uint64_t f) { *out++ = zi::formula_value<T>(zi::formula_k(f, seed)); });
        pieces.push_back({r, data.back().get()});
    }
    zm::write_pieces(world, a, std::span<const zm::piece<T, N>>(pieces));
}

template <std::size_t N>
zx::json box_json(const zx::region<N>& r)
{
    return {{"offset", std::vector<std::uint64_t>(r.offset.begin(), r.offset.end())},
            {"extent", std::vector<std::uint64_t>(r.extent.begin(), r.extent.end())}};
}

/// One manifest entry per array, in the form tests/peers/*_peer.* verify.
struct manifest
{
    std::filesystem::path dir;
    int format;
    zx::json arrays = zx::json::array();

    template <class A>
    void add(const A& a, std::uint64_t seed, const std::optional<typename A::region_type>& written)
    {
        const auto read = [&](const std::string& k) { return zi::read_json(dir / "arrays" / a.path() / k); };
        zx::json e;
        e["name"] = a.path();
        e["dtype"] = std::string(zx::info(A::dtype).v3_name);
        const auto shape = a.shape();
        const auto chunks = a.chunk_shape();
        e["shape"] = std::vector<std::uint64_t>(shape.begin(), shape.end());
        e["chunks"] = std::vector<std::uint64_t>(chunks.begin(), chunks.end());
        e["seed"] = seed;
        e["written"] = written ? box_json(*written) : zx::json(nullptr);
        if (format == 2)
        {
            const auto z = read(".zarray");
            e["fill_value"] = z["fill_value"];
            e["expect"] = {{"typestr", z["dtype"]},
                           {"order", z["order"]},
                           {"dimension_separator", z.value("dimension_separator", ".")},
                           {"compressor", z["compressor"]}};
        }
        else
        {
            const auto z = read("zarr.json");
            e["fill_value"] = z["fill_value"];
            e["codecs"] = z["codecs"];
            e["chunk_key_encoding"] = z["chunk_key_encoding"];
            const auto inner = zm::inner_chunk_shape(a);
            if (inner != a.chunk_shape())
            {
                e["read_chunks"] = std::vector<std::uint64_t>(inner.begin(), inner.end());
            }
        }
        arrays.push_back(e);
    }

    void save() const
    {
        zx::json doc = {{"writer", "zarrxt::mpi on " + std::to_string(size()) + " ranks"},
                        {"arrays", arrays}};
        std::ofstream(dir / "manifest.json") << doc.dump(1);
    }
};

zx::codec_spec zstd1()
{
    return zx::codec::zstd{.level = 1};
}

int peers(const std::filesystem::path& dir)
{
    std::uint64_t seed = 100;
    // Zarr v2, for zarr-python.
    {
        manifest m{dir / "v2", 2};
        zx::filesystem_store store{m.dir / "arrays"};
        zm::collective(world,
                       [&]
                       {
                           if (rank() == 0)
                           {
                               zx::group<>::create(store, "", {.zarr_format = 2});
                           }
                       });
        auto a = zm::create<float, 3>(world, store, "float32.block.zstd",
                                      zx::v2_options{.shape = {37, 29, 23},
                                                     .chunks = {8, 16, 10},
                                                     .compressor = zx::codec_spec("zstd", {{"level", 1}})});
        write_formula(a, zm::decompose(world, a), ++seed);
        m.add(a, seed, std::nullopt);

        auto b =
            zm::create<std::int16_t, 2>(world, store, "int16.rowbands.F.gzip",
                                        zx::v2_options{.shape = {41, 19},
                                                       .chunks = {6, 5},
                                                       .compressor = zx::codec_spec("gzip", {{"level", 5}}),
                                                       .order = 'F',
                                                       .dimension_separator = '/'});
        write_formula(b, bands(zx::region<2>::all(b.shape()), 0), ++seed);
        m.add(b, seed, std::nullopt);

        auto c =
            zm::create<std::uint8_t, 3>(world, store, "uint8.partial.zlib",
                                        zx::v2_options{.shape = {30, 20, 3},
                                                       .chunks = {7, 6, 3},
                                                       .compressor = zx::codec_spec("zlib", {{"level", 1}}),
                                                       .fill_value = 9});
        const zx::region<3> box{{3, 2, 0}, {20, 15, 3}};
        write_formula(c, bands(box, 1), ++seed);
        m.add(c, seed, box);

        auto d = zm::create<double, 2>(
            world, store, "float64.cyclic.raw",
            zx::v2_options{.shape = {50, 8}, .chunks = {4, 8}, .compressor = std::nullopt});
        write_formula(d, zm::decompose(world, d, zm::block_cyclic{.axis = 0, .block = 2}), ++seed);
        m.add(d, seed, std::nullopt);

        zm::consolidate_metadata(world, store);
        if (rank() == 0)
        {
            m.save();
        }
    }
    // Zarr v3, sharded, for zarrita.
    {
        manifest m{dir / "v3", 3};
        zx::filesystem_store store{m.dir / "arrays"};
        zm::collective(world,
                       [&]
                       {
                           if (rank() == 0)
                           {
                               zx::group<>::create(store, "", {.zarr_format = 3});
                           }
                       });
        auto a = zm::create<float, 3>(
            world, store, "float32.sharded.block",
            zx::v3_options{.shape = {40, 36, 30},
                           .chunk_shape = {16, 18, 15},
                           .codecs = {zx::sharded({8, 9, 5}, {zx::codec::bytes{}, zstd1()})}});
        write_formula(a, zm::decompose(world, a), ++seed);
        m.add(a, seed, std::nullopt);

        auto b = zm::create<std::int32_t, 2>(
            world, store, "int32.sharded.rowbands",
            zx::v3_options{.shape = {45, 22},
                           .chunk_shape = {10, 11},
                           .codecs = {zx::sharded({5, 11}, {zx::codec::bytes{}, zstd1()})}});
        write_formula(b, bands(zx::region<2>::all(b.shape()), 0), ++seed);
        m.add(b, seed, std::nullopt);

        auto c = zm::create<std::uint16_t, 2>(
            world, store, "uint16.sharded.partial",
            zx::v3_options{.shape = {33, 27},
                           .chunk_shape = {12, 9},
                           .codecs = {zx::sharded({4, 3}, {zx::codec::bytes{}, zstd1()})},
                           .fill_value = 7});
        const zx::region<2> box{{5, 4}, {20, 19}};
        write_formula(c, bands(box, 1), ++seed);
        m.add(c, seed, box);

        auto d = zm::create<double, 2>(world, store, "float64.chunked.cyclic",
                                       zx::v3_options{.shape = {26, 14}, .chunk_shape = {3, 7}});
        write_formula(d, zm::decompose(world, d, zm::block_cyclic{.axis = 1, .block = 1}), ++seed);
        m.add(d, seed, std::nullopt);

        zm::consolidate_metadata(world, store);
        if (rank() == 0)
        {
            m.save();
        }
    }
    if (rank() == 0)
    {
        std::cout << size() << " ranks wrote 4 v2 and 4 v3 arrays into " << dir.string() << "\n";
    }
    return 0;
}

/*************
 * kill test *
 *************/

// 32 MiB of uint32 in 16 shards of 2 MiB (inner chunks of 128 KiB, zstd).
constexpr shape_of<3> kill_shape{128, 256, 256};
constexpr std::uint64_t kill_shard_rows = 8;
constexpr std::uint64_t max_generation = 255;

std::uint32_t generation_value(std::uint64_t flat, int g)
{
    return static_cast<std::uint32_t>(flat * (max_generation + 1) + static_cast<std::uint64_t>(g));
}

int generations(const std::filesystem::path& dir, int first, int last)
{
    {
        const auto tmp = dir / (".pid-" + std::to_string(rank()));
        std::ofstream(tmp) << ::getpid() << "\n";
        std::filesystem::rename(tmp, dir / ("pid-" + std::to_string(rank())));
    }
    // fsync'ed writes: a shard spends longer between its temporary file and the rename, so
    // kills land inside a shard write more often.
    zx::filesystem_store store{dir, zx::durability::fsync};
    auto a = first == 1
                 ? zm::create<std::uint32_t, 3>(
                       world, store, "k",
                       zx::v3_options{.shape = {128, 256, 256},
                                      .chunk_shape = {8, 256, 256},
                                      .codecs = {zx::sharded({8, 64, 64}, {zx::codec::bytes{}, zstd1()})}})
                 : zm::open<std::uint32_t, 3>(world, store, "k");
    if (first < 1 || last > static_cast<int>(max_generation))
    {
        throw std::invalid_argument("generations are 1.." + std::to_string(max_generation));
    }
    for (int g = first; g <= last; ++g)
    {
        const auto mine = g % 2 == 1 ? zm::decompose(world, a) : bands(zx::region<3>::all(kill_shape), 0);
        std::vector<std::vector<std::uint32_t>> data;
        std::vector<zm::piece<std::uint32_t, 3>> pieces;
        for (const auto& r : mine)
        {
            data.emplace_back();
            for_each_flat(r, kill_shape,
                          [&](std::uint64_t f) { data.back().push_back(generation_value(f, g)); });
            pieces.push_back({r, data.back().data()});
        }
        zm::write_pieces(world, a, std::span<const zm::piece<std::uint32_t, 3>>(pieces));
        if (rank() == 0)
        {
            std::ofstream(dir / ".done") << g << "\n";
            std::filesystem::rename(dir / ".done", dir / "done"); // the driver never sees half a number
        }
    }
    return 0;
}

int check(const std::filesystem::path& dir, int lo, int hi)
{
    zx::filesystem_store store{dir};
    const auto a = zx::open<std::uint32_t, 3>(store, "k");
    std::map<int, int> seen;
    int mixed = 0, unreadable = 0;
    for (std::uint64_t s = 0; s < kill_shape[0] / kill_shard_rows; ++s)
    {
        const zx::region<3> r{{s * kill_shard_rows, 0, 0}, {kill_shard_rows, kill_shape[1], kill_shape[2]}};
        try
        {
            const auto v = a.read(r);
            const std::uint64_t first = flat_of(kill_shape, r.offset);
            const int g = static_cast<int>(v.data()[0] - generation_value(first, 0));
            std::uint64_t i = 0, bad = 0;
            for_each_flat(r, kill_shape,
                          [&](std::uint64_t f) { bad += v.data()[i++] != generation_value(f, g); });
            if (g < lo || g > hi || bad != 0)
            {
                ++mixed;
                std::cout << "shard " << s << ": " << bad << " values are not generation " << g << "\n";
            }
            else
            {
                ++seen[g];
            }
        }
        catch (const zx::error& e)
        {
            ++unreadable;
            std::cout << "shard " << s << ": " << e.what() << "\n";
        }
    }
    int temporaries = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir / "k"))
    {
        temporaries += zx::filesystem_store::is_temp_name(e.path().filename().string()) ? 1 : 0;
    }
    std::cout << kill_shape[0] / kill_shard_rows << " shards: ";
    for (const auto& [g, n] : seen)
    {
        std::cout << n << " of generation " << g << ", ";
    }
    std::cout << mixed << " mixed, " << unreadable << " unreadable; " << temporaries
              << " temporary files left by interrupted writes\n";
    const bool two_at_most = seen.empty() || seen.rbegin()->first - seen.begin()->first <= 1;
    if (!two_at_most)
    {
        std::cout << "more than the old and the new generation are present\n";
    }
    return mixed == 0 && unreadable == 0 && two_at_most ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int status = 2;
    const std::string cmd = argc > 2 ? argv[1] : "";
    try
    {
        if (cmd == "peers")
        {
            status = peers(argv[2]);
        }
        else if (cmd == "generations" && argc == 5)
        {
            status = generations(argv[2], std::stoi(argv[3]), std::stoi(argv[4]));
        }
        else if (cmd == "check" && argc == 5)
        {
            status = check(argv[2], std::stoi(argv[3]), std::stoi(argv[4]));
        }
        else if (rank() == 0)
        {
            std::cerr << "usage: mpi_tool peers DIR | generations DIR FIRST LAST | check DIR LO HI\n";
        }
    }
    catch (const std::exception& e)
    {
        std::cerr << "rank " << rank() << ": " << e.what() << "\n";
        status = 1;
    }
    MPI_Finalize();
    return status;
}
