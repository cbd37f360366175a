/** @file codec/zstd.hpp
 *  `zstd` (bytes -> bytes): Zstandard frames.
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd
 *  Zarr v2: numcodecs "zstd" {level} (no checksum member before numcodecs 0.12).
 *  With `checksum: true` every frame carries the XXH64 of its content (the low 32 bits), written
 *  on encode; on decode libzstd verifies the checksum of every frame that has one, whatever the
 *  configuration says, and a mismatch is error 4.
 *
 *  Frames that record their content size are decoded in one call into an exactly sized buffer;
 *  frames without it (written by streaming compressors, e.g. some numcodecs and Java writers) are
 *  decoded in one call too when the expected size is known, straight into the destination: the
 *  decoder then uses the output as its window. The streaming API would first allocate the window
 *  the frame header asks for (up to 2 GiB, whatever the data), which an 11-byte input can exploit.
 *  Only when no size is expected does the streaming API run, with its window bounded by the limit.
 *  Compression and decompression contexts are reused per thread.
 */
#pragma once

#include "concepts.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <zstd.h>
#include <zstd_errors.h>

namespace zarrxt
{
namespace detail
{

struct zstd_deleter
{
    void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};

inline ZSTD_DCtx* zstd_thread_dctx()
{
    thread_local std::unique_ptr<ZSTD_DCtx, zstd_deleter> d(ZSTD_createDCtx());
    if (!d)
    {
        throw std::bad_alloc();
    }
    return d.get();
}

inline ZSTD_CCtx* zstd_thread_cctx()
{
    thread_local std::unique_ptr<ZSTD_CCtx, zstd_deleter> c(ZSTD_createCCtx());
    if (!c)
    {
        throw std::bad_alloc();
    }
    return c.get();
}

/// Sum of the content sizes of the frames in `in`: ZSTD_CONTENTSIZE_UNKNOWN when a frame does not
/// record it, ZSTD_CONTENTSIZE_ERROR when `in` is not a sequence of complete frames.
/// `complete`, when given, receives the length of the prefix made of complete frames.
///
/// A frame in one of the pre-1.0 formats (magic numbers 0xFD2FB51E-0xFD2FB527) ends the walk with
/// ZSTD_CONTENTSIZE_ERROR and sets `*legacy`. libzstd built with legacy support decodes them with
/// decoders that ignore the window limit set on the context: a 48-byte legacy frame made the
/// streaming path allocate 128 MiB (found by fuzz_codecs). No Zarr writer produces them.
inline unsigned long long zstd_declared_size(byte_view in, std::size_t* complete = nullptr,
                                             bool* legacy = nullptr) noexcept
{
    unsigned long long total = 0;
    bool unknown = false;
    std::size_t pos = 0;
    while (pos < in.size())
    {
        if (in.size() - pos >= 4)
        {
            const std::uint32_t m = load_le32(in.data() + pos);
            if (m >= 0xFD2FB51Eu && m <= 0xFD2FB527u)
            {
                if (legacy != nullptr)
                {
                    *legacy = true;
                }
                return ZSTD_CONTENTSIZE_ERROR;
            }
        }
        const std::size_t frame = ZSTD_findFrameCompressedSize(in.data() + pos, in.size() - pos);
        if (ZSTD_isError(frame) || frame == 0)
        {
            return ZSTD_CONTENTSIZE_ERROR;
        }
        const unsigned long long size = ZSTD_getFrameContentSize(in.data() + pos, in.size() - pos);
        if (size == ZSTD_CONTENTSIZE_ERROR)
        {
            return ZSTD_CONTENTSIZE_ERROR;
        }
        if (size == ZSTD_CONTENTSIZE_UNKNOWN)
        {
            unknown = true;
        }
        else if (__builtin_add_overflow(total, size, &total))
        {
            return ZSTD_CONTENTSIZE_ERROR;
        }
        pos += frame;
        if (complete != nullptr)
        {
            *complete = pos;
        }
    }
    if (in.empty())
    {
        return ZSTD_CONTENTSIZE_ERROR;
    }
    return unknown ? ZSTD_CONTENTSIZE_UNKNOWN : total;
}

} // namespace detail

namespace codec
{

class zstd
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "zstd";

    int level = 0; ///< 0 means the library default (3); negative levels are fast modes
    bool checksum = false;

