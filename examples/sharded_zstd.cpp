// sharded_zstd: a sharded v3 array (512x512 shards of 64x64 zstd inner chunks) and the I/O a small
// read costs: one index read and one payload read, never the whole shard.
//   usage: sharded_zstd DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::filesystem_store store(argv[1]);
    auto a = zx::create<std::uint16_t, 2>(
        store, "image",
        zx::v3_options{.shape = {1024, 1024},
                       .chunk_shape = {512, 512},
                       .codecs = {zx::sharded({64, 64}, {zx::codec::bytes{}, zx::codec::zstd{.level = 3}})}});
    xt::xtensor<std::uint16_t, 2> img = xt::xtensor<std::uint16_t, 2>::from_shape({1024, 1024});
    for (std::size_t i = 0; i < 1024; ++i)
        for (std::size_t j = 0; j < 1024; ++j)
            img(i, j) = static_cast<std::uint16_t>((i * 17 + j * 31) % 65521 + 1);
    a.write({{0, 0}, {1024, 1024}}, img);
    std::cout << "shards: " << store.list("image/c").size() << "\n";

    a.reset_stats();
    auto tile = a.read({{100, 200}, {10, 10}}); // inside one 64x64 inner chunk
    const auto s = a.stats();
    std::cout << "value at [100, 200]: " << tile(0, 0) << "\n";
    std::cout << "index reads " << s.index_reads << " (" << s.index_bytes << " bytes), payload reads "
              << s.payload_reads << "\n";
    std::cout << "payload smaller than a shard: " << (s.payload_bytes < store.stat("image/c/0/0")->size ? "yes" : "no")
              << "\n";
}
