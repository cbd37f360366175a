/** @file fixed_string.hpp
 *  numpy's fixed-width strings as std::string values: |S n (v3 null_terminated_bytes) holds n
 *  bytes, <U n / >U n (v3 fixed_length_utf32) n UTF-32 code points. As in numpy, trailing NULs
 *  pad a shorter value and are not part of it, so a value cannot end in NUL. An element here is the
 *  stored element in native byte order (what the bytes codec hands the kernels); the text of a
 *  <U element is UTF-8.
 */
#pragma once

#include "detail/text.hpp"
#include "dtype.hpp"
#include "error.hpp"

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace zarrxt
{

/// The value of one stored element of `width` bytes. A <U element holding a code unit that is no
/// Unicode scalar value (a surrogate, above U+10FFFF) has no UTF-8 text: codec_error value_out_of_range.
inline std::string decode_fixed_string(dtype_id id, const std::byte* element, std::size_t width)
{
    if (id == dtype_id::fixed_bytes)
    {
        std::size_t n = width;
        while (n > 0 && element[n - 1] == std::byte{0})
        {
            --n;
        }
        return std::string(reinterpret_cast<const char*>(element), n);
    }
    std::size_t n = width / 4;
    auto unit = [&](std::size_t i)
    {
        char32_t c;
        std::memcpy(&c, element + 4 * i, 4);
        return c;
    };
    while (n > 0 && unit(n - 1) == 0)
    {
        --n;
    }
    std::string out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
    {
        if (!detail::append_utf8(out, unit(i)))
        {
            throw codec_error(codec_errc::value_out_of_range, "fixed_length_utf32",
                              "code unit " + std::to_string(static_cast<std::uint32_t>(unit(i))) + " at " +
                                  std::to_string(i) + " is no Unicode code point");
        }
    }
    return out;
}

/// Store `value` in one element of `width` bytes, padded with NULs. A value that does not fit,
/// ends in NUL (it would read back shorter) or, for <U, is not UTF-8: array_error invalid_argument
/// (nothing is truncated or replaced).
inline void encode_fixed_string(dtype_id id, std::string_view value, std::byte* element, std::size_t width)
{
    auto refuse = [&](const std::string& why)
    {
        throw array_error(array_errc::invalid_argument,
                          "string value of " + std::to_string(value.size()) + " bytes cannot be stored as " +
                              std::string(name(id)) + " of " + std::to_string(width) + " bytes: " + why);
    };
    if (!value.empty() && value.back() == '\0')
    {
        refuse("it ends in NUL, which pads the stored value");
    }
    std::memset(element, 0, width);
    if (id == dtype_id::fixed_bytes)
    {
        if (value.size() > width)
        {
            refuse("it is too long");
        }
        std::memcpy(element, value.data(), value.size());
        return;
    }
    std::size_t at = 0;
    for (std::size_t i = 0; i < value.size();)
    {
        const auto cp = detail::next_code_point(value, i);
        if (!cp)
        {
            refuse("it is not valid UTF-8 at byte " + std::to_string(i));
        }
        if (at + 4 > width)
        {
            refuse("it has more than " + std::to_string(width / 4) + " code points");
        }
        const char32_t c = *cp;
        std::memcpy(element + at, &c, 4);
        at += 4;
    }
}

} // namespace zarrxt
