/** @file dtype.hpp
 *  Data types: the runtime `dtype_id` used by untyped code (metadata, codecs, stores) and the
 *  compile-time `dtype_traits<T>` that maps a C++ element type onto it.
 *
 *  Supported: bool, int8..int64, uint8..uint64, float16, float32, float64, complex64, complex128, and
 *  numpy's datetime64 / timedelta64 (v2 "<M8[ns]", v3 "numpy.datetime64" with a unit; see
 *  time_unit.hpp), whose elements are std::chrono time points and durations, or raw int64 counts,
 *  and the zarr-extensions registry's bfloat16 and float8 types (v3 only; detail/minifloat.hpp).
 *  A user type with the exact layout of one of these may specialise dtype_traits (see
 *  docs/concepts/dtype.md); anything else fails to compile with a message naming dtype_traits.
 */
#pragma once

#include "detail/half.hpp"
#include "detail/minifloat.hpp"
#include "error.hpp"
#include "time_unit.hpp"

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace zarrxt
{

enum class dtype_id : std::uint8_t
{
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
    datetime64,  ///< numpy datetime64: int64 counts of a unit since 1970, -2^63 is NaT
    timedelta64, ///< numpy timedelta64: int64 counts of a unit, -2^63 is NaT
    fixed_bytes, ///< numpy |S n (v3 null_terminated_bytes): n bytes, trailing NULs not part of the value
    fixed_utf32, ///< numpy <U n (v3 fixed_length_utf32): n UTF-32 code points, trailing NULs not part of it
    string,      ///< variable-length UTF-8 text (v3 string + vlen-utf8; v2 |O + the vlen-utf8 filter)
    vlen_bytes,  ///< variable-length bytes (v3 bytes + vlen-bytes; v2 |O + the vlen-bytes filter)
    structured,  ///< records of named fields (v3 struct, v2 a list of fields; record.hpp)
    // The zarr-extensions small floats (v3 only; no numpy type string). Appended so that the
    // numbers above, which the C API exposes, do not move.
    bfloat16,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    /// A type a program describes and passes in a codec_registry (user_dtype.hpp): v3 only, a
    /// fixed-size block of bytes to zarrxt; its name and size are the array's (data_type::user).
    user,
};

/// Everything untyped code needs to know about a data type.
struct dtype_info
{
    dtype_id id;
    std::string_view v3_name; ///< "int16"
    char v2_kind;             ///< numpy kind: 'b' 'i' 'u' 'f' 'c' 'M' 'm' 'S' 'U' 'O', 0 if none
    /// Bytes per element in the kernels; 0 for fixed-width strings, whose size is the array's; a
    /// vlen_element (16) for the variable-length types (vlen.hpp).
    std::size_t size;
    std::size_t word;         ///< width of the unit that is byte-swapped (complex: half the size)
};

inline constexpr std::array<dtype_info, 30> dtype_table{{
    {dtype_id::bool_, "bool", 'b', 1, 1},
    {dtype_id::int8, "int8", 'i', 1, 1},
    {dtype_id::int16, "int16", 'i', 2, 2},
    {dtype_id::int32, "int32", 'i', 4, 4},
    {dtype_id::int64, "int64", 'i', 8, 8},
    {dtype_id::uint8, "uint8", 'u', 1, 1},
    {dtype_id::uint16, "uint16", 'u', 2, 2},
    {dtype_id::uint32, "uint32", 'u', 4, 4},
    {dtype_id::uint64, "uint64", 'u', 8, 8},
    {dtype_id::float16, "float16", 'f', 2, 2},
    {dtype_id::float32, "float32", 'f', 4, 4},
    {dtype_id::float64, "float64", 'f', 8, 8},
    {dtype_id::complex64, "complex64", 'c', 8, 4},
    {dtype_id::complex128, "complex128", 'c', 16, 8},
    {dtype_id::datetime64, "numpy.datetime64", 'M', 8, 8},
    {dtype_id::timedelta64, "numpy.timedelta64", 'm', 8, 8},
    {dtype_id::fixed_bytes, "null_terminated_bytes", 'S', 0, 1},
    {dtype_id::fixed_utf32, "fixed_length_utf32", 'U', 0, 4},
    {dtype_id::string, "string", 'O', 16, 1},
    {dtype_id::vlen_bytes, "bytes", 'O', 16, 1},
    {dtype_id::structured, "struct", 'V', 0, 1},
    {dtype_id::bfloat16, "bfloat16", 0, 2, 2},
    {dtype_id::float8_e3m4, "float8_e3m4", 0, 1, 1},
    {dtype_id::float8_e4m3, "float8_e4m3", 0, 1, 1},
    {dtype_id::float8_e4m3b11fnuz, "float8_e4m3b11fnuz", 0, 1, 1},
    {dtype_id::float8_e4m3fnuz, "float8_e4m3fnuz", 0, 1, 1},
    {dtype_id::float8_e5m2, "float8_e5m2", 0, 1, 1},
    {dtype_id::float8_e5m2fnuz, "float8_e5m2fnuz", 0, 1, 1},
    {dtype_id::float8_e8m0fnu, "float8_e8m0fnu", 0, 1, 1},
    {dtype_id::user, "", 0, 0, 1}, // name, size and swap word are the user_dtype's
}};

constexpr const dtype_info& info(dtype_id id) noexcept
{
    return dtype_table[static_cast<std::size_t>(id)];
}

constexpr std::string_view name(dtype_id id) noexcept
{
    return info(id).v3_name;
}

/// The layout of bfloat16 and the float8 types; nullptr for every other type.
constexpr const minifloat_spec* minifloat_spec_of(dtype_id id) noexcept
{
    switch (id)
    {
        case dtype_id::bfloat16:
            return &bfloat16_format::spec;
        case dtype_id::float8_e3m4:
            return &float8_e3m4_format::spec;
        case dtype_id::float8_e4m3:
            return &float8_e4m3_format::spec;
        case dtype_id::float8_e4m3b11fnuz:
            return &float8_e4m3b11fnuz_format::spec;
        case dtype_id::float8_e4m3fnuz:
            return &float8_e4m3fnuz_format::spec;
        case dtype_id::float8_e5m2:
            return &float8_e5m2_format::spec;
        case dtype_id::float8_e5m2fnuz:
            return &float8_e5m2fnuz_format::spec;
        case dtype_id::float8_e8m0fnu:
            return &float8_e8m0fnu_format::spec;
        default:
            return nullptr;
    }
}

/// bfloat16 and the float8 types (zarr-extensions), which have no numpy type string.
constexpr bool is_minifloat(dtype_id id) noexcept
{
    return minifloat_spec_of(id) != nullptr;
}

/// datetime64 and timedelta64: the types that carry a time_unit.
constexpr bool is_time(dtype_id id) noexcept
{
    return id == dtype_id::datetime64 || id == dtype_id::timedelta64;
}

/// numpy's fixed-width strings, |S n and <U n: the types whose element size is the array's.
constexpr bool is_fixed_string(dtype_id id) noexcept
{
    return id == dtype_id::fixed_bytes || id == dtype_id::fixed_utf32;
}

/// The variable-length types, whose elements the kernels carry as vlen_element (vlen.hpp).
constexpr bool is_vlen(dtype_id id) noexcept
{
    return id == dtype_id::string || id == dtype_id::vlen_bytes;
}

/// The types whose C++ element type is std::string (fixed-width and variable-length).
constexpr bool is_string_like(dtype_id id) noexcept
{
    return is_fixed_string(id) || is_vlen(id);
}

/// A user data type (user_dtype.hpp), whose name, size and swap word its description gives.
constexpr bool is_user(dtype_id id) noexcept
{
    return id == dtype_id::user;
}

/// The largest fixed-width string element, in bytes: numpy's (and the v3 extensions') limit.
inline constexpr std::size_t max_fixed_string_bytes = 2147483644;

/// Bytes per element of a dtype; `fixed_size` is the element size of a fixed-width string or
/// record array (their size is the array's, not the type's).
constexpr std::size_t element_size_of(dtype_id id, std::size_t fixed_size) noexcept
{
    return is_fixed_string(id) || id == dtype_id::structured || is_user(id) ? fixed_size : info(id).size;
}

/// The string type of a new array of std::string: numpy |S n or <U n, or one of the
/// variable-length types. `length` counts bytes for |S and code points for <U, as numpy's type
/// string does; it is 0 for the variable-length types.
struct string_type
{
    dtype_id id = dtype_id::fixed_utf32;
    std::size_t length = 0;

    /// Bytes per stored element of a fixed-width type (0 for the variable-length ones).
    constexpr std::size_t element_size() const noexcept
    {
        return id == dtype_id::fixed_utf32 ? 4 * length : id == dtype_id::fixed_bytes ? length : 0;
    }
};

/// numpy <U n, v3 fixed_length_utf32: n code points (4 n bytes) of text per element.
constexpr string_type fixed_length_utf32(std::size_t code_points) noexcept
{
    return {dtype_id::fixed_utf32, code_points};
}

/// numpy |S n, v3 null_terminated_bytes: n bytes per element.
constexpr string_type null_terminated_bytes(std::size_t bytes) noexcept
{
    return {dtype_id::fixed_bytes, bytes};
}

/// Variable-length UTF-8 text: v3 `string` (vlen-utf8), v2 `|O` with the vlen-utf8 filter (what
/// zarr-python writes for `dtype=str`).
constexpr string_type variable_length_string() noexcept
{
    return {dtype_id::string, 0};
}

/// Variable-length bytes: v3 `bytes` (vlen-bytes), v2 `|O` with the vlen-bytes filter.
constexpr string_type variable_length_bytes() noexcept
{
    return {dtype_id::vlen_bytes, 0};
}

/// Parse a Zarr v3 data type name ("float32"); nullopt when zarrxt does not support it. The
/// names that need a configuration (times, fixed-width strings) are parsed with it (metadata/v3.hpp).
inline std::optional<dtype_id> dtype_from_v3_name(std::string_view n) noexcept
{
    if (n == "variable_length_bytes")
    {
        return dtype_id::vlen_bytes; // zarr-python 3's earlier name of "bytes"
    }
    if (n == "structured")
    {
        return dtype_id::structured; // zarr-python 3's earlier name of "struct"
    }
    for (const auto& d : dtype_table)
    {
        if (d.v3_name == n && !d.v3_name.empty())
        {
            return d.id;
        }
    }
    return std::nullopt;
}

/// numpy type string of a dtype in the given byte order: "<f4", ">i2", "|u1", "|b1", with the
/// unit for times: "<M8[ns]", ">m8[10s]", and the length for strings ("|S7", "<U13" for 52 bytes).
inline std::string v2_typestr(dtype_id id, bool big_endian, const time_unit& unit = {},
                              std::size_t fixed_size = 0)
{
    const auto& d = info(id);
    if (is_vlen(id))
    {
        return "|O"; // the object codec (a filter) says which
    }
    if (is_user(id))
    {
        throw metadata_error(metadata_errc::unsupported_dtype,
                             "a user data type has no Zarr v2 (numpy) data type; use Zarr v3");
    }
    if (is_minifloat(id))
    {
        // numpy has no such type (ml_dtypes' are not numpy's), so zarr-python 2 and other v2
        // readers could not read it: Zarr v3 only.
        throw metadata_error(metadata_errc::unsupported_dtype,
                             std::string(name(id)) + " has no Zarr v2 (numpy) data type; use Zarr v3");
    }
    std::string s;
    s += d.word == 1 ? '|' : (big_endian ? '>' : '<');
    s += d.v2_kind;
    s += std::to_string(id == dtype_id::fixed_utf32 ? fixed_size / 4 : element_size_of(id, fixed_size));
    if (is_time(id))
    {
        s += "[" + to_string(unit) + "]";
    }
    return s;
}

/// Parse a numpy type string; nullopt when unsupported (objects, structs, a datetime without a
/// unit, a string of length 0). `big_endian` receives the stored byte order, `unit` (when given)
/// the unit of a datetime64 / timedelta64, `fixed_size` (when given) the element size in bytes of
/// a fixed-width string.
inline std::optional<dtype_id> dtype_from_v2_typestr(std::string_view s, bool& big_endian,
                                                     time_unit* unit = nullptr,
                                                     std::size_t* fixed_size = nullptr) noexcept
{
    if (s.size() < 3 || (s[0] != '<' && s[0] != '>' && s[0] != '|' && s[0] != '='))
    {
        return std::nullopt;
    }
    big_endian = s[0] == '>';
    const char kind = s[1];
    if (kind == 'M' || kind == 'm')
    {
        // "<M8[unit]": only 8 bytes exist, and a unit is required (numpy's generic "<M8" has no
        // meaning for stored values).
        if (s.size() < 6 || s.substr(2, 2) != "8[" || s.back() != ']' || s[0] == '|')
        {
            return std::nullopt;
        }
        const auto u = parse_time_unit(s.substr(4, s.size() - 5));
        if (!u)
        {
            return std::nullopt;
        }
        if (unit)
        {
            *unit = *u;
        }
        return kind == 'M' ? dtype_id::datetime64 : dtype_id::timedelta64;
    }
    std::size_t size = 0;
    for (char c : s.substr(2))
    {
        if (c < '0' || c > '9' || size > 1000000000)
        {
            return std::nullopt;
        }
        size = size * 10 + static_cast<std::size_t>(c - '0');
    }
    if (kind == 'S' || kind == 'U')
    {
        // numpy spells |S7 and <U13 / >U13; a length 0 string holds nothing (and no element size).
        const std::size_t bytes = kind == 'U' ? size * 4 : size;
        if (s.size() > 12 || size == 0 || bytes > max_fixed_string_bytes || (kind == 'S' && s[0] != '|') ||
            (kind == 'U' && s[0] == '|'))
        {
            return std::nullopt;
        }
        if (fixed_size)
        {
            *fixed_size = bytes;
        }
        return kind == 'S' ? dtype_id::fixed_bytes : dtype_id::fixed_utf32;
    }
    for (const auto& d : dtype_table)
    {
        if (d.v2_kind != 0 && d.v2_kind == kind && d.size == size && !is_vlen(d.id) &&
            d.id != dtype_id::structured)
        {
            // A multi-byte type must say its byte order; '|' is only valid for single bytes.
            if (size > 1 && s[0] == '|')
            {
                return std::nullopt;
            }
            return d.id;
        }
    }
    return std::nullopt;
}

/// Call `f(std::type_identity<T>{})` with the element type of a dtype (bool as bool, float16 as
/// zarrxt::float16, complex as std::complex, datetime64 and timedelta64 as their raw int64 counts);
/// the one place a runtime dtype becomes a fixed-size C++ type. Fixed-width strings have none (their
/// size is the array's; their element type is std::string): dtype_mismatch.
template <class F>
decltype(auto) with_element_type(dtype_id id, F&& f)
{
    switch (id)
    {
        case dtype_id::fixed_bytes:
        case dtype_id::fixed_utf32:
        case dtype_id::string:
        case dtype_id::vlen_bytes:
            throw dtype_mismatch(std::string(name(id)) + " has no fixed-size element type (read it as std::string)");
        case dtype_id::structured:
            throw dtype_mismatch("a record array has no built-in element type (read it as a described struct, "
                                 "or its packed records through any_array::read_bytes)");
        case dtype_id::user:
            throw dtype_mismatch(
                "a user data type has no built-in element type (read it as its registered C++ "
                "type, or its elements' bytes through any_array::read_bytes)");
        case dtype_id::bool_:
            return f(std::type_identity<bool>{});
        case dtype_id::int8:
            return f(std::type_identity<std::int8_t>{});
        case dtype_id::int16:
            return f(std::type_identity<std::int16_t>{});
        case dtype_id::int32:
            return f(std::type_identity<std::int32_t>{});
        case dtype_id::int64:
            return f(std::type_identity<std::int64_t>{});
        case dtype_id::uint8:
            return f(std::type_identity<std::uint8_t>{});
        case dtype_id::uint16:
            return f(std::type_identity<std::uint16_t>{});
        case dtype_id::uint32:
            return f(std::type_identity<std::uint32_t>{});
        case dtype_id::uint64:
            return f(std::type_identity<std::uint64_t>{});
        case dtype_id::float16:
            return f(std::type_identity<float16>{});
        case dtype_id::float32:
            return f(std::type_identity<float>{});
        case dtype_id::float64:
            return f(std::type_identity<double>{});
        case dtype_id::complex64:
            return f(std::type_identity<std::complex<float>>{});
        case dtype_id::complex128:
            return f(std::type_identity<std::complex<double>>{});
        case dtype_id::datetime64:
        case dtype_id::timedelta64:
            return f(std::type_identity<std::int64_t>{});
        case dtype_id::bfloat16:
            return f(std::type_identity<bfloat16>{});
        case dtype_id::float8_e3m4:
            return f(std::type_identity<float8_e3m4>{});
        case dtype_id::float8_e4m3:
            return f(std::type_identity<float8_e4m3>{});
        case dtype_id::float8_e4m3b11fnuz:
            return f(std::type_identity<float8_e4m3b11fnuz>{});
        case dtype_id::float8_e4m3fnuz:
            return f(std::type_identity<float8_e4m3fnuz>{});
        case dtype_id::float8_e5m2:
            return f(std::type_identity<float8_e5m2>{});
        case dtype_id::float8_e5m2fnuz:
            return f(std::type_identity<float8_e5m2fnuz>{});
        case dtype_id::float8_e8m0fnu:
            return f(std::type_identity<float8_e8m0fnu>{});
    }
    return f(std::type_identity<bool>{});
}

/// Call `f(std::type_identity<T>{})` with the arithmetic type of a non-complex, non-bool dtype
/// (float16 as zarrxt::float16); returns false for bool, complex and time types, which have none
/// (arithmetic on a count of a unit would ignore the unit, and NaT is no number), and for bfloat16
/// and the float8 types, which are storage types (the codecs that compute do not take them).
template <class F>
bool with_arithmetic_type(dtype_id id, F&& f)
{
    if (is_time(id) || is_string_like(id) || id == dtype_id::structured || is_minifloat(id) || is_user(id))
    {
        return false;
    }
    return with_element_type(id,
                             [&](auto t)
                             {
                                 using T = typename decltype(t)::type;
                                 if constexpr (std::is_same_v<T, bool> ||
                                               std::is_same_v<T, std::complex<float>> ||
                                               std::is_same_v<T, std::complex<double>> || is_minifloat_v<T>)
                                 {
                                     return false;
                                 }
                                 else
                                 {
                                     f(t);
                                     return true;
                                 }
                             });
}

/// A dtype named either way: a v3 name ("int16") or a v2 type string ("<i2"); nullopt if neither.
inline std::optional<dtype_id> dtype_from_any_name(std::string_view n) noexcept
{
    if (auto d = dtype_from_v3_name(n))
    {
        return d;
    }
    bool big = false;
    return dtype_from_v2_typestr(n, big);
}

/****************
 * dtype_traits *
 ****************/

/// Maps a C++ element type onto a Zarr data type. The primary template is deliberately empty.
template <class T>
struct dtype_traits
{
};

#define ZARRXT_DTYPE_TRAITS(type, ident)                                                                     \
    template <>                                                                                              \
    struct dtype_traits<type>                                                                                \
    {                                                                                                        \
        static constexpr dtype_id id = dtype_id::ident;                                                      \
    };

ZARRXT_DTYPE_TRAITS(bool, bool_)
ZARRXT_DTYPE_TRAITS(std::int8_t, int8)
ZARRXT_DTYPE_TRAITS(std::int16_t, int16)
ZARRXT_DTYPE_TRAITS(std::int32_t, int32)
ZARRXT_DTYPE_TRAITS(std::int64_t, int64)
ZARRXT_DTYPE_TRAITS(std::uint8_t, uint8)
ZARRXT_DTYPE_TRAITS(std::uint16_t, uint16)
ZARRXT_DTYPE_TRAITS(std::uint32_t, uint32)
ZARRXT_DTYPE_TRAITS(std::uint64_t, uint64)
ZARRXT_DTYPE_TRAITS(float16, float16)
ZARRXT_DTYPE_TRAITS(float, float32)
ZARRXT_DTYPE_TRAITS(double, float64)
ZARRXT_DTYPE_TRAITS(std::complex<float>, complex64)
ZARRXT_DTYPE_TRAITS(std::complex<double>, complex128)
ZARRXT_DTYPE_TRAITS(bfloat16, bfloat16)
ZARRXT_DTYPE_TRAITS(float8_e3m4, float8_e3m4)
ZARRXT_DTYPE_TRAITS(float8_e4m3, float8_e4m3)
ZARRXT_DTYPE_TRAITS(float8_e4m3b11fnuz, float8_e4m3b11fnuz)
ZARRXT_DTYPE_TRAITS(float8_e4m3fnuz, float8_e4m3fnuz)
ZARRXT_DTYPE_TRAITS(float8_e5m2, float8_e5m2)
ZARRXT_DTYPE_TRAITS(float8_e5m2fnuz, float8_e5m2fnuz)
ZARRXT_DTYPE_TRAITS(float8_e8m0fnu, float8_e8m0fnu)
#undef ZARRXT_DTYPE_TRAITS

/// std::chrono::sys_time<D> with an int64 count: a datetime64 whose unit is D's period. Only the
/// system clock's epoch (1970, no leap seconds) is numpy's.
template <class Duration>
requires std::is_same_v<typename Duration::rep, std::int64_t>
struct dtype_traits<std::chrono::time_point<std::chrono::system_clock, Duration>>
{
    static constexpr dtype_id id = dtype_id::datetime64;
    using period = typename Duration::period;
};

/// std::chrono::duration<int64, P>: a timedelta64 whose unit is P.
template <class Period>
struct dtype_traits<std::chrono::duration<std::int64_t, Period>>
{
    static constexpr dtype_id id = dtype_id::timedelta64;
    using period = Period;
};

/// The stored unit a time element type stands for; nullopt for every other type.
template <class T>
constexpr std::optional<time_unit> time_unit_for() noexcept
{
    if constexpr (requires { typename dtype_traits<T>::period; })
    {
        return time_unit_of<typename dtype_traits<T>::period>();
    }
    else
    {
        return std::nullopt;
    }
}

/// A type zarrxt can store: it has a dtype_traits specialisation whose layout matches the dtype.
template <class T>
concept element_type = requires
{
    {
        dtype_traits<T>::id
        } -> std::convertible_to<dtype_id>;
}
&&std::is_trivially_copyable_v<T> &&
    (sizeof(T) == info(dtype_traits<T>::id).size || dtype_traits<T>::id == dtype_id::user);

template <class T>
constexpr dtype_id dtype_of() noexcept
{
    static_assert(
        element_type<T>,
        "zarrxt: T is not a Zarr element type. Use bool, (u)int8..64, float16, float, double, "
        "bfloat16, float8_*, "
        "std::complex<float|double>, std::chrono::sys_time<D> or std::chrono::duration<int64_t, P>, "
        "or specialise zarrxt::dtype_traits<T> for a type with the "
        "same size and layout as one of them, or describe a user data type (user_dtype.hpp).");
    return dtype_traits<T>::id;
}

} // namespace zarrxt
