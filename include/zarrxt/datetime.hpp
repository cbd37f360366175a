/** @file datetime.hpp
 *  Text of datetime64 and timedelta64 values: ISO 8601, as numpy prints datetimes
 *  ("2020-02-29T12:00:00.000", precision of the stored unit) and as ISO durations for timedeltas
 *  ("PT1.500S", "-P3D"). Exact over the whole int64 range and every unit (no double, no
 *  std::chrono clock arithmetic that could overflow); NaT prints as "NaT".
 */
#pragma once

#include "time_unit.hpp"

#include <cstdint>
#include <string>

namespace zarrxt
{

namespace detail
{

inline std::string wide_to_string(wide_int v)
{
    if (v == 0)
    {
        return "0";
    }
    const bool negative = v < 0;
    std::string digits;
    while (v != 0)
    {
        const int d = static_cast<int>(v % 10);
        digits.insert(digits.begin(), static_cast<char>('0' + (d < 0 ? -d : d)));
        v /= 10;
    }
    return negative ? "-" + digits : digits;
}

/// `v` with at least `width` digits (zero-padded); `v` >= 0.
inline std::string padded(wide_int v, std::size_t width)
{
    std::string s = wide_to_string(v);
    return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

/// numpy's year: four digits at least, negative years as "-" and three digits at least ("-001").
inline std::string year_text(wide_int year)
{
    return year < 0 ? "-" + padded(-year, 3) : padded(year, 4);
}

constexpr wide_int floor_div(wide_int a, wide_int b) noexcept
{
    const wide_int q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct civil_date
{
    wide_int year;
    int month; // 1..12
    int day;   // 1..31
};

/// The proleptic Gregorian date `days` after 1970-01-01: counted in 400-year eras of 146097 days,
/// each starting on a 1 March so that the leap day is the last day of its year.
constexpr civil_date civil_from_days(wide_int days) noexcept
{
    const wide_int shifted = days + 719468; // days from 0000-03-01 to 1970-01-01
    const wide_int era = floor_div(shifted, 146097);
    const wide_int day_of_era = shifted - era * 146097; // 0..146096
    const wide_int year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365; // 0..399
    const wide_int day_of_year =
        day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // 0..365
    const wide_int march_month = (5 * day_of_year + 2) / 153;                   // 0 = March .. 11 = February
    const int day = static_cast<int>(day_of_year - (153 * march_month + 2) / 5 + 1);
    const int month = static_cast<int>(march_month < 10 ? march_month + 3 : march_month - 9);
    const wide_int year = year_of_era + era * 400 + (month <= 2 ? 1 : 0);
    return {year, month, day};
}

inline std::string date_text(wide_int days)
{
    const civil_date d = civil_from_days(days);
    return year_text(d.year) + "-" + padded(d.month, 2) + "-" + padded(d.day, 2);
}

/// Digits after the decimal point of a unit: those of its denominator, a power of ten (ms: 3 ...
/// as: 18; 0 for a second and longer).
constexpr std::size_t fraction_digits(time_base b) noexcept
{
    std::size_t digits = 0;
    for (std::int64_t den = row_of(b).den; den > 1; den /= 10)
    {
        ++digits;
    }
    return digits;
}

} // namespace detail

/// A datetime64 count as numpy prints it: "1970-01-01T00:00:00" for unit s, "2020-02" for M,
/// "-001" for year -1 in unit Y, "NaT" for nat.
inline std::string format_datetime(std::int64_t count, const time_unit& u)
{
    using detail::wide_int;
    if (count == nat)
    {
        return "NaT";
    }
    const wide_int v = static_cast<wide_int>(count) * u.count;
    switch (u.base)
    {
        case time_base::Y:
            return detail::year_text(1970 + v);
        case time_base::M:
        {
            const wide_int years = detail::floor_div(v, 12);
            return detail::year_text(1970 + years) + "-" + detail::padded(v - years * 12 + 1, 2);
        }
        case time_base::W:
            return detail::date_text(v * 7);
        case time_base::D:
            return detail::date_text(v);
        default:
            break;
    }
    const auto& row = detail::row_of(u.base);
    const wide_int per_day = static_cast<wide_int>(86400) * row.den / row.num;
    const wide_int days = detail::floor_div(v, per_day);
    const wide_int in_day = v - days * per_day;
    std::string s = detail::date_text(days) + "T";
    if (u.base == time_base::h)
    {
        return s + detail::padded(in_day, 2);
    }
    if (u.base == time_base::m)
    {
        return s + detail::padded(in_day / 60, 2) + ":" + detail::padded(in_day % 60, 2);
    }
    const wide_int seconds = in_day / row.den;
    s += detail::padded(seconds / 3600, 2) + ":" + detail::padded(seconds / 60 % 60, 2) + ":" +
         detail::padded(seconds % 60, 2);
    if (const std::size_t digits = detail::fraction_digits(u.base); digits > 0)
    {
        s += "." + detail::padded(in_day % row.den, digits);
    }
    return s;
}

/// A timedelta64 count as an ISO 8601 duration: "PT42S", "-P3D", "PT1.500S" (ms), "P2M"; "NaT".
inline std::string format_timedelta(std::int64_t count, const time_unit& u)
{
    using detail::wide_int;
    if (count == nat)
    {
        return "NaT";
    }
    wide_int v = static_cast<wide_int>(count) * u.count;
    std::string s = v < 0 ? "-P" : "P";
    if (v < 0)
    {
        v = -v;
    }
    switch (u.base)
    {
        case time_base::Y:
            return s + detail::wide_to_string(v) + "Y";
        case time_base::M:
            return s + detail::wide_to_string(v) + "M";
        case time_base::W:
            return s + detail::wide_to_string(v) + "W";
        case time_base::D:
            return s + detail::wide_to_string(v) + "D";
        case time_base::h:
            return s + "T" + detail::wide_to_string(v) + "H";
        case time_base::m:
            return s + "T" + detail::wide_to_string(v) + "M";
        default:
            break;
    }
    const wide_int den = detail::row_of(u.base).den;
    s += "T" + detail::wide_to_string(v / den);
    if (const std::size_t digits = detail::fraction_digits(u.base); digits > 0)
    {
        s += "." + detail::padded(v % den, digits);
    }
    return s + "S";
}

} // namespace zarrxt
