/** @file store/http.hpp
 *  `http_store`: a read-only store over HTTP(S), for Zarr data served by any web server or CDN.
 *  Needs libcurl (meson finds it; include this header explicitly and link libcurl).
 *
 *  A key is the URL `base/key` (each key segment percent-encoded). 404 and 410 mean an absent key.
 *  Ranges are HTTP range requests (`Range: bytes=a-b`; a shard index at the end is one suffix
 *  request `bytes=-n`, no HEAD first). The generation of an object is its ETag (or, without one,
 *  Last-Modified and size). An object handle is pinned to the ETag of its first answer and sends
 *  it as `If-Match` with every later range, so a shard replaced during a read is refused by the
 *  server (store.6) instead of being read half old, half new.
 *
 *  Requests go through one detail::curl_engine per store (shared by copies of the store): many in
 *  flight at once, retried, checked (store/curl_engine.hpp). A handle's `prefetch` starts all the
 *  ranges of a read plan at once; reads then wait for their own range only. The engine moves
 *  while a reader waits, or all the time on a thread the caller gives it (`drive`).
 *
 *  Spec: RFC 9110 (range requests, conditional requests).
 */
#pragma once

#include "../detail/text.hpp"
#include "concepts.hpp"
#include "curl_engine.hpp"
#include "key.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace zarrxt
{

class http_store
{
public:
    /// `base_url`: the URL of the store's root ("https://host/data/volume.zarr"); a trailing
    /// slash is optional.
    explicit http_store(std::string base_url, http_options options = {});
    /// A store on an engine shared with others (the S3 store reads through one of these, on its
    /// signing engine): copies and sharers use one connection pool and one request budget.
    http_store(std::string base_url, std::shared_ptr<detail::curl_engine> engine);

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return read_via_read_to(*this, key, r, max_bytes);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const;
    std::optional<object_info> stat(std::string_view key) const;

    /// One version of one object (see the file comment).
    class object_handle
    {
    public:
        object_info info() const noexcept { return m_state->info; }
        void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const;
        void read_ranges(std::span<const byte_range> ranges, std::uint64_t max_bytes,
                         std::span<buffer> out) const;
        /// Starts a request for each range now (they are answered to later read_to calls).
        void prefetch(std::span<const byte_range> ranges) const;

    private:
        friend class http_store;
        struct state
        {
            std::shared_ptr<detail::curl_engine> engine;
            std::string url;
            std::string key;
            std::string etag;
            object_info info;
            std::mutex mutex;
            std::map<std::pair<std::uint64_t, std::uint64_t>, detail::curl_engine::ticket> pending;
            ~state()
            {
                for (auto& [range, t] : pending)
                {
                    engine->abandon(t);
                }
            }
        };
        explicit object_handle(std::shared_ptr<state> s)
            : m_state(std::move(s))
        {
        }
        detail::http_request request_for(std::uint64_t begin, std::uint64_t end,
                                         std::uint64_t max_bytes) const;
        void take(detail::http_response res, std::uint64_t begin, std::uint64_t end, buffer& out) const;
        std::shared_ptr<state> m_state;
    };

    /// Starts a whole GET of each key now (object_prefetching_store); the later whole reads of
    /// those keys take the answers. At most `max_bytes` each.
    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const;
    /// Drops the prefetches of `keys` not read yet (their transfers stop).
    void cancel_prefetch(std::span<const std::string> keys) const;
    /// Prefetched objects not read yet (tests check that none outlives an operation).
    std::size_t prefetched_pending() const;

    std::optional<object_handle> open_object(std::string_view key) const;
    /// open_object and a first read in one request (no HEAD before the first range).
    std::optional<object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                      std::uint64_t max_bytes, buffer& out) const;

    const std::string& base_url() const noexcept { return m_base; }
    /// The URL of `key` (validated and percent-encoded).
    std::string url_of(std::string_view key) const;
    /// Keeps this store's requests moving on the calling thread until `stop` is requested, for a
    /// thread the caller starts (zarrxt starts none): answers are read and queued or prefetched
    /// requests started while the threads that read are decoding, instead of only while one of
    /// them waits. Copies of the store share the engine, so one driver serves them all.
    ///     std::jthread io([s = store](std::stop_token st) { s.drive(st); });
    void drive(std::stop_token stop) const
    {
        const auto engine = m_engine; // the engine outlives the loop even if this store does not
        engine->drive(std::move(stop));
    }
    /// The engine's request counts (peak requests in flight, requests started).
    std::size_t peak_in_flight() const { return m_engine->peak_in_flight(); }
    std::uint64_t requests_started() const { return m_engine->requests_started(); }
    /// Steps of the request engine so far (http_store::drive's loop and every waiter's).
    std::uint64_t engine_steps() const { return m_engine->steps_taken(); }

private:
    friend class s3_store; // reads through one of these, and asks it for an object's ETag (head)
    detail::http_request request(std::string_view key, byte_range r, std::uint64_t max_bytes) const;
    /// A HEAD of `key` (nullopt: absent); store.5 when the answer has no size.
    std::optional<detail::http_response> head(std::string_view key) const;
    object_handle make_handle(std::string_view key, const detail::http_response& res) const;
    /// Size and generation from an answer; a HEAD when the answer did not say the size.
    object_info info_of(std::string_view key, const detail::http_response& res) const;

    /// The answer of a prefetched whole GET of `key`, when one was announced (then waited for).
    std::optional<detail::http_response> take_prefetched(std::string_view key, std::uint64_t max_bytes) const;

    struct prefetched
    {
        std::shared_ptr<detail::curl_engine> engine;
        std::mutex mutex;
        std::map<std::string, detail::curl_engine::ticket, std::less<>> pending;
        ~prefetched()
        {
            for (auto& [key, t] : pending)
            {
                engine->abandon(t);
            }
        }
    };

    std::string m_base;
    std::shared_ptr<detail::curl_engine> m_engine;
    std::shared_ptr<prefetched> m_prefetched;
};

