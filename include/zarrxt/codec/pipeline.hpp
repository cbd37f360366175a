/** @file codec/pipeline.hpp
 *  The mechanics both chain kinds share: binding contexts stage by stage, choosing decode size
 *  hints, and ping-ponging between two scratch buffers so no stage reads and writes one buffer.
 *  A chain (static `chain<...>` or `dynamic_chain`) supplies the codecs; this header supplies the
 *  order in which they run.
 */
#pragma once

#include "codec_spec.hpp"
#include "concepts.hpp"

#include <optional>
#include <string>
#include <vector>

namespace zarrxt::codec::detail
{

/// Tracks which scratch buffer holds the current bytes so the next stage writes to the other
/// (a decompressor must never write over its own input).
class stage_buffers
{
public:
    explicit stage_buffers(scratch_space& s) noexcept : m_s(s) {}

    /// The buffer a stage should write to.
    buffer& next() noexcept { return m_where == 1 ? m_s.b : m_s.a; }

    /// Record where a stage's result lives: in `out`, or still where its input was (a view).
    void landed(byte_view result, const buffer& out) noexcept
    {
        const std::byte* p = result.data();
        if (p != nullptr && p >= out.data() && p <= out.data() + out.size())
        {
            m_where = &out == &m_s.a ? 1 : 2;
        }
    }

private:
    scratch_space& m_s;
    int m_where = 0; // 0: caller's memory, 1: scratch a, 2: scratch b
};

/// The scratch buffer an array->array stage writes to: the one of `array` / `array_b` that does not
/// hold its input (a stage may return a view of its input, so alternating by position would not do).
inline buffer& a2a_target(scratch_space& s, const std::byte* input) noexcept
{
    const bool in_a = input != nullptr && input >= s.array.data() && input < s.array.data() + s.array.size();
    return in_a ? s.array_b : s.array;
}

/// Expected decoded size of each bytes->bytes stage (index i = input of b2b[i] when encoding),
/// derived forward from the array->bytes codec's fixed size where codecs have fixed overhead.
template <class EncodedSizeOf>
std::vector<std::optional<std::size_t>> b2b_sizes(std::optional<std::size_t> a2b_size, std::size_t n_b2b,
                                                  EncodedSizeOf encoded_size_of)
{
    std::vector<std::optional<std::size_t>> sizes(n_b2b + 1);
    sizes[0] = a2b_size;
    for (std::size_t i = 0; i < n_b2b; ++i)
    {
        sizes[i + 1] = sizes[i] ? encoded_size_of(i, *sizes[i]) : std::nullopt;
    }
    return sizes;
}

[[noreturn]] inline void throw_order(const std::string& msg)
{
    throw metadata_error(metadata_errc::invalid_codec_order, msg);
}

/// Validate the kinds of a codec list (0 = a2a, 1 = a2b, 2 = b2b) and the names for messages.
inline void check_kind_order(const std::vector<int>& kinds, const std::vector<std::string>& names)
{
    int a2b = 0;
    int last = 0;
    for (std::size_t i = 0; i < kinds.size(); ++i)
    {
        if (kinds[i] < last)
        {
            throw_order("codec \"" + names[i] + "\" (" + (kinds[i] == 0 ? "array->array" : "array->bytes")
                        + ") cannot follow \"" + names[i - 1] + "\"; the order is array->array codecs, one "
                                                                "array->bytes codec, then bytes->bytes codecs");
        }
        last = kinds[i];
        a2b += kinds[i] == 1 ? 1 : 0;
    }
    if (a2b != 1)
    {
        throw_order("a codec chain needs exactly one array->bytes codec (such as \"bytes\"), found "
                    + std::to_string(a2b));
    }
}

} // namespace zarrxt::codec::detail
