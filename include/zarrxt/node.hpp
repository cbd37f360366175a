/** @file node.hpp
 *  Finding and reading the metadata of a node (array or group) in a store, for both formats, and
 *  writing it back. This is where a path becomes a zarr.json or a .zarray/.zgroup/.zattrs key.
 *
 *  Lookup order at a path: `zarr.json` (v3), then `.zarray`, then `.zgroup` (v2). When none exists,
 *  the store is checked for the pre-final v3 draft layout (a root zarr.json whose zarr_format is a
 *  URL, or meta/root/...), which is refused with metadata error 10 rather than reported as missing.
 */
#pragma once

#include "metadata/document.hpp"
#include "metadata/v2.hpp"
#include "metadata/v3.hpp"
#include "store/concepts.hpp"
#include "store/key.hpp"

#include <optional>
#include <string>

namespace zarrxt
{

enum class node_kind
{
    array,
    group,
};

struct node_info
{
    node_kind kind = node_kind::group;
    int zarr_format = 3;
    array_metadata array; ///< when kind == array
    group_metadata group; ///< when kind == group
};

namespace detail
{

template <readable_store S>
std::optional<json> read_document(const S& s, const std::string& key, const limit_values& limits)
{
    std::optional<read_result> res;
    try
    {
        res = s.read(key, byte_range::all(), limits.max_metadata_bytes);
    }
    catch (const limit_exceeded& e)
    {
        // The store names its cap generically; this read is capped by the metadata limit.
        limit_exceeded m("max_metadata_bytes", e.value(), e.limit());
        m.with_key(key);
        throw m;
    }
    if (!res)
    {
        return std::nullopt;
    }
    return parse_document(res->bytes.view(), limits, key);
}

template <readable_store S>
void check_pre_final_draft(const S& s, const std::string& path, const limit_values& limits)
{
    // A root zarr.json with a URL as zarr_format, or the meta/ tree of the draft.
    try
    {
        if (auto root = read_document(s, "zarr.json", limits); root && is_pre_final_v3_document(*root))
        {
            with_key_context("zarr.json", [] { throw_pre_final_draft(); });
        }
    }
    catch (const metadata_error& e)
    {
        if (e.code() == static_cast<int>(metadata_errc::pre_final_draft))
        {
            throw;
        }
    }
    std::vector<std::string> draft_keys{"meta/root.group.json"};
    if (!path.empty())
    {
        draft_keys.push_back("meta/root/" + path + ".array.json");
        draft_keys.push_back("meta/root/" + path + ".group.json");
    }
    for (const auto& k : draft_keys)
    {
        if (s.stat(k))
        {
            with_key_context(k, [] { throw_pre_final_draft(); });
        }
    }
}

} // namespace detail

/// The node at `path`, or nullopt when there is none; a v3 array's data_type may name one of the
/// user data types `user` (a codec_registry's dtypes()).
template <readable_store S>
std::optional<node_info> read_node(const S& s, const std::string& path, const limit_values& limits,
                                   const user_dtype_set* user = nullptr)
{
    node_info n;
    const std::string v3_key = join_key(path, "zarr.json");
    if (auto doc = detail::read_document(s, v3_key, limits))
    {
        detail::with_key_context(v3_key, [&] {
            n.zarr_format = 3;
            if (v3_node_type(*doc) == "array")
            {
                n.kind = node_kind::array;
                n.array = parse_v3_array(*doc, user);
            }
            else
            {
                n.kind = node_kind::group;
                n.group = parse_v3_group(*doc);
            }
        });
        return n;
    }
    const std::string attrs_key = join_key(path, ".zattrs");
    auto read_attrs = [&]() -> json {
        auto a = detail::read_document(s, attrs_key, limits);
        if (!a)
        {
            return json::object();
        }
        if (!a->is_object())
        {
            metadata_error e(metadata_errc::wrong_type, ".zattrs must be a JSON object");
            e.with_key(attrs_key);
            throw e;
        }
        return *a;
    };
    const std::string zarray_key = join_key(path, ".zarray");
    if (auto doc = detail::read_document(s, zarray_key, limits))
    {
        n.zarr_format = 2;
        n.kind = node_kind::array;
        n.array = detail::with_key_context(zarray_key, [&] { return parse_v2_array(*doc); });
        n.array.attributes = read_attrs();
        lift_v2_dimension_names(n.array);
        adopt_v2_fill_value_attribute(n.array);
        return n;
    }
    const std::string zgroup_key = join_key(path, ".zgroup");
    if (auto doc = detail::read_document(s, zgroup_key, limits))
    {
        n.zarr_format = 2;
        n.kind = node_kind::group;
        n.group = detail::with_key_context(zgroup_key, [&] { return parse_v2_group(*doc); });
        n.group.attributes = read_attrs();
        return n;
    }
    detail::check_pre_final_draft(s, path, limits);
    return std::nullopt;
}

/// What kind of node is at `path`, looking only at which metadata keys exist (no parsing).
template <readable_store S>
std::optional<node_kind> peek_node_kind(const S& s, const std::string& path, const limit_values& limits)
{
    const std::string v3_key = join_key(path, "zarr.json");
    if (s.stat(v3_key))
    {
        auto doc = detail::read_document(s, v3_key, limits);
        if (!doc)
        {
            return std::nullopt;
        }
        return detail::with_key_context(v3_key, [&] {
            return v3_node_type(*doc) == "array" ? node_kind::array : node_kind::group;
        });
    }
    if (s.stat(join_key(path, ".zarray")))
    {
        return node_kind::array;
    }
    if (s.stat(join_key(path, ".zgroup")))
    {
        return node_kind::group;
    }
    return std::nullopt;
}

namespace detail
{

template <writable_store S>
void write_document(S& s, const std::string& key, const json& doc)
{
    const std::string text = dump_document(doc);
    s.set(key, as_bytes(text));
}

/// Write the metadata of an array (v3: zarr.json with attributes; v2: .zarray and .zattrs).
template <class S>
requires writable_store<S> && erasable_store<S>
void write_array_metadata(S& s, const std::string& path, const array_metadata& m)
{
    if (m.zarr_format == 3)
    {
        json doc = m.document;
        doc["attributes"] = m.attributes;
        write_document(s, join_key(path, "zarr.json"), doc);
        return;
    }
    write_document(s, join_key(path, ".zarray"), m.document);
    const std::string attrs_key = join_key(path, ".zattrs");
    if (json attrs = v2_attributes_document(m); !attrs.empty())
    {
        write_document(s, attrs_key, attrs);
    }
    else
    {
        s.erase(attrs_key);
    }
}

template <writable_store S>
void write_group_metadata(S& s, const std::string& path, int zarr_format, const json& attributes)
{
    if (zarr_format == 3)
    {
        write_document(s, join_key(path, "zarr.json"), make_v3_group_document(attributes));
        return;
    }
    write_document(s, join_key(path, ".zgroup"), json{{"zarr_format", 2}});
    if (!attributes.empty())
    {
        write_document(s, join_key(path, ".zattrs"), attributes);
    }
}

/// Create the groups above `path` that do not exist yet (zarr-python does the same, and peers
/// list children through them).
template <class S>
void ensure_parent_groups(S& s, const std::string& path, int zarr_format, const limit_values& limits)
{
    if (path.empty())
    {
        return; // the node is the root
    }
    std::string parent;
    std::size_t pos = 0;
    while (true)
    {
        const std::size_t slash = path.find('/', pos);
        // the root group and each intermediate group, not the node itself
        const std::string p = parent;
        if (!peek_node_kind(s, p, limits))
        {
            write_group_metadata(s, p, zarr_format, json::object());
        }
        if (slash == std::string::npos)
        {
            return;
        }
        parent = path.substr(0, slash);
        pos = slash + 1;
    }
}

/// Erase every key of the node at `path` (its metadata and chunks), for create(overwrite).
template <class S>
void erase_node(S& s, const std::string& path)
{
    for (const char* k : {"zarr.json", ".zarray", ".zgroup", ".zattrs"})
    {
        s.erase(join_key(path, k));
    }
    for (const auto& key : s.list(path))
    {
        s.erase(key);
    }
}

} // namespace detail
} // namespace zarrxt
