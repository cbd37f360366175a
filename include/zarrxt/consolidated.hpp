/** @file consolidated.hpp
 *  Consolidated metadata: every metadata document of a hierarchy kept in one document at its
 *  group, so a reader opens the whole hierarchy with one read. Two layouts, both read and written:
 *
 *  - v2, zarr-python 2's `.zmetadata` beside the group's `.zgroup`:
 *    `{"zarr_consolidated_format": 1, "metadata": {".zgroup": {...}, "a/.zarray": {...}, ...}}`;
 *  - v3, zarr-python 3's member of the group's own zarr.json (not part of the v3 core spec):
 *    `"consolidated_metadata": {"kind": "inline", "must_understand": false,
 *    "metadata": {"a": {<a's zarr.json>}, "a/b": {...}}}`, keys relative to the group, flattened.
 *
 *  `open_consolidated(store, path, mode)` reads it into a `consolidated_store<S>`
 *  (store/consolidated.hpp); `consolidate(store, path)` writes it from the store's own metadata.
 *  A consolidated document is a snapshot: zarrxt's later metadata writes do not update it.
 */
#pragma once

#include "group.hpp"
#include "metadata/document.hpp"
#include "node.hpp"
#include "store/consolidated.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace zarrxt
{

/// Whether open_consolidated uses consolidated metadata: when present (`automatic`, zarr-python's
/// default), required (`always`: metadata.17 when absent), or not at all (`never`).
enum class consolidated_mode
{
    automatic,
    always,
    never,
};

/// The snapshot described by a v2 `.zmetadata` document of the group at `root`.
ZARRXT_DECL consolidated_snapshot parse_v2_consolidated(const json& doc, std::string_view root);

/// The snapshot described by the `consolidated_metadata` member of the v3 group document `doc` at
/// `root` (which the snapshot serves as the group's own zarr.json), or nullopt when the member is
/// absent or null (zarr-python 3 writes null for a group that was never consolidated).
ZARRXT_DECL std::optional<consolidated_snapshot> parse_v3_consolidated(const json& doc,
                                                                       std::string_view root);

/// The group at `path` in `store`, seen through its consolidated metadata as `mode` says.
template <readable_store S>
consolidated_store<S> open_consolidated(const S& store, std::string_view path = "",
                                        consolidated_mode mode = consolidated_mode::automatic,
                                        const limit_values& limits = limit_values::from(default_limits{}));

/// What consolidate(store, path) would write: for a v2 group its `.zmetadata` document, for a v3
/// group its zarr.json with the `consolidated_metadata` member (compare it with the stored one to
/// tell whether that is stale, as `zarrxt consolidate --check` does).
template <class S>
requires readable_store<S> && listable_store<S> json
consolidated_document(const S& store, std::string_view path = "",
                      const limit_values& limits = limit_values::from(default_limits{}));

/// Write the consolidated metadata of the group at `path` and every node below it, from the
/// nodes' own metadata; returns how many nodes below the group it describes.
template <class S>
requires readable_store<S> && writable_store<S> && listable_store<S> std::size_t consolidate(
    S& store, std::string_view path = "", const limit_values& limits = limit_values::from(default_limits{}));

/******************
 * implementation *
 ******************/

namespace detail
{

/// The store key of a relative `key` from a consolidated document of the group at `root`;
/// refuses keys that would name anything outside it (metadata.4).
ZARRXT_DECL std::string consolidated_key(std::string_view root, const std::string& key);

} // namespace detail

#if ZARRXT_DEFINITIONS
namespace detail
{

ZARRXT_DECL std::string consolidated_key(std::string_view root, const std::string& key)
{
    try
    {
        validate_key(key);
    }
    catch (const store_error& e)
    {
        throw metadata_error(metadata_errc::invalid_value, "consolidated metadata names \"" + key +
                                                               "\", which is not a relative key (" +
                                                               e.message() + ")");
    }
    return join_key(root, key);
}

inline void add_v3_entries(consolidated_snapshot& snap, const json& cm, const std::string& prefix)
{
    as_object(cm, "consolidated_metadata");
    const std::string& kind = as_string(require_member(cm, "kind"), "kind");
    if (kind != "inline")
    {
        throw metadata_error(metadata_errc::unsupported_feature,
                             "consolidated_metadata of kind \"" + kind + "\" (only \"inline\" is defined)");
    }
    if (auto mu = cm.find("must_understand"); mu != cm.end() && !mu->is_boolean())
    {
        throw_member(metadata_errc::wrong_type, "must_understand", "must be a boolean, got " + mu->dump());
    }
    const json& meta = require_member(cm, "metadata");
    as_object(meta, "metadata");
    for (const auto& [rel, node] : meta.items())
    {
        const std::string path = consolidated_key(snap.root, join_key(prefix, rel));
        if (!node.is_object())
        {
            throw metadata_error(metadata_errc::wrong_type, "consolidated metadata of \"" + rel +
                                                                "\" must be an object, got " + node.dump());
        }
        // Flattened (zarr-python >= 3.1) has every node at the top; an earlier nested form keeps a
        // child group's nodes in its own member. Both are read; the flattened entry wins.
        snap.documents.emplace(join_key(path, "zarr.json"), dump_document(node));
        if (auto inner = node.find("consolidated_metadata"); inner != node.end() && !inner->is_null())
        {
            add_v3_entries(snap, *inner, join_key(prefix, rel));
        }
    }
}

} // namespace detail

ZARRXT_DECL consolidated_snapshot parse_v2_consolidated(const json& doc, std::string_view root)
{
    detail::as_object(doc, ".zmetadata");
    const json& format = detail::require_member(doc, "zarr_consolidated_format");
    if (detail::as_uint(format, "zarr_consolidated_format") != 1)
    {
        throw metadata_error(metadata_errc::invalid_value,
                             "\"zarr_consolidated_format\" " + format.dump() + " (only 1 is defined)");
    }
    const json& meta = detail::require_member(doc, "metadata");
    detail::as_object(meta, "metadata");
    consolidated_snapshot snap;
    snap.root = std::string(root);
    snap.zarr_format = 2;
    for (const auto& [rel, value] : meta.items())
    {
        const std::string key = detail::consolidated_key(root, rel);
        const std::size_t slash = rel.rfind('/');
        const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
        if (!detail::is_node_metadata_name(name) || name == "zarr.json")
        {
            throw metadata_error(metadata_errc::invalid_value,
                                 "consolidated metadata names \"" + rel +
                                     "\", which is not a .zarray, .zgroup or .zattrs key");
        }
        if (!value.is_object())
        {
            throw metadata_error(metadata_errc::wrong_type, "consolidated metadata of \"" + rel +
                                                                "\" must be an object, got " + value.dump());
        }
        snap.documents.emplace(key, dump_document(value));
    }
    return snap;
}

ZARRXT_DECL std::optional<consolidated_snapshot> parse_v3_consolidated(const json& doc, std::string_view root)
{
    auto cm = doc.find("consolidated_metadata");
    if (cm == doc.end() || cm->is_null())
    {
        return std::nullopt;
    }
    consolidated_snapshot snap;
    snap.root = std::string(root);
    snap.zarr_format = 3;
    detail::add_v3_entries(snap, *cm, "");
    snap.documents.emplace(join_key(root, "zarr.json"), dump_document(doc));
    return snap;
}
#endif // ZARRXT_DEFINITIONS

template <readable_store S>
consolidated_store<S> open_consolidated(const S& store, std::string_view path, consolidated_mode mode,
                                        const limit_values& limits)
{
    const std::string p = normalize_path(path);
    if (mode == consolidated_mode::never)
    {
        return consolidated_store<S>(store, nullptr);
    }
    std::optional<consolidated_snapshot> snap;
    const std::string v3_key = join_key(p, "zarr.json");
    if (auto doc = detail::read_document(store, v3_key, limits))
    {
        // A v3 node: its consolidated metadata is inline or absent (never a .zmetadata beside it).
        detail::with_key_context(v3_key,
                                 [&]
                                 {
                                     if (doc->is_object() && v3_node_type(*doc) == "group")
                                     {
                                         parse_v3_group(*doc);
                                         snap = parse_v3_consolidated(*doc, p);
                                     }
                                 });
    }
    else
    {
        const std::string v2_key = join_key(p, ".zmetadata");
        if (auto zm = detail::read_document(store, v2_key, limits))
        {
            snap = detail::with_key_context(v2_key, [&] { return parse_v2_consolidated(*zm, p); });
        }
    }
    if (!snap && mode == consolidated_mode::always)
    {
        metadata_error e(
            metadata_errc::no_consolidated_metadata,
            "no consolidated metadata at \"" + p +
                "\" (neither a .zmetadata document nor a consolidated_metadata member in zarr.json)");
        e.with_key(p.empty() ? std::string("/") : p);
        throw e;
    }
    return consolidated_store<S>(store, snap ? std::make_shared<const consolidated_snapshot>(std::move(*snap))
                                             : nullptr);
}

namespace detail
{

/// Every node below the group at `root` (depth first, children sorted), as (relative path, kind).
template <class S>
void collect_nodes(const S& store, const std::string& root, const std::string& rel,
                   const limit_values& limits, std::vector<std::pair<std::string, node_kind>>& out)
{
    for (const auto& c : group<S>::open(store, join_key(root, rel), limits).children())
    {
        const std::string child = join_key(rel, c.name);
        out.emplace_back(child, c.kind);
        if (c.kind == node_kind::group)
        {
            collect_nodes(store, root, child, limits, out);
        }
    }
}

/// consolidated_document(), and how many nodes below the group it describes.
template <class S>
json build_consolidated(const S& store, const std::string& root, const limit_values& limits,
                        std::size_t& node_count)
{
    const auto top = group<S>::open(store, root, limits);
    std::vector<std::pair<std::string, node_kind>> nodes;
    collect_nodes(store, root, "", limits, nodes);
    node_count = nodes.size();
    for (const auto& [rel, kind] : nodes)
    {
        // One format per document: zarr-python's v2 layout has no place for a v3 node, nor the
        // reverse, and leaving a node out would hide it from every reader of the snapshot.
        const char* own = top.zarr_format() == 3     ? "zarr.json"
                          : kind == node_kind::array ? ".zarray"
                                                     : ".zgroup";
        if (!store.stat(join_key(join_key(root, rel), own)))
        {
            metadata_error e(metadata_errc::version_mismatch,
                             "consolidated metadata of a v" + std::to_string(top.zarr_format()) +
                                 " group cannot describe \"" + rel + "\", a node of the other format");
            e.with_key(join_key(root, rel));
            throw e;
        }
    }
    if (top.zarr_format() == 2)
    {
        json meta = json::object();
        auto add = [&](const std::string& rel, const char* name)
        {
            const std::string k = join_key(rel, name);
            if (auto j = read_document(store, join_key(root, k), limits))
            {
                meta[k] = std::move(*j);
            }
        };
        add("", ".zgroup");
        add("", ".zattrs");
        for (const auto& [rel, kind] : nodes)
        {
            add(rel, kind == node_kind::array ? ".zarray" : ".zgroup");
            add(rel, ".zattrs");
        }
        return json{{"metadata", std::move(meta)}, {"zarr_consolidated_format", 1}};
    }
    auto member = [](json metadata) {
        return json{{"kind", "inline"}, {"must_understand", false}, {"metadata", std::move(metadata)}};
    };
    json inner = json::object();
    for (const auto& node : nodes)
    {
        const std::string& rel = node.first;
        if (auto j = read_document(store, join_key(join_key(root, rel), "zarr.json"), limits))
        {
            // Each entry is the node's own zarr.json; a child group's nodes are in this flattened
            // list already (zarr-python 3 gives it an empty member instead; both read the same).
            j->erase("consolidated_metadata");
            inner[rel] = std::move(*j);
        }
    }
    json doc = *read_document(store, join_key(root, "zarr.json"), limits);
    doc["consolidated_metadata"] = member(std::move(inner));
    return doc;
}

} // namespace detail

template <class S>
requires readable_store<S> && listable_store<S> json consolidated_document(const S& store,
                                                                           std::string_view path,
                                                                           const limit_values& limits)
{
    std::size_t nodes = 0;
    return detail::build_consolidated(store, normalize_path(path), limits, nodes);
}

template <class S>
requires readable_store<S> && writable_store<S> && listable_store<S> std::size_t consolidate(
    S& store, std::string_view path, const limit_values& limits)
{
    const std::string root = normalize_path(path);
    std::size_t nodes = 0;
    const json doc = detail::build_consolidated(store, root, limits, nodes);
    detail::write_document(
        store, join_key(root, doc.contains("zarr_consolidated_format") ? ".zmetadata" : "zarr.json"), doc);
    return nodes;
}

} // namespace zarrxt