/******************
 * implementation *
 ******************/

namespace detail
{

/// A key's segments percent-encoded (RFC 3986 unreserved characters and '/' kept).
inline std::string percent_encode_key(std::string_view key)
{
    return percent_encode(key, true);
}

/// The validator a generation is made of: the ETag, else Last-Modified and the size.
inline std::string validator_of(const http_response& res, std::uint64_t size)
{
    if (!res.etag.empty())
    {
        return res.etag;
    }
    if (!res.last_modified.empty())
    {
        return res.last_modified + "/" + std::to_string(size);
    }
    return {};
}

} // namespace detail

inline http_store::http_store(std::string base_url, http_options options)
    : http_store(std::move(base_url), std::make_shared<detail::curl_engine>(std::move(options)))
{
}

inline http_store::http_store(std::string base_url, std::shared_ptr<detail::curl_engine> engine)
    : m_base(std::move(base_url))
    , m_engine(std::move(engine))
    , m_prefetched(std::make_shared<prefetched>())
{
    m_prefetched->engine = m_engine;
    while (!m_base.empty() && m_base.back() == '/')
    {
        m_base.pop_back();
    }
    if (m_base.rfind("http://", 0) != 0 && m_base.rfind("https://", 0) != 0)
    {
        throw store_error(store_errc::invalid_key,
                          "http_store: the base URL must start with http:// or https://, not \"" +
                              detail::redact_url(m_base) + "\"");
    }
}

inline std::string http_store::url_of(std::string_view key) const
{
    validate_key(key);
    return m_base + "/" + detail::percent_encode_key(key);
}

inline detail::http_request http_store::request(std::string_view key, byte_range r,
                                                std::uint64_t max_bytes) const
{
    detail::http_request q;
    q.url = url_of(key);
    q.key = std::string(key);
    q.max_bytes = max_bytes;
    if (r.suffix)
    {
        q.what = detail::http_request::kind::suffix;
        q.suffix = r.length;
    }
    else if (r.is_all())
    {
        q.what = detail::http_request::kind::whole;
    }
    else
    {
        q.what = detail::http_request::kind::range;
        q.begin = r.offset;
        q.end = r.length >= UINT64_MAX - r.offset ? UINT64_MAX : r.offset + r.length;
    }
    return q;
}

inline object_info http_store::info_of(std::string_view key, const detail::http_response& res) const
{
    if (res.size_known)
    {
        return {res.object_size, detail::generation_of(detail::validator_of(res, res.object_size))};
    }
    auto st = stat(key);
    if (!st)
    {
        store_error e(store_errc::changed, "the object disappeared while it was read");
        e.with_key(key);
        throw e;
    }
    return *st;
}

