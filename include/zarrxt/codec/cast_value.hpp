/** @file codec/cast_value.hpp
 *  `cast_value` (array -> array): stores each value converted to another numeric data type.
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/cast_value
 *  Configuration: {"data_type": "uint8", "rounding": "nearest-even", "out_of_range": "error",
 *  "scalar_map": {"encode": [[a, b], ...], "decode": [[b, a], ...]}} (scalar_map as zarr-python 3.2
 *  and zarrita write it; each pair maps one value exactly, before any rounding or range check).
 *
 *  Encoding converts the array's type to `data_type`; decoding converts back, with the same
 *  rules. Between integers the conversion is exact or out of range; from floats to integers the
 *  value is first rounded (`rounding`: nearest-even, towards-zero, towards-positive,
 *  towards-negative, nearest-away); to floats IEEE round-to-nearest-even applies (the spec makes
 *  `rounding` apply to integer targets only). A value outside the target's range is an error
 *  (`out_of_range` "error", the default: codec error 8), is clamped to the target's minimum or
 *  maximum ("clamp"; infinities count as out of range for integer targets and finite values that
 *  would overflow to infinity for float targets), or wraps modulo 2^bits ("wrap", integer targets
 *  only; an infinity cannot wrap). NaN into an integer type is always an error unless the
 *  scalar_map names it. Supported types: int8..uint64, float16, float32, float64 on both sides.
 *
 *  This codec changes the element type between stages, like numcodecs.fixedscaleoffset: the codecs
 *  after it are bound to `data_type`, and to the fill value cast the same way.
 */
#pragma once

#include "../config.hpp"
#include "../detail/half.hpp"
#include "../fill_value.hpp"
#include "concepts.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace zarrxt::codec
{

class cast_value
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "cast_value";

    enum class rounding_mode
    {
        nearest_even,
        towards_zero,
        towards_positive,
        towards_negative,
        nearest_away
    };
    enum class out_of_range_mode
    {
        error,
        clamp,
        wrap
    };

    /// One scalar_map pair: a value of the source type and the value it becomes (native bytes).
    struct mapping
    {
        fill_value from;
        fill_value to;
    };

    dtype_id array_type = dtype_id::float64; ///< the type the codec receives (decoded side)
    dtype_id data_type = dtype_id::uint8;    ///< the stored type (encoded side)
    rounding_mode rounding = rounding_mode::nearest_even;
    out_of_range_mode out_of_range = out_of_range_mode::error;
    std::vector<mapping> encode_map; ///< array value -> stored value
    std::vector<mapping> decode_map; ///< stored value -> array value

    static cast_value from_json(const json& cfg, const codec_context& ctx);
    json to_json() const;

    dtype_id encoded_dtype(dtype_id) const { return data_type; }
    dims encoded_shape(const dims& shape) const { return shape; }
    fill_value encoded_fill(const fill_value& f) const;

    array_view decode(array_view encoded, buffer& out) const
    {
        return convert(encoded, out, data_type, array_type, decode_map);
    }
    array_view encode(array_view decoded, buffer& out) const
    {
        return convert(decoded, out, array_type, data_type, encode_map);
    }

    /// Cast n elements from `from` to `to` with this codec's rules (what encode and decode run).
    void cast(const std::byte* src, dtype_id from, std::byte* dst, dtype_id to, std::size_t n,
              const std::vector<mapping>& map) const;

private:
    array_view convert(const array_view& in, buffer& out, dtype_id from, dtype_id to,
                       const std::vector<mapping>& map) const
    {
        return detail::map_elements(in, out, info(to).size,
                                    [&](const std::byte* s, std::byte* d, std::size_t n)
                                    { cast(s, from, d, to, n, map); });
    }

    json m_scalar_map = nullptr; // as configured, for write-back
    bool m_has_rounding = false;
    bool m_has_out_of_range = false;
};

/******************
 * implementation *
 ******************/

// Under ZARRXT_SEPARATE_COMPILATION the members below are compiled once, in the compiled part
// (config.hpp): their type dispatch instantiates a loop per pair of element types, which other
// units need not parse or instantiate.
#if ZARRXT_DEFINITIONS

