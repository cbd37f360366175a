// Codec chains: a static chain<...> and the metadata-built dynamic_chain decode the same bytes to
// the same values; a static chain refuses metadata that differs; chain order is checked at open.
#include "array_support.hpp"
#include "xor_codec.hpp"

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

// User codecs through a codec_registry (codec/codec_registry.hpp): a registry is a value given where
// an array is opened or created, consulted before the built-ins by every chain built for the array.
namespace
{

using zxtest::xor_codec; // tests/support/xor_codec.hpp

// Another implementation under the same name (XOR with 0xff, ignoring the key): what one registry
// calls "test.xor" must not leak into arrays opened with another.
struct xor_ff_codec : xor_codec
{
    static xor_ff_codec from_json(const zx::json& cfg, const zx::codec::codec_context&)
    {
        xor_ff_codec c;
        c.key = 0xff;
        (void)cfg;
        return c;
    }
    zx::json to_json() const { return {{"key", 0x5a}}; } // writes the same JSON as xor_codec
};
static_assert(zx::codec::bytes_to_bytes_codec<xor_ff_codec>);

// array -> array on uint8 arrays: add `add` to every element (mod 256).
struct add_codec
{
    using codec_kind = zx::codec::array_to_array_tag;
    static constexpr std::string_view name = "test.add";
    int add = 1;

    static add_codec from_json(const zx::json& cfg, const zx::codec::codec_context& ctx)
    {
        if (ctx.dtype.id != zx::dtype_id::uint8)
        {
            zx::codec::detail::bad_config(name, "only uint8 arrays");
        }
        return add_codec{cfg.value("add", 1)};
    }
    zx::json to_json() const { return {{"add", add}}; }
    zx::dims encoded_shape(const zx::dims& s) const { return s; }
    zx::codec::array_view decode(zx::codec::array_view v, zx::buffer&) const
    {
        shift(v, -add); // in place: the chain hands a C-contiguous array it owns
        return v;
    }
    zx::codec::array_view encode(zx::codec::array_view v, zx::buffer& out) const
    {
        const std::size_t n = static_cast<std::size_t>(v.elements());
        out.resize_discard(n);
        if (n != 0)
        {
            std::memcpy(out.data(), v.data, n);
        }
        v.data = out.data();
        shift(v, add);
        return v;
    }
    static void shift(const zx::codec::array_view& v, int by)
    {
        for (std::uint64_t i = 0; i < v.elements(); ++i)
        {
            v.data[i] =
                static_cast<std::byte>(static_cast<std::uint8_t>(std::to_integer<int>(v.data[i]) + by));
        }
    }
};
static_assert(zx::codec::array_to_array_codec<add_codec>);

// Overrides the built-in "gzip": stores the bytes as they are (a stand-in for a faster gzip).
struct plain_gzip
{
    using codec_kind = zx::codec::bytes_to_bytes_tag;
    static constexpr std::string_view name = "gzip";
    static plain_gzip from_json(const zx::json&, const zx::codec::codec_context&) { return {}; }
    zx::json to_json() const { return {{"level", 5}}; }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }
    void encode(zx::byte_view in, zx::buffer& out) const { out = zx::buffer::copy_of(in); }
    zx::mutable_byte_view decode(zx::mutable_byte_view in, zx::buffer&, const zx::codec::decode_hint&) const
    {
        return in;
    }
};

std::vector<int> bytes_of(const zx::buffer& b)
{
    std::vector<int> out;
    for (std::size_t i = 0; i < b.size(); ++i)
    {
        out.push_back(std::to_integer<int>(b.data()[i]));
    }
    return out;
}

std::uint64_t le64(const std::byte* p)
{
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
    {
        v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    }
    return v;
}

} // namespace

