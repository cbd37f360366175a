// Rectilinear chunk grids (zarr-extensions chunk-grids/rectilinear): the spec's own example read
// as it states the expansions, every stored object decoded by the independent spec reader and
// compared with the part of the data the edge lengths put there, random region writes and reads
// against an in-memory model (plain, compressed, sharded), a grid of equal edges storing exactly
// what the regular grid stores, resize past the listed edges, the tool, and hostile grids.
#include "array_support.hpp"
#include "expect_error.hpp"
#include "spec_shard_reader.hpp"
#include "test_support.hpp"

#include <xtensor/xview.hpp>

#include <random>

namespace zx = zarrxt;
using zxtest::expect_error;
using zxtest::make_data;
using zxtest::tensors_equal;

namespace
{

using tensor2 = xt::xtensor<std::int32_t, 2>;

/// A v3 array document with the given chunk grid (int32, bytes codec only).
zx::json rect_doc(const std::vector<std::uint64_t>& shape, const zx::json& grid)
{
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", shape},
            {"data_type", "int32"},
            {"chunk_grid", grid},
            {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", -1},
            {"codecs", zx::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}};
}

zx::json rect_grid(const zx::json& chunk_shapes)
{
    return {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}, {"chunk_shapes", chunk_shapes}}}};
}

/// The first element of every chunk along an axis, from edge lengths written out in the test.
std::vector<std::uint64_t> starts_of(const std::vector<std::uint64_t>& edges)
{
    std::vector<std::uint64_t> s{0};
    for (const auto e : edges)
    {
        s.push_back(s.back() + e);
    }
    return s;
}

/// Decode every stored chunk of the 2-d int32 array at "a" with the independent spec reader and
/// compare it, edge parts included (the fill value), with `model` cut by the edge lengths.
void check_stored_chunks(const zx::memory_store& s, const std::vector<std::vector<std::uint64_t>>& edges,
                         const tensor2& model, std::int32_t fill, const zx::json& codecs)
{
    const auto r0 = starts_of(edges[0]);
    const auto r1 = starts_of(edges[1]);
    std::size_t checked = 0;
    for (std::size_t i = 0; i < edges[0].size(); ++i)
    {
        for (std::size_t j = 0; j < edges[1].size(); ++j)
        {
            if (r0[i] >= model.shape()[0] || r1[j] >= model.shape()[1])
            {
                continue; // an overflow chunk past the shape holds nothing
            }
            const std::string key = "a/c/" + std::to_string(i) + "/" + std::to_string(j);
            const auto stored = zx::get(s, key);
            if (!stored)
            {
                // Absent: only a chunk that holds nothing but the fill value may be.
                bool all_fill = true;
                for (std::uint64_t y = r0[i]; y < std::min<std::uint64_t>(r0[i + 1], model.shape()[0]); ++y)
                {
                    for (std::uint64_t x = r1[j]; x < std::min<std::uint64_t>(r1[j + 1], model.shape()[1]);
                         ++x)
                    {
                        all_fill = all_fill && model(y, x) == fill;
                    }
                }
                CHECK_MESSAGE(all_fill, key);
                continue;
            }
            zxtest::spec::bytes_t enc(stored->size());
            std::memcpy(enc.data(), stored->data(), enc.size());
            zxtest::spec::chunk_format f{{edges[0][i], edges[1][j]}, 4, codecs};
            std::int32_t fill_le = fill;
            zxtest::spec::bytes_t fill_bytes(4);
            std::memcpy(fill_bytes.data(), &fill_le, 4);
            const auto dec = codecs[0]["name"] == "sharding_indexed"
                                 ? zxtest::spec::decode_shard(enc, f, codecs[0]["configuration"], fill_bytes)
                                 : zxtest::spec::decode_chunk(enc, f);
            REQUIRE(dec.size() == edges[0][i] * edges[1][j] * 4);
            bool same = true;
            for (std::uint64_t y = 0; y < edges[0][i]; ++y)
            {
                for (std::uint64_t x = 0; x < edges[1][j]; ++x)
                {
                    std::int32_t v = 0;
                    std::memcpy(&v, dec.data() + (y * edges[1][j] + x) * 4, 4);
                    const std::uint64_t gy = r0[i] + y;
                    const std::uint64_t gx = r1[j] + x;
                    const std::int32_t want =
                        gy < model.shape()[0] && gx < model.shape()[1] ? model(gy, gx) : fill;
                    same = same && v == want;
                }
            }
            CHECK_MESSAGE(same, key);
            ++checked;
        }
    }
    CHECK(checked > 0);
}

