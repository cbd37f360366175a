/** @file store/curl_engine.hpp
 *  The request engine of the remote stores: many HTTP requests in flight on libcurl's multi
 *  interface, with bounded retries, timeouts and checked answers. Needs libcurl (ZARRXT_HAS_CURL).
 *
 *  No thread of its own (the library starts none): the multi handle is driven by whichever caller
 *  is waiting for an answer. One waiter at a time drives every transfer in flight, its own and the
 *  others'; the rest sleep until a driving step ends, then one of them takes over if its answer has
 *  not arrived. So requests submitted ahead (a read plan's batches, prefetched chunks) progress
 *  together as soon as anyone waits, and a waiter never waits for a request it does not need.
 *
 *  What comes back is checked against what was asked before it is data: a `206` must carry the
 *  `Content-Range` of the request and exactly that many bytes (else store.5); a `200` to a range
 *  request (a server that ignores ranges) is sliced to the range while it arrives, never held
 *  whole past the caller's cap; a body longer than the cap aborts the transfer (limit.1).
 *  Connection errors, timeouts, 429 and 5xx are retried with exponential backoff and full jitter
 *  up to `max_retries`, within the per-request deadline; then store.4 with the status and URL.
 */
#pragma once

#include "../config.hpp"
#include "../detail/buffer.hpp"
#include "../error.hpp"
#include "key.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// How a remote store talks to its server. Every member has a default that suits a server on the
/// other side of the world; loopback and LAN servers work with them too.
struct http_options
{
    /// Requests in flight at once (the latency one round trip costs is hidden by this many).
    std::size_t max_concurrent_requests = 256;
    /// Connections kept open (reused with keep-alive; HTTP/2 multiplexes requests over them).
    /// Over HTTP/1.1 a connection carries one request at a time, so this, not
    /// max_concurrent_requests, bounds what is on the wire there: as many as the requests in flight
    /// by default (lower it for a server that limits its connections per client).
    std::size_t max_connections = 256;
    /// Attempts after the first, for connection errors, timeouts, 429 and 5xx.
    int max_retries = 4;
    /// The first retry waits up to this long (full jitter), doubling each time, at most retry_cap.
    std::chrono::milliseconds retry_base{100};
    std::chrono::milliseconds retry_cap{5000};
    std::chrono::milliseconds connect_timeout{10000};
    /// One attempt, from its start to its last byte.
    std::chrono::milliseconds request_timeout{60000};
    /// One request, all attempts and waits included.
    std::chrono::milliseconds deadline{180000};
    long max_redirects = 5;
    bool verify_tls = true;
    /// Extra request headers ("Name: value"), sent with every request.
    std::vector<std::string> headers{};
};

