/** @file kernel/io.hpp
 *  The untyped I/O surfaces the read and write paths share with the sharding codec:
 *  - `range_reader`: byte ranges of one object (a store key, a byte range inside a parent object
 *    for nested shards, or bytes already in memory);
 *  - `object_io`: read-modify-write access to one key (shard writes): the object as it is, read
 *    through one handle, and `object_output`, its new version streamed to the store;
 *  - `piece_sink`: where decoded (inner) chunks go, in the coordinates of the chunk being read;
 *  - `read_context` / `write_context`: limits, index cache, counters and scratch of one worker.
 *  These are virtual interfaces: they are crossed once per chunk or range, never per element.
 */
#pragma once

#include "../cache/index_cache.hpp"
#include "../codec/concepts.hpp"
#include "../corruption.hpp"
#include "../detail/small_vector.hpp"
#include "../io_counters.hpp"
#include "../limits.hpp"
#include "../store/concepts.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>

namespace zarrxt
{

/// An axis-aligned box: `offset` and `extent` per axis.
struct box
{
    dims offset;
    dims extent;

    std::uint64_t elements() const noexcept
    {
        std::uint64_t n = 1;
        for (auto e : extent)
        {
            n *= e;
        }
        return n;
    }
};

/// The part of `b` inside the block of `extent` at `origin` (both in the same coordinates), in the
/// block's own coordinates. Where they do not meet, the result has no elements. This is the one
/// place the kernels and the sharding codec intersect a request with a chunk, an inner chunk or
/// the array's bounds.
inline box clip(const box& b, const dims& origin, const dims& extent)
{
    box r{dims(origin.size()), dims(origin.size())};
    for (std::size_t d = 0; d < origin.size(); ++d)
    {
        const std::uint64_t lo = std::max(b.offset[d], origin[d]);
        const std::uint64_t hi = std::min(b.offset[d] + b.extent[d], origin[d] + extent[d]);
        r.offset[d] = lo - origin[d];
        r.extent[d] = hi > lo ? hi - lo : 0;
    }
    return r;
}

/// A typed region (any offset/extent arrays) as an untyped box, what codecs and sinks take.
template <class Region>
box box_of(const Region& r)
{
    box b{dims(r.offset.size()), dims(r.offset.size())};
    for (std::size_t d = 0; d < r.offset.size(); ++d)
    {
        b.offset[d] = r.offset[d];
        b.extent[d] = r.extent[d];
    }
    return b;
}

class range_reader
{
public:
    virtual ~range_reader() = default;
    /// Bytes of the object, relative to its start; nullopt when the object does not exist.
    virtual std::optional<read_result> read(byte_range r, std::uint64_t max_bytes) = 0;
    /// Like read(), into a reusable buffer (no allocation once it is large enough).
    virtual std::optional<object_info> read_to(byte_range r, std::uint64_t max_bytes, buffer& out)
    {
        auto res = read(r, max_bytes);
        if (!res)
        {
            return std::nullopt;
        }
        out = std::move(res->bytes);
        return object_info{res->object_size, res->generation};
    }
    /// Bytes [offset, offset + dest.size()) straight into caller memory (one pread for a file).
    /// The range must lie inside the object; a caller compares the returned size with the size it
    /// expected before trusting `dest`. nullopt when the object does not exist.
    virtual std::optional<object_info> read_into(std::uint64_t offset, mutable_byte_view dest)
    {
        buffer tmp;
        auto info =
            read_to(byte_range::of(offset, dest.size()), std::max<std::uint64_t>(dest.size(), 1), tmp);
        if (info && tmp.size() == dest.size() && !dest.empty())
        {
            std::memcpy(dest.data(), tmp.data(), dest.size());
        }
        return info;
    }
    /// Size and generation without reading.
    virtual std::optional<object_info> stat() = 0;
    /// The ranges about to be read (a plan's batches), all at once, before the first of them is;
    /// a store that keeps many requests in flight starts them here (store/concepts.hpp,
    /// prefetching_handle). A hint: the default ignores it, and every range is still read.
    virtual void will_read(std::span<const byte_range> ranges) { (void)ranges; }
    /// The store key (for error messages).
    virtual const std::string& key() const = 0;
    /// The identity of this object for caches (differs from key() for nested shards).
    virtual const std::string& cache_key() const { return key(); }
};

/// A key of a typed store. A store that hands out object handles is opened once, on first use,
/// and every range is then read from that one handle (one open and one generation per shard
/// read, however many ranges); other stores are asked once per range. After the first read()
/// or stat() returned, reads may come from several threads at once.
template <class Store>
class store_reader final : public range_reader
{
public:
    store_reader(const Store& s, std::string key) : m_store(s), m_key(std::move(key)) {}
    std::optional<read_result> read(byte_range r, std::uint64_t max_bytes) override
    {
        if constexpr (object_store<Store>)
        {
            read_result res;
            const auto info = read_to(r, max_bytes, res.bytes); // through the one handle
            if (!info)
            {
                return std::nullopt;
            }
            res.object_size = info->size;
            res.generation = info->generation;
            return res;
        }
        else
        {
            return m_store.read(m_key, r, max_bytes);
        }
    }
    std::optional<object_info> read_to(byte_range r, std::uint64_t max_bytes, buffer& out) override
    {
        if constexpr (object_store<Store>)
        {
            // A store that can opens the handle with this first read, in the same request.
            bool opened_here = false;
            const auto* h = [&]
            {
                if constexpr (open_reading_store<Store>)
                {
                    return handle_opened_by([&] { return m_store.open_object_and_read(m_key, r, max_bytes, out); },
                                            opened_here);
                }
                else
                {
                    return handle();
                }
            }();
            if (h == nullptr)
            {
                return std::nullopt;
            }
            if (!opened_here)
            {
                h->read_to(r, max_bytes, out);
            }
            return h->info();
        }
        else if constexpr (buffered_store<Store>)
        {
            return m_store.read_to(m_key, r, max_bytes, out);
        }
        else
        {
            return range_reader::read_to(r, max_bytes, out);
        }
    }
    std::optional<object_info> read_into(std::uint64_t offset, mutable_byte_view dest) override
    {
        if constexpr (direct_object_store<Store>)
        {
            const auto* h = handle();
            if (h == nullptr)
            {
                return std::nullopt;
            }
            const object_info info = h->info();
            if (offset <= info.size && dest.size() <= info.size - offset)
            {
                h->read_into(offset, dest);
            }
            return info;
        }
        else if constexpr (!object_store<Store> && direct_store<Store>)
        {
            return m_store.read_into(m_key, offset, dest);
        }
        else
        {
            return range_reader::read_into(offset, dest);
        }
    }
    std::optional<object_info> stat() override
    {
        if constexpr (object_store<Store>)
        {
            const auto* h = handle();
            return h == nullptr ? std::nullopt : std::optional<object_info>(h->info());
        }
        else
        {
            return m_store.stat(m_key);
        }
    }
    void will_read(std::span<const byte_range> ranges) override
    {
        if constexpr (object_store<Store>)
        {
            if constexpr (prefetching_handle<typename Store::object_handle>)
            {
                if (const auto* h = handle())
                {
                    h->prefetch(ranges);
                }
            }
        }
    }
    const std::string& key() const override { return m_key; }

private:
    template <class S>
    struct handle_slot
    {
    };
    template <object_store S>
    struct handle_slot<S>
    {
        std::atomic<bool> opened{false};
        std::mutex mutex;
        std::optional<typename S::object_handle> handle;
    };

