/** @file selection.hpp
 *  Selections like `xt::view`: one slice per axis, as xtensor users write them, turned into a
 *  plan of box reads and writes.
 *
 *  A slice is `xt::range(start, stop[, step])` (with `xt::placeholders::_` ends, negative steps
 *  too), `xt::all()`, an integer (the axis is dropped from the result; negative counts from the
 *  end), `xt::keep(i, j, ...)` / `xt::drop(i, j, ...)`, a `std::vector` of indices (orthogonal
 *  selection), or a `std::vector<bool>` mask of the axis' length. `zarrxt::select(s...)` bundles
 *  them; `array::read(s...)` and `array::write(select(s...), e)` take them (array.hpp).
 *
 *  Every axis becomes a list of (result position, array index) picks. Along each axis the picks
 *  are grouped by the array's read unit (the inner chunk of a sharded array, else the chunk):
 *  picks in a run of touched units form one group when they are dense enough (at least a quarter
 *  of the indices the group spans), else each unit is a group of its own. The plan is the product
 *  of the groups: one box read per cell, through the ordinary read path (so only the chunks, and
 *  for uncompressed and sharded data only the byte ranges, of that box are fetched), then a gather
 *  of the picks. A sparse selection reads the boxes around its picks, never the array's bounding
 *  box; a dense one (a step of 2 over everything) is one parallel read.
 */
#pragma once

