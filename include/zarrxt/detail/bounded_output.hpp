/** @file detail/bounded_output.hpp
 *  The output side of a streaming decompressor (bz2, lzma) that must stop at a size: exactly the
 *  chunk's decoded size when it is known, else the `max_chunk_bytes` cap. The buffer grows
 *  geometrically but never beyond the bound plus one byte, which is how "one byte too many" is
 *  seen without a probe call; a bomb therefore stops while it inflates, at the bound.
 */
#pragma once

#include "../error.hpp"
#include "../limits.hpp"
#include "buffer.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zarrxt::detail
{

class bounded_output
{
public:
    bounded_output(buffer& out, std::size_t in_size, std::optional<std::size_t> exact, std::size_t max,
                   std::string_view stage)
        : m_out(out)
        , m_exact(exact)
        , m_cap(exact ? *exact : max)
        , m_stage(stage)
    {
        if (exact && *exact > max)
        {
            throw limit_exceeded("max_chunk_bytes", *exact, max);
        }
        // Saturating: a cap of SIZE_MAX means "no cap", not "no room".
        m_room = m_cap < SIZE_MAX ? m_cap + 1 : m_cap;
        const std::size_t first =
            exact ? m_room : std::min(m_room, std::max<std::size_t>(in_size * 4, std::size_t{1} << 16));
        m_out.resize_discard(first);
    }

    std::byte* next() noexcept { return m_out.data() + m_pos; }
    std::size_t avail() const noexcept { return m_out.size() - m_pos; }
    std::size_t size() const noexcept { return m_pos; }
    /// Bytes that may still be produced before the bound is passed (plus the one that shows it).
    std::size_t remaining() const noexcept { return m_room - m_pos; }

    /// Records `n` bytes written at next(); throws as soon as the bound is passed.
    void produced(std::size_t n)
    {
        m_pos += n;
        if (m_pos > m_cap)
        {
            if (m_exact)
            {
                throw codec_error(codec_errc::size_mismatch, m_stage,
                                  "stream decodes to more than the expected " + std::to_string(*m_exact) +
                                      " bytes");
            }
            throw limit_exceeded("max_chunk_bytes", m_cap + 1, m_cap);
        }
    }

    /// Makes room when avail() is 0 (the bound has not been passed, so room remains).
    void grow()
    {
        if (avail() == 0 && m_out.size() < m_room)
        {
            m_out.resize_exact(std::min(m_room, std::max<std::size_t>(m_out.size() * 2, 1)));
        }
    }

    /// The decoded bytes, checked against the exact size when there is one.
    mutable_byte_view finish() const
    {
        if (m_exact && m_pos != *m_exact)
        {
            throw codec_error(codec_errc::size_mismatch, m_stage,
                              "stream decodes to " + std::to_string(m_pos) + " bytes, expected " +
                                  std::to_string(*m_exact));
        }
        return {m_out.data(), m_pos};
    }

private:
    buffer& m_out;
    std::optional<std::size_t> m_exact;
    std::size_t m_cap;
    std::size_t m_room = 0;
    std::size_t m_pos = 0;
    std::string_view m_stage;
};

} // namespace zarrxt::detail
