/** @file zarrxt_fwd.hpp
 *  Forward declarations, and the one place where default template arguments are stated.
 *
 *  Rules (from xtensor_forward.hpp, kept this time): declarations and aliases only; no class
 *  definitions; no includes beyond <cstddef>. Every other header declares these templates without
 *  defaults, so changing a default means changing this file only.
 */
#pragma once

#include <cstddef>
#include <string_view>

namespace zarrxt
{

class dynamic_chain;
template <class... Codecs>
class chain;

class filesystem_store;
class memory_store;
template <class S>
class counting_store;
template <class S>
class latency_store;
template <class S>
class consolidated_store;

class no_index_cache;
struct any_index_cache;
template <std::size_t MaxBytes = (16u << 20), std::size_t MaxEntries = 64>
class operation_index_cache;
template <std::size_t MaxBytes = (64u << 20)>
class lru_index_cache;

class inline_executor;
class thread_pool_executor;

struct default_limits;
struct unlimited_limits;

namespace codec
{
enum class endian_mode
{
    any,    ///< take the byte order from the metadata
    little, ///< require little-endian storage
    big,    ///< require big-endian storage
};

template <endian_mode Mode = endian_mode::any>
class bytes;
class transpose;
class gzip;
class zlib;
class zstd;
class crc32c;
class blosc;
template <class InnerChain = dynamic_chain, class IndexChain = dynamic_chain,
          class IndexCache = any_index_cache>
class sharding_indexed;
} // namespace codec

template <class T, std::size_t N, class Codecs = dynamic_chain, class Store = filesystem_store,
          class IndexCache = operation_index_cache<>, class Executor = inline_executor, class Limits = default_limits>
class array;

struct v3_options;
struct v2_options;
class codec_registry;

/// Open the array at `path` of `store` as array<T, N, ...> (defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> open(const Store& store, std::string_view path,
                                                             Executor exec = Executor{}, Limits limits = Limits{});

/// Open with user codecs besides the built-ins (codec/codec_registry.hpp; defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> open(const Store& store, std::string_view path,
                                                              const codec_registry& registry,
                                                              Executor exec = Executor{},
                                                              Limits limits = Limits{});

/// Create a Zarr v3 array at `path` of `store` (defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                               const v3_options& options, Executor exec = Executor{},
                                                               Limits limits = Limits{});

/// Create a Zarr v2 array at `path` of `store` (defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                               const v2_options& options, Executor exec = Executor{},
                                                               Limits limits = Limits{});

/// Create a Zarr v3 array whose codecs may be user codecs of `registry` (defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                                const v3_options& options,
                                                                const codec_registry& registry,
                                                                Executor exec = Executor{},
                                                                Limits limits = Limits{});

/// Create a Zarr v2 array whose codecs may be user codecs of `registry` (defined in array.hpp).
template <class T, std::size_t N, class Codecs = dynamic_chain, class IndexCache = operation_index_cache<>,
          class Executor = inline_executor, class Limits = default_limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                                const v2_options& options,
                                                                const codec_registry& registry,
                                                                Executor exec = Executor{},
                                                                Limits limits = Limits{});

template <std::size_t... Ranks>
struct ranks;
/// The ranks `visit` dispatches to unless told otherwise.
using default_visit_ranks = ranks<0, 1, 2, 3, 4>;
template <class Store = filesystem_store>
class any_array;
template <class Store = filesystem_store>
class group;

} // namespace zarrxt
