/** @file store/consolidated.hpp
 *  `consolidated_store<S>`: a store S seen through the consolidated metadata of one group (a
 *  snapshot of every metadata document below it, read once). Metadata keys below that group
 *  (`zarr.json`, `.zarray`, `.zgroup`, `.zattrs`) are answered by the snapshot alone, present or
 *  absent, so opening a node costs no request to S; every other key (chunks, shards, keys outside
 *  the group) goes to S. Listing works from the snapshot where S cannot list (an HTTP server).
 *
 *  Read-only on purpose: a metadata write to S is not seen through the decorator until the
 *  snapshot is written again and reopened (see docs/remote.md, "Consolidated metadata"). Opening
 *  (`open_consolidated`) and writing (`consolidate`) the snapshot are in consolidated.hpp.
 */
#pragma once

#include "concepts.hpp"
#include "key.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// The consolidated metadata of the group at `root`: every metadata document it describes,
/// serialised, by full store key ("a/b/.zarray", "a/zarr.json"). Immutable once built.
struct consolidated_snapshot
{
    std::string root;    ///< the group holding the consolidated document ("" is the store's root)
    int zarr_format = 3; ///< 2: from `.zmetadata`; 3: inline in the group's zarr.json
    std::map<std::string, std::string, std::less<>> documents;
};

namespace detail
{

/// Whether `s` can list now: a store type that decides at run time (any_store holding an HTTP
/// store) says so itself; for the others the type decides.
template <class S>
bool can_list(const S& s) noexcept
{
    if constexpr (requires { { s.listable() } -> std::convertible_to<bool>; })
    {
        return s.listable();
    }
    else
    {
        return listable_store<S>;
    }
}

/// Stands in for S::object_handle when S has none (never used: open_object is then absent).
struct no_object_handle
{
};

template <class S>
struct inner_handle
{
    using type = no_object_handle;
};

template <object_store S>
struct inner_handle<S>
{
    using type = typename S::object_handle;
};

/// The basenames a consolidated snapshot answers for.
inline bool is_node_metadata_name(std::string_view name) noexcept
{
    return name == "zarr.json" || name == ".zarray" || name == ".zgroup" || name == ".zattrs";
}

/// Whether `key` lies at or below `dir` ("" holds everything).
inline bool is_below(std::string_view key, std::string_view dir) noexcept
{
    return dir.empty() ||
           (key.size() > dir.size() && key.substr(0, dir.size()) == dir && key[dir.size()] == '/');
}

inline void copy_range(const std::string& doc, byte_range r, std::uint64_t max_bytes, std::string_view key,
                       buffer& out)
{
    const auto [begin, end] = resolve_capped_range(r, doc.size(), max_bytes, key);
    out.resize_discard(static_cast<std::size_t>(end - begin));
    if (end > begin)
    {
        std::memcpy(out.data(), doc.data() + begin, static_cast<std::size_t>(end - begin));
    }
}

} // namespace detail

/// An object handle of a consolidated_store: a snapshot document, or S's own handle.
template <class H>
class consolidated_handle
{
public:
    object_info info() const { return m_doc ? object_info{m_doc->size(), generation} : m_inner->info(); }

    void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const
    {
        if (m_doc)
        {
            detail::copy_range(*m_doc, r, max_bytes, m_key, out);
            return;
        }
        m_inner->read_to(r, max_bytes, out);
    }

    void read_ranges(std::span<const byte_range> ranges, std::uint64_t max_bytes, std::span<buffer> out) const
    {
        if (m_doc)
        {
            read_ranges_one_by_one(*this, ranges, max_bytes, out);
            return;
        }
        m_inner->read_ranges(ranges, max_bytes, out);
    }

    void read_into(std::uint64_t offset, mutable_byte_view dest) const requires direct_handle<H>
    {
        if (!m_doc)
        {
            m_inner->read_into(offset, dest);
            return;
        }
        if (offset > m_doc->size() || dest.size() > m_doc->size() - offset)
        {
            throw std::out_of_range("zarrxt: read_into past the end of " + m_key);
        }
        if (!dest.empty())
        {
            std::memcpy(dest.data(), m_doc->data() + offset, dest.size());
        }
    }

    void prefetch(std::span<const byte_range> ranges) const requires prefetching_handle<H>
    {
        if (!m_doc)
        {
            m_inner->prefetch(ranges);
        }
    }

    /// The generation of every snapshot document: a snapshot never changes.
    static constexpr std::uint64_t generation = 1;

private:
    template <class S>
    friend class consolidated_store;

