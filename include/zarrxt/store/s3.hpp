/** @file store/s3.hpp
 *  `s3_store`: a store in an S3 bucket (AWS or any S3-compatible server): read, write, list,
 *  erase. Needs libcurl, libcrypto and expat (ZARRXT_HAS_S3; include this header explicitly).
 *
 *  Requests are signed with AWS Signature Version 4 by libcurl (CURLOPT_AWS_SIGV4); the payload
 *  hash it signs (x-amz-content-sha256) and the Content-MD5 of every PUT come from libcrypto.
 *  Reads are those of http_store (ranges, suffix ranges, handles pinned with If-Match, many
 *  requests in flight on one engine), on a signing engine. A PUT replaces an object atomically,
 *  so an array written here needs no temporary keys to be crash-safe; `erase` is a DELETE (also
 *  of chunks that became all fill). An object over `multipart_threshold` is a multipart upload
 *  (CreateMultipartUpload, its parts in flight together, CompleteMultipartUpload): the object
 *  appears whole at the completion or not at all; a failed upload is aborted. Listing is
 *  ListObjectsV2, every page (continuation tokens), parsed with expat.
 *
 *  Credentials, region and endpoint come from s3_options, else from the standard variables:
 *  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION / AWS_DEFAULT_REGION,
 *  AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else from the profile (s3_options::profile, AWS_PROFILE,
 *  else "default") of the AWS shared files: ~/.aws/credentials (AWS_SHARED_CREDENTIALS_FILE) and
 *  ~/.aws/config (AWS_CONFIG_FILE; region, endpoint_url, and credentials too); temporary
 *  credentials from a web identity token exchanged at STS (AWS_WEB_IDENTITY_TOKEN_FILE and
 *  AWS_ROLE_ARN, before the files), else from the container endpoint
 *  (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI) or the EC2 instance metadata service
 *  (IMDSv2) after them (detail/aws_credentials.hpp), renewed by the engine before they
 *  expire. Without credentials requests go unsigned (public buckets). Credentials live in the
 *  engine only: no URL, message or error contains them.
 *
 *  No locks exist on S3: lock_key() serialises the writers of one process only. Two processes
 *  writing parts of one shard at once can each replace the whole shard (the last PUT wins, the
 *  other's part is lost); give each writer whole shards (docs/safety.md).
 */
#pragma once

#include "../detail/aws_credentials.hpp"
#include "../detail/digest.hpp"
#include "../detail/posted_write.hpp"
#include "../detail/s3_xml.hpp"
#include "concepts.hpp"
#include "curl_engine.hpp"
#include "http.hpp"
#include "key.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// How a bucket appears in URLs: https://bucket.host/key (virtual host) or https://host/bucket/key
/// (path style). `automatic`: virtual host on AWS's own endpoints for bucket names that are valid
/// host names without dots, path style elsewhere (what S3-compatible servers expect).
enum class s3_addressing
{
    automatic,
    virtual_host,
    path
};

struct s3_options
{
    std::string region{}; ///< empty: AWS_REGION, AWS_DEFAULT_REGION, else "us-east-1"
    std::string
        endpoint{}; ///< "http(s)://host[:port]"; empty: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS
    std::string access_key_id{};     ///< empty: AWS_ACCESS_KEY_ID
    std::string secret_access_key{}; ///< empty: AWS_SECRET_ACCESS_KEY
    std::string session_token{};     ///< empty: AWS_SESSION_TOKEN
    bool anonymous = false;          ///< unsigned requests even when credentials are set
    /// The profile of the AWS shared files; empty: AWS_PROFILE, else "default". A profile named
    /// here or in AWS_PROFILE that neither file has is store.8.
    std::string profile{};
    /// When nothing above gives a key: ask the EC2 instance metadata service (IMDSv2) for the
    /// instance role's credentials (AWS_EC2_METADATA_DISABLED=true turns it off too). The container
    /// endpoint (AWS_CONTAINER_CREDENTIALS_*) is asked before it whenever its variables are set.
    bool instance_metadata = true;
    s3_addressing addressing = s3_addressing::automatic;
    std::size_t list_page_size = 1000;             ///< max-keys of one ListObjectsV2 page
    std::uint64_t max_list_page_bytes = 64u << 20; ///< a page answer larger than this is refused
    /// An object larger than this is written as a multipart upload, its parts in flight together
    /// (at most 5 GiB: S3 takes no larger single PUT).
    std::uint64_t multipart_threshold = std::uint64_t{64} << 20;
    /// The size of every part but the last: at least 5 MiB (S3's minimum), and grown when an object
    /// would need more than 10,000 parts (S3's maximum).
    std::uint64_t multipart_part_size = std::uint64_t{16} << 20;
    http_options http{};
};

