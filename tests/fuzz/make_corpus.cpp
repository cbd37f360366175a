// Writes the seed corpora of the fuzz targets: `make_corpus <tests/fuzz/corpus>` (or
// `ninja -C <build> fuzz-corpus`). Every seed is valid: arrays of every codec and layout written by
// zarrxt into a memory_store, their metadata documents, and encodings of the codec and shard
// configurations the targets pick from, so the fuzzer starts deep inside each decoder rather than
// at its first header check. Output is deterministic; the files are committed.
#include "fuzz_cases.hpp"

#include <zarrxt/detail/deflate.hpp>
#include <zarrxt/store/zip_writer.hpp>

#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

// Records for the record seeds: a subarray and a time (v2), a nested record (v3).
struct seed_inner
{
    float a;
    std::int64_t b;
};
ZARRXT_RECORD(seed_inner, a, b);
struct seed_v2_record
{
    std::int32_t x;
    std::array<std::uint16_t, 2> v;
    std::chrono::sys_time<std::chrono::seconds> t;
};
ZARRXT_RECORD(seed_v2_record, x, v, t);
struct seed_v3_record
{
    seed_inner p;
    std::int8_t k;
};
ZARRXT_RECORD(seed_v3_record, p, k);

namespace
{

using namespace zxfuzz;
namespace fs = std::filesystem;
using zx::codec_spec;

/// corpus file name -> bytes, per target.
std::map<std::string, std::map<std::string, std::string>> g_out;

void emit(const std::string& target, const std::string& name, std::string bytes)
{
    auto [it, fresh] = g_out[target].emplace(name, std::move(bytes));
    if (!fresh)
    {
        throw std::runtime_error("duplicate seed name " + target + "/" + name);
    }
}

std::string str(zx::byte_view b)
{
    return std::string(zx::as_string_view(b));
}

/// Deterministic, moderately compressible bytes.
std::string pattern(std::size_t n, std::uint32_t seed)
{
    std::string s(n, '\0');
    std::uint32_t x = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i)
    {
        x = x * 1103515245u + 12345u;
        s[i] = static_cast<char>((i % 7 < 4) ? (i / 3) & 0xff : (x >> 16) & 0xff);
    }
    return s;
}

template <class T>
T value_at(std::size_t i)
{
    if constexpr (std::is_same_v<T, bool>)
    {
        return i % 3 == 0;
    }
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    {
        using R = typename T::value_type;
        return T(static_cast<R>(i) * R(0.5), -static_cast<R>(i));
    }
    else if constexpr (std::is_same_v<T, zx::float16>)
    {
        return zx::float16(static_cast<float>(i % 50) * 0.25f);
    }
    else
    {
        return static_cast<T>(static_cast<T>(i % 97) * T(3) + T(1));
    }
}

/***************
 * array seeds *
 ***************/

/// Writes an array of pattern values, then the fill value over its first chunk (which is then not
/// stored, or is a missing entry of its shard), so that seeds have present and missing chunks.
template <class T, std::size_t N, class Options>
void write_array(zx::memory_store& s, const std::string& path, const Options& o,
                 const std::vector<std::uint64_t>& first)
{
    auto a = zx::create<T, N>(s, path, o);
    zx::region<N> all;
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < N; ++d)
    {
        all.extent[d] = o.shape[d];
        n *= o.shape[d];
    }
    // Not std::vector: write_raw needs a T* and std::vector<bool> has none.
    std::unique_ptr<T[]> values(new T[n]);
    for (std::size_t i = 0; i < n; ++i)
    {
        values[i] = value_at<T>(i + 1);
    }
    a.write_raw(all, values.get());
    if constexpr (N > 0)
    {
        zx::region<N> r;
        std::uint64_t m = 1;
        for (std::size_t d = 0; d < N; ++d)
        {
            r.extent[d] = std::min(first[d], o.shape[d]);
            m *= r.extent[d];
        }
        std::unique_ptr<T[]> fill(new T[m]);
        std::fill(fill.get(), fill.get() + m, a.fill_value());
        a.write_raw(r, fill.get());
    }
}

/// Every key of the store, as the sections of one fuzz_array_read input.
std::string store_input(const zx::memory_store& s, std::string control)
{
    std::vector<std::string> parts{std::move(control)};
    for (const auto& key : s.list(""))
    {
        const std::string value = str(zx::get(s, key)->view());
        if (value.find(section_mark) != std::string::npos || key.find('\n') != std::string::npos)
        {
            throw std::runtime_error("the section mark occurs in " + key + "; change the seed data");
        }
        parts.push_back(key + "\n" + value);
    }
    return join_sections(parts);
}

struct array_seed
{
    std::string name;
    bool in_group; ///< the array is "a" below a root group (control path bit 0)
    std::function<void(zx::memory_store&, const std::string&)> write;
};

