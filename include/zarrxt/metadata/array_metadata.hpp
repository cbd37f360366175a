/** @file metadata/array_metadata.hpp
 *  The one metadata model. Zarr v3 `zarr.json` maps onto it directly; v2 `.zarray` is lowered onto
 *  it at open (metadata/v2.hpp): `order: "F"` becomes a transpose codec, dtype byte order becomes the
 *  bytes codec's endian, the compressor becomes a bytes-to-bytes codec. Everything downstream (codec
 *  chains, kernels) sees only this model, never the format version.
 *
 *  The parsed document is kept (`document`) so that writing metadata back (attributes, resize)
 *  changes only the members that changed and keeps everything else, including unknown members
 *  that were tolerated, byte for byte in meaning and in order.
 */
#pragma once

#include "../codec/codec_spec.hpp"
#include "../data_type.hpp"
#include "../detail/checked.hpp"
#include "../detail/json.hpp"
#include "../detail/small_vector.hpp"
#include "../dtype.hpp"
#include "../fill_value.hpp"
#include "../record.hpp"
#include "chunk_key.hpp"
#include "document.hpp"
#include "rectilinear.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// The names of an array's dimensions, one per axis; an entry may be unnamed (null). Zarr v3 stores
/// them as the `dimension_names` member, Zarr v2 as the `_ARRAY_DIMENSIONS` attribute (the xarray
/// and NCZarr convention); both are this one list in the model.
using dimension_name_list = std::vector<std::optional<std::string>>;

struct array_metadata
{
    int zarr_format = 3;
    std::vector<std::uint64_t> shape;
    /// The chunk shape of a regular grid; of a rectilinear grid, the longest edge per axis among
    /// the chunks that hold elements (what a buffer for any chunk must hold).
    std::vector<std::uint64_t> chunk_shape;
    /// A `rectilinear` chunk grid (v3 only; metadata/rectilinear.hpp), or null for the regular
    /// grid of chunk_shape. Shared: metadata is copied per handle and the grid never changes once
    /// parsed (a resize that needs more edges makes a new one).
    std::shared_ptr<const rectilinear_grid> rectilinear;
    /// The data type with its parameters (data_type.hpp): the time unit of datetime64 /
    /// timedelta64, the element size of fixed-width strings (|S7: 7, <U13: 52) and records (the sum
    /// of their fields), a record's fields. Compares with and converts to its dtype_id.
    data_type dtype{};
    fill_value fill;
    chunk_key_encoding key_encoding;
    std::vector<codec_spec> codecs;
    std::optional<dimension_name_list> dimension_names;
    json attributes = json::object(); ///< v2: without a well-formed `_ARRAY_DIMENSIONS` (see dimension_names)

    /// The document as read (v3: zarr.json; v2: .zarray), for lossless write-back.
    json document;

    std::size_t rank() const noexcept { return shape.size(); }
    std::size_t element_size() const noexcept { return dtype.size(); }

    /// Elements in one (full, untrimmed) chunk.
    std::uint64_t chunk_elements() const
    {
        return detail::checked_product(chunk_shape, "chunk element count");
    }

    /// Number of chunks along each axis that hold elements of the array.
    std::vector<std::uint64_t> grid_shape() const
    {
        std::vector<std::uint64_t> g(shape.size());
        for (std::size_t i = 0; i < shape.size(); ++i)
        {
            g[i] = rectilinear ? rectilinear->chunks_for(i, shape[i])
                               : shape[i] / chunk_shape[i] + (shape[i] % chunk_shape[i] != 0 ? 1 : 0);
        }
        return g;
    }

    // The grid along one axis, for every kind of grid: the chunk holding element i, and the first
    // element and edge length of chunk c. Every piece of code that maps elements to chunks goes
    // through these (the kernels, resize, selections, the tool), so a new grid is one change here.
    std::uint64_t chunk_index(std::size_t d, std::uint64_t i) const noexcept
    {
        return rectilinear ? rectilinear->index(d, i) : i / chunk_shape[d];
    }
    std::uint64_t chunk_start(std::size_t d, std::uint64_t c) const noexcept
    {
        return rectilinear ? rectilinear->start(d, c) : c * chunk_shape[d];
    }
    std::uint64_t chunk_edge(std::size_t d, std::uint64_t c) const noexcept
    {
        return rectilinear ? rectilinear->edge(d, c) : chunk_shape[d];
    }
    /// Whether element x of axis d begins a chunk (x inside the grid: below the shape, or below
    /// what a rectilinear grid's edges cover).
    bool starts_chunk(std::size_t d, std::uint64_t x) const noexcept
    {
        return chunk_start(d, chunk_index(d, x)) == x;
    }
    /// Whether element x of axis d begins a chunk or is the end of the axis.
    bool on_chunk_boundary(std::size_t d, std::uint64_t x) const noexcept
    {
        return x >= shape[d] || starts_chunk(d, x);
    }

