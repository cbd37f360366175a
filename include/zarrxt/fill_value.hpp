/** @file fill_value.hpp
 *  Fill values: parsing every JSON form Zarr allows into the element's native bytes, and back.
 *
 *  Forms (v3 core spec "fill_value", and zarr-python 2 for v2):
 *  - bool: true/false (0/1 tolerated on read);
 *  - integers: a JSON integer, exact over the whole int64/uint64 range (never via double);
 *  - floats: a number, "NaN", "Infinity", "-Infinity", or "0x..." giving the IEEE bit pattern;
 *  - complex: [real, imag], each part in any float form;
 *  - bfloat16 and float8 (zarr-extensions): as floats, "0x.." with 2 or 4 hex digits; "NaN" is the
 *    registry's bit pattern for the type; a type without infinity refuses "Infinity" and a number
 *    too large for it (float8_e8m0fnu also zero and negative numbers); written back as a number,
 *    "NaN" for the registry's NaN, other NaNs in hex, "Infinity" / "-Infinity";
 *  - datetime64 / timedelta64: a JSON integer (the count of the unit) or "NaT" (-2^63); v3 writes
 *    NaT as "NaT" (zarr-python 3), v2 as the integer (zarr-python 2);
 *  - fixed-width strings: <U n its text, |S n its bytes in standard base64 (zarr-python, both formats);
 *  - variable-length strings (`string`, v2 |O + vlen-utf8): the text; in v2 a number is taken as
 *    its JSON text (zarr-python 2.13 turns the default fill 0 of `dtype=str` into "0");
 *    variable-length bytes (`bytes`): base64, or an array of byte values (zarr-python 3 reads both);
 *  - records: v2 base64 of the record's stored bytes (or 0, all zeros); v3 an object of each field's
 *    fill value (zarr-extensions struct), base64 also read;
 *  - v2 only: null, meaning "no fill value" (zarrxt reads zeros there, like zarrita.js).
 */
#pragma once

