/** @file metadata/rectilinear.hpp
 *  The `rectilinear` chunk grid of zarr-extensions (chunk-grids/rectilinear): along each axis the
 *  chunks have their own edge lengths, given as an integer (a regular axis: that length repeated),
 *  or as a list of lengths and `[length, count]` runs.
 *
 *  An axis is kept as its runs, never expanded: `[[1, 1000000000]]` is one run, so a document of a
 *  few bytes cannot make the reader allocate per chunk. Lookups are binary searches over the runs.
 *  The grid does not depend on the array's shape (an integer axis is unbounded), so a resize keeps
 *  it; only a shape beyond the listed edges needs more of them (`extend_to`).
 */
#pragma once

#include "../detail/checked.hpp"
#include "../detail/json.hpp"
#include "../detail/json_member.hpp"
#include "../error.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace zarrxt
{

class rectilinear_grid
{
public:
    /// `count` chunks of `edge` elements each, the first at chunk index `first` and element `start`.
    struct run
    {
        std::uint64_t edge = 0;
        std::uint64_t count = 0;
        std::uint64_t first = 0;
        std::uint64_t start = 0;
    };

    /// One axis: a regular step (`step` > 0, the integer form), or runs (step 0).
    struct axis
    {
        std::uint64_t step = 0;
        std::vector<run> runs;
    };

    rectilinear_grid() = default;

    /// From the explicit edge lengths of every axis (create): adjacent equal lengths become runs.
    static rectilinear_grid from_edges(const std::vector<std::vector<std::uint64_t>>& edges)
    {
        rectilinear_grid g;
        for (std::size_t d = 0; d < edges.size(); ++d)
        {
            axis a;
            for (const std::uint64_t e : edges[d])
            {
                add(a, e, 1, "chunk_grid.configuration.chunk_shapes");
            }
            g.m_axes.push_back(std::move(a));
        }
        return g;
    }

    /// From a `chunk_shapes` member (metadata error 3 for a wrong type, 4 for a zero or too large
    /// length or a sum of lengths beyond 2^63-1).
    static rectilinear_grid from_json(const json& chunk_shapes)
    {
        static constexpr std::string_view member = "chunk_grid.configuration.chunk_shapes";
        detail::as_array(chunk_shapes, member);
        rectilinear_grid g;
        for (const json& j : chunk_shapes)
        {
            axis a;
            if (j.is_number())
            {
                a.step = checked_edge(detail::as_uint(j, member));
            }
            else if (j.is_array())
            {
                for (const json& e : j)
                {
                    if (e.is_array())
                    {
                        if (e.size() != 2)
                        {
                            detail::throw_member(metadata_errc::invalid_value, member,
                                                 "has a run that is not [length, count]: " + e.dump());
                        }
                        add(a, detail::as_uint(e[0], member), detail::as_uint(e[1], member), member);
                    }
                    else
                    {
                        add(a, detail::as_uint(e, member), 1, member);
                    }
                }
            }
            else
            {
                detail::throw_member(metadata_errc::wrong_type, member,
                                     "entries must be integers or lists, got " + detail::type_name(j));
            }
            g.m_axes.push_back(std::move(a));
        }
        return g;
    }

    /// The `chunk_shapes` member: an integer for a regular axis, else runs of more than one chunk
    /// as `[length, count]` and single chunks as their length.
    json to_json() const
    {
        json out = json::array();
        for (const axis& a : m_axes)
        {
            if (a.step != 0)
            {
                out.push_back(a.step);
                continue;
            }
            json list = json::array();
            for (const run& r : a.runs)
            {
                if (r.count == 1)
                {
                    list.push_back(r.edge);
                }
                else
                {
                    list.push_back(json::array({r.edge, r.count}));
                }
            }
            out.push_back(std::move(list));
        }
        return out;
    }

    std::size_t rank() const noexcept { return m_axes.size(); }
    const axis& axis_at(std::size_t d) const noexcept { return m_axes[d]; }

    /// Elements the listed chunks of axis d cover (unbounded for a regular axis).
    std::uint64_t covered(std::size_t d) const noexcept
    {
        const axis& a = m_axes[d];
        if (a.step != 0)
        {
            return std::numeric_limits<std::uint64_t>::max();
        }
        return a.runs.empty() ? 0 : a.runs.back().start + a.runs.back().edge * a.runs.back().count;
    }

    /// The chunk along axis d holding element i (i < covered(d)).
    std::uint64_t index(std::size_t d, std::uint64_t i) const noexcept
    {
        const axis& a = m_axes[d];
        if (a.step != 0)
        {
            return i / a.step;
        }
        if (a.runs.empty())
        {
            return 0; // an empty list, allowed on an axis of length 0: no element to look up
        }
        const auto it = std::upper_bound(a.runs.begin(), a.runs.end(), i,
                                         [](std::uint64_t v, const run& r) { return v < r.start; });
        const run& r = *(it - 1);
        return r.first + (i - r.start) / r.edge;
    }

    /// The first element of chunk c along axis d.
    std::uint64_t start(std::size_t d, std::uint64_t c) const noexcept
    {
        const axis& a = m_axes[d];
        if (a.step != 0)
        {
            return c * a.step;
        }
        if (a.runs.empty())
        {
            return 0;
        }
        const run& r = run_of(a, c);
        return r.start + (c - r.first) * r.edge;
    }

    /// The edge length of chunk c along axis d.
    std::uint64_t edge(std::size_t d, std::uint64_t c) const noexcept
    {
        const axis& a = m_axes[d];
        if (a.step != 0)
        {
            return a.step;
        }
        return a.runs.empty() ? 1 : run_of(a, c).edge;
    }

    /// The chunks along axis d that hold elements of an axis of `length`.
    std::uint64_t chunks_for(std::size_t d, std::uint64_t length) const noexcept
    {
        return length == 0 ? 0 : index(d, length - 1) + 1;
    }

    /// The longest edge among the chunks that hold elements of an axis of `length` (the first
    /// chunk's when none does): what a buffer for any chunk of the array must hold.
    std::uint64_t max_edge(std::size_t d, std::uint64_t length) const noexcept
    {
        const axis& a = m_axes[d];
        if (a.step != 0)
        {
            return a.step;
        }
        if (a.runs.empty())
        {
            return 1;
        }
        const std::uint64_t n = std::max<std::uint64_t>(1, chunks_for(d, length));
        std::uint64_t m = 0;
        for (const run& r : a.runs)
        {
            if (r.first >= n)
            {
                break;
            }
            m = std::max(m, r.edge);
        }
        return m;
    }

    /// Add chunks of the last edge length to every axis whose chunks end before `shape` does (a
    /// resize that grows the array past the listed edges keeps every existing chunk).
    void extend_to(const std::vector<std::uint64_t>& shape)
    {
        for (std::size_t d = 0; d < m_axes.size() && d < shape.size(); ++d)
        {
            axis& a = m_axes[d];
            const std::uint64_t have = covered(d);
            if (a.step != 0 || have >= shape[d] || a.runs.empty())
            {
                continue;
            }
            const std::uint64_t e = a.runs.back().edge;
            const std::uint64_t missing = shape[d] - have;
            add(a, e, missing / e + (missing % e != 0 ? 1 : 0), "chunk_grid.configuration.chunk_shapes");
        }
    }

private:
    std::vector<axis> m_axes;

    static std::uint64_t checked_edge(std::uint64_t e)
    {
        if (e == 0 || e > static_cast<std::uint64_t>(INT64_MAX))
        {
            detail::throw_member(metadata_errc::invalid_value, "chunk_grid.configuration.chunk_shapes",
                                 "has a chunk edge length of " + std::to_string(e) +
                                     " (each must be at least 1 and below 2^63)");
        }
        return e;
    }

    /// Append `count` chunks of `edge` (merged with the last run when it has the same edge).
    static void add(axis& a, std::uint64_t edge, std::uint64_t count, std::string_view member)
    {
        checked_edge(edge);
        if (count == 0)
        {
            return; // a run of no chunks adds nothing
        }
        const std::uint64_t first = a.runs.empty() ? 0 : a.runs.back().first + a.runs.back().count;
        const std::uint64_t start =
            a.runs.empty() ? 0 : a.runs.back().start + a.runs.back().edge * a.runs.back().count;
        const std::uint64_t end =
            detail::checked_add(start, detail::checked_mul(edge, count, member), member);
        detail::checked_add(first, count, member);
        if (end > static_cast<std::uint64_t>(INT64_MAX))
        {
            detail::throw_member(metadata_errc::invalid_value, member,
                                 "has edge lengths that sum beyond 2^63-1");
        }
        if (!a.runs.empty() && a.runs.back().edge == edge)
        {
            a.runs.back().count += count;
            return;
        }
        a.runs.push_back({edge, count, first, start});
    }

    static const run& run_of(const axis& a, std::uint64_t c) noexcept
    {
        const auto it = std::upper_bound(a.runs.begin(), a.runs.end(), c,
                                         [](std::uint64_t v, const run& r) { return v < r.first; });
        return *(it - 1);
    }
};

} // namespace zarrxt
