/** @file metadata/v2.hpp
 *  Zarr v2 `.zarray` / `.zgroup` / `.zattrs`, lowered onto the v3-shaped model at open.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v2/v2.0.html
 *
 *  Lowering (the only place zarrxt looks at the format version of an array):
 *    order "F"          -> transpose codec with the reversed axis order (rank > 1)
 *    dtype "<i2"/">i2"  -> dtype int16 + bytes codec {endian: little|big}
 *    compressor         -> one bytes-to-bytes codec: gzip, zstd, blosc, numcodecs.zlib, and when
 *                          their libraries are available numcodecs.lz4, numcodecs.bz2, numcodecs.lzma
 *    filters            -> delta, bitround, fixedscaleoffset, packbits become array->array codecs
 *                          after the transpose; shuffle becomes a bytes->bytes codec before the
 *                          compressor (numcodecs.* names, as zarr-python 3 writes them in v3)
 *    dimension_separator-> chunk key encoding "v2" with that separator
 *    .zattrs _ARRAY_DIMENSIONS -> dimension_names (the xarray/NCZarr convention), when it is a
 *                          list of strings or nulls of the array's rank; otherwise it stays an
 *                          ordinary attribute (zarr-python's reading; see docs/compat.md)
 *    fill_value null + .zattrs _FillValue -> that value for missing chunks (NCZarr's nccopy)
 *  Unknown members of .zarray are tolerated (v2 has no extension mechanism; zarr-python ignores them).
 */
#pragma once

#include "../config.hpp"
#include "array_metadata.hpp"
#include "document.hpp"

#include <string>

