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

namespace
{

/// A store that can only read and stat (an HTTP server's capabilities): no listing.
struct read_stat_store
{
    zx::memory_store inner;

    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        return inner.read(key, r, max);
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return inner.stat(key); }
};

static_assert(zx::store_policy<read_stat_store> && !zx::listable_store<read_stat_store>);
static_assert(zx::store_policy<zx::consolidated_store<read_stat_store>>);
static_assert(zx::listable_store<zx::consolidated_store<read_stat_store>>);
static_assert(!zx::object_store<zx::consolidated_store<read_stat_store>>);
static_assert(!zx::writable_store<zx::consolidated_store<zx::memory_store>>);
// The decorated store's optional capabilities are kept.
static_assert(zx::direct_object_store<zx::consolidated_store<zx::memory_store>>);
static_assert(zx::buffered_store<zx::consolidated_store<zx::memory_store>>);
static_assert(zx::direct_store<zx::consolidated_store<zx::memory_store>>);

/// The id of the zarrxt::error `f` throws ("no error" when it returns).
template <class F>
std::string error_id(F&& f)
{
    try
    {
        f();
    }
    catch (const zx::error& e)
    {
        return e.id();
    }
    return "no error";
}

/// A hierarchy in `s`: root (attributes), int32 "a" [4, 4] with values, group "sub" with float
/// "sub/b" [5] (attributes) and an empty group "sub/deep".
void make_hierarchy(zx::memory_store& s, int format)
{
    zx::group<zx::memory_store>::create(
        s, "", zx::group_options{.zarr_format = format, .attributes = {{"title", "t"}}});
    zx::group<zx::memory_store>::create(s, "sub", zx::group_options{.zarr_format = format});
    zx::group<zx::memory_store>::create(s, "sub/deep", zx::group_options{.zarr_format = format});
    const xt::xtensor<std::int32_t, 2> a = xt::reshape_view(xt::arange<std::int32_t>(16), {4, 4});
    const xt::xtensor<float, 1> b = {1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
    if (format == 3)
    {
        zx::create<std::int32_t, 2>(s, "a", zx::v3_options{.shape = {4, 4}, .chunk_shape = {2, 2}})
            .write({{0, 0}, {4, 4}}, a);
        zx::create<float, 1>(s, "sub/b",
                             zx::v3_options{.shape = {5}, .chunk_shape = {2}, .attributes = {{"units", "m"}}})
            .write({{0}, {5}}, b);
    }
    else
    {
        zx::create<std::int32_t, 2>(s, "a", zx::v2_options{.shape = {4, 4}, .chunks = {2, 2}})
            .write({{0, 0}, {4, 4}}, a);
        zx::create<float, 1>(s, "sub/b",
                             zx::v2_options{.shape = {5}, .chunks = {2}, .attributes = {{"units", "m"}}})
            .write({{0}, {5}}, b);
    }
}

template <class Store>
std::vector<std::string> child_paths(const Store& s, const std::string& path)
{
    std::vector<std::string> out;
    for (const auto& c : zx::group<Store>::open(s, path).children())
    {
        out.push_back(c.path + (c.kind == zx::node_kind::group ? "/" : ""));
    }
    return out;
}

} // namespace

