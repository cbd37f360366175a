/** @file codec/packbits.hpp
 *  `packbits` (array -> bytes): each element stored in k bits, packed without gaps.
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/packbits
 *  Configuration: {"padding_encoding": "none" | "first_byte" | "last_byte", "first_bit": null | i,
 *  "last_bit": null | j}.
 *
 *  Element i occupies bits [i k, (i + 1) k) of the stream, where bit b is bit (b mod 8), counted
 *  from the least significant, of byte b / 8; the last byte is padded with zero bits. Each
 *  component keeps its bits first_bit..last_bit (default: all N bits of the type, little-endian as
 *  the `bytes` codec stores them; complex types have two components). Decoding shifts them back to
 *  first_bit and sign-extends signed integers, zero-extends the rest. bool is one bit (any nonzero
 *  byte encodes as 1). "first_byte" / "last_byte" add one byte holding the number of padding bits,
 *  which decoding checks. Supported: bool, int8..uint64, float16/32/64, complex64/128.
 *
 *  This is not numcodecs' PackBits (the v2 filter `packbits`, codec/numcodecs/packbits.hpp): that
 *  one packs the most significant bit first, so the bit order of the two formats differs even with
 *  "first_byte" padding (docs/compat.md).
 */
#pragma once

#include "../detail/checked.hpp"
#include "../detail/endian.hpp"
#include "concepts.hpp"

#include <cstring>
#include <string>

namespace zarrxt::codec
{

class packbits
{
public:
    using codec_kind = array_to_bytes_tag;
    static constexpr std::string_view name = "packbits";

    enum class padding
    {
        none,
        first_byte,
        last_byte
    };

    padding padding_encoding = padding::none;
    std::optional<unsigned> first_bit; ///< null: 0
    std::optional<unsigned> last_bit;  ///< null: N - 1

    static packbits from_json(const json& cfg, const codec_context& ctx);
    json to_json() const;

    mutable_byte_view decode(mutable_byte_view in, buffer& scratch) const;
    byte_view encode(byte_view in, buffer& scratch) const;
    /// Encoded bytes of one chunk: fixed by the geometry (so compressors after it get exact sizes).
    std::optional<std::size_t> fixed_encoded_size() const { return m_encoded_bytes; }
    /// With every bit kept and no padding the stream is the array's little-endian bytes (see
    /// bytes::raw_swap_word); otherwise a range of it cannot be decoded on its own.
    std::optional<std::size_t> raw_swap_word() const noexcept
    {
        if (!full_width())
        {
            return std::nullopt;
        }
        return native_endian == endian::little ? 1 : m_component_bytes;
    }

private:
    /// The stream is the array's little-endian bytes: all N bits of each component, no padding byte.
    bool full_width() const noexcept
    {
        return !m_bool && m_bits == m_component_bits && padding_encoding == padding::none;
    }

