/** @file codec/zlib.hpp
 *  `numcodecs.zlib` (bytes -> bytes): DEFLATE in the zlib container (RFC 1950).
 *  Zarr v2: numcodecs compressor "zlib". Zarr v3 has no core zlib codec; the registered name is
 *  "numcodecs.zlib" {"level"} (zarr-python 3 and zarrs write it, zarrita reads it), which zarrxt
 *  writes. The bare name "zlib", which older zarrxt and some other writers used, is still read.
 *  The C++ type keeps the short name: `codec::zlib`.
 */
#pragma once

#include "../detail/deflate.hpp"
#include "concepts.hpp"

namespace zarrxt::codec
{

class zlib
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "numcodecs.zlib";
    static constexpr std::string_view aliases[] = {"zlib"};

    int level = 1;

    static zlib from_json(const json& cfg, const codec_context&)
    {
        detail::check_keys(name, cfg, {"level"});
        zlib z;
        z.level = static_cast<int>(detail::int_member(name, cfg, "level", 1, 0, 9));
        return z;
    }
    json to_json() const { return {{"level", level}}; }

    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const
    {
        zarrxt::detail::deflate_all(zarrxt::detail::deflate_container::zlib, level, in, out, name);
    }

    /// Decode straight into `dest`, which is exactly the decoded size.
    void decode_to(mutable_byte_view in, mutable_byte_view dest) const
    {
        zarrxt::detail::inflate_exact_into(zarrxt::detail::deflate_container::zlib, in, dest, name);
    }

    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
    {
        return zarrxt::detail::inflate_all(zarrxt::detail::deflate_container::zlib, in, out, {hint.exact, hint.max},
                                           name);
    }
};

} // namespace zarrxt::codec