codec_spec spec(const json& j)
{
    return codec_spec(j["name"].get<std::string>(), j["configuration"]);
}

std::vector<array_seed> array_seeds()
{
    using std::uint64_t;
    const codec_spec le = spec(bytes_le());
    const codec_spec be = spec(bytes_be());
    const codec_spec raw("bytes");
    const codec_spec crc("crc32c");
    auto v3 = [](std::vector<uint64_t> shape, std::vector<uint64_t> chunks, std::vector<codec_spec> codecs)
    {
        return zx::v3_options{
            .shape = std::move(shape), .chunk_shape = std::move(chunks), .codecs = std::move(codecs)};
    };
    auto v2 =
        [](std::vector<uint64_t> shape, std::vector<uint64_t> chunks, std::optional<codec_spec> compressor)
    {
        return zx::v2_options{
            .shape = std::move(shape), .chunks = std::move(chunks), .compressor = std::move(compressor)};
    };
    std::vector<array_seed> seeds;
    auto add = [&](std::string name, bool in_group, auto f) {
        seeds.push_back({std::move(name), in_group, f});
    };

    add("v3_raw_float32", false,
        [=](auto& s, auto& p) {
            write_array<float, 2>(s, p, v3({10, 7}, {4, 3}, {le}), {4, 3});
        });
    add("v3_gzip_int16_be", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int16_t, 2>(s, p, v3({9, 5}, {4, 4}, {be, codec_spec("gzip", {{"level", 1}})}),
                                         {4, 4});
        });
    add("v3_zstd_uint8", false,
        [=](auto& s, auto& p)
        { write_array<std::uint8_t, 1>(s, p, v3({100}, {32}, zx::default_v3_codecs()), {32}); });
    add("v3_zstd_checksum_int16", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int16_t, 1>(
                s, p, v3({40}, {16}, {le, codec_spec("zstd", {{"level", 5}, {"checksum", true}})}), {16});
        });
    add("v3_zlib_float64", false,
        [=](auto& s, auto& p) {
            write_array<double, 2>(s, p, v3({6, 6}, {3, 3}, {le, codec_spec("zlib")}), {3, 3});
        });
    add("v3_blosc_int32", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int32_t, 2>(
                s, p,
                v3({12, 4}, {5, 4}, {le, codec_spec("blosc", {{"cname", "lz4"}, {"shuffle", "shuffle"}})}),
                {5, 4});
        });
    add("v3_blosc_zstd_bitshuffle_float64", false,
        [=](auto& s, auto& p)
        {
            write_array<double, 1>(
                s, p,
                v3({30}, {12}, {le, codec_spec("blosc", {{"cname", "zstd"}, {"shuffle", "bitshuffle"}})}),
                {12});
        });
    add("v3_crc32c_complex64", false,
        [=](auto& s, auto& p) {
            write_array<std::complex<float>, 2>(s, p, v3({4, 4}, {2, 2}, {le, crc}), {2, 2});
        });
    add("v3_transpose_uint16_3d", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint16_t, 3>(
                s, p,
                v3({4, 5, 6}, {2, 3, 4},
                   {codec_spec("transpose", {{"order", {2, 0, 1}}}), le, codec_spec("zstd")}),
                {2, 3, 4});
        });
    add("v3_sharded_index_end", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint16_t, 2>(
                s, p, v3({16, 16}, {8, 8}, {zx::sharded({4, 4}, {le, codec_spec("zstd")})}), {4, 4});
        });
    add("v3_sharded_index_start_raw", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int8_t, 2>(
                s, p, v3({12, 10}, {6, 10}, {zx::sharded({3, 5}, {raw}, false, {le})}), {3, 5});
        });
    add("v3_sharded_nested", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint8_t, 2>(
                s, p, v3({16, 16}, {8, 8}, {zx::sharded({4, 4}, {zx::sharded({2, 2}, {raw})})}), {2, 2});
        });
    add("v3_sharded_then_gzip", false,
        [=](auto& s, auto& p)
        {
            write_array<float, 2>(s, p, v3({8, 8}, {8, 8}, {zx::sharded({4, 4}, {le}), codec_spec("gzip")}),
                                  {4, 4});
        });
    add("v3_sharded_transposed_inner", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int32_t, 2>(
                s, p,
                v3({8, 6}, {4, 6},
                   {zx::sharded({2, 3}, {codec_spec("transpose", {{"order", {1, 0}}}), be, crc})}),
                {2, 3});
        });
    add("v3_sharded_edge_shards", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint32_t, 2>(
                s, p, v3({10, 10}, {8, 8}, {zx::sharded({4, 4}, {le, codec_spec("blosc")})}), {4, 4});
        });
    add("v3_bool", false,
        [=](auto& s, auto& p) {
            write_array<bool, 2>(s, p, v3({7, 3}, {4, 2}, {raw}), {4, 2});
        });
    add("v3_float16_nan_fill", false,
        [=](auto& s, auto& p)
        {
            auto o = v3({10}, {4}, {le});
            o.fill_value = zx::scalar::from_json("NaN");
            write_array<zx::float16, 1>(s, p, o, {4});
        });
    add("v3_complex128_be", false,
        [=](auto& s, auto& p) {
            write_array<std::complex<double>, 2>(s, p, v3({3, 3}, {2, 2}, {be}), {2, 2});
        });
    add("v3_rank0", false, [=](auto& s, auto& p) { write_array<double, 0>(s, p, v3({}, {}, {le}), {}); });
    add("v3_rank4_zstd", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint8_t, 4>(s, p, v3({3, 3, 3, 3}, {2, 2, 2, 2}, zx::default_v3_codecs()),
                                         {2, 2, 2, 2});
        });
    add("v3_v2_key_encoding", false,
        [=](auto& s, auto& p)
        {
            auto o = v3({6, 4}, {3, 2}, {le});
            o.v2_chunk_key_encoding = true;
            o.separator = '.';
            write_array<std::int64_t, 2>(s, p, o, {3, 2});
        });
    add("v3_dot_separator_uint32", false,
        [=](auto& s, auto& p)
        {
            auto o = v3({5, 5}, {2, 2}, {le, crc});
            o.separator = '.';
            o.dimension_names = std::vector<std::optional<std::string>>{"y", std::nullopt};
            write_array<std::uint32_t, 2>(s, p, o, {2, 2});
        });
    add("v3_uint64_max_fill", false,
        [=](auto& s, auto& p)
        {
            auto o = v3({9}, {4}, {le, codec_spec("zstd")});
            o.fill_value = std::uint64_t{18446744073709551615ull};
            write_array<std::uint64_t, 1>(s, p, o, {4});
        });
    add("v3_in_group", true,
        [=](auto& s, auto& p)
        {
            zx::group<zx::memory_store>::create(s, "", zx::group_options{.attributes = {{"k", 1}}});
            write_array<float, 2>(s, p, v3({5, 6}, {3, 3}, {le, codec_spec("gzip")}), {3, 3});
        });
    add("v3_numcodecs_delta_lz4", false,
        [=](auto& s, auto& p)
        {
            write_array<std::int16_t, 2>(
                s, p,
                v3({12, 5}, {6, 5},
                   {codec_spec("numcodecs.delta", {{"dtype", "int16"}}), le, codec_spec("numcodecs.lz4")}),
                {6, 5});
        });
    add("v3_numcodecs_bitround_shuffle", false,
        [=](auto& s, auto& p)
        {
            write_array<float, 1>(
                s, p,
                v3({16}, {8},
                   {codec_spec("numcodecs.bitround", {{"keepbits", 6}}), le,
                    codec_spec("numcodecs.shuffle", {{"elementsize", 4}}), codec_spec("zstd")}),
                {8});
        });
    add("v3_numcodecs_fixedscaleoffset", false,
        [=](auto& s, auto& p)
        {
            write_array<double, 1>(
                s, p,
                v3({10}, {5},
                   {codec_spec("numcodecs.fixedscaleoffset",
                               {{"offset", 1}, {"scale", 100}, {"dtype", "float64"}, {"astype", "int32"}}),
                    le, codec_spec("zlib")}),
                {5});
        });
    add("v2_none_float32", false,
        [=](auto& s, auto& p) {
            write_array<float, 2>(s, p, v2({10, 7}, {4, 3}, std::nullopt), {4, 3});
        });
    add("v2_zlib_order_F_int16_be", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({6, 5}, {4, 4}, codec_spec("zlib", {{"level", 1}}));
            o.order = 'F';
            o.big_endian = true;
            write_array<std::int16_t, 2>(s, p, o, {4, 4});
        });
    add("v2_gzip_uint64", false,
        [=](auto& s, auto& p)
        { write_array<std::uint64_t, 1>(s, p, v2({20}, {8}, codec_spec("gzip")), {8}); });
    add("v2_zstd_slash_float64", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({4, 6}, {2, 3}, codec_spec("zstd", {{"level", 1}}));
            o.dimension_separator = '/';
            write_array<double, 2>(s, p, o, {2, 3});
        });
    add("v2_blosc_uint8", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint8_t, 1>(
                s, p,
                v2({50}, {16},
                   codec_spec("blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}})),
                {16});
        });
    add("v2_bool_null_fill", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({5, 5}, {3, 3}, std::nullopt);
            o.null_fill_value = true;
            write_array<bool, 2>(s, p, o, {3, 3});
        });
    add("v2_complex128_order_F_3d", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({3, 4, 2}, {2, 2, 2}, codec_spec("zlib"));
            o.order = 'F';
            write_array<std::complex<double>, 3>(s, p, o, {2, 2, 2});
        });
    add("v2_float16_nan_fill", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({9}, {4}, std::nullopt);
            o.fill_value = zx::scalar::from_json("NaN");
            write_array<zx::float16, 1>(s, p, o, {4});
        });
    add("v2_lz4_int32", false,
        [=](auto& s, auto& p)
        { write_array<std::int32_t, 1>(s, p, v2({30}, {8}, codec_spec("numcodecs.lz4")), {8}); });
    add("v2_filters_delta_shuffle", false,
        [=](auto& s, auto& p)
        {
            // zarrxt writes no v2 filters: write without, then declare them (the chunks then decode
            // to other values, which is all a seed needs).
            write_array<std::int32_t, 1>(s, p, v2({10}, {4}, codec_spec("zlib")), {4});
            json doc = json::parse(str(zx::get(s, ".zarray")->view()));
            doc["filters"] =
                json::array({{{"id", "delta"}, {"dtype", "<i4"}}, {{"id", "shuffle"}, {"elementsize", 4}}});
            s.set(".zarray", zx::as_bytes(doc.dump()));
        });