    unsigned m_component_bits = 8; // N
    unsigned m_components = 1;
    unsigned m_first = 0;
    unsigned m_bits = 8; // b = last - first + 1
    bool m_signed = false;
    bool m_bool = false;
    std::size_t m_component_bytes = 1;
    std::uint64_t m_elements = 0;
    std::size_t m_decoded_bytes = 0;
    std::size_t m_encoded_bytes = 0;
    unsigned m_padding_bits = 0;
};

/******************
 * implementation *
 ******************/

inline packbits packbits::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"padding_encoding", "first_bit", "last_bit"});
    packbits p;
    if (auto it = cfg.find("padding_encoding"); it != cfg.end())
    {
        if (*it == "none")
        {
            p.padding_encoding = padding::none;
        }
        else if (*it == "first_byte")
        {
            p.padding_encoding = padding::first_byte;
        }
        else if (*it == "last_byte")
        {
            p.padding_encoding = padding::last_byte;
        }
        else
        {
            detail::bad_config(
                name,
                "\"padding_encoding\" must be \"none\", \"first_byte\" or \"last_byte\", got " + it->dump());
        }
    }
    // Records and user types are bytes with no component width to pack (their table size is 0).
    if (is_string_like(ctx.dtype) || is_time(ctx.dtype) || ctx.dtype == dtype_id::structured ||
        is_user(ctx.dtype))
    {
        detail::bad_config(name, "packs numbers, not " + std::string(zarrxt::name(ctx.dtype)) + " values");
    }
    const dtype_info& d = info(ctx.dtype);
    p.m_bool = ctx.dtype == dtype_id::bool_;
    p.m_signed = d.v2_kind == 'i';
    p.m_components = d.v2_kind == 'c' ? 2 : 1;
    p.m_component_bytes = d.size / p.m_components;
    p.m_component_bits = p.m_bool ? 1 : static_cast<unsigned>(8 * p.m_component_bytes);
    auto bit = [&](const char* key) -> std::optional<unsigned>
    {
        auto it = cfg.find(key);
        if (it == cfg.end() || it->is_null())
        {
            return std::nullopt;
        }
        if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
            it->get<std::int64_t>() >= p.m_component_bits)
        {
            detail::bad_config(name, "\"" + std::string(key) + "\" must be null or a bit index below " +
                                         std::to_string(p.m_component_bits) + " (" +
                                         std::string(zarrxt::name(ctx.dtype)) + "), got " + it->dump());
        }
        return static_cast<unsigned>(it->get<std::int64_t>());
    };
    p.first_bit = bit("first_bit");
    p.last_bit = bit("last_bit");
    p.m_first = p.first_bit.value_or(0);
    const unsigned last = p.last_bit.value_or(p.m_component_bits - 1);
    if (last < p.m_first)
    {
        detail::bad_config(name, "\"last_bit\" (" + std::to_string(last) + ") is below \"first_bit\" (" +
                                     std::to_string(p.m_first) + ")");
    }
    p.m_bits = last - p.m_first + 1;
    p.m_elements = zarrxt::detail::checked_product(ctx.chunk_shape, "chunk elements");
    p.m_decoded_bytes = zarrxt::detail::to_size(
        zarrxt::detail::checked_mul(p.m_elements, d.size, "chunk bytes"), "chunk bytes");
    check_limit("max_chunk_bytes", p.m_decoded_bytes, ctx.limits.max_chunk_bytes);
    const std::uint64_t bits = zarrxt::detail::checked_mul(
        p.m_elements, std::uint64_t{p.m_components} * p.m_bits, "packed chunk bits");
    p.m_padding_bits = static_cast<unsigned>((8 - bits % 8) % 8);
    p.m_encoded_bytes =
        static_cast<std::size_t>((bits + 7) / 8) + (p.padding_encoding == padding::none ? 0 : 1);
    return p;
}

inline json packbits::to_json() const
{
    json j = json::object();
    if (padding_encoding != padding::none)
    {
        j["padding_encoding"] = padding_encoding == padding::first_byte ? "first_byte" : "last_byte";
    }
    if (first_bit)
    {
        j["first_bit"] = *first_bit;
    }
    if (last_bit)
    {
        j["last_bit"] = *last_bit;
    }
    return j;
}