#include "data_type.hpp"
#include "detail/endian.hpp"
#include "detail/json.hpp"
#include "detail/text.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "fixed_string.hpp"
#include "record.hpp"
#include "vlen.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zarrxt
{

/// One element in native byte order, plus whether the metadata said null (v2).
struct fill_value
{
    std::array<std::byte, 16> bytes{};
    bool is_null = false;
    /// Fixed-width strings: the whole element (its width, which may exceed 16 bytes), used instead
    /// of `bytes` when not empty.
    std::vector<std::byte> wide{};
    /// Variable-length types: the value, which `bytes` (a vlen_element) points into. Shared, so
    /// that every copy of the fill value (the metadata's, each codec's) points at the same bytes and
    /// elements equal to the fill compare equal byte for byte (vlen.hpp).
    std::shared_ptr<const std::string> text{};

    /// The element's bytes (at least the element width for the array the value was parsed for).
    const std::byte* data() const noexcept { return wide.empty() ? bytes.data() : wide.data(); }

    template <class T>
    T as() const noexcept
    {
        static_assert(sizeof(T) <= 16);
        T v;
        std::memcpy(&v, bytes.data(), sizeof(T));
        return v;
    }

    template <class T>
    static fill_value of(const T& v) noexcept
    {
        static_assert(sizeof(T) <= 16);
        fill_value f;
        std::memcpy(f.bytes.data(), &v, sizeof(T));
        return f;
    }

    /// True when every byte of the value is zero (a memset can then fill).
    bool all_zero(std::size_t size) const noexcept
    {
        const std::byte* p = data();
        for (std::size_t i = 0; i < size; ++i)
        {
            if (p[i] != std::byte{0})
            {
                return false;
            }
        }
        return true;
    }
};

/// A scalar given by a user (create options): converted to the array's dtype at create time.
class scalar
{
public:
    enum class kind
    {
        none,
        boolean,
        signed_int,
        unsigned_int,
        floating,
        complex,
        json_value,
        string, ///< the value itself, not its JSON form (a |S fill is stored as base64)
    };

    scalar() = default;
    scalar(bool v)
        : m_kind(kind::boolean)
        , m_bool(v)
    {
    }
    template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) scalar(I v)
    {
        if constexpr (std::is_signed_v<I>)
        {
            m_kind = kind::signed_int;
            m_int = v;
        }
        else
        {
            m_kind = kind::unsigned_int;
            m_uint = v;
        }
    }
    scalar(float v)
        : m_kind(kind::floating)
        , m_double(v)
    {
    }
    scalar(double v)
        : m_kind(kind::floating)
        , m_double(v)
    {
    }
    scalar(float16 v)
        : m_kind(kind::floating)
        , m_double(static_cast<float>(v))
    {
    }
    template <class F>
    scalar(minifloat<F> v)
        : m_kind(kind::floating)
        , m_double(static_cast<double>(v))
    {
    }
    scalar(std::complex<float> v)
        : m_kind(kind::complex)
        , m_complex(v)
    {
    }
    scalar(std::complex<double> v)
        : m_kind(kind::complex)
        , m_complex(v)
    {
    }
    /// A string (fixed-width string arrays): UTF-8 text for <U, the bytes for |S. Without these a
    /// string literal would convert to bool.
    scalar(const char* v)
        : scalar(std::string(v))
    {
    }
    scalar(std::string v)
        : m_kind(kind::string)
        , m_json(std::move(v))
    {
    }
    /// A time point or duration: its count, and its unit, which must be the unit of the array it is
    /// given for (create refuses another one rather than reinterpret the count); NaT is the count
    /// zarrxt::nat.
    template <class Rep, class Period>
    requires std::is_integral_v<Rep> scalar(std::chrono::duration<Rep, Period> d)
        : m_kind(kind::signed_int)
        , m_int(d.count())
        , m_unit(time_unit_of<Period>())
    {
        static_assert(time_unit_of<Period>().has_value(),
                      "zarrxt::scalar: this period is no numpy time unit");
    }
    template <class Duration>
    scalar(std::chrono::time_point<std::chrono::system_clock, Duration> t)
        : scalar(t.time_since_epoch())
    {
    }
    /// Any JSON fill value form, e.g. "NaN" or "0x7fc00000".
    static scalar from_json(json j)
    {
        scalar s;
        s.m_kind = kind::json_value;
        s.m_json = std::move(j);
        return s;
    }

    kind which() const noexcept { return m_kind; }
    /// The unit of a scalar made from a std::chrono value; nullopt for every other scalar.
    const std::optional<time_unit>& unit() const noexcept { return m_unit; }
    bool empty() const noexcept { return m_kind == kind::none; }

    /// The JSON form of this scalar for a dtype (the value is checked by parse_fill_value later).
    json to_json() const;

private:
    kind m_kind = kind::none;
    bool m_bool = false;
    std::int64_t m_int = 0;
    std::uint64_t m_uint = 0;
    double m_double = 0;
    std::complex<double> m_complex{};
    json m_json;
    std::optional<time_unit> m_unit;
};

/// Parse the fill_value member for a data type (its parameters say the element size of a
/// fixed-width string, whose fill is its UTF-8 text for <U and base64 for |S, and a record's
/// fields). `zarr_format` 2 allows null.
fill_value parse_fill_value(const json& j, const data_type& type, int zarr_format);

/// The canonical JSON form of a fill value (lossless: NaN payloads other than the default are hex).
json fill_value_to_json(const fill_value& f, const data_type& type, int zarr_format);

/// The fill value of a new array from the scalar a user gave (empty: zero of the type).
fill_value fill_value_of(const scalar& s, const data_type& type, int zarr_format);

/******************
 * implementation *
 ******************/