/// A user bytes->bytes codec (XOR with 0x33): the chains bound per chunk shape must know the
/// array's user codecs too.
struct rect_xor_codec
{
    using codec_kind = zx::codec::bytes_to_bytes_tag;
    static constexpr std::string_view name = "test.rect_xor";

    static rect_xor_codec from_json(const zx::json&, const zx::codec::codec_context&) { return {}; }
    zx::json to_json() const { return zx::json::object(); }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }
    void encode(zx::byte_view in, zx::buffer& out) const
    {
        zx::buffer r(in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
        {
            r.data()[i] = in[i] ^ std::byte{0x33};
        }
        out = std::move(r);
    }
    zx::mutable_byte_view decode(zx::mutable_byte_view in, zx::buffer&, const zx::codec::decode_hint&) const
    {
        for (auto& b : in)
        {
            b ^= std::byte{0x33};
        }
        return in;
    }
};

} // namespace

TEST_CASE("rectilinear: user codecs of the array's registry reach every chunk shape")
{
    zx::codec_registry reg;
    reg.add<rect_xor_codec>();
    zx::memory_store s;
    zx::v3_options o;
    o.shape = {7, 5};
    o.chunk_edges = {{2, 5}, {1, 4}};
    o.codecs = {zx::codec::bytes{}, zx::codec_spec("test.rect_xor")};
    const tensor2 data = make_data<std::int32_t, 2>({7, 5});
    zx::create<std::int32_t, 2>(s, "a", o, reg).write({{0, 0}, {7, 5}}, data);
    CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a", reg).read(), data));
    // Chunk (1, 1) is 5 x 4: its stored bytes are the little-endian values XORed with 0x33.
    const auto stored = zx::get(s, "a/c/1/1");
    REQUIRE(stored.has_value());
    REQUIRE(stored->size() == 5 * 4 * 4);
    bool same = true;
    for (std::size_t y = 0; y < 5; ++y)
    {
        for (std::size_t x = 0; x < 4; ++x)
        {
            std::int32_t v = data(2 + y, 1 + x);
            unsigned char le[4];
            std::memcpy(le, &v, 4);
            for (std::size_t k = 0; k < 4; ++k)
            {
                same = same &&
                       std::to_integer<unsigned char>(stored->data()[(y * 4 + x) * 4 + k]) == (le[k] ^ 0x33);
            }
        }
    }
    CHECK(same);
    expect_error<zx::metadata_error>([&] { zx::open<std::int32_t, 2>(s, "a"); }, "zarrxt.metadata.11",
                                     "a/zarr.json");
}