namespace detail
{

/// One request: a whole object, a range [begin, end), the last `suffix` bytes, a HEAD, or (for
/// the stores that write) a PUT of `upload` or a DELETE.
struct http_request
{
    enum class kind
    {
        whole,
        range,
        suffix,
        head,
        put,
        erase,
        post ///< a body sent (or none), the answer's body kept (S3's multipart requests)
    };
    std::string url;
    kind what = kind::whole;
    std::uint64_t begin = 0;
    std::uint64_t end = 0;    ///< exclusive (range)
    std::uint64_t suffix = 0; ///< bytes (suffix)
    std::uint64_t max_bytes = UINT64_MAX;
    std::string if_match; ///< sent as If-Match when not empty
    std::string key;      ///< for error messages
    /// put, post: the body. Not owned: the caller waits for the answer, so the bytes outlive every
    /// attempt (a retry sends them again).
    byte_view upload{};
    std::vector<std::string> headers{}; ///< extra headers of this request ("Name: value")
    /// The hex SHA-256 of the body, for a signed request (x-amz-content-sha256); empty: no body.
    std::string payload_sha256{};
};

/// Requests signed with AWS Signature Version 4 by libcurl itself (CURLOPT_AWS_SIGV4): the
/// provider string "aws:amz:REGION:SERVICE" and the credentials. Only the engine holds them;
/// they are never part of a URL, a message or an error.
struct aws_signing
{
    std::string region;
    std::string service = "s3";
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token; ///< sent as x-amz-security-token (temporary credentials)
    /// Temporary credentials (from STS, a container or an instance metadata endpoint): when they expire,
    /// and how to replace them (the function updates the keys, token and expiry in place and
    /// returns false when it could not). Unset for keys that do not expire.
    std::optional<std::chrono::system_clock::time_point> expires{};
    std::function<bool(aws_signing&)> renew{};
    std::string source{}; ///< where temporary credentials came from, for messages
};

/// The SHA-256 of no bytes (the payload hash of a GET, HEAD or DELETE).
inline constexpr const char* empty_payload_sha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The checked answer to one request.
struct http_response
{
    bool found = false;            ///< false: 404 / 410 (an absent key)
    bool changed = false;          ///< 412: If-Match failed (the object was replaced)
    buffer body;                   ///< the bytes asked for (sliced when the server sent more)
    std::uint64_t object_size = 0; ///< the whole object's size, when the server told it
    bool size_known = false;
    std::string etag;
    std::string last_modified;
};

/// Keep only the last `n` bytes of `b` (the window of a suffix sliced from a whole answer).
inline void keep_last(buffer& b, std::uint64_t n) noexcept
{
    if (b.size() > n)
    {
        const std::size_t drop = b.size() - static_cast<std::size_t>(n);
        std::memmove(b.data(), b.data() + drop, b.size() - drop);
        b.resize(b.size() - drop);
    }
}

/// FNV-1a of a validator (ETag, or Last-Modified and size): the generation of a remote object.
inline std::uint64_t generation_of(std::string_view validator) noexcept
{
    std::uint64_t h = 1469598103934665603ull;
    for (char c : validator)
    {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h == 0 ? 1 : h;
}

class curl_engine
{
public:
    class transfer;
    using ticket = std::shared_ptr<transfer>;

    explicit curl_engine(http_options options, std::optional<aws_signing> signing = std::nullopt);
    curl_engine(const curl_engine&) = delete;
    curl_engine& operator=(const curl_engine&) = delete;
    ~curl_engine();

    const http_options& options() const noexcept { return m_opt; }

    /// Queue a request; it starts as soon as a waiter or a driver steps and a slot is free.
    ticket submit(http_request r);
    /// The answer to `t`, driving the engine meanwhile. Throws store.4 / store.5 / limit.1.
    http_response wait(const ticket& t);
    /// submit + wait.
    http_response fetch(http_request r) { return wait(submit(std::move(r))); }
    /// Gives up a ticket nobody will wait for (a prefetch not used): its transfer stops.
    void abandon(const ticket& t);
    /// Drives the engine on the calling thread until `stop` is requested: a thread the caller owns
    /// keeps every transfer moving (reading answers, starting queued and prefetched requests)
    /// while the threads that wait are busy decoding. While one drives, waiters only wait.
    void drive(std::stop_token stop);

    /// The most requests in flight at once so far, and how many were started (tests count them).
    std::size_t peak_in_flight() const;
    std::uint64_t requests_started() const;
    /// Driving steps taken so far, by waiters and drivers (a test checks that an idle driver sleeps).
    std::uint64_t steps_taken() const;

private:
    /// One driving step: start what may start, let libcurl move every transfer, collect what
    /// finished. Called with `lk` held and m_driving false; returns the same way.
    void step(std::unique_lock<std::mutex>& lk);
    void start_ready(std::chrono::steady_clock::time_point now);
    void start(const ticket& t);
    /// Temporary credentials renewed when they are within renew_ahead of expiring (at most once
    /// per renew_pause while they are still valid); false when they have expired and could not be.
    bool fresh_credentials();
    static constexpr std::chrono::minutes renew_ahead{5};
    static constexpr std::chrono::seconds renew_pause{30};
    void finish(const ticket& tp, CURLcode code);
    void complete(transfer& t);
    void fail(transfer& t, std::exception_ptr e);
    bool retry(transfer& t);
    static void release(transfer& t) noexcept;
    static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* self);
    static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self);

    http_options m_opt;
    std::optional<aws_signing> m_signing;
    std::string m_sigv4_provider; // "aws:amz:REGION:SERVICE", kept alive for libcurl
    std::optional<std::chrono::steady_clock::time_point> m_last_renewal;
    CURLM* m_multi = nullptr;
    mutable std::mutex m_mutex;
    std::condition_variable m_step;
    bool m_driving = false;
    int m_drivers = 0;            // threads in drive(): waiters leave the stepping to them
    std::deque<ticket> m_queue;   // submitted, not started (retries wait here for their time)
    std::vector<ticket> m_active; // in the multi handle
    std::size_t m_peak = 0;
    std::uint64_t m_started = 0;
    std::uint64_t m_steps = 0;
    std::minstd_rand m_jitter{0x5eed};
};

/// The state of one request, shared by the engine and the ticket holder.
class curl_engine::transfer
{
public:
    http_request req;

private:
    friend class curl_engine;
    CURL* easy = nullptr;
    curl_slist* headers = nullptr;
    http_response res;
    std::exception_ptr error;
    bool done = false;
    bool abandoned = false;
    int attempt = 0;
    std::chrono::steady_clock::time_point first_start{};
    std::chrono::steady_clock::time_point not_before{};
    // Per attempt:
    long status = 0;           // of the last status line seen
    std::string content_range; // of the final answer
    std::optional<std::uint64_t> content_length;
    std::uint64_t position = 0; // body bytes seen so far (of what the server sends)
    bool sliced = false;        // a 200 answered a range request
    bool stopped_early = false; // the sliced range was complete before the body ended
    bool over_cap = false;
    std::uint64_t over_cap_at = 0;                       // the body size that would have passed the cap
    std::optional<std::uint64_t> misserved_suffix_total; // a 206 to a suffix with another range
    std::uint64_t keep_begin = 0, keep_end = 0;          // a sliced range, in the server's body
    std::string error_body;                              // the first bytes of an error answer
    std::optional<std::chrono::seconds> retry_after;     // a 429 / 503's Retry-After
    char curl_error[CURL_ERROR_SIZE] = {};

