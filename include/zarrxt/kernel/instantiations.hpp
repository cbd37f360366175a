/** @file kernel/instantiations.hpp
 *  The kernels of the dynamic chain, compiled once under ZARRXT_SEPARATE_COMPILATION.
 *
 *  The read and write kernels depend on the rank and the codec chain only (kernel/env.hpp: the
 *  store, executor, index cache and limits are reached through references), and they pull in the
 *  chain, the sharding code and the scatter loops: most of what a user unit that reads or writes an
 *  array spends compiling. For the metadata-built `dynamic_chain`, ranks 0 to 4, this header
 *  declares them `extern template` in every unit and the compiled part (<zarrxt/src.hpp>) defines
 *  them, so other units only call them, whatever store, executor, index cache and limits their
 *  arrays use. Static chains and other ranks instantiate their kernels where they are used, as in a
 *  header-only build.
 */
#pragma once

#include "../codec/dynamic_chain.hpp"
#include "../config.hpp"
#include "read.hpp"
#include "write.hpp"

#if defined(ZARRXT_SEPARATE_COMPILATION)

namespace zarrxt::kernel
{

#if ZARRXT_DEFINITIONS
#define ZARRXT_KERNEL_INSTANTIATION template
#else
#define ZARRXT_KERNEL_INSTANTIATION extern template
#endif

#define ZARRXT_KERNELS_FOR(N)                                                                                \
    ZARRXT_KERNEL_INSTANTIATION void read_region<N, dynamic_chain>(                                          \
        const kernel_env<dynamic_chain>&, const region<N>&, std::byte*, const strides_t<N>&,                 \
        corruption_policy, problem_list*);                                                                   \
    ZARRXT_KERNEL_INSTANTIATION void write_region<N, dynamic_chain>(                                         \
        const kernel_env<dynamic_chain>&, const region<N>&, const std::byte*, const strides_t<N>&, bool,     \
        const std::uint8_t*);

ZARRXT_KERNELS_FOR(0)
ZARRXT_KERNELS_FOR(1)
ZARRXT_KERNELS_FOR(2)
ZARRXT_KERNELS_FOR(3)
ZARRXT_KERNELS_FOR(4)

#undef ZARRXT_KERNELS_FOR
#undef ZARRXT_KERNEL_INSTANTIATION

} // namespace zarrxt::kernel

#endif