inline std::optional<detail::http_response> http_store::head(std::string_view key) const
{
    auto q = request(key, byte_range::all(), 0);
    q.what = detail::http_request::kind::head;
    auto res = m_engine->fetch(std::move(q));
    if (!res.found)
    {
        return std::nullopt;
    }
    if (!res.size_known)
    {
        store_error e(store_errc::remote_protocol,
                      "HEAD answered without Content-Length (" + detail::redact_url(url_of(key)) + ")");
        e.with_key(key);
        throw e;
    }
    return res;
}

inline std::optional<object_info> http_store::stat(std::string_view key) const
{
    const auto res = head(key);
    if (!res)
    {
        return std::nullopt;
    }
    return info_of(key, *res);
}

inline std::optional<object_info> http_store::read_to(std::string_view key, byte_range r,
                                                      std::uint64_t max_bytes, buffer& out) const
{
    if (!r.is_all() && r.length == 0)
    {
        out.clear();
        return stat(key); // no range request can ask for nothing
    }
    if (!r.suffix && !r.is_all() && r.length != byte_range::to_end && r.length > max_bytes)
    {
        limit_exceeded e("max_chunk_bytes", r.length, max_bytes);
        e.with_key(key);
        e.with_range(r.offset, r.length);
        throw e;
    }
    auto pre = r.is_all() ? take_prefetched(key, max_bytes) : std::nullopt;
    auto res = pre ? std::move(*pre) : m_engine->fetch(request(key, r, max_bytes));
    if (!res.found)
    {
        return std::nullopt;
    }
    const object_info info = info_of(key, res);
    out = std::move(res.body);
    return info;
}

inline void http_store::prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const
{
    for (const auto& key : keys)
    {
        auto q = request(key, byte_range::all(), max_bytes); // validates the key
        std::lock_guard<std::mutex> g(m_prefetched->mutex);
        if (m_prefetched->pending.find(key) == m_prefetched->pending.end())
        {
            m_prefetched->pending.emplace(key, m_engine->submit(std::move(q)));
        }
    }
}

inline void http_store::cancel_prefetch(std::span<const std::string> keys) const
{
    std::lock_guard<std::mutex> g(m_prefetched->mutex);
    for (const auto& key : keys)
    {
        if (auto it = m_prefetched->pending.find(key); it != m_prefetched->pending.end())
        {
            m_engine->abandon(it->second);
            m_prefetched->pending.erase(it);
        }
    }
}

inline std::size_t http_store::prefetched_pending() const
{
    std::lock_guard<std::mutex> g(m_prefetched->mutex);
    return m_prefetched->pending.size();
}

inline std::optional<detail::http_response> http_store::take_prefetched(std::string_view key,
                                                                        std::uint64_t max_bytes) const
{
    detail::curl_engine::ticket t;
    {
        std::lock_guard<std::mutex> g(m_prefetched->mutex);
        auto it = m_prefetched->pending.find(key);
        if (it == m_prefetched->pending.end())
        {
            return std::nullopt;
        }
        t = std::move(it->second);
        m_prefetched->pending.erase(it);
    }
    auto res = m_engine->wait(t);
    if (res.body.size() > max_bytes)
    {
        // Announced with a larger cap than this read allows.
        limit_exceeded e("max_chunk_bytes", res.body.size(), max_bytes);
        e.with_key(key);
        throw e;
    }
    return res;
}

inline http_store::object_handle http_store::make_handle(std::string_view key,
                                                         const detail::http_response& res) const
{
    auto s = std::make_shared<object_handle::state>();
    s->engine = m_engine;
    s->url = url_of(key);
    s->key = std::string(key);
    s->etag = res.etag;
    s->info = info_of(key, res);
    return object_handle(std::move(s));
}

inline std::optional<http_store::object_handle> http_store::open_object(std::string_view key) const
{
    const auto res = head(key);
    if (!res)
    {
        return std::nullopt;
    }
    return make_handle(key, *res);
}

inline std::optional<http_store::object_handle> http_store::open_object_and_read(std::string_view key,
                                                                                 byte_range r,
                                                                                 std::uint64_t max_bytes,
                                                                                 buffer& out) const
{
    if (!r.is_all() && r.length == 0)
    {
        out.clear();
        return open_object(key);
    }
    auto pre = r.is_all() ? take_prefetched(key, max_bytes) : std::nullopt;
    auto res = pre ? std::move(*pre) : m_engine->fetch(request(key, r, max_bytes));
    if (!res.found)
    {
        return std::nullopt;
    }
    auto h = make_handle(key, res);
    out = std::move(res.body);
    return h;
}

