// Groups: create and open in both formats, attributes, children listing.
#include "array_support.hpp"

namespace zx = zarrxt;

TEST_SUITE("group")
{
    TEST_CASE("groups in both formats: create, attributes, children")
    {
        for (int format : {2, 3})
        {
            CAPTURE(format);
            zx::memory_store s;
            auto root = zx::group<zx::memory_store>::create(s, "", zx::group_options{.zarr_format = format, .attributes = {{"title", "t"}}});
            CHECK(root.zarr_format() == format);
            zx::group<zx::memory_store>::create(s, "sub", zx::group_options{.zarr_format = format});
            if (format == 3)
            {
                zx::create<float, 1>(s, "arr", zx::v3_options{.shape = {3}, .chunk_shape = {3}});
            }
            else
            {
                zx::create<float, 1>(s, "arr", zx::v2_options{.shape = {3}, .chunks = {3}});
            }
            s.set("not_a_node/data", zx::as_bytes("x"));
            auto g = zx::group<zx::memory_store>::open(s, "");
            CHECK(g.attributes()["title"] == "t");
            const auto kids = g.children();
            REQUIRE(kids.size() == 2);
            CHECK(kids[0].name == "arr");
            CHECK(kids[0].kind == zx::node_kind::array);
            CHECK(kids[1].name == "sub");
            CHECK(kids[1].kind == zx::node_kind::group);
            g.set_attributes({{"title", "u"}});
            CHECK(zx::group<zx::memory_store>::open(s, "").attributes()["title"] == "u");
            CHECK_THROWS_AS(zx::group<zx::memory_store>::open(s, "arr"), zx::metadata_error);
            CHECK_THROWS_AS(zx::group<zx::memory_store>::open(s, "nothing"), zx::array_error);
            CHECK_THROWS_AS(zx::group<zx::memory_store>::create(s, "sub"), zx::array_error);
        }
    }

    TEST_CASE("v2 group attributes live in .zattrs and v3 in zarr.json")
    {
        zx::memory_store s;
        zx::group<zx::memory_store>::create(s, "g2", zx::group_options{.zarr_format = 2, .attributes = {{"a", 1}}});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "g2/.zattrs")))["a"] == 1);
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "g2/.zgroup"))) == zx::json{{"zarr_format", 2}});
        zx::group<zx::memory_store>::create(s, "g3", zx::group_options{.attributes = {{"a", 2}}});
        const auto doc = zx::json::parse(zxtest::as_string_of(zx::get(s, "g3/zarr.json")));
        CHECK(doc["node_type"] == "group");
        CHECK(doc["attributes"]["a"] == 2);
    }
}
