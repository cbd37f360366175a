/** @file detail/deflate.hpp
 *  DEFLATE in its gzip (RFC 1952) and zlib (RFC 1950) containers, shared by codec::gzip and
 *  codec::zlib. libdeflate is used when present (several times faster than zlib on whole
 *  buffers, which is exactly the chunk case); zlib is the fallback.
 *
 *  Decoding is bounded: with a known decoded size the output buffer is exactly that size and
 *  a stream that decodes to more is an error; with an unknown size the buffer grows up to the
 *  caller's cap and a stream that needs more is a limit error. Nothing is ever allocated beyond
 *  the cap, so a 1 KB deflate bomb costs at most the cap.
 *  Compressor and decompressor state is cached per thread (libdeflate compressors for high
 *  levels allocate hundreds of kilobytes).
 */
#pragma once

#include "../config.hpp"
#include "../error.hpp"
#include "../limits.hpp"
#include "buffer.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#if ZARRXT_HAS_LIBDEFLATE
#include <libdeflate.h>
#endif
#include <zlib.h>

namespace zarrxt::detail
{

enum class deflate_container
{
    gzip,
    zlib,
    raw, ///< a bare DEFLATE stream (RFC 1951): a zip archive's DEFLATE entries
};

inline const char* container_name(deflate_container c) noexcept
{
    return c == deflate_container::gzip ? "gzip" : c == deflate_container::zlib ? "zlib" : "DEFLATE";
}

/// zlib's windowBits for a container: +16 asks for the gzip wrapper, a negative value for none.
inline int zlib_window_bits(deflate_container c) noexcept
{
    return c == deflate_container::gzip ? 15 + 16 : c == deflate_container::zlib ? 15 : -15;
}

struct inflate_bounds
{
    std::optional<std::size_t> exact;
    std::size_t max = 0;
};

inline bool is_gzip_magic(const std::byte* p, std::size_t n) noexcept
{
    return n >= 2 && p[0] == std::byte{0x1f} && p[1] == std::byte{0x8b};
}

#if ZARRXT_HAS_LIBDEFLATE

struct libdeflate_deleter
{
    void operator()(libdeflate_decompressor* d) const noexcept { libdeflate_free_decompressor(d); }
    void operator()(libdeflate_compressor* c) const noexcept { libdeflate_free_compressor(c); }
};

inline libdeflate_decompressor* thread_decompressor()
{
    thread_local std::unique_ptr<libdeflate_decompressor, libdeflate_deleter> d(libdeflate_alloc_decompressor());
    if (!d)
    {
        throw std::bad_alloc();
    }
    return d.get();
}

inline libdeflate_compressor* thread_compressor(int level)
{
    thread_local std::array<std::unique_ptr<libdeflate_compressor, libdeflate_deleter>, 13> cache;
    auto& slot = cache[static_cast<std::size_t>(level)];
    if (!slot)
    {
        slot.reset(libdeflate_alloc_compressor(level));
        if (!slot)
        {
            throw std::bad_alloc();
        }
    }
    return slot.get();
}

/// One libdeflate call into out[offset, offset+avail). Returns the result code.
inline libdeflate_result libdeflate_once(deflate_container c, const std::byte* in, std::size_t in_n, std::byte* out,
                                         std::size_t avail, std::size_t& used_in, std::size_t& produced)
{
    auto* d = thread_decompressor();
    if (c == deflate_container::gzip)
    {
        return libdeflate_gzip_decompress_ex(d, in, in_n, out, avail, &used_in, &produced);
    }
    if (c == deflate_container::zlib)
    {
        return libdeflate_zlib_decompress_ex(d, in, in_n, out, avail, &used_in, &produced);
    }
    return libdeflate_deflate_decompress_ex(d, in, in_n, out, avail, &used_in, &produced);
}

#endif

[[noreturn]] inline void throw_inflate(codec_errc code, std::string_view stage, std::string msg)
{
    throw codec_error(code, stage, std::move(msg));
}

/// Decode a whole gzip/zlib stream into `out`; returns the decoded bytes.
inline mutable_byte_view inflate_all(deflate_container c, byte_view in, buffer& out, const inflate_bounds& b,
                                     std::string_view stage)
{
    const std::size_t cap = b.exact ? *b.exact : b.max;
    std::size_t guess = b.exact ? *b.exact : std::min<std::size_t>(cap, std::max<std::size_t>(in.size() * 4, 1 << 16));
    if (b.exact && *b.exact > b.max)
    {
        throw limit_exceeded("max_chunk_bytes", *b.exact, b.max);
    }
#if ZARRXT_HAS_LIBDEFLATE
    while (true)
    {
        out.resize_discard(guess);
        std::size_t in_pos = 0;
        std::size_t out_pos = 0;
        bool grow = false;
        while (true)
        {
            std::size_t used = 0;
            std::size_t produced = 0;
            const auto r = libdeflate_once(c, in.data() + in_pos, in.size() - in_pos, out.data() + out_pos,
                                           out.size() - out_pos, used, produced);
            if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
            {
                if (b.exact)
                {
                    throw_inflate(codec_errc::size_mismatch, stage,
                                  "stream decodes to more than the expected " + std::to_string(*b.exact) + " bytes");
                }
                if (guess >= cap)
                {
                    throw limit_exceeded("max_chunk_bytes", cap + 1, cap);
                }
                grow = true;
                break;
            }
            if (r != LIBDEFLATE_SUCCESS)
            {
                throw_inflate(in.size() - in_pos < 10 ? codec_errc::truncated : codec_errc::corrupt_stream, stage,
                              "invalid or truncated " + std::string(container_name(c))
                                  + " stream");
            }
            in_pos += used;
            out_pos += produced;
            if (in_pos == in.size())
            {
                break;
            }
            // A gzip file may hold several members back to back (RFC 1952 2.2); anything else is junk.
            if (c == deflate_container::gzip && is_gzip_magic(in.data() + in_pos, in.size() - in_pos))
            {
                continue;
            }
            throw_inflate(codec_errc::trailing_bytes, stage,
                          std::to_string(in.size() - in_pos) + " bytes follow the end of the stream");
        }
        if (grow)
        {
            guess = std::min(cap, guess * 2);
            continue;
        }
        if (b.exact && out_pos != *b.exact)
        {
            throw_inflate(codec_errc::size_mismatch, stage,
                          "stream decodes to " + std::to_string(out_pos) + " bytes, expected " + std::to_string(*b.exact));
        }
        return {out.data(), out_pos};
    }
#else
    z_stream zs{};
    const int window = zlib_window_bits(c);
    if (inflateInit2(&zs, window) != Z_OK)
    {
        throw std::bad_alloc();
    }
    struct guard
    {
        z_stream* s;
        ~guard() { inflateEnd(s); }
    } g{&zs};
    // Accept at most `limit` bytes; the buffer has one byte more so that "too long" is detectable
    // without a probe call.
    const std::size_t limit = cap;
    const std::size_t room = limit < SIZE_MAX ? limit + 1 : limit; // SIZE_MAX means no cap, not no room
    out.resize_discard(b.exact ? room : std::min(guess + 1, room));
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    while (true)
    {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + in_pos));
        zs.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - in_pos, UINT32_MAX));
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
        zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - out_pos, UINT32_MAX));
        const auto before_in = zs.avail_in;
        const auto before_out = zs.avail_out;
        const int r = inflate(&zs, Z_NO_FLUSH);
        in_pos += before_in - zs.avail_in;
        out_pos += before_out - zs.avail_out;
        if (out_pos > limit)
        {
            if (b.exact)
            {
                throw_inflate(codec_errc::size_mismatch, stage,
                              "stream decodes to more than the expected " + std::to_string(limit) + " bytes");
            }
            throw limit_exceeded("max_chunk_bytes", limit + 1, limit);
        }
        if (r == Z_STREAM_END)
        {
            if (in_pos == in.size())
            {
                break;
            }
            if (c == deflate_container::gzip && is_gzip_magic(in.data() + in_pos, in.size() - in_pos))
            {
                inflateReset(&zs);
                continue;
            }
            throw_inflate(codec_errc::trailing_bytes, stage,
                          std::to_string(in.size() - in_pos) + " bytes follow the end of the stream");
        }
        if (r == Z_OK || r == Z_BUF_ERROR)
        {
            if (out_pos == out.size())
            {
                out.resize_exact(std::min(room, out.size() * 2));
                continue;
            }
            if (in_pos == in.size() || r == Z_BUF_ERROR)
            {
                throw_inflate(codec_errc::truncated, stage, "stream ends before its end marker");
            }
            continue;
        }
        throw_inflate(codec_errc::corrupt_stream, stage,
                      std::string("invalid stream: ") + (zs.msg != nullptr ? zs.msg : "zlib error"));
    }
    if (b.exact && out_pos != *b.exact)
    {
        throw_inflate(codec_errc::size_mismatch, stage,
                      "stream decodes to " + std::to_string(out_pos) + " bytes, expected " + std::to_string(*b.exact));
    }
    return {out.data(), out_pos};