inline detail::http_request http_store::object_handle::request_for(std::uint64_t begin, std::uint64_t end,
                                                                   std::uint64_t max_bytes) const
{
    detail::http_request q;
    q.url = m_state->url;
    q.key = m_state->key;
    q.what = detail::http_request::kind::range;
    q.begin = begin;
    q.end = end;
    q.max_bytes = max_bytes;
    q.if_match = m_state->etag;
    return q;
}

inline void http_store::object_handle::take(detail::http_response res, std::uint64_t begin, std::uint64_t end,
                                            buffer& out) const
{
    if (!res.found || res.changed)
    {
        store_error e(store_errc::changed,
                      "the object was replaced or removed while it was read through one handle");
        e.with_key(m_state->key);
        e.with_range(begin, end - begin);
        throw e;
    }
    if (!m_state->etag.empty() && !res.etag.empty() && res.etag != m_state->etag)
    {
        // A server that ignores If-Match (some S3-compatible ones do) still names the version
        // it sent: another one is never taken as this handle's bytes.
        store_error e(store_errc::changed,
                      "the object was replaced while it was read through one handle (ETag " + res.etag +
                          ", the handle's is " + m_state->etag + ")");
        e.with_key(m_state->key);
        e.with_range(begin, end - begin);
        throw e;
    }
    if (m_state->etag.empty() && res.size_known &&
        (res.object_size != m_state->info.size ||
         detail::generation_of(detail::validator_of(res, res.object_size)) != m_state->info.generation))
    {
        // No ETag to send as If-Match: the validator of every answer is compared instead.
        store_error e(store_errc::changed, "the object changed while it was read through one handle");
        e.with_key(m_state->key);
        throw e;
    }
    if (!m_state->etag.empty() && res.size_known && res.object_size != m_state->info.size)
    {
        // If-Match held, so this is the version the handle opened: a server giving it another
        // size contradicts itself (a lying Content-Range), and its ranges cannot be trusted.
        store_error e(store_errc::remote_protocol,
                      "the server gives the object " + std::to_string(res.object_size) + " bytes, " +
                          std::to_string(m_state->info.size) + " when it was opened, under the same ETag");
        e.with_key(m_state->key);
        e.with_range(begin, end - begin);
        throw e;
    }
    if (res.body.size() != end - begin)
    {
        store_error e(store_errc::remote_protocol, "the server sent " + std::to_string(res.body.size()) +
                                                       " bytes for a range of " +
                                                       std::to_string(end - begin));
        e.with_key(m_state->key);
        e.with_range(begin, end - begin);
        throw e;
    }
    out = std::move(res.body);
}

inline void http_store::object_handle::read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const
{
    const auto [begin, end] = resolve_capped_range(r, m_state->info.size, max_bytes, m_state->key);
    if (end == begin)
    {
        out.clear();
        return;
    }
    detail::curl_engine::ticket t;
    {
        std::lock_guard<std::mutex> g(m_state->mutex);
        auto it = m_state->pending.find({begin, end});
        if (it != m_state->pending.end())
        {
            t = std::move(it->second);
            m_state->pending.erase(it);
        }
    }
    if (!t)
    {
        t = m_state->engine->submit(request_for(begin, end, max_bytes));
    }
    take(m_state->engine->wait(t), begin, end, out);
}

inline void http_store::object_handle::read_ranges(std::span<const byte_range> ranges,
                                                   std::uint64_t max_bytes, std::span<buffer> out) const
{
    prefetch(ranges);
    for (std::size_t i = 0; i < ranges.size() && i < out.size(); ++i)
    {
        read_to(ranges[i], max_bytes, out[i]);
    }
}

inline void http_store::object_handle::prefetch(std::span<const byte_range> ranges) const
{
    for (const auto& r : ranges)
    {
        const auto [begin, end] = resolve_range(r, m_state->info.size);
        if (end == begin)
        {
            continue;
        }
        std::lock_guard<std::mutex> g(m_state->mutex);
        if (m_state->pending.count({begin, end}) != 0)
        {
            continue;
        }
        // The cap is checked again when the range is read; here it only bounds the transfer.
        m_state->pending.emplace(std::make_pair(begin, end),
                                 m_state->engine->submit(request_for(begin, end, end - begin)));
    }
}

static_assert(store_policy<http_store> && object_store<http_store> &&
              prefetching_handle<http_store::object_handle> && object_prefetching_store<http_store>);
static_assert(!writable_store<http_store>, "http_store is read-only");

} // namespace zarrxt
