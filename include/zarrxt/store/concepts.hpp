/** @file store/concepts.hpp
 *  What a store is: a map from validated string keys to byte strings, with byte-range reads.
 *
 *  Absent keys are an empty std::optional, never an error. `read` returns the requested range
 *  (clamped to the object), the object's total size and a generation (it changes whenever the
 *  object is rewritten; size + mtime on files) so callers can validate offsets against the real
 *  size and cache what they parsed. Writes (`set`) are atomic: readers see the old or the new
 *  object, never a mixture. See docs/concepts/store.md.
 */
#pragma once

#include "../detail/buffer.hpp"
#include "../error.hpp"

#include <concepts>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// A range of an object: [offset, offset + length), or its last `length` bytes.
struct byte_range
{
    static constexpr std::uint64_t to_end = std::numeric_limits<std::uint64_t>::max();

    std::uint64_t offset = 0;
    std::uint64_t length = to_end;
    bool suffix = false;

    static constexpr byte_range all() noexcept { return {}; }
    static constexpr byte_range of(std::uint64_t offset, std::uint64_t length) noexcept
    {
        return {offset, length, false};
    }
    static constexpr byte_range last(std::uint64_t length) noexcept { return {0, length, true}; }

    bool is_all() const noexcept { return !suffix && offset == 0 && length == to_end; }
};

struct read_result
{
    buffer bytes;
    std::uint64_t object_size = 0; ///< total size of the object, not of the range
    std::uint64_t generation = 0;  ///< changes whenever the object is replaced
};

struct object_info
{
    std::uint64_t size = 0;
    std::uint64_t generation = 0;
};

/// Resolve a range against an object size: the [begin, end) actually served (clamped).
inline std::pair<std::uint64_t, std::uint64_t> resolve_range(const byte_range& r, std::uint64_t size) noexcept
{
    if (r.suffix)
    {
        const std::uint64_t n = r.length > size ? size : r.length;
        return {size - n, size};
    }
    const std::uint64_t begin = r.offset > size ? size : r.offset;
    const std::uint64_t end = r.length > size - begin ? size : begin + r.length;
    return {begin, end};
}

/// resolve_range(), refusing more than `max_bytes` (limit.1 naming the key and the range) before
/// the caller allocates anything for it.
inline std::pair<std::uint64_t, std::uint64_t> resolve_capped_range(const byte_range& r, std::uint64_t size,
                                                                    std::uint64_t max_bytes,
                                                                    std::string_view key)
{
    const auto [begin, end] = resolve_range(r, size);
    if (end - begin > max_bytes)
    {
        limit_exceeded e("max_chunk_bytes", end - begin, max_bytes);
        e.with_key(key);
        e.with_range(begin, end - begin);
        throw e;
    }
    return {begin, end};
}

/// An object handle's read_ranges() for a store that serves ranges one at a time.
template <class Handle>
void read_ranges_one_by_one(const Handle& h, std::span<const byte_range> ranges, std::uint64_t max_bytes,
                            std::span<buffer> out)
{
    for (std::size_t i = 0; i < ranges.size() && i < out.size(); ++i)
    {
        h.read_to(ranges[i], max_bytes, out[i]);
    }
}

template <class S>
concept readable_store = requires(const S& s, std::string_view key, byte_range r, std::uint64_t max)
{
    {
        s.read(key, r, max)
        } -> std::same_as<std::optional<read_result>>;
    {
        s.stat(key)
        } -> std::same_as<std::optional<object_info>>;
};

/// Can store objects: `set` replaces the whole object atomically (readers see old or new).
template <class S>
concept writable_store = requires(S& s, std::string_view key, byte_view data)
{
    {
        s.set(key, data)
        } -> std::same_as<void>;
};

/// Can remove objects: `erase` returns whether the key existed.
template <class S>
concept erasable_store = requires(S& s, std::string_view key)
{
    {
        s.erase(key)
        } -> std::same_as<bool>;
};

/// Offers an RAII guard serialising read-modify-write of one key (sharded partial writes).
template <class S>
concept lockable_store = requires(S& s, std::string_view key)
{
    s.lock_key(key);
};