class s3_store
{
public:
    /// The objects of `bucket` under `prefix` ("" or "data/volume.zarr"); keys are relative to it.
    explicit s3_store(std::string bucket, std::string prefix = {}, s3_options options = {});
    /// "s3://bucket" or "s3://bucket/prefix".
    static s3_store from_url(std::string_view url, s3_options options = {});

    using object_handle = http_store::object_handle;

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return m_reader.read(key, r, max_bytes);
    }
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes,
                                       buffer& out) const
    {
        return m_reader.read_to(key, r, max_bytes, out);
    }
    std::optional<object_info> stat(std::string_view key) const { return m_reader.stat(key); }
    std::optional<object_handle> open_object(std::string_view key) const { return m_reader.open_object(key); }
    std::optional<object_handle> open_object_and_read(std::string_view key, byte_range r,
                                                      std::uint64_t max_bytes, buffer& out) const
    {
        return m_reader.open_object_and_read(key, r, max_bytes, out);
    }

    void prefetch_objects(std::span<const std::string> keys, std::uint64_t max_bytes) const
    {
        m_reader.prefetch_objects(keys, max_bytes);
    }
    void cancel_prefetch(std::span<const std::string> keys) const { m_reader.cancel_prefetch(keys); }
    std::size_t prefetched_pending() const { return m_reader.prefetched_pending(); }

    /// PUT (atomic replace), with Content-MD5 and the signed SHA-256 of the body; a multipart
    /// upload above `multipart_threshold` (objects up to 5 TiB).
    void set(std::string_view key, byte_view data);
    /// The same PUT, started now and answered later (posting_store): a write of many chunks keeps
    /// up to max_concurrent_requests of them in flight instead of paying a round trip each.
    detail::posted_write post(std::string_view key, buffer bytes);
    /// Waits for a PUT of `key` this store still has in flight (a read-modify-write reads after it).
    void wait_posted(std::string_view key) const { m_posted->wait_for(key); }
    /// DELETE; whether the key existed (a HEAD first: S3 answers a DELETE of nothing with 204).
    bool erase(std::string_view key);
    /// Every key below `prefix` (all pages), sorted.
    std::vector<std::string> list(std::string_view prefix) const;
    /// The names directly below `prefix` (objects and common prefixes), sorted.
    std::vector<std::string> list_dir(std::string_view prefix) const;
    /// Serialises read-modify-write of one key within this process (S3 has no locks).
    std::unique_lock<std::mutex> lock_key(std::string_view key) const { return m_locks->lock(key); }

    const std::string& bucket() const noexcept { return m_bucket; }
    const std::string& prefix() const noexcept { return m_prefix; }
    /// "s3://bucket/prefix" (what the tool and errors show).
    std::string url() const { return "s3://" + m_bucket + (m_prefix.empty() ? "" : "/" + m_prefix); }
    /// The HTTP(S) URL of the store's root (no credentials: they are never in a URL).
    const std::string& base_url() const noexcept { return m_reader.base_url(); }
    bool signs_requests() const noexcept { return m_signed; }
    /// Keeps this store's requests moving on the calling thread until `stop` is requested
    /// (http_store::drive): reads, and posted PUTs, which otherwise start only when a writer waits.
    void drive(std::stop_token stop) const
    {
        const auto engine = m_engine;
        engine->drive(std::move(stop));
    }
    std::size_t peak_in_flight() const { return m_engine->peak_in_flight(); }
    std::uint64_t requests_started() const { return m_engine->requests_started(); }