TEST_SUITE("chain")
{
    TEST_CASE(
        "codec_registry: a user bytes->bytes codec in a dynamic chain is written, read and named in errors")
    {
        zx::memory_store s;
        zx::codec_registry reg;
        reg.add<xor_codec>();
        CHECK(reg.names() == std::vector<std::string>{"test.xor"});
        const xt::xtensor<std::uint8_t, 1> data{1, 2, 3, 4, 5, 6};
        auto a = zx::create<std::uint8_t, 1>(
            s, "a",
            zx::v3_options{.shape = {6}, .chunk_shape = {6}, .codecs = {zx::codec::bytes{}, xor_codec{0x0f}}},
            reg);
        a.write({{0}, {6}}, data);
        const auto raw = zx::get(s, "a/c/0");
        REQUIRE(raw.has_value());
        CHECK(bytes_of(*raw) == std::vector<int>{1 ^ 0x0f, 2 ^ 0x0f, 3 ^ 0x0f, 4 ^ 0x0f, 5 ^ 0x0f, 6 ^ 0x0f});
        CHECK(a.codecs()[1].name == "test.xor");
        CHECK(a.codecs()[1].configuration == zx::json{{"key", 0x0f}});
        CHECK(zx::open<std::uint8_t, 1>(s, "a", reg).read() == data);
        // open_any and visit carry the registry to the typed handles they make.
        auto any = zx::open_any(s, "a", reg);
        zx::visit(
            any,
            [&](auto& t)
            {
                if constexpr (std::is_same_v<typename std::decay_t<decltype(t)>::value_type, std::uint8_t> &&
                              std::decay_t<decltype(t)>::rank == 1)
                {
                    CHECK(t.read() == data);
                }
                else
                {
                    FAIL("visit chose another type");
                }
            });
        // Without the registry the same array is the typed unknown-codec error, listing the
        // built-ins; with another registry, its names too.
        CHECK_THROWS_WITH_AS(
            (zx::open<std::uint8_t, 1>(s, "a")),
            doctest::Contains("[zarrxt.metadata.11] codec \"test.xor\" is not supported by zarrxt "
                              "(supported: bytes, transpose,"),
            zx::metadata_error);
        CHECK_THROWS_WITH_AS(zx::open_any(s, "a"), doctest::Contains("numcodecs.packbits) (key"),
                             zx::metadata_error);
        zx::codec_registry other;
        other.add<add_codec>().add<plain_gzip>();
        CHECK_THROWS_WITH_AS((zx::open<std::uint8_t, 1>(s, "a", other)),
                             doctest::Contains("numcodecs.packbits; registered: test.add, gzip)"),
                             zx::metadata_error);
    }

    TEST_CASE("codec_registry: a user array->array codec in a dynamic chain")
    {
        zx::memory_store s;
        const zx::codec_registry reg = zx::codec_registry().add<add_codec>().add<xor_codec>();
        const xt::xtensor<std::uint8_t, 2> data{{0, 1, 2}, {253, 254, 255}};
        auto a = zx::create<std::uint8_t, 2>(
            s, "a",
            zx::v3_options{.shape = {2, 3},
                           .chunk_shape = {2, 3},
                           .codecs = {add_codec{3}, zx::codec::bytes{}, xor_codec{1}}},
            reg);
        a.write({{0, 0}, {2, 3}}, data);
        const auto raw = zx::get(s, "a/c/0/0");
        REQUIRE(raw.has_value());
        CHECK(bytes_of(*raw) == std::vector<int>{3 ^ 1, 4 ^ 1, 5 ^ 1, 0 ^ 1, 1 ^ 1, 2 ^ 1});
        CHECK(zx::open<std::uint8_t, 2>(s, "a", reg).read() == data);
        // The codec's own from_json runs with the array's context: it refuses another dtype.
        CHECK_THROWS_WITH_AS(
            (zx::create<std::int16_t, 1>(
                s, "b",
                zx::v3_options{.shape = {4}, .chunk_shape = {4}, .codecs = {add_codec{}, zx::codec::bytes{}}},
                reg)),
            doctest::Contains("[zarrxt.metadata.12] test.add: only uint8 arrays"), zx::metadata_error);
    }

    TEST_CASE("codec_registry: a user codec inside a sharding_indexed codec's inner chain")
    {
        zx::memory_store s;
        zx::codec_registry reg;
        reg.add<xor_codec>();
        const xt::xtensor<std::uint8_t, 1> data{10, 11, 12, 13, 14, 15, 16, 17};
        auto a = zx::create<std::uint8_t, 1>(
            s, "a",
            zx::v3_options{.shape = {8},
                           .chunk_shape = {8},
                           .codecs = {zx::sharded({4}, {zx::codec::bytes{}, xor_codec{0x33}})}},
            reg);
        a.write({{0}, {8}}, data);
        const auto shard = zx::get(s, "a/c/0");
        REQUIRE(shard.has_value());
        // Index at the end: two (offset, nbytes) entries of little-endian uint64, then a crc32c.
        REQUIRE(shard->size() == 8 + 2 * 16 + 4);
        const std::byte* index = shard->data() + 8;
        for (std::size_t k = 0; k < 2; ++k)
        {
            const std::uint64_t off = le64(index + 16 * k);
            REQUIRE(le64(index + 16 * k + 8) == 4);
            REQUIRE(off + 4 <= 8);
            for (std::size_t i = 0; i < 4; ++i)
            {
                CHECK(std::to_integer<int>(shard->data()[off + i]) == (data(4 * k + i) ^ 0x33));
            }
        }
        CHECK(zx::open<std::uint8_t, 1>(s, "a", reg).read() == data);
        CHECK(zx::open<std::uint8_t, 1>(s, "a", reg).read({{2}, {3}}) ==
              xt::xtensor<std::uint8_t, 1>{12, 13, 14});
        CHECK(zx::open_any(s, "a", reg).as<std::uint8_t, 1>().read() == data);
        // A static sharding codec builds its inner dynamic chain from the same context.
        CHECK(zx::open<std::uint8_t, 1, zx::chain<zx::codec::sharding_indexed<>>>(s, "a", reg).read() ==
              data);
        CHECK_THROWS_WITH_AS(
            (zx::open<std::uint8_t, 1>(s, "a")),
            doctest::Contains("[zarrxt.metadata.11] codec \"test.xor\" is not supported by zarrxt"),
            zx::metadata_error);
    }

    TEST_CASE("codec_registry: arrays opened with different registries do not interfere")
    {
        zx::memory_store s;
        zx::codec_registry first;
        first.add<xor_codec>();
        const zx::codec_registry before = first; // a copy keeps the codecs it had
        zx::codec_registry second = first;
        second.add<xor_ff_codec>(); // replaces "test.xor" in `second` only
        CHECK(second.names() == std::vector<std::string>{"test.xor"});
        const xt::xtensor<std::uint8_t, 1> data{1, 2, 3, 4};
        const zx::v3_options o{.shape = {4}, .chunk_shape = {4}, .codecs = {zx::codec::bytes{}, xor_codec{}}};
        auto a = zx::create<std::uint8_t, 1>(s, "a", o, first);
        auto b = zx::create<std::uint8_t, 1>(s, "b", o, second);
        a.write({{0}, {4}}, data);
        b.write({{0}, {4}}, data);
        CHECK(bytes_of(*zx::get(s, "a/c/0")) == std::vector<int>{1 ^ 0x5a, 2 ^ 0x5a, 3 ^ 0x5a, 4 ^ 0x5a});
        CHECK(bytes_of(*zx::get(s, "b/c/0")) == std::vector<int>{1 ^ 0xff, 2 ^ 0xff, 3 ^ 0xff, 4 ^ 0xff});
        // Both handles live at once; each decodes with its own implementation.
        CHECK(a.read() == data);
        CHECK(b.read() == data);
        CHECK(zx::open<std::uint8_t, 1>(s, "a", before).read() == data);
        CHECK(zx::open<std::uint8_t, 1>(s, "b", second).read() == data);
        // The other registry's "test.xor" reads the other array's bytes differently.
        CHECK(zx::open<std::uint8_t, 1>(s, "a", second).read() != data);
        // A handle keeps its registry when it reopens the metadata.
        b.refresh();
        CHECK(b.read() == data);
    }

    TEST_CASE("codec_registry: a user codec overrides a built-in of the same name")
    {
        zx::memory_store s;
        zx::codec_registry reg;
        reg.add<plain_gzip>();
        const xt::xtensor<std::uint8_t, 1> data{7, 7, 7, 7, 8};
        auto a = zx::create<std::uint8_t, 1>(
            s, "a",
            zx::v3_options{
                .shape = {5}, .chunk_shape = {5}, .codecs = {zx::codec::bytes{}, zx::codec::gzip{}}},
            reg);
        a.write({{0}, {5}}, data);
        CHECK(bytes_of(*zx::get(s, "a/c/0")) == std::vector<int>{7, 7, 7, 7, 8}); // not a gzip stream
        CHECK(a.codecs()[1].configuration == zx::json{{"level", 5}});
        CHECK(zx::open<std::uint8_t, 1>(s, "a", reg).read() == data);
        // The built-in gzip still reads arrays opened without the registry (and refuses these bytes).
        CHECK_THROWS_AS((zx::open<std::uint8_t, 1>(s, "a").read()), zx::codec_error);
        auto g = zx::create<std::uint8_t, 1>(
            s, "g",
            zx::v3_options{
                .shape = {5}, .chunk_shape = {5}, .codecs = {zx::codec::bytes{}, zx::codec::gzip{}}});
        g.write({{0}, {5}}, data);
        CHECK(zx::get(s, "g/c/0")->size() != 5);
        CHECK(g.read() == data);
        // v2 ids are a closed mapping onto v3 names (metadata/v2.hpp), so a v2 array reaches a user
        // codec only through the name its id lowers to: here the "gzip" compressor.
        auto v2 = zx::create<std::uint8_t, 1>(
            s, "v2", zx::v2_options{.shape = {5}, .chunks = {5}, .compressor = zx::codec::gzip{}}, reg);
        v2.write({{0}, {5}}, data);
        CHECK(bytes_of(*zx::get(s, "v2/0")) == std::vector<int>{7, 7, 7, 7, 8});
        CHECK(zx::open<std::uint8_t, 1>(s, "v2", reg).read() == data);
    }
}
