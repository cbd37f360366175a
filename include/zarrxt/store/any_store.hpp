/** @file store/any_store.hpp
 *  `any_store`: one store type for stores chosen at run time (a URL given on a command line:
 *  `open_store` in store/open_store.hpp). It holds any store policy and offers every capability
 *  the kernels use; what the held store cannot do fails at run time with a typed error instead of
 *  at compile time: a write or erase on a read-only store is store.9, a listing of a store that
 *  cannot list is store.7.
 *
 *  The cost is one virtual call per store request, nothing per element. Code that knows its store
 *  keeps the concrete type (`open<T, N>(filesystem_store{...}, ...)`) and pays nothing.
 *
 *  Object handles: a held store with handles lends them (a file stays pinned to its version);
 *  for one without, a handle reads by key and compares every answer's generation with the one it
 *  opened, refusing another version with store.6 rather than mixing two.
 */
#pragma once

#include "../detail/posted_write.hpp"
#include "concepts.hpp"
#include "key.hpp"

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zarrxt
{

class any_store
{
public:
    /// A held store's object handle, behind one interface.
    class object_handle
    {
    public:
        struct interface
        {
            virtual ~interface() = default;
            virtual object_info info() const = 0;
            virtual void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const = 0;
            virtual void read_ranges(std::span<const byte_range> rs, std::uint64_t max_bytes,
                                     std::span<buffer> outs) const = 0;
            virtual void read_into(std::uint64_t offset, mutable_byte_view dest) const = 0;
            virtual void prefetch(std::span<const byte_range> rs) const = 0;
        };
        explicit object_handle(std::shared_ptr<const interface> h)
            : m_h(std::move(h))
        {
        }

        object_info info() const { return m_h->info(); }
        void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const
        {
            m_h->read_to(r, max_bytes, out);
        }
        void read_ranges(std::span<const byte_range> rs, std::uint64_t max_bytes,
                         std::span<buffer> outs) const
        {
            m_h->read_ranges(rs, max_bytes, outs);
        }
        void read_into(std::uint64_t offset, mutable_byte_view dest) const { m_h->read_into(offset, dest); }
        void prefetch(std::span<const byte_range> rs) const { m_h->prefetch(rs); }

    private:
        std::shared_ptr<const interface> m_h;
    };

    /// A held lock guard (each store has its own guard type).
    using key_lock = std::shared_ptr<void>;

    struct interface
    {
        virtual ~interface() = default;
        virtual std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max,
                                                   buffer& out) const = 0;
        virtual std::optional<object_info> stat(std::string_view key) const = 0;
        virtual std::optional<object_handle> open_object(std::string_view key) const = 0;
        virtual std::optional<object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                                  std::uint64_t max, buffer& out) const = 0;
        virtual void set(std::string_view key, byte_view data) = 0;
        virtual bool erase(std::string_view key) = 0;
        virtual std::vector<std::string> list(std::string_view prefix) const = 0;
        virtual std::vector<std::string> list_dir(std::string_view prefix) const = 0;
        virtual key_lock lock_key(std::string_view key) const = 0;
        virtual void prefetch_objects(std::span<const std::string> keys, std::uint64_t max) const = 0;
        virtual void cancel_prefetch(std::span<const std::string> keys) const = 0;
        virtual bool prefetches_objects() const noexcept = 0;
        virtual detail::posted_write post(std::string_view key, buffer bytes) = 0;
        virtual void wait_posted(std::string_view key) = 0;
        virtual bool posts_writes() const noexcept = 0;
        virtual bool writable() const noexcept = 0;
        virtual bool listable() const noexcept = 0;
        virtual std::string describe() const = 0;
    };

    /// Holds a copy of `s` (copies of the any_store share it, as copies of a store share its state).
    /// (The any_store check comes first: store_policy<any_store> asks whether any_store is
    /// copyable, which would consider this constructor again.)
    template <class S>
    requires(!std::same_as<std::remove_cvref_t<S>, any_store>) && store_policy<S> explicit any_store(
                                                                      S s, std::string description = {});

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return read_via_read_to(*this, key, r, max_bytes);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const
    {
        return m_s->read_to(key, r, max_bytes, out);
    }
    std::optional<object_info> stat(std::string_view key) const { return m_s->stat(key); }
    std::optional<object_handle> open_object(std::string_view key) const { return m_s->open_object(key); }
    std::optional<object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                      std::uint64_t max_bytes, buffer& out) const
    {
        return m_s->open_object_and_read(key, r, max_bytes, out);
    }
    void set(std::string_view key, byte_view data) { m_s->set(key, data); }
    bool erase(std::string_view key) { return m_s->erase(key); }
    std::vector<std::string> list(std::string_view prefix) const { return m_s->list(prefix); }
    std::vector<std::string> list_dir(std::string_view prefix) const { return m_s->list_dir(prefix); }
    key_lock lock_key(std::string_view key) const { return m_s->lock_key(key); }
    /// Forwarded to a held object_prefetching_store (a hint: ignored by the others).
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const
    {
        m_s->prefetch_objects(keys, max_bytes);
    }
    void cancel_prefetch(std::span<const std::string> keys) const { m_s->cancel_prefetch(keys); }
    /// Whether the held store acts on prefetch_objects (the kernels announce chunks only then).
    bool prefetches_objects() const noexcept { return m_s->prefetches_objects(); }
    /// Forwarded to a held posting_store; on any other store a post is a set() done at once.
    detail::posted_write post(std::string_view key, buffer bytes) { return m_s->post(key, std::move(bytes)); }
    void wait_posted(std::string_view key) { m_s->wait_posted(key); }
    /// Whether the held store keeps posted writes in flight (the kernels post only then).
    bool posts_writes() const noexcept { return m_s->posts_writes(); }

    /// Whether the held store can write (set, erase) and list.
    bool writable() const noexcept { return m_s->writable(); }
    bool listable() const noexcept { return m_s->listable(); }
    /// What it is ("file:///data/x.zarr", "https://host/x.zarr", "s3://bucket/x.zarr"), no credentials.
    std::string describe() const { return m_s->describe(); }