TEST_CASE("rectilinear: the specification's example expands as it states")
{
    // shape [6, 6, 6, 6, 6]; the spec writes out each axis's expansion.
    const zx::json shapes = zx::json::parse(R"([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]])");
    const std::vector<std::vector<std::uint64_t>> expanded{
        {4, 4}, {1, 2, 3}, {4, 4}, {1, 1, 1, 3}, {4, 4, 4}};
    const auto m = zx::parse_v3_array(rect_doc({6, 6, 6, 6, 6}, rect_grid(shapes)));
    REQUIRE(m.rectilinear);
    // The chunks holding elements: the overflow chunk of the last axis ([4, 4, 4] over 6) holds none.
    CHECK(m.grid_shape() == std::vector<std::uint64_t>{2, 3, 2, 4, 2});
    for (std::size_t d = 0; d < 5; ++d)
    {
        const auto starts = starts_of(expanded[d]);
        for (std::uint64_t c = 0; c < m.grid_shape()[d]; ++c)
        {
            CHECK(m.chunk_start(d, c) == starts[c]);
            CHECK(m.chunk_edge(d, c) == expanded[d][c]);
        }
        for (std::uint64_t i = 0; i < 6; ++i)
        {
            // The first chunk whose cumulative end exceeds i.
            std::uint64_t want = 0;
            while (starts[want + 1] <= i)
            {
                ++want;
            }
            CHECK(m.chunk_index(d, i) == want);
        }
    }
    // The longest edge of the chunks that hold elements, per axis.
    CHECK(m.chunk_shape == std::vector<std::uint64_t>{4, 3, 4, 3, 4});
    // The spec's other example: index (36, 15) of edges [[16, 10], [24, 14]]... as drawn, axis 0
    // has edges 24 and 14 and axis 1 has 16 and 10; (36, 15) is chunk (1, 0) at (12, 15).
    const auto g = zx::parse_v3_array(rect_doc({38, 26}, rect_grid(zx::json::parse("[[24, 14], [16, 10]]"))));
    CHECK(g.chunk_index(0, 36) == 1);
    CHECK(g.chunk_index(1, 15) == 0);
    CHECK(36 - g.chunk_start(0, 1) == 12);
    CHECK(15 - g.chunk_start(1, 0) == 15);
}

TEST_CASE("rectilinear: every stored chunk holds the part its edges give it")
{
    const std::vector<std::vector<std::uint64_t>> edges{{3, 1, 5, 4}, {2, 7, 3}};
    const tensor2 data =
        make_data<std::int32_t, 2>({11, 10}); // 3+1+5+4 = 13 > 11: overflow inside the last chunk
    const std::vector<std::pair<std::string, zx::json>> layouts{
        {"bytes", zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])")},
        {"zstd", zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "zstd", "configuration": {"level": 3, "checksum": false}}])")},
        {"crc32c", zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                                       {"name": "crc32c"}])")},
    };
    for (const auto& layout : layouts)
    {
        // Named locals, not a structured binding: clang 14 cannot capture one (CAPTURE, lambdas).
        const std::string& name = layout.first;
        const auto& codecs = layout.second;
        CAPTURE(name);
        zx::memory_store s;
        zx::v3_options o;
        o.shape = {11, 10};
        o.chunk_edges = edges;
        o.fill_value = zx::scalar(std::int32_t{-7});
        o.codecs.clear();
        for (const auto& c : codecs)
        {
            o.codecs.emplace_back(c["name"].get<std::string>(), c.value("configuration", zx::json::object()));
        }
        auto a = zx::create<std::int32_t, 2>(s, "a", o);
        a.write({{0, 0}, {11, 10}}, data);
        check_stored_chunks(s, edges, data, -7, codecs);
        // The document states the grid (single edges as integers).
        const auto doc =
            zx::json::parse(std::string(reinterpret_cast<const char*>(zx::get(s, "a/zarr.json")->data()),
                                        zx::get(s, "a/zarr.json")->size()));
        CHECK(doc["chunk_grid"] == rect_grid(zx::json::parse("[[3, 1, 5, 4], [2, 7, 3]]")));
        CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a").read(), data));
    }
}

