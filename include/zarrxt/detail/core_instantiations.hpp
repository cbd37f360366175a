/** @file detail/core_instantiations.hpp
 *  The array cores of the default policies over the filesystem, memory and run-time chosen
 *  (`any_store`, what open_store hands out) stores, compiled once under ZARRXT_SEPARATE_COMPILATION.
 *
 *  An array_core's members that are defined outside its class (open, create, the constructor that
 *  binds the codec chain, resize's metadata steps) pull the metadata parsers and builders, the
 *  chain binding and the store's own members into every unit that opens or creates an array. For
 *  `default_array_core<filesystem_store>`, `<memory_store>` and `<any_store>` this header declares the whole
 *  class `extern template` in every unit and the compiled part (<zarrxt/src.hpp>) defines it, as
 *  kernel/instantiations.hpp does for the kernels. Members defined inside the class (accessors and
 *  the per-rank read, write and resize templates) are still compiled where they are used. Other
 *  stores and policies instantiate their cores where they are used, as in a header-only build.
 */
#pragma once

#include "../config.hpp"
#include "../store/any_store.hpp"
#include "../store/filesystem.hpp"
#include "../store/memory.hpp"
#include "array_core.hpp"

#if defined(ZARRXT_SEPARATE_COMPILATION)

namespace zarrxt::detail
{

#if ZARRXT_DEFINITIONS
template class array_core<dynamic_chain, filesystem_store, operation_index_cache<>, inline_executor,
                          default_limits>;
template class array_core<dynamic_chain, memory_store, operation_index_cache<>, inline_executor,
                          default_limits>;
template class array_core<dynamic_chain, any_store, operation_index_cache<>, inline_executor, default_limits>;
#else
extern template class array_core<dynamic_chain, filesystem_store, operation_index_cache<>, inline_executor,
                                 default_limits>;
extern template class array_core<dynamic_chain, memory_store, operation_index_cache<>, inline_executor,
                                 default_limits>;
extern template class array_core<dynamic_chain, any_store, operation_index_cache<>, inline_executor,
                                 default_limits>;
#endif

} // namespace zarrxt::detail

#endif
