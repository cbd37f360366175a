/** @file metadata/v3.hpp
 *  Zarr v3 `zarr.json`: parsing (array and group), validation, and building new documents.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/core/index.html
 *
 *  Unknown top-level members are refused unless they are objects with `"must_understand": false`
 *  (the spec's extension rule); a tolerated member is kept in `document` and written back.
 */
#pragma once

#include "array_metadata.hpp"
#include "../config.hpp"
#include "document.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

namespace zarrxt
{

/// True for the pre-final v3 draft root document ("zarr_format": "https://purl.org/zarr/...").
inline bool is_pre_final_v3_document(const json& doc)
{
    if (!doc.is_object())
    {
        return false;
    }
    // The draft's entry point names its protocol by URL; any other string is just a bad version.
    auto it = doc.find("zarr_format");
    return it != doc.end() && it->is_string()
           && it->get_ref<const std::string&>().rfind("https://purl.org/zarr/spec/protocol/core/3", 0) == 0;
}

[[noreturn]] inline void throw_pre_final_draft()
{
    throw metadata_error(metadata_errc::pre_final_draft,
                         "this hierarchy uses the pre-final Zarr v3 draft layout (meta/root/...), which "
                         "the final v3 specification replaced; rewrite it with a current Zarr "
                         "implementation");
}

/// Parse a v3 array document (already a JSON value); a data_type zarrxt does not know is looked up
/// among the user data types `user` (a codec_registry's dtypes(), user_dtype.hpp).
ZARRXT_DECL array_metadata parse_v3_array(const json& doc, const user_dtype_set* user = nullptr);
ZARRXT_DECL group_metadata parse_v3_group(const json& doc);
/// The node type a zarr.json declares ("array" / "group"), after the version check.
ZARRXT_DECL std::string v3_node_type(const json& doc);
/// Build a new v3 array document from the model's fields (used by create).
ZARRXT_DECL json make_v3_array_document(const array_metadata& m);
ZARRXT_DECL json make_v3_group_document(const json& attributes);

#if ZARRXT_DEFINITIONS

namespace detail
{

// zarr-python 3's extension types: {"name": "numpy.datetime64", "configuration": {"unit": "ns",
// "scale_factor": 1}}; the unit is a base unit, the count is the scale factor.
ZARRXT_DECL time_unit parse_v3_time_unit(const json& dt)
{
    if (!dt.is_object() || !dt.contains("configuration"))
    {
        throw_member(metadata_errc::missing_member, "data_type.configuration",
                     "numpy.datetime64 and numpy.timedelta64 need {\"unit\", \"scale_factor\"}");
    }
    const json& cfg = dt["configuration"];
    if (!cfg.is_object())
    {
        throw_member(metadata_errc::wrong_type, "data_type.configuration", "must be an object");
    }
    const std::string& unit = as_string(require_member(cfg, "unit"), "data_type.configuration.unit");
    const auto base = parse_time_unit(unit);
    if (!base || (unit[0] >= '0' && unit[0] <= '9')) // the count is the scale factor, not part of the unit
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "time unit \"" + unit +
                                 "\" is not supported (Y, M, W, D, h, m, s, ms, us, ns, ps, "
                                 "fs, as; the generic unit has no meaning for stored values)");
    }
    const std::int64_t scale =
        as_int(require_member(cfg, "scale_factor"), "data_type.configuration.scale_factor");
    if (scale < 1 || scale > max_time_unit_count)
    {
        throw_member(metadata_errc::invalid_value, "data_type.configuration.scale_factor",
                     "must be in 1..2147483647, got " + std::to_string(scale));
    }
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
    {
        if (it.key() != "unit" && it.key() != "scale_factor")
        {
            throw_member(metadata_errc::unknown_extension, "data_type.configuration." + it.key(),
                         "is not a member zarrxt knows");
        }
    }
    return time_unit{base->base, scale};
}