TEST_CASE("rectilinear: random region writes and reads equal an in-memory model")
{
    std::mt19937_64 rng(20261206);
    const std::vector<std::vector<std::uint64_t>> edges{{4, 8, 4, 12, 4}, {6, 3, 3, 9, 3}};
    // The inner chunks of a shard must divide every shard: 4 along axis 0, 3 along axis 1.
    const std::vector<std::pair<std::string, std::vector<zx::codec_spec>>> layouts{
        {"plain", {zx::codec::bytes{}}},
        {"zstd", {zx::codec::bytes{}, zx::codec_spec("zstd", {{"level", 1}})}},
        {"sharded", {zx::sharded({4, 3}, {zx::codec::bytes{}, zx::codec_spec("zstd", {{"level", 1}})})}},
    };
    for (const auto& layout : layouts)
    {
        // Named locals, not a structured binding: clang 14 cannot capture one (CAPTURE, lambdas).
        const std::string& name = layout.first;
        const auto& codecs = layout.second;
        CAPTURE(name);
        zx::memory_store s;
        zx::v3_options o;
        o.shape = {30, 22};
        o.chunk_edges = edges;
        o.codecs = codecs;
        o.fill_value = zx::scalar(std::int32_t{5});
        zx::thread_pool pool(2);
        using pooled = zx::array<std::int32_t, 2, zx::dynamic_chain, zx::memory_store,
                                 zx::operation_index_cache<>, zx::thread_pool_executor>;
        auto a = pooled::create(s, "a", o, zx::thread_pool_executor(pool));
        tensor2 model = tensor2::from_shape({30, 22});
        model.fill(5);
        for (int round = 0; round < 40; ++round)
        {
            zx::region<2> r;
            for (std::size_t d = 0; d < 2; ++d)
            {
                const std::uint64_t n = o.shape[d];
                r.offset[d] = rng() % n;
                r.extent[d] = 1 + rng() % (n - r.offset[d]);
            }
            const tensor2 v = make_data<std::int32_t, 2>({r.extent[0], r.extent[1]}, 1000 * (round + 1));
            a.write(r, v);
            xt::view(model, xt::range(r.offset[0], r.offset[0] + r.extent[0]),
                     xt::range(r.offset[1], r.offset[1] + r.extent[1])) = v;
            zx::region<2> q;
            for (std::size_t d = 0; d < 2; ++d)
            {
                q.offset[d] = rng() % o.shape[d];
                q.extent[d] = 1 + rng() % (o.shape[d] - q.offset[d]);
            }
            const tensor2 want = xt::view(model, xt::range(q.offset[0], q.offset[0] + q.extent[0]),
                                          xt::range(q.offset[1], q.offset[1] + q.extent[1]));
            REQUIRE(tensors_equal(a.read(q), want));
        }
        CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a").read(), model));
        if (name == "sharded")
        {
            // The shards decoded by the spec reader: each shard's shape is its own edges.
            check_stored_chunks(s, edges, model, 5,
                                zx::json::array({zx::sharded({4, 3}, {zx::codec::bytes{},
                                                                      zx::codec_spec("zstd", {{"level", 1}})})
                                                     .to_json()}));
        }
        // Selections and points go through the same grid.
        const auto sel = a.read(xt::range(1, 29, 3), xt::range(21, 0, -4));
        const tensor2 want_sel = xt::view(model, xt::range(1, 29, 3), xt::range(21, 0, -4));
        CHECK(tensors_equal(sel, want_sel));
    }
}

TEST_CASE("rectilinear: equal edges store exactly what the regular grid stores")
{
    const tensor2 data = make_data<std::int32_t, 2>({10, 9});
    zx::memory_store regular;
    zx::memory_store rect;
    zx::v3_options o;
    o.shape = {10, 9};
    o.codecs = {zx::codec::bytes{}, zx::codec_spec("zstd", {{"level", 1}})};
    o.chunk_shape = {4, 3};
    zx::create<std::int32_t, 2>(regular, "a", o).write({{0, 0}, {10, 9}}, data);
    o.chunk_shape.clear();
    o.chunk_edges = {{4, 4, 4}, {3, 3, 3}};
    zx::create<std::int32_t, 2>(rect, "a", o).write({{0, 0}, {10, 9}}, data);
    auto keys = regular.list("a");
    CHECK(keys == rect.list("a"));
    for (const auto& k : keys)
    {
        if (k.ends_with("zarr.json"))
        {
            continue;
        }
        const auto x = zx::get(regular, k);
        const auto y = zx::get(rect, k);
        REQUIRE(y.has_value());
        CHECK_MESSAGE((x->size() == y->size() && std::memcmp(x->data(), y->data(), x->size()) == 0), k);
    }
}

