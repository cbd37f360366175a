/** @file store/zip_store.hpp
 *  `zip_store<Inner>`: a read-only store over a Zarr hierarchy inside a zip archive, which is
 *  itself one object of any readable store: a local file (`filesystem_store`), an HTTP URL, an S3
 *  object. Written by zip_writer (store/zip_writer.hpp), zarr-python's ZipStore, `zip -r`, ...
 *
 *  Only byte ranges of the archive are read, never the whole of it: the end records and, for a
 *  small archive, the central directory come from one suffix read; each entry's local header once
 *  (its data offset is then remembered); a STORED entry's ranges map onto ranges of the archive, so
 *  a shard inside a zip is read index first and then only the inner chunks a region needs.
 *  A DEFLATE entry is inflated whole (bounded by its declared size) and checked against its CRC-32;
 *  so is every STORED entry read whole.
 *
 *  The archive is opened once: a later read that finds another version of it (another size or
 *  generation from the inner store) is store.6, never a mix of two directories. Hostile archives
 *  (entries outside the archive, lying counts, ZIP64 records out of place, names that are not valid
 *  keys) are store.10; encryption, split archives and methods other than STORED and DEFLATE are
 *  store.11. See docs/concepts/store.md.
 */
#pragma once

#include "../detail/deflate.hpp"
#include "../detail/zip_format.hpp"
#include "../limits.hpp"
#include "concepts.hpp"
#include "key.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

struct zip_options
{
    /// A node path inside the archive whose keys the store serves ("" is the archive's root): the
    /// `inner/path` of `x.zarr.zip/inner/path`.
    std::string root;
    /// The central directory is read in one piece: refused (limit.1) beyond this.
    std::uint64_t max_directory_bytes = std::uint64_t{256} << 20;
    /// A part of a DEFLATE entry costs inflating all of it: refused (limit.1) beyond this size.
    std::uint64_t max_inflated_entry_bytes = std::uint64_t{1} << 30;
};

template <class Inner>
requires store_policy<Inner>
class zip_store
{
public:
    /// Opens the archive `archive_key` of `inner` and reads its central directory.
    zip_store(Inner inner, std::string archive_key, zip_options options = {});

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return read_via_read_to(*this, key, r, max_bytes);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const;
    std::optional<object_info> stat(std::string_view key) const;
    std::vector<std::string> list(std::string_view prefix) const;
    std::vector<std::string> list_dir(std::string_view prefix) const;

    /// Number of files in the archive (all of them, also those outside `root`).
    std::size_t entry_count() const noexcept { return m_state->entries.size(); }
    const std::string& archive_key() const noexcept { return m_state->key; }
    std::uint64_t archive_size() const noexcept { return m_state->size; }
    const Inner& inner() const noexcept { return m_state->inner; }

private:
    using entry = detail::zip::entry;
    struct state
    {
        Inner inner;
        std::string key;
        std::string root; ///< "" or "a/b/"
        zip_options options;
        std::uint64_t size = 0;
        std::uint64_t generation = 0;
        std::uint64_t directory_offset = 0;
        std::vector<entry> entries;
        std::map<std::string, std::size_t, std::less<>> by_name; ///< a name given twice: the last one
        /// Where each entry's data starts, once its local header was read (0: not yet; a header is
        /// at least 30 bytes, so no data starts at 0).
        std::unique_ptr<std::atomic<std::uint64_t>[]> data_offsets;

        state(Inner i, std::string k, zip_options o)
            : inner(std::move(i))
            , key(std::move(k))
            , options(std::move(o))
        {
        }
    };

    const entry* find(std::string_view key, std::size_t& index) const;
    std::uint64_t entry_generation(std::size_t index) const noexcept
    {
        return m_state->generation ^ ((index + 1) * 0x9E3779B97F4A7C15ull);
    }
    std::string entry_key(const entry& e) const { return m_state->key + ":" + e.name; }
    /// Exactly [offset, offset + length) of the archive into `out`, from the version opened.
    void fetch(std::uint64_t offset, std::uint64_t length, buffer& out) const;
    /// The entry's data, whole: its local header and data in one read when the data offset is not
    /// known yet (the local extra field may be longer than the central one; then a second read).
    void fetch_entry(std::size_t index, const entry& e, buffer& out) const;
    std::uint64_t data_offset(std::size_t index, const entry& e) const;
    /// The data offset the local header at the start of `header` gives, checked and remembered.
    std::uint64_t remember_data_offset(std::size_t index, const entry& e, byte_view header) const;
    void check_crc(const entry& e, byte_view data) const;