#endif
}

/// Decode a whole stream into `dest`, which must be exactly the decoded size (a chunk landing
/// contiguously in the caller's array: no intermediate buffer).
inline void inflate_exact_into(deflate_container c, byte_view in, mutable_byte_view dest, std::string_view stage)
{
#if ZARRXT_HAS_LIBDEFLATE
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    while (true)
    {
        std::size_t used = 0;
        std::size_t produced = 0;
        const auto r = libdeflate_once(c, in.data() + in_pos, in.size() - in_pos, dest.data() + out_pos,
                                       dest.size() - out_pos, used, produced);
        if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        {
            throw_inflate(codec_errc::size_mismatch, stage,
                          "stream decodes to more than the expected " + std::to_string(dest.size()) + " bytes");
        }
        if (r != LIBDEFLATE_SUCCESS)
        {
            throw_inflate(in.size() - in_pos < 10 ? codec_errc::truncated : codec_errc::corrupt_stream, stage,
                          "invalid or truncated " + std::string(container_name(c)) + " stream");
        }
        in_pos += used;
        out_pos += produced;
        if (in_pos == in.size())
        {
            break;
        }
        if (c == deflate_container::gzip && is_gzip_magic(in.data() + in_pos, in.size() - in_pos))
        {
            continue;
        }
        throw_inflate(codec_errc::trailing_bytes, stage, std::to_string(in.size() - in_pos) + " bytes follow the end of the stream");
    }
    if (out_pos != dest.size())
    {
        throw_inflate(codec_errc::size_mismatch, stage,
                      "stream decodes to " + std::to_string(out_pos) + " bytes, expected " + std::to_string(dest.size()));
    }
#else
    buffer tmp;
    auto v = inflate_all(c, in, tmp, {dest.size(), dest.size()}, stage);
    std::memcpy(dest.data(), v.data(), v.size());
#endif
}