TEST_CASE("rectilinear: a document's grid is kept as written and read in every form")
{
    zx::memory_store s;
    // A regular axis as an integer, runs and single edges mixed, a run of length one.
    const zx::json shapes = zx::json::parse(R"([5, [[2, 3], 1, [4, 1], 3]])");
    zx::json doc = rect_doc({12, 13}, rect_grid(shapes));
    s.set("a/zarr.json", zx::as_bytes(doc.dump()));
    auto a = zx::open<std::int32_t, 2>(s, "a");
    const tensor2 data = make_data<std::int32_t, 2>({12, 13});
    a.write({{0, 0}, {12, 13}}, data);
    check_stored_chunks(s, {{5, 5, 5}, {2, 2, 2, 1, 4, 3}}, data, -1,
                        zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])"));
    a.set_attributes({{"k", 1}});
    const auto after = zx::json::parse(std::string(
        reinterpret_cast<const char*>(zx::get(s, "a/zarr.json")->data()), zx::get(s, "a/zarr.json")->size()));
    CHECK(after["chunk_grid"]["configuration"]["chunk_shapes"] == shapes);
    CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a").read(), data));
}

TEST_CASE("rectilinear: resize within and past the listed edges")
{
    zx::memory_store s;
    zx::v3_options o;
    o.shape = {9, 4};
    o.chunk_edges = {{2, 5, 3}, {4}};
    o.codecs = {zx::codec::bytes{}};
    o.fill_value = zx::scalar(std::int32_t{-3});
    auto a = zx::create<std::int32_t, 2>(s, "a", o);
    const tensor2 data = make_data<std::int32_t, 2>({9, 4});
    a.write({{0, 0}, {9, 4}}, data);
    // Shrink into the middle chunk (rows 2..6), then grow back: rows 4.. read as the fill value.
    a.resize({4, 4});
    CHECK(!zx::get(s, "a/c/2/0").has_value()); // wholly outside: erased
    a.resize({9, 4});
    tensor2 want = data;
    xt::view(want, xt::range(4, 9), xt::all()) = -3;
    CHECK(tensors_equal(a.read(), want));
    // Past the edges (2+5+3 = 10): chunks of the last edge length (3) are added.
    a.resize({16, 6});
    const auto doc = zx::json::parse(std::string(
        reinterpret_cast<const char*>(zx::get(s, "a/zarr.json")->data()), zx::get(s, "a/zarr.json")->size()));
    CHECK(doc["chunk_grid"]["configuration"]["chunk_shapes"] ==
          zx::json::parse("[[2, 5, [3, 3]], [[4, 2]]]"));
    const tensor2 more = make_data<std::int32_t, 2>({16, 6}, 500);
    a.write({{0, 0}, {16, 6}}, more);
    check_stored_chunks(s, {{2, 5, 3, 3, 3}, {4, 4}}, more, -3,
                        zx::json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}}])"));
    CHECK(tensors_equal(zx::open<std::int32_t, 2>(s, "a").read(), more));
}

