/** @file detail/aws_credentials.hpp
 *  Temporary AWS credentials from the two endpoints a process on AWS compute is given instead of
 *  keys: the container credentials endpoint (ECS, EKS Pod Identity: AWS_CONTAINER_CREDENTIALS_*)
 *  and the EC2 instance metadata service, version 2 only (a session token first, then the role's
 *  credentials; version 1 answers without a token and is what instance-role thefts exploit).
 *  Both answer JSON with AccessKeyId, SecretAccessKey, Token and Expiration. A third source is a
 *  web identity token (AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN) exchanged at STS for a
 *  role's credentials (AssumeRoleWithWebIdentity, XML). s3_store asks them
 *  when neither its options, the variables nor the shared files hold a key, and its engine asks
 *  again before they expire. Metadata requests never go through a proxy (the endpoints are
 *  link-local or loopback) and never carry or print a secret in an error.
 */
#pragma once

#include "../error.hpp"
#include "json.hpp"
#include "s3_xml.hpp"
#include "text.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt::detail
{

inline constexpr const char* container_source = "container credentials endpoint";
inline constexpr const char* instance_source = "instance metadata service";
inline constexpr const char* web_identity_source = "web identity token (STS AssumeRoleWithWebIdentity)";

/// `given` when not empty, else the first of the variables `names` that is set and not empty,
/// else `fallback` (how every AWS setting is looked up: options, then variables).
inline std::string env_or(const std::string& given, std::initializer_list<const char*> names,
                          std::string fallback = {})
{
    if (!given.empty())
    {
        return given;
    }
    for (const char* n : names)
    {
        if (const char* v = std::getenv(n); v != nullptr && *v != '\0')
        {
            return v;
        }
    }
    return fallback;
}

/// The contents of a token file without trailing white space (a final newline); nullopt when it
/// cannot be opened.
inline std::optional<std::string> read_token_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        return std::nullopt;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string token = ss.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
    {
        token.pop_back();
    }
    return token;
}

/// Keys with a lifetime, and where they came from (container_source or instance_source).
struct aws_temporary_credentials
{
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;
    std::optional<std::chrono::system_clock::time_point> expires;
    std::string source;
};

/// The answer to one metadata request: status 0 when no connection could be made.
struct metadata_answer
{
    long status = 0;
    std::string body;
};

/// How long one metadata request may take, and how often it is tried: AWS_METADATA_SERVICE_TIMEOUT
/// (seconds, default 1) and AWS_METADATA_SERVICE_NUM_ATTEMPTS (default 1), as the AWS SDKs read them.
struct metadata_timing
{
    long timeout_ms = 1000;
    int attempts = 1;

    static metadata_timing from_environment()
    {
        metadata_timing t;
        if (const char* v = std::getenv("AWS_METADATA_SERVICE_TIMEOUT"); v != nullptr && *v != '\0')
        {
            const double s = std::atof(v);
            if (s > 0 && s <= 60)
            {
                t.timeout_ms = static_cast<long>(s * 1000);
            }
        }
        if (const char* v = std::getenv("AWS_METADATA_SERVICE_NUM_ATTEMPTS"); v != nullptr && *v != '\0')
        {
            const int n = std::atoi(v);
            if (n >= 1 && n <= 10)
            {
                t.attempts = n;
            }
        }
        return t;
    }
};

inline std::size_t metadata_body(char* data, std::size_t size, std::size_t n, void* out)
{
    auto& s = *static_cast<std::string*>(out);
    if (s.size() + size * n > (64u << 10))
    {
        return 0; // a credentials document is small: a runaway answer ends the transfer
    }
    s.append(data, size * n);
    return size * n;
}