    void reset_attempt()
    {
        res.body.clear();
        res.etag.clear();
        res.last_modified.clear();
        status = 0;
        content_range.clear();
        content_length.reset();
        position = 0;
        sliced = stopped_early = over_cap = false;
        over_cap_at = 0;
        misserved_suffix_total.reset();
        keep_begin = keep_end = 0;
        error_body.clear();
        retry_after.reset();
        curl_error[0] = '\0';
    }
};

/******************
 * implementation *
 ******************/

namespace http_detail
{

/// "bytes a-b/total" or "bytes */total": a, b (inclusive) and total (nullopt for "*").
struct content_range
{
    bool has_range = false;
    std::uint64_t first = 0, last = 0;
    std::optional<std::uint64_t> total;
};

inline std::optional<content_range> parse_content_range(std::string_view v)
{
    if (v.substr(0, 6) != "bytes ")
    {
        return std::nullopt;
    }
    v.remove_prefix(6);
    content_range r;
    const auto slash = v.find('/');
    if (slash == std::string_view::npos)
    {
        return std::nullopt;
    }
    auto number = [](std::string_view s, std::uint64_t& out)
    {
        if (s.empty() || s.size() > 19)
        {
            return false;
        }
        std::uint64_t x = 0;
        for (char c : s)
        {
            if (c < '0' || c > '9')
            {
                return false;
            }
            x = x * 10 + static_cast<std::uint64_t>(c - '0');
        }
        out = x;
        return true;
    };
    const std::string_view span = v.substr(0, slash);
    const std::string_view total = v.substr(slash + 1);
    if (total != "*")
    {
        std::uint64_t t = 0;
        if (!number(total, t))
        {
            return std::nullopt;
        }
        r.total = t;
    }
    if (span != "*")
    {
        const auto dash = span.find('-');
        if (dash == std::string_view::npos || !number(span.substr(0, dash), r.first) ||
            !number(span.substr(dash + 1), r.last) || r.last < r.first)
        {
            return std::nullopt;
        }
        r.has_range = true;
    }
    return r;
}

} // namespace http_detail

inline void ensure_curl_global_init()
{
    // curl_global_init is not thread-safe before libcurl 7.84; a function-local static makes the
    // one call race-free whatever the version.
    static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK)
    {
        throw store_error(store_errc::remote,
                          std::string("libcurl could not be initialised: ") + curl_easy_strerror(rc));
    }
}

inline curl_engine::curl_engine(http_options options, std::optional<aws_signing> signing)
    : m_opt(std::move(options))
    , m_signing(std::move(signing))
{
    if (m_signing)
    {
        m_sigv4_provider = "aws:amz:" + m_signing->region + ":" + m_signing->service;
    }
    ensure_curl_global_init();
    m_opt.max_concurrent_requests = std::max<std::size_t>(1, m_opt.max_concurrent_requests);
    m_opt.max_connections = std::max<std::size_t>(1, m_opt.max_connections);
    m_multi = curl_multi_init();
    if (m_multi == nullptr)
    {
        throw store_error(store_errc::remote, "libcurl: curl_multi_init failed");
    }
    curl_multi_setopt(m_multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(m_opt.max_connections));
    curl_multi_setopt(m_multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(m_opt.max_connections));
    curl_multi_setopt(m_multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    // Keep the connections of the pool when a burst of requests ends.
    curl_multi_setopt(m_multi, CURLMOPT_MAXCONNECTS, static_cast<long>(m_opt.max_connections));
}

inline curl_engine::~curl_engine()
{
    for (auto& t : m_active)
    {
        curl_multi_remove_handle(m_multi, t->easy);
        release(*t);
    }
    curl_multi_cleanup(m_multi);
}

inline curl_engine::ticket curl_engine::submit(http_request r)
{
    auto t = std::make_shared<transfer>();
    t->req = std::move(r);
    t->first_start = std::chrono::steady_clock::now();
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_queue.push_back(t);
    }
    curl_multi_wakeup(m_multi); // a driver sleeping in poll starts it now
    return t;
}

inline void curl_engine::abandon(const ticket& t)
{
    std::lock_guard<std::mutex> g(m_mutex);
    t->abandoned = true;
    auto it = std::find(m_queue.begin(), m_queue.end(), t);
    if (it != m_queue.end())
    {
        m_queue.erase(it);
        t->done = true;
    }
    // A started one is removed by the next driving step.
}

inline std::size_t curl_engine::peak_in_flight() const
{
    std::lock_guard<std::mutex> g(m_mutex);
    return m_peak;
}

inline std::uint64_t curl_engine::requests_started() const
{
    std::lock_guard<std::mutex> g(m_mutex);
    return m_started;
}

inline std::uint64_t curl_engine::steps_taken() const
{
    std::lock_guard<std::mutex> g(m_mutex);
    return m_steps;
}

inline http_response curl_engine::wait(const ticket& t)
{
    std::unique_lock<std::mutex> lk(m_mutex);
    while (!t->done)
    {
        if (m_driving || m_drivers > 0)
        {
            m_step.wait(lk);
            continue;
        }
        step(lk);
    }
    if (t->error)
    {
        std::rethrow_exception(t->error);
    }
    return std::move(t->res);
}

