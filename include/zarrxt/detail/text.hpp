/** @file detail/text.hpp
 *  Text encodings: percent-encoding for URLs (remote stores), standard base64 (numpy |S fill values
 *  are stored that way by zarr-python) and strict UTF-8 <-> UTF-32 conversion. Strict means what the
 *  Unicode standard calls well-formed: no overlong forms, no surrogates, nothing above U+10FFFF,
 *  so a value that round-trips through zarrxt is the value that was stored.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace zarrxt::detail
{

/// RFC 3986 percent-encoding: the unreserved characters kept, and '/' too when `keep_slash`
/// (a store key's segments in a URL path; a SigV4 query value or form value encodes it).
inline std::string percent_encode(std::string_view v, bool keep_slash)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    out.reserve(v.size());
    for (unsigned char c : v)
    {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~' || (keep_slash && c == '/'))
        {
            out += static_cast<char>(c);
        }
        else
        {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

inline std::string base64_encode(std::string_view in)
{
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3)
    {
        const std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16 |
                                static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8 |
                                static_cast<unsigned char>(in[i + 2]);
        out += alphabet[v >> 18];
        out += alphabet[(v >> 12) & 63];
        out += alphabet[(v >> 6) & 63];
        out += alphabet[v & 63];
    }
    if (const std::size_t rest = in.size() - i; rest != 0)
    {
        std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])) << 16;
        if (rest == 2)
        {
            v |= static_cast<std::uint32_t>(static_cast<unsigned char>(in[i + 1])) << 8;
        }
        out += alphabet[v >> 18];
        out += alphabet[(v >> 12) & 63];
        out += rest == 2 ? alphabet[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

/// Standard base64 with padding; nullopt for anything else (bad characters, bad length, bits set
/// after the last byte), so that one stored value has one text.
inline std::optional<std::string> base64_decode(std::string_view in)
{
    auto value = [](char c) -> int
    {
        if (c >= 'A' && c <= 'Z')
        {
            return c - 'A';
        }
        if (c >= 'a' && c <= 'z')
        {
            return c - 'a' + 26;
        }
        if (c >= '0' && c <= '9')
        {
            return c - '0' + 52;
        }
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    if (in.size() % 4 != 0)
    {
        return std::nullopt;
    }
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (std::size_t i = 0; i < in.size(); i += 4)
    {
        const bool last = i + 4 == in.size();
        const std::size_t pad = last ? (in[i + 3] == '=' ? (in[i + 2] == '=' ? 2 : 1) : 0) : 0;
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 4; ++k)
        {
            const int d = k >= 4 - pad ? 0 : value(in[i + k]);
            if (d < 0)
            {
                return std::nullopt;
            }
            v = v << 6 | static_cast<std::uint32_t>(d);
        }
        if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0))
        {
            return std::nullopt;
        }
        out += static_cast<char>(v >> 16);
        if (pad < 2)
        {
            out += static_cast<char>((v >> 8) & 0xff);
        }
        if (pad < 1)
        {
            out += static_cast<char>(v & 0xff);
        }
    }
    return out;
}

/// Decode one UTF-8 code point at `s[i]`, advancing i; nullopt when the bytes there are not
/// well-formed UTF-8.
inline std::optional<char32_t> next_code_point(std::string_view s, std::size_t& i) noexcept
{
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80)
    {
        ++i;
        return b0;
    }
    std::size_t n = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xe0) == 0xc0)
    {
        n = 1, cp = b0 & 0x1f, min = 0x80;
    }
    else if ((b0 & 0xf0) == 0xe0)
    {
        n = 2, cp = b0 & 0x0f, min = 0x800;
    }
    else if ((b0 & 0xf8) == 0xf0)
    {
        n = 3, cp = b0 & 0x07, min = 0x10000;
    }
    else
    {
        return std::nullopt;
    }
    if (s.size() - i <= n)
    {
        return std::nullopt;
    }
    for (std::size_t k = 1; k <= n; ++k)
    {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xc0) != 0x80)
        {
            return std::nullopt;
        }
        cp = cp << 6 | (b & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    {
        return std::nullopt;
    }
    i += n + 1;
    return cp;
}

/// The offset of the first byte of `s` where it stops being well-formed UTF-8; nullopt when all
/// of it is. ASCII runs are skipped eight bytes at a time (text is mostly ASCII).
inline std::optional<std::size_t> first_invalid_utf8(std::string_view s) noexcept
{
    std::size_t i = 0;
    while (i < s.size())
    {
        if (s.size() - i >= 8)
        {
            std::uint64_t w;
            std::memcpy(&w, s.data() + i, 8);
            if ((w & 0x8080808080808080ull) == 0)
            {
                i += 8;
                continue;
            }
        }
        const std::size_t at = i;
        if (!next_code_point(s, i))
        {
            return at;
        }
    }
    return std::nullopt;
}

/// Append code point cp as UTF-8; false (nothing appended) when cp is no Unicode scalar value.
inline bool append_utf8(std::string& out, char32_t cp)
{
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    {
        return false;
    }
    if (cp < 0x80)
    {
        out += static_cast<char>(cp);
    }
    else if (cp < 0x800)
    {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    else if (cp < 0x10000)
    {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    else
    {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return true;
}

} // namespace zarrxt::detail