/// One blocking request to a metadata endpoint, with its own easy handle (the engine's multi
/// handle is not involved: these are a few requests per hour at most).
inline metadata_answer metadata_request(const std::string& url, const char* method,
                                        const std::vector<std::string>& headers, const metadata_timing& t,
                                        const std::string* body = nullptr, bool direct = true)
{
    metadata_answer last;
    for (int attempt = 0; attempt < t.attempts; ++attempt)
    {
        CURL* e = curl_easy_init();
        if (e == nullptr)
        {
            return last;
        }
        metadata_answer a;
        curl_slist* h = nullptr;
        for (const auto& line : headers)
        {
            h = curl_slist_append(h, line.c_str());
        }
        curl_easy_setopt(e, CURLOPT_URL, url.c_str());
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
        if (direct)
        {
            curl_easy_setopt(e, CURLOPT_NOPROXY, "*"); // link-local and loopback endpoints
        }
        if (body != nullptr)
        {
            curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
            curl_easy_setopt(e, CURLOPT_POSTFIELDS, body->c_str());
        }
        curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, t.timeout_ms);
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t.timeout_ms);
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &metadata_body);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, &a.body);
        if (curl_easy_perform(e) == CURLE_OK)
        {
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &a.status);
        }
        curl_slist_free_all(h);
        curl_easy_cleanup(e);
        last = std::move(a);
        if (last.status != 0 && last.status < 500)
        {
            break; // an answer; only no connection and server errors are tried again
        }
    }
    return last;
}

/// "2026-12-07T23:59:59Z" (what both endpoints send) as a time point; nullopt for anything else.
inline std::optional<std::chrono::system_clock::time_point> parse_aws_time(const std::string& s)
{
    std::tm tm{};
    int used = 0;
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &used) != 6)
    {
        return std::nullopt;
    }
    std::size_t at = static_cast<std::size_t>(used);
    if (at < s.size() && s[at] == '.') // STS may give fractions of a second
    {
        ++at;
        while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])))
        {
            ++at;
        }
    }
    if (at + 1 != s.size() || s[at] != 'Z')
    {
        return std::nullopt;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const std::time_t t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1))
    {
        return std::nullopt;
    }
    return std::chrono::system_clock::from_time_t(t);
}

/// The credentials in an endpoint's JSON answer, or a store.8 error saying what is wrong with it
/// (never quoting the document, which holds the secret).
inline aws_temporary_credentials parse_credentials_document(const std::string& body,
                                                            const std::string& source)
{
    const auto bad = [&](const std::string& why)
    { return store_error(store_errc::denied, "the " + source + " answered no usable credentials: " + why); };
    json j;
    try
    {
        j = json::parse(body);
    }
    catch (const json::exception&)
    {
        throw bad("the answer is not JSON");
    }
    if (!j.is_object())
    {
        throw bad("the answer is not a JSON object");
    }
    if (const auto c = j.find("Code");
        c != j.end() && (!c->is_string() || c->get<std::string>() != "Success"))
    {
        throw bad("its Code is not \"Success\"");
    }
    const auto text = [&](const char* name, bool required) -> std::string
    {
        const auto it = j.find(name);
        if (it == j.end() || it->is_null())
        {
            if (required)
            {
                throw bad(std::string("no ") + name);
            }
            return {};
        }
        if (!it->is_string() || (required && it->get<std::string>().empty()))
        {
            throw bad(std::string(name) + " is not a non-empty string");
        }
        return it->get<std::string>();
    };
    aws_temporary_credentials c;
    c.access_key_id = text("AccessKeyId", true);
    c.secret_access_key = text("SecretAccessKey", true);
    c.session_token = text("Token", false);
    if (const std::string exp = text("Expiration", false); !exp.empty())
    {
        c.expires = parse_aws_time(exp);
        if (!c.expires)
        {
            throw bad("its Expiration \"" + exp + "\" is not a UTC time");
        }
    }
    c.source = source;
    return c;
}

/// True when an http:// container endpoint may be trusted with the authorization token: loopback
/// and the two link-local addresses AWS uses. Anything else must be https://.
inline bool trusted_container_host(const std::string& url)
{
    if (url.rfind("https://", 0) == 0)
    {
        return true;
    }
    if (url.rfind("http://", 0) != 0)
    {
        return false;
    }
    std::string host =
        url.substr(7, url.find('/', 7) == std::string::npos ? std::string::npos : url.find('/', 7) - 7);
    if (!host.empty() && host.front() == '[')
    {
        return host.rfind("[::1]", 0) == 0;
    }
    host = host.substr(0, host.find(':'));
    return host == "localhost" || host.rfind("127.", 0) == 0 || host == "169.254.170.2" ||
           host == "169.254.170.23";
}

