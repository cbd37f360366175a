/** @file record.hpp
 *  Structured records: numpy's structured dtypes (v2 `[["x", "<i4"], ["y", ">f8", [3]]]`) and the
 *  zarr-extensions `struct` data type (v3, also read under zarr-python 3's earlier name
 *  `structured`).
 *
 *  A record is stored packed: its fields one after the other in declaration order, no padding, each
 *  field's value in its own type's stored form (nested records recursively, v2 subarray fields as
 *  their elements in C order). In the kernels a record is the same packed bytes with every
 *  multi-byte scalar in native byte order: the `bytes` codec swaps them field by field
 *  (`record_swap_runs`), so the kernels move records as fixed-size elements like any other.
 *
 *  This header is the model (no JSON): the fields, their layout, and how a C++ struct is described
 *  once to read and write such arrays (`record_traits`, ZARRXT_RECORD). metadata/v2.hpp and
 *  metadata/v3.hpp parse and write the documents.
 */
#pragma once

#include "data_type.hpp"
#include "detail/checked.hpp"
#include "detail/endian.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "time_unit.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace zarrxt
{

/// The largest record, in bytes (numpy's limit for an item).
inline constexpr std::size_t max_record_bytes = 2147483647;

/// Set every field's offset and size, nested records included, and return the record's size.
/// Refused with metadata.4 (naming the field): no fields, an empty or repeated name, a field of a
/// variable-length type, a subarray with an extent of 0, a record larger than max_record_bytes.
std::size_t layout_record(std::vector<record_field>& fields);

/// A run of `count` scalars of `word` bytes at `offset` in a record, stored in `order` when the
/// type says so (v2; otherwise in the bytes codec's order): what the bytes codec swaps.
struct swap_run
{
    std::size_t offset;
    std::size_t word;
    std::uint64_t count;
    std::optional<endian> order;
};

/// Every run of multi-byte scalars of a laid-out record, in order (nested records flattened).
std::vector<swap_run> record_swap_runs(const std::vector<record_field>& fields);

/// Byte-swap the scalars of `records` (n packed records of `size` bytes) whose stored order is not
/// native: the runs that state an order where it differs from native, the others when `codec_order`
/// does. Its own inverse, so the same call decodes and encodes.
void swap_records(std::byte* records, std::uint64_t n, std::size_t size, const std::vector<swap_run>& runs,
                  endian codec_order) noexcept;

/// The fields of two records name the same things in the same order with the same types (offsets
/// and byte orders aside): a record type matches a stored array.
bool same_fields(const std::vector<record_field>& a, const std::vector<record_field>& b) noexcept;

/// A readable description: `{x: int32, y: float64[3]}`.
std::string describe_fields(const std::vector<record_field>& fields);

/****************************************************
 * C++ structs as records: record_traits, ZARRXT_RECORD *
 ****************************************************/

/// A member of a C++ struct as a record field: its name and the member pointer.
template <class S, class M>
struct member_field
{
    std::string_view name;
    M S::*member;
};

/// Describes a struct S as a record: `static constexpr auto fields = std::make_tuple(member_field
/// {"x", &S::x}, ...)` in declaration order of the stored fields. ZARRXT_RECORD(S, x, y) writes it.
/// A member is an element type (numbers, bool, complex, float16, std::chrono time types), a
/// std::array of one (a v2 subarray field), or another described struct (a nested record).
template <class S>
struct record_traits
{
};

/// A struct with a record_traits description.
template <class S>
concept record_type = requires
{
    record_traits<S>::fields;
};

#define ZARRXT_RECORD_FIELD_(S, m)                                                                           \
    ::zarrxt::member_field<S, decltype(S::m)>                                                                \
    {                                                                                                        \
#m, &S::m                                                                                            \
    }
#define ZARRXT_RECORD_EXPAND_(x) x
#define ZARRXT_RECORD_F1_(S, a) ZARRXT_RECORD_FIELD_(S, a)
#define ZARRXT_RECORD_F2_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F1_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F3_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F2_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F4_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F3_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F5_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F4_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F6_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F5_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F7_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F6_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F8_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F7_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F9_(S, a, ...)                                                                         \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F8_(S, __VA_ARGS__))
#define ZARRXT_RECORD_F10_(S, a, ...)                                                                        \
    ZARRXT_RECORD_FIELD_(S, a), ZARRXT_RECORD_EXPAND_(ZARRXT_RECORD_F9_(S, __VA_ARGS__))
#define ZARRXT_RECORD_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, name, ...) name

/// Describe struct S (in the global namespace or fully qualified) as a record of the listed
/// members, in this order (1 to 10 members; write record_traits<S> by hand for more):
/// `struct point { std::int32_t x; double y; }; ZARRXT_RECORD(point, x, y);` at namespace scope.
#define ZARRXT_RECORD(S, ...)                                                                                \
    template <>                                                                                              \
    struct zarrxt::record_traits<S>                                                                          \
    {                                                                                                        \
        static constexpr auto fields = std::make_tuple(ZARRXT_RECORD_EXPAND_(                                \
            ZARRXT_RECORD_PICK_(__VA_ARGS__, ZARRXT_RECORD_F10_, ZARRXT_RECORD_F9_, ZARRXT_RECORD_F8_,       \
                                ZARRXT_RECORD_F7_, ZARRXT_RECORD_F6_, ZARRXT_RECORD_F5_, ZARRXT_RECORD_F4_,  \
                                ZARRXT_RECORD_F3_, ZARRXT_RECORD_F2_, ZARRXT_RECORD_F1_)(S, __VA_ARGS__)));  \
    }

/// The fields a described struct S stands for, laid out.
template <record_type S>
std::vector<record_field> record_fields_of();

/// Copy the packed native record at `from` into the struct `to`, member by member (the struct's
/// own layout may have padding; the record has none).
template <record_type S>
void unpack_record(const std::byte* from, S& to) noexcept;

/// Pack the struct `from` into the packed native record at `to`.
template <record_type S>
void pack_record(const S& from, std::byte* to) noexcept;

/******************
 * implementation *
 ******************/

namespace detail
{

inline std::size_t layout_fields(std::vector<record_field>& fields, std::size_t base, int depth)
{
    auto refuse = [](const std::string& why)
    { throw metadata_error(metadata_errc::invalid_value, "record data type: " + why); };
    if (fields.empty())
    {
        refuse("a record needs at least one field");
    }
    if (depth > 32)
    {
        refuse("records nested more than 32 deep");
    }
    std::size_t at = base;
    for (std::size_t i = 0; i < fields.size(); ++i)
    {
        record_field& f = fields[i];
        if (f.name.empty())
        {
            refuse("field " + std::to_string(i) + " has no name");
        }
        for (std::size_t k = 0; k < i; ++k)
        {
            if (fields[k].name == f.name)
            {
                refuse("field name \"" + f.name + "\" is used twice");
            }
        }
        if (is_vlen(f.type.id))
        {
            refuse("field \"" + f.name + "\" is of the variable-length type " + std::string(name(f.type.id)) +
                   ", which has no fixed size");
        }
        std::size_t one = 0;
        if (f.type.id == dtype_id::structured)
        {
            one = layout_fields(f.type.fields, 0, depth + 1);
            f.type.fixed_size = one;
        }
        else
        {
            one = f.type.size();
        }
        for (auto e : f.shape)
        {
            if (e == 0)
            {
                refuse("field \"" + f.name + "\" is a subarray with an extent of 0");
            }
        }
        const std::uint64_t bytes = checked_mul(f.count(), one, "record field bytes");
        if (bytes > max_record_bytes || at - base > max_record_bytes - bytes)
        {
            refuse("field \"" + f.name + "\" makes the record larger than " +
                   std::to_string(max_record_bytes) + " bytes");
        }
        f.offset = at - base;
        f.size = static_cast<std::size_t>(bytes);
        at += f.size;
    }
    return at - base;
}

inline void collect_runs(const std::vector<record_field>& fields, std::size_t base,
                         std::vector<swap_run>& out)
{
    for (const auto& f : fields)
    {
        const std::size_t at = base + f.offset;
        if (f.type.id == dtype_id::structured)
        {
            const std::size_t one = f.type.fixed_size;
            for (std::uint64_t k = 0; k < f.count(); ++k)
            {
                collect_runs(f.type.fields, at + static_cast<std::size_t>(k) * one, out);
            }
            continue;
        }
        const std::size_t word = info(f.type.id).word;
        if (word > 1)
        {
            out.push_back({at, word, f.size / word, f.order});
        }
    }
}

} // namespace detail

inline std::size_t layout_record(std::vector<record_field>& fields)
{
    return detail::layout_fields(fields, 0, 0);
}

inline std::vector<swap_run> record_swap_runs(const std::vector<record_field>& fields)
{
    std::vector<swap_run> out;
    detail::collect_runs(fields, 0, out);
    return out;
}

inline void swap_records(std::byte* records, std::uint64_t n, std::size_t size,
                         const std::vector<swap_run>& runs, endian codec_order) noexcept
{
    for (const auto& r : runs)
    {
        if (r.order.value_or(codec_order) == native_endian)
        {
            continue;
        }
        for (std::uint64_t i = 0; i < n; ++i)
        {
            detail::byteswap_in_place(records + i * size + r.offset,
                                      static_cast<std::size_t>(r.count) * r.word, r.word);
        }
    }
}

inline bool same_fields(const std::vector<record_field>& a, const std::vector<record_field>& b) noexcept
{
    if (a.size() != b.size())
    {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
    {
        const auto& x = a[i];
        const auto& y = b[i];
        if (x.name != y.name || x.type.id != y.type.id || x.shape != y.shape ||
            x.type.fixed_size != y.type.fixed_size || (is_time(x.type.id) && !(x.type.unit == y.type.unit)) ||
            (x.type.id == dtype_id::structured && !same_fields(x.type.fields, y.type.fields)))
        {
            return false;
        }
    }
    return true;
}

inline std::string describe_fields(const std::vector<record_field>& fields)
{
    std::string s = "{";
    for (std::size_t i = 0; i < fields.size(); ++i)
    {
        const auto& f = fields[i];
        s += (i ? ", " : "") + f.name + ": ";
        if (f.type.id == dtype_id::structured)
        {
            s += describe_fields(f.type.fields);
        }
        else
        {
            s += std::string(name(f.type.id));
            if (is_time(f.type.id))
            {
                s += "[" + to_string(f.type.unit) + "]";
            }
            else if (is_fixed_string(f.type.id))
            {
                s += "[" + std::to_string(f.type.fixed_size) + " bytes]";
            }
        }
        if (!f.shape.empty())
        {
            s += "[";
            for (std::size_t d = 0; d < f.shape.size(); ++d)
            {
                s += (d ? ", " : "") + std::to_string(f.shape[d]);
            }
            s += "]";
        }
    }
    return s + "}";
}

namespace detail
{

/// The element type (through std::array) and subarray extent of a member type.
template <class M>
struct member_shape
{
    using element = M;
    static constexpr std::size_t extent = 0; // not a subarray
};
template <class T, std::size_t K>
struct member_shape<std::array<T, K>>
{
    using element = T;
    static constexpr std::size_t extent = K;
};

template <class M>
constexpr std::size_t packed_size() noexcept;

/// Bytes of a described struct as a packed record.
template <class S>
constexpr std::size_t packed_record_size() noexcept
{
    return std::apply(
        [](const auto&... f)
        {
            return (std::size_t{0} + ... +
                    packed_size<std::remove_cvref_t<decltype(std::declval<S&>().*(f.member))>>());
        },
        record_traits<S>::fields);
}

/// Bytes of a member of type M in a packed record.
template <class M>
constexpr std::size_t packed_size() noexcept
{
    using E = typename member_shape<M>::element;
    constexpr std::size_t one = []
    {
        if constexpr (record_type<E>)
        {
            return packed_record_size<E>();
        }
        else
        {
            return sizeof(E);
        }
    }();
    return member_shape<M>::extent != 0 ? one * member_shape<M>::extent : one;
}

template <class M>
record_field field_for(std::string_view name)
{
    using E = typename member_shape<M>::element;
    record_field f;
    f.name = std::string(name);
    if constexpr (record_type<E>)
    {
        f.type.id = dtype_id::structured;
        f.type.fields = record_fields_of<E>();
    }
    else
    {
        static_assert(element_type<E>,
                      "zarrxt::record_traits: a member must be an element type (numbers, bool, "
                      "complex, float16, std::chrono time types), a std::array of one, or a "
                      "described struct");
        f.type.id = dtype_of<E>();
        if constexpr (requires { typename dtype_traits<E>::period; })
        {
            static_assert(time_unit_for<E>().has_value(),
                          "zarrxt::record_traits: a time member's period is no numpy unit");
            f.type.unit = *time_unit_for<E>();
        }
    }
    if constexpr (member_shape<M>::extent != 0)
    {
        f.shape = {member_shape<M>::extent};
    }
    return f;
}

template <class M>
void unpack_member(const std::byte* from, M& to) noexcept
{
    using E = typename member_shape<M>::element;
    if constexpr (member_shape<M>::extent != 0)
    {
        std::size_t at = 0;
        for (auto& e : to)
        {
            unpack_member(from + at, e);
            at += packed_size<E>();
        }
    }
    else if constexpr (record_type<E>)
    {
        unpack_record(from, to);
    }
    else
    {
        std::memcpy(&to, from, sizeof(E));
    }
}

template <class M>
void pack_member(const M& from, std::byte* to) noexcept
{
    using E = typename member_shape<M>::element;
    if constexpr (member_shape<M>::extent != 0)
    {
        std::size_t at = 0;
        for (const auto& e : from)
        {
            pack_member(e, to + at);
            at += packed_size<E>();
        }
    }
    else if constexpr (record_type<E>)
    {
        pack_record(from, to);
    }
    else
    {
        std::memcpy(to, &from, sizeof(E));
    }
}

} // namespace detail

template <record_type S>
std::vector<record_field> record_fields_of()
{
    std::vector<record_field> out;
    std::apply(
        [&](const auto&... f)
        {
            (out.push_back(
                 detail::field_for<std::remove_cvref_t<decltype(std::declval<S&>().*(f.member))>>(f.name)),
             ...);
        },
        record_traits<S>::fields);
    layout_record(out);
    return out;
}

template <record_type S>
void unpack_record(const std::byte* from, S& to) noexcept
{
    std::size_t at = 0;
    std::apply(
        [&](const auto&... f)
        {
            ((detail::unpack_member(from + at, to.*(f.member)),
              at += detail::packed_size<std::remove_cvref_t<decltype(to.*(f.member))>>()),
             ...);
        },
        record_traits<S>::fields);
}

template <record_type S>
void pack_record(const S& from, std::byte* to) noexcept
{
    std::size_t at = 0;
    std::apply(
        [&](const auto&... f)
        {
            ((detail::pack_member(from.*(f.member), to + at),
              at += detail::packed_size<std::remove_cvref_t<decltype(from.*(f.member))>>()),
             ...);
        },
        record_traits<S>::fields);
}

} // namespace zarrxt
