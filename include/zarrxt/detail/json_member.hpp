/** @file detail/json_member.hpp
 *  Typed access to the members of a JSON object (metadata documents and codec configurations):
 *  every error is a metadata_error naming the member and saying what was expected and found.
 *  It lives in detail/, not metadata/, because codecs parse their configurations with it and
 *  codecs must not depend on metadata/.
 */
#pragma once

#include "../error.hpp"
#include "json.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

namespace detail
{

[[noreturn]] inline void throw_member(metadata_errc code, std::string_view member, const std::string& msg)
{
    throw metadata_error(code, "\"" + std::string(member) + "\" " + msg);
}

inline const json& require_member(const json& obj, std::string_view member)
{
    auto it = obj.find(member);
    if (it == obj.end())
    {
        throw_member(metadata_errc::missing_member, member, "is required");
    }
    return *it;
}

inline std::string type_name(const json& j)
{
    return j.type_name();
}

inline const std::string& as_string(const json& j, std::string_view member)
{
    if (!j.is_string())
    {
        throw_member(metadata_errc::wrong_type, member, "must be a string, got " + type_name(j));
    }
    return j.get_ref<const std::string&>();
}

/// A JSON integer that is >= 0 (nlohmann stores non-negative integers built in C++ as signed).
inline bool is_nonnegative_integer(const json& j) noexcept
{
    return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}

inline std::uint64_t as_uint(const json& j, std::string_view member)
{
    if (is_nonnegative_integer(j))
    {
        return j.is_number_unsigned() ? j.get<std::uint64_t>()
                                      : static_cast<std::uint64_t>(j.get<std::int64_t>());
    }
    if (j.is_number_integer())
    {
        throw_member(metadata_errc::invalid_value, member, "must not be negative, got " + j.dump());
    }
    throw_member(metadata_errc::wrong_type, member, "must be a non-negative integer, got " + j.dump());
}

inline std::int64_t as_int(const json& j, std::string_view member)
{
    if (j.is_number_unsigned())
    {
        const auto v = j.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(INT64_MAX))
        {
            throw_member(metadata_errc::invalid_value, member, "is out of range: " + j.dump());
        }
        return static_cast<std::int64_t>(v);
    }
    if (j.is_number_integer())
    {
        return j.get<std::int64_t>();
    }
    throw_member(metadata_errc::wrong_type, member, "must be an integer, got " + j.dump());
}

inline bool as_bool(const json& j, std::string_view member)
{
    if (!j.is_boolean())
    {
        throw_member(metadata_errc::wrong_type, member, "must be true or false, got " + j.dump());
    }
    return j.get<bool>();
}

inline const json& as_object(const json& j, std::string_view member)
{
    if (!j.is_object())
    {
        throw_member(metadata_errc::wrong_type, member, "must be an object, got " + type_name(j));
    }
    return j;
}

inline const json& as_array(const json& j, std::string_view member)
{
    if (!j.is_array())
    {
        throw_member(metadata_errc::wrong_type, member, "must be an array, got " + type_name(j));
    }
    return j;
}

/// A list of non-negative integers (a shape); each below 2^63 so signed arithmetic stays exact.
inline std::vector<std::uint64_t> as_extents(const json& j, std::string_view member)
{
    as_array(j, member);
    std::vector<std::uint64_t> out;
    out.reserve(j.size());
    for (const auto& e : j)
    {
        const auto v = as_uint(e, member);
        if (v > static_cast<std::uint64_t>(INT64_MAX))
        {
            throw_member(metadata_errc::invalid_value, member, "has an extent above 2^63-1: " + e.dump());
        }
        out.push_back(v);
    }
    return out;
}

} // namespace detail
} // namespace zarrxt