namespace detail
{

template <class T>
inline constexpr bool is_float_like_v = std::is_floating_point_v<T> || std::is_same_v<T, float16>;

template <class T>
double as_double(T v) noexcept
{
    if constexpr (std::is_same_v<T, float16>)
    {
        return static_cast<double>(static_cast<float>(v));
    }
    else
    {
        return static_cast<double>(v);
    }
}

/// A double as a float type, rounded once to nearest even.
template <class F>
F float_from_double(double v) noexcept
{
    if constexpr (std::is_same_v<F, float16>)
    {
        return zarrxt::detail::half_from_double(v);
    }
    else
    {
        return static_cast<F>(v);
    }
}

template <class F>
F float_max() noexcept
{
    if constexpr (std::is_same_v<F, float16>)
    {
        return zarrxt::detail::half_from_bits(0x7bff); // 65504
    }
    else
    {
        return std::numeric_limits<F>::max();
    }
}

template <class I>
constexpr bool is_negative(I x) noexcept
{
    if constexpr (std::is_signed_v<I>)
    {
        return x < 0;
    }
    else
    {
        (void)x;
        return false;
    }
}

inline double round_as(cast_value::rounding_mode m, double v) noexcept
{
    switch (m)
    {
        case cast_value::rounding_mode::towards_zero:
            return std::trunc(v);
        case cast_value::rounding_mode::towards_positive:
            return std::ceil(v);
        case cast_value::rounding_mode::towards_negative:
            return std::floor(v);
        case cast_value::rounding_mode::nearest_away:
            return std::round(v);
        case cast_value::rounding_mode::nearest_even:
            break;
    }
    // Independent of the floating-point environment's rounding mode. v - floor(v) is exact.
    const double f = std::floor(v);
    const double d = v - f;
    if (d != 0.5)
    {
        return d < 0.5 ? f : f + 1;
    }
    return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

template <class I>
bool integral_in_range(double r) noexcept
{
    // r is an integer-valued double. The bounds are powers of two, exact as doubles.
    const double lo = std::is_signed_v<I> ? -std::ldexp(1.0, std::numeric_limits<I>::digits) : 0.0;
    const double hi = std::ldexp(1.0, std::numeric_limits<I>::digits);
    return r >= lo && r < hi;
}

/// An integer-valued double modulo 2^bits of I, as I (two's complement).
template <class I>
I wrap_double(double r) noexcept
{
    const double w = std::fmod(r, std::ldexp(1.0, 64)); // exact; |w| < 2^64
    std::uint64_t u = w >= 0 ? static_cast<std::uint64_t>(w) : ~static_cast<std::uint64_t>(-w) + 1;
    return static_cast<I>(static_cast<std::make_unsigned_t<I>>(u));
}

/// A value the cast cannot represent: "value 300 is out of range for uint8".
template <class To>
[[noreturn]] void cast_failure(const std::string& value, std::string_view extra = {})
{
    throw codec_error(codec_errc::value_out_of_range, cast_value::name,
                      "value " + value + " is out of range for " +
                          std::string(zarrxt::name(dtype_traits<To>::id)) + std::string(extra));
}

inline std::string value_text(double v)
{
    if (std::isnan(v))
    {
        return "NaN";
    }
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

template <class From, class To>
To cast_one(From x, cast_value::rounding_mode rounding, cast_value::out_of_range_mode oor,
            const std::vector<cast_value::mapping>& map)
{
    using oor_mode = cast_value::out_of_range_mode;
    for (const auto& m : map)
    {
        const From k = m.from.as<From>();
        bool hit = false;
        if constexpr (is_float_like_v<From>)
        {
            const double a = as_double(x);
            const double b = as_double(k);
            hit = (std::isnan(a) && std::isnan(b)) || a == b;
        }
        else
        {
            hit = x == k;
        }
        if (hit)
        {
            return m.to.as<To>();
        }
    }
    if constexpr (is_float_like_v<From>)
    {
        const double v = as_double(x);
        if constexpr (is_float_like_v<To>)
        {
            const To y = float_from_double<To>(v);
            if (std::isinf(as_double(y)) && std::isfinite(v))
            {
                if (oor == oor_mode::clamp)
                {
                    return v < 0 ? float_from_double<To>(-as_double(float_max<To>())) : float_max<To>();
                }
                cast_failure<To>(value_text(v));
            }
            return y;
        }
        else
        {
            if (std::isnan(v))
            {
                cast_failure<To>("NaN", " (NaN has no integer value; a scalar_map entry can name one)");
            }
            if (std::isinf(v))
            {
                if (oor == oor_mode::clamp)
                {
                    return v < 0 ? std::numeric_limits<To>::min() : std::numeric_limits<To>::max();
                }
                cast_failure<To>(value_text(v), oor == oor_mode::wrap ? " (an infinity cannot wrap)" : "");
            }
            const double r = round_as(rounding, v);
            if (integral_in_range<To>(r))
            {
                return static_cast<To>(r);
            }
            if (oor == oor_mode::clamp)
            {
                return r < 0 ? std::numeric_limits<To>::min() : std::numeric_limits<To>::max();
            }
            if (oor == oor_mode::wrap)
            {
                return wrap_double<To>(r);
            }
            cast_failure<To>(value_text(v));
        }
    }
    else
    {
        if constexpr (is_float_like_v<To>)
        {
            // Integer to float: correctly rounded by the conversion (float16 through double, which
            // holds every integer that float16 can hold without overflowing).
            const To y = [&]
            {
                if constexpr (std::is_same_v<To, float16>)
                {
                    return float_from_double<To>(static_cast<double>(x));
                }
                else
                {
                    return static_cast<To>(x);
                }
            }();
            if (std::isinf(as_double(y)))
            {
                if (oor == oor_mode::clamp)
                {
                    return is_negative(x) ? float_from_double<To>(-as_double(float_max<To>()))
                                          : float_max<To>();
                }
                cast_failure<To>(std::to_string(x));
            }
            return y;
        }
        else
        {
            const __int128 v = x;
            if (v >= static_cast<__int128>(std::numeric_limits<To>::min()) &&
                v <= static_cast<__int128>(std::numeric_limits<To>::max()))
            {
                return static_cast<To>(v);
            }
            if (oor == oor_mode::clamp)
            {
                return v < 0 ? std::numeric_limits<To>::min() : std::numeric_limits<To>::max();
            }
            if (oor == oor_mode::wrap)
            {
                return static_cast<To>(
                    static_cast<std::make_unsigned_t<To>>(static_cast<unsigned __int128>(v)));
            }
            cast_failure<To>(std::to_string(x));
        }
    }
}

/// The configuration's data type: a name, or {"name": ...} for types with a configuration.
inline dtype_id cast_target(const json& j)
{
    std::string n;
    if (j.is_string())
    {
        n = j.get<std::string>();
    }
    else if (j.is_object() && j.contains("name") && j["name"].is_string())
    {
        n = j["name"].get<std::string>();
    }
    else
    {
        bad_config(cast_value::name, "\"data_type\" must be a data type name, got " + j.dump());
    }
    const auto id = dtype_from_v3_name(n);
    if (!id || !with_arithmetic_type(*id, [](auto) {}))
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             std::string(cast_value::name) + ": data type " + j.dump() +
                                 " is not supported (int8..uint64, float16, float32, float64)");
    }
    return *id;
}

} // namespace detail

