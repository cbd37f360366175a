// Codec chains: a static chain<...> and the metadata-built dynamic_chain decode the same bytes to
// the same values; a static chain refuses metadata that differs; chain order is checked at open.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

namespace zx = zarrxt;
using zxtest::make_data;
using zxtest::tensors_equal;

TEST_SUITE("chain")
{
    TEST_CASE("static and dynamic chains decode identically")
    {
        zx::memory_store s;
        const auto data = make_data<float, 3>({9, 10, 11});
        auto dyn = zx::create<float, 3>(
            s, "a",
            zx::v3_options{.shape = {9, 10, 11},
                           .chunk_shape = {4, 5, 6},
                           .codecs = {zx::codec_spec("transpose", {{"order", {2, 0, 1}}}), zx::codec_spec("bytes", {{"endian", "big"}}),
                                      zx::codec_spec("zstd", {{"level", 5}}), zx::codec_spec("crc32c")}});
        dyn.write({{0, 0, 0}, {9, 10, 11}}, data);
        using static_chain = zx::chain<zx::codec::transpose, zx::codec::bytes<>, zx::codec::zstd, zx::codec::crc32c>;
        auto st = zx::open<float, 3, static_chain>(s, "a");
        CHECK(tensors_equal(st.read(), data));
        CHECK(tensors_equal(st.read({{1, 2, 3}, {5, 5, 5}}), dyn.read({{1, 2, 3}, {5, 5, 5}})));
        CHECK(st.chain().get<2>().level == 5); // configuration values come from the metadata
        CHECK(st.codecs() == dyn.codecs());

        // Decode the same stored chunk through both chain objects directly.
        auto raw = zx::get(s, "a/c/1/1/1");
        REQUIRE(raw.has_value());
        zx::buffer copy1 = zx::buffer::copy_of(raw->view());
        zx::buffer copy2 = zx::buffer::copy_of(raw->view());
        zx::codec::scratch_space s1, s2;
        const auto lv = zx::limit_values::from(zx::default_limits{});
        const auto v1 = st.chain().decode(copy1.mutable_view(), s1, lv);
        const auto v2 = dyn.chain().decode(copy2.mutable_view(), s2, lv);
        REQUIRE(v1.shape == v2.shape);
        CHECK(v1.strides == v2.strides);
        CHECK(std::memcmp(v1.data, v2.data, 4 * 5 * 6 * 4) == 0);
        // Writing through the static chain produces bytes the dynamic chain reads.
        st.write({{0, 0, 0}, {2, 2, 2}}, xt::ones<float>({2, 2, 2}));
        CHECK(dyn.read({{0, 0, 0}, {2, 2, 2}}) == xt::ones<float>({2, 2, 2}));
    }

    TEST_CASE("a static chain refuses metadata naming other codecs, naming the first difference")
    {
        zx::memory_store s;
        zx::create<std::int16_t, 1>(s, "a", zx::v3_options{.shape = {8}, .chunk_shape = {4}});
        CHECK_THROWS_WITH_AS((zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<>, zx::codec::gzip>>(s, "a")),
                             "[zarrxt.array.5] static codec chain [bytes, gzip] does not match the stored chain [bytes, "
                             "zstd]: codec #1 is \"zstd\", the chain type expects \"gzip\" (key \"a/zarr.json\")",
                             zx::chain_mismatch);
        CHECK_THROWS_WITH_AS((zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<>>>(s, "a")),
                             doctest::Contains("codec #1 is \"zstd\", the chain type expects no more codecs"), zx::chain_mismatch);
        CHECK_THROWS_WITH_AS(
            (zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<>, zx::codec::zstd, zx::codec::crc32c>>(s, "a")),
            doctest::Contains("codec #2 is missing"), zx::chain_mismatch);
        // A fixed byte order in the type is checked against the metadata's value.
        CHECK_NOTHROW(
            (zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<zx::codec::endian_mode::little>, zx::codec::zstd>>(s, "a")));
        CHECK_THROWS_AS((zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<zx::codec::endian_mode::big>, zx::codec::zstd>>(s, "a")),
                        zx::metadata_error);
        // v2 arrays lower to the same model, so a static chain opens them too.
        zx::create<std::int16_t, 1>(s, "v2", zx::v2_options{.shape = {8}, .chunks = {4}, .compressor = zx::codec_spec("zlib", {{"level", 1}})});
        CHECK_NOTHROW((zx::open<std::int16_t, 1, zx::chain<zx::codec::bytes<>, zx::codec::zlib>>(s, "v2")));
    }

    TEST_CASE("chains built from metadata check the order of codec kinds")
    {
        zx::codec::codec_context ctx;
        ctx.dtype = zx::dtype_id::int32;
        ctx.chunk_shape = {4};
        CHECK_THROWS_WITH_AS(zx::dynamic_chain::from_specs({zx::codec_spec("gzip"), zx::codec_spec("bytes")}, ctx),
                             "[zarrxt.metadata.13] codec \"bytes\" (array->bytes) cannot follow \"gzip\"; the order is "
                             "array->array codecs, one array->bytes codec, then bytes->bytes codecs",
                             zx::metadata_error);
        CHECK_THROWS_WITH_AS(zx::dynamic_chain::from_specs({zx::codec_spec("gzip")}, ctx),
                             "[zarrxt.metadata.13] a codec chain needs exactly one array->bytes codec (such as \"bytes\"), "
                             "found 0",
                             zx::metadata_error);
        CHECK_THROWS_AS(zx::dynamic_chain::from_specs({zx::codec_spec("bytes"), zx::codec_spec("bytes")}, ctx), zx::metadata_error);
        CHECK_THROWS_WITH_AS(zx::dynamic_chain::from_specs({zx::codec_spec("bytes"), zx::codec_spec("lzma")}, ctx),
                             doctest::Contains("[zarrxt.metadata.11] codec \"lzma\" is not supported by zarrxt"), zx::metadata_error);
        auto c = zx::dynamic_chain::from_specs({zx::codec_spec("bytes"), zx::codec_spec("crc32c")}, ctx);
        CHECK(c.fixed_encoded_size() == std::optional<std::size_t>(20));
        CHECK(c.size() == 2);
    }
}