namespace detail
{

[[noreturn]] inline void bad_fill(const json& j, const data_type& dtype, std::string_view why)
{
    throw metadata_error(metadata_errc::invalid_fill_value, "fill_value " + j.dump() + " is not valid for " +
                                                                std::string(name(dtype)) + ": " +
                                                                std::string(why));
}

inline std::uint64_t parse_hex_bits(const json& j, dtype_id dtype, std::size_t bytes)
{
    const auto& s = j.get_ref<const std::string&>();
    // "0x" followed by exactly 2*bytes hex digits (zarr-python writes them zero-padded).
    if (s.size() != 2 + 2 * bytes)
    {
        bad_fill(j, dtype, "a hex bit pattern needs exactly " + std::to_string(2 * bytes) + " hex digits");
    }
    std::uint64_t v = 0;
    for (std::size_t i = 2; i < s.size(); ++i)
    {
        const char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
        {
            d = c - '0';
        }
        else if (c >= 'a' && c <= 'f')
        {
            d = c - 'a' + 10;
        }
        else if (c >= 'A' && c <= 'F')
        {
            d = c - 'A' + 10;
        }
        else
        {
            bad_fill(j, dtype, "invalid hex digit");
        }
        v = (v << 4) | static_cast<std::uint64_t>(d);
    }
    return v;
}

/// One float component (float16/32/64) in any of its JSON forms, written into `out` natively.
inline void parse_float_component(const json& j, dtype_id dtype, std::size_t width, std::byte* out)
{
    double d = 0;
    if (j.is_string())
    {
        const auto& s = j.get_ref<const std::string&>();
        if (s == "NaN")
        {
            d = std::numeric_limits<double>::quiet_NaN();
        }
        else if (s == "Infinity")
        {
            d = std::numeric_limits<double>::infinity();
        }
        else if (s == "-Infinity")
        {
            d = -std::numeric_limits<double>::infinity();
        }
        else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        {
            const std::uint64_t bits = parse_hex_bits(j, dtype, width);
            if (width == 2)
            {
                const auto b = static_cast<std::uint16_t>(bits);
                std::memcpy(out, &b, 2);
            }
            else if (width == 4)
            {
                const auto b = static_cast<std::uint32_t>(bits);
                std::memcpy(out, &b, 4);
            }
            else
            {
                std::memcpy(out, &bits, 8);
            }
            return;
        }
        else
        {
            bad_fill(j, dtype, "strings allowed are \"NaN\", \"Infinity\", \"-Infinity\" and \"0x...\"");
        }
    }
    else if (j.is_number())
    {
        d = j.get<double>();
    }
    else
    {
        bad_fill(j, dtype, "expected a number or a string");
    }
    if (width == 2)
    {
        // There is no direct double -> binary16 conversion: go through float, rounded to odd
        // (truncate, then set the last bit when inexact), so that the second rounding to binary16
        // cannot land on a tie the double was not on. float keeps 13 more bits than binary16.
        float f = static_cast<float>(d);
        if (std::isfinite(d) && static_cast<double>(f) != d)
        {
            if (std::fabs(static_cast<double>(f)) > std::fabs(d))
            {
                f = std::nextafter(f, 0.0f);
            }
            f = std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
        }
        const float16 h(f);
        std::memcpy(out, &h, 2);
    }
    else if (width == 4)
    {
        const auto f = static_cast<float>(d);
        std::memcpy(out, &f, 4);
    }
    else
    {
        std::memcpy(out, &d, 8);
    }
}

inline json float_component_to_json(const std::byte* p, std::size_t width)
{
    double d;
    std::uint64_t bits = 0;
    std::uint64_t canonical_nan = 0;
    if (width == 2)
    {
        std::uint16_t b;
        std::memcpy(&b, p, 2);
        bits = b;
        d = static_cast<float>(half_from_bits(b));
        canonical_nan = 0x7e00;
    }
    else if (width == 4)
    {
        float f;
        std::memcpy(&f, p, 4);
        std::uint32_t b;
        std::memcpy(&b, p, 4);
        bits = b;
        d = f;
        canonical_nan = 0x7fc00000u;
    }
    else
    {
        std::memcpy(&d, p, 8);
        std::memcpy(&bits, p, 8);
        canonical_nan = 0x7ff8000000000000ull;
    }
    if (std::isnan(d))
    {
        if (bits == canonical_nan)
        {
            return "NaN";
        }
        static const char* digits = "0123456789abcdef";
        std::string s = "0x";
        for (int i = static_cast<int>(width) * 2 - 1; i >= 0; --i)
        {
            s += digits[(bits >> (4 * i)) & 0xf];
        }
        return s;
    }
    if (std::isinf(d))
    {
        return d > 0 ? "Infinity" : "-Infinity";
    }
    return d;
}

/// A bfloat16 or float8 fill value (see the file comment), its bits written natively into `out`.
inline void parse_minifloat_fill(const json& j, dtype_id dtype, std::byte* out)
{
    const minifloat_spec& s = *minifloat_spec_of(dtype);
    std::uint16_t bits = 0;
    const std::uint16_t inf = static_cast<std::uint16_t>(((1u << s.exponent_bits) - 1) << s.mantissa_bits);
    const std::uint16_t sign = static_cast<std::uint16_t>(1u << (s.exponent_bits + s.mantissa_bits));
    if (j.is_string())
    {
        const auto& t = j.get_ref<const std::string&>();
        if (t == "NaN")
        {
            bits = s.canonical_nan;
        }
        else if (t == "Infinity" || t == "-Infinity")
        {
            if (s.kind != minifloat_kind::ieee)
            {
                bad_fill(j, dtype, "the type has no infinity");
            }
            bits = t[0] == '-' ? static_cast<std::uint16_t>(inf | sign) : inf;
        }
        else if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'))
        {
            bits = static_cast<std::uint16_t>(parse_hex_bits(j, dtype, s.width));
        }
        else
        {
            bad_fill(j, dtype, "strings allowed are \"NaN\", \"Infinity\", \"-Infinity\" and \"0x...\"");
        }
    }
    else if (j.is_number())
    {
        const double d = j.get<double>();
        bits = detail::minifloat_from_double(s, d);
        if (detail::minifloat_is_nan(s, bits))
        {
            // Only a NaN is written "NaN"; a number that becomes one did not fit.
            bad_fill(j, dtype,
                     s.kind == minifloat_kind::fnu ? "not a positive number up to 2^127"
                                                   : "out of range (the type has no infinity)");
        }
    }
    else
    {
        bad_fill(j, dtype, "expected a number or a string");
    }
    if (s.width == 2)
    {
        std::memcpy(out, &bits, 2);
    }
    else
    {
        out[0] = static_cast<std::byte>(bits);
    }
}

inline json minifloat_fill_to_json(const std::byte* p, dtype_id dtype)
{
    const minifloat_spec& s = *minifloat_spec_of(dtype);
    std::uint16_t bits = 0;
    if (s.width == 2)
    {
        std::memcpy(&bits, p, 2);
    }
    else
    {
        bits = static_cast<std::uint16_t>(p[0]);
    }
    if (detail::minifloat_is_nan(s, bits))
    {
        if (bits == s.canonical_nan)
        {
            return "NaN";
        }
        static const char* digits = "0123456789abcdef";
        std::string t = "0x";
        for (int i = static_cast<int>(s.width) * 2 - 1; i >= 0; --i)
        {
            t += digits[(bits >> (4 * i)) & 0xf];
        }
        return t;
    }
    const double d = detail::minifloat_to_double(s, bits);
    if (std::isinf(d))
    {
        return d > 0 ? "Infinity" : "-Infinity";
    }
    return d; // exact: a double holds every value of these types
}

template <class I>
void parse_integer(const json& j, dtype_id dtype, std::byte* out)
{
    I v{};
    if (j.is_number_unsigned())
    {
        const auto u = j.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<I>::max()))
        {
            bad_fill(j, dtype, "out of range");
        }
        v = static_cast<I>(u);
    }
    else if (j.is_number_integer())
    {
        const auto s = j.get<std::int64_t>();
        if constexpr (std::is_unsigned_v<I>)
        {
            if (s < 0 || static_cast<std::uint64_t>(s) > std::numeric_limits<I>::max())
            {
                bad_fill(j, dtype, "out of range");
            }
        }
        else
        {
            if (s < std::numeric_limits<I>::min() || s > std::numeric_limits<I>::max())
            {
                bad_fill(j, dtype, "out of range");
            }
        }
        v = static_cast<I>(s);
    }
    else if (j.is_number_float())
    {
        // Some writers store 0.0 for integer arrays; accept exactly integral values in range.
        // max() of a 64-bit type rounds up to 2^63 / 2^64 as a double: compare with the exact
        // exclusive bound 2^digits instead, so that the conversion below is always defined.
        const double d = j.get<double>();
        const double upper = std::ldexp(1.0, std::numeric_limits<I>::digits);
        if (!(d == std::floor(d)) || d < static_cast<double>(std::numeric_limits<I>::min()) || d >= upper)
        {
            bad_fill(j, dtype, "not an integer in range");
        }
        v = static_cast<I>(d);
    }
    else
    {
        bad_fill(j, dtype, "expected an integer");
    }
    std::memcpy(out, &v, sizeof(I));
}

} // namespace detail

