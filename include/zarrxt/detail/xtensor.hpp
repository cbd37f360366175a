/** @file detail/xtensor.hpp
 *  The only header that includes xtensor. Copes with the flat include layout of xtensor <= 0.25
 *  (Debian 12 ships 0.24) and the sub-folder layout of 0.26+.
 */
#pragma once

#if __has_include(<xtensor/containers/xtensor.hpp>)
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xexpression.hpp>
#include <xtensor/views/xslice.hpp>
#else
#include <xtensor/xadapt.hpp>
#include <xtensor/xexpression.hpp>
#include <xtensor/xslice.hpp>
#include <xtensor/xtensor.hpp>
#endif

#include <array>
#include <cstdint>
#include <type_traits>

namespace zarrxt::detail
{

/// An xtensor expression we can write into directly: it exposes its storage and strides.
template <class E>
concept strided_destination = requires(E& e) {
    e.data();
    e.data_offset();
    e.strides();
    e.shape();
};

template <std::size_t N, class Strides>
std::array<std::int64_t, N> to_strides(const Strides& s)
{
    std::array<std::int64_t, N> r{};
    for (std::size_t i = 0; i < N; ++i)
    {
        r[i] = static_cast<std::int64_t>(s[i]);
    }
    return r;
}

} // namespace zarrxt::detail
