/** @file codec/numcodecs/fixedscaleoffset.hpp
 *  `numcodecs.fixedscaleoffset` (array -> array): stores round((x - offset) * scale) in a (usually
 *  narrower) type `astype`; decodes as stored / scale + offset in the array's type. Lossy.
 *  Zarr v2: numcodecs filter {"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f4",
 *  "astype": "<i2"}; v3: "numcodecs.fixedscaleoffset".
 *
 *  This codec changes the element type between stages: the codecs after it see `astype`.
 *  Rounding is half to even (numpy's around); conversions to an integer type saturate instead of
 *  invoking undefined behaviour on values out of range (numpy's result there is unspecified).
 */
#pragma once

#include "../concepts.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace zarrxt::codec::numcodecs
{

class fixedscaleoffset
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "numcodecs.fixedscaleoffset";

    double offset = 0;
    double scale = 1;
    dtype_id dtype = dtype_id::float32;  ///< the array's type
    dtype_id astype = dtype_id::float32; ///< the stored type

    static fixedscaleoffset from_json(const json& cfg, const codec_context& ctx)
    {
        detail::check_keys(name, cfg, {"offset", "scale", "dtype", "astype", "id"});
        fixedscaleoffset f;
        f.dtype = ctx.dtype;
        f.astype = ctx.dtype;
        auto number = [&](const char* k, double def) {
            auto it = cfg.find(k);
            if (it == cfg.end())
            {
                return def;
            }
            if (!it->is_number())
            {
                detail::bad_config(name, "\"" + std::string(k) + "\" must be a number, got " + it->dump());
            }
            return it->get<double>();
        };
        f.offset = number("offset", 0);
        f.scale = number("scale", 1);
        if (!(f.scale != 0) || !std::isfinite(f.scale) || !std::isfinite(f.offset))
        {
            detail::bad_config(name, "\"scale\" must be finite and non-zero and \"offset\" finite");
        }
        auto type_of = [&](const char* k, dtype_id def) {
            auto it = cfg.find(k);
            if (it == cfg.end())
            {
                return def;
            }
            auto id = it->is_string() ? dtype_from_any_name(it->get<std::string>()) : std::nullopt;
            if (!id || !with_arithmetic_type(*id, [](auto) {}))
            {
                detail::bad_config(name, "\"" + std::string(k) + "\" must be an integer or floating-point type, got " + it->dump());
            }
            return *id;
        };
        if (type_of("dtype", ctx.dtype) != ctx.dtype)
        {
            detail::bad_config(name, "\"dtype\" must be the array's data type (" + std::string(zarrxt::name(ctx.dtype)) + ")");
        }
        if (!with_arithmetic_type(ctx.dtype, [](auto) {}))
        {
            detail::bad_config(name, "the array's data type must be an integer or floating-point type");
        }
        f.astype = type_of("astype", ctx.dtype);
        return f;
    }
    json to_json() const
    {
        return {{"offset", offset}, {"scale", scale}, {"dtype", std::string(zarrxt::name(dtype))},
                {"astype", std::string(zarrxt::name(astype))}};
    }

    dtype_id encoded_dtype(dtype_id) const { return astype; }
    dims encoded_shape(const dims& shape) const { return shape; }

    array_view decode(array_view encoded, buffer& out) const
    {
        return convert(encoded, out, astype, dtype, [&](double v) { return v / scale + offset; });
    }
    array_view encode(array_view decoded, buffer& out) const
    {
        return convert(decoded, out, dtype, astype, [&](double v) { return std::nearbyint((v - offset) * scale); });
    }

private:
    template <class To>
    static To saturate(double v)
    {
        if constexpr (std::is_integral_v<To>)
        {
            if (std::isnan(v))
            {
                return To{0};
            }
            if (v <= static_cast<double>(std::numeric_limits<To>::min()))
            {
                return std::numeric_limits<To>::min();
            }
            if (v >= std::ldexp(1.0, std::numeric_limits<To>::digits))
            {
                return std::numeric_limits<To>::max();
            }
            return static_cast<To>(v);
        }
        else if constexpr (std::is_same_v<To, float16>)
        {
            return To(static_cast<float>(v));
        }
        else
        {
            return static_cast<To>(v); // IEEE conversions are defined for every value (inf on overflow)
        }
    }

    template <class F>
    static array_view convert(const array_view& in, buffer& out, dtype_id from, dtype_id to, F&& f)
    {
        const std::size_t n = static_cast<std::size_t>(in.elements());
        out.resize_discard(n * info(to).size);
        with_arithmetic_type(from, [&](auto ft) {
            using From = typename decltype(ft)::type;
            with_arithmetic_type(to, [&](auto tt) {
                using To = typename decltype(tt)::type;
                for (std::size_t i = 0; i < n; ++i)
                {
                    From x;
                    std::memcpy(&x, in.data + i * sizeof(From), sizeof(From));
                    const To y = saturate<To>(f(static_cast<double>(x)));
                    std::memcpy(out.data() + i * sizeof(To), &y, sizeof(To));
                }
            });
        });
        array_view r = in;
        r.data = out.data();
        r.element_size = info(to).size;
        return r;
    }
};

} // namespace zarrxt::codec::numcodecs
