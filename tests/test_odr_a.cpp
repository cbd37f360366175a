// ODR check, part A: the library used from two translation units linked together (part B in
// test_odr_b.cpp). Every function in the header-only library must be inline or a template.
#include <zarrxt/zarrxt.hpp>

#include <doctest/doctest.h>

float odr_b_read(zarrxt::memory_store& s);

TEST_CASE("two translation units share one array through the same headers")
{
    zarrxt::memory_store s;
    auto a = zarrxt::create<float, 1>(s, "x", zarrxt::v2_options{.shape = {3}, .chunks = {2}});
    a.write({{0}, {3}}, xt::xtensor<float, 1>{1.5f, 2.5f, 3.5f});
    CHECK(odr_b_read(s) == 3.5f);
}
