/** @file data_type.hpp
 *  The data type of an array as one value: the kind (dtype_id) and what the kind needs besides,
 *  a time unit, an element size of the array's own, a record's fields.
 *
 *  Everything that depends on the type asks this value: the element size the kernels move
 *  (`size()`, a vlen_element for the variable-length kinds), the byte-swap word of the `bytes`
 *  codec, the fields a record's values are swapped by, the parsing and writing of fill values.
 *  The variable-length kinds keep their values out of the kernels: the `vlen-utf8` and `vlen-bytes`
 *  array->bytes codecs turn a chunk of fixed-size vlen_element handles into offsets and bytes
 *  (vlen.hpp), so no kernel has a case per type.
 *
 *  A user data type (user_dtype.hpp) is the kind `user` with its description in `user`; its
 *  element size is `fixed_size`, as a record's is.
 *
 *  A data_type converts to its dtype_id, so code that only needs the kind (`switch`, `name()`,
 *  `is_vlen()`, comparisons with a dtype_id) reads it as before; two data_types compare equal when
 *  every parameter does.
 */
#pragma once

#include "detail/checked.hpp"
#include "detail/endian.hpp"
#include "dtype.hpp"
#include "time_unit.hpp"
#include "user_dtype.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zarrxt
{

struct record_field;

/// A data type as a document states it (see the file comment).
struct data_type
{
    dtype_id id = dtype_id::uint8;
    time_unit unit{};                 ///< datetime64 / timedelta64: the unit of the stored counts
    std::size_t fixed_size = 0;       ///< fixed-width strings and records: bytes per element
    std::vector<record_field> fields; ///< records: the fields, laid out (offsets and sizes set)
    std::shared_ptr<const user_dtype> user; ///< user data types: the registry's description

    data_type() = default;
    /// A kind without parameters (the numeric types, bool, string, bytes): implicit, so that a
    /// dtype_id goes wherever a data_type is asked for.
    /// (Defined below record_field: the constructor's body needs the vector's element complete.)
    data_type(dtype_id kind); // NOLINT(google-explicit-constructor): see above
    data_type(dtype_id kind, time_unit u, std::size_t size, std::vector<record_field> fs);

    /// The kind: implicit, so `switch (m.dtype)` and `name(m.dtype)` read the kind.
    operator dtype_id() const noexcept { return id; } // NOLINT(google-explicit-constructor)

    /// The Zarr v3 name ("int16", "struct", "string", ..., a user type's own).
    std::string_view name() const noexcept { return user ? std::string_view(user->name) : zarrxt::name(id); }
    /// Bytes of one element as the kernels move it (a vlen_element for the variable-length types).
    std::size_t size() const noexcept { return element_size_of(id, fixed_size); }
    /// True for the variable-length types, whose values have no fixed size (vlen.hpp).
    bool variable() const noexcept { return is_vlen(id); }
    /// The unit in which a stored element is byte-swapped (1: never); a record's fields each have
    /// their own (record_swap_runs).
    std::size_t swap_word() const noexcept { return user ? user->word : info(id).word; }

    /// Same kind (the parameters aside). Declared so that `t == dtype_id::x` is not ambiguous
    /// between the two implicit conversions.
    friend bool operator==(const data_type& t, dtype_id kind) noexcept { return t.id == kind; }
    /// Same kind and parameters, fields included.
    friend bool operator==(const data_type& a, const data_type& b);
};

/// One field of a record.
struct record_field
{
    std::string name;
    data_type type;
    std::vector<std::uint64_t> shape; ///< v2 subarray fields: their shape (empty: one value)
    std::optional<endian> order;      ///< v2: the byte order the field's type string states
    std::size_t offset = 0;           ///< bytes from the start of the record (set by layout_record)
    std::size_t size = 0;             ///< bytes of the field, subarray included (set by layout_record)

    /// Values in the field (the subarray's element count; 1 for a plain field).
    std::uint64_t count() const
    {
        return shape.empty() ? 1 : detail::checked_product(shape, "record field elements");
    }

    friend bool operator==(const record_field&, const record_field&) = default;
};

/// The name of a data type as documents and messages give it (a user type's own name; the kind's
/// for every other). Chosen over name(dtype_id) for a data_type argument.
inline std::string_view name(const data_type& t) noexcept
{
    return t.name();
}

inline data_type::data_type(dtype_id kind)
    : id(kind)
{
}

inline data_type::data_type(dtype_id kind, time_unit u, std::size_t size, std::vector<record_field> fs)
    : id(kind)
    , unit(u)
    , fixed_size(size)
    , fields(std::move(fs))
{
}

inline bool operator==(const data_type& a, const data_type& b)
{
    const bool same_user =
        a.user == b.user ||
        (a.user && b.user && a.user->name == b.user->name && a.user->size == b.user->size &&
         a.user->word == b.user->word && a.user->configuration == b.user->configuration);
    return a.id == b.id && a.unit == b.unit && a.fixed_size == b.fixed_size && a.fields == b.fields &&
           same_user;
}

} // namespace zarrxt
