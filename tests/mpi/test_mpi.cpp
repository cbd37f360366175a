// Tests of zarrxt/mpi.hpp, run under mpirun with 1, 3 and 4 ranks (meson suite "mpi"): the
// decomposition helper, collective create and open, shard-aligned collective writes, owner
// routing of writes that are not aligned to stored objects, collective reads, error propagation
// (one rank fails, every rank gets the error, none hangs: the runner has a time limit), and
// consolidated metadata. Peers and kills are in mpi_tool.cpp with run_peers.sh and run_kill.sh.
//
// Every rank runs every test case in the same order. Checks that can differ between ranks use
// CHECK (never REQUIRE), so a failure on one rank does not skip a collective the others make.
#define DOCTEST_CONFIG_IMPLEMENT
#include "expect_error.hpp"
#include "mpi_support.hpp"
#include "test_support.hpp"
#include "xor_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace zx = zarrxt;
namespace zm = zarrxt::mpi;
using zxtest::mpi::rank;
using zxtest::mpi::recording_store;
using zxtest::mpi::shared_dir;
using zxtest::mpi::size;

namespace
{

const MPI_Comm world = MPI_COMM_WORLD;

template <std::size_t N>
using shape_of = std::array<std::uint64_t, N>;

/// The value written at flat index i by generation g (exact in int32).
std::int32_t value(std::uint64_t flat, int g)
{
    return static_cast<std::int32_t>((flat * 7 + static_cast<std::uint64_t>(g) * 1000003) % 2147483647);
}

template <std::size_t N>
std::uint64_t flat_of(const shape_of<N>& shape, const shape_of<N>& idx)
{
    std::uint64_t f = 0;
    for (std::size_t d = 0; d < N; ++d)
    {
        f = f * shape[d] + idx[d];
    }
    return f;
}

/// Call f(index) for every index of region r, in C order.
template <std::size_t N, class F>
void for_each_index(const zx::region<N>& r, F&& f)
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
        f(at);
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

/// Generation g's values of region r (dense, C order).
template <std::size_t N>
std::vector<std::int32_t> values_of(const zx::region<N>& r, const shape_of<N>& shape, int g)
{
    std::vector<std::int32_t> v;
    v.reserve(static_cast<std::size_t>(r.elements()));
    for_each_index(r, [&](const shape_of<N>& at) { v.push_back(value(flat_of(shape, at), g)); });
    return v;
}

template <std::size_t N>
std::string str(const zx::region<N>& r)
{
    std::string s = "{[";
    for (std::size_t d = 0; d < N; ++d)
    {
        s += (d ? ", " : "") + std::to_string(r.offset[d]);
    }
    s += "], [";
    for (std::size_t d = 0; d < N; ++d)
    {
        s += (d ? ", " : "") + std::to_string(r.extent[d]);
    }
    return s + "]}";
}

/// Every rank's regions of a layout tile the array exactly once, every region is a union of whole
/// stored objects (clipped to the array), and no object is in two ranks' regions.
template <std::size_t N, class Layout>
void check_tiling(const shape_of<N>& shape, const shape_of<N>& objects, int p, const Layout& layout)
{
    std::uint64_t total = 1;
    for (auto e : shape)
    {
        total *= e;
    }
    std::vector<int> hits(static_cast<std::size_t>(total), 0);
    std::map<std::vector<std::uint64_t>, int> object_owner;
    bool aligned = true, shared = false;
    for (int r = 0; r < p; ++r)
    {
        for (const auto& reg : zm::decompose<N>(shape, objects, r, p, layout))
        {
            CHECK_FALSE(reg.empty()); // empty regions are left out, not returned
            for (std::size_t d = 0; d < N; ++d)
            {
                const std::uint64_t end = reg.offset[d] + reg.extent[d];
                aligned =
                    aligned && reg.offset[d] % objects[d] == 0 && (end % objects[d] == 0 || end == shape[d]);
            }
            for_each_index(reg,
                           [&](const shape_of<N>& at)
                           {
                               ++hits[flat_of(shape, at)];
                               std::vector<std::uint64_t> o(N);
                               for (std::size_t d = 0; d < N; ++d)
                               {
                                   o[d] = at[d] / objects[d];
                               }
                               auto [it, fresh] = object_owner.emplace(o, r);
                               shared = shared || (!fresh && it->second != r);
                           });
        }
    }
    CHECK_MESSAGE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }),
                  "ranks " << p << ": some element is covered "
                           << "zero or several times");
    CHECK_MESSAGE(aligned, "ranks " << p << ": a region is not aligned to stored objects");
    CHECK_MESSAGE(!shared, "ranks " << p << ": two ranks share a stored object");
}