/// Can enumerate keys under a prefix (groups, whole-array erase, consolidation).
template <class S>
concept listable_store = requires(const S& s, std::string_view prefix)
{
    {
        s.list(prefix)
        } -> std::same_as<std::vector<std::string>>;
    {
        s.list_dir(prefix)
        } -> std::same_as<std::vector<std::string>>;
};

/// An open object pinned to one generation: every range read through it comes from the same
/// version of the object, however often the key is replaced meanwhile (a file stays open on
/// its old inode; a memory object is shared). Reads are const and may run on many threads.
template <class H>
concept object_handle = std::movable<H> && requires(const H& h, byte_range r, std::uint64_t max, buffer& out,
                                                    std::span<const byte_range> rs, std::span<buffer> outs)
{
    {
        h.info()
        } -> std::same_as<object_info>;
    {
        h.read_to(r, max, out)
        } -> std::same_as<void>;
    {
        h.read_ranges(rs, max, outs)
        } -> std::same_as<void>;
};

/// Optional for a handle: `read_into(offset, dest)` reads bytes [offset, offset + dest.size()),
/// which lie inside the object, straight into caller memory (a raw chunk lands in the destination
/// with one pread).
template <class H>
concept direct_handle = object_handle<H> && requires(const H& h, std::uint64_t offset, mutable_byte_view dest)
{
    {
        h.read_into(offset, dest)
        } -> std::same_as<void>;
};

/// Optional for a handle: `prefetch(ranges)` is told, all at once, the ranges a reader will ask for
/// next (the batches of a read plan). A store that serves requests concurrently or asynchronously
/// (many requests in flight on one connection pool) starts them here and answers the later
/// `read_to` / `read_into` of each range from what arrived, so the readers' blocking calls wait for
/// their own range only, never one round trip each in turn. A hint: a handle may ignore it.
template <class H>
concept prefetching_handle = object_handle<H> && requires(const H& h, std::span<const byte_range> rs)
{
    {
        h.prefetch(rs)
        } -> std::same_as<void>;
};

/// Optional: `open_object(key)` hands out an object handle (nullopt when the key is absent), so
/// a reader of many ranges of one object (a shard) opens it once and checks its generation once.
template <class S>
concept object_store = requires(const S& s, std::string_view key)
{
    {
        s.open_object(key)
        } -> std::same_as<std::optional<typename S::object_handle>>;
}
&&object_handle<typename S::object_handle>;

/// Optional: `open_object_and_read(key, r, max, out)` opens a handle and reads its first range in
/// one request (nullopt when the key is absent): a remote store then needs no HEAD before the
/// first range of an object, and a whole chunk read through a handle costs one request.
template <class S>
concept open_reading_store = object_store<S> &&
    requires(const S& s, std::string_view key, byte_range r, std::uint64_t max, buffer& out)
{
    {
        s.open_object_and_read(key, r, max, out)
        } -> std::same_as<std::optional<typename S::object_handle>>;
};

/// Optional: `prefetch_objects(keys, max)` is told, all at once, the objects a reader will read
/// whole next (the chunks of a region read, in order); a store with many requests in flight starts
/// them now and answers the later whole reads of those keys (read_to / open_object_and_read of
/// byte_range::all()) from what arrived, so workers wait for their own chunk only, never one round
/// trip each in turn. `cancel_prefetch(keys)` drops what was not read (a read that failed midway):
/// nothing announced outlives the operation. A hint: a store may ignore it.
template <class S>
concept object_prefetching_store = requires(const S& s, std::span<const std::string> keys, std::uint64_t max)
{
    s.prefetch_objects(keys, max);
    s.cancel_prefetch(keys);
};

/// Optional: a store whose writes are requests to a server keeps many of them in flight.
/// `post(key, bytes)` starts the write of a whole object and returns a ticket at once (the store
/// keeps the bytes until the write is done, for its retries); `ticket.wait()` waits for that write
/// and throws what it failed with. `wait_posted(key)` waits for a write of `key` still in flight
/// (errors are the poster's to report): a writer that reads the key's current object under
/// lock_key calls it first, so a read-modify-write never starts from the version before a write
/// this process has already sent. A write kernel posts every whole object of one operation and
/// waits for all of them before it returns, so a write that returned is a write that is stored.
template <class S>
concept posting_store = requires(S& s, std::string_view key, buffer bytes)
{
    {
        s.post(key, std::move(bytes))
        } -> std::movable;
    s.post(key, std::move(bytes)).wait();
    s.wait_posted(key);
};

