// Corruption policies on reads: throw (default), fill (damaged chunks read as missing) and collect
// (read_checked reports every damaged chunk with its key, codec stage and byte range).
#include "array_support.hpp"

#include <xtensor/xview.hpp>

namespace zx = zarrxt;
using zxtest::make_data;

namespace
{

void flip_byte(zx::memory_store& s, const std::string& key, std::size_t at)
{
    auto b = zx::get(s, key);
    REQUIRE(b.has_value());
    REQUIRE(at < b->size());
    b->data()[at] ^= std::byte{0x40};
    s.set(key, b->view());
}

} // namespace

TEST_SUITE("corruption")
{
    TEST_CASE("a damaged chunk: throw by default, fill value under fill, reported under collect")
    {
        zx::memory_store s;
        auto a = zx::create<std::int16_t, 2>(
            s, "a",
            zx::v3_options{.shape = {8, 8},
                           .chunk_shape = {4, 4},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("crc32c")},
                           .fill_value = -1});
        const auto data = make_data<std::int16_t, 2>({8, 8});
        a.write({{0, 0}, {8, 8}}, data);
        flip_byte(s, "a/c/1/0", 3);

        CHECK_THROWS_WITH_AS(a.read(), doctest::Contains("[zarrxt.codec.4] crc32c: checksum mismatch"), zx::codec_error);

        a = a.with_corruption_policy(zx::corruption_policy::fill);
        auto filled = a.read();
        auto expect = data;
        xt::view(expect, xt::range(4, 8), xt::range(0, 4)) = -1;
        CHECK(zxtest::tensors_equal(filled, expect));

        a = a.with_corruption_policy(zx::corruption_policy::throw_error);
        auto checked = a.read_checked({{0, 0}, {8, 8}});
        CHECK(zxtest::tensors_equal(checked.data, expect));
        REQUIRE(checked.problems.size() == 1);
        CHECK(checked.problems[0].key == "a/c/1/0");
        CHECK(checked.problems[0].id == "zarrxt.codec.4");
        CHECK(checked.problems[0].stage == "crc32c");
        // A region avoiding the damaged chunk has nothing to report.
        CHECK(a.read_checked({{0, 0}, {4, 8}}).problems.empty());
    }

    TEST_CASE("a damaged inner chunk fills only itself; a damaged index fills its shard")
    {
        zx::memory_store s;
        auto a = zx::create<std::uint8_t, 2>(
            s, "a",
            zx::v3_options{.shape = {8, 8},
                           .chunk_shape = {8, 8},
                           .codecs = {zx::sharded({4, 4}, {zx::codec_spec("bytes"), zx::codec_spec("gzip", {{"level", 1}})})},
                           .fill_value = 200});
        const auto data = make_data<std::uint8_t, 2>({8, 8});
        a.write({{0, 0}, {8, 8}}, data);
        // Corrupt the gzip stream of inner chunk 0 (it starts at offset 0 with the index at the end).
        flip_byte(s, "a/c/0/0", 12);
        auto checked = a.read_checked({{0, 0}, {8, 8}});
        REQUIRE(checked.problems.size() == 1);
        CHECK(checked.problems[0].key == "a/c/0/0");
        REQUIRE(checked.problems[0].range.has_value());
        CHECK(checked.problems[0].range->offset == 0);
        auto expect = data;
        xt::view(expect, xt::range(0, 4), xt::range(0, 4)) = 200;
        CHECK(zxtest::tensors_equal(checked.data, expect));

        // Now damage the index checksum: the whole shard reads as fill value.
        const auto size = s.stat("a/c/0/0")->size;
        flip_byte(s, "a/c/0/0", static_cast<std::size_t>(size - 1));
        auto checked2 = a.read_checked({{0, 0}, {8, 8}});
        REQUIRE(checked2.problems.size() == 1);
        CHECK(checked2.problems[0].stage == "sharding_indexed/index/crc32c");
        CHECK(checked2.data == xt::xtensor<std::uint8_t, 2>(xt::ones<std::uint8_t>({8, 8}) * 200));
        a = a.with_corruption_policy(zx::corruption_policy::fill);
        CHECK_NOTHROW(a.read());
    }

    TEST_CASE("store and metadata failures are never tolerated")
    {
        zx::memory_store s;
        auto a = zx::create<std::int16_t, 1>(s, "a", zx::v3_options{.shape = {4}, .chunk_shape = {4}});
        a = a.with_corruption_policy(zx::corruption_policy::fill);
        CHECK_THROWS_AS(a.read({{2}, {4}}), zx::array_error); // out of bounds stays an error
        CHECK(zx::is_data_corruption(zx::codec_error(zx::codec_errc::corrupt_stream, "gzip", "x")));
        CHECK_FALSE(zx::is_data_corruption(zx::store_error(zx::store_errc::io, "x")));
        CHECK_FALSE(zx::is_data_corruption(zx::metadata_error(zx::metadata_errc::malformed_json, "x")));
    }
}