inline byte_view packbits::encode(byte_view in, buffer& scratch) const
{
    if (in.size() != m_decoded_bytes)
    {
        throw codec_error(codec_errc::size_mismatch, name,
                          "chunk has " + std::to_string(in.size()) + " bytes, expected " +
                              std::to_string(m_decoded_bytes));
    }
    if (full_width() && native_endian == endian::little)
    {
        return in;
    }
    scratch.resize_discard(m_encoded_bytes);
    if (m_encoded_bytes == 0)
    {
        return scratch.view();
    }
    std::memset(scratch.data(), 0, m_encoded_bytes);
    std::byte* bits = scratch.data() + (padding_encoding == padding::first_byte ? 1 : 0);
    const std::size_t payload = m_encoded_bytes - (padding_encoding == padding::none ? 0 : 1);
    if (padding_encoding == padding::first_byte)
    {
        scratch.data()[0] = static_cast<std::byte>(m_padding_bits);
    }
    else if (padding_encoding == padding::last_byte)
    {
        scratch.data()[payload] = static_cast<std::byte>(m_padding_bits);
    }
    const std::uint64_t count = m_elements * m_components;
    const std::uint64_t mask = m_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m_bits) - 1;
    std::uint64_t pos = 0; // bit position in the stream
    for (std::uint64_t i = 0; i < count; ++i)
    {
        std::uint64_t v = 0;
        if (m_bool)
        {
            v = in[i] != std::byte{0} ? 1 : 0;
        }
        else
        {
            // The component's bits as the bytes codec stores them: little-endian.
            const std::byte* c = in.data() + i * m_component_bytes;
            for (std::size_t b = m_component_bytes; b-- > 0;)
            {
                v = (v << 8) | static_cast<std::uint64_t>(
                                   c[native_endian == endian::little ? b : m_component_bytes - 1 - b]);
            }
            v = (v >> m_first) & mask;
        }
        // Write m_bits bits of v at pos, least significant first.
        unsigned left = m_bits;
        while (left > 0)
        {
            const unsigned at = static_cast<unsigned>(pos % 8);
            const unsigned take = std::min(left, 8 - at);
            bits[pos / 8] |= static_cast<std::byte>((v & ((1u << take) - 1)) << at);
            v >>= take;
            pos += take;
            left -= take;
        }
    }
    return scratch.view();
}

inline mutable_byte_view packbits::decode(mutable_byte_view in, buffer& scratch) const
{
    if (in.size() != m_encoded_bytes)
    {
        throw codec_error(codec_errc::size_mismatch, name,
                          "chunk has " + std::to_string(in.size()) + " bytes, expected " +
                              std::to_string(m_encoded_bytes));
    }
    const std::byte* bits = in.data() + (padding_encoding == padding::first_byte ? 1 : 0);
    if (padding_encoding != padding::none)
    {
        const auto stored =
            static_cast<unsigned>(padding_encoding == padding::first_byte ? in[0] : in[in.size() - 1]);
        if (stored != m_padding_bits)
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "the padding byte says " + std::to_string(stored) +
                                  " padding bits, the chunk has " + std::to_string(m_padding_bits));
        }
    }
    if (full_width())
    {
        // Every bit kept and no padding byte: the stream is the little-endian array itself, decoded
        // in place like the bytes codec (chains read such chunks straight into the destination).
        if (native_endian != endian::little)
        {
            zarrxt::detail::byteswap_in_place(in.data(), in.size(), m_component_bytes);
        }
        return in;
    }
    scratch.resize_discard(m_decoded_bytes);
    std::byte* out = scratch.data();
    const std::uint64_t count = m_elements * m_components;
    std::uint64_t pos = 0;
    for (std::uint64_t i = 0; i < count; ++i)
    {
        std::uint64_t v = 0;
        unsigned got = 0;
        while (got < m_bits)
        {
            const unsigned at = static_cast<unsigned>(pos % 8);
            const unsigned take = std::min(m_bits - got, 8 - at);
            const std::uint64_t chunk =
                (static_cast<std::uint64_t>(bits[pos / 8]) >> at) & ((1u << take) - 1);
            v |= chunk << got;
            got += take;
            pos += take;
        }
        if (m_bool)
        {
            out[i] = static_cast<std::byte>(v);
            continue;
        }
        v <<= m_first;
        const unsigned top = m_first + m_bits; // bits above this are the extension
        if (m_signed && top < 64 && ((v >> (top - 1)) & 1) != 0)
        {
            v |= ~std::uint64_t{0} << top;
        }
        std::byte* c = out + i * m_component_bytes;
        for (std::size_t b = 0; b < m_component_bytes; ++b)
        {
            c[native_endian == endian::little ? b : m_component_bytes - 1 - b] =
                static_cast<std::byte>(v >> (8 * b));
        }
    }
    return scratch.mutable_view();
}

static_assert(array_to_bytes_codec<packbits>, "packbits must meet the requirements of its codec kind");

} // namespace zarrxt::codec
