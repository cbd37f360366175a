/** @file time_unit.hpp
 *  The unit of numpy's datetime64 / timedelta64 data types ("[10s]" = a base unit and a count), and
 *  its mapping onto std::chrono periods.
 *
 *  Stored values are signed 64-bit counts of the unit since 1970-01-01T00:00:00 (datetimes, no leap
 *  seconds, like std::chrono::sys_time) or of elapsed time (timedeltas); -2^63 is NaT ("not a time").
 *  Y and M are calendar units with no fixed length: they match each other only by name and count, and
 *  no std::chrono time point maps onto them (a sys_time<years> counts 365.2425-day years, not calendar
 *  years), so such arrays are read as raw int64 counts or as chrono::years / chrono::months durations.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <ratio>
#include <string>
#include <string_view>
#include <type_traits>

namespace zarrxt
{

/// The value numpy uses for "not a time" in both datetime64 and timedelta64.
inline constexpr std::int64_t nat = std::numeric_limits<std::int64_t>::min();

enum class time_base : std::uint8_t
{
    Y,
    M,
    W,
    D,
    h,
    m,
    s,
    ms,
    us,
    ns,
    ps,
    fs,
    as,
};

/// numpy's unit of a datetime64 / timedelta64: `count` x `base` ("[10s]" is {s, 10}).
struct time_unit
{
    time_base base = time_base::s;
    std::int64_t count = 1;

    friend constexpr bool operator==(const time_unit&, const time_unit&) = default;
};

/// The largest count numpy and zarr-python 3 accept (a C int).
inline constexpr std::int64_t max_time_unit_count = 2147483647;

namespace detail
{

/// Wide enough for a count times any unit's length in attoseconds, so unit arithmetic never overflows.
using wide_int = __int128;

struct time_base_row
{
    time_base base;
    std::string_view name;
    // Length in seconds as num/den; 0/1 for the calendar units Y and M.
    std::int64_t num;
    std::int64_t den;
};

inline constexpr time_base_row time_base_table[] = {
    {time_base::Y, "Y", 0, 1},
    {time_base::M, "M", 0, 1},
    {time_base::W, "W", 604800, 1},
    {time_base::D, "D", 86400, 1},
    {time_base::h, "h", 3600, 1},
    {time_base::m, "m", 60, 1},
    {time_base::s, "s", 1, 1},
    {time_base::ms, "ms", 1, 1000},
    {time_base::us, "us", 1, 1000000},
    {time_base::ns, "ns", 1, 1000000000},
    {time_base::ps, "ps", 1, 1000000000000},
    {time_base::fs, "fs", 1, 1000000000000000},
    {time_base::as, "as", 1, 1000000000000000000},
};

constexpr const time_base_row& row_of(time_base b) noexcept
{
    return time_base_table[static_cast<std::size_t>(b)];
}

} // namespace detail

constexpr std::string_view name(time_base b) noexcept
{
    return detail::row_of(b).name;
}

/// numpy's spelling of a unit: "ns", "10s".
inline std::string to_string(const time_unit& u)
{
    std::string s = u.count == 1 ? std::string() : std::to_string(u.count);
    s += name(u.base);
    return s;
}

/// Parse numpy's spelling of a unit ("ns", "10s", "μs"); nullopt for anything else, including
/// "generic", a zero or negative count, or a count above max_time_unit_count.
constexpr std::optional<time_unit> parse_time_unit(std::string_view s) noexcept
{
    std::int64_t count = 0;
    std::size_t i = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
    {
        count = count * 10 + (s[i] - '0');
        if (count > max_time_unit_count)
        {
            return std::nullopt;
        }
        ++i;
    }
    if (i == 0)
    {
        count = 1;
    }
    else if (count == 0)
    {
        return std::nullopt;
    }
    std::string_view base = s.substr(i);
    if (base == "\xce\xbcs") // numpy also accepts the micro sign
    {
        base = "us";
    }
    for (const auto& r : detail::time_base_table)
    {
        if (r.name == base)
        {
            return time_unit{r.base, count};
        }
    }
    return std::nullopt;
}

/// True when two units have the same length (so the same counts mean the same times): {m, 1} and
/// {s, 60} do; the calendar units only match the same calendar unit and count.
constexpr bool same_length(const time_unit& a, const time_unit& b) noexcept
{
    const auto& ra = detail::row_of(a.base);
    const auto& rb = detail::row_of(b.base);
    if (ra.num == 0 || rb.num == 0)
    {
        return a == b;
    }
    // a.count * ra.num / ra.den == b.count * rb.num / rb.den, cross-multiplied without overflow.
    return static_cast<detail::wide_int>(a.count) * ra.num * rb.den ==
           static_cast<detail::wide_int>(b.count) * rb.num * ra.den;
}

/// The numpy unit of a std::chrono period: the coarsest base unit that divides it into a whole
/// count (ratio<60> is "m", ratio<10> is "10s", chrono::years "Y", chrono::months "M"); nullopt
/// when none does (ratio<1, 3>) or the count exceeds max_time_unit_count.
template <class Period>
constexpr std::optional<time_unit> time_unit_of() noexcept
{
    if constexpr (std::is_same_v<typename Period::type, typename std::chrono::years::period::type>)
    {
        return time_unit{time_base::Y, 1};
    }
    else if constexpr (std::is_same_v<typename Period::type, typename std::chrono::months::period::type>)
    {
        return time_unit{time_base::M, 1};
    }
    else
    {
        for (const auto& r : detail::time_base_table)
        {
            if (r.num == 0)
            {
                continue;
            }
            // count = (Period::num / Period::den) / (r.num / r.den)
            const detail::wide_int n = static_cast<detail::wide_int>(Period::num) * r.den;
            const detail::wide_int d = static_cast<detail::wide_int>(Period::den) * r.num;
            if (n % d == 0 && n / d >= 1 && n / d <= max_time_unit_count)
            {
                return time_unit{r.base, static_cast<std::int64_t>(n / d)};
            }
        }
        return std::nullopt;
    }
}

} // namespace zarrxt