namespace detail
{

/// A fixed-width string fill value: numpy's text for <U, base64 of the bytes for |S (zarr-python's
/// encoding of both formats). A fill must fit the element like any stored value.
inline void parse_fixed_string_fill(const json& j, dtype_id dtype, std::size_t fixed_size, fill_value& f)
{
    if (!j.is_string())
    {
        bad_fill(j, dtype, dtype == dtype_id::fixed_bytes ? "expected a base64 string" : "expected a string");
    }
    std::string value = j.get<std::string>();
    if (dtype == dtype_id::fixed_bytes)
    {
        auto raw = base64_decode(value);
        if (!raw)
        {
            bad_fill(j, dtype, "not standard base64");
        }
        value = std::move(*raw);
        // numpy drops trailing NULs from a bytes value; a stored fill may still carry them.
        while (!value.empty() && value.back() == '\0')
        {
            value.pop_back();
        }
    }
    try
    {
        encode_fixed_string(dtype, value, f.wide.data(), fixed_size);
    }
    catch (const array_error& e)
    {
        bad_fill(j, dtype, e.what());
    }
}

} // namespace detail

namespace detail
{

/// Make `f` the variable-length value `v`.
inline void set_vlen_fill(fill_value& f, std::string v)
{
    f.text = std::make_shared<const std::string>(std::move(v));
    const vlen_element e{f.text->empty() ? nullptr : f.text->data(), f.text->size()};
    std::memcpy(f.bytes.data(), &e, sizeof e);
}

/// A variable-length fill value (see the file comment for the forms).
inline void parse_vlen_fill(const json& j, dtype_id dtype, int zarr_format, fill_value& f)
{
    std::string value;
    if (j.is_string())
    {
        value = j.get<std::string>();
        if (dtype == dtype_id::vlen_bytes)
        {
            auto raw = base64_decode(value);
            if (!raw)
            {
                bad_fill(j, dtype, "not standard base64");
            }
            value = std::move(*raw);
        }
    }
    else if (j.is_array() && dtype == dtype_id::vlen_bytes)
    {
        for (const auto& b : j)
        {
            if (!b.is_number_integer() || b.get<std::int64_t>() < 0 || b.get<std::int64_t>() > 255)
            {
                bad_fill(j, dtype, "expected byte values 0..255");
            }
            value += static_cast<char>(b.get<std::int64_t>());
        }
    }
    else if (j.is_number() && zarr_format == 2)
    {
        value = j.dump();
    }
    else
    {
        bad_fill(j, dtype, dtype == dtype_id::string ? "expected a string" : "expected base64 or byte values");
    }
    if (dtype == dtype_id::string)
    {
        if (const auto bad = first_invalid_utf8(value))
        {
            bad_fill(j, dtype, "not UTF-8 at byte " + std::to_string(*bad));
        }
    }
    set_vlen_fill(f, std::move(value));
}

} // namespace detail