    explicit consolidated_handle(H inner)
        : m_inner(std::move(inner))
    {
    }
    consolidated_handle(std::shared_ptr<const consolidated_snapshot> snap, const std::string* doc,
                        std::string_view key)
        : m_snapshot(std::move(snap))
        , m_doc(doc)
        , m_key(key)
    {
    }

    std::optional<H> m_inner;
    std::shared_ptr<const consolidated_snapshot> m_snapshot; ///< keeps *m_doc alive
    const std::string* m_doc = nullptr;
    std::string m_key;
};

template <class S>
class consolidated_store
{
    static_assert(readable_store<S>,
                  "consolidated_store<S>: S must be a readable_store (read(key, range, max) "
                  "and stat(key)); see docs/concepts/store.md");

public:
    using inner_store = S;
    using object_handle = consolidated_handle<typename detail::inner_handle<S>::type>;

    /// `snapshot` null: no consolidated metadata, every key goes to `inner`.
    consolidated_store(S inner, std::shared_ptr<const consolidated_snapshot> snapshot)
        : m_inner(std::move(inner))
        , m_snapshot(std::move(snapshot))
    {
    }

    /// Whether a snapshot answers the metadata keys (false: consolidated_mode::never, or none found).
    bool has_snapshot() const noexcept { return m_snapshot != nullptr; }
    /// The snapshot (null when there is none).
    const std::shared_ptr<const consolidated_snapshot>& snapshot() const noexcept { return m_snapshot; }
    const S& inner() const noexcept { return m_inner; }

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const;
    std::optional<object_info> stat(std::string_view key) const;
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const requires buffered_store<S>;
    std::optional<object_info> read_into(std::string_view key, std::uint64_t offset,
                                         mutable_byte_view dest) const requires direct_store<S>;
    std::optional<object_handle> open_object(std::string_view key) const requires object_store<S>;
    std::optional<object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                      std::uint64_t max_bytes,
                                                      buffer& out) const requires open_reading_store<S>;
    /// Chunks announced for whole reads go to S (the snapshot's documents are in memory already).
    void prefetch_objects(std::span<const std::string> keys,
                          std::uint64_t max_bytes) const requires object_prefetching_store<S>
    {
        m_inner.prefetch_objects(keys, max_bytes);
    }
    void cancel_prefetch(std::span<const std::string> keys) const requires object_prefetching_store<S>
    {
        m_inner.cancel_prefetch(keys);
    }
    bool prefetches_objects() const noexcept requires object_prefetching_store<S>
    {
        if constexpr (requires { m_inner.prefetches_objects(); })
        {
            return m_inner.prefetches_objects();
        }
        else
        {
            return true;
        }
    }

    /// Every key below `prefix`: S's keys and the snapshot's. A store S that cannot list cannot
    /// tell its chunk keys, so this is store.7 there.
    std::vector<std::string> list(std::string_view prefix) const;
    /// Names of the immediate children of `prefix`: S's and the snapshot's. Where S cannot list,
    /// the snapshot's nodes alone (the names on the way to its root, at or below it), and store.7
    /// for a prefix the snapshot does not cover.
    std::vector<std::string> list_dir(std::string_view prefix) const;

private:
    /// What the snapshot says of `key`: not covered (S answers), or the document (null: absent).
    struct lookup
    {
        bool covered = false;
        const std::string* doc = nullptr;
    };
    lookup find(std::string_view key) const;
    [[noreturn]] static void throw_not_listable(std::string_view prefix);

    S m_inner;
    std::shared_ptr<const consolidated_snapshot> m_snapshot;
};

/******************
 * implementation *
 ******************/

template <class S>
auto consolidated_store<S>::find(std::string_view key) const -> lookup
{
    if (!m_snapshot)
    {
        return {};
    }
    validate_key(key);
    const std::size_t slash = key.rfind('/');
    const std::string_view dir = slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
    const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
    const std::string& root = m_snapshot->root;
    if (!detail::is_node_metadata_name(name) || !(dir == root || detail::is_below(dir, root)))
    {
        return {};
    }
    auto it = m_snapshot->documents.find(key);
    return {true, it == m_snapshot->documents.end() ? nullptr : &it->second};
}

template <class S>
std::optional<read_result> consolidated_store<S>::read(std::string_view key, byte_range r,
                                                       std::uint64_t max_bytes) const
{
    const lookup l = find(key);
    if (!l.covered)
    {
        return m_inner.read(key, r, max_bytes);
    }
    if (!l.doc)
    {
        return std::nullopt;
    }
    read_result res;
    detail::copy_range(*l.doc, r, max_bytes, key, res.bytes);
    res.object_size = l.doc->size();
    res.generation = object_handle::generation;
    return res;
}