/// From the container endpoint, when the variables name one (nullopt when they do not). A named
/// endpoint that does not answer with credentials is store.8: it was configured, so going on
/// unsigned would turn it into a puzzling refusal later.
inline std::optional<aws_temporary_credentials> container_credentials()
{
    const char* rel = std::getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const char* full = std::getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    std::string url;
    if (rel != nullptr && *rel != '\0')
    {
        url = std::string("http://169.254.170.2") + (*rel == '/' ? "" : "/") + rel;
    }
    else if (full != nullptr && *full != '\0')
    {
        url = full;
    }
    else
    {
        return std::nullopt;
    }
    const std::string source = container_source;
    if (!trusted_container_host(url))
    {
        throw store_error(
            store_errc::denied,
            "AWS_CONTAINER_CREDENTIALS_FULL_URI must be https:// or a loopback address, not \"" +
                url.substr(0, url.find('?')) + "\"");
    }
    std::vector<std::string> headers;
    std::string token = env_or({}, {"AWS_CONTAINER_AUTHORIZATION_TOKEN"});
    if (const std::string f = env_or({}, {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"}); !f.empty())
    {
        auto from_file = read_token_file(f);
        if (!from_file)
        {
            throw store_error(store_errc::denied, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE " + f);
        }
        token = std::move(*from_file);
    }
    if (token.find_first_of("\r\n") != std::string::npos)
    {
        throw store_error(store_errc::denied, "the container authorization token holds a line break");
    }
    if (!token.empty())
    {
        headers.push_back("Authorization: " + token);
    }
    metadata_timing t = metadata_timing::from_environment();
    t.timeout_ms = std::max(t.timeout_ms, 2000L); // a container agent may be slower than IMDS
    const metadata_answer a = metadata_request(url, "GET", headers, t);
    if (a.status != 200)
    {
        throw store_error(store_errc::denied,
                          "the " + source + " (" + url.substr(0, url.find('?')) + ") " +
                              (a.status == 0 ? std::string("did not answer")
                                             : "answered HTTP " + std::to_string(a.status)));
    }
    return parse_credentials_document(a.body, source);
}

/// From the EC2 instance metadata service (IMDSv2), unless AWS_EC2_METADATA_DISABLED is true.
/// Its absence is no error (nullopt): most machines are not EC2 instances, and a probe is all
/// this is. The endpoint is AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254.
inline std::optional<aws_temporary_credentials> instance_credentials()
{
    if (const char* d = std::getenv("AWS_EC2_METADATA_DISABLED"); d != nullptr)
    {
        std::string v(d);
        for (auto& ch : v)
        {
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        }
        if (v == "true" || v == "1")
        {
            return std::nullopt;
        }
    }
    std::string base = "http://169.254.169.254";
    if (const char* ep = std::getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT"); ep != nullptr && *ep != '\0')
    {
        base = ep;
    }
    while (!base.empty() && base.back() == '/')
    {
        base.pop_back();
    }
    const metadata_timing t = metadata_timing::from_environment();
    const metadata_answer token = metadata_request(base + "/latest/api/token", "PUT",
                                                   {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, t);
    if (token.status != 200 || token.body.empty() || token.body.find_first_of("\r\n") != std::string::npos)
    {
        return std::nullopt; // no IMDSv2 here
    }
    const std::vector<std::string> auth{"X-aws-ec2-metadata-token: " + token.body};
    const std::string creds_url = base + "/latest/meta-data/iam/security-credentials/";
    const metadata_answer role = metadata_request(creds_url, "GET", auth, t);
    std::string name = role.body.substr(0, role.body.find_first_of("\r\n"));
    if (role.status != 200 || name.empty() || name.find('/') != std::string::npos)
    {
        return std::nullopt; // an instance without a role
    }
    const metadata_answer doc = metadata_request(creds_url + name, "GET", auth, t);
    if (doc.status != 200)
    {
        return std::nullopt;
    }
    return parse_credentials_document(doc.body, instance_source);
}

/// A value URI-encoded as SigV4's canonical request encodes a query value: everything but the
/// RFC 3986 unreserved characters, '/' included. S3 queries use it so that the query sent is
/// already canonical; the STS form body below is encoded the same way.
inline std::string s3_query_encode(std::string_view v)
{
    return percent_encode(v, false);
}

/// From STS AssumeRoleWithWebIdentity, when AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are set
/// (EKS service accounts, GitHub Actions OIDC): the token file is read on every call, since its
/// issuer rotates it. The request itself is unsigned (the token is the proof). STS is
/// AWS_ENDPOINT_URL_STS, else https://sts.REGION.amazonaws.com; ordinary proxies apply. A
/// configured identity that STS refuses is store.8 with STS's code, never the token.
inline std::optional<aws_temporary_credentials> web_identity_credentials(const std::string& region)
{
    const std::string token_file = env_or({}, {"AWS_WEB_IDENTITY_TOKEN_FILE"});
    const std::string role = env_or({}, {"AWS_ROLE_ARN"});
    if (token_file.empty() || role.empty())
    {
        return std::nullopt;
    }
    const std::string token = read_token_file(token_file).value_or(std::string());
    if (token.empty())
    {
        throw store_error(store_errc::denied,
                          "cannot read a web identity token from AWS_WEB_IDENTITY_TOKEN_FILE " + token_file);
    }
    const std::string session = env_or(
        {}, {"AWS_ROLE_SESSION_NAME"}, "zarrxt-" + std::to_string(static_cast<long long>(std::time(nullptr))));
    std::string endpoint = env_or({}, {"AWS_ENDPOINT_URL_STS"}, "https://sts." + region + ".amazonaws.com");
    while (!endpoint.empty() && endpoint.back() == '/')
    {
        endpoint.pop_back();
    }
    const std::string body =
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=" + s3_query_encode(role) +
        "&RoleSessionName=" + s3_query_encode(session) + "&WebIdentityToken=" + s3_query_encode(token);
    metadata_timing t;
    t.timeout_ms = 10000;
    t.attempts = 3;
    const metadata_answer a = metadata_request(
        endpoint + "/", "POST",
        {"Content-Type: application/x-www-form-urlencoded", "Accept: application/xml"}, t, &body, false);
    // The answer: .../Credentials/{AccessKeyId, SecretAccessKey, SessionToken, Expiration}, or
    // ErrorResponse/Error/{Code, Message}. Leaves are taken by their parent's name.
    struct state
    {
        std::vector<std::string> path;
        std::string text;
        std::map<std::string, std::string> credentials;
        std::map<std::string, std::string> error;
    } st;
    const std::string problem = run_expat(
        byte_view(reinterpret_cast<const std::byte*>(a.body.data()), a.body.size()), &st,
        [](void* self, const XML_Char* name, const XML_Char**)
        {
            auto& p = *static_cast<state*>(self);
            p.path.emplace_back(name);
            p.text.clear();
        },
        [](void* self, const XML_Char* name)
        {
            auto& p = *static_cast<state*>(self);
            p.path.pop_back();
            if (!p.path.empty() && p.path.back() == "Credentials")
            {
                p.credentials[name] = p.text;
            }
            else if (!p.path.empty() && p.path.back() == "Error")
            {
                p.error[name] = p.text;
            }
            p.text.clear();
        },
        [](void* self, const XML_Char* s, int len)
        {
            auto& p = *static_cast<state*>(self);
            if (p.text.size() < (16u << 10))
            {
                p.text.append(s, static_cast<std::size_t>(len));
            }
        });
    const std::string what = "STS AssumeRoleWithWebIdentity for " + role + " (" + endpoint + ")";
    if (a.status != 200)
    {
        std::string why = a.status == 0 ? std::string("no answer") : "HTTP " + std::to_string(a.status);
        if (problem.empty() && !st.error["Code"].empty())
        {
            why += ": " + st.error["Code"] + ": " + st.error["Message"];
        }
        throw store_error(store_errc::denied, what + " failed: " + why);
    }
    if (!problem.empty())
    {
        throw store_error(store_errc::denied, what + " answered no XML: " + problem);
    }
    aws_temporary_credentials c;
    c.access_key_id = st.credentials["AccessKeyId"];
    c.secret_access_key = st.credentials["SecretAccessKey"];
    c.session_token = st.credentials["SessionToken"];
    if (c.access_key_id.empty() || c.secret_access_key.empty())
    {
        throw store_error(store_errc::denied, what + " answered no AccessKeyId and SecretAccessKey");
    }
    if (const std::string& exp = st.credentials["Expiration"]; !exp.empty())
    {
        c.expires = parse_aws_time(exp);
        if (!c.expires)
        {
            throw store_error(store_errc::denied,
                              what + " answered an Expiration that is not a UTC time: " + exp);
        }
    }
    c.source = web_identity_source;
    return c;
}

} // namespace zarrxt::detail