TEST_SUITE("group")
{
    TEST_CASE("consolidated metadata, v2 and v3: written, then the hierarchy opens from it alone")
    {
        for (int format : {2, 3})
        {
            CAPTURE(format);
            zx::memory_store s;
            make_hierarchy(s, format);
            CHECK(zx::consolidate(s, "") == 4);
            if (format == 2)
            {
                const auto doc = zx::json::parse(zxtest::as_string_of(zx::get(s, ".zmetadata")));
                CHECK(doc["zarr_consolidated_format"] == 1);
                std::vector<std::string> keys;
                for (const auto& [k, v] : doc["metadata"].items())
                {
                    keys.push_back(k);
                    CHECK(v == zx::json::parse(zxtest::as_string_of(zx::get(s, k))));
                }
                // In the order consolidate visits them: the group, then its nodes depth first.
                const std::vector<std::string> want = {".zgroup",         ".zattrs",       "a/.zarray",
                                                       "sub/.zgroup",     "sub/b/.zarray", "sub/b/.zattrs",
                                                       "sub/deep/.zgroup"};
                CHECK(keys == want);
            }
            else
            {
                const auto root = zx::json::parse(zxtest::as_string_of(zx::get(s, "zarr.json")));
                const auto& cm = root.at("consolidated_metadata");
                CHECK(cm["kind"] == "inline");
                CHECK(cm["must_understand"] == false);
                std::vector<std::string> keys;
                for (const auto& [k, v] : cm["metadata"].items())
                {
                    keys.push_back(k);
                    CHECK(v == zx::json::parse(zxtest::as_string_of(zx::get(s, k + "/zarr.json"))));
                }
                CHECK(keys == std::vector<std::string>{"a", "sub", "sub/b", "sub/deep"});
                CHECK(root["attributes"]["title"] == "t");
            }
            auto cs = zx::open_consolidated(s, "", zx::consolidated_mode::always);
            REQUIRE(cs.has_snapshot());
            CHECK(cs.snapshot()->zarr_format == format);
            // Every node's own metadata is now wrong or gone: what opens was read from the snapshot.
            for (const std::string k : {"a/.zarray", "a/zarr.json", "sub/b/.zarray", "sub/b/zarr.json",
                                        "sub/.zgroup", "sub/zarr.json", "sub/b/.zattrs"})
            {
                if (s.stat(k))
                {
                    s.set(k, zx::as_bytes("{ not json"));
                }
            }
            CHECK(error_id([&] { zx::open<std::int32_t, 2>(s, "a"); }) == "zarrxt.metadata.1");
            CHECK(child_paths(cs, "") == std::vector<std::string>{"a", "sub/"});
            CHECK(child_paths(cs, "sub") == std::vector<std::string>{"sub/b", "sub/deep/"});
            CHECK(zx::open<std::int32_t, 2>(cs, "a").read() ==
                  xt::xtensor<std::int32_t, 2>(xt::reshape_view(xt::arange<std::int32_t>(16), {4, 4})));
            const auto b = zx::open<float, 1>(cs, "sub/b");
            CHECK(b.read() == xt::xtensor<float, 1>{1.5f, 2.5f, 3.5f, 4.5f, 5.5f});
            CHECK(b.metadata().attributes == zx::json{{"units", "m"}});
            CHECK(zx::open_any(cs, "sub/b").shape() == std::vector<std::uint64_t>{5});
            CHECK(zx::group<decltype(cs)>::open(cs, "").attributes()["title"] == "t");
            // A node outside the snapshot is absent, whatever the store holds now.
            zx::memory_store fresh;
            make_hierarchy(fresh, format);
            zx::consolidate(fresh, "");
            zx::group<zx::memory_store>::create(fresh, "later", zx::group_options{.zarr_format = format});
            auto stale = zx::open_consolidated(fresh, "");
            CHECK(child_paths(stale, "") == std::vector<std::string>{"a", "sub/"});
            CHECK_THROWS_AS(zx::group<decltype(stale)>::open(stale, "later"), zx::array_error);
            zx::consolidate(fresh, "");
            CHECK(child_paths(zx::open_consolidated(fresh, ""), "") ==
                  std::vector<std::string>{"a", "later/", "sub/"});
        }
    }

    TEST_CASE("consolidated metadata below the root, and writes through zarrxt leave it stale")
    {
        for (int format : {2, 3})
        {
            CAPTURE(format);
            zx::memory_store s;
            make_hierarchy(s, format);
            CHECK(zx::consolidate(s, "sub") == 2);
            CHECK(!s.stat(".zmetadata"));
            auto cs = zx::open_consolidated(s, "sub", zx::consolidated_mode::always);
            CHECK(cs.snapshot()->root == "sub");
            CHECK(child_paths(cs, "sub") == std::vector<std::string>{"sub/b", "sub/deep/"});
            // Outside the snapshot's group the store answers.
            CHECK(child_paths(cs, "") == std::vector<std::string>{"a", "sub/"});
            CHECK(zx::open<std::int32_t, 2>(cs, "a").read()(3, 3) == 15);
            // A metadata write to the store is not seen through the snapshot until consolidated again.
            zx::group<zx::memory_store>::open(s, "sub/deep").set_attributes({{"k", 1}});
            CHECK(zx::group<decltype(cs)>::open(cs, "sub/deep").attributes().empty());
            CHECK(zx::consolidated_document(s, "sub") !=
                  zx::json::parse(
                      zxtest::as_string_of(zx::get(s, format == 2 ? "sub/.zmetadata" : "sub/zarr.json"))));
            zx::consolidate(s, "sub");
            auto again = zx::open_consolidated(s, "sub");
            CHECK(zx::group<decltype(again)>::open(again, "sub/deep").attributes() == zx::json{{"k", 1}});
            CHECK(zx::consolidated_document(s, "sub") ==
                  zx::json::parse(
                      zxtest::as_string_of(zx::get(s, format == 2 ? "sub/.zmetadata" : "sub/zarr.json"))));
        }
    }

    TEST_CASE("a store that cannot list lists children through consolidated metadata")
    {
        for (int format : {2, 3})
        {
            CAPTURE(format);
            read_stat_store rs;
            make_hierarchy(rs.inner, format);
            zx::consolidate(rs.inner, "");
            const auto cs = zx::open_consolidated(rs, "");
            REQUIRE(cs.has_snapshot());
            CHECK(child_paths(cs, "") == std::vector<std::string>{"a", "sub/"});
            CHECK(child_paths(cs, "sub") == std::vector<std::string>{"sub/b", "sub/deep/"});
            CHECK(child_paths(cs, "sub/deep").empty());
            CHECK(zx::open<float, 1>(cs, "sub/b").read()(4) == 5.5f);
            // Chunk keys are unknown to the snapshot: list() cannot answer, nor can a store without one.
            CHECK(error_id([&] { cs.list(""); }) == "zarrxt.store.7");
            const auto never = zx::open_consolidated(rs, "", zx::consolidated_mode::never);
            CHECK(!never.has_snapshot());
            CHECK(zx::open<float, 1>(never, "sub/b").read()(0) == 1.5f);
            CHECK(error_id([&] { child_paths(never, ""); }) == "zarrxt.store.7");
            // A snapshot of "sub" knows the way to it and what is below, nothing beside it.
            zx::consolidate(rs.inner, "sub");
            const auto sub = zx::open_consolidated(rs, "sub", zx::consolidated_mode::always);
            CHECK(sub.list_dir("") == std::vector<std::string>{"sub"});
            CHECK(child_paths(sub, "sub") == std::vector<std::string>{"sub/b", "sub/deep/"});
            CHECK(error_id([&] { sub.list_dir("a"); }) == "zarrxt.store.7");
        }
    }

    TEST_CASE("consolidated_mode: automatic uses it when present, always requires it, never ignores it")
    {
        for (int format : {2, 3})
        {
            CAPTURE(format);
            zx::memory_store s;
            make_hierarchy(s, format);
            const auto plain = zx::open_consolidated(s, "");
            CHECK(!plain.has_snapshot());
            CHECK(child_paths(plain, "") == std::vector<std::string>{"a", "sub/"});
            CHECK(error_id([&] { zx::open_consolidated(s, "", zx::consolidated_mode::always); }) ==
                  "zarrxt.metadata.17");
            CHECK(error_id([&] { zx::open_consolidated(s, "a", zx::consolidated_mode::always); }) ==
                  "zarrxt.metadata.17");
            CHECK(error_id([&] { zx::open_consolidated(s, "nothing", zx::consolidated_mode::always); }) ==
                  "zarrxt.metadata.17");
            zx::consolidate(s, "");
            CHECK(zx::open_consolidated(s, "").has_snapshot());
            CHECK(!zx::open_consolidated(s, "", zx::consolidated_mode::never).has_snapshot());
        }
        // One document holds one format: a node of the other format is refused, never left out.
        {
            zx::memory_store s;
            make_hierarchy(s, 3);
            zx::create<float, 1>(s, "sub/v2", zx::v2_options{.shape = {2}, .chunks = {2}});
            CHECK(error_id([&] { zx::consolidate(s, ""); }) == "zarrxt.metadata.16");
            const auto root = zx::json::parse(zxtest::as_string_of(zx::get(s, "zarr.json")));
            CHECK(!root.contains("consolidated_metadata"));
        }
        // zarr-python 3 writes `"consolidated_metadata": null` for a group never consolidated.
        zx::memory_store s;
        s.set("zarr.json",
              zx::as_bytes(R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": null})"));
        CHECK(!zx::open_consolidated(s, "").has_snapshot());
        CHECK(error_id([&] { zx::open_consolidated(s, "", zx::consolidated_mode::always); }) ==
              "zarrxt.metadata.17");
    }

    TEST_CASE("hostile consolidated documents get typed errors naming the document")
    {
        struct hostile
        {
            const char* key;
            const char* text;
            const char* id;
        };
        const std::string group3 = R"("zarr_format": 3, "node_type": "group", "consolidated_metadata": )";
        const std::vector<hostile> cases = {
            {".zmetadata", "[]", "zarrxt.metadata.3"},
            {".zmetadata", R"({"metadata": {}})", "zarrxt.metadata.2"},
            {".zmetadata", R"({"zarr_consolidated_format": 2, "metadata": {}})", "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": "1", "metadata": {}})", "zarrxt.metadata.3"},
            {".zmetadata", R"({"zarr_consolidated_format": 1})", "zarrxt.metadata.2"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": []})", "zarrxt.metadata.3"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"../x/.zarray": {}}})",
             "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"/abs/.zarray": {}}})",
             "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"a//.zarray": {}}})",
             "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"a/c/0": {}}})",
             "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"a/zarr.json": {}}})",
             "zarrxt.metadata.4"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {"a/.zarray": 3}})",
             "zarrxt.metadata.3"},
            {".zmetadata", R"({"zarr_consolidated_format": 1, "metadata": {)", "zarrxt.metadata.1"},
            {"zarr.json", R"("inline")", "zarrxt.metadata.3"},
            {"zarr.json", R"({"kind": "external", "metadata": {}})", "zarrxt.metadata.14"},
            {"zarr.json", R"({"metadata": {}})", "zarrxt.metadata.2"},
            {"zarr.json", R"({"kind": "inline", "must_understand": "no", "metadata": {}})",
             "zarrxt.metadata.3"},
            {"zarr.json", R"({"kind": "inline"})", "zarrxt.metadata.2"},
            {"zarr.json", R"({"kind": "inline", "metadata": []})", "zarrxt.metadata.3"},
            {"zarr.json", R"({"kind": "inline", "metadata": {"a/../../x": {}}})", "zarrxt.metadata.4"},
            {"zarr.json", R"({"kind": "inline", "metadata": {"/x": {}}})", "zarrxt.metadata.4"},
            {"zarr.json", R"({"kind": "inline", "metadata": {"a": []}})", "zarrxt.metadata.3"},
            {"zarr.json",
             R"({"kind": "inline", "metadata": {"g": {"zarr_format": 3, "node_type": "group",
                 "consolidated_metadata": {"kind": "inline", "metadata": {"..": {}}}}}})",
             "zarrxt.metadata.4"},
        };
        for (const auto& c : cases)
        {
            CAPTURE(c.text);
            zx::memory_store s;
            const std::string key = std::string("g/") + c.key;
            s.set(key, zx::as_bytes(std::string(c.key) == "zarr.json" ? "{" + group3 + c.text + "}"
                                                                      : std::string(c.text)));
            try
            {
                zx::open_consolidated(s, "g");
                FAIL_CHECK("accepted");
            }
            catch (const zx::error& e)
            {
                CHECK(e.id() == c.id);
                CHECK(e.key() == key);
            }
        }
        // A document past max_metadata_bytes is refused before it is parsed.
        zx::memory_store s;
        make_hierarchy(s, 3);
        zx::consolidate(s, "");
        zx::limit_values small = zx::limit_values::from(zx::default_limits{});
        small.max_metadata_bytes = 256;
        try
        {
            zx::open_consolidated(s, "", zx::consolidated_mode::always, small);
            FAIL_CHECK("accepted");
        }
        catch (const zx::limit_exceeded& e)
        {
            CHECK(e.id() == "zarrxt.limit.1");
            CHECK(e.limit_name() == "max_metadata_bytes");
            CHECK(e.key() == "zarr.json");
        }
        // An entry that is an object but not valid metadata is refused when the node is opened.
        s.set("zarr.json",
              zx::as_bytes(
                  "{" + group3 +
                  R"({"kind": "inline", "metadata": {"x": {"zarr_format": 3, "node_type": "array"}}}})"));
        const auto cs = zx::open_consolidated(s, "");
        try
        {
            zx::open<float, 1>(cs, "x");
            FAIL_CHECK("accepted");
        }
        catch (const zx::metadata_error& e)
        {
            CHECK(e.id() == "zarrxt.metadata.2");
            CHECK(e.key() == "x/zarr.json");
        }
    }
}
