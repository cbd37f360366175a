/** @file store/open_store.hpp
 *  `open_store(url)`: the store a URL names, as an any_store (store/any_store.hpp) that `open`,
 *  `open_any`, `group<any_store>` and `create` accept.
 *
 *    /data/x.zarr, x.zarr, file:///data/x.zarr    filesystem_store
 *    http://host/x.zarr, https://host/x.zarr      http_store (read-only; needs libcurl)
 *    s3://bucket/prefix                           s3_store (needs libcurl, libcrypto, expat)
 *
 *  The remote schemes are there when the build has their libraries (ZARRXT_HAS_CURL,
 *  ZARRXT_HAS_S3); otherwise such a URL is store.1 saying what is missing. Options for the remote
 *  stores come from `store_options` (credentials and endpoint of S3 also from the environment, as
 *  s3_store reads them).
 */
#pragma once

#include "../config.hpp"
#include "any_store.hpp"
#include "filesystem.hpp"

#if ZARRXT_HAS_CURL
#include "http.hpp"
#endif
#if ZARRXT_HAS_S3
#include "s3.hpp"
#endif

#include <string>
#include <string_view>

namespace zarrxt
{

struct store_options
{
#if ZARRXT_HAS_CURL
    http_options http{}; ///< for http:// and https://
#endif
#if ZARRXT_HAS_S3
    s3_options s3{}; ///< for s3://
#endif
};

/// The scheme of a store URL: "file" for plain paths.
inline std::string store_scheme(std::string_view url)
{
    const auto colon = url.find("://");
    if (colon == std::string_view::npos)
    {
        return "file";
    }
    std::string s(url.substr(0, colon));
    for (auto& c : s)
    {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

/// Whether `url` names a remote store (http, https, s3).
inline bool is_remote_url(std::string_view url)
{
    const std::string s = store_scheme(url);
    return s == "http" || s == "https" || s == "s3";
}

/// The store `url` names (see the file comment).
inline any_store open_store(std::string_view url, const store_options& options = {})
{
    const std::string scheme = store_scheme(url);
    if (scheme == "file")
    {
        std::string path(url);
        if (path.rfind("file://", 0) == 0 || path.rfind("FILE://", 0) == 0)
        {
            path = path.substr(7);
            if (path.empty() || path.front() != '/')
            {
                throw store_error(store_errc::invalid_key,
                                  "a file:// URL needs an absolute path (file:///data/x.zarr), not \"" +
                                      std::string(url) + "\"");
            }
        }
        return any_store(filesystem_store(path), "file://" + path);
    }
    if (scheme == "http" || scheme == "https")
    {
#if ZARRXT_HAS_CURL
        http_store h(std::string(url), options.http);
        std::string shown = detail::redact_url(h.base_url());
        return any_store(std::move(h), std::move(shown));
#else
        throw store_error(store_errc::invalid_key,
                          "this build of zarrxt has no HTTP store (built without libcurl)");
#endif
    }
    if (scheme == "s3")
    {
#if ZARRXT_HAS_S3
        auto s = s3_store::from_url(url, options.s3);
        std::string shown = s.url();
        return any_store(std::move(s), std::move(shown));
#else
        throw store_error(store_errc::invalid_key,
                          "this build of zarrxt has no S3 store (built without libcurl, libcrypto or expat)");
#endif
    }
    throw store_error(store_errc::invalid_key, "unknown store URL scheme \"" + scheme + "\" in \"" +
                                                   detail::redact_url(url) +
                                                   "\" (file, http, https and s3 are known)");
}

} // namespace zarrxt
