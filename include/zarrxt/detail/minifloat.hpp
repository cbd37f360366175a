/** @file detail/minifloat.hpp
 *  The small floating-point element types of the zarr-extensions data type registry: `bfloat16`
 *  and the float8 family (`float8_e3m4`, `float8_e4m3`, `float8_e4m3b11fnuz`, `float8_e4m3fnuz`,
 *  `float8_e5m2`, `float8_e5m2fnuz`, `float8_e8m0fnu`). Each is a storage type (its bits) that
 *  converts to and from float and double; zarrxt does no arithmetic on them (convert to float).
 *
 *  One runtime description (`minifloat_spec`) drives both the typed class and the untyped code
 *  (fill values, the tool), so the conversions exist once. Conversions follow ml_dtypes'
 *  non-saturating casts: round to nearest, ties to even; too large a value becomes infinity where
 *  the format has one, else NaN; NaN keeps its sign where the format has a sign; the fnuz formats
 *  have no -0 (a negative value rounding to zero is +0); float8_e8m0fnu (powers of two, unsigned,
 *  no zero) makes NaN of zero and negative values, and 0x00 (2^-127) of positive values below it.
 *  One difference: ml_dtypes rounds values between 2^-127 and 2^-126 up to 2^-126 in
 *  float8_e8m0fnu; zarrxt rounds them to the nearer power (docs/concepts/dtype.md).
 */
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace zarrxt
{

/// How a small float spends its top exponent and its sign.
enum class minifloat_kind : std::uint8_t
{
    ieee, ///< IEEE 754 conventions: top exponent is infinity (mantissa 0) or NaN, signed zeros
    fnuz, ///< finite, one NaN (0x80, "negative zero"), unsigned zero
    fnu,  ///< finite, unsigned, no zero, one NaN (all ones); no mantissa bits (float8_e8m0fnu)
};

/// The layout of a small float: everything the conversions need.
struct minifloat_spec
{
    std::uint8_t width; ///< bytes: 1 or 2
    int exponent_bits;
    int mantissa_bits;
    int bias;
    minifloat_kind kind;
    std::uint16_t canonical_nan; ///< the bits "NaN" stands for in fill values (the registry's)
};

/// The formats, as the zarr-extensions registry defines them.
struct bfloat16_format
{
    static constexpr minifloat_spec spec{2, 8, 7, 127, minifloat_kind::ieee, 0x7fc0};
};
struct float8_e3m4_format
{
    static constexpr minifloat_spec spec{1, 3, 4, 3, minifloat_kind::ieee, 0x78};
};
struct float8_e4m3_format
{
    static constexpr minifloat_spec spec{1, 4, 3, 7, minifloat_kind::ieee, 0x7c};
};
struct float8_e4m3b11fnuz_format
{
    static constexpr minifloat_spec spec{1, 4, 3, 11, minifloat_kind::fnuz, 0x80};
};
struct float8_e4m3fnuz_format
{
    static constexpr minifloat_spec spec{1, 4, 3, 8, minifloat_kind::fnuz, 0x80};
};
struct float8_e5m2_format
{
    static constexpr minifloat_spec spec{1, 5, 2, 15, minifloat_kind::ieee, 0x7e};
};
struct float8_e5m2fnuz_format
{
    static constexpr minifloat_spec spec{1, 5, 2, 16, minifloat_kind::fnuz, 0x80};
};
struct float8_e8m0fnu_format
{
    static constexpr minifloat_spec spec{1, 8, 0, 127, minifloat_kind::fnu, 0xff};
};

namespace detail
{
/// The value of the bits `b` of a small float (NaN and infinities included).
double minifloat_to_double(const minifloat_spec& s, std::uint16_t b) noexcept;
/// `v` rounded to the nearest value of the format (see the file comment for the edges).
std::uint16_t minifloat_from_double(const minifloat_spec& s, double v) noexcept;
bool minifloat_is_nan(const minifloat_spec& s, std::uint16_t b) noexcept;
bool minifloat_is_inf(const minifloat_spec& s, std::uint16_t b) noexcept;
/// The largest finite value's bits (positive).
std::uint16_t minifloat_max_bits(const minifloat_spec& s) noexcept;
} // namespace detail

/*************
 * minifloat *
 *************/

/// A small float stored as its bits. Trivially copyable and default-constructible like float (a
/// default-constructed value is uninitialised); made from any arithmetic value (explicitly, as it
/// rounds) and converted to float or double (implicitly to float, which holds every value).
template <class Format>
class minifloat
{
public:
    static constexpr minifloat_spec spec = Format::spec;
    using bits_type = std::conditional_t<spec.width == 2, std::uint16_t, std::uint8_t>;

    minifloat() = default;
    template <class A>
    requires std::is_arithmetic_v<A>
    explicit minifloat(A v) noexcept;

    static constexpr minifloat from_bits(bits_type b) noexcept;
    constexpr bits_type bits() const noexcept { return m_bits; }

    operator float() const noexcept;
    explicit operator double() const noexcept;

    /// Value comparisons (NaN equals nothing; -0 equals +0).
    friend bool operator==(minifloat a, minifloat b) noexcept
    {
        return static_cast<double>(a) == static_cast<double>(b);
    }

private:
    bits_type m_bits;
};

using bfloat16 = minifloat<bfloat16_format>;
using float8_e3m4 = minifloat<float8_e3m4_format>;
using float8_e4m3 = minifloat<float8_e4m3_format>;
using float8_e4m3b11fnuz = minifloat<float8_e4m3b11fnuz_format>;
using float8_e4m3fnuz = minifloat<float8_e4m3fnuz_format>;
using float8_e5m2 = minifloat<float8_e5m2_format>;
using float8_e5m2fnuz = minifloat<float8_e5m2fnuz_format>;
using float8_e8m0fnu = minifloat<float8_e8m0fnu_format>;

/// True for the minifloat types.
template <class T>
inline constexpr bool is_minifloat_v = false;
template <class F>
inline constexpr bool is_minifloat_v<minifloat<F>> = true;

template <class F>
bool isnan(minifloat<F> v) noexcept
{
    return detail::minifloat_is_nan(F::spec, v.bits());
}

template <class F>
bool isinf(minifloat<F> v) noexcept
{
    return detail::minifloat_is_inf(F::spec, v.bits());
}

/******************
 * implementation *
 ******************/

namespace detail
{

inline bool minifloat_is_nan(const minifloat_spec& s, std::uint16_t b) noexcept
{
    if (s.kind != minifloat_kind::ieee)
    {
        return b == s.canonical_nan;
    }
    const unsigned magnitude_mask = (1u << (s.exponent_bits + s.mantissa_bits)) - 1;
    const unsigned inf = ((1u << s.exponent_bits) - 1) << s.mantissa_bits;
    return (b & magnitude_mask) > inf;
}

inline bool minifloat_is_inf(const minifloat_spec& s, std::uint16_t b) noexcept
{
    if (s.kind != minifloat_kind::ieee)
    {
        return false;
    }
    const unsigned magnitude_mask = (1u << (s.exponent_bits + s.mantissa_bits)) - 1;
    const unsigned inf = ((1u << s.exponent_bits) - 1) << s.mantissa_bits;
    return (b & magnitude_mask) == inf;
}

inline std::uint16_t minifloat_max_bits(const minifloat_spec& s) noexcept
{
    const unsigned all = (1u << (s.exponent_bits + s.mantissa_bits)) - 1;
    switch (s.kind)
    {
        case minifloat_kind::ieee:
            return static_cast<std::uint16_t>(all - (1u << s.mantissa_bits)); // below the top exponent
        case minifloat_kind::fnuz:
            return static_cast<std::uint16_t>(all);
        case minifloat_kind::fnu:
            return static_cast<std::uint16_t>(all - 1);
    }
    return 0;
}

inline double minifloat_to_double(const minifloat_spec& s, std::uint16_t b) noexcept
{
    if (minifloat_is_nan(s, b))
    {
        const bool negative =
            s.kind == minifloat_kind::ieee && (b >> (s.exponent_bits + s.mantissa_bits)) & 1u;
        return negative ? -std::numeric_limits<double>::quiet_NaN()
                        : std::numeric_limits<double>::quiet_NaN();
    }
    const bool negative = s.kind != minifloat_kind::fnu && ((b >> (s.exponent_bits + s.mantissa_bits)) & 1u);
    const int e = static_cast<int>((b >> s.mantissa_bits) & ((1u << s.exponent_bits) - 1));
    const int m = static_cast<int>(b & ((1u << s.mantissa_bits) - 1));
    double v;
    if (minifloat_is_inf(s, b))
    {
        v = std::numeric_limits<double>::infinity();
    }
    else if (s.kind == minifloat_kind::fnu)
    {
        v = std::ldexp(1.0, e - s.bias); // no subnormals: 0x00 is 2^-bias
    }
    else if (e == 0)
    {
        v = std::ldexp(static_cast<double>(m), 1 - s.bias - s.mantissa_bits);
    }
    else
    {
        v = std::ldexp(static_cast<double>(m + (1 << s.mantissa_bits)), e - s.bias - s.mantissa_bits);
    }
    return negative ? -v : v;
}

inline std::uint16_t minifloat_from_double(const minifloat_spec& s, double v) noexcept
{
    const int sign_shift = s.exponent_bits + s.mantissa_bits;
    const bool signed_format = s.kind != minifloat_kind::fnu;
    const bool negative = std::signbit(v);
    const auto with_sign = [&](unsigned magnitude)
    { return static_cast<std::uint16_t>(magnitude | (negative && signed_format ? 1u << sign_shift : 0u)); };
    const unsigned inf = ((1u << s.exponent_bits) - 1) << s.mantissa_bits;
    if (std::isnan(v))
    {
        // The canonical (quiet) NaN, keeping the sign where the format has one for NaN.
        return s.kind == minifloat_kind::ieee ? with_sign(s.canonical_nan) : s.canonical_nan;
    }
    if (s.kind == minifloat_kind::fnu && (negative || v == 0))
    {
        return s.canonical_nan; // no zero, no sign
    }
    if (std::isinf(v))
    {
        return s.kind == minifloat_kind::ieee ? with_sign(inf) : s.canonical_nan;
    }
    if (v == 0)
    {
        return s.kind == minifloat_kind::ieee ? with_sign(0) : 0; // fnuz: 0x80 is NaN, not -0
    }
    const double a = std::fabs(v);
    // The exponent of the binade a lies in, clamped to the smallest normal one: below it the
    // quantum stays that of the smallest binade (subnormals; fnu has none, and its smallest value
    // 2^-bias is then the nearest one).
    const int min_exponent = s.kind == minifloat_kind::fnu ? -s.bias : 1 - s.bias;
    const int e = std::max(std::ilogb(a), min_exponent);
    // a / quantum is exact (a power-of-two scaling that cannot underflow: the quantum is far above
    // double's subnormals); nearbyint rounds it to the nearest integer, ties to even, in the
    // default rounding mode.
    const double n = std::nearbyint(std::ldexp(a, s.mantissa_bits - e));
    if (n == 0)
    {
        // Below half the smallest subnormal: zero (fnuz's has no sign); fnu's nearest is 2^-bias.
        return s.kind == minifloat_kind::ieee ? with_sign(0) : 0;
    }
    unsigned significand = static_cast<unsigned>(n);
    int biased = e + s.bias;
    if (significand >= (2u << s.mantissa_bits))
    {
        significand >>= 1; // rounding carried into the next binade (n was exactly 2^(m+1))
        ++biased;
    }
    unsigned magnitude;
    if (s.kind != minifloat_kind::fnu && significand < (1u << s.mantissa_bits))
    {
        magnitude = significand; // subnormal: exponent field 0
    }
    // Else a normal value; a subnormal that rounded up to 2^m is the smallest normal (biased 1).
    else
    {
        magnitude = (static_cast<unsigned>(biased) << s.mantissa_bits) |
                    (significand & ((1u << s.mantissa_bits) - 1));
        if (biased >= (1 << s.exponent_bits) || magnitude > minifloat_max_bits(s))
        {
            return s.kind == minifloat_kind::ieee ? with_sign(inf) : s.canonical_nan;
        }
    }
    return with_sign(magnitude); // fnu: with_sign adds none
}

} // namespace detail

template <class Format>
template <class A>
requires std::is_arithmetic_v<A> minifloat<Format>::minifloat(A v)
noexcept
    : m_bits(static_cast<bits_type>(detail::minifloat_from_double(spec, static_cast<double>(v))))
{
}

template <class Format>
constexpr minifloat<Format> minifloat<Format>::from_bits(bits_type b) noexcept
{
    minifloat f{};
    f.m_bits = b;
    return f;
}

template <class Format>
minifloat<Format>::operator float() const noexcept
{
    if constexpr (std::is_same_v<Format, bfloat16_format>)
    {
        // bfloat16 is the top half of a binary32: exact, NaN payloads included.
        return std::bit_cast<float>(static_cast<std::uint32_t>(m_bits) << 16);
    }
    else
    {
        return static_cast<float>(detail::minifloat_to_double(spec, m_bits));
    }
}

template <class Format>
minifloat<Format>::operator double() const noexcept
{
    return detail::minifloat_to_double(spec, m_bits);
}

} // namespace zarrxt