inline void curl_engine::drive(std::stop_token stop)
{
    std::unique_lock<std::mutex> lk(m_mutex);
    ++m_drivers;
    {
        // A stop request ends the poll the driver may be sleeping in.
        std::stop_callback wake(stop, [this] { curl_multi_wakeup(m_multi); });
        while (!stop.stop_requested())
        {
            if (m_driving)
            {
                m_step.wait(lk); // a waiter's step started before this driver came
                continue;
            }
            step(lk);
        }
    }
    --m_drivers;
    m_step.notify_all(); // waiters drive again themselves
}

inline void curl_engine::step(std::unique_lock<std::mutex>& lk)
{
    // The lock is not held while libcurl works (submitters only queue).
    m_driving = true;
    ++m_steps;
    const auto now = std::chrono::steady_clock::now();
    start_ready(now);
    // With transfers in the multi handle, libcurl shortens the poll to its own next timer (a
    // timeout, a connection attempt) by itself; 50 ms only bounds how late an abandoned transfer
    // is removed. With nothing at all to do (a driver between reads) the engine sleeps long:
    // submit() and a stop request wake the poll, so a longer sleep delays nothing, and an idle
    // driver no longer costs a wake-up every 50 ms.
    int timeout_ms = m_active.empty() && m_queue.empty() ? 1000 : 50;
    for (const auto& q : m_queue)
    {
        if (q->not_before > now)
        {
            const auto ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(q->not_before - now).count();
            timeout_ms = std::min<int>(timeout_ms, static_cast<int>(std::max<long long>(1, ms)));
        }
        else
        {
            timeout_ms = 0; // waiting for a free slot: come back at once when one frees
        }
    }
    const auto in_multi = static_cast<int>(m_active.size());
    lk.unlock();
    int running = 0;
    curl_multi_perform(m_multi, &running);
    if (running >= in_multi)
    {
        // Nothing ended in that perform: sleep until a socket has news. When something did end,
        // its waiter hears of it now rather than after the poll's timeout.
        curl_multi_poll(m_multi, nullptr, 0, timeout_ms == 0 ? 1 : timeout_ms, nullptr);
        curl_multi_perform(m_multi, &running);
    }
    lk.lock();
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m_multi, &left))
    {
        if (msg->msg != CURLMSG_DONE)
        {
            continue;
        }
        auto it = std::find_if(m_active.begin(), m_active.end(),
                               [&](const ticket& a) { return a->easy == msg->easy_handle; });
        if (it == m_active.end())
        {
            continue;
        }
        ticket done = *it;
        m_active.erase(it);
        const CURLcode code = msg->data.result;
        curl_multi_remove_handle(m_multi, done->easy);
        finish(done, code);
    }
    // Abandoned transfers still running are stopped here (only the driver touches the multi).
    for (auto it = m_active.begin(); it != m_active.end();)
    {
        if ((*it)->abandoned)
        {
            curl_multi_remove_handle(m_multi, (*it)->easy);
            release(**it);
            (*it)->done = true;
            it = m_active.erase(it);
        }
        else
        {
            ++it;
        }
    }
    m_driving = false;
    m_step.notify_all();
}

inline void curl_engine::start_ready(std::chrono::steady_clock::time_point now)
{
    for (auto it = m_queue.begin(); it != m_queue.end() && m_active.size() < m_opt.max_concurrent_requests;)
    {
        if ((*it)->not_before > now)
        {
            ++it;
            continue;
        }
        ticket t = *it;
        it = m_queue.erase(it);
        start(t);
    }
}

inline bool curl_engine::fresh_credentials()
{
    if (!m_signing || !m_signing->expires || !m_signing->renew)
    {
        return true;
    }
    const auto now = std::chrono::system_clock::now();
    if (now + renew_ahead < *m_signing->expires)
    {
        return true;
    }
    const auto steady = std::chrono::steady_clock::now();
    const bool expired = now >= *m_signing->expires;
    if (!expired && m_last_renewal && steady - *m_last_renewal < renew_pause)
    {
        return true; // renewed a moment ago and the endpoint gave no later expiry: use them
    }
    m_last_renewal = steady;
    // Under the engine's lock: a few metadata requests, once per credentials' lifetime; requests
    // signed meanwhile would carry keys about to lapse.
    bool renewed = false;
    try
    {
        renewed = m_signing->renew(*m_signing);
    }
    catch (const std::exception&)
    {
        renewed = false;
    }
    return renewed || !expired;
}