// zarr-python 3's fixed-width strings: {"name": "fixed_length_utf32" | "null_terminated_bytes",
// "configuration": {"length_bytes": n}}; UTF-32 lengths are whole code points.
ZARRXT_DECL std::size_t parse_v3_fixed_size(const json& dt, dtype_id id)
{
    if (!dt.is_object() || !dt.contains("configuration"))
    {
        throw_member(metadata_errc::missing_member, "data_type.configuration",
                     std::string(name(id)) + " needs {\"length_bytes\": n}");
    }
    const json& cfg = dt["configuration"];
    if (!cfg.is_object())
    {
        throw_member(metadata_errc::wrong_type, "data_type.configuration", "must be an object");
    }
    const std::int64_t n =
        as_int(require_member(cfg, "length_bytes"), "data_type.configuration.length_bytes");
    const std::int64_t word = static_cast<std::int64_t>(info(id).word);
    if (n < 1 || n > static_cast<std::int64_t>(max_fixed_string_bytes) || n % word != 0)
    {
        throw_member(metadata_errc::invalid_value, "data_type.configuration.length_bytes",
                     "must be a multiple of " + std::to_string(word) + " in 1..2147483644, got " +
                         std::to_string(n));
    }
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
    {
        if (it.key() != "length_bytes")
        {
            throw_member(metadata_errc::unknown_extension, "data_type.configuration." + it.key(),
                         "is not a member zarrxt knows");
        }
    }
    return static_cast<std::size_t>(n);
}

/// A data_type member (the array's, or a record field's): a name, or {name, configuration} for
/// the types that need one (times, fixed-width strings, records); a name zarrxt does not know is
/// looked up among `user` (record fields are parsed without: a user type is no field type).
ZARRXT_DECL data_type parse_v3_data_type(const json& dt, const user_dtype_set* user = nullptr);

/// ", and the user data types a, b" for an unsupported-type message.
ZARRXT_DECL std::string describe_user_dtypes(const user_dtype_set* user)
{
    std::string out;
    if (user)
    {
        for (const auto& e : user->entries)
        {
            out += (out.empty() ? "; registered user types: " : ", ") + e->name;
        }
    }
    return out;
}

/// The user data type `dt` names, with its configuration checked; nullptr when `user` has none.
ZARRXT_DECL std::shared_ptr<const zarrxt::user_dtype> find_user_dtype(const json& dt,
                                                                      const std::string& dt_name,
                                                                      const user_dtype_set* user)
{
    const auto* found = user ? user->find(dt_name) : nullptr;
    if (!found)
    {
        return nullptr;
    }
    const zarrxt::user_dtype& d = **found;
    // The configuration the type writes is the one it reads: another one describes another type.
    const json none = nullptr;
    const json& given = dt.is_object() && dt.contains("configuration") ? dt["configuration"] : none;
    const bool empty_given = given.is_null() || (given.is_object() && given.empty());
    const bool empty_own =
        d.configuration.is_null() || (d.configuration.is_object() && d.configuration.empty());
    if (!(empty_given && empty_own) && given != d.configuration)
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "data type " + dt.dump() + " has a configuration the registered user type \"" +
                                 dt_name + "\" does not state (it states " + d.configuration.dump() + ")");
    }
    return *found;
}

// The zarr-extensions struct (and zarr-python 3's earlier "structured"): {"fields": [{"name",
// "data_type"}, ...]}, fields also as [name, data_type] pairs.
ZARRXT_DECL std::vector<record_field> parse_v3_fields(const json& dt)
{
    if (!dt.is_object() || !dt.contains("configuration") || !dt["configuration"].is_object())
    {
        throw_member(metadata_errc::missing_member, "data_type.configuration", "struct needs {\"fields\": [...]}");
    }
    const json& cfg = dt["configuration"];
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
    {
        if (it.key() != "fields")
        {
            throw_member(metadata_errc::unknown_extension, "data_type.configuration." + it.key(),
                         "is not a member zarrxt knows");
        }
    }
    const json& list = as_array(require_member(cfg, "fields"), "data_type.configuration.fields");
    std::vector<record_field> fields;
    for (const json& f : list)
    {
        record_field r;
        const json* type = nullptr;
        if (f.is_object())
        {
            for (auto it = f.begin(); it != f.end(); ++it)
            {
                if (it.key() != "name" && it.key() != "data_type")
                {
                    throw_member(metadata_errc::unknown_extension, "data_type.configuration.fields." + it.key(),
                                 "is not a member zarrxt knows");
                }
            }
            r.name = as_string(require_member(f, "name"), "data_type.configuration.fields.name");
            type = &require_member(f, "data_type");
        }
        else if (f.is_array() && f.size() == 2 && f[0].is_string())
        {
            r.name = f[0].get<std::string>();
            type = &f[1];
        }
        else
        {
            throw_member(metadata_errc::wrong_type, "data_type.configuration.fields",
                         "a field is {\"name\": ..., \"data_type\": ...}, got " + f.dump());
        }
        r.type = parse_v3_data_type(*type);
        fields.push_back(std::move(r));
    }
    layout_record(fields);
    return fields;
}

