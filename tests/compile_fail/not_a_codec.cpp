// A type that is not a codec must not compile as a chain element.
#include <zarrxt/zarrxt.hpp>

struct not_a_codec
{
};
int main() { return sizeof(zarrxt::chain<zarrxt::codec::bytes<>, not_a_codec>) > 0 ? 0 : 1; }