namespace detail
{

/// A record's stored bytes (each field in its stated order, else little-endian, the order v2 and
/// zarr-python's base64 fills use) from its native form, or back: the swap is its own inverse.
inline void record_fill_order(std::byte* record, std::size_t size, const std::vector<record_field>& fields)
{
    swap_records(record, 1, size, record_swap_runs(fields), endian::little);
}

/// A record fill value: base64 of its stored bytes, 0 (v2: all zeros), or (v3) an object with
/// every field's fill value.
inline void parse_record_fill(const json& j, std::size_t size, const std::vector<record_field>& fields,
                              int zarr_format, fill_value& f)
{
    f.wide.assign(size, std::byte{0});
    if (j.is_string())
    {
        const auto raw = base64_decode(j.get<std::string>());
        if (!raw || raw->size() != size)
        {
            bad_fill(j, dtype_id::structured,
                     "expected base64 of " + std::to_string(size) + " bytes (one record)");
        }
        std::memcpy(f.wide.data(), raw->data(), size);
        record_fill_order(f.wide.data(), size, fields);
        return;
    }
    if (j.is_number_integer() && j.get<std::int64_t>() == 0 && zarr_format == 2)
    {
        return; // zarr-python 2's default: zero bytes
    }
    if (!j.is_object())
    {
        bad_fill(j, dtype_id::structured, "expected an object of field values or base64");
    }
    for (auto it = j.begin(); it != j.end(); ++it)
    {
        bool known = false;
        for (const auto& fl : fields)
        {
            known = known || fl.name == it.key();
        }
        if (!known)
        {
            bad_fill(j, dtype_id::structured, "the record has no field \"" + it.key() + "\"");
        }
    }
    for (const auto& fl : fields)
    {
        if (!j.contains(fl.name))
        {
            bad_fill(j, dtype_id::structured, "no value for field \"" + fl.name + "\"");
        }
        if (!fl.shape.empty())
        {
            bad_fill(j, dtype_id::structured, "field \"" + fl.name + "\" is a subarray (no v3 fill form)");
        }
        const fill_value v = parse_fill_value(j[fl.name], fl.type, 3);
        std::memcpy(f.wide.data() + fl.offset, v.data(), fl.size);
    }
}

/// The JSON of a record fill value: v2 base64 of the stored bytes, v3 the object of field values.
inline json record_fill_to_json(const fill_value& f, std::size_t size, const std::vector<record_field>& fields,
                                int zarr_format)
{
    std::vector<std::byte> record(size);
    if (size != 0 && !f.wide.empty())
    {
        std::memcpy(record.data(), f.wide.data(), std::min(size, f.wide.size()));
    }
    if (zarr_format == 2)
    {
        record_fill_order(record.data(), size, fields);
        return base64_encode(std::string_view(reinterpret_cast<const char*>(record.data()), size));
    }
    json out = json::object();
    for (const auto& fl : fields)
    {
        fill_value v;
        v.wide.assign(record.data() + fl.offset, record.data() + fl.offset + fl.size);
        std::memcpy(v.bytes.data(), v.wide.data(), std::min<std::size_t>(16, fl.size));
        if (is_vlen(fl.type.id) || !fl.shape.empty())
        {
            throw metadata_error(metadata_errc::unsupported_feature,
                                 "record field \"" + fl.name + "\" has no v3 fill value form");
        }
        out[fl.name] = fill_value_to_json(v, fl.type, 3);
    }
    return out;
}

} // namespace detail