private:
    struct setup
    {
        std::string bucket, prefix, bucket_url;
        bool signs = false;
        std::shared_ptr<detail::curl_engine> engine;
    };
    static setup configure(std::string bucket, std::string prefix, s3_options& options);
    s3_store(setup s, const s3_options& options);

    /// ListObjectsV2 pages for the bucket prefix `p` (delimiter "/" when `dir`); errors name `key`.
    std::vector<detail::s3_list_page> list_pages(const std::string& p, bool dir, std::string_view key) const;
    /// The PUT of `data` as `key` (Content-MD5, and the body's SHA-256 when signed); `data` must
    /// outlive the request.
    detail::http_request put_request(std::string_view key, byte_view data) const;
    /// The bucket-relative prefix of a store key prefix ("a/b" -> "prefix/a/b/").
    std::string bucket_prefix_of(std::string_view prefix) const;
    /// `data` as `key` in parts (set() above the threshold).
    void multipart_set(std::string_view key, byte_view data) const;
    /// Whether `key` now holds `data` as the multipart upload of the parts with `part_etags` leaves
    /// it: its size, and its ETag either the MD5 of the parts' MD5s with "-N" (AWS, MinIO) or the
    /// MD5 of the whole object (servers that hash what they assemble, s3rver among them).
    bool completed_as(std::string_view key, byte_view data, const std::vector<std::string>& part_etags) const;
    /// A POST to `url` (an XML body or none) answered by a result document; its <Error> is store.4.
    detail::s3_result post_for_result(const std::string& url, std::string_view key, std::string body,
                                      const char* what) const;

    std::string m_bucket;
    std::string m_prefix;
    std::string m_bucket_url; // the bucket's root URL (list requests go here)
    std::size_t m_page_size;
    std::uint64_t m_max_page_bytes;
    std::uint64_t m_multipart_threshold;
    std::uint64_t m_part_size;
    bool m_signed = false;
    std::shared_ptr<detail::curl_engine> m_engine;
    http_store m_reader;
    std::shared_ptr<detail::key_lock_table> m_locks = std::make_shared<detail::key_lock_table>();
    std::shared_ptr<detail::posted_registry> m_posted = std::make_shared<detail::posted_registry>();
};

/******************
 * implementation *
 ******************/