    std::string chunk_key(std::span<const std::uint64_t> coords) const { return key_encoding.key(coords); }
};

/// Group metadata (both formats).
struct group_metadata
{
    int zarr_format = 3;
    json attributes = json::object();
    json document;
};

namespace detail
{

/// Dimension names from their JSON form (a list of strings or nulls, one per axis). `member` names
/// the source in errors: metadata error 3 (wrong_type) for a value that is not such a list,
/// 4 (invalid_value) for a list whose length is not the rank.
inline dimension_name_list parse_dimension_names(const json& j, std::size_t rank, std::string_view member)
{
    if (!j.is_array())
    {
        throw_member(metadata_errc::wrong_type, member,
                     "must be a list of strings or nulls, got " + type_name(j));
    }
    if (j.size() != rank)
    {
        throw_member(metadata_errc::invalid_value, member,
                     "has " + std::to_string(j.size()) + " entries for rank " + std::to_string(rank));
    }
    dimension_name_list names;
    names.reserve(j.size());
    for (const auto& n : j)
    {
        if (n.is_null())
        {
            names.emplace_back();
        }
        else if (n.is_string())
        {
            names.emplace_back(n.get<std::string>());
        }
        else
        {
            throw_member(metadata_errc::wrong_type, member,
                         "entries must be strings or null, got " + n.dump());
        }
    }
    return names;
}

inline json dimension_names_to_json(const dimension_name_list& names)
{
    json j = json::array();
    for (const auto& n : names)
    {
        j.push_back(n ? json(*n) : json(nullptr));
    }
    return j;
}

} // namespace detail

/// A rectilinear grid's part of the model, once the shape is known: its rank, that its chunks
/// cover the shape (metadata.4 otherwise), and chunk_shape as the longest edges.
inline void settle_rectilinear(array_metadata& m)
{
    if (!m.rectilinear)
    {
        return;
    }
    const rectilinear_grid& g = *m.rectilinear;
    if (g.rank() != m.shape.size())
    {
        throw metadata_error(metadata_errc::invalid_value,
                             "\"chunk_grid.configuration.chunk_shapes\" has " + std::to_string(g.rank()) +
                                 " entries for an array of rank " + std::to_string(m.shape.size()));
    }
    m.chunk_shape.assign(m.shape.size(), 1);
    for (std::size_t d = 0; d < m.shape.size(); ++d)
    {
        if (g.covered(d) < m.shape[d])
        {
            throw metadata_error(metadata_errc::invalid_value,
                                 "the rectilinear chunk grid covers " + std::to_string(g.covered(d)) +
                                     " elements along axis " + std::to_string(d) + ", the shape " +
                                     std::to_string(m.shape[d]) +
                                     " (its edge lengths must sum to at least the shape)");
        }
        m.chunk_shape[d] = g.max_edge(d, m.shape[d]);
    }
}

/// Checks shared by both formats once shape, chunk shape and dtype are known.
inline void validate_geometry(const array_metadata& m)
{
    if (m.shape.size() > max_rank)
    {
        throw metadata_error(metadata_errc::invalid_value, "rank " + std::to_string(m.shape.size()) +
                                                               " exceeds the supported maximum of " +
                                                               std::to_string(max_rank));
    }
    if (m.chunk_shape.size() != m.shape.size())
    {
        throw metadata_error(metadata_errc::invalid_value,
                             "chunk shape has rank " + std::to_string(m.chunk_shape.size()) +
                                 " but shape has rank " + std::to_string(m.shape.size()));
    }
    for (std::size_t i = 0; i < m.chunk_shape.size(); ++i)
    {
        if (m.chunk_shape[i] == 0)
        {
            throw metadata_error(metadata_errc::invalid_value,
                                 "chunk shape has a zero extent on axis " + std::to_string(i));
        }
    }
    // The element count of the array and of a chunk, in bytes, must be representable.
    detail::checked_mul(detail::checked_product(m.shape, "array element count"), m.element_size(),
                        "array size in bytes");
    detail::checked_mul(detail::checked_product(m.chunk_shape, "chunk element count"), m.element_size(),
                        "chunk size in bytes");
}

} // namespace zarrxt