inline void curl_engine::start(const ticket& tp)
{
    transfer& t = *tp;
    t.reset_attempt();
    ++t.attempt;
    if (!fresh_credentials())
    {
        store_error err(store_errc::denied, "the temporary AWS credentials from the " + m_signing->source +
                                                " have expired and could not be renewed");
        if (!t.req.key.empty())
        {
            err.with_key(t.req.key);
        }
        fail(t, std::make_exception_ptr(err));
        return;
    }
    if (t.easy == nullptr)
    {
        t.easy = curl_easy_init();
        if (t.easy == nullptr)
        {
            fail(t,
                 std::make_exception_ptr(store_error(store_errc::remote, "libcurl: curl_easy_init failed")));
            return;
        }
    }
    else
    {
        curl_easy_reset(t.easy);
    }
    CURL* e = t.easy;
    curl_easy_setopt(e, CURLOPT_URL, t.req.url.c_str());
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.curl_error);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, m_opt.max_redirects > 0 ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, m_opt.max_redirects);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_opt.connect_timeout.count()));
    // An attempt ends at the request's deadline at the latest (a retry started near it must not
    // run a whole request_timeout past it); 0 would mean no timeout, hence at least 1 ms.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t.first_start + m_opt.deadline -
                                                                            std::chrono::steady_clock::now());
    curl_easy_setopt(
        e, CURLOPT_TIMEOUT_MS,
        static_cast<long>(std::max<long long>(1, std::min(m_opt.request_timeout, left).count())));
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, m_opt.verify_tls ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, m_opt.verify_tls ? 2L : 0L);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L); // prefer multiplexing on an HTTP/2 connection
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &curl_engine::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &curl_engine::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    std::string range;
    curl_slist_free_all(t.headers);
    t.headers = nullptr;
    switch (t.req.what)
    {
        case http_request::kind::head:
            curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
            break;
        case http_request::kind::put:
        case http_request::kind::post:
        {
            // POSTFIELDS under the PUT or POST method: the body is in memory (sent again on a retry, hashed
            // by the signer). No `Expect: 100-continue` round trip before it where that can be helped.
            static const char nothing = 0;
            const bool put = t.req.what == http_request::kind::put;
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, put ? "PUT" : "POST");
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t.req.upload.size()));
            curl_easy_setopt(e, CURLOPT_POSTFIELDS,
                             t.req.upload.empty() ? &nothing
                                                  : reinterpret_cast<const char*>(t.req.upload.data()));
            t.headers = curl_slist_append(t.headers, put ? "Content-Type: application/octet-stream"
                                                         : "Content-Type: application/xml");
            if (!m_signing)
            {
                // libcurl 7.88's signer would sign an "expect" header it then does not send.
                t.headers = curl_slist_append(t.headers, "Expect:");
            }
            break;
        }
        case http_request::kind::erase:
            curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
            break;
        case http_request::kind::range:
            range = std::to_string(t.req.begin) + "-" +
                    (t.req.end == UINT64_MAX ? std::string() : std::to_string(t.req.end - 1));
            break;
        case http_request::kind::suffix:
            range = "-" + std::to_string(t.req.suffix);
            break;
        case http_request::kind::whole:
            break;
    }
    if (!range.empty())
    {
        curl_easy_setopt(e, CURLOPT_RANGE, range.c_str()); // copied by libcurl
    }
    for (const auto& h : m_opt.headers)
    {
        t.headers = curl_slist_append(t.headers, h.c_str());
    }
    for (const auto& h : t.req.headers)
    {
        t.headers = curl_slist_append(t.headers, h.c_str());
    }
    if (m_signing)
    {
        // libcurl computes the signature; the payload hash it signs is sent as S3 requires.
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, m_sigv4_provider.c_str());
        curl_easy_setopt(e, CURLOPT_USERNAME, m_signing->access_key_id.c_str());
        curl_easy_setopt(e, CURLOPT_PASSWORD, m_signing->secret_access_key.c_str());
        const std::string& hash =
            t.req.payload_sha256.empty() ? std::string(empty_payload_sha256) : t.req.payload_sha256;
        t.headers = curl_slist_append(t.headers, ("x-amz-content-sha256: " + hash).c_str());
        if (!m_signing->session_token.empty())
        {
            t.headers =
                curl_slist_append(t.headers, ("x-amz-security-token: " + m_signing->session_token).c_str());
        }
    }
    if (!t.req.if_match.empty())
    {
        t.headers = curl_slist_append(t.headers, ("If-Match: " + t.req.if_match).c_str());
    }
    if (t.headers != nullptr)
    {
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    }
    if (curl_multi_add_handle(m_multi, e) != CURLM_OK)
    {
        fail(t, std::make_exception_ptr(
                    store_error(store_errc::remote, "libcurl: curl_multi_add_handle failed")));
        return;
    }
    m_active.push_back(tp);
    ++m_started;
    m_peak = std::max(m_peak, m_active.size());
}

