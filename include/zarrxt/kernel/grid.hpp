/** @file kernel/grid.hpp
 *  The chunks a region touches on a regular chunk grid, enumerable by a flat index so that an
 *  executor can hand them out to workers.
 */
#pragma once

#include "../detail/checked.hpp"
#include "../region.hpp"
#include "scatter.hpp"

#include <vector>

namespace zarrxt::kernel
{

template <std::size_t N>
class chunk_range
{
public:
    chunk_range(const std::vector<std::uint64_t>& chunk_shape, const region<N>& reg)
    {
        m_count = 1;
        for (std::size_t d = 0; d < N; ++d)
        {
            if (reg.extent[d] == 0)
            {
                m_count = 0;
                return;
            }
            m_lo[d] = reg.offset[d] / chunk_shape[d];
            const std::uint64_t hi = (reg.offset[d] + reg.extent[d] - 1) / chunk_shape[d] + 1;
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

private:
    extents_t<N> m_lo{};
    extents_t<N> m_n{};
    std::uint64_t m_count = 0;
};

} // namespace zarrxt::kernel