    auto handle()
    {
        bool opened_here = false;
        return handle_opened_by([&] { return m_store.open_object(m_key); }, opened_here);
    }

    /// The handle, opened on first use by `open()` (called once, by one thread); `opened_here`
    /// tells whether this call opened it.
    template <class Open>
    auto handle_opened_by(Open&& open, bool& opened_here)
    {
        // Double-checked rather than std::call_once: glibc's once wakes futex waiters on every
        // first call, a system call per chunk when every chunk is read through a reader.
        if (!m_slot.opened.load(std::memory_order_acquire))
        {
            std::lock_guard<std::mutex> lock(m_slot.mutex);
            if (!m_slot.opened.load(std::memory_order_relaxed))
            {
                m_slot.handle = open();
                m_slot.opened.store(true, std::memory_order_release);
                opened_here = true;
            }
        }
        return m_slot.handle ? &*m_slot.handle : nullptr;
    }

    const Store& m_store;
    std::string m_key;
    [[no_unique_address]] handle_slot<Store> m_slot;
};

/// Bytes already in memory: a whole shard decoded from a larger chain, or one version of an
/// object read whole (what a store without object handles offers as a consistent view of a shard
/// being rewritten: its ranges could otherwise come from different versions), or its absence.
class memory_reader final : public range_reader
{
public:
    memory_reader(byte_view bytes, std::string key, std::uint64_t generation = 0)
        : m_bytes(bytes)
        , m_key(std::move(key))
        , m_generation(generation)
        , m_present(true)
    {
    }
    /// A reader of an object that does not exist.
    static memory_reader absent(std::string key)
    {
        memory_reader r({}, std::move(key));
        r.m_present = false;
        return r;
    }
    std::optional<read_result> read(byte_range r, std::uint64_t max_bytes) override
    {
        if (!m_present)
        {
            return std::nullopt;
        }
        const auto [b, e] = resolve_capped_range(r, m_bytes.size(), max_bytes, m_key);
        read_result res;
        res.bytes = buffer::copy_of(m_bytes.subspan(static_cast<std::size_t>(b), static_cast<std::size_t>(e - b)));
        res.object_size = m_bytes.size();
        res.generation = m_generation;
        return res;
    }
    std::optional<object_info> stat() override
    {
        return m_present ? std::optional<object_info>(object_info{m_bytes.size(), m_generation})
                         : std::nullopt;
    }
    const std::string& key() const override { return m_key; }

private:
    byte_view m_bytes;
    std::string m_key;
    std::uint64_t m_generation;
    bool m_present;
};

/// A byte range of a parent object, read lazily through the parent (an inner shard of a nested
/// sharded array: its index and inner chunks are fetched as ranges of the outer shard).
class sub_reader final : public range_reader
{
public:
    sub_reader(range_reader& parent, std::uint64_t base, std::uint64_t size, std::uint64_t generation)
        : m_parent(parent)
        , m_base(base)
        , m_size(size)
        , m_generation(generation)
        , m_cache_key(parent.cache_key() + "@" + std::to_string(base))
    {
    }
    std::optional<read_result> read(byte_range r, std::uint64_t max_bytes) override
    {
        const auto [b, e] = resolve_range(r, m_size);
        auto res = m_parent.read(byte_range::of(m_base + b, e - b), max_bytes);
        if (res)
        {
            res->object_size = m_size;
        }
        return res;
    }
    std::optional<object_info> read_to(byte_range r, std::uint64_t max_bytes, buffer& out) override
    {
        const auto [b, e] = resolve_range(r, m_size);
        auto info = m_parent.read_to(byte_range::of(m_base + b, e - b), max_bytes, out);
        if (info)
        {
            info->size = m_size;
        }
        return info;
    }
    std::optional<object_info> read_into(std::uint64_t offset, mutable_byte_view dest) override
    {
        if (offset > m_size || dest.size() > m_size - offset)
        {
            return object_info{m_size, m_generation}; // outside this part: the caller sees the size
        }
        auto info = m_parent.read_into(m_base + offset, dest);
        if (info)
        {
            info->size = m_size;
        }
        return info;
    }
    std::optional<object_info> stat() override
    {
        auto p = m_parent.stat();
        if (!p)
        {
            return std::nullopt;
        }
        return object_info{m_size, p->generation};
    }
    const std::string& key() const override { return m_parent.key(); }
    const std::string& cache_key() const override { return m_cache_key; }

private:
    range_reader& m_parent;
    std::uint64_t m_base;
    std::uint64_t m_size;
    std::uint64_t m_generation;
    std::string m_cache_key;
};

/// A new version of one object being written (see zarrxt::object_writer): nothing is visible
/// under the key before commit(); destroyed without commit(), it leaves the key as it was.
class object_output
{
public:
    virtual ~object_output() = default;
    virtual void append(byte_view bytes) = 0;
    /// Overwrite bytes appended before (a shard index reserved at the start, written last).
    virtual void write_at(std::uint64_t offset, byte_view bytes) = 0;
    virtual std::uint64_t size() const = 0;
    virtual void commit() = 0;
};

/// An object assembled in a caller's buffer (a whole shard encoded in memory); commit() does nothing.
class buffer_output final : public object_output
{
public:
    explicit buffer_output(buffer& out)
        : m_out(out)
    {
        m_out.clear();
    }
    void append(byte_view bytes) override { m_out.append(bytes); }
    void write_at(std::uint64_t offset, byte_view bytes) override
    {
        if (offset > m_out.size() || bytes.size() > m_out.size() - offset)
        {
            throw std::out_of_range("zarrxt: write_at past the bytes appended so far");
        }
        std::memcpy(m_out.data() + offset, bytes.data(), bytes.size());
    }
    std::uint64_t size() const override { return m_out.size(); }
    void commit() override {}

private:
    buffer& m_out;
};

/// Read-modify-write access to one key: the object as it is (read through one handle, so every
/// range comes from one version of it) and a new version streamed to the store.
class object_io
{
public:
    virtual ~object_io() = default;
    virtual range_reader& current() = 0;
    virtual std::unique_ptr<object_output> begin_write() = 0;
    /// Replace the object with `bytes` at once (a whole chunk encoded in memory).
    virtual void put(byte_view bytes) = 0;
    virtual bool erase() = 0;
    virtual const std::string& key() const = 0;
};

/// The whole-object writes of one write operation on a posting_store: started as they come, many
/// in flight, all waited for before the operation returns (store/concepts.hpp, posting_store).
class write_posts
{
public:
    virtual ~write_posts() = default;
    /// Start writing `bytes` as the object at `key` (may first wait for older writes, to bound the
    /// bytes held in flight).
    virtual void post(const std::string& key, buffer bytes) = 0;
    /// Wait for every write posted; throws the first one's failure.
    virtual void finish() = 0;
};

template <class Store>
class store_object_io final : public object_io
{
public:
    /// `max_whole` caps the whole-object read of a store without object handles. With `posts`,
    /// whole objects are posted there instead of written one round trip at a time.
    store_object_io(Store& s, std::string key, std::uint64_t max_whole, write_posts* posts = nullptr)
        : m_store(s)
        , m_key(key)
        , m_reader(s, std::move(key))
        , m_max_whole(max_whole)
        , m_posts(posts)
    {
    }
    range_reader& current() override
    {
        if constexpr (object_store<Store>)
        {
            return m_reader; // every range from the one handle, pinned to one version
        }
        else
        {
            if (!m_snapshot)
            {
                m_whole = m_store.read(m_key, byte_range::all(), m_max_whole);
                m_snapshot.emplace(m_whole ? memory_reader(m_whole->bytes.view(), m_key, m_whole->generation)
                                           : memory_reader::absent(m_key));
            }
            return *m_snapshot;
        }
    }
    std::unique_ptr<object_output> begin_write() override
    {
        if constexpr (streaming_store<Store>)
        {
            if (m_posts == nullptr)
            {
                return std::make_unique<streamed>(m_store.begin_write(m_key));
            }
        }
        // Posted, an object is gathered in memory: an upload sends it whole anyway.
        return std::make_unique<gathered>(m_store, m_key, m_posts);
    }
    void put(byte_view bytes) override
    {
        if (m_posts != nullptr)
        {
            m_posts->post(m_key, buffer::copy_of(bytes)); // the chunk's bytes are the worker's scratch
        }
        else
        {
            m_store.set(m_key, bytes);
        }
    }
    bool erase() override { return m_store.erase(m_key); }
    const std::string& key() const override { return m_key; }

private:
    /// Through the store's own writer: memory stays bounded whatever the object's size.
    template <class W>
    class writer_output final : public object_output
    {
    public:
        explicit writer_output(W w)
            : m_w(std::move(w))
        {
        }
        void append(byte_view bytes) override { m_w.append(bytes); }
        void write_at(std::uint64_t offset, byte_view bytes) override { m_w.write_at(offset, bytes); }
        std::uint64_t size() const override { return m_w.size(); }
        void commit() override { m_w.commit(); }