namespace zarrxt
{

/// Parse and lower a v2 .zarray document.
ZARRXT_DECL array_metadata parse_v2_array(const json& doc);
ZARRXT_DECL group_metadata parse_v2_group(const json& doc);

/// The .zattrs member that holds a v2 array's dimension names (xarray's and NCZarr's convention).
inline constexpr std::string_view v2_dimension_names_attribute = "_ARRAY_DIMENSIONS";

/// Move a well-formed `_ARRAY_DIMENSIONS` attribute of a v2 array into `m.dimension_names`; a
/// malformed one is left in the attributes untouched.
ZARRXT_DECL void lift_v2_dimension_names(array_metadata& m);

/// When a v2 array's fill_value is null and its attributes hold a netCDF `_FillValue` that is a
/// value of its data type (nccopy writes NCZarr arrays so), missing chunks read as that value and
/// chunks equal to it are not stored; the metadata keeps saying null.
ZARRXT_DECL void adopt_v2_fill_value_attribute(array_metadata& m);

/// The .zattrs document of a v2 array: its attributes with `_ARRAY_DIMENSIONS` first when it has
/// dimension names.
ZARRXT_DECL json v2_attributes_document(const array_metadata& m);

/// Options of a new v2 array beyond the model: memory order, byte order, filters and compressor.
struct v2_layout
{
    char order = 'C';
    bool big_endian = false;
    char dimension_separator = '.';
    std::optional<codec_spec> compressor;
    std::vector<codec_spec> filters; ///< numcodecs.* codecs, written as v2 filters in this order
    /// |O arrays: the object codec ("vlen-utf8", "vlen-bytes"), written as the first filter.
    std::string object_codec{};
};

/// A new .zarray document. The data type's parameters go into its type string (a time unit, a
/// fixed-width string's size) or field list (a record's fields; one without a stated byte order is
/// written in the layout's).
ZARRXT_DECL json make_v2_array_document(const std::vector<std::uint64_t>& shape, const std::vector<std::uint64_t>& chunks,
                                        const data_type& dtype, const fill_value& fill, const v2_layout& layout);

/// The v2 layout of a lowered chain, the inverse of parse_v2_array's lowering: every array zarrxt
/// reads from a .zarray can be written back (make_v2_array_document) to the same model. A chain v2
/// cannot express (sharding, crc32c, two compressors, a permutation other than F order) is
/// metadata error 14.
ZARRXT_DECL v2_layout v2_layout_of(const array_metadata& m);

#if ZARRXT_DEFINITIONS

namespace detail
{

/// numcodecs blosc shuffle integers <-> v3 names.
inline std::string blosc_shuffle_name(std::int64_t v, std::size_t typesize)
{
    switch (v)
    {
    case 0:
        return "noshuffle";
    case 1:
        return "shuffle";
    case 2:
        return "bitshuffle";
    case -1: // AUTOSHUFFLE: numcodecs picks bit-shuffle for 1-byte items, byte shuffle otherwise
        return typesize == 1 ? "bitshuffle" : "shuffle";
    default:
        throw_member(metadata_errc::invalid_value, "compressor.shuffle",
                     "must be -1, 0, 1 or 2, got " + std::to_string(v));
    }
}

/// A v2 blosc "shuffle": numcodecs' integer, or GDAL 3.6's spelling of its BLOSC_SHUFFLE option
/// ("NONE", "BYTE", "BIT" or the digits as a string), which it writes verbatim.
inline std::int64_t blosc_shuffle_value(const json& v)
{
    if (v.is_string())
    {
        const auto& s = v.get_ref<const std::string&>();
        for (const auto& [name, number] : {std::pair<const char*, std::int64_t>{"NONE", 0},
                                           {"0", 0},
                                           {"BYTE", 1},
                                           {"1", 1},
                                           {"BIT", 2},
                                           {"2", 2}})
        {
            if (s == name)
            {
                return number;
            }
        }
        throw_member(metadata_errc::invalid_value, "compressor.shuffle",
                     "must be -1, 0, 1 or 2 (or GDAL's \"NONE\", \"BYTE\", \"BIT\"), got \"" + s + "\"");
    }
    return as_int(v, "compressor.shuffle");
}

inline std::int64_t blosc_shuffle_number(const std::string& name)
{
    if (name == "noshuffle")
    {
        return 0;
    }
    if (name == "shuffle")
    {
        return 1;
    }
    if (name == "bitshuffle")
    {
        return 2;
    }
    throw_member(metadata_errc::invalid_value, "blosc.shuffle", "unknown shuffle \"" + name + "\"");
}

/// A v2 compressor object lowered to a v3-style codec spec.
inline codec_spec lower_v2_compressor(const json& c, std::size_t typesize)
{
    as_object(c, "compressor");
    const auto& id = as_string(require_member(c, "id"), "compressor.id");
    auto level_or = [&](std::int64_t def) {
        auto it = c.find("level");
        return it == c.end() || it->is_null() ? def : as_int(*it, "compressor.level");
    };
    if (id == "gzip")
    {
        return codec_spec(id, {{"level", level_or(1)}});
    }
    if (id == "zlib")
    {
        return codec_spec("numcodecs.zlib", {{"level", level_or(1)}});
    }
    if (id == "bz2")
    {
        return codec_spec("numcodecs.bz2", {{"level", level_or(1)}});
    }
    if (id == "lzma")
    {
        // numcodecs writes every member (null for preset and filters); missing ones take its defaults.
        // Other members are ignored, as for the other compressors.
        json cfg = {{"format", 1}, {"check", -1}, {"preset", nullptr}, {"filters", nullptr}};
        for (const char* k : {"format", "check", "preset", "filters"})
        {
            // A null format or check means numcodecs' default, as a missing one does (found by
            // fuzz_metadata_v2: kept as null it was refused when the array's .zarray was written back).
            const bool null_means_default = std::string_view(k) == "format" || std::string_view(k) == "check";
            if (auto it = c.find(k); it != c.end() && !(it->is_null() && null_means_default))
            {
                // format and check are integers, checked here as a level is (found by fuzz_metadata_v2:
                // a float check was accepted, then refused when the .zarray was written back).
                cfg[k] = null_means_default ? json(as_int(*it, std::string("compressor.") + k)) : *it;
            }
        }
        return codec_spec("numcodecs.lzma", std::move(cfg));
    }
    if (id == "zstd")
    {
        bool checksum = false;
        if (auto it = c.find("checksum"); it != c.end() && !it->is_null())
        {
            checksum = as_bool(*it, "compressor.checksum");
        }
        return codec_spec("zstd", {{"level", level_or(1)}, {"checksum", checksum}});
    }
    if (id == "blosc")
    {
        json cfg = json::object();
        cfg["cname"] = c.contains("cname") ? as_string(c["cname"], "compressor.cname") : std::string("lz4");
        cfg["clevel"] = c.contains("clevel") ? as_int(c["clevel"], "compressor.clevel") : 5;
        cfg["shuffle"] =
            blosc_shuffle_name(c.contains("shuffle") ? blosc_shuffle_value(c["shuffle"]) : 1, typesize);
        cfg["typesize"] = typesize;
        cfg["blocksize"] = c.contains("blocksize") ? as_int(c["blocksize"], "compressor.blocksize") : 0;
        return codec_spec("blosc", std::move(cfg));
    }
    if (id == "lz4")
    {
        return codec_spec("numcodecs.lz4", {{"acceleration", c.contains("acceleration")
                                                                 ? as_int(c["acceleration"], "compressor.acceleration")
                                                                 : 1}});
    }
    throw metadata_error(metadata_errc::unknown_codec, "v2 compressor \"" + id + "\" is not supported by zarrxt");
}

/// The v2 compressor object for a v3-style spec (used when creating v2 arrays).
inline json raise_to_v2_compressor(const codec_spec& s)
{
    const json& cfg = s.configuration;
    if (!cfg.is_object())
    {
        throw metadata_error(metadata_errc::invalid_codec_config, s.name + ": configuration must be an object");
    }
    // The spec comes from the caller's options: wrong JSON types are a codec configuration error,
    // not a JSON library exception.
    auto bad = [&](const char* k, const char* what) {
        throw metadata_error(metadata_errc::invalid_codec_config,
                             s.name + ": \"" + k + "\" must be " + what + ", got " + cfg[k].dump());
    };
    auto get_int = [&](const char* k, std::int64_t def) {
        auto it = cfg.find(k);
        if (it != cfg.end() && !it->is_number_integer())
        {
            bad(k, "an integer");
        }
        return it == cfg.end() ? def : it->get<std::int64_t>();
    };
    auto get_string = [&](const char* k, const char* def) {
        auto it = cfg.find(k);
        if (it != cfg.end() && !it->is_string())
        {
            bad(k, "a string");
        }
        return it == cfg.end() ? std::string(def) : it->get<std::string>();
    };
    if (s.name == "gzip")
    {
        return {{"id", s.name}, {"level", get_int("level", 5)}};
    }
    if (s.name == "zlib" || s.name == "numcodecs.zlib")
    {
        return {{"id", "zlib"}, {"level", get_int("level", 1)}};
    }
    if (s.name == "numcodecs.bz2")
    {
        return {{"id", "bz2"}, {"level", get_int("level", 1)}};
    }
    if (s.name == "numcodecs.lzma")
    {
        json j = {{"id", "lzma"}, {"format", get_int("format", 1)}, {"check", get_int("check", -1)}};
        j["preset"] = cfg.contains("preset") ? cfg["preset"] : json(nullptr);
        j["filters"] = cfg.contains("filters") ? cfg["filters"] : json(nullptr);
        return j;
    }
    if (s.name == "zstd")
    {
        json j = {{"id", "zstd"}, {"level", get_int("level", 3)}};
        if (cfg.contains("checksum") && !cfg["checksum"].is_boolean())
        {
            bad("checksum", "true or false");
        }
        if (cfg.contains("checksum") && cfg["checksum"].get<bool>())
        {
            j["checksum"] = true;
        }
        return j;
    }
    if (s.name == "blosc")
    {
        return {{"id", "blosc"},
                {"cname", get_string("cname", "lz4")},
                {"clevel", get_int("clevel", 5)},
                {"shuffle", blosc_shuffle_number(get_string("shuffle", "shuffle"))},
                {"blocksize", get_int("blocksize", 0)}};
    }
    if (s.name == "numcodecs.lz4")
    {
        return {{"id", "lz4"}, {"acceleration", get_int("acceleration", 1)}};
    }
    throw metadata_error(metadata_errc::unknown_codec,
                         "codec \"" + s.name + "\" has no Zarr v2 compressor equivalent");
}

/// The v2 filter object for a numcodecs.* codec spec: {"id": "<name without numcodecs.>", ...}.
inline json raise_to_v2_filter(const codec_spec& s)
{
    static constexpr std::string_view prefix = "numcodecs.";
    const std::string_view n = s.name;
    if (n.substr(0, prefix.size()) != prefix)
    {
        throw metadata_error(metadata_errc::unknown_codec, "codec \"" + s.name + "\" has no Zarr v2 filter equivalent");
    }
    if (!s.configuration.is_null() && !s.configuration.is_object())
    {
        throw metadata_error(metadata_errc::invalid_codec_config, s.name + ": configuration must be an object");
    }
    json j = {{"id", std::string(n.substr(prefix.size()))}};
    if (s.configuration.is_object())
    {
        for (auto it = s.configuration.begin(); it != s.configuration.end(); ++it)
        {
            if (it.key() != "id")
            {
                j[it.key()] = it.value();
            }
        }
    }
    return j;
}

} // namespace detail

namespace detail
{

// numpy's structured dtype: [[name, type, shape?], ...] where type is a type string or, for a
// nested record, such a list again, and shape (optional) makes the field a subarray.
ZARRXT_DECL std::vector<record_field> parse_v2_fields(const json& list)
{
    std::vector<record_field> fields;
    for (const json& f : list)
    {
        if (!f.is_array() || f.size() < 2 || f.size() > 3 || !f[0].is_string())
        {
            throw_member(metadata_errc::wrong_type, "dtype",
                         "a record field is [name, type] or [name, type, shape], got " + f.dump());
        }
        record_field r;
        r.name = f[0].get<std::string>();
        const json& t = f[1];
        if (t.is_array())
        {
            r.type.id = dtype_id::structured;
            r.type.fields = parse_v2_fields(t);
        }
        else if (t.is_string())
        {
            const std::string& ts = t.get<std::string>();
            bool big = false;
            const auto id = dtype_from_v2_typestr(ts, big, &r.type.unit, &r.type.fixed_size);
            if (!id)
            {
                throw metadata_error(metadata_errc::unsupported_dtype, "record field \"" + r.name + "\" has the data type \"" +
                                                                          ts + "\", which zarrxt does not support in a record");
            }
            r.type.id = *id;
            if (info(*id).word > 1)
            {
                r.order = ts[0] == '>' ? endian::big : ts[0] == '<' ? endian::little : native_endian;
            }
        }
        else
        {
            throw_member(metadata_errc::wrong_type, "dtype", "record field \"" + r.name + "\" has the type " + t.dump());
        }
        if (f.size() == 3)
        {
            r.shape = as_extents(f[2], "dtype");
        }
        fields.push_back(std::move(r));
    }
    layout_record(fields);
    return fields;
}

/// The v2 dtype list of fields: each type string in its field's stated order, else in `big`'s.
ZARRXT_DECL json v2_fields_json(const std::vector<record_field>& fields, bool big)
{
    json out = json::array();
    for (const auto& f : fields)
    {
        json entry = json::array({f.name});
        if (f.type.id == dtype_id::structured)
        {
            entry.push_back(v2_fields_json(f.type.fields, big));
        }
        else
        {
            const bool field_big = f.order ? *f.order == endian::big : big;
            entry.push_back(v2_typestr(f.type.id, field_big, f.type.unit, f.type.fixed_size));
        }
        if (!f.shape.empty())
        {
            entry.push_back(f.shape);
        }
        out.push_back(std::move(entry));
    }
    return out;
}

} // namespace detail

ZARRXT_DECL array_metadata parse_v2_array(const json& doc)
{
    if (!doc.is_object())
    {
        throw metadata_error(metadata_errc::wrong_type, ".zarray must be a JSON object");
    }
    const json& fmt = detail::require_member(doc, "zarr_format");
    if (!fmt.is_number_integer() || fmt.get<std::int64_t>() != 2)
    {
        throw metadata_error(metadata_errc::version_mismatch,
                             ".zarray has \"zarr_format\": " + fmt.dump() + ", expected 2");
    }
    array_metadata m;
    m.zarr_format = 2;
    m.shape = detail::as_extents(detail::require_member(doc, "shape"), "shape");
    m.chunk_shape = detail::as_extents(detail::require_member(doc, "chunks"), "chunks");

    const json& dt = detail::require_member(doc, "dtype");
    if (!dt.is_string() && !dt.is_array())
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "data type " + dt.dump() + " is not supported by zarrxt");
    }
    bool big_endian = false;
    // An object array's values are what its object codec, the first filter, makes of them.
    std::string object_codec;
    std::optional<dtype_id> id;
    if (dt.is_array())
    {
        // A record: its fields state their own byte orders.
        m.dtype.fields = detail::parse_v2_fields(dt);
        m.dtype.fixed_size = m.dtype.fields.back().offset + m.dtype.fields.back().size;
        id = dtype_id::structured;
    }
    else if (dt.get<std::string>() == "|O")
    {
        const auto f = doc.find("filters");
        const json* first = f != doc.end() && f->is_array() && !f->empty() ? &(*f)[0] : nullptr;
        object_codec = first && first->is_object() && first->contains("id") && (*first)["id"].is_string()
                           ? (*first)["id"].get<std::string>()
                           : std::string();
        if (object_codec == "vlen-utf8" || object_codec == "vlen-bytes")
        {
            id = object_codec == "vlen-utf8" ? dtype_id::string : dtype_id::vlen_bytes;
        }
        else
        {
            throw metadata_error(metadata_errc::unsupported_dtype,
                                 "object data type \"|O\" with " +
                                     (object_codec.empty() ? std::string("no object codec as its first filter")
                                                           : "the object codec \"" + object_codec + "\"") +
                                     " is not supported by zarrxt (supported: vlen-utf8, vlen-bytes)");
        }
    }
    else
    {
        id = dtype_from_v2_typestr(dt.get<std::string>(), big_endian, &m.dtype.unit, &m.dtype.fixed_size);
    }
    if (!id)
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "data type \"" + dt.get<std::string>() +
                                 "\" is not supported by zarrxt (supported: |b1, i1..i8, u1..u8, f2, f4, "
                                 "f8, c8, c16, M8[unit], m8[unit] in either byte order, |S n, <U n, >U n, |O with "
                                 "vlen-utf8 or vlen-bytes)");
    }
    m.dtype.id = *id;
    validate_geometry(m);

    const auto& order = detail::as_string(detail::require_member(doc, "order"), "order");
    if (order != "C" && order != "F")
    {
        detail::throw_member(metadata_errc::invalid_value, "order", "must be \"C\" or \"F\", got \"" + order + "\"");
    }

    char sep = '.';
    if (auto s = doc.find("dimension_separator"); s != doc.end() && !s->is_null())
    {
        const auto& v = detail::as_string(*s, "dimension_separator");
        if (v != "." && v != "/")
        {
            detail::throw_member(metadata_errc::invalid_value, "dimension_separator",
                                 "must be \".\" or \"/\", got \"" + v + "\"");
        }
        sep = v[0];
    }
    m.key_encoding = {chunk_key_encoding::kind::v2, sep};

    m.fill = parse_fill_value(detail::require_member(doc, "fill_value"), m.dtype, 2);

    // Filters: array-valued ones (they see the chunk's values) become array->array codecs, byte-valued
    // ones bytes->bytes codecs; v2 applies them in list order, so an array filter after a byte filter
    // cannot be expressed as a chain and is refused.
    std::vector<codec_spec> array_filters;
    std::vector<codec_spec> byte_filters;
    if (auto f = doc.find("filters"); f != doc.end() && !f->is_null())
    {
        detail::as_array(*f, "filters");
        for (std::size_t k = object_codec.empty() ? 0 : 1; k < f->size(); ++k)
        {
            const json& filter = (*f)[k];
            const std::string fid = filter.is_object() && filter.contains("id") && filter["id"].is_string()
                                        ? filter["id"].get<std::string>()
                                        : filter.dump();
            json cfg = filter.is_object() ? filter : json::object();
            cfg.erase("id");
            if (fid == "delta" || fid == "bitround" || fid == "fixedscaleoffset" || fid == "packbits")
            {
                if (!byte_filters.empty())
                {
                    throw metadata_error(metadata_errc::unsupported_feature,
                                         "v2 filter \"" + fid + "\" after a byte filter cannot be represented");
                }
                if (auto a = cfg.find("astype"); a != cfg.end() && a->is_string())
                {
                    bool be = false;
                    if (dtype_from_v2_typestr(a->get<std::string>(), be))
                    {
                        big_endian = be; // the stored values have the byte order of the last astype
                    }
                }
                array_filters.emplace_back("numcodecs." + fid, std::move(cfg));
            }
            else if (fid == "shuffle")
            {
                byte_filters.emplace_back("numcodecs.shuffle", std::move(cfg));
            }
            else
            {
                throw metadata_error(metadata_errc::unknown_codec, "v2 filter \"" + fid + "\" is not supported by zarrxt");
            }
        }
    }

    // The lowered chain.
    const std::size_t rank = m.shape.size();
    if (order == "F" && rank > 1)
    {
        json perm = json::array();
        for (std::size_t i = 0; i < rank; ++i)
        {
            perm.push_back(rank - 1 - i);
        }
        m.codecs.emplace_back("transpose", json{{"order", perm}});
    }
    m.codecs.insert(m.codecs.end(), array_filters.begin(), array_filters.end());
    if (!object_codec.empty())
    {
        m.codecs.emplace_back(object_codec);
    }
    else if (info(m.dtype).word > 1)
    {
        m.codecs.emplace_back("bytes", json{{"endian", big_endian ? "big" : "little"}});
    }
    else
    {
        m.codecs.emplace_back("bytes");
    }
    m.codecs.insert(m.codecs.end(), byte_filters.begin(), byte_filters.end());
    if (auto c = doc.find("compressor"); c != doc.end() && !c->is_null())
    {
        // An object array's compressor sees the object codec's bytes (blosc's typesize 1).
        m.codecs.push_back(detail::lower_v2_compressor(*c, is_vlen(m.dtype) ? 1 : m.element_size()));
    }
    m.document = doc;
    return m;
}

