/** @file metadata/create.hpp
 *  The metadata of a new array, from the creation options: checked as a reader would check it
 *  (the document is built, then parsed by the same code that parses stored documents), so an
 *  array zarrxt creates is one zarrxt (and any reader of the spec) can open. Storing it is the
 *  caller's job (detail/array_core.hpp); this header knows nothing of stores.
 */
#pragma once

#include "../error.hpp"
#include "../options.hpp"
#include "array_metadata.hpp"
#include "v2.hpp"
#include "v3.hpp"

#include <string>
#include <utility>
#include <vector>

namespace zarrxt
{

namespace detail
{

/// Arguments no document parser sees (they choose how the document is written) or that a parser
/// would report less helpfully than "you passed ...".
inline void check_create_args(const array_metadata& m, char sep, char a, char b)
{
    if (m.shape.size() != m.chunk_shape.size())
    {
        throw array_error(array_errc::invalid_argument, "shape has rank " + std::to_string(m.shape.size()) +
                                                            " but the chunk shape has rank " +
                                                            std::to_string(m.chunk_shape.size()));
    }
    if (sep != a && sep != b)
    {
        throw array_error(array_errc::invalid_argument,
                          std::string("chunk key separator must be '") + a + "' or '" + b + "'");
    }
    if (m.dimension_names && m.dimension_names->size() != m.shape.size())
    {
        throw array_error(array_errc::invalid_argument,
                          "dimension_names has " + std::to_string(m.dimension_names->size()) +
                              " entries for rank " + std::to_string(m.shape.size()));
    }
}

/// The unit of a new array: required for the time types (and in numpy's range), refused for
/// others. A fill value made from a std::chrono value counts its own unit, so only an array of that
/// unit takes it as it is (a count of seconds is no count of milliseconds).
inline time_unit unit_of_new_array(dtype_id dtype, const std::optional<time_unit>& unit, const scalar& fill)
{
    if (!is_time(dtype))
    {
        if (unit || fill.unit())
        {
            throw array_error(
                array_errc::invalid_argument,
                std::string(unit ? "a time unit" : "a fill value counting " + to_string(*fill.unit())) +
                    " was given for a " + std::string(name(dtype)) + " array, no time type");
        }
        return {};
    }
    if (!unit)
    {
        throw array_error(array_errc::invalid_argument,
                          std::string(name(dtype)) + " needs a time unit (options.unit)");
    }
    if (unit->count < 1 || unit->count > max_time_unit_count)
    {
        throw array_error(array_errc::invalid_argument,
                          "a time unit's count must be in 1..2147483647, got " + std::to_string(unit->count));
    }
    if (fill.unit() && !same_length(*fill.unit(), *unit))
    {
        throw array_error(array_errc::invalid_argument, "the fill value counts " + to_string(*fill.unit()) +
                                                            " but the array counts " + to_string(*unit));
    }
    return *unit;
}

} // namespace detail

namespace detail
{

/// The element size of a new fixed-width string array: options.string must name the dtype and a
/// length in numpy's range; refused for the other types.
inline std::size_t fixed_size_of_new_array(dtype_id dtype, const std::optional<string_type>& string)
{
    if (is_vlen(dtype))
    {
        if (string && string->id != dtype)
        {
            throw array_error(array_errc::invalid_argument, "the string type " + std::string(name(string->id)) +
                                                                " was given for a " + std::string(name(dtype)) +
                                                                " array");
        }
        return 0; // no element size: the values are as long as they are
    }
    if (!is_fixed_string(dtype))
    {
        if (string)
        {
            throw array_error(array_errc::invalid_argument,
                              "a string type was given for a " + std::string(name(dtype)) + " array");
        }
        return 0;
    }
    if (!string || string->id != dtype)
    {
        throw array_error(
            array_errc::invalid_argument,
            "a " + std::string(name(dtype)) +
                " array needs its length (options.string = zarrxt::" + std::string(name(dtype)) + "(n))");
    }
    if (string->length == 0 || string->length > max_fixed_string_bytes / info(dtype).word)
    {
        throw array_error(array_errc::invalid_argument,
                          "a string length must be in 1.." +
                              std::to_string(max_fixed_string_bytes / info(dtype).word) + ", got " +
                              std::to_string(string->length));
    }
    return string->element_size();
}

/// The fields of a new record array, laid out, without byte orders of their own (they take the
/// array's); none for the other types.
inline std::vector<record_field> fields_of_new_array(dtype_id dtype, std::vector<record_field> fields)
{
    if (dtype != dtype_id::structured)
    {
        if (!fields.empty())
        {
            throw array_error(array_errc::invalid_argument,
                              "record fields were given for a " + std::string(name(dtype)) + " array");
        }
        return fields;
    }
    if (fields.empty())
    {
        throw array_error(array_errc::invalid_argument, "a record array needs its fields (options.fields)");
    }
    auto forget_orders = [](auto& self, std::vector<record_field>& fs) -> void
    {
        for (auto& f : fs)
        {
            f.order.reset();
            self(self, f.type.fields);
        }
    };
    forget_orders(forget_orders, fields);
    layout_record(fields);
    return fields;
}

/// Set the element size of a new array of `type.id` (a fixed-width string's from `string`, a
/// record's from its `fields`, which it keeps laid out); errors name `document_key`.
inline void size_new_array(const std::string& document_key, data_type& type, const std::optional<string_type>& string,
                           const std::vector<record_field>& fields)
{
    type.fixed_size = fixed_size_of_new_array(type.id, string);
    type.fields = with_key_context(document_key, [&] { return fields_of_new_array(type.id, fields); });
    if (type.id == dtype_id::structured)
    {
        type.fixed_size = type.fields.back().offset + type.fields.back().size;
    }
}

/// The codecs of a new array of a variable-length type: its values have no `bytes` form, so a
/// `bytes` codec (as in the default chain, or in a shard's inner chain) becomes the type's vlen
/// codec (`vlen-utf8` for string, `vlen-bytes` for bytes), as zarr-python 3 chooses for them.
inline std::vector<codec_spec> vlen_codecs(std::vector<codec_spec> codecs, dtype_id dtype)
{
    const std::string serializer = dtype == dtype_id::string ? "vlen-utf8" : "vlen-bytes";
    for (auto& c : codecs)
    {
        if (c.name == "bytes")
        {
            c = codec_spec(serializer);
        }
        else if (c.name == "sharding_indexed" && c.configuration.is_object() &&
                 c.configuration.contains("codecs") && c.configuration["codecs"].is_array())
        {
            json inner = json::array();
            for (const json& j : c.configuration["codecs"])
            {
                const bool is_bytes = (j.is_string() && j == "bytes") ||
                                      (j.is_object() && j.contains("name") && j["name"] == "bytes");
                inner.push_back(is_bytes ? json{{"name", serializer}} : j);
            }
            c.configuration["codecs"] = std::move(inner);
        }
    }
    return codecs;
}

} // namespace detail

/// The metadata of a new v3 array of `dtype`. `document_key` (the zarr.json to be written) names
/// the document in errors about its content, as opening it would.
inline array_metadata make_v3_metadata(const std::string& document_key, const data_type& dtype,
                                       const v3_options& o)
{
    array_metadata m;
    m.zarr_format = 3;
    m.shape = o.shape;
    m.chunk_shape = o.chunk_shape;
    if (!o.chunk_edges.empty())
    {
        if (!o.chunk_shape.empty())
        {
            throw array_error(
                array_errc::invalid_argument,
                "give chunk_shape (a regular grid) or chunk_edges (a rectilinear one), not both");
        }
        if (o.chunk_edges.size() != o.shape.size())
        {
            throw array_error(array_errc::invalid_argument,
                              "chunk_edges has " + std::to_string(o.chunk_edges.size()) + " axes for rank " +
                                  std::to_string(o.shape.size()));
        }
        detail::with_key_context(document_key,
                                 [&]
                                 {
                                     m.rectilinear = std::make_shared<const rectilinear_grid>(
                                         rectilinear_grid::from_edges(o.chunk_edges));
                                     settle_rectilinear(m);
                                 });
    }
    m.dtype.id = dtype.id;
    m.dtype.unit = detail::unit_of_new_array(dtype, o.unit, o.fill_value);
    detail::size_new_array(document_key, m.dtype, o.string, o.fields);
    if (is_user(dtype))
    {
        if (!dtype.user)
        {
            throw array_error(array_errc::invalid_argument,
                              "a user data type needs its description (create the array as array<T, N> of "
                              "the user's element type T, or give the data_type with its user_dtype)");
        }
        m.dtype.user = dtype.user;
        m.dtype.fixed_size = dtype.user->size;
    }
    m.key_encoding = {o.v2_chunk_key_encoding ? chunk_key_encoding::kind::v2
                                              : chunk_key_encoding::kind::default_,
                      o.separator};
    m.fill = detail::with_key_context(document_key, [&] { return fill_value_of(o.fill_value, m.dtype, 3); });
    m.codecs = is_vlen(dtype) ? detail::vlen_codecs(o.codecs, dtype) : o.codecs;
    m.dimension_names = o.dimension_names;
    m.attributes = o.attributes;
    detail::check_create_args(m, o.separator, '/', '.');
    return detail::with_key_context(document_key,
                                    [&]
                                    {
                                        const json doc = make_v3_array_document(m);
                                        // The same validation a reader applies (with the
                                        // array's own user type, when it has one).
                                        user_dtype_set user;
                                        if (m.dtype.user)
                                        {
                                            user.entries.push_back(m.dtype.user);
                                        }
                                        return parse_v3_array(doc, &user);
                                    });
}

/// The metadata of a new v2 array of `dtype`; `document_key` is the .zarray to be written. v2
/// attributes that carry metadata (`_ARRAY_DIMENSIONS`, NCZarr's fill value) are read the way
/// opening the array reads them.
inline array_metadata make_v2_metadata(const std::string& document_key, dtype_id dtype, const v2_options& o)
{
    if (o.order != 'C' && o.order != 'F')
    {
        throw array_error(array_errc::invalid_argument, "v2 order must be 'C' or 'F'");
    }
    data_type type(dtype);
    detail::size_new_array(document_key, type, o.string, o.fields);
    if (dtype == dtype_id::structured)
    {
        // v2 states every field's byte order in its type string: the array's. A base64 fill value
        // is read in that order too, as zarr-python reads it.
        auto state_orders = [&](auto& self, std::vector<record_field>& fs) -> void
        {
            for (auto& fl : fs)
            {
                if (info(fl.type.id).word > 1)
                {
                    fl.order = o.big_endian ? endian::big : endian::little;
                }
                self(self, fl.type.fields);
            }
        };
        state_orders(state_orders, type.fields);
    }
    fill_value f = detail::with_key_context(document_key, [&] { return fill_value_of(o.fill_value, type, 2); });
    f.is_null = o.null_fill_value;
    array_metadata probe;
    probe.shape = o.shape;
    probe.chunk_shape = o.chunks;
    probe.dtype = type;
    probe.dimension_names = o.dimension_names;
    detail::check_create_args(probe, o.dimension_separator, '.', '/');
    if (o.dimension_names && o.attributes.is_object() && o.attributes.contains(v2_dimension_names_attribute))
    {
        throw array_error(array_errc::invalid_argument,
                          "dimension names given twice: as dimension_names and as the \"_ARRAY_DIMENSIONS\" "
                          "attribute");
    }
    v2_layout layout;
    layout.order = o.order;
    layout.big_endian = o.big_endian;
    layout.dimension_separator = o.dimension_separator;
    layout.compressor = o.compressor;
    layout.filters = o.filters;
    type.unit = detail::unit_of_new_array(dtype, o.unit, o.fill_value);
    if (is_vlen(dtype))
    {
        layout.object_codec = dtype == dtype_id::string ? "vlen-utf8" : "vlen-bytes";
    }
    return detail::with_key_context(document_key,
                                    [&]
                                    {
                                        const json doc =
                                            make_v2_array_document(o.shape, o.chunks, type, f, layout);
                                        array_metadata parsed = parse_v2_array(doc);
                                        parsed.attributes = o.attributes;
                                        parsed.dimension_names = o.dimension_names;
                                        // The attributes mean what they mean when the array is opened.
                                        lift_v2_dimension_names(parsed);
                                        adopt_v2_fill_value_attribute(parsed);
                                        return parsed;
                                    });
}

/// After the chain is bound: record its codecs as the bound codecs state them (defaults filled
/// in), in the document to be written and in the parsed metadata.
inline void adopt_bound_codecs(array_metadata& m, std::vector<codec_spec> bound)
{
    json codecs = json::array();
    for (const auto& s : bound)
    {
        codecs.push_back(s.to_json());
    }
    m.document["codecs"] = std::move(codecs);
    m.codecs = std::move(bound);
}

} // namespace zarrxt