/// What every rank's key log says after a collective write: no data key written by two ranks,
/// and every data key a rank read during the write (read-modify-write) is one only it wrote.
void check_one_writer_per_object(const recording_store& store)
{
    std::set<std::string> written, read;
    for (const auto& k : store.log().written)
    {
        if (zxtest::mpi::is_data_key(k))
        {
            written.insert(k);
        }
    }
    for (const auto& k : store.log().read)
    {
        if (zxtest::mpi::is_data_key(k))
        {
            read.insert(k);
        }
    }
    const auto all_written = zxtest::mpi::allgather_strings(written);
    std::map<std::string, std::vector<int>> writers;
    for (int r = 0; r < static_cast<int>(all_written.size()); ++r)
    {
        for (const auto& k : all_written[r])
        {
            writers[k].push_back(r);
        }
    }
    // Not a structured binding: clang 14 cannot capture one in CHECK_MESSAGE's lambda.
    for (const auto& kv : writers)
    {
        CHECK_MESSAGE(kv.second.size() == 1,
                      "object " << kv.first << " was written by " << kv.second.size() << " ranks");
    }
    for (const auto& k : read)
    {
        CHECK_MESSAGE(written.count(k) == 1, "rank " << rank() << " read object " << k
                                                     << " during the write but "
                                                     << "did not write it");
    }
    store.log().clear();
}

/// Every rank reads the whole array and compares it with `expected` (the whole array, C order).
template <class Array>
void check_whole(const Array& a, const std::vector<std::int32_t>& expected, const char* what)
{
    const auto got = zm::read(world, a, Array::region_type::all(a.shape()));
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
    {
        if (got.data()[i] != expected[i] && bad++ == 0)
        {
            first = i;
        }
    }
    CHECK_MESSAGE(got.size() == expected.size(), what);
    CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << expected.size()
                                 << " values differ, the first at flat index " << first << " (got "
                                 << got.data()[first] << ", expected " << expected[first] << ")");
}

/// The expected whole array after writing `pieces_by_rank` over `base`: pieces in (rank, index)
/// order, later ones winning.
template <std::size_t N>
std::vector<std::int32_t> compose(std::vector<std::int32_t> base, const shape_of<N>& shape,
                                  const std::vector<std::vector<zx::region<N>>>& pieces_by_rank, int g)
{
    for (const auto& pieces : pieces_by_rank)
    {
        for (const auto& p : pieces)
        {
            for_each_index(p, [&](const shape_of<N>& at)
                           { base[flat_of(shape, at)] = value(flat_of(shape, at), g); });
        }
    }
    return base;
}

template <std::size_t N>
std::vector<std::int32_t> whole_of(const shape_of<N>& shape, int g)
{
    return values_of<N>(zx::region<N>::all(shape), shape, g);
}

/// Collective write of each rank's pieces (generation g values), by write_pieces.
template <class Array>
void write_generation(Array& a, const std::vector<typename Array::region_type>& mine, int g)
{
    constexpr std::size_t N = Array::rank;
    std::vector<std::vector<std::int32_t>> data;
    std::vector<zm::piece<std::int32_t, N>> pieces;
    for (const auto& r : mine)
    {
        data.push_back(values_of<N>(r, a.shape(), g));
    }
    for (std::size_t i = 0; i < mine.size(); ++i)
    {
        pieces.push_back({mine[i], data[i].data()});
    }
    zm::write_pieces(world, a, std::span<const zm::piece<std::int32_t, N>>(pieces));
}

/// Run f, expecting a collective_error on every rank; returns it (or a default when none came).
template <class F>
std::optional<zm::collective_error> expect_collective_error(F&& f)
{
    try
    {
        f();
    }
    catch (const zm::collective_error& e)
    {
        return e;
    }
    catch (const std::exception& e)
    {
        FAIL_CHECK("expected a zarrxt::mpi::collective_error, got: " << e.what());
        return std::nullopt;
    }
    FAIL_CHECK("expected a zarrxt::mpi::collective_error, nothing was thrown");
    return std::nullopt;
}

/// A user codec that only the test's registry knows (tests/support/xor_codec.hpp): collective
/// create and open must hand the registry to every rank's array, and owner ranks must encode with it.
using zxtest::xor_codec;

zx::v3_options sharded_int32(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> shard,
                             std::vector<std::uint64_t> inner)
{
    return zx::v3_options{
        .shape = std::move(shape),
        .chunk_shape = std::move(shard),
        .codecs = {zx::sharded(std::move(inner), {zx::codec::bytes{}, zx::codec::zstd{.level = 1}})}};
}

} // namespace

