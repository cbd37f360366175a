// Template rot: explicitly instantiate every member of array<T, N, ...> for each element type, for
// ranks 0..4, and for every codec chain kind and cache/executor/store policy, so that code paths no
// other test calls still compile.
#include <zarrxt/zarrxt.hpp>

#include <doctest/doctest.h>

namespace zx = zarrxt;

// Every element type at rank 2.
template class zarrxt::array<bool, 2>;
template class zarrxt::array<std::int8_t, 2>;
template class zarrxt::array<std::int16_t, 2>;
template class zarrxt::array<std::int32_t, 2>;
template class zarrxt::array<std::int64_t, 2>;
template class zarrxt::array<std::uint8_t, 2>;
template class zarrxt::array<std::uint16_t, 2>;
template class zarrxt::array<std::uint32_t, 2>;
template class zarrxt::array<std::uint64_t, 2>;
template class zarrxt::array<zarrxt::float16, 2>;
template class zarrxt::array<float, 2>;
template class zarrxt::array<double, 2>;
template class zarrxt::array<std::complex<float>, 2>;
template class zarrxt::array<std::complex<double>, 2>;
template class zarrxt::array<zarrxt::bfloat16, 2>;
template class zarrxt::array<zarrxt::float8_e3m4, 2>;
template class zarrxt::array<zarrxt::float8_e4m3, 2>;
template class zarrxt::array<zarrxt::float8_e4m3b11fnuz, 2>;
template class zarrxt::array<zarrxt::float8_e4m3fnuz, 2>;
template class zarrxt::array<zarrxt::float8_e5m2, 2>;
template class zarrxt::array<zarrxt::float8_e5m2fnuz, 2>;
template class zarrxt::array<zarrxt::float8_e8m0fnu, 2>;
template class zarrxt::array<std::string, 2>; // fixed-width strings: every member compiles for it too
// Ranks 0..4.
template class zarrxt::array<float, 0>;
template class zarrxt::array<float, 1>;
template class zarrxt::array<float, 3>;
template class zarrxt::array<float, 4>;
// Policies.
template class zarrxt::array<float, 2, zx::chain<zx::codec::transpose, zx::codec::bytes<>, zx::codec::gzip, zx::codec::crc32c>>;
template class zarrxt::array<float, 2, zx::chain<zx::codec::bytes<zx::codec::endian_mode::big>, zx::codec::zlib>>;
template class zarrxt::array<float, 2, zx::chain<zx::codec::bytes<>, zx::codec::blosc>>;
template class zarrxt::array<
    std::uint16_t, 2,
    zx::codec::sharding_indexed<zx::chain<zx::codec::bytes<>, zx::codec::zstd>,
                                zx::chain<zx::codec::bytes<>, zx::codec::crc32c>, zx::lru_index_cache<>>,
    zx::filesystem_store, zx::lru_index_cache<>>;
template class zarrxt::array<float, 2, zx::dynamic_chain, zx::memory_store, zx::no_index_cache>;
template class zarrxt::array<float, 2, zx::dynamic_chain, zx::counting_store<zx::memory_store>, zx::lru_index_cache<1 << 20>>;
template class zarrxt::array<float, 2, zx::dynamic_chain, zx::filesystem_store, zx::operation_index_cache<4096, 2>,
                             zx::thread_pool_executor, zx::unlimited_limits>;
template class zarrxt::group<zx::memory_store>;
template class zarrxt::any_array<zx::memory_store>;

TEST_CASE("explicit instantiations link")
{
    CHECK(zx::array<float, 2>::rank == 2);
}
