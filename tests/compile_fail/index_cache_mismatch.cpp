// A static sharding codec compiled for one IndexCache cannot be given another by the array.
#include <zarrxt/zarrxt.hpp>

namespace zx = zarrxt;
using inner = zx::chain<zx::codec::bytes<>>;
using index_chain = zx::chain<zx::codec::bytes<>, zx::codec::crc32c>;
using sharded = zx::codec::sharding_indexed<inner, index_chain, zx::lru_index_cache<>>;

int main()
{
    zx::memory_store s;
    auto a = zx::open<std::uint16_t, 2, sharded, zx::no_index_cache>(s, "a");
    return a.rank == 2 ? 0 : 1;
}
