/** @file store/key.hpp
 *  Store keys: "/"-separated, relative, no empty, "." or ".." segments, no backslash or NUL.
 *  Every store validates every key it is given, so a hostile chunk key or array path can never
 *  name a file outside the store's root.
 */
#pragma once

#include "../error.hpp"

#include <string>
#include <string_view>

namespace zarrxt
{

/// Throws store_error [zarrxt.store.1] naming the key and the rule it breaks.
inline void validate_key(std::string_view key)
{
    auto bad = [&](const char* why)
    {
        store_error e(store_errc::invalid_key, std::string("invalid store key: ") + why);
        e.with_key(key);
        throw e;
    };
    if (key.empty())
    {
        bad("empty key");
    }
    if (key.front() == '/')
    {
        bad("absolute path");
    }
    std::size_t start = 0;
    while (true)
    {
        const std::size_t end = key.find('/', start);
        const std::string_view seg =
            key.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
        if (seg.empty())
        {
            bad("empty path segment");
        }
        if (seg == "." || seg == "..")
        {
            bad("\".\" or \"..\" segment");
        }
        if (end == std::string_view::npos)
        {
            break;
        }
        start = end + 1;
    }
    for (char c : key)
    {
        if (c == '\0')
        {
            bad("NUL character");
        }
        if (c == '\\')
        {
            bad("backslash");
        }
    }
}

/// Join an array/group path and a relative key ("a/b" + "c/0/1" -> "a/b/c/0/1"; "" + "k" -> "k").
inline std::string join_key(std::string_view prefix, std::string_view key)
{
    std::string s;
    s.reserve(prefix.size() + 1 + key.size());
    s += prefix;
    if (!prefix.empty() && !key.empty())
    {
        s += '/';
    }
    s += key;
    return s;
}

/// Normalise a user-given node path: strip leading/trailing '/', "" is the root.
inline std::string normalize_path(std::string_view path)
{
    while (!path.empty() && path.front() == '/')
    {
        path.remove_prefix(1);
    }
    while (!path.empty() && path.back() == '/')
    {
        path.remove_suffix(1);
    }
    std::string p(path);
    if (!p.empty())
    {
        validate_key(p);
    }
    return p;
}

namespace detail
{

/// A URL without user information or query (what errors may show: never credentials).
inline std::string redact_url(std::string_view url)
{
    std::string u(url.substr(0, url.find('?')));
    const auto scheme = u.find("://");
    const auto at = u.find('@', scheme == std::string::npos ? 0 : scheme + 3);
    const auto slash = u.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    if (scheme != std::string::npos && at != std::string::npos && (slash == std::string::npos || at < slash))
    {
        u.erase(scheme + 3, at + 1 - (scheme + 3));
    }
    return u;
}

} // namespace detail

} // namespace zarrxt
