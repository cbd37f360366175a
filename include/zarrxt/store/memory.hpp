/** @file store/memory.hpp
 *  `memory_store`: keys and values in memory. A handle: copies share the same contents (and the
 *  same key locks), so an array opened twice on one memory_store sees its own writes.
 *  Thread-safe; values are immutable once stored, so a reader copies outside the lock.
 */
#pragma once

#include "concepts.hpp"
#include "key.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>

namespace zarrxt
{

class memory_store
{
public:
    memory_store() : m_state(std::make_shared<state>()) {}

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const;
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes, buffer& out) const;
    std::optional<object_info> read_into(std::string_view key, std::uint64_t offset, mutable_byte_view dest) const;
    std::optional<object_info> stat(std::string_view key) const;
    void set(std::string_view key, byte_view data);
    bool erase(std::string_view key);
    std::vector<std::string> list(std::string_view prefix) const;
    std::vector<std::string> list_dir(std::string_view prefix) const;
    std::unique_lock<std::mutex> lock_key(std::string_view key) const { return m_state->locks.lock(key); }

    /// One stored value, shared (see zarrxt::object_handle): a later set() of the key makes a new
    /// value and leaves this one as it was.
    class object_handle
    {
    public:
        object_info info() const noexcept { return {m_bytes->size(), m_generation}; }
        void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const
        {
            const auto [begin, end] = resolve_capped_range(r, m_bytes->size(), max_bytes, m_key);
            out.resize_discard(static_cast<std::size_t>(end - begin));
            if (end > begin)
            {
                std::memcpy(out.data(), m_bytes->data() + begin, static_cast<std::size_t>(end - begin));
            }
        }
        void read_into(std::uint64_t offset, mutable_byte_view dest) const
        {
            if (offset > m_bytes->size() || dest.size() > m_bytes->size() - offset)
            {
                throw std::out_of_range("zarrxt: read_into past the end of " + m_key);
            }
            if (!dest.empty())
            {
                std::memcpy(dest.data(), m_bytes->data() + offset, dest.size());
            }
        }
        void read_ranges(std::span<const byte_range> ranges, std::uint64_t max_bytes,
                         std::span<buffer> out) const
        {
            read_ranges_one_by_one(*this, ranges, max_bytes, out);
        }

    private:
        friend class memory_store;
        object_handle(std::shared_ptr<const buffer> bytes, std::uint64_t generation, std::string_view key)
            : m_bytes(std::move(bytes))
            , m_generation(generation)
            , m_key(key)
        {
        }
        std::shared_ptr<const buffer> m_bytes;
        std::uint64_t m_generation = 0;
        std::string m_key;
    };

    std::optional<object_handle> open_object(std::string_view key) const
    {
        auto found = find(key);
        if (!found)
        {
            return std::nullopt;
        }
        return object_handle(std::move(found->bytes), found->generation, key);
    }

    /// Number of stored objects (tests).
    std::size_t size() const
    {
        std::lock_guard<std::mutex> g(m_state->mutex);
        return m_state->objects.size();
    }

private:
    struct object
    {
        std::shared_ptr<const buffer> bytes;
        std::uint64_t generation;
    };
    struct state
    {
        mutable std::mutex mutex;
        std::map<std::string, object, std::less<>> objects;
        std::uint64_t next_generation = 1;
        detail::key_lock_table locks;
    };
    std::optional<object> find(std::string_view key) const
    {
        validate_key(key);
        std::lock_guard<std::mutex> g(m_state->mutex);
        auto it = m_state->objects.find(key);
        if (it == m_state->objects.end())
        {
            return std::nullopt;
        }
        return it->second;
    }
    template <class F>
    void for_each_below(std::string_view prefix, F&& f) const;

    std::shared_ptr<state> m_state;
};

/******************
 * implementation *
 ******************/

inline std::optional<read_result> memory_store::read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
{
    return read_via_read_to(*this, key, r, max_bytes);
}

inline std::optional<object_info> memory_store::read_into(std::string_view key, std::uint64_t offset,
                                                          mutable_byte_view dest) const
{
    auto found = find(key);
    if (!found)
    {
        return std::nullopt;
    }
    const object& o = *found;
    const auto [begin, end] = resolve_range(byte_range::of(offset, dest.size()), o.bytes->size());
    if (end > begin)
    {
        std::memcpy(dest.data(), o.bytes->data() + begin, static_cast<std::size_t>(end - begin));
    }
    return object_info{o.bytes->size(), o.generation};
}

inline std::optional<object_info> memory_store::read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                                        buffer& out) const
{
    return read_to_via_handle(*this, key, r, max_bytes, out);
}

inline std::optional<object_info> memory_store::stat(std::string_view key) const
{
    auto found = find(key);
    if (!found)
    {
        return std::nullopt;
    }
    return object_info{found->bytes->size(), found->generation};
}

inline void memory_store::set(std::string_view key, byte_view data)
{
    validate_key(key);
    auto b = std::make_shared<const buffer>(buffer::copy_of(data));
    std::lock_guard<std::mutex> g(m_state->mutex);
    auto& slot = m_state->objects[std::string(key)];
    slot.bytes = std::move(b);
    slot.generation = m_state->next_generation++;
}

inline bool memory_store::erase(std::string_view key)
{
    validate_key(key);
    std::lock_guard<std::mutex> g(m_state->mutex);
    auto it = m_state->objects.find(key);
    if (it == m_state->objects.end())
    {
        return false;
    }
    m_state->objects.erase(it);
    return true;
}

template <class F>
void memory_store::for_each_below(std::string_view prefix, F&& f) const
{
    // Keys strictly below `prefix` ("" is everything), in order, under the lock.
    std::string p(prefix);
    if (!p.empty() && p.back() != '/')
    {
        p += '/';
    }
    std::lock_guard<std::mutex> g(m_state->mutex);
    for (auto it = m_state->objects.lower_bound(p); it != m_state->objects.end(); ++it)
    {
        if (it->first.compare(0, p.size(), p) != 0)
        {
            break;
        }
        f(it->first, it->first.substr(p.size()));
    }
}

inline std::vector<std::string> memory_store::list(std::string_view prefix) const
{
    std::vector<std::string> out;
    for_each_below(prefix, [&](const std::string& key, const std::string&) { out.push_back(key); });
    return out;
}

inline std::vector<std::string> memory_store::list_dir(std::string_view prefix) const
{
    // Immediate children: names (not full keys), objects and "directories" alike.
    std::set<std::string> names;
    for_each_below(prefix, [&](const std::string&, const std::string& rest) { names.insert(rest.substr(0, rest.find('/'))); });
    return {names.begin(), names.end()};
}

} // namespace zarrxt