    static zstd from_json(const json& cfg, const codec_context&)
    {
        detail::check_keys(name, cfg, {"level", "checksum"});
        zstd z;
        z.level =
            static_cast<int>(detail::int_member(name, cfg, "level", 0, ZSTD_minCLevel(), ZSTD_maxCLevel()));
        if (auto it = cfg.find("checksum"); it != cfg.end())
        {
            if (!it->is_boolean())
            {
                detail::bad_config(name, "\"checksum\" must be true or false, got " + it->dump());
            }
            z.checksum = it->get<bool>();
        }
        return z;
    }
    json to_json() const { return {{"level", level}, {"checksum", checksum}}; }

    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const
    {
        auto* cctx = zarrxt::detail::zstd_thread_cctx();
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0);
        const bool aliased = in.data() == out.data() && !in.empty();
        buffer tmp;
        buffer& dst = aliased ? tmp : out;
        dst.resize_discard(ZSTD_compressBound(in.size()));
        const std::size_t n = ZSTD_compress2(cctx, dst.data(), dst.size(), in.data(), in.size());
        if (ZSTD_isError(n))
        {
            throw codec_error(codec_errc::encode_failed, name, ZSTD_getErrorName(n));
        }
        dst.resize(n);
        if (aliased)
        {
            out = std::move(tmp);
        }
    }

    /// Decode straight into `dest`, which is exactly the decoded size.
    void decode_to(mutable_byte_view in, mutable_byte_view dest) const
    {
        // Legacy frames are refused by the general path below, before libzstd sees them.
        const unsigned long long declared = zarrxt::detail::zstd_declared_size(in);
        if (declared == ZSTD_CONTENTSIZE_ERROR)
        {
            // Not a sequence of complete frames: the general path names the problem.
            buffer tmp;
            auto v = decode(in, tmp, {dest.size(), dest.size()});
            if (!v.empty())
            {
                std::memcpy(dest.data(), v.data(), v.size());
            }
            return;
        }
        if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != dest.size())
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "frame decodes to " + std::to_string(declared) + " bytes, expected " +
                                  std::to_string(dest.size()));
        }
        decode_exact(in, dest);
    }
    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
    {
        const std::size_t cap = hint.exact ? *hint.exact : hint.max;
        if (hint.exact && *hint.exact > hint.max)
        {
            throw limit_exceeded("max_chunk_bytes", *hint.exact, hint.max);
        }
        std::size_t complete = 0;
        bool legacy = false;
        const unsigned long long declared = zarrxt::detail::zstd_declared_size(in, &complete, &legacy);
        if (legacy)
        {
            throw codec_error(codec_errc::corrupt_stream, name,
                              "a legacy (pre-1.0) zstd frame: zarrxt reads only the zstd 1.x frame format");
        }
        if (declared == ZSTD_CONTENTSIZE_ERROR && complete != 0 && !starts_frame(in.subspan(complete)))
        {
            throw codec_error(codec_errc::trailing_bytes, name,
                              std::to_string(in.size() - complete) + " bytes follow the last zstd frame");
        }
        if (declared == ZSTD_CONTENTSIZE_ERROR)
        {
            throw codec_error(in.size() < 8 ? codec_errc::truncated : codec_errc::corrupt_stream, name,
                              "input is not a sequence of complete zstd frames");
        }
        auto* dctx = zarrxt::detail::zstd_thread_dctx();
        if (declared != ZSTD_CONTENTSIZE_UNKNOWN)
        {
            if (hint.exact && declared != *hint.exact)
            {
                throw codec_error(codec_errc::size_mismatch, name,
                                  "frame decodes to " + std::to_string(declared) + " bytes, expected " +
                                      std::to_string(*hint.exact));
            }
            if (declared > cap)
            {
                throw limit_exceeded("max_chunk_bytes", declared, cap);
            }
            out.resize_discard(static_cast<std::size_t>(declared));
            decode_exact(in, out.mutable_view());
            return {out.data(), out.size()};
        }
        if (hint.exact)
        {
            out.resize_discard(*hint.exact);
            decode_exact(in, out.mutable_view());
            return {out.data(), out.size()};
        }
        return decode_streaming(in, out, cap, dctx);
    }

