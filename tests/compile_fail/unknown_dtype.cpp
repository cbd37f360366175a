// An element type without dtype_traits must not compile.
#include <zarrxt/zarrxt.hpp>

struct pixel
{
    char r, g, b;
};
int main() { return sizeof(zarrxt::array<pixel, 2>) > 0 ? 0 : 1; }