#if ZARRXT_HAS_BZ2
    add("v2_bz2_float64", false,
        [=](auto& s, auto& p)
        { write_array<double, 2>(s, p, v2({7, 5}, {4, 4}, codec_spec("numcodecs.bz2", {{"level", 1}})), {4, 4}); });
#endif
#if ZARRXT_HAS_LZMA
    add("v2_lzma_int16_F", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({6, 5}, {4, 4}, codec_spec("numcodecs.lzma"));
            o.order = 'F';
            write_array<std::int16_t, 2>(s, p, o, {4, 4});
        });
#endif
    add("v2_packbits_bool", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({9, 5}, {4, 4}, codec_spec("zlib"));
            o.filters = {codec_spec("numcodecs.packbits")};
            write_array<bool, 2>(s, p, o, {4, 4});
        });
    add("v3_scale_offset_cast_value", false,
        [=](auto& s, auto& p)
        {
            write_array<float, 1>(
                s, p,
                v3({12}, {5},
                   {codec_spec("scale_offset", {{"offset", 2}, {"scale", 8}}),
                    codec_spec("cast_value", {{"data_type", "int8"}, {"rounding", "towards-zero"}, {"out_of_range", "clamp"}}),
                    raw}),
                {5});
        });
    add("v3_packbits_uint16", false,
        [=](auto& s, auto& p)
        {
            write_array<std::uint16_t, 2>(
                s, p, v3({5, 6}, {3, 4}, {codec_spec("packbits", {{"first_bit", 2}, {"last_bit", 12}, {"padding_encoding", "last_byte"}})}),
                {3, 4});
        });
    // Variable-length strings: v3 string sharded with zstd inside and a fill value; v2 |O bytes.
    add("v3_string_sharded", false,
        [=](auto& s, auto& p)
        {
            zx::create<std::string, 2>(s, p,
                                       zx::v3_options{.shape = {5, 6},
                                                      .chunk_shape = {4, 4},
                                                      .codecs = {zx::sharded({2, 2})},
                                                      .fill_value = "fill",
                                                      .string = zx::variable_length_string()})
                .write({{0, 0}, {3, 4}}, xt::xtensor<std::string, 2>{{"a", "bb", "", "fill"},
                                                                    {"\u00e9", "x y", "zz", "q"},
                                                                    {"1", "22", "333", "4444"}});
        });
    add("v2_vlen_bytes", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({7}, {3}, codec_spec("zlib", {{"level", 1}}));
            o.string = zx::variable_length_bytes();
            zx::create<std::string, 1>(s, p, o).write(
                {{0}, {5}}, xt::xtensor<std::string, 1>{"\xff", "", "ab", std::string(3, '\0'), "z"});
        });
    // Records: v2 big-endian with a subarray, a time field and a base64 fill; v3 nested, sharded.
    add("v2_records", false,
        [=](auto& s, auto& p)
        {
            auto o = v2({5}, {2}, codec_spec("zlib", {{"level", 1}}));
            o.big_endian = true;
            o.fill_value = zx::scalar::from_json("AAAAB///AAEAAAAAAAAAAA==");
            zx::create<seed_v2_record, 1>(s, p, o).write(
                {{0}, {3}}, xt::xtensor<seed_v2_record, 1>{seed_v2_record{1, {2, 3}, {}}, seed_v2_record{-1, {0, 65535}, {}},
                                                          seed_v2_record{7, {8, 9}, {}}});
        });
    add("v3_records_sharded", false,
        [=](auto& s, auto& p)
        {
            zx::create<seed_v3_record, 2>(
                s, p,
                zx::v3_options{.shape = {4, 3},
                               .chunk_shape = {4, 2},
                               .codecs = {zx::sharded({2, 1}, {codec_spec("bytes", {{"endian", "big"}}), codec_spec("gzip")})},
                               .fill_value = zx::scalar::from_json(json::parse(R"({"p": {"a": 0.5, "b": -1}, "k": 9})"))})
                .write({{1, 0}, {1, 2}}, xt::xtensor<seed_v3_record, 2>{{seed_v3_record{{1.5f, 1ll << 40}, -3},
                                                                        seed_v3_record{{-2.0f, 7}, 4}}});
        });
    add("v2_rank0", false,
        [=](auto& s, auto& p) { write_array<std::int32_t, 0>(s, p, v2({}, {}, std::nullopt), {}); });
    add("v2_in_group", true,
        [=](auto& s, auto& p)
        {
            zx::group<zx::memory_store>::create(s, "", zx::group_options{.zarr_format = 2});
            write_array<std::int32_t, 2>(s, p, v2({7, 7}, {4, 4}, codec_spec("zstd", {{"level", 1}})),
                                         {4, 4});
        });
    // Rectilinear grids: plain, and sharded (the inner chunks divide every edge).
    add("v3_rectilinear_int32", false,
        [=](auto& s, auto& p)
        {
            zx::v3_options o{.shape = {11, 10}, .codecs = {le, codec_spec("zstd", {{"level", 1}})}};
            o.chunk_edges = {{3, 1, 5, 4}, {2, 7, 3}};
            write_array<std::int32_t, 2>(s, p, o, {3, 2});
        });
    add("v3_rectilinear_sharded_uint16", false,
        [=](auto& s, auto& p)
        {
            zx::v3_options o{.shape = {14, 9}, .codecs = {zx::sharded({2, 3}, {le, crc})}};
            o.chunk_edges = {{4, 2, 8}, {3, 6}};
            write_array<std::uint16_t, 2>(s, p, o, {2, 3});
        });
    return seeds;
}