TEST_CASE("rectilinear: hostile and invalid grids are typed errors")
{
    auto parse = [](const zx::json& shapes, std::vector<std::uint64_t> shape = {6, 6})
    { return zx::parse_v3_array(rect_doc(shape, rect_grid(shapes))); };
    // Zero edges, runs that are not pairs, negative or fractional values, too few entries.
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[0, 6], 6]")); }, "zarrxt.metadata.4", "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[[6, 1, 1]], 6]")); }, "zarrxt.metadata.4",
                                     "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[-6], 6]")); }, "zarrxt.metadata.4", "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[6.5], 6]")); }, "zarrxt.metadata.3", "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[\"6\", 6]")); }, "zarrxt.metadata.3", "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[6]")); }, "zarrxt.metadata.4", "");
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("{\"a\": 1}")); }, "zarrxt.metadata.3", "");
    // Edges that do not reach the shape.
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[2, 3], 6]")); }, "zarrxt.metadata.4", "");
    // Sums past 2^63: a run and a single edge.
    expect_error<zx::metadata_error>([&] { parse(zx::json::parse("[[[4611686018427387904, 4]], 6]")); },
                                     "zarrxt.metadata.4", "");
    expect_error<zx::metadata_error>(
        [&] { parse(zx::json::parse("[[9223372036854775807, 9223372036854775807], 6]")); },
        "zarrxt.metadata.4", "");
    // An unknown kind, and the grid missing its members.
    zx::json other = rect_grid(zx::json::parse("[6, 6]"));
    other["configuration"]["kind"] = "external";
    expect_error<zx::metadata_error>(
        [&] {
            zx::parse_v3_array(rect_doc({6, 6}, other));
        },
        "zarrxt.metadata.8", "");
    zx::json bare = {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}}}};
    expect_error<zx::metadata_error>(
        [&] {
            zx::parse_v3_array(rect_doc({6, 6}, bare));
        },
        "zarrxt.metadata.2", "");
    // An empty list on an axis of length 0 (nothing to cover), and a run of no chunks.
    const auto empty = parse(zx::json::parse("[[], [[4, 0], 6]]"), {0, 6});
    CHECK(empty.grid_shape() == std::vector<std::uint64_t>{0, 1});
    {
        zx::memory_store s0;
        s0.set("a/zarr.json",
               zx::as_bytes(rect_doc({0, 6}, rect_grid(zx::json::parse("[[], [[4, 0], 6]]"))).dump()));
        auto a = zx::open<std::int32_t, 2>(s0, "a");
        CHECK(a.read().size() == 0);
        // Growing it needs edges the grid does not have (an empty list has no last edge to repeat).
        expect_error<zx::array_error>([&] { a.resize({3, 6}); }, "zarrxt.array.8", "a");
    }
    // A billion chunks in one run is one run: parsed at once, looked up without expansion.
    const auto huge = parse(zx::json::parse("[[[1, 1000000000000]], 6]"), {999999999999, 6});
    CHECK(huge.grid_shape()[0] == 999999999999);
    CHECK(huge.chunk_index(0, 123456789012) == 123456789012);
    // A shard whose inner chunks do not divide one of the edges: refused at open, not at a read.
    zx::memory_store s;
    zx::v3_options o;
    o.shape = {12, 6};
    o.chunk_edges = {{4, 4, 6}, {6}};
    o.codecs = {zx::sharded({4, 3}, {zx::codec::bytes{}})};
    const auto refused = expect_error<zx::metadata_error>([&] { zx::create<std::int32_t, 2>(s, "a", o); },
                                                          "zarrxt.metadata.12", "a/zarr.json");
    if (refused)
    {
        CHECK(std::string(refused->what()).find("does not divide the shard shape on axis 0") !=
              std::string::npos);
    }
    CHECK(!zx::get(s, "a/zarr.json").has_value());
    // chunk_shape and chunk_edges together, and a v2 document naming the grid.
    o.codecs = {zx::codec::bytes{}};
    o.chunk_shape = {4, 6};
    expect_error<zx::array_error>([&] { zx::create<std::int32_t, 2>(s, "a", o); }, "zarrxt.array.8", "");
}

TEST_CASE("rectilinear: the tool prints, verifies and converts a rectilinear array")
{
    const std::string tool = zxtest::env("ZARRXT_TOOL");
    if (tool.empty())
    {
        ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
    }
    const zxtest::temp_dir tmp("rect_tool");
    const auto& dir = tmp.path();
    zx::filesystem_store s(dir.string());
    zx::v3_options o;
    o.shape = {11, 10};
    o.chunk_edges = {{3, 1, 5, 4}, {2, 7, 3}};
    const tensor2 data = make_data<std::int32_t, 2>({11, 10});
    zx::create<std::int32_t, 2>(s, "a", o).write({{0, 0}, {11, 10}}, data);
    const auto info = zxtest::run(zxtest::quote(tool) + " info " + zxtest::quote((dir / "a").string()));
    REQUIRE(info.status == 0);
    CHECK(info.output.find("chunks: rectilinear [[3,1,5,4],[2,7,3]]") != std::string::npos);
    const auto verify = zxtest::run(zxtest::quote(tool) + " verify " + zxtest::quote((dir / "a").string()));
    CHECK_MESSAGE(verify.status == 0, verify.output);
    CHECK(verify.output.find("12 chunks checked, 0 problems") != std::string::npos);
    // To v3 the grid is kept; to v2 the longest edges become the chunks; the values stay.
    REQUIRE(zxtest::run(zxtest::quote(tool) + " convert " + zxtest::quote((dir / "a").string()) + " " +
                        zxtest::quote((dir / "b").string()))
                .status == 0);
    REQUIRE(zxtest::run(zxtest::quote(tool) + " convert " + zxtest::quote((dir / "a").string()) + " " +
                        zxtest::quote((dir / "c").string()) + " --zarr-format 2")
                .status == 0);
    auto b = zx::open<std::int32_t, 2>(s, "b");
    REQUIRE(b.core()->metadata().rectilinear);
    CHECK(b.core()->metadata().rectilinear->to_json() == zx::json::parse("[[3, 1, 5, 4], [2, 7, 3]]"));
    CHECK(tensors_equal(b.read(), data));
    auto c = zx::open<std::int32_t, 2>(s, "c");
    CHECK(c.chunk_shape() == std::array<std::uint64_t, 2>{5, 7});
    CHECK(tensors_equal(c.read(), data));
}