TEST_SUITE("mpi")
{
    TEST_CASE("process_grid puts ranks on the axes with the most objects, outer axes first")
    {
        using v = std::vector<std::uint64_t>;
        auto grid = [](int p, v g) { return zm::process_grid(p, g); };
        CHECK(grid(1, v{4, 4, 4}) == std::vector<int>{1, 1, 1});
        CHECK(grid(4, v{16, 4, 2}) == std::vector<int>{4, 1, 1});
        CHECK(grid(4, v{2, 8, 8}) == std::vector<int>{1, 2, 2});
        CHECK(grid(6, v{4, 4, 4}) == std::vector<int>{3, 2, 1});
        CHECK(grid(3, v{1, 9}) == std::vector<int>{1, 3});
        CHECK(grid(8, v{1, 1, 8}) == std::vector<int>{1, 1, 8});
        CHECK(grid(5, v{2, 2}) == std::vector<int>{5, 1}); // more ranks than objects: some get nothing
    }

    TEST_CASE("block decompositions tile the array with whole objects, one rank per object")
    {
        for (int p = 1; p <= 9; ++p)
        {
            CAPTURE(p);
            check_tiling<3>({60, 50, 40}, {16, 50, 40}, p, zm::block{});
            check_tiling<3>({60, 50, 40}, {16, 16, 16}, p, zm::block{});
            check_tiling<2>({10, 7}, {3, 2}, p, zm::block{});
            check_tiling<1>({5}, {2}, p, zm::block{});
            check_tiling<3>({1, 1, 9}, {1, 1, 1}, p, zm::block{});
            check_tiling<2>({0, 4}, {2, 2}, p, zm::block{});
        }
        check_tiling<2>({10, 7}, {3, 2}, 4, zm::block{{1, 4}});
        // Uneven: 4 shards over 3 ranks are 2, 1, 1.
        auto r0 = zm::decompose<3>({60, 50, 40}, {16, 50, 40}, 0, 3);
        auto r2 = zm::decompose<3>({60, 50, 40}, {16, 50, 40}, 2, 3);
        REQUIRE(r0.size() == 1);
        REQUIRE(r2.size() == 1);
        CHECK(r0[0] == zx::region<3>{{0, 0, 0}, {32, 50, 40}});
        CHECK(r2[0] == zx::region<3>{{48, 0, 0}, {12, 50, 40}}); // the ragged last shard
        CHECK(zm::decompose<1>({5}, {2}, 4, 6).empty());         // 3 objects, 6 ranks
    }

    TEST_CASE("block_cyclic deals slabs of whole objects to the ranks in turn")
    {
        const zm::block_cyclic rows{.axis = 0, .block = 2};
        auto r0 = zm::decompose<2>({20, 9}, {3, 4}, 0, 3, rows);
        auto r1 = zm::decompose<2>({20, 9}, {3, 4}, 1, 3, rows);
        CHECK(r0 == std::vector<zx::region<2>>{{{0, 0}, {6, 9}}, {{18, 0}, {2, 9}}});
        CHECK(r1 == std::vector<zx::region<2>>{{{6, 0}, {6, 9}}});
        for (int p = 1; p <= 7; ++p)
        {
            CAPTURE(p);
            check_tiling<2>({20, 9}, {3, 4}, p, rows);
            check_tiling<3>({7, 30, 5}, {2, 4, 5}, p, zm::block_cyclic{.axis = 1, .block = 1});
            check_tiling<3>({7, 30, 5}, {2, 4, 5}, p, zm::block_cyclic{.axis = 2, .block = 3});
        }
    }

    TEST_CASE("decompose refuses layouts that cannot be honoured")
    {
        CHECK_THROWS_WITH_AS(
            zm::decompose<2>({10, 7}, {3, 2}, 0, 4, zm::block{{3, 1}}),
            "[zarrxt.array.8] decompose: the process grid must have 2 positive extents whose "
            "product is the communicator size 4",
            zx::array_error);
        CHECK_THROWS_WITH_AS(
            zm::decompose<2>({10, 7}, {3, 2}, 0, 4, zm::block_cyclic{.axis = 2}),
            "[zarrxt.array.8] decompose: block_cyclic needs an axis below 2 and a block of at least "
            "one object (got axis 2, block 1)",
            zx::array_error);
        CHECK_THROWS_AS(zm::decompose<2>({10, 7}, {3, 2}, 0, 4, zm::block_cyclic{.axis = 0, .block = 0}),
                        zx::array_error);
        CHECK_THROWS_AS(zm::decompose<2>({10, 7}, {3, 2}, 4, 4), zx::array_error);
    }

    TEST_CASE("inner_chunk_shape comes from the sharding codec")
    {
        shared_dir dir;
        zx::filesystem_store store{dir.path()};
        auto s = zm::create<std::int32_t, 3>(world, store, "s",
                                             sharded_int32({60, 50, 40}, {16, 50, 40}, {8, 25, 20}));
        CHECK(zm::inner_chunk_shape(s) == shape_of<3>{8, 25, 20});
        auto c =
            zm::create<std::int32_t, 2>(world, store, "c", zx::v2_options{.shape = {9, 9}, .chunks = {4, 5}});
        CHECK(zm::inner_chunk_shape(c) == shape_of<2>{4, 5});
        auto d = zm::decompose(world, s);
        CHECK(d == zm::decompose<3>(s.shape(), s.chunk_shape(), rank(), size()));
    }

    TEST_CASE("collective create: rank 0 writes the metadata, every rank opens the same array")
    {
        shared_dir dir;
        recording_store store{dir.path()};
        auto a = zm::create<std::int32_t, 3>(world, store, "field",
                                             sharded_int32({60, 50, 40}, {16, 50, 40}, {8, 25, 20}));
        CHECK(a.shape() == shape_of<3>{60, 50, 40});
        CHECK(a.chunk_shape() == shape_of<3>{16, 50, 40});
        const int wrote = static_cast<int>(store.log().written.count("field/zarr.json"));
        int writers = 0;
        MPI_Allreduce(&wrote, &writers, 1, MPI_INT, MPI_SUM, world);
        CHECK(writers == 1);
        CHECK(wrote == (rank() == 0 ? 1 : 0));

        // A second create without overwrite fails on rank 0; every rank gets rank 0's error.
        auto e = expect_collective_error(
            [&] {
                zm::create<std::int32_t, 3>(world, store, "field",
                                            sharded_int32({6, 5, 4}, {2, 5, 4}, {1, 5, 4}));
            });
        REQUIRE(e.has_value());
        CHECK(e->id() == "zarrxt.array.6");
        CHECK(e->origin_rank() == 0);
        CHECK(e->failed_ranks() == 1);
        CHECK(e->message().rfind("on rank 0 of " + std::to_string(size()) + ": ", 0) == 0);

        // Collective open; a missing array fails on every rank.
        auto b = zm::open<std::int32_t, 3>(world, store, "field");
        CHECK(b.shape() == a.shape());
        auto m = expect_collective_error([&] { zm::open<std::int32_t, 3>(world, store, "nothing"); });
        REQUIRE(m.has_value());
        CHECK(m->id() == "zarrxt.array.7");
        CHECK(m->failed_ranks() == size());
        CHECK(m->origin_rank() == 0);
        CHECK(m->key() == "nothing");
    }

    TEST_CASE("a rectilinear grid is refused by decompose and by collective writes, on every rank")
    {
        // The owner of each stored object is computed on a regular grid; a rectilinear one would
        // put two writers on one object, so both entry points refuse it (array.8).
        shared_dir dir;
        zx::filesystem_store store{dir.path()};
        zx::v3_options o{.shape = {12, 6}, .codecs = {zx::codec::bytes{}}};
        o.chunk_edges = {{5, 7}, {6}};
        auto a = zm::create<std::int32_t, 2>(world, store, "r", o);
        REQUIRE(a.core()->metadata().rectilinear);
        zxtest::expect_error<zx::array_error>([&] { (void)zm::decompose(world, a); }, "zarrxt.array.8", "r");
        std::vector<zx::region<2>> mine;
        if (rank() == 0)
        {
            mine = {{{0, 0}, {12, 6}}};
        }
        auto e = expect_collective_error([&] { write_generation(a, mine, 1); });
        REQUIRE(e.has_value());
        CHECK(e->id() == "zarrxt.array.8");
        CHECK(e->failed_ranks() == size());
        CHECK(e->key() == "r");
    }

    TEST_CASE("shard-aligned collective writes: each rank writes whole shards, nobody shares one")
    {
        shared_dir dir;
        recording_store store{dir.path()};
        const shape_of<3> shape{37, 29, 23};
        auto a = zm::create<std::int32_t, 3>(world, store, "f",
                                             sharded_int32({37, 29, 23}, {8, 16, 10}, {4, 8, 5}));
        store.log().clear();
        const auto mine = zm::decompose(world, a);
        CHECK(mine.size() <= 1);
        write_generation(a, mine, 1);
        check_one_writer_per_object(store);
        check_whole(a, whole_of<3>(shape, 1), "block");

        // xtensor expressions go through mpi::write.
        const zx::region<3> r = mine.empty() ? zx::region<3>{} : mine[0];
        auto t = xt::xtensor<std::int32_t, 3>::from_shape({r.extent[0], r.extent[1], r.extent[2]});
        const auto v = values_of<3>(r, shape, 2);
        std::copy(v.begin(), v.end(), t.begin());
        store.log().clear();           // forget check_whole's reads
        zm::write(world, a, r, t + 0); // an expression, not a container
        check_one_writer_per_object(store);
        check_whole(a, whole_of<3>(shape, 2), "expression");

        // block_cyclic along the last axis, several pieces per rank.
        store.log().clear();
        write_generation(a, zm::decompose(world, a, zm::block_cyclic{.axis = 2, .block = 1}), 3);
        check_one_writer_per_object(store);
        check_whole(a, whole_of<3>(shape, 3), "block_cyclic");
    }

    TEST_CASE("unaligned writes: each shared shard is assembled and written by one owner rank")
    {
        shared_dir dir;
        recording_store store{dir.path()};
        const int p = size();
        const shape_of<2> shape{23, 17};
        auto a = zm::create<std::int32_t, 2>(world, store, "u", sharded_int32({23, 17}, {5, 4}, {5, 2}));

        SUBCASE("row bands whose edges fall inside shards")
        {
            std::vector<std::vector<zx::region<2>>> all(static_cast<std::size_t>(p));
            for (int r = 0; r < p; ++r)
            {
                const std::uint64_t lo = 23 * static_cast<std::uint64_t>(r) / p + (r > 0 ? 1 : 0);
                const std::uint64_t hi = 23 * static_cast<std::uint64_t>(r + 1) / p + (r + 1 < p ? 1 : 0);
                all[r].push_back({{lo, 0}, {hi - lo, 17}}); // bands overlap by one row
            }
            store.log().clear();
            write_generation(a, all[rank()], 5);
            check_one_writer_per_object(store);
            check_whole(a, compose<2>(std::vector<std::int32_t>(23 * 17, 0), shape, all, 5), "row bands");
        }
        SUBCASE("column bands over an existing array, covering shards in part (the owner reads the rest)")
        {
            write_generation(a, zm::decompose(world, a), 1); // the old content
            std::vector<std::vector<zx::region<2>>> all(static_cast<std::size_t>(p));
            for (int r = 0; r < p; ++r)
            {
                const std::uint64_t lo = 1 + 3 * static_cast<std::uint64_t>(r);
                all[r].push_back({{2, lo}, {19, 5}}); // rows 2..20, columns overlapping the next rank's
            }
            store.log().clear();
            write_generation(a, all[rank()], 6);
            check_one_writer_per_object(store);
            check_whole(a, compose<2>(whole_of<2>(shape, 1), shape, all, 6), "column bands");
        }
        SUBCASE("many small pieces per rank, dealt round-robin")
        {
            std::vector<std::vector<zx::region<2>>> all(static_cast<std::size_t>(p));
            int k = 0;
            for (std::uint64_t i = 0; i < 23; i += 3)
            {
                for (std::uint64_t j = 0; j < 17; j += 7)
                {
                    all[k++ % p].push_back(
                        {{i, j}, {std::min<std::uint64_t>(3, 23 - i), std::min<std::uint64_t>(7, 17 - j)}});
                }
            }
            store.log().clear();
            write_generation(a, all[rank()], 7);
            check_one_writer_per_object(store);
            check_whole(a, compose<2>(std::vector<std::int32_t>(23 * 17, 0), shape, all, 7), "small pieces");
        }
        SUBCASE("every rank writes the whole array: the last rank's values win")
        {
            std::vector<std::vector<zx::region<2>>> all(static_cast<std::size_t>(p),
                                                        {zx::region<2>::all(shape)});
            std::vector<std::int32_t> mine = whole_of<2>(shape, 10 + rank());
            store.log().clear();
            const zm::piece<std::int32_t, 2> one{zx::region<2>::all(shape), mine.data()};
            zm::write_pieces(world, a, std::span<const zm::piece<std::int32_t, 2>>(&one, 1));
            check_one_writer_per_object(store);
            check_whole(a, whole_of<2>(shape, 10 + p - 1), "everyone writes everything");
        }
    }

    TEST_CASE("unaligned writes to an unsharded v2 array route chunk pieces to owners")
    {
        shared_dir dir;
        recording_store store{dir.path()};
        const int p = size();
        const shape_of<3> shape{9, 11, 13};
        auto a = zm::create<std::int32_t, 3>(
            world, store, "v2", zx::v2_options{.shape = {9, 11, 13}, .chunks = {4, 3, 5}, .order = 'F'});
        std::vector<std::vector<zx::region<3>>> all(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r)
        {
            // Split the innermost axis unevenly: pieces are not contiguous in the source.
            const std::uint64_t lo = 13 * static_cast<std::uint64_t>(r) / p;
            const std::uint64_t hi = 13 * static_cast<std::uint64_t>(r + 1) / p;
            if (hi > lo)
            {
                all[r].push_back({{1, 0, lo}, {7, 11, hi - lo}});
            }
        }
        write_generation(a, all[rank()], 4);
        check_one_writer_per_object(store);
        check_whole(a, compose<3>(std::vector<std::int32_t>(9 * 11 * 13, 0), shape, all, 4), "v2 F order");
    }

    TEST_CASE("a codec_registry reaches every rank: user codecs in chunks and inside shards, owner-written")
    {
        shared_dir dir;
        recording_store store{dir.path()};
        const int p = size();
        const zx::codec_registry reg = zx::codec_registry().add<xor_codec>();
        const shape_of<2> shape{23, 17};
        // Row bands that overlap by one row: shared chunks and shards are routed to owners, whose
        // arrays encode with the registry's codec.
        std::vector<std::vector<zx::region<2>>> all(static_cast<std::size_t>(p));
        for (int r = 0; r < p; ++r)
        {
            const std::uint64_t lo = 23 * static_cast<std::uint64_t>(r) / p + (r > 0 ? 1 : 0);
            const std::uint64_t hi = 23 * static_cast<std::uint64_t>(r + 1) / p + (r + 1 < p ? 1 : 0);
            all[r].push_back({{lo, 0}, {hi - lo, 17}});
        }
        const auto expected = compose<2>(std::vector<std::int32_t>(23 * 17, 0), shape, all, 8);

        // Plain chunks: chunk (0, 0) is stored XORed, little-endian int32 under it.
        auto a = zm::create<std::int32_t, 2>(world, store, "x",
                                             zx::v3_options{.shape = {23, 17},
                                                            .chunk_shape = {5, 4},
                                                            .codecs = {zx::codec::bytes{}, xor_codec{0x3c}}},
                                             reg);
        store.log().clear();
        write_generation(a, all[rank()], 8);
        check_one_writer_per_object(store);
        check_whole(a, expected, "user codec, plain chunks");
        if (rank() == 0)
        {
            // CHECK, not REQUIRE: the other ranks go on to collectives rank 0 must join.
            const auto raw = zx::get(store, "x/c/0/0");
            CHECK(raw.has_value());
            CHECK((raw ? raw->size() : 0) == 5 * 4 * 4);
            std::size_t bad = 0;
            for (std::size_t i = 0; raw && raw->size() == 5 * 4 * 4 && i < 5; ++i)
            {
                for (std::size_t j = 0; j < 4; ++j)
                {
                    const auto v = static_cast<std::uint32_t>(expected[i * 17 + j]);
                    for (std::size_t b = 0; b < 4; ++b)
                    {
                        const auto stored = static_cast<unsigned>(raw->data()[(i * 4 + j) * 4 + b]);
                        bad += stored != (((v >> (8 * b)) & 0xffu) ^ 0x3cu);
                    }
                }
            }
            CHECK(bad == 0);
        }

        // The same codec as a shard's inner codec, reopened collectively with the registry.
        auto s = zm::create<std::int32_t, 2>(
            world, store, "s",
            zx::v3_options{.shape = {23, 17},
                           .chunk_shape = {5, 8},
                           .codecs = {zx::sharded({5, 2}, {zx::codec::bytes{}, xor_codec{0x55}})}},
            reg);
        store.log().clear();
        write_generation(s, all[rank()], 8);
        check_one_writer_per_object(store);
        auto reopened = zm::open<std::int32_t, 2>(world, store, "s", reg);
        check_whole(reopened, expected, "user codec inside shards");

        // Without the registry the codec is unknown on every rank: the typed error, on all of them.
        auto e = expect_collective_error([&] { zm::open<std::int32_t, 2>(world, store, "x"); });
        REQUIRE(e.has_value());
        CHECK(e->id() == "zarrxt.metadata.11");
        CHECK(e->failed_ranks() == p);
    }

    TEST_CASE("an error on one rank reaches every rank, and no rank hangs")
    {
        shared_dir dir;
        zx::filesystem_store store{dir.path()};
        const int p = size();
        const int last = p - 1;
        auto a = zm::create<std::int32_t, 2>(world, store, "e", sharded_int32({40, 6}, {10, 6}, {5, 3}));

        SUBCASE("a region outside the array on the last rank")
        {
            auto mine = zm::decompose(world, a);
            if (rank() == last)
            {
                mine = {{{35, 0}, {10, 6}}};
            }
            auto e = expect_collective_error([&] { write_generation(a, mine, 1); });
            REQUIRE(e.has_value());
            CHECK(e->id() == "zarrxt.array.3");
            CHECK(e->origin_rank() == last);
            CHECK(e->failed_ranks() == 1);
            CHECK(e->key() == "e");
            CHECK(
                std::string(e->what()) ==
                "[zarrxt.array.3] on rank " + std::to_string(last) + " of " + std::to_string(p) +
                    ": region offset [35, 0] extent [10, 6] is outside the array shape [40, 6] (key \"e\")");
        }
        SUBCASE("the file system refuses one rank's shard")
        {
            // A non-empty directory where the last rank's first shard goes: the rename fails there.
            const auto mine = zm::decompose<2>(a.shape(), a.chunk_shape(), last, p);
            REQUIRE(!mine.empty());
            const std::string key = "e/c/" + std::to_string(mine[0].offset[0] / 10) + "/0";
            if (rank() == 0)
            {
                std::filesystem::create_directories(dir.path() / key / "blocker");
            }
            MPI_Barrier(world);
            auto e = expect_collective_error([&] { write_generation(a, zm::decompose(world, a), 1); });
            REQUIRE(e.has_value());
            CHECK(e->category() == "store");
            CHECK(e->origin_rank() == last);
            CHECK(e->key() == key);
            CHECK(e->message().rfind("on rank " + std::to_string(last) + " of " + std::to_string(p) + ": ",
                                     0) == 0);
        }
        SUBCASE("a corrupt shard read by one rank")
        {
            write_generation(a, zm::decompose(world, a), 1);
            const auto mine = zm::decompose<2>(a.shape(), a.chunk_shape(), last, p);
            REQUIRE(!mine.empty());
            const auto path = dir.path() / ("e/c/" + std::to_string(mine[0].offset[0] / 10) + "/0");
            if (rank() == 0)
            {
                std::string bytes = zxtest::read_file(path);
                bytes[bytes.size() - 1] ^= 0x5a; // the index checksum no longer matches
                zxtest::write_file(path, bytes);
            }
            MPI_Barrier(world);
            const auto r = zm::decompose(world, a);
            auto e = expect_collective_error([&] { zm::read(world, a, r.empty() ? zx::region<2>{} : r[0]); });
            REQUIRE(e.has_value());
            CHECK(e->id() == "zarrxt.codec.4");
            CHECK(e->origin_rank() == last);
        }
        SUBCASE("an exception that is not a zarrxt error")
        {
            auto e = expect_collective_error(
                [&]
                {
                    zm::collective(world,
                                   [&]
                                   {
                                       if (rank() == last)
                                       {
                                           throw std::runtime_error("boom");
                                       }
                                   });
                });
            REQUIRE(e.has_value());
            CHECK(std::string(e->what()) ==
                  "[zarrxt.mpi.1] on rank " + std::to_string(last) + " of " + std::to_string(p) + ": boom");
        }
        SUBCASE("a collective call failing inside collective() keeps its origin")
        {
            auto e = expect_collective_error(
                [&]
                {
                    zm::collective(world,
                                   [&]
                                   {
                                       auto mine = zm::decompose(world, a);
                                       if (rank() == last)
                                       {
                                           mine = {{{0, 0}, {41, 6}}};
                                       }
                                       write_generation(a, mine, 2);
                                   });
                });
            REQUIRE(e.has_value());
            CHECK(e->id() == "zarrxt.array.3");
            CHECK(e->origin_rank() == last);
            CHECK(e->failed_ranks() == 1);
            CHECK(e->message().rfind(
                      "on rank " + std::to_string(last) + " of " + std::to_string(p) + ": region", 0) == 0);
        }
        SUBCASE("every rank fails")
        {
            auto e = expect_collective_error(
                [&] {
                    zm::collective(
                        world, [&]() -> int { throw std::runtime_error("rank " + std::to_string(rank())); });
                });
            REQUIRE(e.has_value());
            CHECK(e->failed_ranks() == p);
            CHECK(e->origin_rank() == 0);
            const std::string others =
                p == 1 ? "" : " (and " + std::to_string(p - 1) + " other rank" + (p > 2 ? "s" : "") + ")";
            CHECK(std::string(e->what()) ==
                  "[zarrxt.mpi.1] on rank 0 of " + std::to_string(p) + others + ": rank 0");
        }
        SUBCASE("ranks that make different calls all fail with mpi.2")
        {
            auto b =
                zm::create<std::int32_t, 2>(world, store, "other", sharded_int32({40, 6}, {10, 6}, {5, 3}));
            const zx::region<2> r{{0, 0}, {1, 1}};
            if (p > 1) // one rank cannot disagree with itself
            {
                auto e = expect_collective_error([&] { zm::read(world, rank() == 0 ? a : b, r); });
                REQUIRE(e.has_value());
                CHECK(e->id() == "zarrxt.mpi.2");
                CHECK(e->failed_ranks() == p);
            }
        }
        // After each failure the communicator still works: one more collective write and read.
        auto c = zm::create<std::int32_t, 2>(world, store, "after", sharded_int32({12, 6}, {4, 6}, {2, 3}));
        write_generation(c, zm::decompose(world, c), 9);
        check_whole(c, whole_of<2>({12, 6}, 9), "after an error");
    }

    TEST_CASE("consolidated metadata: v2 .zmetadata and v3 inline consolidated_metadata")
    {
        shared_dir dir;
        zx::filesystem_store store{dir.path()};
        for (int format : {2, 3})
        {
            CAPTURE(format);
            const std::string g = "g" + std::to_string(format);
            zm::collective(world,
                           [&]
                           {
                               if (rank() == 0)
                               {
                                   zx::group<>::create(store, g, {.zarr_format = format});
                                   zx::group<>::create(store, g + "/sub",
                                                       {.zarr_format = format, .attributes = {{"x", 1}}});
                               }
                           });
            if (format == 3)
            {
                zm::create<std::int32_t, 2>(world, store, g + "/a", sharded_int32({8, 8}, {4, 4}, {2, 2}));
                zm::create<std::int32_t, 1>(world, store, g + "/sub/b",
                                            zx::v3_options{.shape = {5}, .chunk_shape = {2}});
            }
            else
            {
                zm::create<std::int32_t, 2>(world, store, g + "/a",
                                            zx::v2_options{.shape = {8, 8}, .chunks = {4, 4}});
                zm::create<std::int32_t, 1>(
                    world, store, g + "/sub/b",
                    zx::v2_options{.shape = {5}, .chunks = {2}, .attributes = {{"units", "m"}}});
            }
            zm::consolidate_metadata(world, store, g);
            const auto read = [&](const std::string& k)
            { return zx::json::parse(zxtest::read_file(dir.path() / k)); };
            if (format == 3)
            {
                const auto root = read(g + "/zarr.json");
                REQUIRE(root.contains("consolidated_metadata"));
                const auto& cm = root["consolidated_metadata"];
                CHECK(cm["kind"] == "inline");
                CHECK(cm["must_understand"] == false);
                std::vector<std::string> keys;
                for (const auto& [k, v] : cm["metadata"].items())
                {
                    keys.push_back(k);
                    CHECK(v == read(g + "/" + k + "/zarr.json"));
                }
                CHECK(keys == std::vector<std::string>{"a", "sub", "sub/b"});
            }
            else
            {
                const auto z = read(g + "/.zmetadata");
                CHECK(z["zarr_consolidated_format"] == 1);
                std::vector<std::string> keys;
                for (const auto& [k, v] : z["metadata"].items())
                {
                    keys.push_back(k);
                    CHECK(v == read(g + "/" + k));
                }
                CHECK(keys == std::vector<std::string>{".zgroup", "a/.zarray", "sub/.zgroup", "sub/.zattrs",
                                                       "sub/b/.zarray", "sub/b/.zattrs"});
            }
            // zarrxt still opens everything from the nodes' own metadata.
            CHECK(zx::group<>::open(store, g).children().size() == 2);
            CHECK(zm::open<std::int32_t, 1>(world, store, g + "/sub/b").shape() == shape_of<1>{5});
        }
    }
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    doctest::Context context;
    context.applyCommandLine(argc, argv);
    if (rank() != 0)
    {
        context.setOption("minimal", true); // rank 0 prints the summary; the others only failures
    }
    const int failed = context.run() != 0 ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world);
    if (rank() == 0)
    {
        std::cout << (any ? "FAILED on some rank" : "passed on every rank") << " (" << size() << " ranks)"
                  << std::endl;
    }
    MPI_Finalize();
    return any;
}