/// Encode `in` as one gzip member, zlib stream or bare DEFLATE stream at `level` (0..9) into `out`.
inline void deflate_all(deflate_container c, int level, byte_view in, buffer& out, std::string_view stage)
{
#if ZARRXT_HAS_LIBDEFLATE
    auto* comp = thread_compressor(level);
    const std::size_t bound = c == deflate_container::gzip   ? libdeflate_gzip_compress_bound(comp, in.size())
                              : c == deflate_container::zlib ? libdeflate_zlib_compress_bound(comp, in.size())
                                                             : libdeflate_deflate_compress_bound(comp, in.size());
    const bool aliased = in.data() == out.data() && !in.empty();
    buffer tmp;
    buffer& dst = aliased ? tmp : out;
    dst.resize_discard(bound);
    const std::size_t n =
        c == deflate_container::gzip   ? libdeflate_gzip_compress(comp, in.data(), in.size(), dst.data(), dst.size())
        : c == deflate_container::zlib ? libdeflate_zlib_compress(comp, in.data(), in.size(), dst.data(), dst.size())
                                       : libdeflate_deflate_compress(comp, in.data(), in.size(), dst.data(), dst.size());
    if (n == 0)
    {
        throw codec_error(codec_errc::encode_failed, stage, "libdeflate could not compress");
    }
    dst.resize(n);
    if (aliased)
    {
        out = std::move(tmp);
    }
#else
    z_stream zs{};
    const int window = zlib_window_bits(c);
    if (deflateInit2(&zs, level, Z_DEFLATED, window, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    {
        throw codec_error(codec_errc::encode_failed, stage, "deflateInit2 failed");
    }
    buffer tmp;
    tmp.resize_discard(deflateBound(&zs, static_cast<uLong>(in.size())) + 32);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    zs.avail_in = static_cast<uInt>(in.size());
    zs.next_out = reinterpret_cast<Bytef*>(tmp.data());
    zs.avail_out = static_cast<uInt>(tmp.size());
    const int r = deflate(&zs, Z_FINISH);
    const std::size_t n = tmp.size() - zs.avail_out;
    deflateEnd(&zs);
    if (r != Z_STREAM_END)
    {
        throw codec_error(codec_errc::encode_failed, stage, "deflate failed");
    }
    tmp.resize(n);
    out = std::move(tmp);
#endif
}

} // namespace zarrxt::detail
