/** @file codec/scale_offset.hpp
 *  `scale_offset` (array -> array): stores (x - offset) * scale; decodes x / scale + offset.
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/scale_offset
 *  Configuration: {"offset": 5, "scale": 0.1}, each a scalar in the fill-value encoding of the
 *  array's data type ("NaN", "0x..." for floats). A missing member means offset 0 / scale 1, as
 *  zarr-python 3.2 and zarrita read it (they also accept no configuration at all).
 *
 *  The arithmetic is done in the array's own data type, as zarr-python 3.2 does it (the spec names
 *  the formula, not the arithmetic): floats in their precision (float16 rounded after every
 *  operation, as numpy computes half floats), integers modulo 2^bits with floor division on decode
 *  (numpy's `//`). An integer scale of 0 is refused, since decoding would divide by zero. The
 *  element type does not change; to store a narrower type, follow it with `cast_value`.
 */
#pragma once

#include "../config.hpp"
#include "../detail/half.hpp"
#include "../fill_value.hpp"
#include "concepts.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace zarrxt::codec
{

class scale_offset
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "scale_offset";

    dtype_id dtype = dtype_id::float64; ///< the array's type (the codec keeps it)
    fill_value offset;                  ///< native bytes of the offset in `dtype`
    fill_value scale;                   ///< native bytes of the scale in `dtype`

    static scale_offset from_json(const json& cfg, const codec_context& ctx);
    json to_json() const;

    dims encoded_shape(const dims& shape) const { return shape; }
    fill_value encoded_fill(const fill_value& f) const
    {
        fill_value out = f;
        apply(f.bytes.data(), out.bytes.data(), 1, true);
        return out;
    }

    array_view decode(array_view encoded, buffer& out) const
    {
        return detail::map_elements(encoded, out, info(dtype).size,
                                    [&](const std::byte* s, std::byte* d, std::size_t n)
                                    { apply(s, d, n, false); });
    }
    array_view encode(array_view decoded, buffer& out) const
    {
        return detail::map_elements(decoded, out, info(dtype).size,
                                    [&](const std::byte* s, std::byte* d, std::size_t n)
                                    { apply(s, d, n, true); });
    }

    /// n elements through the encoding (x - offset) * scale or the decoding x / scale + offset.
    void apply(const std::byte* src, std::byte* dst, std::size_t n, bool encoding) const;

private:
    json m_offset_json = nullptr; // as configured (absent: null), for write-back
    json m_scale_json = nullptr;
};

/******************
 * implementation *
 ******************/

// Under ZARRXT_SEPARATE_COMPILATION the members below are compiled once, in the compiled part
// (config.hpp): their type dispatch instantiates a loop per pair of element types, which other
// units need not parse or instantiate.
#if ZARRXT_DEFINITIONS

ZARRXT_DECL scale_offset scale_offset::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"offset", "scale"});
    scale_offset c;
    c.dtype = ctx.dtype;
    if (!with_arithmetic_type(ctx.dtype, [](auto) {}))
    {
        detail::bad_config(name, "the array's data type must be an integer or floating-point type, not " +
                                     std::string(zarrxt::name(ctx.dtype)));
    }
    auto scalar = [&](const char* key, json& keep, fill_value& out, int def)
    {
        auto it = cfg.find(key);
        if (it == cfg.end())
        {
            out = parse_fill_value(json(def), c.dtype, 3);
            return;
        }
        keep = *it;
        try
        {
            out = parse_fill_value(*it, c.dtype, 3);
        }
        catch (const metadata_error& e)
        {
            detail::bad_config(name, "\"" + std::string(key) + "\" is not a value of " +
                                         std::string(zarrxt::name(c.dtype)) + ": " + e.message());
        }
    };
    scalar("offset", c.m_offset_json, c.offset, 0);
    scalar("scale", c.m_scale_json, c.scale, 1);
    if (info(c.dtype).v2_kind != 'f' && c.scale.all_zero(info(c.dtype).size))
    {
        detail::bad_config(name, "an integer \"scale\" of 0 cannot be decoded (division by zero)");
    }
    return c;
}

ZARRXT_DECL json scale_offset::to_json() const
{
    json j = json::object();
    if (!m_offset_json.is_null())
    {
        j["offset"] = m_offset_json;
    }
    if (!m_scale_json.is_null())
    {
        j["scale"] = m_scale_json;
    }
    return j;
}

ZARRXT_DECL void scale_offset::apply(const std::byte* src, std::byte* dst, std::size_t n, bool encoding) const
{
    with_arithmetic_type(
        dtype,
        [&](auto t)
        {
            using T = typename decltype(t)::type;
            const T o = offset.as<T>();
            const T s = scale.as<T>();
            if constexpr (std::is_integral_v<T>)
            {
                // Modulo 2^bits: computed in an unsigned type at least as wide as unsigned int (so that
                // the operands are not promoted to int, whose overflow is undefined), then truncated.
                using U = std::make_unsigned_t<T>;
                using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
                const W uo = static_cast<U>(o);
                const W us = static_cast<U>(s);
                for (std::size_t i = 0; i < n; ++i)
                {
                    T x;
                    std::memcpy(&x, src + i * sizeof(T), sizeof(T));
                    U y;
                    if (encoding)
                    {
                        y = static_cast<U>((static_cast<W>(static_cast<U>(x)) - uo) * us);
                    }
                    else
                    {
                        T q;
                        if constexpr (std::is_signed_v<T>)
                        {
                            if (s == -1)
                            {
                                q = static_cast<T>(static_cast<U>(
                                    W{0} - static_cast<W>(static_cast<U>(x)))); // min / -1 wraps to min
                            }
                            else
                            {
                                q = static_cast<T>(x / s);
                                if (x % s != 0 && ((x < 0) != (s < 0)))
                                {
                                    q = static_cast<T>(q - 1); // floor, as numpy's //
                                }
                            }
                        }
                        else
                        {
                            q = static_cast<T>(x / s);
                        }
                        y = static_cast<U>(static_cast<W>(static_cast<U>(q)) + uo);
                    }
                    std::memcpy(dst + i * sizeof(T), &y, sizeof(T));
                }
            }
            else if constexpr (std::is_same_v<T, float16>)
            {
                // numpy computes half floats in float and rounds to half after each operation.
                const float fo = static_cast<float>(o);
                const float fs = static_cast<float>(s);
                for (std::size_t i = 0; i < n; ++i)
                {
                    T x;
                    std::memcpy(&x, src + i * sizeof(T), sizeof(T));
                    const float fx = static_cast<float>(x);
                    const T y = encoding ? T(static_cast<float>(T(fx - fo)) * fs)
                                         : T(static_cast<float>(T(fx / fs)) + fo);
                    std::memcpy(dst + i * sizeof(T), &y, sizeof(T));
                }
            }
            else
            {
                for (std::size_t i = 0; i < n; ++i)
                {
                    T x;
                    std::memcpy(&x, src + i * sizeof(T), sizeof(T));
                    const T y = encoding ? static_cast<T>(static_cast<T>(x - o) * s)
                                         : static_cast<T>(static_cast<T>(x / s) + o);
                    std::memcpy(dst + i * sizeof(T), &y, sizeof(T));
                }
            }
        });
}

#endif // ZARRXT_DEFINITIONS

static_assert(array_to_array_codec<scale_offset>,
              "scale_offset must meet the requirements of its codec kind");

} // namespace zarrxt::codec