inline fill_value parse_fill_value(const json& j, const data_type& type, int zarr_format)
{
    const dtype_id dtype = type.id;
    const std::size_t fixed_size = type.fixed_size;
    fill_value f;
    std::byte* out = f.bytes.data();
    if (is_fixed_string(dtype) || dtype == dtype_id::structured ||
        (is_user(dtype) && fixed_size > f.bytes.size()))
    {
        f.wide.assign(fixed_size, std::byte{0}); // a null fill reads as the empty string, a zero record
    }
    if (j.is_null())
    {
        if (zarr_format == 2)
        {
            f.is_null = true;
            return f;
        }
        detail::bad_fill(j, type, "null is only allowed in Zarr v2");
    }
    switch (dtype)
    {
        case dtype_id::user:
            if (!type.user || type.user->size != fixed_size)
            {
                detail::bad_fill(j, type, "a user data type's fill value needs the type's description");
            }
            try
            {
                type.user->fill_from_json(j, f.wide.empty() ? f.bytes.data() : f.wide.data());
            }
            catch (const metadata_error&)
            {
                throw;
            }
            catch (const std::exception& e)
            {
                // The user's conversion refused it: the same error any other type's bad fill gives.
                detail::bad_fill(j, type, e.what());
            }
            break;
        case dtype_id::fixed_bytes:
        case dtype_id::fixed_utf32:
            detail::parse_fixed_string_fill(j, dtype, fixed_size, f);
            break;
        case dtype_id::string:
        case dtype_id::vlen_bytes:
            detail::parse_vlen_fill(j, dtype, zarr_format, f);
            break;
        case dtype_id::structured:
            if (type.fields.empty())
            {
                detail::bad_fill(j, dtype, "a record fill value needs the record's fields");
            }
            detail::parse_record_fill(j, fixed_size, type.fields, zarr_format, f);
            break;
        case dtype_id::bool_:
        {
            bool b = false;
            if (j.is_boolean())
            {
                b = j.get<bool>();
            }
            else if (j.is_number_integer() && (j.get<std::int64_t>() == 0 || j.get<std::int64_t>() == 1))
            {
                b = j.get<std::int64_t>() == 1;
            }
            else
            {
                detail::bad_fill(j, dtype, "expected true or false");
            }
            std::memcpy(out, &b, 1);
            break;
        }
        case dtype_id::int8:
            detail::parse_integer<std::int8_t>(j, dtype, out);
            break;
        case dtype_id::int16:
            detail::parse_integer<std::int16_t>(j, dtype, out);
            break;
        case dtype_id::int32:
            detail::parse_integer<std::int32_t>(j, dtype, out);
            break;
        case dtype_id::int64:
            detail::parse_integer<std::int64_t>(j, dtype, out);
            break;
        case dtype_id::datetime64:
        case dtype_id::timedelta64:
            if (j.is_string() && j.get<std::string>() == "NaT")
            {
                std::memcpy(out, &nat, sizeof(nat));
            }
            else if (j.is_number_integer())
            {
                detail::parse_integer<std::int64_t>(j, dtype, out);
            }
            else
            {
                // A float is no count of a unit; NaN is not NaT.
                detail::bad_fill(j, dtype, "expected an integer count or \"NaT\"");
            }
            break;
        case dtype_id::uint8:
            detail::parse_integer<std::uint8_t>(j, dtype, out);
            break;
        case dtype_id::uint16:
            detail::parse_integer<std::uint16_t>(j, dtype, out);
            break;
        case dtype_id::uint32:
            detail::parse_integer<std::uint32_t>(j, dtype, out);
            break;
        case dtype_id::uint64:
            detail::parse_integer<std::uint64_t>(j, dtype, out);
            break;
        case dtype_id::float16:
            detail::parse_float_component(j, dtype, 2, out);
            break;
        case dtype_id::float32:
            detail::parse_float_component(j, dtype, 4, out);
            break;
        case dtype_id::float64:
            detail::parse_float_component(j, dtype, 8, out);
            break;
        case dtype_id::bfloat16:
        case dtype_id::float8_e3m4:
        case dtype_id::float8_e4m3:
        case dtype_id::float8_e4m3b11fnuz:
        case dtype_id::float8_e4m3fnuz:
        case dtype_id::float8_e5m2:
        case dtype_id::float8_e5m2fnuz:
        case dtype_id::float8_e8m0fnu:
            detail::parse_minifloat_fill(j, dtype, out);
            break;
        case dtype_id::complex64:
        case dtype_id::complex128:
        {
            const std::size_t w = info(dtype).word;
            if (!j.is_array() || j.size() != 2)
            {
                detail::bad_fill(j, dtype, "expected [real, imaginary]");
            }
            detail::parse_float_component(j[0], dtype, w, out);
            detail::parse_float_component(j[1], dtype, w, out + w);
            break;
        }
    }
    return f;
}

