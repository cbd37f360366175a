/** @file store/kerchunk.hpp
 *  `kerchunk_store`: a read-only store over a kerchunk reference file (fsspec's
 *  ReferenceFileSystem format, versions 0 and 1), so that a NetCDF-4/HDF5, TIFF, GRIB or raw
 *  binary file indexed by kerchunk opens as a Zarr hierarchy without being converted.
 *
 *  Each key of the reference file maps to inline data (a string, "base64:..." bytes or a JSON
 *  object), to a whole object `[url]` or to a byte range `[url, offset, length]` of one. Version
 *  1's templates (`{{name}}` in URLs) and generators (`gen`: keys, URLs, offsets and lengths
 *  computed over `dimensions`) are expanded once when the store is opened; their expressions may
 *  use names, integers, + - * // % and parentheses (detail/kerchunk_refs.hpp).
 *
 *  URLs: a relative path is relative to the reference file's own location; an absolute path,
 *  file://, http(s):// and s3:// URLs are opened with the opener given (open_kerchunk in
 *  store/open_store.hpp passes `open_store`), one store per distinct directory, kept for the
 *  store's lifetime. A null URL is the default target `kerchunk_options::target` (fsspec's
 *  `target`). A range is read as a ranged read of its target; `prefetch_objects` (the fetch stage
 *  of a region read) groups the announced keys by target object and reads each group with one
 *  object handle and one batched `read_ranges` call.
 *
 *  Strict: a reference file that is not JSON, has members of the wrong type, bad base64, a key
 *  that is not a valid Zarr key (`..`, absolute) or an expression the evaluator refuses is
 *  store.12; a target that is missing or ends before a reference's range is store.13 naming the
 *  key and the range (fsspec reads a missing target as a missing chunk; here it is an error, not
 *  fill values). The reference file's size, the number of references after expansion and the
 *  bytes they hold are capped (limit.1). See docs/concepts/store.md.
 */
#pragma once

#include "../detail/kerchunk_refs.hpp"
#include "any_store.hpp"
#include "concepts.hpp"
#include "key.hpp"

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

struct kerchunk_options
{
    /// The target of references whose URL is null (fsspec's `target`): a path or URL, relative
    /// to the reference file like any other. Empty: such a reference is store.12.
    std::string target;
    /// The reference file is read and parsed whole: refused (limit.1) beyond this size.
    std::uint64_t max_reference_bytes = std::uint64_t{128} << 20;
    /// References after the generators are expanded (each costs about 100 bytes of memory).
    std::uint64_t max_refs = std::uint64_t{1} << 22;
    /// Bytes of keys, inline data and distinct URLs after expansion (templates can multiply text).
    std::uint64_t max_expanded_bytes = std::uint64_t{1} << 30;
    std::uint64_t max_json_depth = 64;
};

/// Opens the store of one directory a reference points into ("/data", "https://host/dir").
using kerchunk_opener = std::function<any_store(const std::string& directory)>;

class kerchunk_store
{
public:
    /// A store over the reference file `text`, found at `location` (its path or URL: relative
    /// target paths are relative to it); `opener` opens the directories targets live in.
    kerchunk_store(std::string_view text, std::string location, kerchunk_options options,
                   kerchunk_opener opener);

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return read_via_read_to(*this, key, r, max_bytes);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const;
    std::optional<object_info> stat(std::string_view key) const;
    std::vector<std::string> list(std::string_view prefix) const;
    std::vector<std::string> list_dir(std::string_view prefix) const;

    /// The fetch stage: the announced keys' targets read now, one handle and one batched
    /// read_ranges per target object; the later whole reads of those keys are answered from it.
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const;
    void cancel_prefetch(std::span<const std::string> keys) const;

    /// Number of references (after expansion) and the reference file's format version (0 or 1).
    std::size_t size() const noexcept { return m_state->set.refs.size(); }
    int version() const noexcept { return m_state->set.version; }
    const std::string& location() const noexcept { return m_state->location; }

private:
    using ref = detail::kerchunk::ref;
    using ref_kind = detail::kerchunk::ref_kind;
    /// Where a URL points: the directory's store (opened on first use) and the object's key in it.
    struct target
    {
        std::string url; ///< as resolved (shown in errors)
        std::string directory;
        std::string name;
    };
    struct prefetched
    {
        buffer bytes;
        object_info info;
    };
    struct state
    {
        detail::kerchunk::reference_set set;
        std::string location;
        kerchunk_options options;
        kerchunk_opener opener;
        std::uint64_t generation = 0;
        std::vector<target> targets; ///< one per set.urls entry
        std::mutex mutex;            ///< guards stores and pending
        std::map<std::string, any_store, std::less<>> stores;
        std::map<std::string, prefetched, std::less<>> pending;
    };

