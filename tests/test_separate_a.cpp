// Separate compilation (ZARRXT_SEPARATE_COMPILATION): this unit and test_separate_b.cpp use the
// library with the metadata parsers and the codec registry only declared; they are defined once in
// the zarrxt_compiled library. Linking proves nothing is missing or defined twice.
#include "support/test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#if !defined(ZARRXT_SEPARATE_COMPILATION) || ZARRXT_DEFINITIONS
#error "this test must be built in separate-compilation mode"
#endif

float separate_b_sum(zarrxt::memory_store& s);

TEST_CASE("separate compilation: v2 and v3 arrays, sharded, across two units")
{
    zarrxt::memory_store s;
    auto a = zarrxt::create<float, 1>(s, "v2", zarrxt::v2_options{.shape = {4}, .chunks = {2}});
    a.write({{0}, {4}}, xt::xtensor<float, 1>{1.0f, 2.0f, 3.0f, 4.0f});
    auto b = zarrxt::create<float, 1>(s, "v3", zarrxt::v3_options{.shape = {4}, .chunk_shape = {4}, .codecs = {zarrxt::sharded({2})}});
    b.write({{0}, {4}}, xt::xtensor<float, 1>{10.0f, 20.0f, 30.0f, 40.0f});
    CHECK(separate_b_sum(s) == 110.0f);
    CHECK_THROWS_AS((zarrxt::create<float, 1>(s, "bad", zarrxt::v3_options{.shape = {4}, .chunk_shape = {4}, .codecs = {zarrxt::codec_spec("nope")}})),
                    zarrxt::metadata_error);
}
