// User data types through a codec_registry (user_dtype.hpp): a type the program describes is
// written under its own name, byte-swapped in its own words, filled with its own fill values, and
// refused with typed errors where it cannot be what a document says.
#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <doctest/doctest.h>
#include <xtensor/xview.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace zx = zarrxt;

namespace
{

// Three 16-bit channels: a type no Zarr implementation knows, swapped as 16-bit words.
struct rgb16
{
    std::uint16_t r = 0, g = 0, b = 0;
    friend bool operator==(const rgb16&, const rgb16&) = default;
};

// The same size under another name: opening one as the other must fail.
struct yuv16
{
    std::uint16_t y = 0, u = 0, v = 0;
};

// 24 bytes: wider than the 16 bytes a fill value keeps inline.
struct vec3d
{
    double x = 0, y = 0, z = 0;
    friend bool operator==(const vec3d&, const vec3d&) = default;
};

// A packed type with a configuration: 4-bit pairs, one byte.
struct nibbles
{
    std::uint8_t bits = 0;
};

} // namespace

template <>
struct zarrxt::dtype_traits<rgb16>
{
    static constexpr dtype_id id = dtype_id::user;
    static constexpr std::string_view name = "test.rgb16";
    static constexpr std::size_t swap_word = 2;
    static rgb16 fill_from_json(const json& j)
    {
        if (!j.is_array() || j.size() != 3)
        {
            throw std::invalid_argument("expected [r, g, b]");
        }
        rgb16 v;
        std::uint16_t* out[3] = {&v.r, &v.g, &v.b};
        for (std::size_t i = 0; i < 3; ++i)
        {
            // A literal 7 in C++ is a signed JSON integer; a parsed 7 is unsigned.
            if (!j[i].is_number_integer() || j[i].get<std::int64_t>() < 0 || j[i].get<std::int64_t>() > 65535)
            {
                throw std::invalid_argument("channel " + std::to_string(i) + " is not in 0..65535");
            }
            *out[i] = j[i].get<std::uint16_t>();
        }
        return v;
    }
    static json fill_to_json(const rgb16& v) { return json::array({v.r, v.g, v.b}); }
};

template <>
struct zarrxt::dtype_traits<yuv16>
{
    static constexpr dtype_id id = dtype_id::user;
    static constexpr std::string_view name = "test.yuv16";
    static constexpr std::size_t swap_word = 2;
    static yuv16 fill_from_json(const json&) { return {}; }
    static json fill_to_json(const yuv16&) { return json::array({0, 0, 0}); }
};

template <>
struct zarrxt::dtype_traits<vec3d>
{
    static constexpr dtype_id id = dtype_id::user;
    static constexpr std::string_view name = "test.vec3d";
    static constexpr std::size_t swap_word = 8;
    static vec3d fill_from_json(const json& j)
    {
        if (!j.is_array() || j.size() != 3)
        {
            throw std::invalid_argument("expected [x, y, z]");
        }
        return {j[0].get<double>(), j[1].get<double>(), j[2].get<double>()};
    }
    static json fill_to_json(const vec3d& v) { return json::array({v.x, v.y, v.z}); }
};

template <>
struct zarrxt::dtype_traits<nibbles>
{
    static constexpr dtype_id id = dtype_id::user;
    static constexpr std::string_view name = "test.nibbles";
    static json configuration() { return {{"bits_per_value", 4}}; }
    static nibbles fill_from_json(const json& j) { return {j.get<std::uint8_t>()}; }
    static json fill_to_json(const nibbles& v) { return v.bits; }
};

static_assert(zx::user_element_type<rgb16> && zx::user_element_type<vec3d> && zx::element_type<rgb16>);
static_assert(!zx::user_element_type<std::uint16_t>);

namespace
{

zx::json document_of(const zx::memory_store& s, const std::string& key)
{
    const auto raw = zx::get(s, key);
    REQUIRE(raw.has_value());
    return zx::json::parse(std::string(reinterpret_cast<const char*>(raw->data()), raw->size()));
}

void put_document(zx::memory_store& s, const std::string& key, const zx::json& doc)
{
    const std::string text = doc.dump();
    s.set(key, zx::as_bytes(text));
}

xt::xtensor<rgb16, 2> pattern(std::size_t rows, std::size_t cols)
{
    xt::xtensor<rgb16, 2> t = xt::xtensor<rgb16, 2>::from_shape({rows, cols});
    for (std::size_t i = 0; i < rows; ++i)
    {
        for (std::size_t j = 0; j < cols; ++j)
        {
            t(i, j) = rgb16{static_cast<std::uint16_t>(i * 1000 + j), static_cast<std::uint16_t>(0x0102 + j),
                            static_cast<std::uint16_t>(0xff00 | i)};
        }
    }
    return t;
}

} // namespace