ZARRXT_DECL void lift_v2_dimension_names(array_metadata& m)
{
    const auto it = m.attributes.find(v2_dimension_names_attribute);
    if (it == m.attributes.end())
    {
        return;
    }
    try
    {
        m.dimension_names = detail::parse_dimension_names(*it, m.rank(), v2_dimension_names_attribute);
    }
    catch (const metadata_error&)
    {
        // An attribute is user data: zarr-python reads it as such and the array's data does not
        // depend on it, so a malformed one is kept as an ordinary attribute, not refused.
        return;
    }
    m.attributes.erase(it);
}

ZARRXT_DECL void adopt_v2_fill_value_attribute(array_metadata& m)
{
    if (!m.fill.is_null)
    {
        return;
    }
    const auto it = m.attributes.find("_FillValue");
    if (it == m.attributes.end() || it->is_null())
    {
        return;
    }
    try
    {
        m.fill = parse_fill_value(*it, m.dtype, 2);
    }
    catch (const metadata_error&)
    {
        return; // not a value of the data type: an ordinary attribute
    }
    m.fill.is_null = true;
}

ZARRXT_DECL json v2_attributes_document(const array_metadata& m)
{
    if (!m.dimension_names)
    {
        return m.attributes;
    }
    json doc = json::object();
    doc[std::string(v2_dimension_names_attribute)] = detail::dimension_names_to_json(*m.dimension_names);
    for (const auto& [k, v] : m.attributes.items())
    {
        if (k != v2_dimension_names_attribute)
        {
            doc[k] = v;
        }
    }
    return doc;
}

