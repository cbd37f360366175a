/** @file metadata/chunk_key.hpp
 *  Chunk key encodings: how chunk grid coordinates become store keys.
 *
 *  - v3 "default": "c" then each coordinate, joined by the separator ("/" or "."); rank 0 -> "c".
 *  - v3 "v2" and Zarr v2 itself: coordinates joined by the separator ("." or "/"); rank 0 -> "0".
 *  Keys are relative to the array's own path.
 */
#pragma once

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace zarrxt
{

struct chunk_key_encoding
{
    enum class kind
    {
        default_, ///< v3 "default"
        v2,       ///< v3 "v2" and Zarr v2 arrays
    };

    kind encoding = kind::default_;
    char separator = '/';

    /// Append the key of chunk `coords` to `out` (no allocation once `out` has capacity).
    void append_key(std::span<const std::uint64_t> coords, std::string& out) const
    {
        if (encoding == kind::default_)
        {
            out += 'c';
            for (auto c : coords)
            {
                out += separator;
                append_number(c, out);
            }
            return;
        }
        if (coords.empty())
        {
            out += '0';
            return;
        }
        for (std::size_t i = 0; i < coords.size(); ++i)
        {
            if (i != 0)
            {
                out += separator;
            }
            append_number(coords[i], out);
        }
    }

    std::string key(std::span<const std::uint64_t> coords) const
    {
        std::string s;
        append_key(coords, s);
        return s;
    }

    /// The coordinates of the chunk whose key is `key` in an array of rank `coords.size()`, or
    /// false when `key` is not one this encoding writes (metadata, a stray file, "01", "c/1/x").
    /// Listing an array's keys and mapping them back is how resize finds the chunks outside a
    /// new shape without walking a grid that may be mostly empty.
    bool parse_key(std::string_view key, std::span<std::uint64_t> coords) const
    {
        if (encoding == kind::default_)
        {
            if (key.empty() || key[0] != 'c')
            {
                return false;
            }
            key.remove_prefix(1);
            if (coords.empty())
            {
                return key.empty();
            }
            if (key.empty() || key[0] != separator)
            {
                return false;
            }
            key.remove_prefix(1);
        }
        else if (coords.empty())
        {
            return key == "0";
        }
        for (std::size_t i = 0; i < coords.size(); ++i)
        {
            const std::size_t end = i + 1 == coords.size() ? key.size() : key.find(separator);
            if (end == std::string_view::npos || end == 0)
            {
                return false;
            }
            const std::string_view digits = key.substr(0, end);
            // The writer never pads: "01" is another object, not chunk 1.
            if (digits.size() > 1 && digits[0] == '0')
            {
                return false;
            }
            const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), coords[i]);
            if (r.ec != std::errc{} || r.ptr != digits.data() + digits.size())
            {
                return false;
            }
            key.remove_prefix(i + 1 == coords.size() ? end : end + 1);
        }
        return key.empty();
    }

    bool operator==(const chunk_key_encoding&) const = default;

private:
    static void append_number(std::uint64_t v, std::string& out)
    {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof(buf), v);
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 bug 105329: a bogus -Wrestrict ("accessing 9223372036854775810 or more bytes ... may
// overlap") from basic_string::_M_replace once this is inlined deep into a read at -O3.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
        out.append(buf, r.ptr);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    }
};

} // namespace zarrxt