template <class S>
std::optional<object_info> consolidated_store<S>::stat(std::string_view key) const
{
    const lookup l = find(key);
    if (!l.covered)
    {
        return m_inner.stat(key);
    }
    if (!l.doc)
    {
        return std::nullopt;
    }
    return object_info{l.doc->size(), object_handle::generation};
}

template <class S>
std::optional<object_info> consolidated_store<S>::read_to(std::string_view key, byte_range r,
                                                          std::uint64_t max_bytes,
                                                          buffer& out) const requires buffered_store<S>
{
    const lookup l = find(key);
    if (!l.covered)
    {
        return m_inner.read_to(key, r, max_bytes, out);
    }
    if (!l.doc)
    {
        return std::nullopt;
    }
    detail::copy_range(*l.doc, r, max_bytes, key, out);
    return object_info{l.doc->size(), object_handle::generation};
}

template <class S>
std::optional<object_info> consolidated_store<S>::read_into(
    std::string_view key, std::uint64_t offset, mutable_byte_view dest) const requires direct_store<S>
{
    const lookup l = find(key);
    if (!l.covered)
    {
        return m_inner.read_into(key, offset, dest);
    }
    if (!l.doc)
    {
        return std::nullopt;
    }
    const auto [begin, end] = resolve_range(byte_range::of(offset, dest.size()), l.doc->size());
    if (end > begin)
    {
        std::memcpy(dest.data(), l.doc->data() + begin, static_cast<std::size_t>(end - begin));
    }
    return object_info{l.doc->size(), object_handle::generation};
}

template <class S>
auto consolidated_store<S>::open_object(std::string_view key) const -> std::optional<object_handle>
requires object_store<S>
{
    const lookup l = find(key);
    if (l.covered)
    {
        return l.doc ? std::optional<object_handle>(object_handle(m_snapshot, l.doc, key)) : std::nullopt;
    }
    auto h = m_inner.open_object(key);
    return h ? std::optional<object_handle>(object_handle(std::move(*h))) : std::nullopt;
}

template <class S>
auto consolidated_store<S>::open_object_and_read(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                                 buffer& out) const -> std::optional<object_handle>
requires open_reading_store<S>
{
    const lookup l = find(key);
    if (l.covered)
    {
        if (!l.doc)
        {
            return std::nullopt;
        }
        object_handle h(m_snapshot, l.doc, key);
        h.read_to(r, max_bytes, out);
        return h;
    }
    auto h = m_inner.open_object_and_read(key, r, max_bytes, out);
    return h ? std::optional<object_handle>(object_handle(std::move(*h))) : std::nullopt;
}

template <class S>
void consolidated_store<S>::throw_not_listable(std::string_view prefix)
{
    store_error e(store_errc::not_listable,
                  "the store cannot list keys and no consolidated metadata describes this prefix");
    e.with_key(prefix.empty() ? std::string_view("/") : prefix);
    throw e;
}

template <class S>
std::vector<std::string> consolidated_store<S>::list(std::string_view prefix) const
{
    if constexpr (!listable_store<S>)
    {
        throw_not_listable(prefix);
    }
    else
    {
        if (!detail::can_list(m_inner))
        {
            throw_not_listable(prefix);
        }
        std::vector<std::string> out = m_inner.list(prefix);
        if (m_snapshot)
        {
            for (const auto& [key, doc] : m_snapshot->documents)
            {
                if (detail::is_below(key, prefix))
                {
                    out.push_back(key);
                }
            }
            std::sort(out.begin(), out.end());
            out.erase(std::unique(out.begin(), out.end()), out.end());
        }
        return out;
    }
}

template <class S>
std::vector<std::string> consolidated_store<S>::list_dir(std::string_view prefix) const
{
    if (!prefix.empty())
    {
        validate_key(prefix);
    }
    std::set<std::string> names;
    // The snapshot knows the nodes at and below its root, and the path leading to it.
    const bool covered =
        m_snapshot && (prefix == m_snapshot->root || detail::is_below(prefix, m_snapshot->root) ||
                       detail::is_below(m_snapshot->root, prefix));
    if (covered)
    {
        const std::size_t skip = prefix.empty() ? 0 : prefix.size() + 1;
        for (const auto& [key, doc] : m_snapshot->documents)
        {
            if (detail::is_below(key, prefix))
            {
                const std::string_view rest = std::string_view(key).substr(skip);
                names.emplace(rest.substr(0, rest.find('/')));
            }
        }
    }
    if (detail::can_list(m_inner))
    {
        if constexpr (listable_store<S>)
        {
            for (auto& n : m_inner.list_dir(prefix))
            {
                names.insert(std::move(n));
            }
        }
    }
    else if (!covered)
    {
        throw_not_listable(prefix);
    }
    return {names.begin(), names.end()};
}

} // namespace zarrxt