    template <class F>
    void for_each_below(std::string_view prefix, F&& f) const;

    std::shared_ptr<const state> m_state;
};

/*****************
 * implementation *
 *****************/

template <class Inner>
requires store_policy<Inner> zip_store<Inner>::zip_store(Inner inner, std::string archive_key,
                                                         zip_options options)
{
    namespace z = detail::zip;
    validate_key(archive_key);
    auto s = std::make_shared<state>(std::move(inner), std::move(archive_key), std::move(options));
    const std::string root = normalize_path(s->options.root);
    if (!root.empty())
    {
        validate_key(root);
        s->root = root + "/";
    }
    const std::uint64_t want = z::max_end_search + z::locator64_size + z::end64_size;
    auto tail = s->inner.read(s->key, byte_range::last(want), want);
    if (!tail)
    {
        store_error e(store_errc::archive, "no zip archive at " + s->key);
        e.with_key(s->key);
        throw e;
    }
    s->size = tail->object_size;
    s->generation = tail->generation;
    if (tail->bytes.size() != std::min<std::uint64_t>(want, s->size))
    {
        z::malformed(s->key, "the store answered " + std::to_string(tail->bytes.size()) +
                                 " bytes for its last " +
                                 std::to_string(std::min<std::uint64_t>(want, s->size)));
    }
    m_state = s; // fetch() below needs it (size and generation)
    const std::uint64_t tail_start = s->size - tail->bytes.size();
    auto read_at = [&](std::uint64_t offset, std::uint64_t length)
    {
        buffer b;
        if (offset >= tail_start && offset - tail_start <= tail->bytes.size() &&
            length <= tail->bytes.size() - (offset - tail_start))
        {
            b = buffer::copy_of(tail->bytes.view().subspan(static_cast<std::size_t>(offset - tail_start),
                                                           static_cast<std::size_t>(length)));
        }
        else
        {
            fetch(offset, length, b);
        }
        return b;
    };
    const std::uint64_t end = z::find_end_record(tail->bytes.view(), s->size, s->key);
    const auto loc = z::locate_directory(
        end, tail->bytes.view().subspan(static_cast<std::size_t>(end - tail_start), z::end_size), s->size,
        read_at, s->key);
    if (loc.size > s->options.max_directory_bytes)
    {
        limit_exceeded e("max_directory_bytes", loc.size, s->options.max_directory_bytes);
        e.with_key(s->key);
        throw e;
    }
    const buffer dir = read_at(loc.offset, loc.size);
    s->directory_offset = loc.offset;
    s->entries = z::parse_directory(dir.view(), loc, s->key);
    for (std::size_t i = 0; i < s->entries.size(); ++i)
    {
        const entry& e = s->entries[i];
        if ((e.flags & (z::flag_encrypted | z::flag_strong_encryption)) != 0)
        {
            z::unsupported(s->key, "entry \"" + e.name + "\" is encrypted");
        }
        if (e.method != z::method_stored && e.method != z::method_deflate)
        {
            z::unsupported(s->key, "entry \"" + e.name + "\" uses compression method " +
                                       std::to_string(e.method) + " (STORED and DEFLATE are read)");
        }
        if (e.method == z::method_stored && e.compressed_size != e.size)
        {
            z::malformed(s->key, "STORED entry \"" + e.name + "\" has " + std::to_string(e.compressed_size) +
                                     " stored bytes for " + std::to_string(e.size));
        }
        try
        {
            validate_key(e.name);
        }
        catch (const store_error& bad)
        {
            z::malformed(s->key, "entry name \"" + e.name + "\" is not a valid key: " + bad.what());
        }
        s->by_name[e.name] = i;
    }
    s->data_offsets = std::make_unique<std::atomic<std::uint64_t>[]>(s->entries.size());
}