void make_array_seeds()
{
    int i = 0;
    for (const auto& seed : array_seeds())
    {
        zx::memory_store s;
        const std::string path = seed.in_group ? "a" : "";
        seed.write(s, path);
        // Control: flags (bit 0 collect, bit 1 write back), path choice, then the sub-region bytes.
        const std::uint8_t flags = (i % 3 == 0) ? 1 : 2;
        std::string control;
        control += static_cast<char>(flags);
        control += static_cast<char>(seed.in_group ? 1 : 0);
        control += std::string("\x40\x05\x20\x07\x10\x03\x80\x04", 8);
        emit("array_read", seed.name, store_input(s, control));

        // The metadata documents feed the metadata targets.
        const bool v2 = seed.name.rfind("v2_", 0) == 0;
        const std::string prefix = seed.in_group ? "a/" : "";
        const std::string doc = str(zx::get(s, prefix + (v2 ? ".zarray" : "zarr.json"))->view());
        emit(v2 ? "metadata_v2" : "metadata_v3", seed.name, doc);
        if (seed.in_group)
        {
            emit(v2 ? "metadata_v2" : "metadata_v3", seed.name + "_root_group",
                 str(zx::get(s, v2 ? ".zgroup" : "zarr.json")->view()));
        }
        ++i;
    }
}

