/** @file group.hpp
 *  `group<Store>`: a Zarr group (v2 `.zgroup` + `.zattrs`, or v3 `zarr.json` with node_type "group"):
 *  create, open, attributes, and the list of child arrays and groups.
 */
#pragma once

#include "node.hpp"
#include "options.hpp"
#include "store/filesystem.hpp"
#include "zarrxt_fwd.hpp"

#include <string>
#include <vector>

namespace zarrxt
{

template <class Store>
class group
{
public:
    struct child
    {
        std::string name; ///< last path segment
        std::string path; ///< full path from the store root
        node_kind kind;
    };

    static group open(const Store& store, std::string_view path, const limit_values& limits = limit_values::from(default_limits{}));
    static group create(Store& store, std::string_view path, const group_options& options = {});

    int zarr_format() const noexcept { return m_meta.zarr_format; }
    const std::string& path() const noexcept { return m_path; }
    const json& attributes() const noexcept { return m_meta.attributes; }
    void set_attributes(json attributes);

    /// Child arrays and groups, sorted by name (keys without node metadata are skipped). A store
    /// that cannot list answers through its consolidated metadata (open_consolidated).
    std::vector<child> children() const requires listable_store<Store>;

    Store& store() noexcept { return m_store; }

private:
    group(Store s, std::string path, group_metadata m, limit_values lv)
        : m_store(std::move(s))
        , m_path(std::move(path))
        , m_meta(std::move(m))
        , m_lv(lv)
    {
    }

    Store m_store;
    std::string m_path;
    group_metadata m_meta;
    limit_values m_lv;
};

/******************
 * implementation *
 ******************/

template <class Store>
group<Store> group<Store>::open(const Store& store, std::string_view path, const limit_values& limits)
{
    const std::string p = normalize_path(path);
    auto node = read_node(store, p, limits);
    const std::string where = p.empty() ? std::string("/") : p;
    if (!node)
    {
        array_error e(array_errc::node_not_found, "no Zarr group at \"" + p + "\"");
        e.with_key(where);
        throw e;
    }
    if (node->kind != node_kind::group)
    {
        metadata_error e(metadata_errc::wrong_node_type, "expected a group at \"" + p + "\", found an array");
        e.with_key(where);
        throw e;
    }
    return group(store, p, std::move(node->group), limits);
}

template <class Store>
group<Store> group<Store>::create(Store& store, std::string_view path, const group_options& options)
{
    const std::string p = normalize_path(path);
    if (options.zarr_format != 2 && options.zarr_format != 3)
    {
        throw array_error(array_errc::invalid_argument, "zarr_format must be 2 or 3");
    }
    if (!options.attributes.is_object())
    {
        throw array_error(array_errc::invalid_argument, "attributes must be a JSON object");
    }
    const limit_values lv = limit_values::from(default_limits{});
    if (peek_node_kind(store, p, lv))
    {
        if (!options.overwrite)
        {
            array_error e(array_errc::node_exists, "a node already exists at \"" + p + "\"");
            e.with_key(p.empty() ? std::string("/") : p);
            throw e;
        }
        detail::erase_node(store, p);
    }
    detail::ensure_parent_groups(store, p, options.zarr_format, lv);
    detail::write_group_metadata(store, p, options.zarr_format, options.attributes);
    return open(store, p, lv);
}

template <class Store>
void group<Store>::set_attributes(json attributes)
{
    if (!attributes.is_object())
    {
        throw array_error(array_errc::invalid_argument, "attributes must be a JSON object");
    }
    m_meta.attributes = std::move(attributes);
    if (m_meta.zarr_format == 3)
    {
        json doc = m_meta.document;
        doc["attributes"] = m_meta.attributes;
        detail::write_document(m_store, join_key(m_path, "zarr.json"), doc);
        m_meta.document = std::move(doc);
    }
    else
    {
        const std::string key = join_key(m_path, ".zattrs");
        if (m_meta.attributes.empty())
        {
            m_store.erase(key);
        }
        else
        {
            detail::write_document(m_store, key, m_meta.attributes);
        }
    }
}

template <class Store>
auto group<Store>::children() const -> std::vector<child>
requires listable_store<Store>
{
    std::vector<child> out;
    for (const auto& name : m_store.list_dir(m_path))
    {
        if (name == "zarr.json" || name == ".zgroup" || name == ".zattrs" || name == ".zarray"
            || name == ".zmetadata")
        {
            continue;
        }
        const std::string p = join_key(m_path, name);
        try
        {
            validate_key(p);
        }
        catch (const store_error&)
        {
            continue; // a name no key can have (e.g. with a backslash) is not a child
        }
        if (auto kind = peek_node_kind(m_store, p, m_lv))
        {
            out.push_back({name, p, *kind});
        }
    }
    return out;
}

} // namespace zarrxt