namespace detail
{


/// The `name = value` settings of section `[section]` of an AWS shared file (an INI file, as the
/// AWS CLI writes it), names lower-cased; nullopt when the file cannot be read or has no such
/// section. Indented lines (a service's nested settings, `s3 =` and below) are not read.
inline std::optional<std::map<std::string, std::string>> aws_ini_section(const std::string& path,
                                                                         const std::string& section)
{
    std::ifstream in(path);
    if (path.empty() || !in)
    {
        return std::nullopt;
    }
    const auto trim = [](std::string_view v)
    {
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        {
            v.remove_prefix(1);
        }
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r'))
        {
            v.remove_suffix(1);
        }
        return std::string(v);
    };
    std::map<std::string, std::string> out;
    bool inside = false;
    bool seen = false;
    std::string raw;
    while (std::getline(in, raw))
    {
        const std::string line = trim(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';')
        {
            continue;
        }
        if (line.front() == '[')
        {
            const auto close = line.find(']');
            inside =
                close != std::string::npos && trim(std::string_view(line).substr(1, close - 1)) == section;
            seen = seen || inside;
            continue;
        }
        const auto eq = line.find('=');
        if (!inside || raw.front() == ' ' || raw.front() == '\t' || eq == std::string::npos)
        {
            continue;
        }
        std::string name = trim(std::string_view(line).substr(0, eq));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
        out[name] = trim(std::string_view(line).substr(eq + 1));
    }
    if (!seen)
    {
        return std::nullopt;
    }
    return out;
}

inline bool is_valid_key(std::string_view key)
{
    try
    {
        validate_key(key);
        return true;
    }
    catch (const store_error&)
    {
        return false;
    }
}

/// An ETag without its quotes (and without a weak validator's "W/").
inline std::string unquoted_etag(std::string_view e)
{
    if (e.substr(0, 2) == "W/")
    {
        e.remove_prefix(2);
    }
    if (e.size() >= 2 && e.front() == '"' && e.back() == '"')
    {
        e = e.substr(1, e.size() - 2);
    }
    return std::string(e);
}

/// The ETag AWS gives the object a multipart upload of these parts makes: the hex MD5 of the
/// parts' binary MD5s (each part's ETag) in order, "-", their count. Empty when a part's ETag is
/// not an MD5 in hex (SSE-KMS and SSE-C parts), so it matches nothing.
inline std::string multipart_etag(const std::vector<std::string>& part_etags)
{
    const auto nibble = [](char c) -> int
    {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
    };
    std::string digests;
    for (const auto& p : part_etags)
    {
        const std::string h = unquoted_etag(p);
        if (h.size() != 32)
        {
            return {};
        }
        for (std::size_t i = 0; i < 32; i += 2)
        {
            const int hi = nibble(h[i]);
            const int lo = nibble(h[i + 1]);
            if (hi < 0 || lo < 0)
            {
                return {};
            }
            digests += static_cast<char>((hi << 4) | lo);
        }
    }
    return md5_hex(byte_view(reinterpret_cast<const std::byte*>(digests.data()), digests.size())) + "-" +
           std::to_string(part_etags.size());
}

/// A bucket name that can be the first label of a host name (and of a TLS certificate's name).
inline bool dns_compatible_bucket(std::string_view b)
{
    if (b.size() < 3 || b.size() > 63 || b.front() == '-' || b.back() == '-')
    {
        return false;
    }
    return std::all_of(b.begin(), b.end(),
                       [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

} // namespace detail

inline s3_store::s3_store(std::string bucket, std::string prefix, s3_options options)
    : s3_store(configure(std::move(bucket), std::move(prefix), options), options)
{
}

inline s3_store::s3_store(setup s, const s3_options& options)
    : m_bucket(std::move(s.bucket))
    , m_prefix(std::move(s.prefix))
    , m_bucket_url(std::move(s.bucket_url))
    , m_page_size(std::max<std::size_t>(1, options.list_page_size))
    , m_max_page_bytes(options.max_list_page_bytes)
    , m_multipart_threshold(std::min<std::uint64_t>(options.multipart_threshold, std::uint64_t{5} << 30))
    , m_part_size(std::max<std::uint64_t>(options.multipart_part_size, std::uint64_t{5} << 20))
    , m_signed(s.signs)
    , m_engine(s.engine)
    , m_reader(m_bucket_url + (m_prefix.empty() ? "" : "/" + detail::percent_encode_key(m_prefix)),
               std::move(s.engine))
{
}

inline auto s3_store::configure(std::string bucket, std::string prefix, s3_options& options) -> setup
{
    setup s;
    s.bucket = std::move(bucket);
    s.prefix = std::move(prefix);
    while (!s.prefix.empty() && s.prefix.back() == '/')
    {
        s.prefix.pop_back();
    }
    if (s.bucket.empty() || s.bucket.find('/') != std::string::npos)
    {
        throw store_error(store_errc::invalid_key, "s3_store: \"" + s.bucket + "\" is not a bucket name");
    }
    if (!s.prefix.empty())
    {
        validate_key(s.prefix);
    }
    // The AWS shared files, read for what neither the options nor the variables say.
    const std::string named_profile = detail::env_or(options.profile, {"AWS_PROFILE"});
    const std::string profile = named_profile.empty() ? std::string("default") : named_profile;
    const char* home = std::getenv("HOME");
    const std::string aws_dir =
        home != nullptr && *home != '\0' ? std::string(home) + "/.aws/" : std::string();
    const std::string credentials_file =
        detail::env_or({}, {"AWS_SHARED_CREDENTIALS_FILE"}, aws_dir.empty() ? "" : aws_dir + "credentials");
    const std::string config_file =
        detail::env_or({}, {"AWS_CONFIG_FILE"}, aws_dir.empty() ? "" : aws_dir + "config");
    const auto file_credentials = detail::aws_ini_section(credentials_file, profile);
    const auto file_config =
        detail::aws_ini_section(config_file, profile == "default" ? profile : "profile " + profile);
    if (!named_profile.empty() && !file_credentials && !file_config)
    {
        // Asked for by name: going on unsigned would turn a typo into a puzzling 403 later.
        throw store_error(store_errc::denied,
                          "s3_store: the AWS profile \"" + profile + "\" is in neither " +
                              (credentials_file.empty() ? "~/.aws/credentials" : credentials_file) + " nor " +
                              (config_file.empty() ? "~/.aws/config" : config_file));
    }
    const auto from_files = [&](const char* name)
    {
        for (const auto* f : {&file_credentials, &file_config})
        {
            if (*f)
            {
                if (const auto it = (*f)->find(name); it != (*f)->end() && !it->second.empty())
                {
                    return it->second;
                }
            }
        }
        return std::string();
    };
    std::string file_region = from_files("region");
    const std::string region = detail::env_or(options.region, {"AWS_REGION", "AWS_DEFAULT_REGION"},
                                              file_region.empty() ? "us-east-1" : file_region);
    std::string endpoint = detail::env_or(options.endpoint, {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"},
                                          from_files("endpoint_url"));
    const bool aws = endpoint.empty();
    if (aws)
    {
        endpoint = "https://s3." + region + ".amazonaws.com";
    }
    while (!endpoint.empty() && endpoint.back() == '/')
    {
        endpoint.pop_back();
    }
    const auto scheme_end = endpoint.find("://");
    if (scheme_end == std::string::npos ||
        (endpoint.rfind("http://", 0) != 0 && endpoint.rfind("https://", 0) != 0))
    {
        throw store_error(store_errc::invalid_key,
                          "s3_store: the endpoint must start with http:// or https://, not \"" +
                              detail::redact_url(endpoint) + "\"");
    }
    bool virtual_host = options.addressing == s3_addressing::virtual_host;
    if (options.addressing == s3_addressing::automatic)
    {
        virtual_host = aws && detail::dns_compatible_bucket(s.bucket);
    }
    if (virtual_host)
    {
        s.bucket_url = endpoint.substr(0, scheme_end + 3) + s.bucket + "." + endpoint.substr(scheme_end + 3);
    }
    else
    {
        s.bucket_url = endpoint + "/" + detail::percent_encode_key(s.bucket);
    }

    std::optional<detail::aws_signing> signing;
    std::string key_id = detail::env_or(options.access_key_id, {"AWS_ACCESS_KEY_ID"});
    std::string secret = detail::env_or(options.secret_access_key, {"AWS_SECRET_ACCESS_KEY"});
    std::string token = detail::env_or(options.session_token, {"AWS_SESSION_TOKEN"});
    // Temporary credentials, in the AWS SDKs' order: a web identity token exchanged at STS before
    // the shared files, the container endpoint and the instance metadata service after them.
    enum class temporary_source
    {
        web_identity,
        container,
        instance
    };
    std::optional<detail::aws_temporary_credentials> temporary;
    temporary_source from = temporary_source::web_identity;
    const bool keyless = key_id.empty() && secret.empty();
    if (!options.anonymous && keyless)
    {
        detail::ensure_curl_global_init(); // before the first easy handle of the process
        temporary = detail::web_identity_credentials(region);
    }
    if (keyless && !temporary)
    {
        // A key and its secret come from one place: the files only when neither was given.
        key_id = from_files("aws_access_key_id");
        secret = from_files("aws_secret_access_key");
        token = from_files("aws_session_token");
    }
    if (!options.anonymous && !temporary && key_id.empty() && secret.empty())
    {
        from = temporary_source::container;
        temporary = detail::container_credentials();
        if (!temporary && options.instance_metadata)
        {
            from = temporary_source::instance;
            temporary = detail::instance_credentials();
        }
    }
    if (temporary)
    {
        key_id = temporary->access_key_id;
        secret = temporary->secret_access_key;
        token = temporary->session_token;
    }
    if (!options.anonymous && !key_id.empty() && !secret.empty())
    {
        signing.emplace();
        signing->region = region;
        signing->service = "s3";
        signing->access_key_id = key_id;
        signing->secret_access_key = secret;
        signing->session_token = token;
        if (temporary)
        {
            signing->source = temporary->source;
            signing->expires = temporary->expires;
            // The engine calls this before the credentials expire: the same source, asked again.
            signing->renew = [from, region](detail::aws_signing& sg)
            {
                auto c = from == temporary_source::web_identity ? detail::web_identity_credentials(region)
                         : from == temporary_source::container  ? detail::container_credentials()
                                                                : detail::instance_credentials();
                if (!c)
                {
                    return false;
                }
                sg.access_key_id = std::move(c->access_key_id);
                sg.secret_access_key = std::move(c->secret_access_key);
                sg.session_token = std::move(c->session_token);
                sg.expires = c->expires;
                return true;
            };
        }
        s.signs = true;
    }
    s.engine = std::make_shared<detail::curl_engine>(options.http, std::move(signing));
    return s;
}

inline s3_store s3_store::from_url(std::string_view url, s3_options options)
{
    if (url.substr(0, 5) != "s3://")
    {
        throw store_error(store_errc::invalid_key, "not an s3:// URL: \"" + detail::redact_url(url) + "\"");
    }
    url.remove_prefix(5);
    const auto slash = url.find('/');
    std::string bucket(url.substr(0, slash));
    std::string prefix(slash == std::string_view::npos ? std::string_view() : url.substr(slash + 1));
    return s3_store(std::move(bucket), std::move(prefix), std::move(options));
}

inline detail::http_request s3_store::put_request(std::string_view key, byte_view data) const
{
    detail::http_request q;
    q.url = m_reader.url_of(key); // validates the key
    q.key = std::string(key);
    q.what = detail::http_request::kind::put;
    q.upload = data;
    q.headers.push_back("Content-MD5: " + detail::md5_base64(data));
    if (m_signed)
    {
        q.payload_sha256 = detail::sha256_hex(data);
    }
    return q;
}

inline void s3_store::set(std::string_view key, byte_view data)
{
    if (data.size() > m_multipart_threshold)
    {
        multipart_set(key, data);
        return;
    }
    m_engine->fetch(put_request(key, data));
}

inline detail::s3_result s3_store::post_for_result(const std::string& url, std::string_view key,
                                                   std::string body, const char* what) const
{
    detail::http_request q;
    q.url = url;
    q.key = std::string(key);
    q.what = detail::http_request::kind::post;
    q.upload = byte_view(reinterpret_cast<const std::byte*>(body.data()), body.size());
    q.max_bytes = 1u << 20; // a result document is small; a runaway answer is limit.1
    if (m_signed && !body.empty())
    {
        q.payload_sha256 = detail::sha256_hex(q.upload);
    }
    const auto res = m_engine->fetch(std::move(q));
    auto r = detail::parse_s3_result(res.body.view(), std::string(what) + " of " + detail::redact_url(url));
    if (r.root == "Error")
    {
        // S3 may answer a CompleteMultipartUpload with 200 and an error document.
        store_error e(store_errc::remote, std::string(what) + " failed: " + r.field("Code") + ": " +
                                              r.field("Message") + " (" + detail::redact_url(url) + ")");
        e.with_key(key);
        throw e;
    }
    return r;
}

inline void s3_store::multipart_set(std::string_view key, byte_view data) const
{
    const std::string url = m_reader.url_of(key); // validates the key
    // Query parameters in SigV4's canonical order and encoding ("uploads=": a name without a value
    // is canonically followed by '=').
    const auto created = post_for_result(url + "?uploads=", key, {}, "CreateMultipartUpload");
    const std::string upload_id = created.field("UploadId");
    if (created.root != "InitiateMultipartUploadResult" || upload_id.empty())
    {
        store_error e(store_errc::remote_protocol, "CreateMultipartUpload answered <" + created.root +
                                                       "> without an UploadId (" + detail::redact_url(url) +
                                                       ")");
        e.with_key(key);
        throw e;
    }
    const std::string id_query = "uploadId=" + detail::s3_query_encode(upload_id);
    const std::uint64_t part = std::max<std::uint64_t>(m_part_size, (data.size() + 9999) / 10000);
    const std::uint64_t parts = std::max<std::uint64_t>(1, (data.size() + part - 1) / part);
    std::vector<detail::curl_engine::ticket> tickets;
    std::vector<std::string> etags(parts);
    try
    {
        // Every part in flight at once (the engine caps how many run): each refers to its slice
        // of `data`, which outlives the waits below.
        tickets.reserve(parts);
        for (std::uint64_t i = 0; i < parts; ++i)
        {
            const std::uint64_t at = i * part;
            auto q = put_request(key, data.subspan(at, std::min<std::uint64_t>(part, data.size() - at)));
            q.url = url + "?partNumber=" + std::to_string(i + 1) + "&" + id_query;
            tickets.push_back(m_engine->submit(std::move(q)));
        }
        std::exception_ptr failure;
        for (std::uint64_t i = 0; i < parts; ++i)
        {
            try
            {
                etags[i] = m_engine->wait(tickets[i]).etag;
                if (etags[i].empty() && !failure)
                {
                    store_error e(store_errc::remote_protocol, "UploadPart " + std::to_string(i + 1) +
                                                                   " was answered without an ETag (" +
                                                                   detail::redact_url(url) + ")");
                    e.with_key(key);
                    throw e;
                }
            }
            catch (...)
            {
                if (!failure)
                {
                    failure = std::current_exception(); // the others are still waited for: they use `data`
                }
            }
        }
        if (failure)
        {
            std::rethrow_exception(failure);
        }
        std::string body = "<CompleteMultipartUpload>";
        for (std::uint64_t i = 0; i < parts; ++i)
        {
            body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                    detail::xml_escape(etags[i]) + "</ETag></Part>";
        }
        body += "</CompleteMultipartUpload>";
        try
        {
            post_for_result(url + "?" + id_query, key, std::move(body), "CompleteMultipartUpload");
        }
        catch (const store_error&)
        {
            // A completion whose answer was lost on the way is sent again by the engine, and the
            // server, having finished the upload, refuses the retry (AWS: 404 NoSuchUpload;
            // s3rver: 500). The object is stored then: if `key` holds exactly what these parts
            // make, the upload succeeded.
            bool stored = false;
            try
            {
                stored = completed_as(key, data, etags);
            }
            catch (const store_error&)
            {
            }
            if (!stored)
            {
                throw;
            }
        }
    }
    catch (...)
    {
        // Abort, so that the bucket is not billed for the parts; its own failure (a server that
        // has no AbortMultipartUpload, a lost connection) changes nothing for the caller.
        try
        {
            detail::http_request q;
            q.url = url + "?" + id_query;
            q.key = std::string(key);
            q.what = detail::http_request::kind::erase;
            m_engine->fetch(std::move(q));
        }
        catch (...)
        {
        }
        throw;
    }
}

inline bool s3_store::completed_as(std::string_view key, byte_view data,
                                   const std::vector<std::string>& part_etags) const
{
    const auto res = m_reader.head(key); // store.5 when it says no size: the refusal then stands
    if (!res || res->object_size != data.size())
    {
        return false;
    }
    const std::string etag = detail::unquoted_etag(res->etag);
    if (etag.empty())
    {
        return false;
    }
    if (etag == detail::multipart_etag(part_etags))
    {
        return true;
    }
    return etag.find('-') == std::string::npos && etag == detail::md5_hex(data);
}

inline detail::posted_write s3_store::post(std::string_view key, buffer bytes)
{
    // The bytes live in the completion, which runs once, on the first waiter (or on the ticket's
    // last owner going away): a request refers to them, and a retry sends them again.
    auto body = std::make_shared<buffer>(std::move(bytes));
    if (body->size() > m_multipart_threshold)
    {
        // A multipart upload is three steps: all of them run in the completion.
        // A copy without the posted registry: the registry holds this completion, and a completion
        // holding the registry would keep both alive when the ticket is dropped unwaited.
        s3_store self = *this;
        self.m_posted.reset();
        self.m_locks.reset();
        auto state = std::make_shared<detail::posted_state>(
            [self = std::move(self), k = std::string(key), body] { self.multipart_set(k, body->view()); });
        return detail::posted_write(std::string(key), std::move(state), m_posted);
    }
    auto ticket = m_engine->submit(put_request(key, body->view()));
    auto state =
        std::make_shared<detail::posted_state>([engine = m_engine, ticket, body] { engine->wait(ticket); });
    return detail::posted_write(std::string(key), std::move(state), m_posted);
}

inline bool s3_store::erase(std::string_view key)
{
    if (!m_reader.stat(key))
    {
        return false;
    }
    detail::http_request q;
    q.url = m_reader.url_of(key);
    q.key = std::string(key);
    q.what = detail::http_request::kind::erase;
    m_engine->fetch(std::move(q));
    return true;
}

inline std::string s3_store::bucket_prefix_of(std::string_view prefix) const
{
    std::string p(prefix);
    while (!p.empty() && p.back() == '/')
    {
        p.pop_back();
    }
    if (!p.empty())
    {
        validate_key(p);
    }
    std::string out = m_prefix;
    if (!p.empty())
    {
        out += out.empty() ? p : "/" + p;
    }
    if (!out.empty())
    {
        out += '/';
    }
    return out;
}

inline std::vector<detail::s3_list_page> s3_store::list_pages(const std::string& p, bool dir,
                                                              std::string_view key) const
{
    std::vector<detail::s3_list_page> pages;
    std::string token;
    do
    {
        // The parameters in SigV4's canonical order and encoding.
        std::string query = "?";
        if (!token.empty())
        {
            query += "continuation-token=" + detail::s3_query_encode(token) + "&";
        }
        if (dir)
        {
            query += "delimiter=%2F&";
        }
        query +=
            "list-type=2&max-keys=" + std::to_string(m_page_size) + "&prefix=" + detail::s3_query_encode(p);
        detail::http_request q;
        // Path style lists at /bucket?..., virtual host at /?... (a bare host has no path).
        const bool bare_host = m_bucket_url.find('/', m_bucket_url.find("://") + 3) == std::string::npos;
        q.url = m_bucket_url + (bare_host ? "/" : "") + query;
        q.key = key.empty() ? std::string("/") : std::string(key);
        q.max_bytes = m_max_page_bytes;
        auto res = m_engine->fetch(std::move(q));
        if (!res.found)
        {
            store_error e(store_errc::remote, "the bucket \"" + m_bucket +
                                                  "\" does not exist (404 to a listing of " +
                                                  detail::redact_url(m_bucket_url) + ")");
            e.with_key(q.key);
            throw e;
        }
        try
        {
            pages.push_back(detail::s3_list_parser::parse(res.body.view(), detail::redact_url(m_bucket_url)));
        }
        catch (store_error& e)
        {
            e.with_key(key.empty() ? std::string("/") : std::string(key));
            throw;
        }
        if (pages.back().truncated && pages.back().next_token == token)
        {
            throw store_error(store_errc::remote_protocol,
                              "ListObjectsV2 returned the same continuation token twice (" +
                                  detail::redact_url(m_bucket_url) + ")");
        }
        token = pages.back().truncated ? pages.back().next_token : std::string();
    } while (!token.empty());
    return pages;
}

inline std::vector<std::string> s3_store::list(std::string_view prefix) const
{
    const std::string p = bucket_prefix_of(prefix);
    const std::string root = m_prefix.empty() ? std::string() : m_prefix + "/";
    std::vector<std::string> out;
    for (auto& page : list_pages(p, false, prefix))
    {
        for (auto& k : page.keys)
        {
            std::string key = k.substr(std::min(root.size(), k.size()));
            if (k.compare(0, root.size(), root) != 0 || !detail::is_valid_key(key))
            {
                continue; // not a key of this store (no zarrxt key can have it)
            }
            out.push_back(std::move(key));
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

inline std::vector<std::string> s3_store::list_dir(std::string_view prefix) const
{
    const std::string p = bucket_prefix_of(prefix);
    std::set<std::string> names;
    for (auto& page : list_pages(p, true, prefix))
    {
        for (auto& k : page.keys)
        {
            if (k.size() > p.size() && k.compare(0, p.size(), p) == 0 &&
                k.find('/', p.size()) == std::string::npos)
            {
                names.insert(k.substr(p.size()));
            }
        }
        for (auto& c : page.prefixes)
        {
            if (c.size() > p.size() + 1 && c.compare(0, p.size(), p) == 0 && c.back() == '/')
            {
                names.insert(c.substr(p.size(), c.size() - p.size() - 1));
            }
        }
    }
    return {names.begin(), names.end()};
}

static_assert(array_writable_store<s3_store> && object_store<s3_store> && open_reading_store<s3_store> &&
              listable_store<s3_store> && object_prefetching_store<s3_store> && posting_store<s3_store>);

} // namespace zarrxt
