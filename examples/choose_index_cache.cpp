// choose_index_cache: the same sharded array read many times with the default per-call cache and
// with a persistent LRU cache shared across calls.
//   usage: choose_index_cache DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

template <class Array>
void read_tiles(Array a, const char* label)
{
    for (std::uint64_t k = 0; k < 16; ++k) // 16 small reads spread over one shard
        a.read({{k * 8, k * 8}, {4, 4}});
    const auto s = a.stats();
    std::cout << label << ": index reads " << s.index_reads << ", cache hits " << s.index_cache_hits
              << ", payload reads " << s.payload_reads << "\n";
}

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::filesystem_store store(argv[1]);
    auto w = zx::create<std::int16_t, 2>(store, "a",
                                         zx::v3_options{.shape = {128, 128}, .chunk_shape = {128, 128},
                                                        .codecs = {zx::sharded({8, 8})}});
    w.write({{0, 0}, {128, 128}}, xt::ones<std::int16_t>({128, 128}));

    read_tiles(zx::open<std::int16_t, 2>(store, "a"), "per-call cache (default)");
    read_tiles(zx::open<std::int16_t, 2, zx::dynamic_chain, zx::lru_index_cache<>>(store, "a"), "lru cache");
    read_tiles(zx::open<std::int16_t, 2, zx::dynamic_chain, zx::no_index_cache>(store, "a"), "no cache");
}