ZARRXT_DECL cast_value cast_value::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"data_type", "rounding", "out_of_range", "scalar_map"});
    cast_value c;
    c.array_type = ctx.dtype;
    if (!with_arithmetic_type(ctx.dtype, [](auto) {}))
    {
        detail::bad_config(name, "the array's data type must be an integer or floating-point type, not " +
                                     std::string(zarrxt::name(ctx.dtype)));
    }
    auto dt = cfg.find("data_type");
    if (dt == cfg.end())
    {
        detail::bad_config(name, "\"data_type\" is required");
    }
    c.data_type = detail::cast_target(*dt);
    if (auto r = cfg.find("rounding"); r != cfg.end())
    {
        static constexpr std::pair<std::string_view, rounding_mode> modes[] = {
            {"nearest-even", rounding_mode::nearest_even},
            {"towards-zero", rounding_mode::towards_zero},
            {"towards-positive", rounding_mode::towards_positive},
            {"towards-negative", rounding_mode::towards_negative},
            {"nearest-away", rounding_mode::nearest_away}};
        bool ok = false;
        for (const auto& [text, mode] : modes)
        {
            if (r->is_string() && r->get<std::string>() == text)
            {
                c.rounding = mode;
                ok = true;
            }
        }
        if (!ok)
        {
            detail::bad_config(name,
                               "\"rounding\" must be one of nearest-even, towards-zero, towards-positive, "
                               "towards-negative, nearest-away, got " +
                                   r->dump());
        }
        c.m_has_rounding = true;
    }
    if (auto o = cfg.find("out_of_range"); o != cfg.end())
    {
        if (*o == "error")
        {
            c.out_of_range = out_of_range_mode::error;
        }
        else if (*o == "clamp")
        {
            c.out_of_range = out_of_range_mode::clamp;
        }
        else if (*o == "wrap")
        {
            c.out_of_range = out_of_range_mode::wrap;
        }
        else
        {
            detail::bad_config(name,
                               "\"out_of_range\" must be \"error\", \"clamp\" or \"wrap\", got " + o->dump());
        }
        c.m_has_out_of_range = true;
    }
    if (c.out_of_range == out_of_range_mode::wrap && info(c.data_type).v2_kind == 'f')
    {
        detail::bad_config(name, "\"out_of_range\": \"wrap\" needs an integer \"data_type\"");
    }
    if (auto m = cfg.find("scalar_map"); m != cfg.end())
    {
        if (!m->is_object())
        {
            detail::bad_config(name,
                               "\"scalar_map\" must be an object with \"encode\" and/or \"decode\" lists");
        }
        for (auto it = m->begin(); it != m->end(); ++it)
        {
            const bool enc = it.key() == "encode";
            if (!enc && it.key() != "decode")
            {
                detail::bad_config(name, "unknown \"scalar_map\" member \"" + it.key() + "\"");
            }
            if (!it->is_array())
            {
                detail::bad_config(name,
                                   "\"scalar_map." + it.key() + "\" must be a list of [from, to] pairs");
            }
            const dtype_id from = enc ? c.array_type : c.data_type;
            const dtype_id to = enc ? c.data_type : c.array_type;
            for (const auto& pair : *it)
            {
                if (!pair.is_array() || pair.size() != 2)
                {
                    detail::bad_config(name, "\"scalar_map." + it.key() +
                                                 "\" entries must be [from, to] pairs, got " + pair.dump());
                }
                mapping mp;
                try
                {
                    mp.from = parse_fill_value(pair[0], from, 3);
                    mp.to = parse_fill_value(pair[1], to, 3);
                }
                catch (const metadata_error& e)
                {
                    detail::bad_config(name, "\"scalar_map." + it.key() + "\" entry " + pair.dump() + ": " +
                                                 e.message());
                }
                (enc ? c.encode_map : c.decode_map).push_back(mp);
            }
        }
        c.m_scalar_map = *m;
    }
    return c;
}