    const ref* find(std::string_view key) const;
    any_store store_of(const target& t) const;
    std::uint64_t generation_of(std::string_view key) const noexcept
    {
        return m_state->generation ^ (std::hash<std::string_view>{}(key)*0x9E3779B97F4A7C15ull);
    }
    /// Bytes [begin, end) of a range reference, checked to be all there.
    void fetch_range(std::string_view key, const ref& e, std::uint64_t begin, std::uint64_t end,
                     buffer& out) const;
    [[noreturn]] void missing_target(std::string_view key, const target& t) const;
    bool take_pending(std::string_view key, prefetched& p) const;

    template <class F>
    void for_each_below(std::string_view prefix, F&& f) const;

    std::shared_ptr<state> m_state;
};

namespace detail::kerchunk
{
/// A location's directory and last segment: "/d/refs.json" -> {"/d", "refs.json"},
/// "https://h/x.nc" -> {"https://h", "x.nc"}, "x.nc" -> {".", "x.nc"}, "/x.nc" -> {"/", "x.nc"}.
inline std::pair<std::string, std::string> split_location(std::string_view url)
{
    const auto slash = url.rfind('/');
    if (slash == std::string_view::npos)
    {
        return {".", std::string(url)};
    }
    std::string dir(url.substr(0, slash));
    if (dir.empty() || (dir.size() >= 3 && dir.compare(dir.size() - 3, 3, "://") == 0))
    {
        dir += '/'; // "/" itself, or "file:///x.nc" whose directory is "file:///"
    }
    return {std::move(dir), std::string(url.substr(slash + 1))};
}

/// `url` resolved against the reference file's location: relative paths join its directory.
inline std::string resolve_url(std::string_view url, std::string_view location)
{
    if (url.find("://") != std::string_view::npos || url.front() == '/')
    {
        return std::string(url);
    }
    const auto slash = location.rfind('/');
    if (slash == std::string_view::npos)
    {
        return std::string(url);
    }
    return std::string(location.substr(0, slash + 1)) + std::string(url);
}
} // namespace detail::kerchunk

/*****************
 * implementation *
 *****************/

inline kerchunk_store::kerchunk_store(std::string_view text, std::string location, kerchunk_options options,
                                      kerchunk_opener opener)
    : m_state(std::make_shared<state>())
{
    namespace k = detail::kerchunk;
    auto& s = *m_state;
    s.location = std::move(location);
    s.options = std::move(options);
    s.opener = std::move(opener);
    const auto [dir, file] = k::split_location(s.location);
    (void)dir;
    const std::string what = file.empty() ? s.location : file;
    if (text.size() > s.options.max_reference_bytes)
    {
        limit_exceeded e("max_reference_bytes", text.size(), s.options.max_reference_bytes);
        e.with_key(what);
        throw e;
    }
    s.set = k::parse_references(
        text, {s.options.max_refs, s.options.max_expanded_bytes, s.options.max_json_depth}, what);
    s.generation = std::hash<std::string_view>{}(text);
    for (const auto& u : s.set.urls)
    {
        target t;
        t.url = u ? *u : s.options.target;
        if (!t.url.empty())
        {
            t.url = k::resolve_url(t.url, s.location);
            auto [d, n] = k::split_location(t.url);
            t.directory = std::move(d);
            t.name = std::move(n);
        }
        s.targets.push_back(std::move(t));
    }
    // Every reference's target must name an object (checked once here, not at each read).
    for (const auto& [key, r] : s.set.refs)
    {
        if (r.kind == ref_kind::inline_data)
        {
            continue;
        }
        const target& t = s.targets[r.url];
        if (t.url.find('\0') != std::string::npos)
        {
            store_error e(store_errc::reference, "the reference's URL holds a NUL character");
            e.with_key(key);
            throw e;
        }
        if (t.url.empty())
        {
            store_error e(
                store_errc::reference,
                "the reference's URL is null and no default target (kerchunk_options::target) is set");
            e.with_key(key);
            throw e;
        }
        try
        {
            validate_key(t.name);
        }
        catch (const store_error&)
        {
            store_error e(store_errc::reference,
                          "the reference's URL \"" + detail::redact_url(t.url) + "\" names no file");
            e.with_key(key);
            throw e;
        }
    }
}