/// A store whose object handles read straight into caller memory.
template <class S>
concept direct_object_store = object_store<S> && direct_handle<typename S::object_handle>;

/// A store's read_to() through its object handle: open, read the one range, close.
template <object_store S>
std::optional<object_info> read_to_via_handle(const S& s, std::string_view key, byte_range r,
                                              std::uint64_t max_bytes, buffer& out)
{
    auto h = s.open_object(key);
    if (!h)
    {
        return std::nullopt;
    }
    h->read_to(r, max_bytes, out);
    return h->info();
}

/// Optional: read into a caller's reusable buffer (no allocation per chunk once it is large enough).
template <class S>
concept buffered_store = requires(const S& s, std::string_view key, byte_range r, std::uint64_t max,
                                  buffer& out)
{
    {
        s.read_to(key, r, max, out)
        } -> std::same_as<std::optional<object_info>>;
};

/// Optional: read straight into caller memory (a raw chunk lands in the destination with one pread).
template <class S>
concept direct_store = requires(const S& s, std::string_view key, std::uint64_t offset,
                                mutable_byte_view dest)
{
    {
        s.read_into(key, offset, dest)
        } -> std::same_as<std::optional<object_info>>;
};

/// A new version of one object being written piece by piece. Nothing is visible under the key
/// until commit(), which publishes the whole object atomically (readers see the old object or the
/// new one); a writer destroyed without commit() leaves the key untouched. write_at() overwrites
/// bytes already appended (a shard index reserved at the start and filled in last).
template <class W>
concept object_writer = std::movable<W> && requires(W& w, byte_view data, std::uint64_t offset)
{
    w.append(data);
    w.write_at(offset, data);
    {
        w.size()
        } -> std::convertible_to<std::uint64_t>;
    w.commit();
};

/// Optional: `begin_write(key)` streams a new object to the store (a shard written inner chunk by
/// inner chunk in bounded memory) instead of handing set() the whole object at once.
template <class S>
concept streaming_store = requires(S& s, std::string_view key)
{
    {
        s.begin_write(key)
        } -> object_writer;
};

/// What zarrxt::array needs from its Store policy to open and read an array: a read-only store
/// (a read-only mount, a snapshot, an HTTP server) is enough.
template <class S>
concept store_policy = std::copy_constructible<S> && readable_store<S>;

/// What creating and writing an array needs on top of store_policy: set and erase objects, lock a
/// shard for read-modify-write, and list (create with overwrite erases the old node's keys).
template <class S>
concept array_writable_store =
    store_policy<S> && writable_store<S> && erasable_store<S> && lockable_store<S> && listable_store<S>;

/// read() for a store that implements read_to(): the result owns a fresh buffer.
template <class S>
std::optional<read_result> read_via_read_to(const S& s, std::string_view key, byte_range r,
                                            std::uint64_t max_bytes)
{
    read_result res;
    auto info = s.read_to(key, r, max_bytes, res.bytes);
    if (!info)
    {
        return std::nullopt;
    }
    res.object_size = info->size;
    res.generation = info->generation;
    return res;
}

/// Whole-object read without a size cap (convenience for small documents and tests).
template <readable_store S>
std::optional<buffer> get(const S& s, std::string_view key)
{
    auto r = s.read(key, byte_range::all(), std::numeric_limits<std::uint64_t>::max());
    if (!r)
    {
        return std::nullopt;
    }
    return std::move(r->bytes);
}

namespace detail
{

/// In-process per-key locks shared by all copies of one store handle: a fixed table of mutexes
/// indexed by key hash (a collision only serialises two unrelated keys; it never deadlocks because
/// a caller holds one key lock at a time).
struct key_lock_table
{
    static constexpr std::size_t stripes = 256;
    std::mutex m[stripes];

    static std::size_t stripe_of(std::string_view key) noexcept
    {
        return std::hash<std::string_view>{}(key) % stripes;
    }

    std::unique_lock<std::mutex> lock(std::string_view key)
    {
        return std::unique_lock<std::mutex>(m[stripe_of(key)]);
    }
};

} // namespace detail
} // namespace zarrxt
