/** @file codec/gzip.hpp
 *  `gzip` (bytes -> bytes): DEFLATE in the gzip container (RFC 1952), one member per chunk.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html
 *  Zarr v2: numcodecs "gzip" (same container). Multi-member streams are accepted on read.
 *  Backed by libdeflate when available, else zlib (detail/deflate.hpp).
 */
#pragma once

#include "../detail/deflate.hpp"
#include "concepts.hpp"

namespace zarrxt::codec
{

class gzip
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "gzip";

    int level = 5;

    static gzip from_json(const json& cfg, const codec_context&)
    {
        detail::check_keys(name, cfg, {"level"});
        gzip g;
        g.level = static_cast<int>(detail::int_member(name, cfg, "level", 5, 0, 9));
        return g;
    }
    json to_json() const { return {{"level", level}}; }

    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const
    {
        zarrxt::detail::deflate_all(zarrxt::detail::deflate_container::gzip, level, in, out, name);
    }

    /// Decode straight into `dest`, which is exactly the decoded size.
    void decode_to(mutable_byte_view in, mutable_byte_view dest) const
    {
        zarrxt::detail::inflate_exact_into(zarrxt::detail::deflate_container::gzip, in, dest, name);
    }

    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
    {
        return zarrxt::detail::inflate_all(zarrxt::detail::deflate_container::gzip, in, out, {hint.exact, hint.max},
                                           name);
    }
};

} // namespace zarrxt::codec