    private:
        W m_w;
    };
    template <class S, bool = streaming_store<S>>
    struct writer_of
    {
        using type = void;
    };
    template <class S>
    struct writer_of<S, true>
    {
        using type = writer_output<decltype(std::declval<S&>().begin_write(std::string_view{}))>;
    };
    using streamed = typename writer_of<Store>::type;

    /// A store without begin_write: the object is gathered in memory and handed to set().
    class gathered final : public object_output
    {
    public:
        gathered(Store& s, const std::string& key, write_posts* posts)
            : m_store(s)
            , m_key(key)
            , m_posts(posts)
            , m_out(m_bytes)
        {
        }
        void append(byte_view bytes) override { m_out.append(bytes); }
        void write_at(std::uint64_t offset, byte_view bytes) override { m_out.write_at(offset, bytes); }
        std::uint64_t size() const override { return m_committed.value_or(m_bytes.size()); }
        void commit() override
        {
            m_committed = m_bytes.size();
            if (m_posts != nullptr)
            {
                m_posts->post(m_key, std::move(m_bytes));
            }
            else
            {
                m_store.set(m_key, m_bytes.view());
            }
        }

    private:
        Store& m_store;
        const std::string& m_key;
        write_posts* m_posts;
        buffer m_bytes;
        buffer_output m_out;
        std::optional<std::uint64_t> m_committed; // the size committed (the bytes may have moved to a post)
    };

