// array<T, N>: create/open in both formats, region reads and writes for every dtype, ragged edges,
// fill values, empty-chunk handling, read_into views, expressions, attributes and typed errors.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

#include <bit>
#include <thread>

namespace zx = zarrxt;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

/// The layouts every dtype is round-tripped through.
std::vector<std::pair<std::string, std::function<zx::any_array<zx::memory_store>(zx::memory_store&, zx::dtype_id)>>>
layouts()
{
    using core = zx::any_array<zx::memory_store>::core_type;
    auto v2 = [](char order, bool be, std::optional<zx::codec_spec> comp, char sep) {
        return [=](zx::memory_store& s, zx::dtype_id d) {
            zx::v2_options o{.shape = {13, 17}, .chunks = {5, 4}};
            o.order = order;
            o.big_endian = be;
            o.compressor = comp;
            o.dimension_separator = sep;
            return zx::any_array<zx::memory_store>(core::create(s, "a", d, o, {}, {}));
        };
    };
    auto v3 = [](std::vector<zx::codec_spec> codecs) {
        return [=](zx::memory_store& s, zx::dtype_id d) {
            zx::v3_options o{.shape = {13, 17}, .chunk_shape = {5, 4}};
            o.codecs = codecs;
            return zx::any_array<zx::memory_store>(core::create(s, "a", d, o, {}, {}));
        };
    };
    return {
        {"v2 C none", v2('C', false, std::nullopt, '.')},
        {"v2 F gzip big-endian", v2('F', true, zx::codec_spec("gzip", {{"level", 1}}), '/')},
        {"v2 C zstd", v2('C', false, zx::codec_spec("zstd", {{"level", 1}}), '.')},
        {"v2 C zlib", v2('C', false, zx::codec_spec("zlib", {{"level", 1}}), '.')},
#if ZARRXT_HAS_BLOSC
        {"v2 C blosc", v2('C', false, zx::codec_spec("blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}}), '.')},
#endif
        {"v3 default", v3(zx::default_v3_codecs())},
        {"v3 transpose big-endian gzip crc32c",
         v3({zx::codec_spec("transpose", {{"order", {1, 0}}}), zx::codec_spec("bytes", {{"endian", "big"}}),
             zx::codec_spec("gzip", {{"level", 1}}), zx::codec_spec("crc32c")})},
        {"v3 sharded", v3({zx::sharded({5, 2}, {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd")})})},
        {"v3 sharded index at start, transposed inner",
         v3({zx::sharded({1, 4},
                         {zx::codec_spec("transpose", {{"order", {1, 0}}}), zx::codec_spec("bytes", {{"endian", "big"}})},
                         false)})},
    };
}

} // namespace

TEST_SUITE("array")
{
    TEST_CASE_TEMPLATE_DEFINE("every dtype round-trips through every layout, whole and by region", T, round_trip_case)
    {
        const auto data = make_data<T, 2>({13, 17});
        for (auto& layout : layouts())
        {
            const auto& label = layout.first;
            auto& make = layout.second;
            CAPTURE(label);
            zx::memory_store s;
            auto any = make(s, zx::dtype_of<T>());
            auto a = any.template as<T, 2>();
            a.write({{0, 0}, {13, 17}}, data);
            auto b = zx::open<T, 2>(s, "a");
            CHECK(tensors_equal(b.read(), data));
            auto sub = b.read({{3, 5}, {7, 9}});
            CHECK(tensors_equal(sub, xt::view(data, xt::range(3, 10), xt::range(5, 14))));
            // A region inside one chunk, a single element, an empty region.
            CHECK(tensors_equal(b.read({{10, 12}, {3, 4}}), xt::view(data, xt::range(10, 13), xt::range(12, 16))));
            CHECK(zxtest::same_bits(b.read({{12, 16}, {1, 1}})(0, 0), data(12, 16)));
            CHECK(b.read({{4, 4}, {0, 3}}).size() == 0);
        }
    }
    TEST_CASE_TEMPLATE_APPLY(round_trip_case, zxtest::all_element_types);

    TEST_CASE("partial writes read-modify-write and leave the rest untouched")
    {
        for (auto& layout : layouts())
        {
            const auto& label = layout.first;
            auto& make = layout.second;
            CAPTURE(label);
            zx::memory_store s;
            auto a = make(s, zx::dtype_id::int32).as<std::int32_t, 2>();
            auto expect = xt::xtensor<std::int32_t, 2>::from_shape({13, 17});
            expect.fill(0);
            const auto first = make_data<std::int32_t, 2>({6, 9}, 1000);
            a.write({{2, 3}, {6, 9}}, first);
            xt::view(expect, xt::range(2, 8), xt::range(3, 12)) = first;
            const auto second = make_data<std::int32_t, 2>({5, 5}, 5000);
            a.write({{6, 10}, {5, 5}}, second);
            xt::view(expect, xt::range(6, 11), xt::range(10, 15)) = second;
            CHECK(tensors_equal(a.read(), expect));
        }
    }

    TEST_CASE("chunks that land contiguously are decoded (or read) straight into the destination")
    {
        // Rows of whole chunks: every chunk's slab of the result is one C-ordered block.
        for (auto comp : std::vector<std::optional<zx::codec_spec>>{std::nullopt, zx::codec_spec("gzip", {{"level", 1}}),
                                                                     zx::codec_spec("zstd", {{"level", 1}})})
        {
            for (bool be : {false, true})
            {
                CAPTURE(be);
                CAPTURE((comp ? comp->name : std::string("raw")));
                zxtest::temp_dir dir;
                zx::filesystem_store s(dir.path());
                auto a = zx::create<std::int32_t, 2>(
                    s, "a", zx::v2_options{.shape = {9, 6}, .chunks = {2, 6}, .compressor = comp, .fill_value = -7, .big_endian = be});
                const auto data = make_data<std::int32_t, 2>({9, 6});
                a.write({{0, 0}, {6, 6}}, xt::view(data, xt::range(0, 6), xt::all()));
                auto expect = data;
                xt::view(expect, xt::range(6, 9), xt::all()) = -7;
                CHECK(tensors_equal(a.read(), expect));
                CHECK(tensors_equal(a.read({{2, 0}, {6, 6}}), xt::view(expect, xt::range(2, 8), xt::all())));
                // A stored chunk of the wrong size is an error naming the key, also on this path.
                zxtest::write_file(dir.path() / "a" / "1.0", "short");
                try
                {
                    a.read({{2, 0}, {2, 6}});
                    FAIL("no error");
                }
                catch (const zx::error& e)
                {
                    CHECK(e.key() == "a/1.0");
                }
            }
        }
        SUBCASE("bool bytes other than 0 and 1 read as true")
        {
            zx::memory_store s;
            auto b = zx::create<bool, 1>(s, "b", zx::v2_options{.shape = {4}, .chunks = {4}, .compressor = std::nullopt});
            s.set("b/0", zx::as_bytes(std::string("\x00\x02\xff\x01", 4)));
            const auto r = b.read();
            CHECK(r == xt::xtensor<bool, 1>{false, true, true, true});
            const auto r2 = b.read({{1}, {2}}); // the generic path
            CHECK(r2 == xt::xtensor<bool, 1>{true, true});
        }
    }

    TEST_CASE("missing chunks read as the fill value, including NaN and v2 null")
    {
        zx::memory_store s;
        auto a = zx::create<double, 1>(s, "nan", zx::v3_options{.shape = {10}, .chunk_shape = {4}, .fill_value = zx::scalar::from_json("NaN")});
        a.write({{4}, {2}}, xt::xtensor<double, 1>{1.0, 2.0});
        auto r = a.read();
        CHECK(std::isnan(r(0)));
        CHECK(r(4) == 1.0);
        CHECK(std::isnan(r(6)));
        auto b = zx::create<std::int16_t, 1>(s, "null", zx::v2_options{.shape = {5}, .chunks = {2}, .null_fill_value = true});
        CHECK(b.read() == xt::xtensor<std::int16_t, 1>{0, 0, 0, 0, 0});
        CHECK(b.metadata().document["fill_value"].is_null());
        auto c = zx::create<std::uint8_t, 1>(s, "seven", zx::v2_options{.shape = {5}, .chunks = {2}, .fill_value = 7});
        CHECK(c.read() == xt::xtensor<std::uint8_t, 1>{7, 7, 7, 7, 7});
    }

    TEST_CASE("chunks equal to the fill value are not stored, and are erased when they become so")
    {
        zx::memory_store s;
        auto a = zx::create<float, 2>(s, "a", zx::v3_options{.shape = {8, 8}, .chunk_shape = {4, 4}, .fill_value = 1.5f});
        xt::xtensor<float, 2> ones = xt::xtensor<float, 2>::from_shape({8, 8});
        ones.fill(1.5f);
        a.write({{0, 0}, {8, 8}}, ones);
        CHECK(s.list("a/c").empty());
        ones(5, 6) = 2.0f;
        a.write({{0, 0}, {8, 8}}, ones);
        CHECK(s.list("a/c") == std::vector<std::string>{"a/c/1/1"});
        a.write({{5, 6}, {1, 1}}, xt::xtensor<float, 2>{{1.5f}});
        CHECK(s.list("a/c").empty());
        CHECK(a.stats().erases == 1);

        SUBCASE("write_empty_chunks keeps them")
        {
            a = a.with_write_empty_chunks(true);
            a.write({{0, 0}, {4, 4}}, xt::view(ones, xt::range(0, 4), xt::range(0, 4)));
            CHECK(s.list("a/c") == std::vector<std::string>{"a/c/0/0"});
        }
        SUBCASE("write_empty_chunks given at create is the created handle's, not the array's")
        {
            auto k = zx::create<float, 1>(
                s, "k", zx::v3_options{.shape = {8}, .chunk_shape = {4}, .write_empty_chunks = true});
            CHECK(k.settings().write_empty_chunks);
            k.write({{0}, {4}}, xt::zeros<float>({4}));
            CHECK(s.list("k/c") == std::vector<std::string>{"k/c/0"});
            auto opened = zx::open<float, 1>(s, "k"); // a new handle starts from the defaults
            CHECK_FALSE(opened.settings().write_empty_chunks);
            opened.write({{4}, {4}}, xt::zeros<float>({4}));
            CHECK(s.list("k/c") == std::vector<std::string>{"k/c/0"});
            auto kept = opened.with_settings(zx::array_settings{.write_empty_chunks = true});
            kept.write({{4}, {4}}, xt::zeros<float>({4}));
            CHECK(s.list("k/c") == std::vector<std::string>{"k/c/0", "k/c/1"});
            CHECK_FALSE(opened.settings().write_empty_chunks); // the handle it was made from is unchanged
        }
        SUBCASE("-0.0 is data, not the fill value 0.0")
        {
            auto z = zx::create<double, 1>(s, "z", zx::v3_options{.shape = {4}, .chunk_shape = {4}});
            z.write({{0}, {4}}, xt::xtensor<double, 1>{0.0, -0.0, 0.0, 0.0});
            CHECK(s.list("z/c").size() == 1);
            CHECK(std::signbit(z.read()(1)));
        }
    }

    TEST_CASE("edge chunks are stored at full size with the fill value beyond the array, as zarr-python does")
    {
        zx::memory_store s;
        auto a = zx::create<std::uint8_t, 2>(s, "e", zx::v2_options{.shape = {3, 5}, .chunks = {2, 4}, .compressor = std::nullopt, .fill_value = 9});
        a.write({{0, 0}, {3, 5}}, make_data<std::uint8_t, 2>({3, 5}));
        auto raw = zx::get(s, "e/1.1");
        REQUIRE(raw.has_value());
        REQUIRE(raw->size() == 8);
        // chunk (1,1) holds array element (2,4) at [0,0]; the other 7 are outside the array.
        const auto* p = reinterpret_cast<const std::uint8_t*>(raw->data());
        CHECK(p[0] == zxtest::value_at<std::uint8_t>(2 * 5 + 4));
        for (int i = 1; i < 8; ++i)
        {
            CHECK(p[i] == 9);
        }
    }

    TEST_CASE("read_into writes straight into containers and strided views")
    {
        zx::memory_store s;
        const auto data = make_data<std::int64_t, 3>({6, 7, 8});
        auto a = zx::create<std::int64_t, 3>(s, "a", zx::v3_options{.shape = {6, 7, 8}, .chunk_shape = {4, 3, 5}});
        a.write({{0, 0, 0}, {6, 7, 8}}, data);
        auto big = xt::xtensor<std::int64_t, 3>::from_shape({10, 10, 10});
        big.fill(-1);
        auto view = xt::view(big, xt::range(1, 5), xt::range(2, 8, 2), xt::range(0, 6));
        a.read_into({{1, 1, 1}, {4, 3, 6}}, view);
        CHECK(tensors_equal(view, xt::view(data, xt::range(1, 5), xt::range(1, 4), xt::range(1, 7))));
        CHECK(big(0, 0, 0) == -1); // outside the view untouched
        CHECK(big(1, 3, 0) == -1);
        auto exact = xt::xtensor<std::int64_t, 3>::from_shape({2, 2, 2});
        a.read_into({{4, 5, 6}, {2, 2, 2}}, exact);
        CHECK(tensors_equal(exact, xt::view(data, xt::range(4, 6), xt::range(5, 7), xt::range(6, 8))));
        auto wrong = xt::xtensor<std::int64_t, 3>::from_shape({2, 2, 3});
        CHECK_THROWS_AS(a.read_into({{0, 0, 0}, {2, 2, 2}}, wrong), zx::array_error);
    }

    TEST_CASE("write accepts expressions and strided views, evaluated once")
    {
        zx::memory_store s;
        auto a = zx::create<float, 2>(s, "a", zx::v2_options{.shape = {9, 9}, .chunks = {4, 4}});
        const auto base = make_data<float, 2>({9, 9});
        a.write({{0, 0}, {9, 9}}, base * 2.0f + 1.0f);
        CHECK(tensors_equal(a.read(), xt::xtensor<float, 2>(base * 2.0f + 1.0f)));
        auto big = make_data<float, 2>({20, 20}, 77);
        auto v = xt::view(big, xt::range(1, 19, 3), xt::range(2, 8));
        a.write({{1, 2}, {6, 6}}, v);
        CHECK(tensors_equal(a.read({{1, 2}, {6, 6}}), xt::xtensor<float, 2>(v)));
        CHECK_THROWS_WITH_AS(a.write({{0, 0}, {2, 2}}, xt::xtensor<float, 2>::from_shape({2, 3})),
                             "[zarrxt.array.4] value has shape [2, 3], the region has extent [2, 2] (key \"a\")", zx::array_error);
        CHECK_THROWS_WITH_AS(a.write({{8, 0}, {2, 2}}, xt::xtensor<float, 2>::from_shape({2, 2})),
                             "[zarrxt.array.3] region offset [8, 0] extent [2, 2] is outside the array shape [9, 9] (key \"a\")",
                             zx::array_error);
        CHECK_THROWS_AS(a.read({{~0ull, 0}, {2, 2}}), zx::array_error);
    }

    TEST_CASE("ranks 0, 1 and 4")
    {
        zx::memory_store s;
        auto scalar = zx::create<double, 0>(s, "s", zx::v3_options{.shape = {}, .chunk_shape = {}});
        xt::xtensor<double, 0> x = xt::xtensor<double, 0>::from_shape({});
        x() = 3.25;
        scalar.write({}, x);
        CHECK(zx::open<double, 0>(s, "s").read()() == 3.25);
        CHECK(s.stat("s/c").has_value());
        auto scalar2 = zx::create<std::int8_t, 0>(s, "s2", zx::v2_options{.shape = {}, .chunks = {}, .compressor = std::nullopt});
        xt::xtensor<std::int8_t, 0> y = xt::xtensor<std::int8_t, 0>::from_shape({});
        y() = -5;
        scalar2.write({}, y);
        CHECK(s.stat("s2/0").has_value());
        CHECK(scalar2.read()() == -5);

        auto line = zx::create<std::uint16_t, 1>(s, "l", zx::v3_options{.shape = {1000}, .chunk_shape = {64}});
        const auto d1 = make_data<std::uint16_t, 1>({1000});
        line.write({{0}, {1000}}, d1);
        CHECK(tensors_equal(line.read({{100}, {700}}), xt::view(d1, xt::range(100, 800))));

        auto four = zx::create<std::uint8_t, 4>(s, "f", zx::v2_options{.shape = {5, 4, 3, 6}, .chunks = {2, 3, 2, 4}, .order = 'F'});
        const auto d4 = make_data<std::uint8_t, 4>({5, 4, 3, 6});
        four.write({{0, 0, 0, 0}, {5, 4, 3, 6}}, d4);
        CHECK(tensors_equal(four.read({{1, 1, 1, 1}, {3, 3, 2, 4}}),
                            xt::view(d4, xt::range(1, 4), xt::range(1, 4), xt::range(1, 3), xt::range(1, 5))));
    }

    TEST_CASE("attributes round-trip in both formats")
    {
        zx::memory_store s;
        auto a = zx::create<float, 1>(s, "v2", zx::v2_options{.shape = {4}, .chunks = {2}, .attributes = {{"units", "K"}}});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "v2/.zattrs"))) == zx::json{{"units", "K"}});
        a.set_attributes({{"units", "C"}, {"scale", 2}});
        CHECK(zx::open<float, 1>(s, "v2").attributes() == zx::json{{"units", "C"}, {"scale", 2}});
        auto b = zx::create<float, 1>(s, "v3", zx::v3_options{.shape = {4}, .chunk_shape = {2}});
        b.set_attributes({{"nested", {{"a", {1, 2, 3}}}}});
        auto reopened = zx::open<float, 1>(s, "v3");
        CHECK(reopened.attributes()["nested"]["a"][2] == 3);
        CHECK(reopened.metadata().document["chunk_grid"]["name"] == "regular"); // the rest is kept
        CHECK_THROWS_AS(b.set_attributes(zx::json::array()), zx::array_error);
    }

    TEST_CASE("dimension names: one accessor, each format's form on disk, kept by set_attributes")
    {
        zx::memory_store s;
        const zx::dimension_name_list yx{"y", "x"};
        auto a2 = zx::create<float, 2>(
            s, "v2",
            zx::v2_options{
                .shape = {4, 6}, .chunks = {2, 3}, .dimension_names = yx, .attributes = {{"units", "K"}}});
        CHECK(a2.dimension_names() == yx);
        CHECK(a2.attributes() == zx::json{{"units", "K"}});
        // v2: the xarray/NCZarr attribute in .zattrs, nothing in .zarray.
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "v2/.zattrs"))) ==
              zx::json::parse(R"({"_ARRAY_DIMENSIONS": ["y", "x"], "units": "K"})"));
        CHECK_FALSE(
            zx::json::parse(zxtest::as_string_of(zx::get(s, "v2/.zarray"))).contains("dimension_names"));
        auto r2 = zx::open<float, 2>(s, "v2");
        CHECK(r2.dimension_names() == yx);
        CHECK(r2.attributes() == zx::json{{"units", "K"}});
        CHECK(zx::open_any(s, "v2").dimension_names() == yx);
        // Replacing the attributes keeps the names; an _ARRAY_DIMENSIONS among them replaces them.
        r2.set_attributes({{"units", "C"}});
        CHECK(zx::open<float, 2>(s, "v2").dimension_names() == yx);
        CHECK(zx::open<float, 2>(s, "v2").attributes() == zx::json{{"units", "C"}});
        r2.set_attributes({{"_ARRAY_DIMENSIONS", {"lat", "lon"}}});
        CHECK(zx::open<float, 2>(s, "v2").dimension_names() == zx::dimension_name_list{"lat", "lon"});
        CHECK(zx::open<float, 2>(s, "v2").attributes() == zx::json::object());

        // v3: the member, with an unnamed axis.
        const zx::dimension_name_list named_and_not{"t", std::nullopt};
        zx::create<std::int8_t, 2>(
            s, "v3",
            zx::v3_options{.shape = {4, 6}, .chunk_shape = {2, 3}, .dimension_names = named_and_not});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "v3/zarr.json")))["dimension_names"] ==
              zx::json::parse(R"(["t", null])"));
        CHECK(zx::open_any(s, "v3").dimension_names() == named_and_not);
        CHECK(zx::open<std::int8_t, 2>(s, "v3").attributes() == zx::json::object());

        // An _ARRAY_DIMENSIONS attribute given at create means what it means on read.
        auto via_attr = zx::create<float, 1>(
            s, "attr",
            zx::v2_options{.shape = {3}, .chunks = {3}, .attributes = {{"_ARRAY_DIMENSIONS", {"n"}}}});
        CHECK(via_attr.dimension_names() == zx::dimension_name_list{"n"});
        CHECK(via_attr.attributes() == zx::json::object());

        // No names at all: none reported, no attribute written.
        zx::create<float, 1>(s, "none", zx::v2_options{.shape = {3}, .chunks = {3}});
        CHECK_FALSE(zx::open_any(s, "none").dimension_names().has_value());
        CHECK_FALSE(s.stat("none/.zattrs").has_value());
    }

    TEST_CASE("dimension names: options that cannot describe the array are refused")
    {
        zx::memory_store s;
        CHECK_THROWS_WITH_AS(
            (zx::create<float, 2>(s, "a",
                                  zx::v2_options{.shape = {4, 6},
                                                 .chunks = {2, 3},
                                                 .dimension_names = zx::dimension_name_list{"y"}})),
            "[zarrxt.array.8] dimension_names has 1 entries for rank 2", zx::array_error);
        CHECK_THROWS_WITH_AS(
            (zx::create<float, 2>(s, "b",
                                  zx::v3_options{.shape = {4, 6},
                                                 .chunk_shape = {2, 3},
                                                 .dimension_names = zx::dimension_name_list{"y", "x", "z"}})),
            "[zarrxt.array.8] dimension_names has 3 entries for rank 2", zx::array_error);
        CHECK_THROWS_WITH_AS(
            (zx::create<float, 1>(s, "c",
                                  zx::v2_options{.shape = {4},
                                                 .chunks = {2},
                                                 .dimension_names = zx::dimension_name_list{"n"},
                                                 .attributes = {{"_ARRAY_DIMENSIONS", {"m"}}}})),
            "[zarrxt.array.8] dimension names given twice: as dimension_names and as the "
            "\"_ARRAY_DIMENSIONS\" attribute",
            zx::array_error);
        CHECK_FALSE(s.stat("a/.zarray").has_value());
        CHECK_FALSE(s.stat("b/zarr.json").has_value());
        CHECK_FALSE(s.stat("c/.zarray").has_value());
    }

    TEST_CASE(
        "dimension names: a malformed v2 _ARRAY_DIMENSIONS is an ordinary attribute, as zarr-python reads it")
    {
        zx::memory_store s;
        zx::create<float, 2>(s, "a", zx::v2_options{.shape = {4, 6}, .chunks = {2, 3}});
        for (const char* bad : {R"(["y"])", R"([1, 2])", R"("y x")"})
        {
            CAPTURE(bad);
            const zx::json attrs = {{"_ARRAY_DIMENSIONS", zx::json::parse(bad)}, {"units", "K"}};
            s.set("a/.zattrs", zx::as_bytes(attrs.dump()));
            auto a = zx::open<float, 2>(s, "a"); // the data stays readable
            CHECK_FALSE(a.dimension_names().has_value());
            CHECK(a.attributes() == attrs);
            a.set_attributes(a.attributes()); // written back untouched
            CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "a/.zattrs"))) == attrs);
        }
    }

    TEST_CASE(
        "v2 fill_value null with a netCDF _FillValue attribute (NCZarr's nccopy) reads missing chunks as it")
    {
        zx::memory_store s;
        auto a = zx::create<std::int16_t, 1>(
            s, "a",
            zx::v2_options{
                .shape = {6}, .chunks = {3}, .null_fill_value = true, .attributes = {{"_FillValue", -3}}});
        CHECK(a.fill_value() == -3);
        a.write({{0}, {3}}, xt::xtensor<std::int16_t, 1>{1, 2, 3});
        CHECK(zx::open<std::int16_t, 1>(s, "a").read() == xt::xtensor<std::int16_t, 1>{1, 2, 3, -3, -3, -3});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "a/.zarray")))["fill_value"]
                  .is_null()); // still null
        // A chunk of the _FillValue is not stored (netCDF reads it back as that value); zeros are data.
        a.write({{0}, {6}}, xt::xtensor<std::int16_t, 1>{-3, -3, -3, 0, 0, 0});
        CHECK_FALSE(s.stat("a/0").has_value());
        CHECK(s.stat("a/1").has_value());
        // NaN as NCZarr writes it (a bare token), and an attribute that is no value of the type.
        s.set("b/.zarray",
              zx::as_bytes(
                  R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4", "fill_value": null,
                                            "order": "C", "compressor": null, "filters": null})"));
        s.set("b/.zattrs", zx::as_bytes(R"({"_FillValue": NaN})"));
        CHECK(std::bit_cast<std::uint32_t>(zx::open<float, 1>(s, "b").read()(1)) == 0x7fc00000u);
        s.set("b/.zattrs", zx::as_bytes(R"({"_FillValue": "missing"})"));
        CHECK(zx::open<float, 1>(s, "b").read()(1) == 0.0f);
        CHECK(zx::open<float, 1>(s, "b").attributes() == zx::json{{"_FillValue", "missing"}});
        // A fill_value that is not null wins over the attribute.
        s.set(
            "b/.zarray",
            zx::as_bytes(R"({"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4", "fill_value": 2.5,
                                            "order": "C", "compressor": null, "filters": null})"));
        s.set("b/.zattrs", zx::as_bytes(R"({"_FillValue": 7})"));
        CHECK(zx::open<float, 1>(s, "b").read()(0) == 2.5f);
    }

    TEST_CASE("open checks dtype and rank and names both")
    {
        zx::memory_store s;
        zx::create<std::int16_t, 2>(s, "x/y", zx::v3_options{.shape = {4, 4}, .chunk_shape = {2, 2}});
        CHECK_THROWS_WITH_AS((zx::open<float, 2>(s, "x/y")),
                             "[zarrxt.array.1] the array stores int16 but array<float32, 2> was requested (key \"x/y\")",
                             zx::dtype_mismatch);
        CHECK_THROWS_WITH_AS((zx::open<std::int16_t, 3>(s, "x/y")),
                             "[zarrxt.array.2] the array has rank 2 but array<int16, 3> was requested (key \"x/y\")",
                             zx::rank_mismatch);
        CHECK_THROWS_WITH_AS((zx::open<std::int16_t, 2>(s, "x/nothing")),
                             "[zarrxt.array.7] no Zarr array or group at \"x/nothing\" (key \"x/nothing\")", zx::array_error);
        CHECK_THROWS_WITH_AS((zx::open<std::int16_t, 2>(s, "x")),
                             "[zarrxt.metadata.15] expected an array at \"x\", found a group (key \"x\")", zx::metadata_error);
        // The parent group was created, as zarr-python does.
        CHECK(s.stat("x/zarr.json").has_value());
        CHECK(s.stat("zarr.json").has_value());
    }

    TEST_CASE("create refuses to replace a node unless asked, and overwrite removes old chunks")
    {
        zx::memory_store s;
        auto a = zx::create<std::int32_t, 1>(s, "a", zx::v2_options{.shape = {10}, .chunks = {5}});
        a.write({{0}, {10}}, make_data<std::int32_t, 1>({10}, 1));
        CHECK_THROWS_AS((zx::create<std::int32_t, 1>(s, "a", zx::v2_options{.shape = {10}, .chunks = {5}})), zx::array_error);
        auto b = zx::create<std::int32_t, 1>(s, "a", zx::v3_options{.shape = {10}, .chunk_shape = {5}, .overwrite = true});
        CHECK(b.zarr_format() == 3);
        CHECK(b.read() == xt::zeros<std::int32_t>({10}));
        CHECK_FALSE(s.stat("a/.zarray").has_value());
        CHECK_FALSE(s.stat("a/0").has_value());
    }

    TEST_CASE("filesystem_store arrays survive reopening in a new handle")
    {
        zxtest::temp_dir dir;
        {
            zx::filesystem_store s(dir.path());
            auto a = zx::create<double, 2>(s, "g/a", zx::v2_options{.shape = {30, 40}, .chunks = {7, 9}, .order = 'F'});
            a.write({{0, 0}, {30, 40}}, make_data<double, 2>({30, 40}));
        }
        zx::filesystem_store s(dir.path());
        CHECK(tensors_equal(zx::open<double, 2>(s, "g/a").read(), make_data<double, 2>({30, 40})));
        CHECK(std::filesystem::exists(dir.path() / "g" / "a" / "4.4"));
        CHECK(std::filesystem::exists(dir.path() / "g" / ".zgroup"));
    }

    TEST_CASE("threads writing overlapping regions of one array lose no update")
    {
        // Each thread owns a set of columns and writes them one at a time; every chunk holds columns
        // of all threads, so each write is a read-modify-write of a chunk other threads are also
        // rewriting. Without the per-key lock one thread's column would be lost.
        zxtest::slow_store<zx::memory_store> s{zx::memory_store{}};
        auto a = zx::create<std::int32_t, 2>(
            s, "a",
            zx::v3_options{.shape = {64, 64},
                           .chunk_shape = {64, 16},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("gzip", {{"level", 6}})}});
        constexpr int threads = 8;
        constexpr int reps = 2;
        std::atomic<int> ready{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
        {
            ts.emplace_back([&, t] {
                ++ready;
                while (ready < threads)
                {
                }
                for (int rep = 0; rep < reps; ++rep)
                {
                    for (std::uint64_t c = static_cast<std::uint64_t>(t); c < 64; c += threads)
                    {
                        auto col = xt::xtensor<std::int32_t, 2>::from_shape({64, 1});
                        col.fill(static_cast<std::int32_t>(c * 100 + static_cast<std::uint64_t>(rep) + 1));
                        a.write({{0, c}, {64, 1}}, col);
                    }
                }
            });
        }
        for (auto& t : ts)
        {
            t.join();
        }
        const auto r = a.read();
        int lost = 0;
        for (std::size_t c = 0; c < 64; ++c)
        {
            for (std::size_t row = 0; row < 64; ++row)
            {
                lost += r(row, c) != static_cast<std::int32_t>(c * 100 + reps) ? 1 : 0;
            }
        }
        CHECK(lost == 0);
    }
}
