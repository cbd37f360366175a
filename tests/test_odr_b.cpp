// ODR check, part B (part A is at the end of test_readme.cpp).
#include <zarrxt/zarrxt.hpp>

float odr_b_read(zarrxt::memory_store& s)
{
    return zarrxt::open<float, 1>(s, "x").read({{2}, {1}})(0);
}