inline json fill_value_to_json(const fill_value& f, const data_type& type, int zarr_format)
{
    const dtype_id dtype = type.id;
    const std::size_t fixed_size = type.fixed_size;
    if (f.is_null && zarr_format == 2)
    {
        return nullptr;
    }
    switch (dtype)
    {
        case dtype_id::user:
            if (!type.user)
            {
                throw metadata_error(metadata_errc::invalid_fill_value,
                                     "a user data type's fill value needs the type's description");
            }
            return type.user->fill_to_json(f.data());
        case dtype_id::fixed_bytes:
        case dtype_id::fixed_utf32:
        {
            std::vector<std::byte> element(fixed_size);
            const std::size_t n = std::min(fixed_size, f.wide.empty() ? f.bytes.size() : f.wide.size());
            if (n != 0) // no element (fixed_size 0): the empty value, and no memcpy from or to null
            {
                std::memcpy(element.data(), f.data(), n);
            }
            std::string value = decode_fixed_string(dtype, element.data(), fixed_size);
            return dtype == dtype_id::fixed_bytes ? detail::base64_encode(value) : value;
        }
        case dtype_id::structured:
            return detail::record_fill_to_json(f, fixed_size, type.fields, zarr_format);
        case dtype_id::string:
        case dtype_id::vlen_bytes:
        {
            const std::string value = f.text ? *f.text : std::string();
            if (dtype == dtype_id::vlen_bytes && zarr_format == 2 && value.empty())
            {
                return nullptr; // what zarr-python 2.13 writes (it cannot write a bytes fill)
            }
            return dtype == dtype_id::vlen_bytes ? json(detail::base64_encode(value)) : json(value);
        }
        case dtype_id::bool_:
            return f.as<bool>();
        case dtype_id::int8:
            return f.as<std::int8_t>();
        case dtype_id::int16:
            return f.as<std::int16_t>();
        case dtype_id::int32:
            return f.as<std::int32_t>();
        case dtype_id::int64:
            return f.as<std::int64_t>();
        case dtype_id::datetime64:
        case dtype_id::timedelta64:
            if (zarr_format == 3 && f.as<std::int64_t>() == nat)
            {
                return "NaT";
            }
            return f.as<std::int64_t>();
        case dtype_id::uint8:
            return f.as<std::uint8_t>();
        case dtype_id::uint16:
            return f.as<std::uint16_t>();
        case dtype_id::uint32:
            return f.as<std::uint32_t>();
        case dtype_id::uint64:
            return f.as<std::uint64_t>();
        case dtype_id::float16:
            return detail::float_component_to_json(f.bytes.data(), 2);
        case dtype_id::float32:
            return detail::float_component_to_json(f.bytes.data(), 4);
        case dtype_id::float64:
            return detail::float_component_to_json(f.bytes.data(), 8);
        case dtype_id::bfloat16:
        case dtype_id::float8_e3m4:
        case dtype_id::float8_e4m3:
        case dtype_id::float8_e4m3b11fnuz:
        case dtype_id::float8_e4m3fnuz:
        case dtype_id::float8_e5m2:
        case dtype_id::float8_e5m2fnuz:
        case dtype_id::float8_e8m0fnu:
            return detail::minifloat_fill_to_json(f.bytes.data(), dtype);
        case dtype_id::complex64:
        case dtype_id::complex128:
        {
            const std::size_t w = info(dtype).word;
            return json::array({detail::float_component_to_json(f.bytes.data(), w),
                                detail::float_component_to_json(f.bytes.data() + w, w)});
        }
    }
    return nullptr;
}

