// The fixed configurations that fuzz_codecs and fuzz_shard_index pick from with an input byte, shared
// with make_corpus so that every seed is a valid encoding for the configuration it names. The bytes
// are fuzzed; the configurations are not (fuzz_metadata_* fuzz those).
#pragma once

#include "fuzz_support.hpp"

#include <vector>

namespace zxfuzz
{

/// A codec chain bound to the chunks of one array.
struct chain_case
{
    zx::dtype_id dtype;
    std::vector<std::uint64_t> chunk_shape;
    json codecs;          ///< a v3 "codecs" list
    bool lossless = true; ///< re-encoding a decoded chunk gives back the same chunk
};

inline json codec(const std::string& name, json configuration = json::object())
{
    return {{"name", name}, {"configuration", std::move(configuration)}};
}

inline json sharding(std::vector<std::uint64_t> inner, json codecs, json index_codecs,
                     const char* location = "end")
{
    return codec("sharding_indexed", {{"chunk_shape", inner},
                                      {"codecs", std::move(codecs)},
                                      {"index_codecs", std::move(index_codecs)},
                                      {"index_location", location}});
}

inline json bytes_le()
{
    return codec("bytes", {{"endian", "little"}});
}

inline json bytes_be()
{
    return codec("bytes", {{"endian", "big"}});
}

/// One chain per interesting shape of the pipeline: each bytes->bytes codec, a transpose, a
/// checksum after a compressor, sharding alone (partial reads), sharding followed by a compressor
/// (whole-shard decode), sharding nested in sharding, the numcodecs filters (one of which changes
/// the element type), packbits, cast_value and scale_offset.
inline const std::vector<chain_case>& chain_cases()
{
    using zx::dtype_id;
    const json index = json::array({bytes_le(), codec("crc32c")});
    static const std::vector<chain_case> cases = {
        {dtype_id::float32, {8, 8}, json::array({bytes_be(), codec("gzip", {{"level", 1}})})},
        {dtype_id::int16,
         {4, 6},
         json::array({codec("transpose", {{"order", {1, 0}}}), bytes_le(), codec("zstd"), codec("crc32c")})},
        {dtype_id::uint8,
         {64},
         json::array({codec("bytes"), codec("blosc", {{"cname", "lz4"}, {"shuffle", "shuffle"}})})},
        {dtype_id::float64, {3, 5}, json::array({bytes_le(), codec("zlib"), codec("crc32c")})},
        {dtype_id::uint16,
         {4, 4},
         json::array({sharding({2, 2}, json::array({bytes_le(), codec("zstd")}), index)})},
        {dtype_id::int32,
         {4, 4},
         json::array(
             {sharding({2, 2},
                       json::array({codec("transpose", {{"order", {1, 0}}}), bytes_be(), codec("gzip")}),
                       json::array({bytes_le()}), "start"),
              codec("zstd")})},
        {dtype_id::uint8,
         {8, 8},
         json::array({sharding({4, 4}, json::array({sharding({2, 2}, json::array({codec("bytes")}), index)}),
                               index)})},
        {dtype_id::complex128, {2, 3}, json::array({bytes_be(), codec("crc32c")})},
        {dtype_id::int64,
         {16},
         json::array(
             {bytes_le(), codec("blosc", {{"cname", "zstd"}, {"shuffle", "bitshuffle"}, {"clevel", 3}})})},
        {dtype_id::bool_, {5, 3}, json::array({codec("transpose", {{"order", {1, 0}}}), codec("bytes")})},
        {dtype_id::int16,
         {6, 5},
         json::array({codec("numcodecs.delta", {{"dtype", "int16"}}), bytes_le(), codec("numcodecs.lz4")})},
        {dtype_id::float32,
         {4, 8},
         json::array({codec("numcodecs.bitround", {{"keepbits", 5}}), bytes_le(),
                      codec("numcodecs.shuffle", {{"elementsize", 4}}), codec("zstd")}),
         false},
        {dtype_id::float64,
         {10},
         json::array({codec("numcodecs.fixedscaleoffset",
                            {{"offset", 100}, {"scale", 10}, {"dtype", "float64"}, {"astype", "int16"}}),
                      bytes_be(), codec("zlib")}),
         false},
        // packbits (array->bytes) for bool and for 12 of int16's bits; numcodecs' PackBits filter.
        {dtype_id::bool_, {5, 7}, json::array({codec("packbits", {{"padding_encoding", "first_byte"}})})},
        {dtype_id::int16, {6}, json::array({codec("packbits", {{"first_bit", 0}, {"last_bit", 11}}), codec("zstd")})},
        {dtype_id::bool_, {3, 5}, json::array({codec("numcodecs.packbits"), codec("bytes"), codec("numcodecs.zlib")})},
        // scale_offset then cast_value (the element type changes twice), and each on its own.
        {dtype_id::float64,
         {8},
         json::array({codec("scale_offset", {{"offset", 1}, {"scale", 4}}),
                      codec("cast_value", {{"data_type", "int16"}, {"out_of_range", "clamp"}}), bytes_le()})},
        {dtype_id::uint8, {16}, json::array({codec("cast_value", {{"data_type", "float32"}}), bytes_be()})},
        // Lossy: integer arithmetic wraps modulo 2^32 as numpy's does, so a decoded value whose
        // (x - offset) * scale leaves the type's range encodes to another one (tests/test_codec.cpp).
        {dtype_id::int32,
         {4, 4},
         json::array({codec("scale_offset", {{"offset", -3}, {"scale", 7}}), bytes_be()}),
         false},
#if ZARRXT_HAS_BZ2
        {dtype_id::int32, {4, 6}, json::array({bytes_le(), codec("numcodecs.bz2", {{"level", 9}})})},
#endif
#if ZARRXT_HAS_LZMA
        {dtype_id::float32, {6, 4}, json::array({codec("transpose", {{"order", {1, 0}}}), bytes_le(), codec("numcodecs.lzma")})},
#endif
    };
    return cases;
}

/// The bytes->bytes codecs fuzz_codecs decodes on their own, each with its configuration.
inline const std::vector<json>& single_codecs()
{
    static const std::vector<json> codecs = {
        codec("gzip", {{"level", 5}}),
        codec("zlib", {{"level", 5}}),
        codec("zstd", {{"level", 3}, {"checksum", false}}),
        codec("zstd", {{"level", 3}, {"checksum", true}}),
        codec("blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 4}}),
        codec("blosc", {{"cname", "zstd"}, {"clevel", 5}, {"shuffle", "bitshuffle"}, {"typesize", 2}}),
        codec("blosc", {{"cname", "blosclz"}, {"clevel", 9}, {"shuffle", "noshuffle"}, {"typesize", 1}}),
        codec("blosc", {{"cname", "zlib"}, {"clevel", 1}, {"shuffle", "shuffle"}, {"typesize", 8}}),
        codec("crc32c"),
        codec("numcodecs.lz4", {{"acceleration", 1}}),
        codec("numcodecs.shuffle", {{"elementsize", 4}}),
        codec("numcodecs.shuffle", {{"elementsize", 3}}),
#if ZARRXT_HAS_BZ2
        codec("numcodecs.bz2", {{"level", 1}}),
#endif
#if ZARRXT_HAS_LZMA
        // Small presets: decoding does not depend on them (.xz and .lzma describe themselves), and the
        // round trip's encoder then stays far below the fuzzer's 64 MiB allocation limit (preset 6
        // would allocate a 64 MiB match finder for a 16 MiB chunk, were the cap raised).
        codec("numcodecs.lzma", {{"format", 1}, {"check", -1}, {"preset", 1}, {"filters", nullptr}}),
        codec("numcodecs.lzma", {{"format", 1}, {"check", 10}, {"preset", 0}}),
        codec("numcodecs.lzma", {{"format", 2}, {"preset", 1}}),
        codec("numcodecs.lzma", {{"format", 3}, {"filters", json::array({{{"id", 3}, {"dist", 2}}, {{"id", 33}, {"preset", 1}}})}}),
#endif
    };
    return codecs;
}

/// A sharding codec bound to one shard shape: the configurations fuzz_shard_index reads shards of.
struct shard_case
{
    zx::dtype_id dtype;
    std::vector<std::uint64_t> shard_shape;
    json configuration; ///< sharding_indexed's configuration
};

inline const std::vector<shard_case>& shard_cases()
{
    using zx::dtype_id;
    const json crc_index = json::array({bytes_le(), codec("crc32c")});
    const json raw_index = json::array({bytes_le()});
    auto cfg = [](std::vector<std::uint64_t> inner, json codecs, json index, const char* location)
    { return sharding(std::move(inner), std::move(codecs), std::move(index), location)["configuration"]; };
    static const std::vector<shard_case> cases = {
        {dtype_id::uint8, {8, 8}, cfg({4, 4}, json::array({codec("bytes")}), raw_index, "end")},
        {dtype_id::uint16, {8, 8}, cfg({2, 4}, json::array({bytes_le(), codec("zstd")}), crc_index, "end")},
        {dtype_id::float32,
         {6, 4},
         cfg({3, 2}, json::array({bytes_be(), codec("gzip")}), crc_index, "start")},
        {dtype_id::int32, {4, 4, 4}, cfg({2, 2, 2}, json::array({bytes_le()}), raw_index, "start")},
        {dtype_id::float64, {16}, cfg({4}, json::array({bytes_le(), codec("crc32c")}), crc_index, "end")},
        {dtype_id::uint8,
         {8, 8},
         cfg({4, 4}, json::array({sharding({2, 2}, json::array({codec("bytes")}), crc_index)}), crc_index,
             "end")},
        {dtype_id::int16,
         {4, 6},
         cfg({2, 3}, json::array({codec("transpose", {{"order", {1, 0}}}), bytes_le(), codec("zlib")}),
             raw_index, "end")},
    };
    return cases;
}

} // namespace zxfuzz