TEST_SUITE("user_dtype")
{
    TEST_CASE("user dtype: stored under its name, big-endian words as the bytes codec states, fill as the "
              "type says")
    {
        zx::memory_store s;
        auto a = zx::create<rgb16, 2>(s, "a",
                                      zx::v3_options{.shape = {5, 4},
                                                     .chunk_shape = {2, 4},
                                                     .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})},
                                                     .fill_value = zx::scalar::from_json({7, 8, 9})});
        const auto doc = document_of(s, "a/zarr.json");
        CHECK(doc["data_type"] == "test.rgb16");
        CHECK(doc["fill_value"] == zx::json::array({7, 8, 9}));
        CHECK(a.fill_value() == rgb16{7, 8, 9});
        CHECK(a.metadata().dtype.name() == "test.rgb16");
        CHECK(a.metadata().element_size() == 6);

        const auto data = pattern(2, 4);
        a.write({{0, 0}, {2, 4}}, data);
        // The chunk's bytes, read without zarrxt: each channel a big-endian 16-bit word, in order.
        const auto stored = zx::get(s, "a/c/0/0");
        REQUIRE(stored.has_value());
        const std::vector<std::byte> raw_bytes(stored->data(), stored->data() + stored->size());
        const auto* raw = &raw_bytes;
        REQUIRE(raw->size() == 2 * 4 * 6);
        for (std::size_t e = 0; e < 8; ++e)
        {
            const std::size_t i = e / 4, j = e % 4;
            const std::uint16_t want[3] = {data(i, j).r, data(i, j).g, data(i, j).b};
            for (std::size_t c = 0; c < 3; ++c)
            {
                const auto hi = std::to_integer<unsigned>((*raw)[e * 6 + c * 2]);
                const auto lo = std::to_integer<unsigned>((*raw)[e * 6 + c * 2 + 1]);
                CHECK((hi << 8 | lo) == want[c]);
            }
        }
        // Reopened without a registry: array<rgb16, 2> says the type. Rows 2..4 were never written.
        auto b = zx::open<rgb16, 2>(s, "a");
        const auto all = b.read();
        CHECK(xt::view(all, xt::range(0, 2), xt::all()) == data);
        for (std::size_t i = 2; i < 5; ++i)
        {
            for (std::size_t j = 0; j < 4; ++j)
            {
                CHECK(all(i, j) == rgb16{7, 8, 9});
            }
        }
        // Resizing reopens the array with the same registry.
        b.resize({6, 4});
        CHECK(b.read()(5, 3) == rgb16{7, 8, 9});
    }

    TEST_CASE("user dtype: untyped opening needs the registry; visit refuses, read_bytes serves the bytes")
    {
        zx::memory_store s;
        auto a = zx::create<rgb16, 1>(s, "a", zx::v3_options{.shape = {3}, .chunk_shape = {2}});
        a.write({{0}, {3}}, xt::xtensor<rgb16, 1>{rgb16{1, 2, 3}, rgb16{4, 5, 6}, rgb16{7, 8, 9}});

        CHECK_THROWS_WITH_AS(
            zx::open_any(s, "a"),
            doctest::Contains("[zarrxt.metadata.5] data type \"test.rgb16\" is not supported"),
            zx::metadata_error);
        zx::codec_registry reg;
        reg.add_dtype<rgb16>().add_dtype<vec3d>();
        CHECK(reg.dtype_names() == std::vector<std::string>{"test.rgb16", "test.vec3d"});
        CHECK(reg.names().empty());
        // An unknown type's message lists the registered ones.
        CHECK_THROWS_WITH_AS(zx::open_any(s, "a", zx::codec_registry().add_dtype<vec3d>()),
                             doctest::Contains("registered user types: test.vec3d)"), zx::metadata_error);

        auto any = zx::open_any(s, "a", reg);
        CHECK(any.dtype() == zx::dtype_id::user);
        std::vector<std::byte> out(3 * 6);
        any.read_bytes({0}, {3}, out.data());
        rgb16 got[3];
        std::memcpy(got, out.data(), out.size());
        CHECK(got[1] == rgb16{4, 5, 6});
        CHECK_THROWS_AS(zx::visit(any, [](auto&) {}), zx::dtype_mismatch);
        CHECK(any.as<rgb16, 1>().read()(2) == rgb16{7, 8, 9});

        // Same size, other name; a built-in of another size; another rank.
        CHECK_THROWS_WITH_AS((zx::open<yuv16, 1>(s, "a")),
                             doctest::Contains("registered user types: test.yuv16)"), zx::metadata_error);
        CHECK_THROWS_WITH_AS((zx::open<yuv16, 1>(s, "a", reg)), doctest::Contains("array<test.yuv16, 1>"),
                             zx::dtype_mismatch);
        CHECK_THROWS_AS((any.as<yuv16, 1>()), zx::dtype_mismatch);
        CHECK_THROWS_AS((zx::open<std::uint16_t, 1>(s, "a", reg)), zx::dtype_mismatch);
        CHECK_THROWS_AS((zx::open<rgb16, 2>(s, "a")), zx::rank_mismatch);
    }

    TEST_CASE("user dtype: refusals are typed (fill value, configuration, v2, a built-in element type)")
    {
        zx::memory_store s;
        zx::create<rgb16, 1>(s, "a", zx::v3_options{.shape = {3}, .chunk_shape = {3}});
        auto doc = document_of(s, "a/zarr.json");
        CHECK(doc["fill_value"] == zx::json::array({0, 0, 0}));

        // The type's own conversion refuses the fill value: invalid_fill_value with its reason.
        doc["fill_value"] = zx::json::array({1, 2, 70000});
        put_document(s, "a/zarr.json", doc);
        CHECK_THROWS_WITH_AS((zx::open<rgb16, 1>(s, "a")),
                             doctest::Contains("[zarrxt.metadata.6] fill_value [1,2,70000] is not valid for "
                                               "test.rgb16: channel 2 is not in 0..65535"),
                             zx::metadata_error);
        CHECK_THROWS_WITH_AS(
            (zx::create<rgb16, 1>(s, "b", zx::v3_options{.shape = {3}, .chunk_shape = {3}, .fill_value = 5})),
            doctest::Contains("test.rgb16: expected [r, g, b]"), zx::metadata_error);

        // A configuration the type does not state describes another type.
        zx::create<nibbles, 1>(s, "n", zx::v3_options{.shape = {4}, .chunk_shape = {4}, .fill_value = 3});
        auto ndoc = document_of(s, "n/zarr.json");
        CHECK(ndoc["data_type"] ==
              zx::json{{"name", "test.nibbles"}, {"configuration", {{"bits_per_value", 4}}}});
        CHECK(zx::open<nibbles, 1>(s, "n").fill_value().bits == 3);
        ndoc["data_type"]["configuration"]["bits_per_value"] = 2;
        put_document(s, "n/zarr.json", ndoc);
        CHECK_THROWS_WITH_AS(
            (zx::open<nibbles, 1>(s, "n")),
            doctest::Contains("has a configuration the registered user type \"test.nibbles\" does not state"),
            zx::metadata_error);
        ndoc["data_type"] = "test.nibbles";
        put_document(s, "n/zarr.json", ndoc);
        CHECK_THROWS_AS((zx::open<nibbles, 1>(s, "n")), zx::metadata_error);

        // Zarr v2 has no way to name it.
        CHECK_THROWS_WITH_AS(
            (zx::create<rgb16, 1>(s, "v2", zx::v2_options{.shape = {3}, .chunks = {3}})),
            doctest::Contains("[zarrxt.metadata.5] create: the user data type \"test.rgb16\""),
            zx::metadata_error);
        CHECK_FALSE(zx::get(s, "v2/.zarray").has_value());
        // The codecs that compute on values refuse it.
        CHECK_THROWS_AS(
            (zx::create<rgb16, 1>(s, "so",
                                  zx::v3_options{.shape = {3},
                                                 .chunk_shape = {3},
                                                 .codecs = {zx::codec_spec("scale_offset", {{"offset", 1}}),
                                                            zx::codec::bytes{}}})),
            zx::metadata_error);
        CHECK_THROWS_WITH_AS(
            (zx::create<rgb16, 1>(
                s, "pb",
                zx::v3_options{.shape = {3}, .chunk_shape = {3}, .codecs = {zx::codec_spec("packbits")}})),
            doctest::Contains("packs numbers, not test.rgb16 values"), zx::metadata_error);
        CHECK_FALSE(zx::get(s, "pb/zarr.json").has_value());
    }

    TEST_CASE(
        "user dtype: wider than an inline fill value, inside shards, compressed, with a user codec registry")
    {
        zx::memory_store s;
        zx::codec_registry reg;
        reg.add_dtype<vec3d>();
        auto a = zx::create<vec3d, 1>(
            s, "v",
            zx::v3_options{.shape = {10},
                           .chunk_shape = {6},
                           .codecs = {zx::sharded({2}, {zx::codec_spec("bytes", {{"endian", "big"}}),
                                                        zx::codec_spec("gzip", {{"level", 1}})})},
                           .fill_value = zx::scalar::from_json({1.5, -2.0, 1e300})},
            reg);
        CHECK(a.fill_value() == vec3d{1.5, -2.0, 1e300});
        xt::xtensor<vec3d, 1> part = xt::xtensor<vec3d, 1>::from_shape({3});
        for (std::size_t i = 0; i < 3; ++i)
        {
            part(i) = vec3d{double(i), -double(i) / 3, 1.0 / (i + 1)};
        }
        a.write({{4}, {3}}, part);
        const auto back = zx::open<vec3d, 1>(s, "v", reg).read();
        for (std::size_t i = 0; i < 10; ++i)
        {
            CAPTURE(i);
            CHECK(back(i) == (i >= 4 && i < 7 ? part(i - 4) : vec3d{1.5, -2.0, 1e300}));
        }
        CHECK(document_of(s, "v/zarr.json")["fill_value"] == zx::json::array({1.5, -2.0, 1e300}));
    }
}
