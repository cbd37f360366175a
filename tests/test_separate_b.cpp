// Separate compilation, part B (see test_separate_a.cpp).
#include <zarrxt/zarrxt.hpp>

float separate_b_sum(zarrxt::memory_store& s)
{
    float sum = 0;
    for (float v : zarrxt::open<float, 1>(s, "v2").read())
        sum += v;
    for (float v : zarrxt::open<float, 1>(s, "v3").read())
        sum += v;
    return sum;
}
