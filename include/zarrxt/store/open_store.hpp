/** @file store/open_store.hpp
 *  `open_store(url)`: the store a URL names, as an any_store (store/any_store.hpp) that `open`,
 *  `open_any`, `group<any_store>` and `create` accept.
 *
 *    /data/x.zarr, x.zarr, file:///data/x.zarr    filesystem_store
 *    http://host/x.zarr, https://host/x.zarr      http_store (read-only; needs libcurl)
 *    s3://bucket/prefix                           s3_store (needs libcurl, libcrypto, expat)
 *    any of them ending in a *.zip segment        zip_store over the archive that segment names,
 *      (x.zarr.zip, https://h/x.zarr.zip/a/b)     read-only, rooted at what follows it (a/b)
 *    reference::REFS, REFS any path or URL above  kerchunk_store (store/kerchunk.hpp) over the
 *      (reference::refs.json,                     kerchunk reference file REFS, read-only; its
 *       reference::https://h/refs.json)           targets opened with open_store (fsspec spells
 *                                                 this "reference://" with fo=REFS)
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
#include "kerchunk.hpp"
#include "zip_store.hpp"

#if ZARRXT_HAS_CURL
#include "http.hpp"
#endif
#if ZARRXT_HAS_S3
#include "s3.hpp"
#endif

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

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

namespace detail
{
inline std::string ascii_lower(std::string_view in)
{
    std::string s(in);
    for (auto& c : s)
    {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}
} // namespace detail

/// The scheme of a store URL: "file" for plain paths.
inline std::string store_scheme(std::string_view url)
{
    const auto colon = url.find("://");
    return colon == std::string_view::npos ? "file" : detail::ascii_lower(url.substr(0, colon));
}

/// Whether `url` names a remote store (http, https, s3).
inline bool is_remote_url(std::string_view url)
{
    const std::string s = store_scheme(url);
    return s == "http" || s == "https" || s == "s3";
}

/// A URL or path with a zip archive in it: `base/x.zip/inner` -> {base, "x.zip", "inner"}.
struct zip_url
{
    std::string base;    ///< the store holding the archive ("." for a bare file name)
    std::string archive; ///< the archive's key in it
    std::string root;    ///< the node path inside the archive
};

/// The first path segment of `url` that ends in ".zip" (any case), if there is one. A host name
/// is not a segment (`https://example.zip/x.zarr` is not an archive).
inline std::optional<zip_url> split_zip_url(std::string_view url)
{
    std::size_t path_start = 0;
    const bool local = store_scheme(url) == "file";
    if (const auto colon = url.find("://"); colon != std::string_view::npos)
    {
        path_start = local ? colon + 3 : url.find('/', colon + 3);
        if (path_start == std::string_view::npos)
        {
            return std::nullopt;
        }
    }
    std::size_t begin = path_start;
    while (begin < url.size())
    {
        std::size_t end = url.find('/', begin);
        if (end == std::string_view::npos)
        {
            end = url.size();
        }
        const std::string_view seg = url.substr(begin, end - begin);
        // A local directory that happens to be named *.zip is a directory, not an archive.
        std::error_code ec;
        if (seg.size() > 4 && detail::ascii_lower(seg.substr(seg.size() - 4)) == ".zip" &&
            !(local &&
              std::filesystem::is_directory(std::string(url.substr(path_start, end - path_start)), ec)))
        {
            zip_url z;
            z.base = begin == 0 ? "." : std::string(url.substr(0, begin - 1));
            if (z.base.empty())
            {
                z.base = "/";
            }
            z.archive = std::string(seg);
            z.root = end < url.size() ? normalize_path(url.substr(end + 1)) : std::string();
            return z;
        }
        begin = end + 1;
    }
    return std::nullopt;
}

/// The prefix of a store URL naming a kerchunk reference file: `reference::refs.json`.
inline constexpr std::string_view reference_prefix = "reference::";

/// Whether `url` names a kerchunk reference file (starts with reference_prefix).
inline bool is_reference_url(std::string_view url)
{
    return url.substr(0, reference_prefix.size()) == reference_prefix;
}

inline any_store open_store(std::string_view url, const store_options& options = {});

/// The kerchunk reference file at `url` (a path or a URL open_store takes, without the
/// `reference::` prefix), read whole (at most options.max_reference_bytes, else limit.1), as a
/// store; its targets are opened with open_store(..., stores). No file at `url` is store.12.
inline kerchunk_store open_kerchunk(std::string_view url, const kerchunk_options& options = {},
                                    const store_options& stores = {})
{
    const auto [dir, name] = detail::kerchunk::split_location(url);
    any_store base = open_store(dir, stores);
    std::optional<read_result> r;
    try
    {
        r = base.read(name, byte_range::all(), options.max_reference_bytes);
    }
    catch (const limit_exceeded& big)
    {
        limit_exceeded e("max_reference_bytes", big.value(), options.max_reference_bytes);
        e.with_key(name);
        throw e;
    }
    if (!r)
    {
        store_error e(store_errc::reference, "no kerchunk reference file at " + detail::redact_url(url));
        e.with_key(name);
        throw e;
    }
    return kerchunk_store(as_string_view(r->bytes.view()), std::string(url), options,
                          [stores](const std::string& directory) { return open_store(directory, stores); });
}

/// The store `url` names (see the file comment).
inline any_store open_store(std::string_view url, const store_options& options)
{
    if (is_reference_url(url))
    {
        const std::string_view refs = url.substr(reference_prefix.size());
        if (refs.empty())
        {
            throw store_error(store_errc::invalid_key, "\"reference::\" names no reference file");
        }
        return any_store(open_kerchunk(refs, {}, options), "reference::" + detail::redact_url(refs));
    }
    if (auto z = split_zip_url(url))
    {
        zip_options zo;
        zo.root = z->root;
        any_store base = open_store(z->base, options);
        std::string shown = base.describe() + "/" + z->archive + (z->root.empty() ? "" : "/" + z->root);
        return any_store(zip_store<any_store>(std::move(base), z->archive, std::move(zo)), std::move(shown));
    }
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