template <class Inner>
requires store_policy<Inner>
auto zip_store<Inner>::find(std::string_view key, std::size_t& index) const -> const entry*
{
    validate_key(key);
    const auto& s = *m_state;
    auto it = s.root.empty() ? s.by_name.find(key) : s.by_name.find(s.root + std::string(key));
    if (it == s.by_name.end())
    {
        return nullptr;
    }
    index = it->second;
    return &s.entries[index];
}

template <class Inner>
requires store_policy<Inner>
void zip_store<Inner>::fetch(std::uint64_t offset, std::uint64_t length, buffer& out) const
{
    const auto& s = *m_state;
    const auto range = byte_range::of(offset, length);
    std::optional<object_info> info;
    if constexpr (buffered_store<Inner>)
    {
        info = s.inner.read_to(s.key, range, length, out);
    }
    else
    {
        auto r = s.inner.read(s.key, range, length);
        if (r)
        {
            info = object_info{r->object_size, r->generation};
            out = std::move(r->bytes);
        }
    }
    if (!info || info->size != s.size || info->generation != s.generation)
    {
        store_error e(store_errc::changed,
                      "the zip archive " + s.key + " was replaced or removed while open: open it again");
        e.with_key(s.key);
        throw e;
    }
    if (out.size() != length)
    {
        detail::zip::malformed(s.key, "read " + std::to_string(out.size()) + " bytes at offset " +
                                          std::to_string(offset) + " instead of " + std::to_string(length));
    }
}

template <class Inner>
requires store_policy<Inner> std::uint64_t zip_store<Inner>::data_offset(std::size_t index, const entry& e)
const
{
    namespace z = detail::zip;
    auto& cached = m_state->data_offsets[index];
    if (const auto known = cached.load(std::memory_order_relaxed); known != 0)
    {
        return known;
    }
    buffer header;
    fetch(e.local_offset, z::local_header_size, header);
    return remember_data_offset(index, e, header.view());
}

template <class Inner>
requires store_policy<Inner> std::uint64_t zip_store<Inner>::remember_data_offset(std::size_t index,
                                                                                  const entry& e,
                                                                                  byte_view header)
const
{
    namespace z = detail::zip;
    const std::uint64_t at = e.local_offset + z::local_header_length(header, e, m_state->key);
    if (at > m_state->directory_offset || e.compressed_size > m_state->directory_offset - at)
    {
        z::malformed(m_state->key, "entry \"" + e.name + "\": its data runs into the central directory");
    }
    m_state->data_offsets[index].store(at, std::memory_order_relaxed);
    return at;
}

template <class Inner>
requires store_policy<Inner>
void zip_store<Inner>::fetch_entry(std::size_t index, const entry& e, buffer& out) const
{
    namespace z = detail::zip;
    if (const auto known = m_state->data_offsets[index].load(std::memory_order_relaxed); known != 0)
    {
        fetch(known, e.compressed_size, out);
        return;
    }
    // Header and data in one read, guessing the local extra field is no longer than 64 bytes more
    // than the name alone needs; parsing tells whether the guess held.
    const std::uint64_t room = m_state->directory_offset - e.local_offset;
    const std::uint64_t guess =
        std::min<std::uint64_t>(room, z::local_header_size + e.name.size() + 64 + e.compressed_size);
    fetch(e.local_offset, guess, out);
    const std::uint64_t at = remember_data_offset(index, e, out.view());
    const std::uint64_t header = at - e.local_offset;
    if (header + e.compressed_size > out.size())
    {
        fetch(at, e.compressed_size, out); // a long local extra field: read the data alone
        return;
    }
    if (e.compressed_size != 0)
    {
        std::memmove(out.data(), out.data() + static_cast<std::size_t>(header),
                     static_cast<std::size_t>(e.compressed_size));
    }
    out.resize(static_cast<std::size_t>(e.compressed_size));
}