private:
    /// A frame's own checksum (written with `checksum: true`, verified by libzstd) is error 4.
    [[noreturn]] static void throw_decode_error(std::size_t code)
    {
        if (ZSTD_getErrorCode(code) == ZSTD_error_checksum_wrong)
        {
            throw codec_error(codec_errc::checksum_mismatch, name,
                              "the frame's content checksum does not match its decoded bytes");
        }
        throw codec_error(codec_errc::corrupt_stream, name, ZSTD_getErrorName(code));
    }

    /// True when `in` begins with a zstd or skippable frame magic number.
    static bool starts_frame(byte_view in) noexcept
    {
        if (in.size() < 4)
        {
            return false;
        }
        const std::uint32_t m = zarrxt::detail::load_le32(in.data());
        return m == 0xFD2FB528u || (m & 0xFFFFFFF0u) == 0x184D2A50u;
    }

    /// Decodes every frame of `in` into `dest` in one call; the output must fill `dest` exactly.
    /// With the whole output in view the decoder needs no window buffer of its own.
    static void decode_exact(byte_view in, mutable_byte_view dest)
    {
        const std::size_t n = ZSTD_decompressDCtx(zarrxt::detail::zstd_thread_dctx(), dest.data(),
                                                  dest.size(), in.data(), in.size());
        if (ZSTD_isError(n))
        {
            if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
            {
                throw codec_error(codec_errc::size_mismatch, name,
                                  "frame decodes to more than the expected " + std::to_string(dest.size()) +
                                      " bytes");
            }
            throw_decode_error(n);
        }
        if (n != dest.size())
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "frame decodes to " + std::to_string(n) + " bytes, expected " +
                                  std::to_string(dest.size()));
        }
    }

    /// No size is expected: stream into a buffer that grows up to `cap` (+1 to see an overflow).
    /// The window a frame asks for is allocated before any output, so it is bounded by the cap
    /// too; a frame asking for more is decoded in one call into a buffer of the cap instead.
    static mutable_byte_view decode_streaming(mutable_byte_view in, buffer& out, std::size_t cap,
                                              ZSTD_DCtx* dctx)
    {
        // Saturating: a cap of SIZE_MAX means "no cap", not "no room".
        const std::size_t room = cap < SIZE_MAX ? cap + 1 : cap;
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_and_parameters);
        if (room < (std::size_t{1} << 31))
        {
            int log = 10; // ZSTD_WINDOWLOG_ABSOLUTEMIN (static-linking-only API)
            while ((std::size_t{1} << log) < room)
            {
                ++log;
            }
            ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, log);
        }
        struct restore
        {
            ZSTD_DCtx* d;
            ~restore() { ZSTD_DCtx_reset(d, ZSTD_reset_session_and_parameters); }
        } restore_params{dctx};
        std::size_t size = std::min(room, std::max<std::size_t>(in.size() * 4, 1 << 16));
        out.resize_discard(size);
        ZSTD_inBuffer ib{in.data(), in.size(), 0};
        ZSTD_outBuffer ob{out.data(), out.size(), 0};
        std::size_t last = 1;
        while (ib.pos < ib.size || last != 0)
        {
            last = ZSTD_decompressStream(dctx, &ob, &ib);
            if (ZSTD_isError(last))
            {
                if (ZSTD_getErrorCode(last) == ZSTD_error_frameParameter_windowTooLarge && room != SIZE_MAX)
                {
                    return decode_capped(in, out, cap);
                }
                throw_decode_error(last);
            }
            if (ob.pos > cap)
            {
                throw limit_exceeded("max_chunk_bytes", cap + 1, cap);
            }
            if (ob.pos == ob.size)
            {
                out.resize_exact(std::min(room, out.size() * 2));
                ob.dst = out.data();
                ob.size = out.size();
                continue;
            }
            if (ib.pos == ib.size && last != 0)
            {
                throw codec_error(codec_errc::truncated, name, "input ends inside a frame");
            }
        }
        return {out.data(), ob.pos};
    }

    /// One call into `cap` + 1 bytes: for frames whose window is larger than the cap allows.
    static mutable_byte_view decode_capped(byte_view in, buffer& out, std::size_t cap)
    {
        out.resize_discard(cap + 1);
        const std::size_t n = ZSTD_decompressDCtx(zarrxt::detail::zstd_thread_dctx(), out.data(), out.size(),
                                                  in.data(), in.size());
        if (ZSTD_isError(n) && ZSTD_getErrorCode(n) != ZSTD_error_dstSize_tooSmall)
        {
            throw_decode_error(n);
        }
        if (ZSTD_isError(n) || n > cap)
        {
            throw limit_exceeded("max_chunk_bytes", cap + 1, cap);
        }
        out.resize(n);
        return {out.data(), n};
    }
};

} // namespace codec
} // namespace zarrxt
