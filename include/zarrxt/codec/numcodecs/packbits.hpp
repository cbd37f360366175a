/** @file codec/numcodecs/packbits.hpp
 *  `numcodecs.packbits` (array -> array): numcodecs' PackBits filter for bool arrays. The chunk,
 *  flattened in memory order, becomes a 1-d uint8 array: one byte with the number of padding bits
 *  (0..7), then the bits packed most significant first (numpy.packbits), the last byte padded
 *  with zero bits. Zarr v2: filter {"id": "packbits"}; v3 (zarr-python 3): "numcodecs.packbits".
 *
 *  Decoding checks the padding byte against the chunk's element count (numcodecs would fail to
 *  copy a result of the wrong size). Not the zarr-extensions `packbits` array->bytes codec
 *  (codec/packbits.hpp), which packs the least significant bit first.
 */
#pragma once

#include "../../detail/checked.hpp"
#include "../concepts.hpp"

#include <cstring>
#include <string>

namespace zarrxt::codec::numcodecs
{

class packbits
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "numcodecs.packbits";

    static packbits from_json(const json& cfg, const codec_context& ctx)
    {
        detail::check_keys(name, cfg, {"id"});
        if (ctx.dtype != dtype_id::bool_)
        {
            detail::bad_config(name,
                               "packbits needs a bool array, not " + std::string(zarrxt::name(ctx.dtype)));
        }
        packbits p;
        p.m_shape = ctx.chunk_shape;
        p.m_elements = zarrxt::detail::to_size(
            zarrxt::detail::checked_product(ctx.chunk_shape, "chunk elements"), "chunk elements");
        p.m_padding = static_cast<unsigned>((8 - p.m_elements % 8) % 8);
        return p;
    }
    json to_json() const { return json::object(); }

    dtype_id encoded_dtype(dtype_id) const { return dtype_id::uint8; }
    dims encoded_shape(const dims&) const { return dims{encoded_length()}; }

    array_view decode(array_view encoded, buffer& out) const
    {
        buffer dense;
        const std::byte* in = contiguous(encoded, dense);
        if (encoded.elements() != encoded_length())
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "packed chunk has " + std::to_string(encoded.elements()) + " bytes, expected " +
                                  std::to_string(encoded_length()));
        }
        const auto stored = static_cast<unsigned>(in[0]);
        if (stored != m_padding)
        {
            throw codec_error(codec_errc::size_mismatch, name,
                              "the padding byte says " + std::to_string(stored) +
                                  " padding bits, the chunk has " + std::to_string(m_padding));
        }
        out.resize_discard(m_elements);
        for (std::size_t i = 0; i < m_elements; ++i)
        {
            const auto byte = static_cast<unsigned>(in[1 + i / 8]);
            out.data()[i] = static_cast<std::byte>((byte >> (7 - i % 8)) & 1u);
        }
        array_view d;
        d.data = out.data();
        d.element_size = 1;
        d.shape = m_shape;
        d.strides = array_view::c_strides(m_shape);
        return d;
    }

    array_view encode(array_view decoded, buffer& out) const
    {
        buffer dense;
        const std::byte* in = contiguous(decoded, dense);
        out.resize_discard(encoded_length());
        std::memset(out.data(), 0, out.size());
        out.data()[0] = static_cast<std::byte>(m_padding);
        for (std::size_t i = 0; i < m_elements; ++i)
        {
            if (in[i] != std::byte{0})
            {
                out.data()[1 + i / 8] |= static_cast<std::byte>(0x80u >> (i % 8));
            }
        }
        array_view e;
        e.data = out.data();
        e.element_size = 1;
        e.shape = dims{encoded_length()};
        e.strides = array_view::c_strides(e.shape);
        return e;
    }

private:
    std::uint64_t encoded_length() const noexcept { return 1 + (m_elements + 7) / 8; }

    /// The view's bytes in C order (copied into `tmp` when the view is strided).
    static const std::byte* contiguous(const array_view& v, buffer& tmp)
    {
        if (v.is_c_contiguous())
        {
            return v.data;
        }
        tmp.resize_discard(static_cast<std::size_t>(v.elements()) * v.element_size);
        zarrxt::detail::strided_copy(tmp.data(), array_view::c_strides(v.shape), v.data, v.strides, v.shape,
                                     v.element_size);
        return tmp.data();
    }

    dims m_shape;
    std::size_t m_elements = 0;
    unsigned m_padding = 0;
};

static_assert(array_to_array_codec<packbits>, "packbits must meet the requirements of its codec kind");

} // namespace zarrxt::codec::numcodecs
