/** @file codec/blosc.hpp
 *  `blosc` (bytes -> bytes) through c-blosc 1.x.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html
 *  Zarr v2: numcodecs "blosc" {cname, clevel, shuffle: -1|0|1|2, blocksize}, lowered by metadata/v2.hpp.
 *
 *  A blosc frame states its decoded and compressed sizes in a 16-byte header; both are checked
 *  (blosc_cbuffer_validate) against the input and the expected size before anything is allocated.
 *  The context API (blosc_*_ctx) is used: no global blosc state, safe from several threads.
 *  Compiled only when <blosc.h> is available; without it the codec reports error 7 at open.
 */
#pragma once

#include "../config.hpp"
#include "concepts.hpp"

#include <string>

#if ZARRXT_HAS_BLOSC
#include <blosc.h>
#endif

namespace zarrxt::codec
{

class blosc
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "blosc";

    std::string cname = "lz4";       ///< blosclz, lz4, lz4hc, snappy, zlib, zstd
    int clevel = 5;                  ///< 0..9
    std::string shuffle = "shuffle"; ///< noshuffle, shuffle, bitshuffle
    std::size_t typesize = 1;
    std::size_t blocksize = 0;       ///< 0: automatic

    static blosc from_json(const json& cfg, const codec_context& ctx);
    json to_json() const
    {
        return {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", typesize},
                {"blocksize", blocksize}};
    }

    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const;
    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const;
    /// Decode straight into `dest`, which is exactly the decoded size.
    void decode_to(mutable_byte_view in, mutable_byte_view dest) const;

private:
    /// Validates the frame header against the input; returns the decoded size.
    std::size_t checked_size(mutable_byte_view in) const;

public:
};

/******************
 * implementation *
 ******************/

inline blosc blosc::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"cname", "clevel", "shuffle", "typesize", "blocksize"});
    blosc b;
    b.typesize = ctx.element_size();
    if (auto it = cfg.find("cname"); it != cfg.end())
    {
        static constexpr std::string_view names[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
        bool ok = false;
        for (auto n : names)
        {
            ok = ok || (it->is_string() && *it == std::string(n));
        }
        if (!ok)
        {
            detail::bad_config(name, "unknown \"cname\" " + it->dump());
        }
        b.cname = it->get<std::string>();
    }
    b.clevel = static_cast<int>(detail::int_member(name, cfg, "clevel", 5, 0, 9));
    if (auto it = cfg.find("shuffle"); it != cfg.end())
    {
        if (!it->is_string() || (*it != "noshuffle" && *it != "shuffle" && *it != "bitshuffle"))
        {
            detail::bad_config(name, "\"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\", got " + it->dump());
        }
        b.shuffle = it->get<std::string>();
    }
    b.typesize = static_cast<std::size_t>(detail::int_member(name, cfg, "typesize", static_cast<std::int64_t>(b.typesize), 1, 255));
    b.blocksize = static_cast<std::size_t>(detail::int_member(name, cfg, "blocksize", 0, 0, INT32_MAX));
#if !ZARRXT_HAS_BLOSC
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without c-blosc");
#endif
    return b;
}

inline void blosc::encode(byte_view in, buffer& out) const
{
#if ZARRXT_HAS_BLOSC
    if (in.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))
    {
        throw codec_error(codec_errc::encode_failed, name, "chunk is larger than blosc's 2 GiB frame limit");
    }
    const int doshuffle = shuffle == "noshuffle" ? BLOSC_NOSHUFFLE : shuffle == "shuffle" ? BLOSC_SHUFFLE : BLOSC_BITSHUFFLE;
    const bool aliased = in.data() == out.data() && !in.empty();
    buffer tmp;
    buffer& dst = aliased ? tmp : out;
    dst.resize_discard(in.size() + BLOSC_MAX_OVERHEAD);
    const int n = blosc_compress_ctx(clevel, doshuffle, typesize, in.size(), in.data(), dst.data(), dst.size(),
                                     cname.c_str(), blocksize, 1);
    if (n <= 0)
    {
        throw codec_error(codec_errc::encode_failed, name, "blosc_compress_ctx returned " + std::to_string(n));
    }
    dst.resize(static_cast<std::size_t>(n));
    if (aliased)
    {
        out = std::move(tmp);
    }
#else
    (void)in;
    (void)out;
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without c-blosc");
#endif
}

inline std::size_t blosc::checked_size(mutable_byte_view in) const
{
#if ZARRXT_HAS_BLOSC
    if (in.size() < BLOSC_MIN_HEADER_LENGTH)
    {
        throw codec_error(codec_errc::truncated, name,
                          "input has " + std::to_string(in.size()) + " bytes, shorter than a blosc header");
    }
    std::size_t nbytes = 0;
    std::size_t cbytes = 0;
    std::size_t block = 0;
    blosc_cbuffer_sizes(in.data(), &nbytes, &cbytes, &block);
    if (cbytes < BLOSC_MIN_HEADER_LENGTH)
    {
        // c-blosc reports every size as 0 for a header it cannot read (an unknown format version).
        throw codec_error(codec_errc::corrupt_stream, name, "invalid blosc header");
    }
    if (cbytes != in.size())
    {
        throw codec_error(cbytes > in.size() ? codec_errc::truncated : codec_errc::trailing_bytes, name,
                          "header says " + std::to_string(cbytes) + " compressed bytes, input has "
                              + std::to_string(in.size()));
    }
    if (blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
    {
        throw codec_error(codec_errc::corrupt_stream, name, "invalid blosc header");
    }
    return nbytes;
#else
    (void)in;
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without c-blosc");
#endif
}

inline void blosc::decode_to(mutable_byte_view in, mutable_byte_view dest) const
{
#if ZARRXT_HAS_BLOSC
    const std::size_t nbytes = checked_size(in);
    if (nbytes != dest.size())
    {
        throw codec_error(codec_errc::size_mismatch, name,
                          "frame decodes to " + std::to_string(nbytes) + " bytes, expected " + std::to_string(dest.size()));
    }
    const int n = blosc_decompress_ctx(in.data(), dest.data(), dest.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != nbytes)
    {
        throw codec_error(codec_errc::corrupt_stream, name, "blosc_decompress_ctx returned " + std::to_string(n));
    }
#else
    (void)in;
    (void)dest;
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without c-blosc");
#endif
}

inline mutable_byte_view blosc::decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
{
#if ZARRXT_HAS_BLOSC
    const std::size_t nbytes = checked_size(in);
    if (hint.exact && nbytes != *hint.exact)
    {
        throw codec_error(codec_errc::size_mismatch, name,
                          "frame decodes to " + std::to_string(nbytes) + " bytes, expected " + std::to_string(*hint.exact));
    }
    check_limit("max_chunk_bytes", nbytes, hint.max);
    out.resize_discard(nbytes);
    const int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != nbytes)
    {
        throw codec_error(codec_errc::corrupt_stream, name, "blosc_decompress_ctx returned " + std::to_string(n));
    }
    return {out.data(), nbytes};
#else
    (void)in;
    (void)out;
    (void)hint;
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without c-blosc");
#endif
}

} // namespace zarrxt::codec
