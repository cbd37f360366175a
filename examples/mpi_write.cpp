// Many processes, one array: every MPI rank computes its part of a 3-D field and writes it into
// one sharded Zarr v3 array, then reads its neighbour's part back and checks it.
//   mpirun -np 4 ./mpi_write DIR
#include <zarrxt/mpi.hpp>
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

// The field at (i, j, k); small integers, so float holds them exactly.
float field(std::uint64_t i, std::uint64_t j, std::uint64_t k)
{
    return static_cast<float>(i * 10000 + j * 100 + k);
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    try
    {
        zx::filesystem_store store{argc > 1 ? argv[1] : "."};
        // Rank 0 writes the metadata, the others wait and open. A shard (16 x 50 x 40) is the
        // unit one rank writes; inside it, 8 x 25 x 20 chunks are compressed one by one.
        auto a = zx::mpi::create<float, 3>(
            MPI_COMM_WORLD, store, "field",
            zx::v3_options{
                .shape = {60, 50, 40},
                .chunk_shape = {16, 50, 40},
                .codecs = {zx::sharded({8, 25, 20}, {zx::codec::bytes{}, zx::codec::zstd{.level = 1}})}});

        // Shard-aligned blocks, one per rank (none for a rank beyond the number of shards).
        auto part_of = [&](int r)
        {
            auto regions = zx::mpi::decompose<3>(a.shape(), a.chunk_shape(), r, size);
            return regions.empty() ? zx::region<3>{} : regions.front();
        };
        const zx::region<3> mine = part_of(rank);
        auto values = xt::xtensor<float, 3>::from_shape({mine.extent[0], mine.extent[1], mine.extent[2]});
        for (std::size_t i = 0; i < mine.extent[0]; ++i)
            for (std::size_t j = 0; j < mine.extent[1]; ++j)
                for (std::size_t k = 0; k < mine.extent[2]; ++k)
                    values(i, j, k) = field(mine.offset[0] + i, mine.offset[1] + j, mine.offset[2] + k);
        zx::mpi::write(MPI_COMM_WORLD, a, mine, values); // no two ranks touch one shard

        // Read the next rank's part and check every value.
        const zx::region<3> theirs = part_of((rank + 1) % size);
        const auto got = zx::mpi::read(MPI_COMM_WORLD, a, theirs);
        long long local[2] = {static_cast<long long>(got.size()), 0}, total[2] = {0, 0};
        for (std::size_t i = 0; i < theirs.extent[0]; ++i)
            for (std::size_t j = 0; j < theirs.extent[1]; ++j)
                for (std::size_t k = 0; k < theirs.extent[2]; ++k)
                    local[1] += got(i, j, k) !=
                                field(theirs.offset[0] + i, theirs.offset[1] + j, theirs.offset[2] + k);
        MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
        {
            std::cout << "wrote field: shape [60, 50, 40], shards [16, 50, 40], chunks [8, 25, 20]\n"
                      << "read back by the neighbours: " << total[0] << " values, " << total[1] << " wrong\n";
        }
        status = total[1] == 0 ? 0 : 1;
    }
    catch (const zx::error& e) // a collective_error on every rank when any rank failed
    {
        std::cerr << "rank " << rank << ": " << e.what() << "\n";
        status = 1;
    }
    MPI_Finalize();
    return status;
}
