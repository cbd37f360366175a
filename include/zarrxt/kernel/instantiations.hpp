/** @file kernel/instantiations.hpp
 *  The kernels of the common arrays, compiled once under ZARRXT_SEPARATE_COMPILATION.
 *
 *  The read and write kernels depend on the rank and the array's policies, not on the element
 *  type, and they pull in the executor, the codec chain and the sharding code: most of what a user
 *  unit that reads or writes an array spends compiling. For the default policies (dynamic chain,
 *  operation index cache, inline executor, default limits) over the filesystem and memory stores,
 *  ranks 0 to 4, this header declares them `extern template` in every unit and the compiled part
 *  (<zarrxt/src.hpp>) defines them, so other units only call them. Arrays with other policies or
 *  ranks instantiate their kernels where they are used, as in a header-only build.
 */
#pragma once

#include "../config.hpp"
#include "../store/filesystem.hpp"
#include "../store/memory.hpp"
#include "read.hpp"
#include "write.hpp"

#if defined(ZARRXT_SEPARATE_COMPILATION)

namespace zarrxt::kernel
{

template <class Store>
using default_core = zarrxt::detail::default_array_core<Store>;

#if ZARRXT_DEFINITIONS
#define ZARRXT_KERNEL_INSTANTIATION template
#else
#define ZARRXT_KERNEL_INSTANTIATION extern template
#endif

#define ZARRXT_KERNELS_FOR(N, Store)                                                                         \
    ZARRXT_KERNEL_INSTANTIATION void read_region<N, default_core<Store>>(                                    \
        default_core<Store>&, const region<N>&, std::byte*, const strides_t<N>&, corruption_policy,          \
        problem_list*);                                                                                      \
    ZARRXT_KERNEL_INSTANTIATION void write_region<N, default_core<Store>>(                                   \
        default_core<Store>&, const region<N>&, const std::byte*, const strides_t<N>&, bool);
#define ZARRXT_KERNELS_FOR_RANKS(Store)                                                                      \
    ZARRXT_KERNELS_FOR(0, Store)                                                                             \
    ZARRXT_KERNELS_FOR(1, Store)                                                                             \
    ZARRXT_KERNELS_FOR(2, Store)                                                                             \
    ZARRXT_KERNELS_FOR(3, Store)                                                                             \
    ZARRXT_KERNELS_FOR(4, Store)

ZARRXT_KERNELS_FOR_RANKS(filesystem_store)
ZARRXT_KERNELS_FOR_RANKS(memory_store)

#undef ZARRXT_KERNELS_FOR_RANKS
#undef ZARRXT_KERNELS_FOR
#undef ZARRXT_KERNEL_INSTANTIATION

} // namespace zarrxt::kernel

#endif
