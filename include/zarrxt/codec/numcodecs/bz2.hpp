/** @file codec/numcodecs/bz2.hpp
 *  `numcodecs.bz2` (bytes -> bytes): the bzip2 stream format, as Python's bz2 module writes it.
 *  Zarr v2: numcodecs compressor {"id": "bz2", "level": 1}; v3: "numcodecs.bz2" {"level"}.
 *  Compiled when <bzlib.h> is available (Debian libbz2-dev); otherwise the codec reports error 7.
 *
 *  Decoding is strict: streams may follow each other (Python's bz2.decompress and the bzip2 tool
 *  accept that), but anything else after the last stream is an error, as is a stream that ends
 *  before its end marker. The output is bounded while it inflates (detail/bounded_output.hpp). The
 *  decoder's own memory is fixed by the block size in the stream header: at most about 3.6 MB for
 *  level 9, whatever the stream says it will produce.
 */
#pragma once

#include "../../config.hpp"
#include "../../detail/bounded_output.hpp"
#include "../concepts.hpp"

#include <climits>
#include <cstring>
#include <new>
#include <string>

#if ZARRXT_HAS_BZ2
#include <bzlib.h>
#endif

namespace zarrxt::codec::numcodecs
{

class bz2
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "numcodecs.bz2";

    int level = 1; ///< bzip2 block size in units of 100 kB (1..9)

    static bz2 from_json(const json& cfg, const codec_context&)
    {
        detail::check_keys(name, cfg, {"level", "id"});
        bz2 c;
        c.level = static_cast<int>(detail::int_member(name, cfg, "level", 1, 1, 9));
#if !ZARRXT_HAS_BZ2
        throw codec_error(codec_errc::unavailable, name, "zarrxt was built without libbz2");
#endif
        return c;
    }
    json to_json() const
    {
        return {{"level", level}};
    }
    std::optional<std::size_t> encoded_size(std::size_t) const
    {
        return std::nullopt;
    }

    void encode(byte_view in, buffer& out) const;
    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const;

private:
    static bool is_magic(const std::byte* p, std::size_t n) noexcept
    {
        return n >= 4 && p[0] == std::byte{'B'} && p[1] == std::byte{'Z'} && p[2] == std::byte{'h'} &&
               p[3] >= std::byte{'1'} && p[3] <= std::byte{'9'};
    }

    /// libbz2 counts in unsigned int: it is fed at most this much per call.
    static constexpr std::size_t step = std::size_t{1} << 30;
};

/******************
 * implementation *
 ******************/

#if ZARRXT_HAS_BZ2

inline void bz2::encode(byte_view in, buffer& out) const
{
    bz_stream s{};
    if (BZ2_bzCompressInit(&s, level, 0, 0) != BZ_OK)
    {
        throw codec_error(codec_errc::encode_failed, name, "BZ2_bzCompressInit failed");
    }
    struct guard
    {
        bz_stream* s;
        ~guard() { BZ2_bzCompressEnd(s); }
    } g{&s};
    const bool aliased = in.data() == out.data() && !in.empty();
    buffer tmp;
    buffer& dst = aliased ? tmp : out;
    // bzip2's worst case is 1% plus 600 bytes over the input.
    dst.resize_discard(in.size() + in.size() / 100 + 1024);
    std::size_t in_pos = 0;
    std::size_t out_pos = 0;
    while (true)
    {
        const std::size_t give = std::min(in.size() - in_pos, step);
        s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data() + in_pos));
        s.avail_in = static_cast<unsigned>(give);
        if (out_pos == dst.size())
        {
            dst.resize(dst.size() * 2);
        }
        const std::size_t room = std::min(dst.size() - out_pos, step);
        s.next_out = reinterpret_cast<char*>(dst.data() + out_pos);
        s.avail_out = static_cast<unsigned>(room);
        const int action = in_pos + give == in.size() ? BZ_FINISH : BZ_RUN;
        const int r = BZ2_bzCompress(&s, action);
        in_pos += give - s.avail_in;
        out_pos += room - s.avail_out;
        if (r == BZ_STREAM_END)
        {
            break;
        }
        if (r != BZ_RUN_OK && r != BZ_FINISH_OK)
        {
            throw codec_error(codec_errc::encode_failed, name,
                              "BZ2_bzCompress returned " + std::to_string(r));
        }
    }
    dst.resize(out_pos);
    if (aliased)
    {
        out = std::move(tmp);
    }
}

inline mutable_byte_view bz2::decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
{
    zarrxt::detail::bounded_output o(out, in.size(), hint.exact, hint.max, name);
    std::size_t in_pos = 0;
    if (!is_magic(in.data(), in.size()))
    {
        throw codec_error(in.size() < 4 ? codec_errc::truncated : codec_errc::corrupt_stream, name,
                          in.size() < 4
                              ? "input has " + std::to_string(in.size()) + " bytes, a stream header needs 4"
                              : std::string("not a bzip2 stream (no \"BZh\" header)"));
    }
    while (in_pos < in.size())
    {
        // One stream (streams may follow each other; anything else after one is refused below).
        bz_stream s{};
        if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK)
        {
            throw std::bad_alloc();
        }
        struct guard
        {
            bz_stream* s;
            ~guard() { BZ2_bzDecompressEnd(s); }
        } g{&s};
        while (true)
        {
            const std::size_t give = std::min(in.size() - in_pos, step);
            o.grow();
            const std::size_t room = std::min(o.avail(), step);
            s.next_in = reinterpret_cast<char*>(in.data() + in_pos);
            s.avail_in = static_cast<unsigned>(give);
            s.next_out = reinterpret_cast<char*>(o.next());
            s.avail_out = static_cast<unsigned>(room);
            const int r = BZ2_bzDecompress(&s);
            in_pos += give - s.avail_in;
            o.produced(room - s.avail_out);
            if (r == BZ_STREAM_END)
            {
                break;
            }
            if (r == BZ_DATA_ERROR || r == BZ_DATA_ERROR_MAGIC)
            {
                throw codec_error(codec_errc::corrupt_stream, name,
                                  "invalid bzip2 stream (bad data or block checksum)");
            }
            if (r == BZ_MEM_ERROR)
            {
                throw std::bad_alloc();
            }
            if (r != BZ_OK)
            {
                throw codec_error(codec_errc::corrupt_stream, name,
                                  "BZ2_bzDecompress returned " + std::to_string(r));
            }
            if (in_pos == in.size() && s.avail_out != 0)
            {
                throw codec_error(codec_errc::truncated, name, "input ends inside a bzip2 stream");
            }
        }
        if (in_pos < in.size() && !is_magic(in.data() + in_pos, in.size() - in_pos))
        {
            throw codec_error(codec_errc::trailing_bytes, name,
                              std::to_string(in.size() - in_pos) + " bytes follow the end of the stream");
        }
    }
    return o.finish();
}

#else

inline void bz2::encode(byte_view, buffer&) const
{
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without libbz2");
}

inline mutable_byte_view bz2::decode(mutable_byte_view, buffer&, const decode_hint&) const
{
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without libbz2");
}

#endif

static_assert(bytes_to_bytes_codec<bz2>, "bz2 must meet the requirements of its codec kind");

} // namespace zarrxt::codec::numcodecs