inline auto kerchunk_store::find(std::string_view key) const -> const ref*
{
    validate_key(key);
    const auto it = m_state->set.refs.find(key);
    return it == m_state->set.refs.end() ? nullptr : &it->second;
}

inline any_store kerchunk_store::store_of(const target& t) const
{
    std::lock_guard<std::mutex> g(m_state->mutex);
    auto it = m_state->stores.find(t.directory);
    if (it == m_state->stores.end())
    {
        it = m_state->stores.emplace(t.directory, m_state->opener(t.directory)).first;
    }
    return it->second;
}

inline void kerchunk_store::missing_target(std::string_view key, const target& t) const
{
    store_error e(store_errc::reference_target,
                  "the reference's target " + detail::redact_url(t.url) + " does not exist");
    e.with_key(key);
    throw e;
}

inline void kerchunk_store::fetch_range(std::string_view key, const ref& e, std::uint64_t begin,
                                        std::uint64_t end, buffer& out) const
{
    const target& t = m_state->targets[e.url];
    const std::uint64_t length = end - begin;
    const auto info = store_of(t).read_to(t.name, byte_range::of(e.offset + begin, length), length, out);
    if (!info)
    {
        missing_target(key, t);
    }
    if (out.size() != length)
    {
        store_error err(store_errc::reference_target,
                        "the reference's bytes " + std::to_string(e.offset) + ".." +
                            std::to_string(e.offset + e.length) + " of " + detail::redact_url(t.url) +
                            " lie beyond its end (" + std::to_string(info->size) + " bytes)");
        err.with_key(key);
        err.with_range(e.offset, e.length);
        throw err;
    }
}

inline bool kerchunk_store::take_pending(std::string_view key, prefetched& p) const
{
    std::lock_guard<std::mutex> g(m_state->mutex);
    if (m_state->pending.empty())
    {
        return false;
    }
    const auto it = m_state->pending.find(key);
    if (it == m_state->pending.end())
    {
        return false;
    }
    p = std::move(it->second);
    m_state->pending.erase(it);
    return true;
}

inline std::optional<object_info> kerchunk_store::read_to(std::string_view key, byte_range r,
                                                          std::uint64_t max_bytes, buffer& out) const
{
    const ref* e = find(key);
    if (e == nullptr)
    {
        return std::nullopt;
    }
    if (e->kind == ref_kind::inline_data)
    {
        const auto [begin, end] = resolve_capped_range(r, e->data.size(), max_bytes, key);
        out = buffer::copy_of(as_bytes(std::string_view(e->data).substr(begin, end - begin)));
        return object_info{e->data.size(), generation_of(key)};
    }
    if (prefetched p; take_pending(key, p))
    {
        const auto [begin, end] = resolve_capped_range(r, p.bytes.size(), max_bytes, key);
        if (begin == 0 && end == p.bytes.size())
        {
            out = std::move(p.bytes);
        }
        else
        {
            out = buffer::copy_of(p.bytes.view().subspan(begin, end - begin));
        }
        return p.info;
    }
    const target& t = m_state->targets[e->url];
    if (e->kind == ref_kind::whole)
    {
        const auto info = store_of(t).read_to(t.name, r, max_bytes, out);
        if (!info)
        {
            missing_target(key, t);
        }
        return object_info{info->size, generation_of(key) ^ info->generation};
    }
    const auto [begin, end] = resolve_capped_range(r, e->length, max_bytes, key);
    fetch_range(key, *e, begin, end, out);
    return object_info{e->length, generation_of(key)};
}

inline std::optional<object_info> kerchunk_store::stat(std::string_view key) const
{
    const ref* e = find(key);
    if (e == nullptr)
    {
        return std::nullopt;
    }
    switch (e->kind)
    {
        case ref_kind::inline_data:
            return object_info{e->data.size(), generation_of(key)};
        case ref_kind::range:
            return object_info{e->length, generation_of(key)};
        case ref_kind::whole:
            break;
    }
    const target& t = m_state->targets[e->url];
    const auto info = store_of(t).stat(t.name);
    if (!info)
    {
        missing_target(key, t);
    }
    return object_info{info->size, generation_of(key) ^ info->generation};
}

