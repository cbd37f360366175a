/** @file codec/numcodecs/lz4.hpp
 *  `numcodecs.lz4` (bytes -> bytes): an LZ4 block preceded by its decoded size as a 4-byte
 *  little-endian integer (numcodecs' framing, not the LZ4 frame format).
 *  Zarr v2: numcodecs compressor {"id": "lz4", "acceleration": 1}; v3: "numcodecs.lz4".
 *  Compiled when <lz4.h> is available (Debian liblz4-dev); otherwise the codec reports error 7.
 */
#pragma once

#include "../../config.hpp"
#include "../../detail/endian.hpp"
#include "../concepts.hpp"

#include <limits>
#include <string>

#if ZARRXT_HAS_LZ4
#include <lz4.h>
#endif

namespace zarrxt::codec::numcodecs
{

class lz4
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "numcodecs.lz4";

    int acceleration = 1;

    static lz4 from_json(const json& cfg, const codec_context&)
    {
        detail::check_keys(name, cfg, {"acceleration", "id"});
        lz4 c;
        c.acceleration = static_cast<int>(detail::int_member(name, cfg, "acceleration", 1, 1, 65537));
#if !ZARRXT_HAS_LZ4
        throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblz4");
#endif
        return c;
    }
    json to_json() const { return {{"acceleration", acceleration}}; }
    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const
    {
#if ZARRXT_HAS_LZ4
        if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
        {
            throw codec_error(codec_errc::encode_failed, name, "chunk larger than LZ4's 2 GB block limit");
        }
        buffer r(4 + static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
        zarrxt::detail::store_le32(r.data(), static_cast<std::uint32_t>(in.size()));
        const int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(r.data() + 4),
                                        static_cast<int>(in.size()), static_cast<int>(r.size() - 4), acceleration);
        if (n <= 0 && !in.empty())
        {
            throw codec_error(codec_errc::encode_failed, name, "LZ4_compress_fast failed");
        }
        r.resize(4 + static_cast<std::size_t>(n));
        out = std::move(r);
#else
        (void)in;
        (void)out;
        throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblz4");
#endif
    }

    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
    {
#if ZARRXT_HAS_LZ4
        if (in.size() < 4)
        {
            throw codec_error(codec_errc::truncated, name, "input has " + std::to_string(in.size()) + " bytes, the size header needs 4");
        }
        const std::size_t size = zarrxt::detail::load_le32(in.data());
        if (hint.exact && size != *hint.exact)
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "header says " + std::to_string(size) + " bytes, expected " + std::to_string(*hint.exact));
        }
        check_limit("max_chunk_bytes", size, hint.max);
        out.resize_discard(size);
        const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out.data()),
                                          static_cast<int>(std::min<std::size_t>(in.size() - 4, std::numeric_limits<int>::max())),
                                          static_cast<int>(size));
        if (n < 0)
        {
            throw codec_error(codec_errc::corrupt_stream, name, "invalid LZ4 block");
        }
        if (static_cast<std::size_t>(n) != size)
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "block decodes to " + std::to_string(n) + " bytes, header says " + std::to_string(size));
        }
        return out.mutable_view();
#else
        (void)in;
        (void)out;
        (void)hint;
        throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblz4");
#endif
    }
};

} // namespace zarrxt::codec::numcodecs
