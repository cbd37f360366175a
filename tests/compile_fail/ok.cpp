// Positive control: a correctly ordered static chain and a valid element type compile.
#include <zarrxt/zarrxt.hpp>

using ok_chain = zarrxt::chain<zarrxt::codec::transpose, zarrxt::codec::bytes<>, zarrxt::codec::zstd,
                               zarrxt::codec::crc32c>;
using ok_array = zarrxt::array<std::uint16_t, 3, ok_chain>;
static_assert(ok_array::rank == 3);
int main() { return 0; }