private:
    std::shared_ptr<interface> m_s;
};

/******************
 * implementation *
 ******************/

namespace detail
{

/// A handle for a store without handles: reads by key, every answer checked against the
/// generation it opened.
template <class S>
class keyed_handle final : public any_store::object_handle::interface
{
public:
    keyed_handle(S s, std::string key, object_info info)
        : m_s(std::move(s))
        , m_key(std::move(key))
        , m_info(info)
    {
    }
    object_info info() const override { return m_info; }
    void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const override
    {
        const auto [begin, end] = resolve_capped_range(r, m_info.size, max_bytes, m_key);
        auto res = m_s.read(m_key, byte_range::of(begin, end - begin), max_bytes);
        if (!res || res->generation != m_info.generation || res->object_size != m_info.size)
        {
            store_error e(store_errc::changed,
                          "the object was replaced or removed while it was read through one handle");
            e.with_key(m_key);
            e.with_range(begin, end - begin);
            throw e;
        }
        out = std::move(res->bytes);
    }
    void read_ranges(std::span<const byte_range> rs, std::uint64_t max_bytes,
                     std::span<buffer> outs) const override
    {
        read_ranges_one_by_one(*this, rs, max_bytes, outs);
    }
    void read_into(std::uint64_t offset, mutable_byte_view dest) const override
    {
        buffer b;
        read_to(byte_range::of(offset, dest.size()), dest.size(), b);
        std::memcpy(dest.data(), b.data(), b.size());
    }
    void prefetch(std::span<const byte_range>) const override {}

private:
    S m_s;
    std::string m_key;
    object_info m_info;
};

/// A held store's own handle.
template <class H>
class lent_handle final : public any_store::object_handle::interface
{
public:
    explicit lent_handle(H h)
        : m_h(std::move(h))
    {
    }
    object_info info() const override { return m_h.info(); }
    void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const override
    {
        m_h.read_to(r, max_bytes, out);
    }
    void read_ranges(std::span<const byte_range> rs, std::uint64_t max_bytes,
                     std::span<buffer> outs) const override
    {
        m_h.read_ranges(rs, max_bytes, outs);
    }
    void read_into(std::uint64_t offset, mutable_byte_view dest) const override
    {
        if constexpr (direct_handle<H>)
        {
            m_h.read_into(offset, dest);
        }
        else
        {
            buffer b;
            m_h.read_to(byte_range::of(offset, dest.size()), dest.size(), b);
            if (b.size() != dest.size())
            {
                throw store_error(store_errc::io, "read_into past the end of the object");
            }
            std::memcpy(dest.data(), b.data(), b.size());
        }
    }
    void prefetch(std::span<const byte_range> rs) const override
    {
        if constexpr (prefetching_handle<H>)
        {
            m_h.prefetch(rs);
        }
    }

private:
    H m_h;
};

template <class S>
class held_store final : public any_store::interface
{
public:
    held_store(S s, std::string description)
        : m_s(std::move(s))
        , m_description(std::move(description))
    {
    }

    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max,
                                       buffer& out) const override
    {
        if constexpr (buffered_store<S>)
        {
            return m_s.read_to(key, r, max, out);
        }
        else
        {
            auto res = m_s.read(key, r, max);
            if (!res)
            {
                return std::nullopt;
            }
            out = std::move(res->bytes);
            return object_info{res->object_size, res->generation};
        }
    }
    std::optional<object_info> stat(std::string_view key) const override { return m_s.stat(key); }
    std::optional<any_store::object_handle> open_object(std::string_view key) const override
    {
        if constexpr (object_store<S>)
        {
            auto h = m_s.open_object(key);
            if (!h)
            {
                return std::nullopt;
            }
            return any_store::object_handle(
                std::make_shared<lent_handle<typename S::object_handle>>(std::move(*h)));
        }
        else
        {
            auto info = m_s.stat(key);
            if (!info)
            {
                return std::nullopt;
            }
            return any_store::object_handle(std::make_shared<keyed_handle<S>>(m_s, std::string(key), *info));
        }
    }
    std::optional<any_store::object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                                 std::uint64_t max,
                                                                 buffer& out) const override
    {
        if constexpr (open_reading_store<S>)
        {
            auto h = m_s.open_object_and_read(key, r, max, out);
            if (!h)
            {
                return std::nullopt;
            }
            return any_store::object_handle(
                std::make_shared<lent_handle<typename S::object_handle>>(std::move(*h)));
        }
        else
        {
            auto h = open_object(key);
            if (h)
            {
                h->read_to(r, max, out);
            }
            return h;
        }
    }
    void set(std::string_view key, byte_view data) override
    {
        if constexpr (writable_store<S>)
        {
            m_s.set(key, data);
        }
        else
        {
            read_only(key);
        }
    }
    bool erase(std::string_view key) override
    {
        if constexpr (erasable_store<S>)
        {
            return m_s.erase(key);
        }
        else
        {
            read_only(key);
            return false;
        }
    }
    std::vector<std::string> list(std::string_view prefix) const override
    {
        if constexpr (listable_store<S>)
        {
            return m_s.list(prefix);
        }
        else
        {
            not_listable(prefix);
            return {};
        }
    }
    std::vector<std::string> list_dir(std::string_view prefix) const override
    {
        if constexpr (listable_store<S>)
        {
            return m_s.list_dir(prefix);
        }
        else
        {
            not_listable(prefix);
            return {};
        }
    }
    any_store::key_lock lock_key(std::string_view key) const override
    {
        if constexpr (lockable_store<S>)
        {
            using guard = decltype(m_s.lock_key(key));
            return std::make_shared<guard>(m_s.lock_key(key));
        }
        else
        {
            return {}; // a store that cannot lock cannot write either: nothing to serialise
        }
    }
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max) const override
    {
        if constexpr (object_prefetching_store<S>)
        {
            m_s.prefetch_objects(keys, max);
        }
    }
    void cancel_prefetch(std::span<const std::string> keys) const override
    {
        if constexpr (object_prefetching_store<S>)
        {
            m_s.cancel_prefetch(keys);
        }
    }
    bool prefetches_objects() const noexcept override { return object_prefetching_store<S>; }
    detail::posted_write post(std::string_view key, buffer bytes) override
    {
        if constexpr (posting_store<S>)
        {
            using ticket = decltype(m_s.post(key, std::move(bytes)));
            if constexpr (std::same_as<ticket, detail::posted_write>)
            {
                return m_s.post(key, std::move(bytes));
            }
            else
            {
                auto t = std::make_shared<ticket>(m_s.post(key, std::move(bytes)));
                return detail::posted_write(
                    std::string(key), std::make_shared<detail::posted_state>([t] { t->wait(); }), m_posted);
            }
        }
        else
        {
            set(key, bytes.view());
            return detail::posted_write(std::string(key), std::make_shared<detail::posted_state>(nullptr),
                                        m_posted);
        }
    }
    void wait_posted(std::string_view key) override
    {
        if constexpr (posting_store<S>)
        {
            m_s.wait_posted(key);
        }
    }
    bool posts_writes() const noexcept override { return posting_store<S>; }
    bool writable() const noexcept override { return writable_store<S> && erasable_store<S>; }
    bool listable() const noexcept override { return listable_store<S>; }
    std::string describe() const override { return m_description; }

private:
    [[noreturn]] void read_only(std::string_view key) const
    {
        store_error e(store_errc::read_only, "the store " + m_description + " is read-only");
        e.with_key(key);
        throw e;
    }
    [[noreturn]] void not_listable(std::string_view prefix) const
    {
        store_error e(store_errc::not_listable, "the store " + m_description + " cannot list its keys");
        e.with_key(prefix.empty() ? std::string_view("/") : prefix);
        throw e;
    }

    S m_s;
    std::string m_description;
    std::shared_ptr<detail::posted_registry> m_posted = std::make_shared<detail::posted_registry>();
};

} // namespace detail

template <class S>
requires(!std::same_as<std::remove_cvref_t<S>, any_store>) &&
    store_policy<S> any_store::any_store(S s, std::string description)
    : m_s(std::make_shared<detail::held_store<S>>(std::move(s), description.empty() ? std::string("(a store)")
                                                                                    : std::move(description)))
{
}

static_assert(array_writable_store<any_store> && open_reading_store<any_store> &&
              direct_object_store<any_store> && prefetching_handle<any_store::object_handle>);

} // namespace zarrxt