namespace std
{
/// numeric_limits for the small floats, as std::numeric_limits<float> answers for float.
template <class Format>
struct numeric_limits<zarrxt::minifloat<Format>>
{
private:
    using T = zarrxt::minifloat<Format>;
    static constexpr zarrxt::minifloat_spec s = Format::spec;
    using B = typename T::bits_type;

public:
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = s.kind != zarrxt::minifloat_kind::fnu;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = s.kind == zarrxt::minifloat_kind::ieee;
    static constexpr bool has_quiet_NaN = true;
    static constexpr bool has_signaling_NaN = false;
    static constexpr int radix = 2;
    static constexpr int digits = s.mantissa_bits + 1;

    static T min() noexcept // smallest positive normal
    {
        return T::from_bits(
            static_cast<B>(s.kind == zarrxt::minifloat_kind::fnu ? 0 : 1u << s.mantissa_bits));
    }
    static T max() noexcept { return T::from_bits(static_cast<B>(zarrxt::detail::minifloat_max_bits(s))); }
    static T lowest() noexcept
    {
        return is_signed ? T::from_bits(static_cast<B>(zarrxt::detail::minifloat_max_bits(s) |
                                                       (1u << (s.exponent_bits + s.mantissa_bits))))
                         : min();
    }
    static T denorm_min() noexcept
    {
        return T::from_bits(static_cast<B>(s.kind == zarrxt::minifloat_kind::fnu ? 0 : 1));
    }
    static T epsilon() noexcept { return T(std::ldexp(1.0, -s.mantissa_bits)); }
    static T quiet_NaN() noexcept { return T::from_bits(static_cast<B>(s.canonical_nan)); }
    /// NaN for the formats without one (as ml_dtypes answers).
    static T infinity() noexcept
    {
        return has_infinity ? T::from_bits(static_cast<B>(((1u << s.exponent_bits) - 1) << s.mantissa_bits))
                            : quiet_NaN();
    }
};
} // namespace std