ZARRXT_DECL json cast_value::to_json() const
{
    json j = {{"data_type", std::string(zarrxt::name(data_type))}};
    static constexpr const char* rounding_names[] = {"nearest-even", "towards-zero", "towards-positive",
                                                     "towards-negative", "nearest-away"};
    static constexpr const char* range_names[] = {"error", "clamp", "wrap"};
    if (m_has_rounding || rounding != rounding_mode::nearest_even)
    {
        j["rounding"] = rounding_names[static_cast<int>(rounding)];
    }
    if (m_has_out_of_range || out_of_range != out_of_range_mode::error)
    {
        j["out_of_range"] = range_names[static_cast<int>(out_of_range)];
    }
    if (!m_scalar_map.is_null())
    {
        j["scalar_map"] = m_scalar_map;
    }
    return j;
}

ZARRXT_DECL void cast_value::cast(const std::byte* src, dtype_id from, std::byte* dst, dtype_id to,
                                  std::size_t n, const std::vector<mapping>& map) const
{
    with_arithmetic_type(from,
                         [&](auto ft)
                         {
                             using From = typename decltype(ft)::type;
                             with_arithmetic_type(
                                 to,
                                 [&](auto tt)
                                 {
                                     using To = typename decltype(tt)::type;
                                     for (std::size_t i = 0; i < n; ++i)
                                     {
                                         From x;
                                         std::memcpy(&x, src + i * sizeof(From), sizeof(From));
                                         const To y =
                                             detail::cast_one<From, To>(x, rounding, out_of_range, map);
                                         std::memcpy(dst + i * sizeof(To), &y, sizeof(To));
                                     }
                                 });
                         });
}

ZARRXT_DECL fill_value cast_value::encoded_fill(const fill_value& f) const
{
    // What an unwritten element stores as. A fill value the cast refuses (NaN into an integer type)
    // never reaches storage as such: the codecs after this one then see zero.
    fill_value out;
    out.is_null = f.is_null;
    try
    {
        cast(f.bytes.data(), array_type, out.bytes.data(), data_type, 1, encode_map);
    }
    catch (const codec_error&)
    {
        out.bytes.fill(std::byte{0});
    }
    return out;
}

#endif // ZARRXT_DEFINITIONS

static_assert(array_to_array_codec<cast_value>, "cast_value must meet the requirements of its codec kind");

} // namespace zarrxt::codec