/// Documents the writer does not produce but readers must accept (or refuse cleanly).
void make_metadata_seeds()
{
    json v3 = json::parse(g_out["metadata_v3"]["v3_raw_float32"]);
    json d = v3;
    d["extension_x"] = {{"must_understand", false}, {"k", 1}};
    d["storage_transformers"] = json::array();
    emit("metadata_v3", "v3_tolerated_extension", d.dump());
    d = v3;
    d["fill_value"] = "0x7fc00000";
    d["codecs"] = json::array({"bytes"});
    emit("metadata_v3", "v3_hex_fill_bare_codec_name", d.dump());
    d = v3;
    d["data_type"] = "complex64";
    d["fill_value"] = json::array({"Infinity", "NaN"});
    emit("metadata_v3", "v3_complex_fill_special", d.dump());
    d = v3;
    d["codecs"] = json::array({codec("transpose", {{"order", "F"}}), bytes_le(), codec("crc32c")});
    emit("metadata_v3", "v3_transpose_legacy_F", d.dump());
    d = v3;
    d["data_type"] = {{"name", "numpy.datetime64"},
                      {"configuration", {{"unit", "ms"}, {"scale_factor", 10}}}};
    d["fill_value"] = "NaT";
    emit("metadata_v3", "v3_datetime64_nat_fill", d.dump());
    d["data_type"] = {{"name", "fixed_length_utf32"}, {"configuration", {{"length_bytes", 12}}}};
    d["fill_value"] = "\u00e9t\u00e9";
    emit("metadata_v3", "v3_fixed_length_utf32_fill", d.dump());
    d["data_type"] = {{"name", "null_terminated_bytes"}, {"configuration", {{"length_bytes", 5}}}};
    d["fill_value"] = "AP8=";
    emit("metadata_v3", "v3_null_terminated_bytes_fill", d.dump());

    json v2 = json::parse(g_out["metadata_v2"]["v2_none_float32"]);
    json e = v2;
    e["compressor"] = {{"id", "zstd"}, {"level", 3}, {"checksum", true}};
    e["fill_value"] = "-Infinity";
    emit("metadata_v2", "v2_zstd_checksum_inf_fill", e.dump());
    e = v2;
    e["compressor"] = {{"id", "blosc"}, {"cname", "zstd"}, {"clevel", 3}, {"shuffle", 2}, {"blocksize", 0}};
    e["dtype"] = ">u2";
    e["fill_value"] = 7;
    emit("metadata_v2", "v2_blosc_bitshuffle_be", e.dump());
    e = v2;
    e["compressor"] = {{"id", "lz4"}, {"acceleration", 1}};
    emit("metadata_v2", "v2_lz4", e.dump());
    e = v2;
    e["dtype"] = ">m8[10s]";
    e["fill_value"] = -9223372036854775807 - 1;
    emit("metadata_v2", "v2_timedelta64_be_nat_fill", e.dump());
    e = v2;
    e["dtype"] = ">U3";
    e["fill_value"] = "ab";
    emit("metadata_v2", "v2_utf32_be_fill", e.dump());
    e = v2;
    e["dtype"] = "|S7";
    e["fill_value"] = "eno=";
    emit("metadata_v2", "v2_bytes_base64_fill", e.dump());
    e = v2;
    e["filters"] = json::array({{{"id", "delta"}, {"dtype", "<f4"}}});
    emit("metadata_v2", "v2_delta_filter", e.dump());
    e = v2;
    e["filters"] = json::array(
        {{{"id", "fixedscaleoffset"}, {"offset", 1000}, {"scale", 10}, {"dtype", "<f4"}, {"astype", ">i2"}},
         {{"id", "shuffle"}, {"elementsize", 2}}});
    emit("metadata_v2", "v2_fixedscaleoffset_shuffle_filters", e.dump());
    e = v2;
    e["filters"] = json::array({{{"id", "bitround"}, {"keepbits", 7}}});
    e["compressor"] = {{"id", "lz4"}, {"acceleration", 3}};
    emit("metadata_v2", "v2_bitround_filter_lz4", e.dump());
}

