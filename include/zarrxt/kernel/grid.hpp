/** @file kernel/grid.hpp
 *  The chunks a region touches on the array's chunk grid (regular or rectilinear), enumerable by a
 *  flat index so that an executor can hand them out to workers, each with its origin and shape.
 */
#pragma once

#include "../detail/checked.hpp"
#include "../metadata/array_metadata.hpp"
#include "../region.hpp"
#include "scatter.hpp"

#include <vector>

namespace zarrxt::kernel
{

template <std::size_t N>
class chunk_range
{
public:
    chunk_range(const array_metadata& m, const region<N>& reg)
        : m_meta(&m)
    {
        m_count = 1;
        for (std::size_t d = 0; d < N; ++d)
        {
            if (reg.extent[d] == 0)
            {
                m_count = 0;
                return;
            }
            m_lo[d] = m.chunk_index(d, reg.offset[d]);
            const std::uint64_t hi = m.chunk_index(d, reg.offset[d] + reg.extent[d] - 1) + 1;
            m_n[d] = hi - m_lo[d];
            m_count = zarrxt::detail::checked_mul(m_count, m_n[d], "number of chunks in a region");
        }
    }

    std::uint64_t count() const noexcept { return m_count; }

    /// Grid coordinates of the i-th touched chunk, in C order.
    extents_t<N> coords(std::uint64_t i) const noexcept
    {
        extents_t<N> c{};
        for (std::size_t d = N; d-- > 0;)
        {
            c[d] = m_lo[d] + i % m_n[d];
            i /= m_n[d];
        }
        return c;
    }

    /// The first element of the chunk at grid coordinates `c`.
    dims origin(const extents_t<N>& c) const
    {
        dims o(N);
        for (std::size_t d = 0; d < N; ++d)
        {
            o[d] = m_meta->chunk_start(d, c[d]);
        }
        return o;
    }

    /// The shape of the chunk at grid coordinates `c` (all chunks alike on a regular grid).
    dims shape(const extents_t<N>& c) const
    {
        dims s(N);
        for (std::size_t d = 0; d < N; ++d)
        {
            s[d] = m_meta->chunk_edge(d, c[d]);
        }
        return s;
    }

private:
    const array_metadata* m_meta;
    extents_t<N> m_lo{};
    extents_t<N> m_n{};
    std::uint64_t m_count = 0;
};

} // namespace zarrxt::kernel