inline void kerchunk_store::prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const
{
    // Grouped by target URL, each group in key order: one handle and one read_ranges per object.
    std::map<std::uint32_t, std::vector<std::pair<const std::string*, const ref*>>> groups;
    for (const auto& key : keys)
    {
        const auto it = m_state->set.refs.find(key);
        if (it == m_state->set.refs.end() || it->second.kind == ref_kind::inline_data ||
            (it->second.kind == ref_kind::range && it->second.length > max_bytes))
        {
            continue; // inline, absent or too large: the read itself answers (or refuses) it
        }
        groups[it->second.url].emplace_back(&key, &it->second);
    }
    for (const auto& [url, members] : groups)
    {
        // A hint: whatever fails here (a missing target, a short one) is left to the reads of
        // those keys, which report it with their own key.
        try
        {
            const target& t = m_state->targets[url];
            const auto h = store_of(t).open_object(t.name);
            if (!h)
            {
                continue;
            }
            const object_info target_info = h->info();
            std::vector<byte_range> ranges;
            std::vector<std::size_t> which;
            for (std::size_t i = 0; i < members.size(); ++i)
            {
                const ref& e = *members[i].second;
                if (e.kind == ref_kind::whole && target_info.size > max_bytes)
                {
                    continue;
                }
                ranges.push_back(e.kind == ref_kind::whole ? byte_range::all()
                                                           : byte_range::of(e.offset, e.length));
                which.push_back(i);
            }
            std::vector<buffer> outs(ranges.size());
            h->read_ranges(ranges, max_bytes, outs);
            std::lock_guard<std::mutex> g(m_state->mutex);
            for (std::size_t j = 0; j < which.size(); ++j)
            {
                const auto& [key, e] = members[which[j]];
                if (e->kind == ref_kind::range && outs[j].size() != e->length)
                {
                    continue;
                }
                const object_info info =
                    e->kind == ref_kind::whole
                        ? object_info{outs[j].size(), generation_of(*key) ^ target_info.generation}
                        : object_info{e->length, generation_of(*key)};
                m_state->pending.insert_or_assign(*key, prefetched{std::move(outs[j]), info});
            }
        }
        catch (const error&)
        {
        }
    }
}

inline void kerchunk_store::cancel_prefetch(std::span<const std::string> keys) const
{
    std::lock_guard<std::mutex> g(m_state->mutex);
    for (const auto& key : keys)
    {
        if (m_state->pending.empty())
        {
            return;
        }
        const auto it = m_state->pending.find(key);
        if (it != m_state->pending.end())
        {
            m_state->pending.erase(it);
        }
    }
}

template <class F>
void kerchunk_store::for_each_below(std::string_view prefix, F&& f) const
{
    // Keys strictly below prefix, in order; `f(key, rest below prefix)`.
    std::string p = normalize_path(prefix);
    if (!p.empty())
    {
        p += '/';
    }
    const auto& refs = m_state->set.refs;
    for (auto it = refs.lower_bound(p); it != refs.end(); ++it)
    {
        if (it->first.compare(0, p.size(), p) != 0)
        {
            break;
        }
        f(std::string_view(it->first), std::string_view(it->first).substr(p.size()));
    }
}

inline std::vector<std::string> kerchunk_store::list(std::string_view prefix) const
{
    std::vector<std::string> out;
    for_each_below(prefix, [&](std::string_view key, std::string_view) { out.emplace_back(key); });
    return out;
}

inline std::vector<std::string> kerchunk_store::list_dir(std::string_view prefix) const
{
    std::set<std::string, std::less<>> names;
    for_each_below(prefix, [&](std::string_view, std::string_view rest)
                   { names.emplace(rest.substr(0, rest.find('/'))); });
    return {names.begin(), names.end()};
}

static_assert(store_policy<kerchunk_store> && listable_store<kerchunk_store> &&
              buffered_store<kerchunk_store> && object_prefetching_store<kerchunk_store>);
static_assert(!writable_store<kerchunk_store>, "kerchunk_store is read-only");

} // namespace zarrxt
