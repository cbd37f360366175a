/** @file codec/partial_encode.hpp
 *  Partial encoding: how a codec chain rewrites part of one stored object, the write side of
 *  codec/partial_decode.hpp. The kernel hands every object a write touches to `write_region`:
 *  - a codec that derives from `partial_encoder` (the sharding codec, when it is the whole chain)
 *    rewrites the object itself: it reads and decodes only the inner chunks the write covers partly,
 *    copies the untouched ones as encoded bytes, and streams the new version to the store;
 *  - any other chain rewrites the whole chunk: encoded straight from the source when the write
 *    covers it and its data is one C-ordered block there, else gathered in scratch (over the old
 *    contents, read and decoded, when the write covers it only partly) and encoded.
 *  Either way an object left holding only the fill value is erased instead of stored, unless the
 *  array keeps empty chunks.
 */
#pragma once

#include "../detail/checked.hpp"
#include "../detail/fill.hpp"
#include "../detail/strided_copy.hpp"
#include "../kernel/io.hpp"
#include "concepts.hpp"

namespace zarrxt::codec
{

/// What a codec that can rewrite part of an object offers (the sharding codec).
class partial_encoder
{
public:
    virtual ~partial_encoder() = default;

    /// Rewrite the object behind `io` so that `region` (object coordinates) holds `src` (an array of
    /// region.extent, any strides). `bounds` is the part of the object inside the array; outside it
    /// everything is fill value.
    virtual void write_region(object_io& io, const box& region, const box& bounds, const array_view& src,
                              write_context& ctx) const = 0;
};

/// The codec chains' side of partial encoding (both `chain<...>` and `dynamic_chain` model it).
template <class Chain>
concept partially_encodable = requires(const Chain& c, const array_view& v, mutable_byte_view in,
                                       scratch_space& s, const limit_values& l)
{
    {
        c.partial_encoder()
        } -> std::same_as<const partial_encoder*>;
    {
        c.encode(v, s)
        } -> std::same_as<byte_view>;
    {
        c.decode(in, s, l)
        } -> std::same_as<array_view>;
    c.context().chunk_shape;
};

/// Rewrite the object behind `io` so that `region` holds `src` (see partial_encoder::write_region).
template <partially_encodable Chain>
void write_region(const Chain& chain, object_io& io, const box& region, const box& bounds,
                  const array_view& src, write_context& ctx)
{
    if (const partial_encoder* p = chain.partial_encoder())
    {
        p->write_region(io, region, bounds, src, ctx);
        return;
    }
    const codec_context& cc = chain.context();
    const dims& shape = cc.chunk_shape;
    const std::size_t width = cc.element_size();
    const std::uint64_t elements = zarrxt::detail::checked_product(shape, "chunk elements");
    const std::size_t bytes =
        zarrxt::detail::to_size(zarrxt::detail::checked_mul(elements, width, "chunk bytes"), "chunk bytes");
    // A chunk above the cap could not be read back; refuse it before allocating for it.
    if (bytes > ctx.limits.max_chunk_bytes)
    {
        limit_exceeded e("max_chunk_bytes", bytes, ctx.limits.max_chunk_bytes);
        e.with_key(io.key());
        throw e;
    }
    const sdims cs = array_view::c_strides(shape);
    const bool covered = src.mask == nullptr && region.offset == bounds.offset &&
                         region.extent == bounds.extent; // every in-bounds element
    bool fully_in = true;
    bool direct = covered; // the chunk is one C-ordered block of the source
    for (std::size_t d = 0; d < shape.size(); ++d)
    {
        fully_in = fully_in && bounds.offset[d] == 0 && bounds.extent[d] == shape[d];
        direct = direct && (shape[d] == 1 || src.strides[d] == cs[d]);
    }
    direct = direct && fully_in;
    scratch_space local;
    scratch_space& s = ctx.scratch != nullptr ? *ctx.scratch : local;
    try
    {
        const std::byte* data = src.data;
        if (!direct)
        {
            s.work.resize_discard(bytes);
            bool filled = false;
            if (!covered)
            {
                // Read-modify-write: the old contents under the part this write leaves alone.
                if (io.current().read_to(byte_range::all(), ctx.limits.max_chunk_bytes, s.io))
                {
                    if (ctx.counters != nullptr)
                    {
                        ctx.counters->add_payload_read(s.io.size());
                    }
                    const array_view v = chain.decode(s.io.mutable_view(), s, ctx.limits);
                    zarrxt::detail::strided_copy(s.work.data(), cs, v.data, v.strides, v.shape, width);
                    filled = true;
                }
            }
            if (!filled && (!covered || !fully_in))
            {
                zarrxt::detail::fill_run(s.work.data(), elements, width, cc.fill);
            }
            std::int64_t dst_off = 0;
            for (std::size_t d = 0; d < shape.size(); ++d)
            {
                dst_off += static_cast<std::int64_t>(region.offset[d]) * cs[d];
            }
            if (src.mask != nullptr)
            {
                zarrxt::detail::masked_strided_copy(
                    s.work.data() + dst_off * static_cast<std::int64_t>(width), cs, src.data, src.strides,
                    src.mask, region.extent, width);
            }
            else
            {
                zarrxt::detail::strided_copy(s.work.data() + dst_off * static_cast<std::int64_t>(width), cs,
                                             src.data, src.strides, region.extent, width);
            }
            data = s.work.data();
        }
        if (!ctx.write_empty_chunks && zarrxt::detail::all_equal_fill(data, elements, width, cc.fill))
        {
            if (io.erase() && ctx.counters != nullptr)
            {
                ctx.counters->add_erase();
            }
            return;
        }
        array_view cv;
        cv.data = const_cast<std::byte*>(data);
        cv.element_size = width;
        cv.shape = shape;
        cv.strides = cs;
        const byte_view enc = chain.encode(cv, s);
        io.put(enc);
        if (ctx.counters != nullptr)
        {
            ctx.counters->add_write(enc.size());
        }
    }
    catch (error& e)
    {
        e.with_key(io.key());
        throw;
    }
}

} // namespace zarrxt::codec