ZARRXT_DECL group_metadata parse_v2_group(const json& doc)
{
    if (!doc.is_object())
    {
        throw metadata_error(metadata_errc::wrong_type, ".zgroup must be a JSON object");
    }
    const json& fmt = detail::require_member(doc, "zarr_format");
    if (!fmt.is_number_integer() || fmt.get<std::int64_t>() != 2)
    {
        throw metadata_error(metadata_errc::version_mismatch,
                             ".zgroup has \"zarr_format\": " + fmt.dump() + ", expected 2");
    }
    group_metadata g;
    g.zarr_format = 2;
    g.document = doc;
    return g;
}

ZARRXT_DECL json make_v2_array_document(const std::vector<std::uint64_t>& shape,
                                   const std::vector<std::uint64_t>& chunks, const data_type& dtype,
                                   const fill_value& fill, const v2_layout& layout)
{
    json doc = json::object();
    doc["chunks"] = chunks;
    doc["compressor"] = layout.compressor ? detail::raise_to_v2_compressor(*layout.compressor) : json(nullptr);
    doc["dtype"] = dtype == dtype_id::structured ? detail::v2_fields_json(dtype.fields, layout.big_endian)
                                                 : json(v2_typestr(dtype, layout.big_endian, dtype.unit, dtype.fixed_size));
    doc["fill_value"] = fill_value_to_json(fill, dtype, 2);
    if (layout.filters.empty() && layout.object_codec.empty())
    {
        doc["filters"] = nullptr;
    }
    else
    {
        doc["filters"] = json::array();
        if (!layout.object_codec.empty())
        {
            doc["filters"].push_back({{"id", layout.object_codec}});
        }
        for (const auto& f : layout.filters)
        {
            doc["filters"].push_back(detail::raise_to_v2_filter(f));
        }
    }
    doc["order"] = std::string(1, layout.order);
    doc["shape"] = shape;
    doc["zarr_format"] = 2;
    if (layout.dimension_separator != '.')
    {
        doc["dimension_separator"] = std::string(1, layout.dimension_separator);
    }
    return doc;
}