    Store& m_store;
    std::string m_key;
    store_reader<Store> m_reader;
    std::uint64_t m_max_whole;
    write_posts* m_posts;
    std::optional<read_result> m_whole;      // a store without handles: the object read whole,
    std::optional<memory_reader> m_snapshot; // and the reader of that one version
};

/// Receives decoded chunks. Coordinates are relative to the chunk the sink was made for.
class piece_sink
{
public:
    virtual ~piece_sink() = default;
    /// `chunk` (in its own axis order, any strides) has its element 0 at `origin`.
    virtual void piece(const codec::array_view& chunk, const dims& origin) = 0;
    /// The box holds no stored data: it reads as the fill value.
    virtual void fill(const dims& origin, const dims& extent) = 0;
    /// Where a chunk of `shape` at `origin` can be decoded straight into the destination, when it lies
    /// wholly inside the request and its part of the destination is one C-ordered block; else empty.
    /// A chunk decoded there must not be passed to piece() as well.
    virtual mutable_byte_view destination(const dims& origin, const dims& shape)
    {
        (void)origin;
        (void)shape;
        return {};
    }
    /// Called after a chunk was decoded into destination() (bool data is normalised there).
    virtual void placed(mutable_byte_view) {}
};

/// Shifts coordinates by `offset` (an inner chunk of a nested shard delivering into its parent).
class offset_sink final : public piece_sink
{
public:
    offset_sink(piece_sink& inner, const dims& offset) : m_inner(inner), m_offset(offset) {}
    void piece(const codec::array_view& chunk, const dims& origin) override
    {
        m_inner.piece(chunk, shifted(origin));
    }
    void fill(const dims& origin, const dims& extent) override { m_inner.fill(shifted(origin), extent); }
    mutable_byte_view destination(const dims& origin, const dims& shape) override
    {
        return m_inner.destination(shifted(origin), shape);
    }
    void placed(mutable_byte_view v) override { m_inner.placed(v); }

private:
    dims shifted(const dims& o) const
    {
        dims r = o;
        for (std::size_t i = 0; i < r.size(); ++i)
        {
            r[i] += m_offset[i];
        }
        return r;
    }
    piece_sink& m_inner;
    dims m_offset;
};

struct read_context
{
    limit_values limits = limit_values::from(default_limits{});
    index_cache_ref cache;
    io_counters* counters = nullptr;
    codec::scratch_space* scratch = nullptr;
    corruption_policy on_corruption = corruption_policy::throw_error;
    problem_list* problems = nullptr; ///< where `collect` reports

    /// Under fill/collect, swallow a data error (reporting it) and return true; else false.
    bool tolerate(const error& e) const
    {
        if (on_corruption == corruption_policy::throw_error || !is_data_corruption(e))
        {
            return false;
        }
        if (on_corruption == corruption_policy::collect && problems != nullptr)
        {
            problems->add(e);
        }
        return true;
    }
};

/// How a shard write may spread the encoding of its inner chunks over the executor: `run(n, fn)`
/// calls fn(i) for every i < n, concurrently, and returns when all returned (rethrowing the first
/// exception); job i of one call may use `slots[i]` (so n <= slots.size()).
struct encode_spread
{
    std::function<void(std::size_t, const std::function<void(std::size_t)>&)> run;
    std::span<codec::scratch_space* const> slots;
};

struct write_context
{
    limit_values limits = limit_values::from(default_limits{});
    index_cache_ref cache;
    io_counters* counters = nullptr;
    codec::scratch_space* scratch = nullptr;
    bool write_empty_chunks = false;
    const encode_spread* spread = nullptr; ///< null: inner chunks are encoded on the calling worker
};

} // namespace zarrxt
