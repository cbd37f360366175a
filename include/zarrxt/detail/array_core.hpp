/** @file detail/array_core.hpp
 *  The untyped state behind every array handle: store, path, metadata, bound codec chain, policies,
 *  counters, the persistent index cache and a pool of per-worker scratch spaces. It depends on the
 *  policies but not on T or N, so every `array<T, N, ...>` with the same policies shares one
 *  instantiation of it (and of the metadata and codec code it drives).
 */
#pragma once

#include "../cache/index_cache.hpp"
#include "../codec/chain.hpp"
#include "../codec/codec_registry.hpp"
#include "../codec/dynamic_chain.hpp"
#include "../corruption.hpp"
#include "../exec/executor.hpp"
#include "../io_counters.hpp"
#include "../kernel/env.hpp"
#include "../kernel/read.hpp"
#include "../kernel/write.hpp"
#include "../limits.hpp"
#include "../metadata/bind_chain.hpp"
#include "../metadata/create.hpp"
#include "../node.hpp"
#include "../options.hpp"
#include "../store/concepts.hpp"
#include "../vlen.hpp"
#include "function_ref.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace zarrxt::detail
{

/// The IndexCache a static sharding codec was compiled for (any_index_cache when the chain is not
/// one static sharding codec: a dynamic chain's codec uses whatever the array gives it).
template <class Chain>
struct sharding_cache_of
{
    using type = any_index_cache;
};
template <class S>
requires requires
{
    typename S::index_cache_type;
}
struct sharding_cache_of<chain<S>>
{
    using type = typename S::index_cache_type;
};

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
class array_core
{
    static_assert(store_policy<Store>,
                  "zarrxt::array: Store must satisfy zarrxt::store_policy (copyable, read, "
                  "stat; see docs/concepts/store.md)");
    static_assert(index_cache_policy<IndexCache>,
                  "zarrxt::array: IndexCache must satisfy zarrxt::index_cache_policy (members "
                  "find, insert, invalidate, cached_bytes, static per_operation, default constructible; see "
                  "docs/concepts/index_cache.md)");
    static_assert(executor_policy<Executor>, "zarrxt::array: Executor must satisfy zarrxt::executor_policy "
                                             "(concurrency(), bulk(n, f); see docs/concepts/executor.md)");
    static_assert(limits_policy<Limits>, "zarrxt::array: Limits must satisfy zarrxt::limits_policy (see "
                                         "docs/concepts/limits.md)");

public:
    using chain_type = as_chain_t<Codecs>;
    static_assert(codec_chain<chain_type>,
                  "zarrxt::array: the codec chain does not meet zarrxt::codec_chain");
    static_assert(
        std::is_same_v<typename sharding_cache_of<chain_type>::type, any_index_cache> ||
            std::is_same_v<typename sharding_cache_of<chain_type>::type, IndexCache>,
        "zarrxt::array: the sharding codec is compiled for another IndexCache than the array's: give "
        "both the same type, or any_index_cache to the codec");
    using store_type = Store;
    using index_cache_type = IndexCache;
    using executor_type = Executor;
    using limits_type = Limits;

    array_core(Store store, std::string path, array_metadata meta, Executor exec, Limits limits,
               codec_registry registry = {});

    /// Open the array at `path` (any dtype/rank; the typed facade checks those); its chain knows
    /// the user codecs of `registry` besides the built-ins.
    static std::shared_ptr<array_core> open(const Store& store, std::string_view path, Executor exec,
                                            Limits limits, codec_registry registry = {});

    /// Create a v3 array of `dtype` (the metadata is built and validated by metadata/create.hpp).
    static std::shared_ptr<array_core> create(Store& store, std::string_view path, const data_type& dtype,
                                              const v3_options& o, Executor exec, Limits limits,
                                              codec_registry registry = {});

    /// Create a v2 array of `dtype` (the metadata is built and validated by metadata/create.hpp).
    static std::shared_ptr<array_core> create(Store& store, std::string_view path, dtype_id dtype,
                                              const v2_options& o, Executor exec, Limits limits,
                                              codec_registry registry = {});

    /// Create an array from validated metadata (make_v3_metadata / make_v2_metadata, or
    /// parse_v3_array / parse_v2_array of a document a caller wrote): replace a node at the path when
    /// `overwrite`, add the groups above it, write the document.
    static std::shared_ptr<array_core> create_from_metadata(Store& store, std::string_view path,
                                                            array_metadata m, bool overwrite, Executor exec,
                                                            Limits limits, codec_registry registry = {});

    std::string chunk_key(const std::uint64_t* coords, std::size_t rank) const
    {
        return kernel::chunk_key_of(m_path, m_meta, coords, rank);
    }

    /// Read `r` into `out` (element strides `strides`) through the read kernel.
    /// Variable-length arrays need `arena`, where the values read are kept (vlen.hpp).
    template <std::size_t N>
    void read(const region<N>& r, std::byte* out, const kernel::strides_t<N>& strides,
              corruption_policy on_corruption, problem_list* problems = nullptr, value_arena* arena = nullptr)
    {
        run([&](const kernel::kernel_env<chain_type>& env)
            { kernel::read_region<N>(env, r, out, strides, on_corruption, problems); },
            arena);
    }

    /// Write `src` (element strides `strides`, shaped like `r`) into `r` through the write kernel.
    /// `mask` (optional): a byte per element with the source's strides; only the elements where it
    /// is non-zero are written (selection writes).
    /// Variable-length arrays need `arena` for the old values of the chunks a write rewrites.
    template <std::size_t N>
    void write(const region<N>& r, const std::byte* src, const kernel::strides_t<N>& strides,
               bool write_empty_chunks, const std::uint8_t* mask = nullptr, value_arena* arena = nullptr)
    {
        run([&](const kernel::kernel_env<chain_type>& env)
            { kernel::write_region<N>(env, r, src, strides, write_empty_chunks, mask); },
            arena);
    }

    /// Replace the attributes and write the metadata document. In v2 a well-formed
    /// `_ARRAY_DIMENSIONS` member among them replaces the dimension names.
    void set_attributes(json attributes);

    /// This array as its metadata is stored now (another handle or process may have resized it or
    /// replaced its attributes since this core was made), with the same store and policies.
    std::shared_ptr<array_core> reopened() const;

    /// A core like this one whose shape is `shape`; nothing is written (see commit_metadata). A
    /// shape whose size in elements or bytes cannot be represented is array.8.
    std::shared_ptr<array_core> with_shape(const std::vector<std::uint64_t>& shape) const;

    /// Write this core's metadata document (the one step of resize and append readers can see:
    /// the store replaces it atomically, so a reader gets the old shape or the new).
    void commit_metadata();

    /// Resize to `shape` (see array::resize): returns the core of the new shape, whose metadata is
    /// written last. Before it, with this core's shape still the stored one:
    /// - the array's keys are listed once and mapped back to chunk coordinates (a sparse grid costs
    ///   what is stored, not what the grid could hold); every object outside the old or the new
    ///   grid is erased (outside the old one only a writer that died before its metadata, or an
    ///   implementation that leaves such objects, puts any);
    /// - in the stored edge chunks that the new boundary cuts, the part beyond it is set to the fill
    ///   value (through this core: it lies inside the old shape), and in those the old boundary
    ///   cut, the part the new shape uncovers is too (through the new core). So what a later grow
    ///   uncovers, here or in any other implementation, reads as the fill value, not as old data.
    /// A crash before the metadata leaves the old shape, with the part being cut away possibly
    /// already the fill value; never data outside the shape that a later grow could uncover.
    template <std::size_t N>
    std::shared_ptr<array_core> resize_to(const std::array<std::uint64_t, N>& shape, bool keep_empty)
    {
        const std::vector<std::uint64_t> old_shape = m_meta.shape;
        std::shared_ptr<array_core> next = with_shape(std::vector<std::uint64_t>(shape.begin(), shape.end()));
        if (old_shape == next->m_meta.shape)
        {
            return next;
        }
        // Both cores map elements to chunks alike (a rectilinear grid only gains chunks past its
        // listed edges), and the new core's grid covers both shapes: it serves both boundaries.
        const array_metadata& gn = next->m_meta;
        const std::vector<std::uint64_t> old_grid = m_meta.grid_shape();
        const std::vector<std::uint64_t> new_grid = next->m_meta.grid_shape();
        const std::string prefix = m_path.empty() ? std::string() : m_path + "/";
        std::vector<std::uint64_t> coords(N);
        std::vector<std::array<std::uint64_t, N>> cut; // stored chunks a boundary goes through
        for (const std::string& key : m_store.list(m_path))
        {
            if (key.compare(0, prefix.size(), prefix) != 0 ||
                !m_meta.key_encoding.parse_key(std::string_view(key).substr(prefix.size()), coords))
            {
                continue;
            }
            bool outside = false;
            bool on_edge = false;
            for (std::size_t d = 0; d < N; ++d)
            {
                outside = outside || coords[d] >= std::min(old_grid[d], new_grid[d]);
                const bool cuts_new =
                    shape[d] < old_shape[d] && !gn.starts_chunk(d, shape[d]) && coords[d] == new_grid[d] - 1;
                const bool cuts_old = shape[d] > old_shape[d] && !gn.starts_chunk(d, old_shape[d]) &&
                                      coords[d] == old_grid[d] - 1;
                on_edge = on_edge || cuts_new || cuts_old;
            }
            if (outside)
            {
                m_store.erase(key);
            }
            else if (on_edge)
            {
                std::array<std::uint64_t, N> at{};
                std::copy(coords.begin(), coords.end(), at.begin());
                cut.push_back(at);
            }
        }
        // One element of the fill value, read with zero strides: no buffer of the region's size.
        const kernel::strides_t<N> zero{};
        // min(lo + c, bound) without overflowing.
        auto end_in = [](std::uint64_t lo_, std::uint64_t c_, std::uint64_t bound_)
        { return lo_ >= bound_ ? lo_ : lo_ + std::min(c_, bound_ - lo_); };
        for (const auto& at : cut)
        {
            for (std::size_t d = 0; d < N; ++d)
            {
                const bool shrinks = shape[d] < old_shape[d];
                const std::uint64_t from = shrinks ? shape[d] : old_shape[d];
                const std::uint64_t lo = gn.chunk_start(d, at[d]);
                if (shape[d] == old_shape[d] || gn.starts_chunk(d, from) || gn.chunk_index(d, from) != at[d])
                {
                    continue;
                }
                // The chunk's box inside the shape it is written through, from the boundary on along d.
                const std::vector<std::uint64_t>& bound = shrinks ? old_shape : next->m_meta.shape;
                region<N> r;
                for (std::size_t e = 0; e < N; ++e)
                {
                    r.offset[e] = gn.chunk_start(e, at[e]);
                    r.extent[e] = end_in(r.offset[e], gn.chunk_edge(e, at[e]), bound[e]) - r.offset[e];
                }
                const std::uint64_t hi = end_in(lo, gn.chunk_edge(d, at[d]), bound[d]);
                r.offset[d] = from;
                r.extent[d] = hi > from ? hi - from : 0;
                (shrinks ? *this : *next).template write<N>(r, m_meta.fill.data(), zero, keep_empty);
            }
        }
        return next;
    }

    // What the handles see (the kernels get a kernel_env from run()). Everything but the store, the
    // counters and the index cache is fixed once the core exists; the core holds no per-handle settings
    // (corruption policy, write_empty_chunks): those are values of each handle (array_settings),
    // so configuring one handle never races with operations through another.
    const Store& store() const noexcept { return m_store; }
    Store& store() noexcept { return m_store; }
    const std::string& path() const noexcept { return m_path; }
    const array_metadata& metadata() const noexcept { return m_meta; }
    const chain_type& chain() const noexcept { return m_chain; }
    const limit_values& limits() const noexcept { return m_lv; }
    const Executor& executor() const noexcept { return m_exec; }
    /// The user codecs this array's chain was built with (empty: the built-ins only).
    const codec_registry& registry() const noexcept { return m_registry; }
    io_counters& counters() noexcept { return m_counters; }
    IndexCache& index_cache() noexcept { return m_cache; }

private:
    /// Call f(env) with the kernel environment of one operation (kernel/env.hpp): the store,
    /// executor and index cache reached through references, so the kernels f calls are compiled
    /// per rank and chain only. A per-operation index cache lives for this call. Not a template:
    /// what builds the environment (the store's access object and its virtual members, the index
    /// cache and executor references) is compiled with the core, once for the default cores.
    void run(function_ref<void(const kernel::kernel_env<chain_type>&)> f, value_arena* arena = nullptr);

    Store m_store;
    std::string m_path;
    array_metadata m_meta;
    Executor m_exec;
    Limits m_limits;
    limit_values m_lv;
    codec_registry m_registry; // before m_chain, which is bound with it
    chain_type m_chain;
    std::unique_ptr<kernel::shaped_chains<chain_type>> m_shaped; // rectilinear grids only
    io_counters m_counters;
    IndexCache m_cache; // used when the policy is not per-operation
    std::mutex m_meta_mutex;
    kernel::scratch_pool m_scratch;

    /// A rectilinear grid's chunks have many shapes, and a codec may refuse some (a shard's inner
    /// chunks must divide it): bind each edge length of each axis once at open, so such a grid is
    /// refused there, not by the first read that reaches the chunk. A codec's checks are per axis,
    /// so this covers every shape without binding the product of them.
    void check_rectilinear_chains() const;

    /// The index cache for one operation: a fresh one (per-operation policies) or the shared one.
    index_cache_ref op_cache(std::optional<IndexCache>& local)
    {
        if constexpr (IndexCache::per_operation)
        {
            return local.emplace();
        }
        else
        {
            return m_cache;
        }
    }

    static std::shared_ptr<array_core> prepare_create(Store& store, const std::string& p, array_metadata m,
                                                      Executor& exec, Limits& limits, bool overwrite,
                                                      const codec_registry& registry);
};

// The members outside the class are not inline: under ZARRXT_SEPARATE_COMPILATION the default
// cores' members are compiled once in the compiled part (detail/core_instantiations.hpp), and an
// explicit instantiation declaration only keeps non-inline members out of a user's unit.

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
array_core<Codecs, Store, IndexCache, Executor, Limits>::array_core(Store store, std::string path,
                                                                    array_metadata meta, Executor exec,
                                                                    Limits limits, codec_registry registry)
    : m_store(std::move(store))
    , m_path(std::move(path))
    , m_meta(std::move(meta))
    , m_exec(std::move(exec))
    , m_limits(std::move(limits))
    , m_lv(limit_values::from(m_limits))
    , m_registry(std::move(registry))
    , m_chain(bind_chain<chain_type>(m_meta, m_lv, m_registry))
{
    if (m_meta.rectilinear)
    {
        m_shaped = std::make_unique<kernel::shaped_chains<chain_type>>(m_meta.codecs,
                                                                       context_of(m_meta, m_lv, m_registry));
        check_rectilinear_chains();
    }
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::open(const Store& store, std::string_view path,
                                                                   Executor exec, Limits limits,
                                                                   codec_registry registry)
    -> std::shared_ptr<array_core>
{
    const std::string p = normalize_path(path);
    const limit_values lv = limit_values::from(limits);
    auto node = read_node(store, p, lv, registry.dtypes());
    if (!node)
    {
        array_error e(array_errc::node_not_found, "no Zarr array or group at \"" + p + "\"");
        e.with_key(p.empty() ? std::string("/") : p);
        throw e;
    }
    if (node->kind != node_kind::array)
    {
        metadata_error e(metadata_errc::wrong_node_type, "expected an array at \"" + p + "\", found a group");
        e.with_key(p.empty() ? std::string("/") : p);
        throw e;
    }
    const std::string meta_key = join_key(p, node->zarr_format == 3 ? "zarr.json" : ".zarray");
    return with_key_context(meta_key,
                            [&]
                            {
                                return std::make_shared<array_core>(store, p, std::move(node->array),
                                                                    std::move(exec), std::move(limits),
                                                                    std::move(registry));
                            });
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::create(Store& store, std::string_view path,
                                                                     const data_type& dtype,
                                                                     const v3_options& o, Executor exec,
                                                                     Limits limits, codec_registry registry)
    -> std::shared_ptr<array_core>
{
    const std::string p = normalize_path(path);
    array_metadata m = make_v3_metadata(join_key(p, "zarr.json"), dtype, o);
    return create_from_metadata(store, p, std::move(m), o.overwrite, std::move(exec), std::move(limits),
                                std::move(registry));
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::create(Store& store, std::string_view path,
                                                                     dtype_id dtype, const v2_options& o,
                                                                     Executor exec, Limits limits,
                                                                     codec_registry registry)
    -> std::shared_ptr<array_core>
{
    const std::string p = normalize_path(path);
    array_metadata m = make_v2_metadata(join_key(p, ".zarray"), dtype, o);
    return create_from_metadata(store, p, std::move(m), o.overwrite, std::move(exec), std::move(limits),
                                std::move(registry));
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::create_from_metadata(
    Store& store, std::string_view path, array_metadata m, bool overwrite, Executor exec, Limits limits,
    codec_registry registry) -> std::shared_ptr<array_core>
{
    const std::string p = normalize_path(path);
    const int format = m.zarr_format;
    const std::string meta_key = join_key(p, format == 3 ? "zarr.json" : ".zarray");
    auto core = with_key_context(
        meta_key, [&] { return prepare_create(store, p, std::move(m), exec, limits, overwrite, registry); });
    if (format == 3)
    {
        // Write the codec configurations as the bound codecs state them (defaults filled in).
        adopt_bound_codecs(core->m_meta, core->m_chain.specs());
    }
    ensure_parent_groups(store, p, format, core->m_lv);
    write_array_metadata(store, p, core->m_meta);
    return core;
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array_core<Codecs, Store, IndexCache, Executor, Limits>::set_attributes(json attributes)
{
    std::lock_guard<std::mutex> g(m_meta_mutex);
    m_meta.attributes = std::move(attributes);
    if (m_meta.zarr_format == 2)
    {
        lift_v2_dimension_names(m_meta);
    }
    write_array_metadata(m_store, m_path, m_meta);
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::reopened() const -> std::shared_ptr<array_core>
{
    return open(m_store, m_path, m_exec, m_limits, m_registry);
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::with_shape(
    const std::vector<std::uint64_t>& shape) const -> std::shared_ptr<array_core>
{
    array_metadata m = m_meta;
    if (shape.size() != m.shape.size())
    {
        throw array_error(array_errc::invalid_argument,
                          "a new shape of rank " + std::to_string(shape.size()) + " for an array of rank " +
                              std::to_string(m.shape.size()));
    }
    m.shape = shape;
    m.document["shape"] = shape;
    try
    {
        if (m.rectilinear)
        {
            // Growing past the listed edges adds chunks of the last edge length; every
            // existing chunk keeps its place and shape.
            bool beyond = false;
            for (std::size_t d = 0; d < shape.size(); ++d)
            {
                beyond = beyond || m.rectilinear->covered(d) < shape[d];
            }
            if (beyond)
            {
                rectilinear_grid g = *m.rectilinear;
                g.extend_to(shape);
                m.rectilinear = std::make_shared<const rectilinear_grid>(std::move(g));
                m.document["chunk_grid"]["configuration"]["chunk_shapes"] = m.rectilinear->to_json();
            }
            settle_rectilinear(m);
        }
        validate_geometry(m);
    }
    catch (const metadata_error& e)
    {
        throw array_error(array_errc::invalid_argument, "the new shape " +
                                                            format_extents(shape.data(), shape.size()) +
                                                            " is not representable: " + e.what());
    }
    return std::make_shared<array_core>(m_store, m_path, std::move(m), m_exec, m_limits, m_registry);
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array_core<Codecs, Store, IndexCache, Executor, Limits>::commit_metadata()
{
    std::lock_guard<std::mutex> g(m_meta_mutex);
    write_array_metadata(m_store, m_path, m_meta);
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array_core<Codecs, Store, IndexCache, Executor, Limits>::check_rectilinear_chains() const
{
    const rectilinear_grid& grid = *m_meta.rectilinear;
    const std::vector<std::uint64_t> counts = m_meta.grid_shape();
    std::size_t bound = 0;
    for (std::size_t d = 0; d < grid.rank() && bound < 1024; ++d)
    {
        std::vector<std::uint64_t> seen;
        // A regular axis has one edge; else one per run whose chunks hold elements.
        const auto& a = grid.axis_at(d);
        std::vector<std::uint64_t> edges;
        if (a.step != 0 && counts[d] > 0)
        {
            edges.push_back(a.step);
        }
        for (std::size_t k = 0; k < a.runs.size() && a.runs[k].first < counts[d]; ++k)
        {
            edges.push_back(a.runs[k].edge);
        }
        for (const std::uint64_t e : edges)
        {
            if (bound < 1024 && std::find(seen.begin(), seen.end(), e) == seen.end())
            {
                seen.push_back(e);
                dims shape(m_meta.chunk_shape);
                shape[d] = e;
                m_shaped->get(shape);
                ++bound;
            }
        }
    }
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array_core<Codecs, Store, IndexCache, Executor, Limits>::run(
    function_ref<void(const kernel::kernel_env<chain_type>&)> f, value_arena* arena)
{
    std::optional<IndexCache> local;
    kernel::store_access_for<Store> store(m_store);
    // A variable-length array always has an arena: a caller that reads no values (a write of
    // whole chunks, the fill of a resize) may give none, and a rewrite decodes old values.
    std::optional<value_arena> own;
    if (arena == nullptr && is_vlen(m_meta.dtype))
    {
        arena = &own.emplace(m_lv.max_bytes_in_flight);
    }
    const kernel::kernel_env<chain_type> env{
        m_meta,    m_path, m_chain, m_lv,          m_counters, op_cache(local), executor_ref(m_exec),
        m_scratch, store,  arena,   m_shaped.get()};
    f(env);
}

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array_core<Codecs, Store, IndexCache, Executor, Limits>::prepare_create(Store& store,
                                                                             const std::string& p,
                                                                             array_metadata m, Executor& exec,
                                                                             Limits& limits, bool overwrite,
                                                                             const codec_registry& registry)
    -> std::shared_ptr<array_core>
{
    const limit_values lv = limit_values::from(limits);
    if (peek_node_kind(store, p, lv))
    {
        if (!overwrite)
        {
            array_error e(array_errc::node_exists,
                          "a node already exists at \"" + p + "\" (pass overwrite = true to replace it)");
            e.with_key(p.empty() ? std::string("/") : p);
            throw e;
        }
        erase_node(store, p);
    }
    return std::make_shared<array_core>(store, p, std::move(m), std::move(exec), std::move(limits), registry);
}

/// The core of an array with the default policies (zarrxt_fwd.hpp) over `Store`: the one whose
/// kernels the compiled part holds (kernel/instantiations.hpp) and the one any_array uses.
template <class Store>
using default_array_core =
    array_core<dynamic_chain, Store, operation_index_cache<>, inline_executor, default_limits>;

} // namespace zarrxt::detail
