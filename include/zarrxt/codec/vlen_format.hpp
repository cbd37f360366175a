/** @file codec/vlen_format.hpp
 *  The chunk layout shared by `vlen-utf8` and `vlen-bytes` (array -> bytes), which is numcodecs'
 *  VLenUTF8 / VLenBytes layout: the number of elements as a little-endian uint32, then for every
 *  element in C order its byte length as a little-endian uint32 followed by its bytes.
 *  Specs: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8 and
 *  .../codecs/vlen-bytes; numcodecs' "Variable-length codecs" page.
 *
 *  Decoding is strict: the count must be the chunk's element count, every length must fit in what
 *  is left, nothing may follow the last value, and `vlen-utf8` values must be well-formed UTF-8.
 *  The decoded chunk is an array of vlen_element (vlen.hpp) pointing into a copy of the chunk's
 *  payload kept in the operation's value_arena; a value equal to the fill value points at the fill
 *  value's bytes instead (so all-fill chunks are recognised by the kernels and not written).
 */
#pragma once

#include "../detail/checked.hpp"
#include "../detail/text.hpp"
#include "../vlen.hpp"
#include "concepts.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace zarrxt::codec::detail
{

/// Both codecs; `Text` says whether values must be UTF-8 (vlen-utf8). Named by the aliases
/// codec::vlen_utf8 and codec::vlen_bytes (their own headers).
template <bool Text>
class vlen_codec
{
public:
    using codec_kind = array_to_bytes_tag;
    static constexpr std::string_view name = Text ? "vlen-utf8" : "vlen-bytes";

    /// No configuration; bound to a chunk of the codec's own data type (string or bytes).
    static vlen_codec from_json(const json& cfg, const codec_context& ctx)
    {
        vlen_codec c;
        c.bind(cfg, ctx);
        return c;
    }
    json to_json() const { return json::object(); }

    /// Decode a chunk into vlen_element values in `out`, keeping the payload in `arena`.
    mutable_byte_view decode(mutable_byte_view in, buffer& out, value_arena* arena) const;
    /// Without an arena there is nowhere to keep the values: refused (internal misuse).
    mutable_byte_view decode(mutable_byte_view in, buffer& out) const { return decode(in, out, nullptr); }
    /// Encode a C-contiguous chunk of vlen_element values.
    byte_view encode(byte_view in, buffer& out) const;

    /// Bound state (set by bind): elements of one chunk and the fill value's element.
    std::uint64_t m_elements = 0;
    vlen_element m_fill{};
    std::uint64_t m_max_bytes = 0;

private:
    static constexpr std::string_view codec_name() noexcept { return name; }
    /// Check the data type and the configuration (no members), and bind to the chunk geometry.
    void bind(const json& cfg, const codec_context& ctx);
};

/******************
 * implementation *
 ******************/

inline std::uint32_t load_u32le(const std::byte* p) noexcept
{
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

inline void store_u32le(std::byte* p, std::uint32_t v) noexcept
{
    p[0] = static_cast<std::byte>(v);
    p[1] = static_cast<std::byte>(v >> 8);
    p[2] = static_cast<std::byte>(v >> 16);
    p[3] = static_cast<std::byte>(v >> 24);
}

template <bool Text>
void vlen_codec<Text>::bind(const json& cfg, const codec_context& ctx)
{
    if (!cfg.is_null())
    {
        check_keys(codec_name(), cfg, {});
    }
    const dtype_id want = Text ? dtype_id::string : dtype_id::vlen_bytes;
    if (ctx.dtype != want)
    {
        bad_config(codec_name(), "encodes the " + std::string(zarrxt::name(want)) + " data type, not " +
                                     std::string(zarrxt::name(ctx.dtype)));
    }
    m_elements = zarrxt::detail::checked_product(ctx.chunk_shape, "chunk elements");
    // The decoded chunk (one vlen_element per value) is what every read allocates.
    check_limit("max_chunk_bytes",
                zarrxt::detail::checked_mul(m_elements, sizeof(vlen_element), "chunk bytes"),
                ctx.limits.max_chunk_bytes);
    m_max_bytes = ctx.limits.max_chunk_bytes;
    std::memcpy(&m_fill, ctx.fill.data(), sizeof m_fill);
}

template <bool Text>
mutable_byte_view vlen_codec<Text>::decode(mutable_byte_view in, buffer& out, value_arena* arena) const
{
    const std::string_view n = codec_name();
    if (arena == nullptr)
    {
        throw codec_error(codec_errc::corrupt_stream, n, "no value arena to decode into (internal error)");
    }
    if (in.size() < 4)
    {
        throw codec_error(codec_errc::truncated, n,
                          "chunk of " + std::to_string(in.size()) + " bytes has no element count");
    }
    const std::uint64_t count = load_u32le(in.data());
    if (count != m_elements)
    {
        throw codec_error(codec_errc::size_mismatch, n,
                          "chunk holds " + std::to_string(count) + " values, expected " +
                              std::to_string(m_elements));
    }
    // First pass: every length inside the chunk, the text well-formed; nothing allocated per value.
    const std::size_t size = in.size();
    std::size_t pos = 4;
    bool needs_payload = false;
    const std::string_view fill = m_fill.view();
    for (std::uint64_t i = 0; i < count; ++i)
    {
        if (size - pos < 4)
        {
            throw codec_error(codec_errc::truncated, n,
                              "chunk ends at byte " + std::to_string(size) + " before the length of value " +
                                  std::to_string(i));
        }
        const std::uint32_t len = load_u32le(in.data() + pos);
        pos += 4;
        if (len > size - pos)
        {
            throw codec_error(codec_errc::truncated, n,
                              "value " + std::to_string(i) + " of " + std::to_string(len) +
                                  " bytes at byte " + std::to_string(pos) + " runs past the end of the " +
                                  std::to_string(size) + "-byte chunk");
        }
        const std::string_view v(reinterpret_cast<const char*>(in.data() + pos), len);
        if constexpr (Text)
        {
            if (const auto bad = zarrxt::detail::first_invalid_utf8(v))
            {
                throw codec_error(codec_errc::invalid_text, n,
                                  "value " + std::to_string(i) + " is not UTF-8 at its byte " +
                                      std::to_string(*bad));
            }
        }
        needs_payload = needs_payload || (len != 0 && v != fill);
        pos += len;
    }
    if (pos != size)
    {
        throw codec_error(codec_errc::trailing_bytes, n,
                          std::to_string(size - pos) + " bytes follow the last of " + std::to_string(count) +
                              " values");
    }
    // Second pass: the elements, pointing into one copy of the chunk kept by the operation.
    const char* base = needs_payload ? arena->keep(in.data(), size) : nullptr;
    out.resize_discard(static_cast<std::size_t>(count) * sizeof(vlen_element));
    pos = 4;
    for (std::uint64_t i = 0; i < count; ++i)
    {
        const std::uint32_t len = load_u32le(in.data() + pos);
        pos += 4;
        vlen_element e{};
        if (len != 0)
        {
            const std::string_view v(reinterpret_cast<const char*>(in.data() + pos), len);
            e = v == fill ? m_fill : vlen_element{base + pos, len};
        }
        std::memcpy(out.data() + i * sizeof(vlen_element), &e, sizeof e);
        pos += len;
    }
    return out.mutable_view();
}

template <bool Text>
byte_view vlen_codec<Text>::encode(byte_view in, buffer& out) const
{
    const std::string_view n = codec_name();
    const std::size_t count = in.size() / sizeof(vlen_element);
    if (count != m_elements || count > std::numeric_limits<std::uint32_t>::max())
    {
        throw codec_error(codec_errc::encode_failed, n,
                          "a chunk of " + std::to_string(count) + " values, expected " +
                              std::to_string(m_elements) + " (at most 2^32-1)");
    }
    auto element = [&](std::size_t i)
    {
        vlen_element e;
        std::memcpy(&e, in.data() + i * sizeof e, sizeof e);
        return e;
    };
    std::uint64_t total = 4;
    for (std::size_t i = 0; i < count; ++i)
    {
        const std::uint64_t len = element(i).size;
        if (len > std::numeric_limits<std::uint32_t>::max())
        {
            throw codec_error(codec_errc::encode_failed, n,
                              "value " + std::to_string(i) + " of " + std::to_string(len) +
                                  " bytes is longer than the format's 2^32-1");
        }
        total += 4 + len;
    }
    check_limit("max_chunk_bytes", total, m_max_bytes);
    out.resize_discard(static_cast<std::size_t>(total));
    std::byte* p = out.data();
    store_u32le(p, static_cast<std::uint32_t>(count));
    p += 4;
    for (std::size_t i = 0; i < count; ++i)
    {
        const vlen_element e = element(i);
        store_u32le(p, static_cast<std::uint32_t>(e.size));
        p += 4;
        if (e.size != 0)
        {
            std::memcpy(p, e.data, static_cast<std::size_t>(e.size));
            p += e.size;
        }
    }
    return out.view();
}

} // namespace zarrxt::codec::detail
