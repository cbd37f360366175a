/** @file codec/numcodecs/shuffle.hpp
 *  `numcodecs.shuffle` (bytes -> bytes): regroups bytes by their position inside each element
 *  (all first bytes, then all second bytes, ...), which helps a compressor that follows.
 *  Zarr v2: numcodecs filter {"id": "shuffle", "elementsize": 2}; v3: "numcodecs.shuffle".
 *  Bytes after the last whole element (never present in a chunk) are kept as they are.
 */
#pragma once

#include "../concepts.hpp"

#include <cstring>

namespace zarrxt::codec::numcodecs
{

class shuffle
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "numcodecs.shuffle";

    std::size_t elementsize = 4;

    static shuffle from_json(const json& cfg, const codec_context& ctx)
    {
        detail::check_keys(name, cfg, {"elementsize", "id"});
        shuffle s;
        s.elementsize = static_cast<std::size_t>(
            detail::int_member(name, cfg, "elementsize", static_cast<std::int64_t>(ctx.element_size()), 1, 1 << 16));
        return s;
    }
    json to_json() const { return {{"elementsize", elementsize}}; }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }

    void encode(byte_view in, buffer& out) const
    {
        buffer r(in.size());
        permute(in.data(), r.data(), in.size(), false);
        out = std::move(r);
    }

    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
    {
        if (hint.exact && *hint.exact != in.size())
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "input has " + std::to_string(in.size()) + " bytes, expected " + std::to_string(*hint.exact));
        }
        out.resize_discard(in.size());
        permute(in.data(), out.data(), in.size(), true);
        return out.mutable_view();
    }

private:
    void permute(const std::byte* src, std::byte* dst, std::size_t n, bool inverse) const
    {
        const std::size_t w = elementsize;
        const std::size_t count = n / w;
        for (std::size_t i = 0; i < count; ++i)
        {
            for (std::size_t b = 0; b < w; ++b)
            {
                if (inverse)
                {
                    dst[i * w + b] = src[b * count + i];
                }
                else
                {
                    dst[b * count + i] = src[i * w + b];
                }
            }
        }
        if (count * w < n)
        {
            std::memcpy(dst + count * w, src + count * w, n - count * w);
        }
    }
};

} // namespace zarrxt::codec::numcodecs