template <class Inner>
requires store_policy<Inner>
void zip_store<Inner>::check_crc(const entry& e, byte_view data) const
{
    const std::uint32_t crc = detail::zip::crc32(0, data);
    if (crc != e.crc)
    {
        codec_error err(codec_errc::checksum_mismatch, "zip",
                        "entry \"" + e.name + "\" of " + m_state->key + ": CRC-32 " + std::to_string(crc) +
                            " does not match the directory's " + std::to_string(e.crc));
        err.with_key(entry_key(e));
        throw err;
    }
}

template <class Inner>
requires store_policy<Inner> std::optional<object_info> zip_store<Inner>::read_to(std::string_view key,
                                                                                  byte_range r,
                                                                                  std::uint64_t max_bytes,
                                                                                  buffer& out)
const
{
    namespace z = detail::zip;
    std::size_t index = 0;
    const entry* e = find(key, index);
    if (e == nullptr)
    {
        return std::nullopt;
    }
    const auto [begin, end] = resolve_capped_range(r, e->size, max_bytes, key);
    const bool whole = begin == 0 && end == e->size;
    if (e->method == z::method_stored)
    {
        if (whole)
        {
            fetch_entry(index, *e, out);
            check_crc(*e, out.view());
        }
        else
        {
            fetch(data_offset(index, *e) + begin, end - begin, out);
        }
        return object_info{e->size, entry_generation(index)};
    }
    // DEFLATE: the stream is inflated whole into exactly its declared size (a bomb that inflates
    // to more is codec.2), then checked against the CRC.
    if (!whole && e->size > m_state->options.max_inflated_entry_bytes)
    {
        limit_exceeded err("max_inflated_entry_bytes", e->size, m_state->options.max_inflated_entry_bytes);
        err.with_key(entry_key(*e));
        throw err;
    }
    buffer compressed;
    fetch_entry(index, *e, compressed);
    buffer inflated;
    buffer& dest = whole ? out : inflated;
    dest.resize_discard(static_cast<std::size_t>(e->size));
    try
    {
        detail::inflate_exact_into(detail::deflate_container::raw, compressed.view(), dest.mutable_view(),
                                   "zip");
    }
    catch (error& err)
    {
        err.with_key(entry_key(*e));
        throw;
    }
    check_crc(*e, dest.view());
    if (!whole)
    {
        out.resize_discard(static_cast<std::size_t>(end - begin));
        if (end > begin)
        {
            std::memcpy(out.data(), inflated.data() + begin, static_cast<std::size_t>(end - begin));
        }
    }
    return object_info{e->size, entry_generation(index)};
}

template <class Inner>
requires store_policy<Inner> std::optional<object_info> zip_store<Inner>::stat(std::string_view key)
const
{
    std::size_t index = 0;
    const entry* e = find(key, index);
    if (e == nullptr)
    {
        return std::nullopt;
    }
    return object_info{e->size, entry_generation(index)};
}

template <class Inner>
requires store_policy<Inner>
template <class F>
void zip_store<Inner>::for_each_below(std::string_view prefix, F&& f) const
{
    // Names strictly below root + prefix, in order; `f(key relative to root, rest below prefix)`.
    const auto& s = *m_state;
    std::string p = s.root + normalize_path(prefix);
    if (!p.empty() && p.back() != '/')
    {
        p += '/';
    }
    for (auto it = s.by_name.lower_bound(p); it != s.by_name.end(); ++it)
    {
        if (it->first.compare(0, p.size(), p) != 0)
        {
            break;
        }
        f(std::string_view(it->first).substr(s.root.size()), std::string_view(it->first).substr(p.size()));
    }
}

template <class Inner>
requires store_policy<Inner> std::vector<std::string> zip_store<Inner>::list(std::string_view prefix)
const
{
    std::vector<std::string> out;
    for_each_below(prefix, [&](std::string_view key, std::string_view) { out.emplace_back(key); });
    return out;
}

template <class Inner>
requires store_policy<Inner> std::vector<std::string> zip_store<Inner>::list_dir(std::string_view prefix)
const
{
    std::set<std::string, std::less<>> names;
    for_each_below(prefix, [&](std::string_view, std::string_view rest)
                   { names.emplace(rest.substr(0, rest.find('/'))); });
    return {names.begin(), names.end()};
}

} // namespace zarrxt
