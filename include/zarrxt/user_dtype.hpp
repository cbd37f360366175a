/** @file user_dtype.hpp
 *  User data types: a Zarr v3 data type zarrxt does not know, described by the program that reads
 *  or writes it and passed in a codec_registry (codec/codec_registry.hpp, `reg.add_dtype<T>()`).
 *
 *  A user type is a fixed-size block of bytes to zarrxt: the kernels move it, the `bytes` codec
 *  byte-swaps it in words of the size the type states, the compressors see its bytes. What zarrxt
 *  cannot know is what its fill value means, so the description carries the two conversions between
 *  the JSON fill value and an element's bytes. The C++ element type says all of it in its
 *  `dtype_traits` specialisation (docs/concepts/dtype.md):
 *
 *      template <> struct zarrxt::dtype_traits<rgb8>
 *      {
 *          static constexpr zarrxt::dtype_id id = zarrxt::dtype_id::user;
 *          static constexpr std::string_view name = "example.rgb8";
 *          static rgb8 fill_from_json(const zarrxt::json& j); // throw to refuse a value
 *          static zarrxt::json fill_to_json(const rgb8& v);
 *          // optional: static constexpr std::size_t swap_word = 2; (default 1: never swapped)
 *          // optional: static zarrxt::json configuration(); (written; read documents must equal it)
 *      };
 *
 *  There is no global table: a document naming the type opens only through a registry that holds
 *  it (or as `array<rgb8, N>`, which adds its own element type).
 */
#pragma once

#include "detail/json.hpp"
#include "dtype.hpp"

#include <concepts>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace zarrxt
{

/// A user data type as a registry holds it: what untyped code needs (see the file comment).
struct user_dtype
{
    std::string name;             ///< the v3 `data_type` name
    std::size_t size = 0;         ///< bytes per element
    std::size_t word = 1;         ///< the unit the `bytes` codec byte-swaps (1: never)
    json configuration = nullptr; ///< written as the data type's "configuration" unless null
    /// The fill value's bytes (`size` of them, native order) from its JSON form; throws to refuse.
    void (*fill_from_json)(const json& j, std::byte* out) = nullptr;
    /// The JSON form of a fill value from its bytes.
    json (*fill_to_json)(const std::byte* in) = nullptr;
};

/// The user data types of one registry, looked up by name.
struct user_dtype_set
{
    std::vector<std::shared_ptr<const user_dtype>> entries;

    const std::shared_ptr<const user_dtype>* find(std::string_view name) const noexcept
    {
        for (const auto& e : entries)
        {
            if (e->name == name)
            {
                return &e;
            }
        }
        return nullptr;
    }
};

/// A C++ element type standing for a user data type (its dtype_traits says so; file comment).
template <class T>
concept user_element_type = requires(const json& j, const T& v)
{
    requires dtype_traits<T>::id == dtype_id::user;
    {
        dtype_traits<T>::name
        } -> std::convertible_to<std::string_view>;
    {
        dtype_traits<T>::fill_from_json(j)
        } -> std::same_as<T>;
    {
        dtype_traits<T>::fill_to_json(v)
        } -> std::convertible_to<json>;
}
&&std::is_trivially_copyable_v<T>;

/// The byte-swap unit a user element type states (1 when it states none).
template <class T>
constexpr std::size_t user_swap_word() noexcept
{
    if constexpr (requires { dtype_traits<T>::swap_word; })
    {
        return dtype_traits<T>::swap_word;
    }
    else
    {
        return 1;
    }
}

/// The registry's description of user element type T.
template <user_element_type T>
std::shared_ptr<const user_dtype> make_user_dtype()
{
    constexpr std::size_t word = user_swap_word<T>();
    static_assert(word == 1 || word == 2 || word == 4 || word == 8,
                  "dtype_traits<T>::swap_word must be 1, 2, 4 or 8");
    static_assert(sizeof(T) % word == 0, "sizeof(T) must be a whole number of swap words");
    auto d = std::make_shared<user_dtype>();
    d->name = std::string(dtype_traits<T>::name);
    d->size = sizeof(T);
    d->word = word;
    if constexpr (requires { dtype_traits<T>::configuration(); })
    {
        d->configuration = dtype_traits<T>::configuration();
    }
    d->fill_from_json = [](const json& j, std::byte* out)
    {
        const T v = dtype_traits<T>::fill_from_json(j);
        std::memcpy(out, &v, sizeof(T));
    };
    d->fill_to_json = [](const std::byte* in) -> json
    {
        T v;
        std::memcpy(&v, in, sizeof(T));
        return dtype_traits<T>::fill_to_json(v);
    };
    return d;
}

} // namespace zarrxt