/********************
 * codec and shards *
 ********************/

std::string header(std::initializer_list<int> bytes)
{
    std::string s;
    for (int b : bytes)
    {
        s += static_cast<char>(b);
    }
    return s;
}

void make_codec_seeds()
{
    const auto& singles = single_codecs();
    zx::codec::codec_context ctx;
    for (std::size_t i = 0; i < singles.size(); ++i)
    {
        const auto made = zx::codec::detail::make_builtin_codec(spec(singles[i]), ctx);
        for (std::size_t n : {0, 40, 700})
        {
            const std::string data = pattern(n, static_cast<std::uint32_t>(i * 7 + n));
            zx::buffer enc;
            made.b2b->encode(zx::as_bytes(data), enc);
            const std::string name =
                singles[i]["name"].get<std::string>() + "_" + std::to_string(i) + "_" + std::to_string(n);
            emit("codecs", name, header({static_cast<int>(i), 0}) + str(enc.view()));
            emit("codecs", name + "_exact",
                 header({static_cast<int>(i), 3, static_cast<int>(n & 0xff), static_cast<int>(n >> 8)}) +
                     str(enc.view()));
        }
    }
    const int bytes_sel = static_cast<int>(singles.size());
    emit("codecs", "bytes_int32_le", header({bytes_sel, 3}) + pattern(24, 1));
    emit("codecs", "bytes_float64_be", header({bytes_sel, 0x80 | 11}) + pattern(40, 2));
    emit("codecs", "bytes_complex128_be", header({bytes_sel, 0x80 | 13}) + pattern(64, 3));
    const int transpose_sel = bytes_sel + 1;
    // options: rank - 1 in the low two bits, dtype above; then the extents, then the permutation.
    emit("codecs", "transpose_uint8_3d",
         header({transpose_sel, 2 | (5 << 2), 2, 3, 4, 1, 2}) + pattern(60, 4));
    emit("codecs", "transpose_float32_2d",
         header({transpose_sel, 1 | (10 << 2), 3, 5, 1}) + pattern(4 * 4 * 6, 5));
    emit("codecs", "transpose_int16_4d",
         header({transpose_sel, 3 | (2 << 2), 1, 2, 3, 2, 3, 2, 1}) + pattern(2 * 2 * 3 * 4 * 3, 6));

    // vlen: options bit 7 chooses vlen-utf8, the low bits the element count (chunk layout: a
    // u32le count, then u32le length + bytes for each value).
    const int vlen_sel = bytes_sel + 3;
    auto vlen_chunk = [](const std::vector<std::string>& values)
    {
        auto u32 = [](std::size_t v)
        {
            return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff),
                               static_cast<char>((v >> 16) & 0xff), static_cast<char>((v >> 24) & 0xff)};
        };
        std::string out = u32(values.size());
        for (const auto& v : values)
        {
            out += u32(v.size()) + v;
        }
        return out;
    };
    emit("codecs", "vlen_utf8_4", header({vlen_sel, 0x80 | 4}) + vlen_chunk({"a", "\u00e9\u00e9", "", "ab"}));
    emit("codecs", "vlen_bytes_3", header({vlen_sel, 3}) + vlen_chunk({"\xff\x00", "ab", std::string(300, 'x')}));
    emit("codecs", "vlen_utf8_0", header({vlen_sel, 0x80}) + vlen_chunk({}));
    const int chain_sel = bytes_sel + 2;
    const auto& cases = chain_cases();
    for (std::size_t i = 0; i < cases.size(); ++i)
    {
        const chain_case& k = cases[i];
        zx::codec::codec_context c;
        c.dtype = k.dtype;
        c.chunk_shape = zx::dims(k.chunk_shape);
        std::vector<codec_spec> specs;
        for (const auto& j : k.codecs)
        {
            specs.push_back(spec(j));
        }
        const auto chain = zx::dynamic_chain::from_specs(specs, c);
        std::uint64_t n = c.element_size();
        for (auto e : k.chunk_shape)
        {
            n *= e;
        }
        std::string data = pattern(static_cast<std::size_t>(n), static_cast<std::uint32_t>(100 + i));
        if (k.dtype == zx::dtype_id::bool_)
        {
            for (auto& ch : data)
            {
                ch = static_cast<char>(ch & 1);
            }
        }
        // A quarter of the chunk zero (the fill value), so sharded chains have missing inner chunks.
        std::fill(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(data.size() / 4), '\0');
        zx::codec::array_view v;
        v.data = reinterpret_cast<std::byte*>(data.data());
        v.element_size = c.element_size();
        v.shape = c.chunk_shape;
        v.strides = zx::codec::array_view::c_strides(v.shape);
        zx::codec::scratch_space scratch;
        const std::string enc = str(chain.encode(v, scratch));
        emit("codecs", "chain_" + std::to_string(i), header({chain_sel, static_cast<int>(i)}) + enc);
    }
}