TEST_CASE("rectilinear: zarr-python's documents (corpus) read edge by edge as they state them")
{
    const std::filesystem::path dir = zxtest::env("ZARRXT_CORPUS") + "/zarr-python-metadata/v3";
    if (!std::filesystem::exists(dir / "chunk_grid" / "rectilinear" / "cases.json"))
    {
        ZX_SKIP_CORPUS("corpus folder absent: zarr-python's rectilinear documents not checked");
    }
    auto expect_edges = [](const zx::array_metadata& m, const std::vector<std::vector<std::uint64_t>>& edges)
    {
        REQUIRE(m.rectilinear);
        REQUIRE(m.grid_shape().size() == edges.size());
        for (std::size_t d = 0; d < edges.size(); ++d)
        {
            CAPTURE(d);
            REQUIRE(m.grid_shape()[d] == edges[d].size());
            const auto starts = starts_of(edges[d]);
            for (std::uint64_t c = 0; c < edges[d].size(); ++c)
            {
                CHECK(m.chunk_edge(d, c) == edges[d][c]);
                CHECK(m.chunk_start(d, c) == starts[c]);
            }
        }
    };
    // The array documents, with the expansions stated here from their text.
    auto load = [&](const std::string& rel) { return zx::json::parse(zxtest::read_file(dir / rel)); };
    const auto plain =
        zx::parse_v3_array(load("array/rectilinear_grid.json")); // [[10, 20, 30, 40], 50] over [100, 100]
    expect_edges(plain, {{10, 20, 30, 40}, {50, 50}});
    const auto rle = zx::parse_v3_array(
        load("array/rectilinear_grid_with_rle.json")); // [[[10, 5], 5, 5], [15, 15]] over [60, 30]
    expect_edges(rle, {{10, 10, 10, 10, 10, 5, 5}, {15, 15}});
    // An array with such a grid writes and reads through every chunk.
    zx::memory_store s;
    s.set("a/zarr.json", zx::as_bytes(load("array/rectilinear_grid_with_rle.json").dump()));
    auto a = zx::open<std::int16_t, 2>(s, "a");
    const auto data = make_data<std::int16_t, 2>({60, 30});
    a.write({{0, 0}, {60, 30}}, data);
    CHECK(tensors_equal(zx::open<std::int16_t, 2>(s, "a").read(), data));
    CHECK(zx::get(s, "a/c/6/1")->size() == 5 * 15 * 2);
    // The chunk_grid cases, over a shape each one covers exactly.
    const zx::json cases = load("chunk_grid/rectilinear/cases.json");
    const std::map<std::string,
                   std::pair<std::vector<std::uint64_t>, std::vector<std::vector<std::uint64_t>>>>
        want{
            {"explicit_per_dim", {{100, 50}, {{10, 20, 30, 40}, {50}}}},
            {"uniform_dim_shorthand", {{100, 100}, {{10, 20, 30, 40}, {50, 50}}}},
            {"with_rle_pair", {{60, 30}, {{10, 10, 10, 10, 10, 5, 5}, {15, 15}}}},
        };
    REQUIRE(cases.size() == want.size());
    for (const auto& item : cases.items())
    {
        const std::string name = item.key();
        const zx::json& grid = item.value();
        CAPTURE(name);
        REQUIRE(want.count(name) == 1);
        zx::json doc = rect_doc(want.at(name).first, grid);
        expect_edges(zx::parse_v3_array(doc), want.at(name).second);
    }
}
