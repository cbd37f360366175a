/** @file options.hpp
 *  Options for creating arrays and groups. Plain aggregates: use designated initialisers,
 *  `zarrxt::v3_options{.shape = {...}, .chunk_shape = {...}, .codecs = {...}}`. Every member has
 *  a default member initialiser, so that leaving members out does not trip GCC's
 *  -Wmissing-field-initializers (part of -Wextra) in user code.
 */
#pragma once

#include "corruption.hpp"
#include "detail/json.hpp"
#include "fill_value.hpp"
#include "metadata/array_metadata.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zarrxt
{

/// The codecs zarr-python 3 uses by default for numeric arrays: bytes (little-endian) + zstd level 0.
inline std::vector<codec_spec> default_v3_codecs()
{
    return {codec_spec("bytes", {{"endian", "little"}}), codec_spec("zstd", {{"level", 0}, {"checksum", false}})};
}

struct v3_options
{
    std::vector<std::uint64_t> shape{};
    std::vector<std::uint64_t> chunk_shape{}; ///< the chunk (or shard) shape
    /// A rectilinear chunk grid instead (zarr-extensions): the edge lengths of the chunks along
    /// each axis, summing to at least the shape (chunk_shape stays empty). docs/rectilinear.md.
    std::vector<std::vector<std::uint64_t>> chunk_edges{};
    std::vector<codec_spec> codecs = default_v3_codecs(); ///< codec objects convert implicitly
    scalar fill_value{};                                  ///< empty: zero of the data type
    char separator = '/';                                 ///< chunk key separator
    bool v2_chunk_key_encoding = false;                   ///< "v2" keys (0.1.2) instead of c/0/1/2
    std::optional<dimension_name_list> dimension_names{}; ///< written as "dimension_names"
    json attributes = json::object();
    bool overwrite = false;          ///< replace an existing node at the path (erasing its chunks)
    bool write_empty_chunks = false; ///< store chunks that hold only the fill value
    /// datetime64 / timedelta64 only: the unit of the counts (set from the element type by
    /// array<std::chrono::...>::create; needed where the dtype is given at run time).
    std::optional<zarrxt::time_unit> unit{};
    /// Fixed-width strings only (element type std::string): zarrxt::fixed_length_utf32(n) or
    /// zarrxt::null_terminated_bytes(n).
    std::optional<zarrxt::string_type> string{};
    /// Records only: the fields (set from the struct by array<S>::create; needed where the data
    /// type is given at run time). Offsets are computed; byte orders are the array's.
    std::vector<record_field> fields{};
};

struct v2_options
{
    std::vector<std::uint64_t> shape{};
    std::vector<std::uint64_t> chunks{};
    std::optional<codec_spec> compressor = codec_spec("zstd", {{"level", 1}}); ///< nullopt: uncompressed
    std::vector<codec_spec> filters{}; ///< v2 filters, in order (numcodecs.packbits, numcodecs.delta, ...)
    scalar fill_value{};          ///< empty: zero of the data type
    bool null_fill_value = false; ///< write "fill_value": null (readers then return zeros)
    char order = 'C';             ///< 'F' stores chunks in Fortran order
    char dimension_separator = '.';
    bool big_endian = false;
    std::optional<dimension_name_list> dimension_names{}; ///< written as the "_ARRAY_DIMENSIONS" attribute
    json attributes = json::object();
    bool overwrite = false;
    bool write_empty_chunks = false;
    std::optional<zarrxt::time_unit> unit{}; ///< datetime64 / timedelta64 only, as in v3_options
    std::optional<zarrxt::string_type> string{}; ///< fixed-width strings only, as in v3_options (<U n, |S n)
    std::vector<record_field> fields{};          ///< records only, as in v3_options
};

/// The settings of one array handle: what reads do with chunks they cannot decode, and whether
/// writes store chunks that hold only the fill value. They are values of the handle, given when it
/// is opened or created (`write_empty_chunks` then comes from the options) and changed by making
/// another handle (`with_settings`): handles that share an array never share settings, so choosing
/// them on one thread cannot race with operations through another handle on another thread.
struct array_settings
{
    corruption_policy on_corruption = corruption_policy::throw_error;
    bool write_empty_chunks = false; ///< store chunks that hold only the fill value
};

struct group_options
{
    int zarr_format = 3;
    json attributes = json::object();
    bool overwrite = false;
};

/// A sharding_indexed codec spec: shards of the array's chunk shape hold inner chunks of
/// `inner_chunk_shape`, encoded with `codecs`; the index uses `index_codecs` at `index_location`.
inline codec_spec sharded(std::vector<std::uint64_t> inner_chunk_shape, std::vector<codec_spec> codecs = default_v3_codecs(),
                          bool index_at_end = true,
                          std::vector<codec_spec> index_codecs = {codec_spec("bytes", {{"endian", "little"}}),
                                                                  codec_spec("crc32c")})
{
    json c = json::array();
    for (const auto& s : codecs)
    {
        c.push_back(s.to_json());
    }
    json ic = json::array();
    for (const auto& s : index_codecs)
    {
        ic.push_back(s.to_json());
    }
    return codec_spec("sharding_indexed", {{"chunk_shape", inner_chunk_shape},
                                           {"codecs", c},
                                           {"index_codecs", ic},
                                           {"index_location", index_at_end ? "end" : "start"}});
}

} // namespace zarrxt