void make_shard_seeds()
{
    using shard_codec = zx::codec::sharding_indexed<zx::dynamic_chain, zx::dynamic_chain, zx::no_index_cache>;
    const auto& cases = shard_cases();
    for (std::size_t i = 0; i < cases.size(); ++i)
    {
        const shard_case& k = cases[i];
        zx::codec::codec_context c;
        c.dtype = k.dtype;
        c.chunk_shape = zx::dims(k.shard_shape);
        c.fill = zx::fill_value::of(std::uint64_t{0x0102030405060708}); // as fuzz_shard_index binds it
        const shard_codec sc = shard_codec::from_json(k.configuration, c);
        std::uint64_t n = 1;
        for (auto e : k.shard_shape)
        {
            n *= e;
        }
        const std::size_t width = c.element_size();
        for (int variant = 0; variant < 2; ++variant)
        {
            std::string data =
                pattern(static_cast<std::size_t>(n * width), static_cast<std::uint32_t>(200 + i));
            if (variant == 1)
            {
                // The first half holds the fill value: those inner chunks are not stored.
                for (std::size_t e = 0; e < n / 2; ++e)
                {
                    std::memcpy(data.data() + e * width, c.fill.data(), width);
                }
            }
            zx::buffer out;
            const std::string enc = str(sc.encode(zx::as_bytes(data), out));
            emit("shard_index", "shard_" + std::to_string(i) + (variant ? "_half_missing" : "_full"),
                 header({static_cast<int>(i)}) + enc);
        }
    }
}