ZARRXT_DECL data_type parse_v3_data_type(const json& dt, const user_dtype_set* user)
{
    std::string dt_name;
    if (dt.is_string())
    {
        dt_name = dt.get<std::string>();
    }
    else if (dt.is_object() && dt.contains("name") && dt["name"].is_string())
    {
        dt_name = dt["name"].get<std::string>();
    }
    else
    {
        throw_member(metadata_errc::wrong_type, "data_type", "must be a string or {\"name\": ...}");
    }
    auto id = dtype_from_v3_name(dt_name);
    if (auto u = find_user_dtype(dt, dt_name, user))
    {
        // A registered name stands for the user's type, a built-in's name included (as a
        // registered codec takes over a built-in one).
        data_type t;
        t.id = dtype_id::user;
        t.fixed_size = u->size;
        t.user = std::move(u);
        return t;
    }
    // The variable-length types have no configuration; an empty one in the object form is tolerated.
    const bool bare_object = dt.is_object() && is_vlen(id.value_or(dtype_id::uint8)) &&
                             (!dt.contains("configuration") ||
                              (dt["configuration"].is_object() && dt["configuration"].empty()));
    if (!id || (!dt.is_string() && !is_time(*id) && !is_fixed_string(*id) && !bare_object &&
                *id != dtype_id::structured) ||
        (dt.is_string() && *id == dtype_id::structured))
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "data type " + (dt.is_string() ? "\"" + dt_name + "\"" : dt.dump()) +
                                 " is not supported by zarrxt (supported: bool, "
                                 "int8..int64, uint8..uint64, float16/32/64, bfloat16, "
                                 "float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fnuz, "
                                 "float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, "
                                 "complex64/128, numpy.datetime64, numpy.timedelta64, "
                                 "null_terminated_bytes, fixed_length_utf32, string, bytes, struct" +
                                 describe_user_dtypes(user) + ")");
    }
    data_type t;
    t.id = *id;
    if (is_time(*id))
    {
        t.unit = parse_v3_time_unit(dt);
    }
    else if (is_fixed_string(*id))
    {
        t.fixed_size = parse_v3_fixed_size(dt, *id);
    }
    else if (*id == dtype_id::structured)
    {
        t.fields = parse_v3_fields(dt);
        t.fixed_size = t.fields.back().offset + t.fields.back().size;
    }
    return t;
}

/// The data_type member of a data type (the inverse of parse_v3_data_type).
ZARRXT_DECL json v3_data_type_json(const data_type& t)
{
    if (t.user)
    {
        if (t.user->configuration.is_null())
        {
            return t.user->name;
        }
        return {{"name", t.user->name}, {"configuration", t.user->configuration}};
    }
    if (is_time(t.id))
    {
        return {{"name", std::string(name(t.id))},
                {"configuration", {{"unit", std::string(name(t.unit.base))}, {"scale_factor", t.unit.count}}}};
    }
    if (is_fixed_string(t.id))
    {
        return {{"name", std::string(name(t.id))}, {"configuration", {{"length_bytes", t.fixed_size}}}};
    }
    if (t.id == dtype_id::structured)
    {
        json fields = json::array();
        for (const auto& f : t.fields)
        {
            if (!f.shape.empty())
            {
                throw metadata_error(metadata_errc::unsupported_feature,
                                     "record field \"" + f.name +
                                         "\" is a subarray, which the v3 struct data type cannot state");
            }
            fields.push_back({{"name", f.name}, {"data_type", v3_data_type_json(f.type)}});
        }
        return {{"name", "struct"}, {"configuration", {{"fields", std::move(fields)}}}};
    }
    return std::string(name(t.id));
}

/// name + optional configuration; a bare string is the name-only shorthand.
inline codec_spec parse_named_config(const json& j, std::string_view member)
{
    if (j.is_string())
    {
        return codec_spec(j.get<std::string>());
    }
    as_object(j, member);
    codec_spec s;
    s.name = as_string(require_member(j, "name"), std::string(member) + ".name");
    auto c = j.find("configuration");
    if (c != j.end())
    {
        as_object(*c, std::string(member) + ".configuration");
        s.configuration = *c;
    }
    for (auto it = j.begin(); it != j.end(); ++it)
    {
        if (it.key() != "name" && it.key() != "configuration" && it.key() != "must_understand")
        {
            throw_member(metadata_errc::unknown_extension, std::string(member) + "." + it.key(),
                         "is not a known member");
        }
    }
    return s;
}

