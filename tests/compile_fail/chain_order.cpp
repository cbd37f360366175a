// A bytes->bytes codec before the array->bytes codec must not compile.
#include <zarrxt/zarrxt.hpp>

using bad_chain = zarrxt::chain<zarrxt::codec::zstd, zarrxt::codec::bytes<>>;
bad_chain* instantiate = nullptr;
int main() { return sizeof(bad_chain) > 0 ? 0 : 1; }