/// Zip archives (fuzz_zip): zip_writer's, with ZIP64 forced, and one with a DEFLATE entry and a
/// directory entry assembled here byte by byte (zip_writer writes STORED entries only).
void make_zip_seeds()
{
    const fs::path dir = fs::temp_directory_path() / ("zarrxt-make-corpus-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const bool zip64 : {false, true})
    {
        zx::zip_writer w(dir / "a.zip", {.force_zip64 = zip64});
        w.set("zarr.json", zx::as_bytes(std::string_view("{\"zarr_format\": 3, \"node_type\": \"group\"}")));
        w.set("a/c/0", zx::as_bytes(pattern(300, 1)));
        w.set("a/c/1", {});
        w.commit();
        std::ifstream f(dir / "a.zip", std::ios::binary);
        emit("zip", zip64 ? "writer_zip64" : "writer", std::string(std::istreambuf_iterator<char>(f), {}));
    }
    fs::remove_all(dir);

    namespace z = zx::detail::zip;
    const std::string plain = pattern(2000, 2);
    zx::buffer packed;
    zx::detail::deflate_all(zx::detail::deflate_container::raw, 6, zx::as_bytes(plain), packed, "seed");
    const std::string deflated = str(packed.view());
    const std::uint32_t crc = z::crc32(0, zx::as_bytes(plain));
    auto le = [](std::uint64_t v, int n)
    {
        std::string b(static_cast<std::size_t>(n), '\0');
        for (int i = 0; i < n; ++i)
        {
            b[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
        }
        return b;
    };
    struct file
    {
        std::string name, data;
        std::uint16_t method;
        std::uint32_t crc;
        std::uint64_t size;
    };
    const file files[] = {{"d/", "", 0, 0, 0}, {"d/x", deflated, 8, crc, plain.size()}};
    std::string out;
    std::string central;
    for (const auto& f : files)
    {
        const std::string common = le(20, 2) + le(0, 2) + le(f.method, 2) + le(0, 2) + le(33, 2) + le(f.crc, 4) +
                                   le(f.data.size(), 4) + le(f.size, 4) + le(f.name.size(), 2) + le(0, 2);
        central += le(z::central_signature, 4) + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                   le(out.size(), 4) + f.name;
        out += le(z::local_signature, 4) + common + f.name + f.data;
    }
    const std::size_t at = out.size();
    out += central + le(z::end_signature, 4) + le(0, 2) + le(0, 2) + le(2, 2) + le(2, 2) + le(central.size(), 4) +
           le(at, 4) + le(0, 2);
    emit("zip", "deflate", out);
}

/// Reference files (fuzz_kerchunk): version 0 with every kind of reference, version 1 with
/// templates, generators over a range and a list, base64 data and expressions.
void make_kerchunk_seeds()
{
    emit("kerchunk", "v0", R"({".zgroup": "{\"zarr_format\": 2}", "a/.zarray": {"zarr_format": 2, "shape": [4],
"chunks": [2], "dtype": "<i4", "compressor": null, "fill_value": 0, "order": "C", "filters": null},
"a/0": ["t.bin", 8, 8], "a/1": ["data.bin"], "b": [null, 250, 6], "c": "base64:aGVsbG8="})");
    emit("kerchunk", "v1", R"({"version": 1, "templates": {"u": "t.bin", "d": "dir"},
"refs": {"k": "inline", "r": ["{{d}}/{{u}}", 16, 32], "w": ["{{ u }}"]},
"gen": [{"key": "g/{{ i }}.{{j}}", "url": "{{d}}/{{u}}", "offset": "{{ (i * 3 + j) * 8 // 2 % 200 }}",
"length": "8", "dimensions": {"i": {"start": 0, "stop": 4, "step": 2}, "j": [0, 1, -1]}},
{"key": "h/{{n}}", "url": "a", "dimensions": {"n": {"stop": 3}}}]})");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::cerr << "usage: make_corpus <corpus directory>\n";
        return 2;
    }
    try
    {
        make_array_seeds();
        make_metadata_seeds();
        make_codec_seeds();
        make_shard_seeds();
        make_zip_seeds();
        make_kerchunk_seeds();
    }
    catch (const std::exception& e)
    {
        std::cerr << "make_corpus: " << e.what() << "\n";
        return 1;
    }
    std::size_t files = 0;
    std::size_t bytes = 0;
    for (const auto& [target, seeds] : g_out)
    {
        const fs::path dir = fs::path(argv[1]) / target;
        fs::create_directories(dir);
        for (const auto& e : fs::directory_iterator(dir))
        {
            if (e.is_regular_file())
            {
                fs::remove(e.path()); // seeds no longer generated go too
            }
        }
        for (const auto& [name, content] : seeds)
        {
            std::ofstream(dir / name, std::ios::binary) << content;
            ++files;
            bytes += content.size();
        }
    }
    std::cout << "wrote " << files << " seeds, " << bytes << " bytes\n";
    return 0;
}
