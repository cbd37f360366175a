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
