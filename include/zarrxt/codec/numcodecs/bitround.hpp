/** @file codec/numcodecs/bitround.hpp
 *  `numcodecs.bitround` (array -> array): lossy; keeps `keepbits` mantissa bits of each float,
 *  rounding to nearest (ties to even), so a compressor that follows sees zero bits. Decoding is the
 *  identity: the rounded floats are ordinary floats.
 *  Zarr v2: numcodecs filter {"id": "bitround", "keepbits": 3}; v3: "numcodecs.bitround".
 */
#pragma once

#include "../concepts.hpp"

#include <cstring>

namespace zarrxt::codec::numcodecs
{

class bitround
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "numcodecs.bitround";

    int keepbits = 10;

    static bitround from_json(const json& cfg, const codec_context& ctx)
    {
        detail::check_keys(name, cfg, {"keepbits", "id"});
        bitround b;
        b.m_mantissa = ctx.dtype == dtype_id::float16 ? 10 : ctx.dtype == dtype_id::float32 ? 23 : ctx.dtype == dtype_id::float64 ? 52 : 0;
        if (b.m_mantissa == 0)
        {
            detail::bad_config(name, "bitround needs a floating-point data type, not " + std::string(zarrxt::name(ctx.dtype)));
        }
        b.keepbits = static_cast<int>(detail::int_member(name, cfg, "keepbits", 10, 0, b.m_mantissa));
        b.m_width = ctx.element_size();
        return b;
    }
    json to_json() const { return {{"keepbits", keepbits}}; }

    dims encoded_shape(const dims& shape) const { return shape; }
    array_view decode(array_view encoded, buffer&) const { return encoded; }

    array_view encode(array_view decoded, buffer& out) const
    {
        const std::size_t n = static_cast<std::size_t>(decoded.elements());
        out.resize_discard(n * m_width);
        if (n != 0)
        {
            std::memcpy(out.data(), decoded.data, n * m_width);
        }
        const int drop = m_mantissa - keepbits;
        if (drop > 0)
        {
            if (m_width == 2)
            {
                round_bits<std::uint16_t>(out.data(), n, drop);
            }
            else if (m_width == 4)
            {
                round_bits<std::uint32_t>(out.data(), n, drop);
            }
            else
            {
                round_bits<std::uint64_t>(out.data(), n, drop);
            }
        }
        array_view e = decoded;
        e.data = out.data();
        return e;
    }

private:
    template <class U>
    static void round_bits(std::byte* p, std::size_t n, int drop)
    {
        const U mask = static_cast<U>(~U{0} << drop);
        const U half = static_cast<U>((U{1} << (drop - 1)) - 1);
        for (std::size_t i = 0; i < n; ++i)
        {
            U b;
            std::memcpy(&b, p + i * sizeof(U), sizeof(U));
            b = static_cast<U>(b + (((b >> drop) & U{1}) + half));
            b = static_cast<U>(b & mask);
            std::memcpy(p + i * sizeof(U), &b, sizeof(U));
        }
    }

    int m_mantissa = 23;
    std::size_t m_width = 4;
};

} // namespace zarrxt::codec::numcodecs
