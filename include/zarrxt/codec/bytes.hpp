/** @file codec/bytes.hpp
 *  `bytes` (array -> bytes): the elements of a chunk in C order, in a stated byte order.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/bytes/index.html
 *  Zarr v2 equivalent: the dtype's byte-order character ("<i2" / ">i2"), lowered by metadata/v2.hpp.
 *
 *  Decoding is in place (a byte swap when the stored order is not native) and encoding copies only
 *  when a swap is needed, so a raw chunk costs no copy in either direction.
 *
 *  `bytes<>` takes the byte order from the metadata; `bytes<endian_mode::little>` in a static chain
 *  additionally requires the stored order to be little-endian (checked at open).
 */
#pragma once

#include "../detail/checked.hpp"
#include "../detail/endian.hpp"
#include "../zarrxt_fwd.hpp"
#include "concepts.hpp"

#include <cstring>
#include <string>

namespace zarrxt::codec
{

template <endian_mode Mode>
class bytes
{
public:
    using codec_kind = array_to_bytes_tag;
    static constexpr std::string_view name = "bytes";

    /// Stored byte order; meaningful only for elements wider than one byte.
    endian order = Mode == endian_mode::big ? endian::big : endian::little;

    static bytes from_json(const json& cfg, const codec_context& ctx);
    json to_json() const;

    mutable_byte_view decode(mutable_byte_view in, buffer& scratch) const;
    byte_view encode(byte_view in, buffer& scratch) const;
    /// Encoded bytes of one chunk: always the decoded size (lets index chains have a fixed size).
    std::optional<std::size_t> fixed_encoded_size() const { return m_chunk_bytes; }
    /// The stored bytes are the elements in C order, byte-swapped in words of this size (1: not
    /// swapped): any byte range of a chunk decodes on its own (partial reads, codec/partial_decode.hpp).
    std::optional<std::size_t> raw_swap_word() const noexcept
    {
        if (m_record_swaps)
        {
            return std::nullopt; // swapped per field: a byte range is not a run of equal words
        }
        return needs_swap() ? m_word : 1;
    }

    /// Bound state (set by from_json): element width and bytes of one decoded chunk.
    std::size_t m_word = 1;
    std::vector<swap_run> m_runs; ///< records: their multi-byte scalars, swapped field by field
    bool m_record_swaps = false;  ///< records: some of them are stored in the other byte order
    std::size_t m_element_size = 0; // 0: not bound to a dtype yet (a value given to create())
    std::size_t m_chunk_bytes = 0;

private:
    bool needs_swap() const noexcept { return m_word > 1 && order != native_endian; }
};

/******************
 * implementation *
 ******************/

template <endian_mode Mode>
bytes<Mode> bytes<Mode>::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"endian"});
    if (is_vlen(ctx.dtype))
    {
        // Its elements are pointers (vlen.hpp): stored as they are, they would mean nothing.
        detail::bad_config(name, "the " + std::string(zarrxt::name(ctx.dtype)) +
                                     " data type has variable-length values, encoded by " +
                                     (ctx.dtype == dtype_id::string ? "vlen-utf8" : "vlen-bytes") +
                                     ", not bytes");
    }
    bytes b;
    b.m_word = ctx.dtype.swap_word();
    b.m_element_size = ctx.element_size();
    b.m_chunk_bytes = zarrxt::detail::to_size(
        zarrxt::detail::checked_mul(zarrxt::detail::checked_product(ctx.chunk_shape, "chunk elements"),
                                    ctx.element_size(), "chunk bytes"),
        "chunk bytes");
    // The decoded chunk is the unit every read allocates: refuse geometries beyond the cap up front.
    check_limit("max_chunk_bytes", b.m_chunk_bytes, ctx.limits.max_chunk_bytes);
    if (auto it = cfg.find("endian"); it != cfg.end())
    {
        if (!it->is_string() || (*it != "little" && *it != "big"))
        {
            detail::bad_config(name, "\"endian\" must be \"little\" or \"big\", got " + it->dump());
        }
        b.order = *it == "big" ? endian::big : endian::little;
    }
    if (ctx.dtype == dtype_id::structured)
    {
        // A record's scalars are swapped one by one: in the order their field states (v2), else in
        // the codec's.
        b.m_runs = ctx.record_runs;
        for (const auto& r : b.m_runs)
        {
            b.m_record_swaps = b.m_record_swaps || r.order.value_or(b.order) != native_endian;
        }
    }
    // A missing "endian" on a multi-byte type is tolerated as little-endian (docs/compat.md).
    if constexpr (Mode != endian_mode::any)
    {
        if (b.m_word > 1 && b.order != (Mode == endian_mode::big ? endian::big : endian::little))
        {
            detail::bad_config(name, "the static chain requires the other byte order");
        }
    }
    return b;
}

template <endian_mode Mode>
json bytes<Mode>::to_json() const
{
    if (m_element_size != 0 && m_word == 1 && m_runs.empty())
    {
        return json::object(); // byte order is meaningless for one-byte words (uint8, |S n)
    }
    return {{"endian", order == endian::big ? "big" : "little"}};
}

template <endian_mode Mode>
mutable_byte_view bytes<Mode>::decode(mutable_byte_view in, buffer&) const
{
    if (in.size() != m_chunk_bytes)
    {
        throw codec_error(codec_errc::size_mismatch, name,
                          "chunk has " + std::to_string(in.size()) + " bytes, expected " +
                              std::to_string(m_chunk_bytes));
    }
    if (needs_swap())
    {
        zarrxt::detail::byteswap_in_place(in.data(), in.size(), m_word);
    }
    else if (m_record_swaps)
    {
        swap_records(in.data(), in.size() / m_element_size, m_element_size, m_runs, order);
    }
    return in;
}

template <endian_mode Mode>
byte_view bytes<Mode>::encode(byte_view in, buffer& scratch) const
{
    if (!needs_swap() && !m_record_swaps)
    {
        return in;
    }
    scratch.resize_discard(in.size());
    if (in.empty())
    {
        return scratch.view(); // memcpy must not see the null data() of an empty buffer
    }
    std::memcpy(scratch.data(), in.data(), in.size());
    if (m_record_swaps)
    {
        swap_records(scratch.data(), in.size() / m_element_size, m_element_size, m_runs, order);
    }
    else
    {
        zarrxt::detail::byteswap_in_place(scratch.data(), in.size(), m_word);
    }
    return scratch.view();
}

} // namespace zarrxt::codec