inline std::size_t curl_engine::on_header(char* data, std::size_t size, std::size_t n, void* self)
{
    auto& t = *static_cast<transfer*>(self);
    std::string_view line(data, size * n);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n'))
    {
        line.remove_suffix(1);
    }
    if (line.substr(0, 5) == "HTTP/")
    {
        // A new answer (after a redirect or a 100 Continue): forget the previous one's headers.
        const auto sp = line.find(' ');
        t.status = sp == std::string_view::npos ? 0 : std::atol(std::string(line.substr(sp + 1, 3)).c_str());
        t.content_range.clear();
        t.content_length.reset();
        t.res.etag.clear();
        t.res.last_modified.clear();
        return size * n;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
    {
        return size * n;
    }
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    {
        value.remove_prefix(1);
    }
    if (name == "etag")
    {
        t.res.etag = value;
    }
    else if (name == "last-modified")
    {
        t.res.last_modified = value;
    }
    else if (name == "content-range")
    {
        t.content_range = value;
    }
    else if (name == "retry-after")
    {
        // Delay-seconds or an HTTP-date (RFC 9110 10.2.3); anything else is ignored.
        const std::string v(value);
        char* end = nullptr;
        const long long secs = std::strtoll(v.c_str(), &end, 10);
        if (end != v.c_str() && *end == '\0' && secs >= 0)
        {
            t.retry_after = std::chrono::seconds(std::min<long long>(secs, 86400));
        }
        else if (const time_t when = curl_getdate(v.c_str(), nullptr); when != -1)
        {
            const long long d = static_cast<long long>(when) - static_cast<long long>(std::time(nullptr));
            t.retry_after = std::chrono::seconds(std::clamp<long long>(d, 0, 86400));
        }
    }
    else if (name == "content-length")
    {
        char* end = nullptr;
        const std::string v(value);
        const unsigned long long len = std::strtoull(v.c_str(), &end, 10);
        if (end != v.c_str() && *end == '\0')
        {
            t.content_length = len;
        }
    }
    return size * n;
}

inline std::size_t curl_engine::on_body(char* data, std::size_t size, std::size_t n, void* self)
{
    auto& t = *static_cast<transfer*>(self);
    const std::size_t len = size * n;
    if (t.abandoned)
    {
        return 0;
    }
    if (t.status != 200 && t.status != 206)
    {
        // An error answer: keep its start for the message.
        if (t.error_body.size() < 512)
        {
            t.error_body.append(data, std::min<std::size_t>(len, 512 - t.error_body.size()));
        }
        return len;
    }
    if (t.status == 206 && t.req.what == http_request::kind::suffix && t.position == 0 && t.res.body.empty())
    {
        // Some servers (s3rver among them) read `bytes=-n` as `bytes=0-n`: they answer with the
        // first n + 1 bytes and the object's size. That exact answer is re-asked as the explicit
        // range of the last n bytes; any other range is a lie the checks below refuse (store.5).
        const auto cr = http_detail::parse_content_range(t.content_range);
        if (cr && cr->has_range && cr->total && cr->first == 0 && cr->last == t.req.suffix &&
            cr->last + 1 < *cr->total)
        {
            t.misserved_suffix_total = *cr->total;
            return 0;
        }
    }
    const bool ranged = t.req.what == http_request::kind::range || t.req.what == http_request::kind::suffix;
    if (t.status == 200 && ranged)
    {
        // The server ignored the range and sends the whole object: keep only the range.
        if (!t.sliced)
        {
            t.sliced = true;
            if (t.req.what == http_request::kind::range)
            {
                t.keep_begin = t.req.begin;
                t.keep_end = t.req.end;
            }
            else if (t.content_length)
            {
                const std::uint64_t total = *t.content_length;
                t.keep_begin = total - std::min(total, t.req.suffix);
                t.keep_end = total;
            }
            else
            {
                t.keep_begin = 0; // no length: a sliding window of the last `suffix` bytes
                t.keep_end = UINT64_MAX;
            }
        }
        const std::uint64_t at = t.position;
        t.position += len;
        const std::uint64_t b = std::max(at, t.keep_begin);
        const std::uint64_t e = std::min(t.position, t.keep_end);
        if (e > b)
        {
            t.res.body.append(byte_view(reinterpret_cast<const std::byte*>(data) + (b - at),
                                        static_cast<std::size_t>(e - b)));
        }
        if (t.req.what == http_request::kind::suffix && t.keep_end == UINT64_MAX &&
            t.res.body.size() > 2 * t.req.suffix + (64u << 10))
        {
            // Keep the window bounded: drop what can no longer be among the last bytes.
            keep_last(t.res.body, t.req.suffix);
        }
        if (t.res.body.size() > t.req.max_bytes && t.keep_end != UINT64_MAX)
        {
            t.over_cap = true;
            t.over_cap_at = t.res.body.size();
            return 0;
        }
        if (t.req.what == http_request::kind::range && t.position >= t.keep_end)
        {
            t.stopped_early = true; // the range is complete: the rest is not needed
            return 0;
        }
        return len;
    }
    if (t.res.body.size() + len > t.req.max_bytes)
    {
        t.over_cap = true;
        t.over_cap_at = t.res.body.size() + len;
        return 0;
    }
    t.position += len;
    t.res.body.append(byte_view(reinterpret_cast<const std::byte*>(data), len));
    return len;
}

inline bool curl_engine::retry(transfer& t)
{
    const auto now = std::chrono::steady_clock::now();
    if (t.attempt > m_opt.max_retries || t.abandoned)
    {
        return false;
    }
    // Exponential backoff with full jitter: a random wait in [0, min(cap, base * 2^k)].
    const auto ceiling =
        std::min<long long>(m_opt.retry_cap.count(), m_opt.retry_base.count() << std::min(t.attempt - 1, 20));
    std::uniform_int_distribution<long long> pick(0, std::max<long long>(0, ceiling));
    auto wait = std::chrono::milliseconds(pick(m_jitter));
    if (t.retry_after && (t.status == 429 || t.status == 503))
    {
        // The server said when to come back: not sooner (and not at all past the deadline).
        wait = std::max<std::chrono::milliseconds>(wait, *t.retry_after);
    }
    if (now + wait > t.first_start + m_opt.deadline)
    {
        return false;
    }
    t.not_before = now + wait;
    return true;
}

inline void curl_engine::fail(transfer& t, std::exception_ptr e)
{
    t.error = std::move(e);
    t.done = true;
}

inline void curl_engine::release(transfer& t) noexcept
{
    // The easy handle must be out of the multi handle already.
    if (t.easy != nullptr)
    {
        curl_easy_cleanup(t.easy);
        t.easy = nullptr;
    }
    curl_slist_free_all(t.headers);
    t.headers = nullptr;
}

inline void curl_engine::complete(transfer& t)
{
    t.done = true;
    release(t);
}

inline void curl_engine::finish(const ticket& tp, CURLcode code)
{
    transfer& t = *tp;
    const std::string url = redact_url(t.req.url);
    auto where = [&](store_error e) -> std::exception_ptr
    {
        if (!t.req.key.empty())
        {
            e.with_key(t.req.key);
        }
        return std::make_exception_ptr(std::move(e));
    };
    auto requeue = [&]
    {
        if (!retry(t))
        {
            return false;
        }
        m_queue.push_back(tp); // started again by a driving step once its wait is over
        return true;
    };
    auto give_up = [&](const std::string& why)
    {
        complete(t);
        fail(t, where(store_error(store_errc::remote, why + " (" + url + ", " + std::to_string(t.attempt) +
                                                          (t.attempt == 1 ? " attempt)" : " attempts)"))));
    };
    if (t.abandoned)
    {
        complete(t);
        return;
    }
    if (t.over_cap)
    {
        complete(t);
        limit_exceeded e("max_chunk_bytes", t.over_cap_at, t.req.max_bytes);
        if (!t.req.key.empty())
        {
            e.with_key(t.req.key);
        }
        fail(t, std::make_exception_ptr(std::move(e)));
        return;
    }
    if (t.misserved_suffix_total)
    {
        // The suffix as an explicit range of the size the server told (one more request).
        const std::uint64_t total = *t.misserved_suffix_total;
        if (total == 0)
        {
            complete(t);
            t.res.found = true;
            t.res.size_known = true;
            t.res.object_size = 0;
            t.res.body.clear();
            return;
        }
        t.req.what = http_request::kind::range;
        t.req.begin = total - std::min(total, t.req.suffix);
        t.req.end = total;
        t.not_before = {};
        m_queue.push_back(tp);
        return;
    }
    const bool ok = code == CURLE_OK || (code == CURLE_WRITE_ERROR && t.stopped_early);
    if (!ok)
    {
        std::string why = std::string("HTTP request failed: ") +
                          (t.curl_error[0] != '\0' ? t.curl_error : curl_easy_strerror(code));
        const bool transient = code == CURLE_COULDNT_CONNECT || code == CURLE_OPERATION_TIMEDOUT ||
                               code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR ||
                               code == CURLE_GOT_NOTHING || code == CURLE_PARTIAL_FILE ||
                               code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM ||
                               code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_SSL_CONNECT_ERROR;
        if (transient && requeue())
        {
            return;
        }
        give_up(why);
        return;
    }
    const long st = t.status;
    if (st == 429 || st == 500 || st == 502 || st == 503 || st == 504)
    {
        if (requeue())
        {
            return;
        }
        give_up("HTTP " + std::to_string(st));
        return;
    }
    if (st == 416 && t.req.what != http_request::kind::head)
    {
        const auto cr = http_detail::parse_content_range(t.content_range);
        if (!cr || !cr->total)
        {
            // Nothing of the object is in the range, and the size is not in Content-Range (S3
            // says it only in its XML body): a HEAD tells it.
            t.req.what = http_request::kind::head;
            t.not_before = {};
            m_queue.push_back(tp);
            return;
        }
    }
    complete(t);
    auto snippet_of_error = [&]
    {
        // An XML declaration says nothing: skip it, so an S3 <Error>'s Code and Message show.
        std::string_view body = t.error_body;
        if (body.substr(0, 5) == "<?xml" && body.find("?>") != std::string_view::npos)
        {
            body.remove_prefix(body.find("?>") + 2);
        }
        std::string snippet;
        for (char c : body.substr(0, 300))
        {
            snippet += (c >= 32 && c < 127) ? c : ' ';
        }
        return snippet;
    };
    if (st == 401 || st == 403)
    {
        // An S3 server says why in an XML <Error> (Code, Message): its start is in the message.
        std::string why =
            "HTTP " + std::to_string(st) + " (the server refused the credentials or the signature)";
        if (!t.error_body.empty())
        {
            why += ": " + snippet_of_error();
        }
        fail(t, where(store_error(store_errc::denied, why + " (" + url + ")")));
        return;
    }
    if (t.req.what == http_request::kind::put || t.req.what == http_request::kind::erase ||
        t.req.what == http_request::kind::post)
    {
        if (st == 200 || st == 201 || st == 204 || (st == 404 && t.req.what == http_request::kind::erase))
        {
            t.res.found = st != 404;
            if (t.req.what != http_request::kind::post) // a POST's answer is its result document
            {
                t.res.body.clear();
            }
            return;
        }
        std::string why = "HTTP " + std::to_string(st) + " to a " +
                          (t.req.what == http_request::kind::put    ? "PUT"
                           : t.req.what == http_request::kind::post ? "POST"
                                                                    : "DELETE");
        if (!t.error_body.empty())
        {
            why += ": " + snippet_of_error();
        }
        fail(t, where(store_error(store_errc::remote, why + " (" + url + ")")));
        return;
    }
    if (st == 404 || st == 410)
    {
        t.res.found = false;
        t.res.body.clear();
        return;
    }
    if (st == 412)
    {
        t.res.found = true;
        t.res.changed = true;
        t.res.body.clear();
        return;
    }
    auto protocol = [&](const std::string& why)
    { fail(t, where(store_error(store_errc::remote_protocol, why + " (" + url + ")"))); };
    if (st == 416)
    {
        // Nothing of the object lies in the range: an empty answer, if the server says the size.
        const auto cr = http_detail::parse_content_range(t.content_range);
        if (!cr || !cr->total || cr->has_range)
        {
            protocol("416 without the object's size in Content-Range");
            return;
        }
        t.res.found = true;
        t.res.object_size = *cr->total;
        t.res.size_known = true;
        t.res.body.clear();
        return;
    }
    if (st != 200 && st != 206)
    {
        std::string why = "HTTP " + std::to_string(st);
        if (!t.error_body.empty())
        {
            why += ": " + snippet_of_error();
        }
        fail(t, where(store_error(store_errc::remote, why + " (" + url + ")")));
        return;
    }
    t.res.found = true;
    const bool head = t.req.what == http_request::kind::head;
    if (st == 206)
    {
        const auto cr = http_detail::parse_content_range(t.content_range);
        if (head || t.req.what == http_request::kind::whole || !cr || !cr->has_range)
        {
            protocol("206 with a Content-Range of \"" + t.content_range + "\" to a request for " +
                     (t.req.what == http_request::kind::range
                          ? "bytes " + std::to_string(t.req.begin) + "-" + std::to_string(t.req.end - 1)
                          : std::string("the whole object")));
            return;
        }
        std::uint64_t want_first = 0;
        std::uint64_t want_last = 0;
        if (t.req.what == http_request::kind::range)
        {
            want_first = t.req.begin;
            want_last = t.req.end - 1;
            if (t.req.end == UINT64_MAX && !cr->total)
            {
                protocol("206 to an open-ended range without the object's size");
                return;
            }
            if (cr->total && *cr->total < t.req.end)
            {
                want_last = *cr->total - 1; // a range past the end is served up to the end
            }
        }
        else
        {
            if (!cr->total)
            {
                protocol("206 to a suffix request without the object's size");
                return;
            }
            want_first = *cr->total - std::min(*cr->total, t.req.suffix);
            want_last = *cr->total - 1;
        }
        if (cr->first != want_first || cr->last != want_last)
        {
            protocol("Content-Range \"" + t.content_range + "\" does not answer the range requested (bytes " +
                     std::to_string(want_first) + "-" + std::to_string(want_last) + ")");
            return;
        }
        if (t.res.body.size() != cr->last - cr->first + 1)
        {
            protocol("the body has " + std::to_string(t.res.body.size()) + " bytes, Content-Range \"" +
                     t.content_range + "\" promised " + std::to_string(cr->last - cr->first + 1));
            return;
        }
        if (cr->total)
        {
            t.res.object_size = *cr->total;
            t.res.size_known = true;
        }
        return;
    }
    // 200: the whole object (sliced above when a range was asked for).
    if (head)
    {
        if (t.content_length)
        {
            t.res.object_size = *t.content_length;
            t.res.size_known = true;
        }
        return;
    }
    if (t.sliced)
    {
        if (t.content_length)
        {
            t.res.object_size = *t.content_length;
            t.res.size_known = true;
        }
        else if (!t.stopped_early)
        {
            t.res.object_size = t.position;
            t.res.size_known = true;
        }
        if (t.req.what == http_request::kind::suffix && t.keep_end == UINT64_MAX)
        {
            keep_last(t.res.body, t.req.suffix);
        }
        return;
    }
    if (t.content_length && *t.content_length != t.res.body.size())
    {
        protocol("the body has " + std::to_string(t.res.body.size()) + " bytes, Content-Length promised " +
                 std::to_string(*t.content_length));
        return;
    }
    t.res.object_size = t.res.body.size();
    t.res.size_known = true;
}

} // namespace detail
} // namespace zarrxt