inline json scalar::to_json() const
{
    switch (m_kind)
    {
        case kind::none:
            return nullptr;
        case kind::boolean:
            return m_bool;
        case kind::signed_int:
            return m_int;
        case kind::unsigned_int:
            return m_uint;
        case kind::floating:
        {
            const std::byte* p = reinterpret_cast<const std::byte*>(&m_double);
            return detail::float_component_to_json(p, 8);
        }
        case kind::complex:
        {
            const double re = m_complex.real();
            const double im = m_complex.imag();
            return json::array({detail::float_component_to_json(reinterpret_cast<const std::byte*>(&re), 8),
                                detail::float_component_to_json(reinterpret_cast<const std::byte*>(&im), 8)});
        }
        case kind::json_value:
        case kind::string:
            return m_json;
    }
    return nullptr;
}

inline fill_value fill_value_of(const scalar& s, const data_type& type, int zarr_format)
{
    const dtype_id dtype = type.id;
    const std::size_t fixed_size = type.fixed_size;
    if (s.empty())
    {
        if (dtype == dtype_id::structured || (is_user(dtype) && fixed_size > fill_value{}.bytes.size()))
        {
            fill_value f; // a zero record, a zero user element
            f.wide.assign(fixed_size, std::byte{0});
            return f;
        }
        return is_string_like(dtype) ? parse_fill_value(json(""), type, zarr_format) : fill_value{};
    }
    if (s.which() == scalar::kind::string && (dtype == dtype_id::fixed_bytes || dtype == dtype_id::vlen_bytes))
    {
        // The bytes themselves, not their JSON text.
        return parse_fill_value(detail::base64_encode(s.to_json().get<std::string>()), type, zarr_format);
    }
    return parse_fill_value(s.to_json(), type, zarr_format);
}

} // namespace zarrxt