ZARRXT_DECL v2_layout v2_layout_of(const array_metadata& m)
{
    // The lowered chain is [transpose] array-filters* bytes byte-filters* [compressor]; walk it in
    // that order and refuse anything else.
    auto refuse = [&](const std::string& why) -> v2_layout {
        throw metadata_error(metadata_errc::unsupported_feature,
                             "the codec chain has no Zarr v2 form: " + why);
    };
    v2_layout layout;
    layout.dimension_separator = m.key_encoding.separator;
    if (m.key_encoding.encoding != chunk_key_encoding::kind::v2)
    {
        return refuse("chunk keys use the v3 \"default\" encoding");
    }
    const auto& c = m.codecs;
    std::size_t i = 0;
    const std::size_t rank = m.shape.size();
    if (i < c.size() && c[i].name == "transpose")
    {
        const json& order =
            c[i].configuration.is_object() ? c[i].configuration.value("order", json()) : json();
        bool reversed = order.is_array() && order.size() == rank && rank > 1;
        for (std::size_t d = 0; reversed && d < rank; ++d)
        {
            reversed = order[d].is_number_unsigned() && order[d].get<std::uint64_t>() == rank - 1 - d;
        }
        if (!reversed)
        {
            return refuse("transpose " + order.dump() + " is not Fortran order");
        }
        layout.order = 'F';
        ++i;
    }
    // numcodecs names that are bytes->bytes (a byte filter or a compressor), not array filters.
    auto is_bytes_codec = [](const std::string& n)
    {
        return n == "numcodecs.shuffle" || n == "numcodecs.lz4" || n == "numcodecs.zlib" || n == "numcodecs.bz2" ||
               n == "numcodecs.lzma";
    };
    for (; i < c.size() && c[i].name.rfind("numcodecs.", 0) == 0 && !is_bytes_codec(c[i].name); ++i)
    {
        layout.filters.push_back(c[i]);
    }
    if (i < c.size() && (c[i].name == "vlen-utf8" || c[i].name == "vlen-bytes"))
    {
        if (!layout.filters.empty())
        {
            return refuse("\"" + layout.filters.front().name + "\" before the object codec \"" + c[i].name + "\"");
        }
        layout.object_codec = c[i].name; // the first v2 filter of an |O array
    }
    else if (i == c.size() || c[i].name != "bytes")
    {
        return refuse(i == c.size() ? std::string("no bytes codec")
                                    : "\"" + c[i].name + "\" where v2 needs the bytes codec");
    }
    else
    {
        layout.big_endian =
            c[i].configuration.is_object() && c[i].configuration.value("endian", "little") == "big";
    }
    ++i;
    for (; i < c.size() && c[i].name == "numcodecs.shuffle"; ++i)
    {
        layout.filters.push_back(c[i]);
    }
    if (i + 1 == c.size())
    {
        (void)detail::raise_to_v2_compressor(c[i]); // refuses what v2 cannot name as a compressor
        layout.compressor = c[i];
        ++i;
    }
    if (i != c.size())
    {
        return refuse("\"" + c[i].name + "\" follows the compressor");
    }
    // With an astype filter the bytes codec's byte order is the filter's (parse_v2_array reads it
    // from there), and writing the dtype in that order reads back to the same chain.
    for (const auto& f : layout.filters)
    {
        (void)detail::raise_to_v2_filter(f);
    }
    return layout;
}

#endif // ZARRXT_DEFINITIONS

} // namespace zarrxt