#include "detail/xtensor.hpp" // xt::range, xt::keep, ... (xslice)
#include "error.hpp"

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace zarrxt
{

namespace detail
{

template <class S>
struct is_range_adaptor : std::false_type
{
};
template <class A, class B, class C>
struct is_range_adaptor<xt::xrange_adaptor<A, B, C>> : std::true_type
{
};
template <class S>
struct is_keep_or_drop : std::false_type
{
};
template <class T>
struct is_keep_or_drop<xt::xkeep_slice<T>> : std::true_type
{
};
template <class T>
struct is_keep_or_drop<xt::xdrop_slice<T>> : std::true_type
{
};
template <class S>
struct is_concrete_range : std::false_type
{
};
template <class T>
struct is_concrete_range<xt::xrange<T>> : std::true_type
{
};
template <class T>
struct is_concrete_range<xt::xstepped_range<T>> : std::true_type
{
};
template <class S>
struct is_index_vector : std::false_type
{
};
template <class T, class A>
struct is_index_vector<std::vector<T, A>>
    : std::bool_constant<std::is_integral_v<T> && !std::is_same_v<T, bool>>
{
};
template <class S>
struct is_mask : std::false_type
{
};
template <class A>
struct is_mask<std::vector<bool, A>> : std::true_type
{
};

} // namespace detail

/// One axis' slice of a selection (see the file comment).
template <class S>
concept selection_slice = std::is_integral_v<std::decay_t<S>> ||
    std::is_same_v<std::decay_t<S>, xt::xall_tag> || detail::is_range_adaptor<std::decay_t<S>>::value ||
    detail::is_keep_or_drop<std::decay_t<S>>::value || detail::is_concrete_range<std::decay_t<S>>::value ||
    detail::is_index_vector<std::decay_t<S>>::value || detail::is_mask<std::decay_t<S>>::value;

/// Slices bundled for write(select(...), e) (and read).
template <class... S>
struct selection
{
    std::tuple<S...> slices;
};

template <selection_slice... S>
selection<std::decay_t<S>...> select(S&&... s)
{
    return {std::tuple<std::decay_t<S>...>(std::forward<S>(s)...)};
}

/// How many axes a selection keeps: every slice but an integer.
template <class... S>
inline constexpr std::size_t kept_axes = (std::size_t{0} + ... +
                                          (std::is_integral_v<std::decay_t<S>> ? 0 : 1));

namespace detail
{

/// The array indices one slice picks along an axis of `size`, in the order of the result.
/// An index outside the axis is array.3; a mask of another length is array.4.
template <class S>
std::vector<std::uint64_t> slice_indices(const S& s, std::uint64_t size, std::size_t axis)
{
    using D = std::decay_t<S>;
    std::vector<std::uint64_t> out;
    // The message prints the index as the caller gave it (any integer type, full range).
    auto outside = [&](auto i)
    {
        throw array_error(array_errc::out_of_bounds, "index " + std::to_string(i) + " is outside axis " +
                                                         std::to_string(axis) + " of extent " +
                                                         std::to_string(size));
    };
    auto push_checked = [&](auto i)
    {
        if constexpr (std::is_signed_v<decltype(i)>)
        {
            if (i < 0)
            {
                outside(i);
            }
        }
        if (static_cast<std::uint64_t>(i) >= size)
        {
            outside(i);
        }
        out.push_back(static_cast<std::uint64_t>(i));
    };
    if constexpr (std::is_integral_v<D>)
    {
        if constexpr (std::is_signed_v<D>)
        {
            if (s < 0)
            {
                // Counted from the end, as numpy and xtensor do: -1 is the last index.
                const std::uint64_t back = static_cast<std::uint64_t>(-(s + 1)) + 1;
                if (back > size)
                {
                    outside(s);
                }
                out.push_back(size - back);
                return out;
            }
        }
        push_checked(s);
    }
    else if constexpr (std::is_same_v<D, xt::xall_tag>)
    {
        out.resize(static_cast<std::size_t>(size));
        for (std::uint64_t i = 0; i < size; ++i)
        {
            out[static_cast<std::size_t>(i)] = i;
        }
    }
    else if constexpr (is_range_adaptor<D>::value)
    {
        // xtensor clamps the ends to the axis, as numpy does.
        return slice_indices(s.get(static_cast<std::size_t>(size)), size, axis);
    }
    else if constexpr (is_concrete_range<D>::value)
    {
        // An empty range (stop before start) may report a negative size.
        const auto signed_size = static_cast<std::ptrdiff_t>(s.size());
        const std::size_t n = signed_size > 0 ? static_cast<std::size_t>(signed_size) : 0;
        out.reserve(n);
        for (std::size_t k = 0; k < n; ++k)
        {
            push_checked(s(k));
        }
    }
    else if constexpr (is_keep_or_drop<D>::value)
    {
        // xt::keep's own normalize does not check its indices (xt::drop's yields only valid ones):
        // every index is checked here.
        D k = s;
        k.normalize(static_cast<std::size_t>(size));
        const std::size_t n = static_cast<std::size_t>(k.size());
        for (std::size_t j = 0; j < n; ++j)
        {
            push_checked(k(j));
        }
    }
    else if constexpr (is_index_vector<D>::value)
    {
        out.reserve(s.size());
        for (const auto v : s)
        {
            out.push_back(slice_indices(v, size, axis).front());
        }
    }
    else
    {
        static_assert(is_mask<D>::value);
        if (s.size() != size)
        {
            throw array_error(array_errc::shape_mismatch, "a mask of length " + std::to_string(s.size()) +
                                                              " for axis " + std::to_string(axis) +
                                                              " of extent " + std::to_string(size));
        }
        for (std::size_t i = 0; i < s.size(); ++i)
        {
            if (s[i])
            {
                out.push_back(i);
            }
        }
    }
    return out;
}

/// One axis of a planned selection: groups of picks, each read (or written) as one span.
struct axis_plan
{
    struct group
    {
        std::uint64_t lo = 0; ///< the span [lo, hi) of array indices the group's box covers
        std::uint64_t hi = 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> picks; ///< (result position, array index)
    };
    std::vector<group> groups;
    std::uint64_t count = 0; ///< picks on this axis (the result's extent, 1 for a dropped axis)
};

/// Group the picks of one axis by read unit (see the file comment).
inline axis_plan plan_axis(const std::vector<std::uint64_t>& indices, std::uint64_t unit)
{
    axis_plan p;
    p.count = indices.size();
    std::vector<std::pair<std::uint64_t, std::uint64_t>> picks(indices.size());
    for (std::size_t k = 0; k < indices.size(); ++k)
    {
        picks[k] = {k, indices[k]};
    }
    std::stable_sort(picks.begin(), picks.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    // Per unit first.
    std::vector<axis_plan::group> units;
    for (const auto& pk : picks)
    {
        const std::uint64_t u = pk.second / unit;
        if (units.empty() || units.back().lo / unit != u)
        {
            units.push_back({pk.second, pk.second + 1, {}});
        }
        units.back().hi = pk.second + 1;
        units.back().picks.push_back(pk);
    }
    // Then runs of touched, neighbouring units that are dense enough as one span.
    for (auto& g : units)
    {
        if (!p.groups.empty())
        {
            auto& last = p.groups.back();
            const bool neighbours = (last.hi - 1) / unit + 1 == g.lo / unit;
            const std::uint64_t span = g.hi - last.lo;
            const std::uint64_t n = last.picks.size() + g.picks.size();
            if (neighbours && n * 4 >= span)
            {
                last.hi = g.hi;
                last.picks.insert(last.picks.end(), g.picks.begin(), g.picks.end());
                continue;
            }
        }
        p.groups.push_back(std::move(g));
    }
    return p;
}

/// A selection planned over an array: per axis its groups, and the result's extent (1 for an
/// axis an integer drops, so the result's memory is that of the N-d extents in C order).
template <std::size_t N>
struct selection_plan
{
    std::array<axis_plan, N> axes;
    std::array<std::uint64_t, N> counts{};

    std::uint64_t elements() const noexcept
    {
        std::uint64_t n = 1;
        for (auto c : counts)
        {
            n *= c;
        }
        return n;
    }

    /// Call f(cell region, group of each axis) for every cell of the plan, in C order.
    template <class Region, class F>
    void for_each_cell(F&& f) const
    {
        std::array<std::size_t, N> at{};
        for (std::size_t d = 0; d < N; ++d)
        {
            if (axes[d].groups.empty())
            {
                return;
            }
        }
        while (true)
        {
            Region r;
            std::array<const axis_plan::group*, N> gs{};
            for (std::size_t d = 0; d < N; ++d)
            {
                gs[d] = &axes[d].groups[at[d]];
                r.offset[d] = gs[d]->lo;
                r.extent[d] = gs[d]->hi - gs[d]->lo;
            }
            f(r, gs);
            std::size_t d = N;
            while (d > 0)
            {
                --d;
                if (++at[d] < axes[d].groups.size())
                {
                    break;
                }
                at[d] = 0;
                if (d == 0)
                {
                    return;
                }
            }
            if constexpr (N == 0)
            {
                return;
            }
        }
    }
};

/// Visit every pick of a cell: f(offset in the cell's C-ordered box, offset in the result).
template <std::size_t N, class F>
void for_each_pick(const std::array<const axis_plan::group*, N>& gs,
                   const std::array<std::uint64_t, N>& counts, F&& f)
{
    std::array<std::uint64_t, N> box_strides{};
    std::array<std::uint64_t, N> out_strides{};
    std::uint64_t b = 1;
    std::uint64_t o = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        box_strides[d] = b;
        out_strides[d] = o;
        b *= gs[d]->hi - gs[d]->lo;
        o *= counts[d];
    }
    auto walk = [&](auto& self, std::size_t d, std::uint64_t boff, std::uint64_t ooff) -> void
    {
        if (d == N)
        {
            f(boff, ooff);
            return;
        }
        for (const auto& [pos, idx] : gs[d]->picks)
        {
            self(self, d + 1, boff + (idx - gs[d]->lo) * box_strides[d], ooff + pos * out_strides[d]);
        }
    };
    walk(walk, 0, 0, 0);
}

/// The result's extents: the plan's counts of the axes the slices S keep.
template <class... S, std::size_t N>
std::array<std::uint64_t, kept_axes<S...>> kept_counts(const selection_plan<N>& p)
{
    static_assert(sizeof...(S) == N);
    std::array<std::uint64_t, kept_axes<S...>> out{};
    constexpr std::array<bool, N> dropped{std::is_integral_v<std::decay_t<S>>...};
    std::size_t k = 0;
    for (std::size_t d = 0; d < N; ++d)
    {
        if (!dropped[d])
        {
            out[k++] = p.counts[d];
        }
    }
    return out;
}

/// Plan `slices` over an array of `shape` read in units of `unit` (see the file comment).
template <std::size_t N, class... S>
selection_plan<N> plan_selection(const std::tuple<S...>& slices, const std::vector<std::uint64_t>& shape,
                                 const std::vector<std::uint64_t>& unit)
{
    static_assert(sizeof...(S) == N);
    selection_plan<N> p;
    [&]<std::size_t... D>(std::index_sequence<D...>)
    {
        ((p.axes[D] = plan_axis(slice_indices(std::get<D>(slices), shape[D], D), unit[D]),
          p.counts[D] = p.axes[D].count),
         ...);
    }
    (std::index_sequence_for<S...>{});
    return p;
}

/// The unit a selection groups its picks by: a sharded array's inner chunk (the smallest piece
/// it decodes), else its chunk.
template <class Meta>
std::vector<std::uint64_t> selection_unit(const Meta& m)
{
    for (const auto& c : m.codecs)
    {
        if (c.name == "sharding_indexed")
        {
            if (const auto it = c.configuration.find("chunk_shape");
                it != c.configuration.end() && it->is_array() && it->size() == m.chunk_shape.size())
            {
                return it->template get<std::vector<std::uint64_t>>();
            }
        }
    }
    return m.chunk_shape;
}

} // namespace detail
} // namespace zarrxt