inline void check_node(const json& doc, std::string_view expected_node_type)
{
    if (!doc.is_object())
    {
        throw metadata_error(metadata_errc::wrong_type, "zarr.json must be a JSON object");
    }
    if (is_pre_final_v3_document(doc))
    {
        throw_pre_final_draft();
    }
    const json& fmt = require_member(doc, "zarr_format");
    if (!fmt.is_number_integer() || fmt.get<std::int64_t>() != 3)
    {
        throw metadata_error(metadata_errc::version_mismatch,
                             "zarr.json has \"zarr_format\": " + fmt.dump() + ", expected 3");
    }
    const auto& node_type = as_string(require_member(doc, "node_type"), "node_type");
    if (node_type != "array" && node_type != "group")
    {
        throw_member(metadata_errc::invalid_value, "node_type", "must be \"array\" or \"group\", got \""
                                                                    + node_type + "\"");
    }
    if (node_type != expected_node_type)
    {
        throw metadata_error(metadata_errc::wrong_node_type,
                             "expected " + std::string(expected_node_type) + ", found " + node_type);
    }
}

/// Members of the core spec; anything else must be a must_understand: false extension.
inline void check_unknown_members(const json& doc, std::span<const std::string_view> known)
{
    for (auto it = doc.begin(); it != doc.end(); ++it)
    {
        if (std::find(known.begin(), known.end(), it.key()) != known.end())
        {
            continue;
        }
        const json& v = it.value();
        const bool optional_ext = v.is_object() && v.contains("must_understand")
                                  && v["must_understand"].is_boolean() && !v["must_understand"].get<bool>();
        if (!optional_ext)
        {
            throw metadata_error(metadata_errc::unknown_extension,
                                 "unknown member \"" + it.key()
                                     + "\" (an extension zarrxt does not implement; only extensions "
                                       "marked \"must_understand\": false may be ignored)");
        }
    }
}

} // namespace detail

ZARRXT_DECL array_metadata parse_v3_array(const json& doc, const user_dtype_set* user)
{
    detail::check_node(doc, "array");
    static constexpr std::array<std::string_view, 11> known{
        "zarr_format", "node_type",     "shape",           "data_type",
        "chunk_grid",  "chunk_key_encoding", "fill_value", "codecs",
        "attributes",  "dimension_names", "storage_transformers"};
    detail::check_unknown_members(doc, known);

    array_metadata m;
    m.zarr_format = 3;
    m.shape = detail::as_extents(detail::require_member(doc, "shape"), "shape");

    // data_type: a name, or {name, configuration} for extension types.
    m.dtype = detail::parse_v3_data_type(detail::require_member(doc, "data_type"), user);

    // chunk_grid
    const json& grid = detail::require_member(doc, "chunk_grid");
    auto grid_spec = detail::parse_named_config(grid, "chunk_grid");
    if (grid_spec.name == "rectilinear")
    {
        // zarr-extensions chunk-grids/rectilinear; "inline" is the one kind it defines.
        const std::string& kind = detail::as_string(detail::require_member(grid_spec.configuration, "kind"),
                                                    "chunk_grid.configuration.kind");
        if (kind != "inline")
        {
            throw metadata_error(metadata_errc::unsupported_grid,
                                 "rectilinear chunk grid of kind \"" + kind +
                                     "\" is not supported (only \"inline\")");
        }
        m.rectilinear = std::make_shared<const rectilinear_grid>(
            rectilinear_grid::from_json(detail::require_member(grid_spec.configuration, "chunk_shapes")));
        settle_rectilinear(m);
    }
    else if (grid_spec.name == "regular")
    {
        m.chunk_shape = detail::as_extents(detail::require_member(grid_spec.configuration, "chunk_shape"),
                                           "chunk_grid.configuration.chunk_shape");
    }
    else
    {
        throw metadata_error(metadata_errc::unsupported_grid,
                             "chunk grid \"" + grid_spec.name +
                                 "\" is not supported (only \"regular\" and \"rectilinear\")");
    }
    validate_geometry(m);

    // chunk_key_encoding
    const json& cke = detail::require_member(doc, "chunk_key_encoding");
    auto cke_spec = detail::parse_named_config(cke, "chunk_key_encoding");
    if (cke_spec.name == "default")
    {
        m.key_encoding = {chunk_key_encoding::kind::default_, '/'};
    }
    else if (cke_spec.name == "v2")
    {
        m.key_encoding = {chunk_key_encoding::kind::v2, '.'};
    }
    else
    {
        throw metadata_error(metadata_errc::unsupported_key_encoding,
                             "chunk key encoding \"" + cke_spec.name + "\" is not supported");
    }
    if (auto sep = cke_spec.configuration.find("separator"); sep != cke_spec.configuration.end())
    {
        const auto& s = detail::as_string(*sep, "chunk_key_encoding.configuration.separator");
        if (s != "/" && s != ".")
        {
            detail::throw_member(metadata_errc::invalid_value, "chunk_key_encoding.configuration.separator",
                                 "must be \"/\" or \".\", got \"" + s + "\"");
        }
        m.key_encoding.separator = s[0];
    }

    m.fill = parse_fill_value(detail::require_member(doc, "fill_value"), m.dtype, 3);

    // codecs: the chain is validated (names, order, configurations) when it is built.
    const json& codecs = detail::as_array(detail::require_member(doc, "codecs"), "codecs");
    if (codecs.empty())
    {
        detail::throw_member(metadata_errc::invalid_value, "codecs", "must name at least one codec");
    }
    for (const auto& c : codecs)
    {
        m.codecs.push_back(detail::parse_named_config(c, "codecs[]"));
    }

    if (auto a = doc.find("attributes"); a != doc.end())
    {
        detail::as_object(*a, "attributes");
        m.attributes = *a;
    }
    if (auto d = doc.find("dimension_names"); d != doc.end() && !d->is_null())
    {
        m.dimension_names = detail::parse_dimension_names(*d, m.shape.size(), "dimension_names");
    }
    if (auto st = doc.find("storage_transformers"); st != doc.end())
    {
        detail::as_array(*st, "storage_transformers");
        if (!st->empty())
        {
            throw metadata_error(metadata_errc::unsupported_feature,
                                 "storage transformers are not supported (found " + (*st)[0].dump() + ")");
        }
    }
    m.document = doc;
    return m;
}

ZARRXT_DECL group_metadata parse_v3_group(const json& doc)
{
    detail::check_node(doc, "group");
    static constexpr std::array<std::string_view, 4> known{"zarr_format", "node_type", "attributes",
                                                           "consolidated_metadata"};
    detail::check_unknown_members(doc, known);
    group_metadata g;
    g.zarr_format = 3;
    if (auto a = doc.find("attributes"); a != doc.end())
    {
        detail::as_object(*a, "attributes");
        g.attributes = *a;
    }
    g.document = doc;
    return g;
}

ZARRXT_DECL std::string v3_node_type(const json& doc)
{
    if (!doc.is_object())
    {
        throw metadata_error(metadata_errc::wrong_type, "zarr.json must be a JSON object");
    }
    if (is_pre_final_v3_document(doc))
    {
        throw_pre_final_draft();
    }
    return detail::as_string(detail::require_member(doc, "node_type"), "node_type");
}

ZARRXT_DECL json make_v3_array_document(const array_metadata& m)
{
    json doc = json::object();
    doc["zarr_format"] = 3;
    doc["node_type"] = "array";
    doc["shape"] = m.shape;
    doc["data_type"] = detail::v3_data_type_json(m.dtype);
    if (m.rectilinear)
    {
        doc["chunk_grid"] = {
            {"name", "rectilinear"},
            {"configuration", {{"kind", "inline"}, {"chunk_shapes", m.rectilinear->to_json()}}}};
    }
    else
    {
        doc["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", m.chunk_shape}}}};
    }
    doc["chunk_key_encoding"] = {
        {"name", m.key_encoding.encoding == chunk_key_encoding::kind::default_ ? "default" : "v2"},
        {"configuration", {{"separator", std::string(1, m.key_encoding.separator)}}}};
    doc["fill_value"] = fill_value_to_json(m.fill, m.dtype, 3);
    json codecs = json::array();
    for (const auto& c : m.codecs)
    {
        codecs.push_back(c.to_json());
    }
    doc["codecs"] = std::move(codecs);
    doc["attributes"] = m.attributes;
    if (m.dimension_names)
    {
        doc["dimension_names"] = detail::dimension_names_to_json(*m.dimension_names);
    }
    return doc;
}

ZARRXT_DECL json make_v3_group_document(const json& attributes)
{
    json doc = json::object();
    doc["zarr_format"] = 3;
    doc["node_type"] = "group";
    doc["attributes"] = attributes;
    return doc;
}

#endif // ZARRXT_DEFINITIONS

} // namespace zarrxt
