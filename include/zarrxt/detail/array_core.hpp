/** @file detail/array_core.hpp
 *  The untyped state behind every array handle: store, path, metadata, bound codec chain, policies,
 *  counters, the persistent index cache and a pool of per-worker scratch spaces. It depends on the
 *  policies but not on T or N, so every `array<T, N, ...>` with the same policies shares one
 *  instantiation of it (and of the metadata and codec code it drives).
 */
#pragma once

#include "../cache/index_cache.hpp"
#include "../codec/chain.hpp"
#include "../codec/dynamic_chain.hpp"
#include "../corruption.hpp"
#include "../exec/executor.hpp"
#include "../io_counters.hpp"
#include "../limits.hpp"
#include "../node.hpp"
#include "../options.hpp"
#include "../store/concepts.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zarrxt::detail
{

template <class Codecs, class Store, class IndexCache, class Executor, class Limits>
class array_core
{
    static_assert(store_policy<Store>,
                  "zarrxt::array: Store must satisfy zarrxt::store_policy (copyable, read, "
                  "stat; see docs/concepts/store.md)");
    static_assert(index_cache_policy<IndexCache>,
                  "zarrxt::array: IndexCache must satisfy zarrxt::index_cache_policy (derive from "
                  "index_cache_base, default constructible, static per_operation; see docs/concepts/index_cache.md)");
    static_assert(executor_policy<Executor>, "zarrxt::array: Executor must satisfy zarrxt::executor_policy "
                                             "(concurrency(), bulk(n, f); see docs/concepts/executor.md)");
    static_assert(limits_policy<Limits>, "zarrxt::array: Limits must satisfy zarrxt::limits_policy (see "
                                         "docs/concepts/limits.md)");

public:
    using chain_type = as_chain_t<Codecs>;
    using store_type = Store;
    using index_cache_type = IndexCache;
    using executor_type = Executor;
    using limits_type = Limits;

    array_core(Store store, std::string path, array_metadata meta, Executor exec, Limits limits)
        : m_store(std::move(store))
        , m_path(std::move(path))
        , m_meta(std::move(meta))
        , m_exec(std::move(exec))
        , m_limits(std::move(limits))
        , m_lv(limit_values::from(m_limits))
        , m_chain(chain_type::from_metadata(m_meta, m_lv))
    {
    }

    /// Open the array at `path` (any dtype/rank; the typed facade checks those).
    static std::shared_ptr<array_core> open(const Store& store, std::string_view path, Executor exec, Limits limits)
    {
        const std::string p = normalize_path(path);
        const limit_values lv = limit_values::from(limits);
        auto node = read_node(store, p, lv);
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
        return with_key_context(meta_key, [&] {
            return std::make_shared<array_core>(store, p, std::move(node->array), std::move(exec), std::move(limits));
        });
    }

    /// Create a v3 array of `dtype`.
    static std::shared_ptr<array_core> create(Store& store, std::string_view path, dtype_id dtype,
                                              const v3_options& o, Executor exec, Limits limits)
    {
        const std::string p = normalize_path(path);
        array_metadata m;
        m.zarr_format = 3;
        m.shape = o.shape;
        m.chunk_shape = o.chunk_shape;
        m.dtype = dtype;
        m.key_encoding = {o.v2_chunk_key_encoding ? chunk_key_encoding::kind::v2 : chunk_key_encoding::kind::default_,
                          o.separator};
        // Errors name the document being created, as open() names the one it reads.
        const std::string meta_key = join_key(p, "zarr.json");
        m.fill = o.fill_value.empty() ? fill_value{}
                                      : with_key_context(meta_key, [&] { return parse_fill_value(o.fill_value.to_json(), dtype, 3); });
        m.codecs = o.codecs;
        m.dimension_names = o.dimension_names;
        m.attributes = o.attributes;
        check_create_args(m, o.separator, '/', '.');
        auto core = with_key_context(meta_key, [&] {
            json doc = make_v3_array_document(m);
            array_metadata parsed = parse_v3_array(doc); // the same validation a reader applies
            return prepare_create(store, p, std::move(parsed), exec, limits, o.overwrite);
        });
        // Write the codec configurations as the bound codecs state them (defaults filled in).
        json codecs = json::array();
        for (const auto& s : core->m_chain.specs())
        {
            codecs.push_back(s.to_json());
        }
        core->m_meta.document["codecs"] = codecs;
        core->m_meta.codecs = core->m_chain.specs();
        core->m_write_empty_chunks.store(o.write_empty_chunks, std::memory_order_relaxed);
        ensure_parent_groups(store, p, 3, core->m_lv);
        write_array_metadata(store, p, core->m_meta);
        return core;
    }

    /// Create a v2 array of `dtype`.
    static std::shared_ptr<array_core> create(Store& store, std::string_view path, dtype_id dtype,
                                              const v2_options& o, Executor exec, Limits limits)
    {
        const std::string p = normalize_path(path);
        if (o.order != 'C' && o.order != 'F')
        {
            throw array_error(array_errc::invalid_argument, "v2 order must be 'C' or 'F'");
        }
        fill_value f = o.fill_value.empty() ? fill_value{} : parse_fill_value(o.fill_value.to_json(), dtype, 2);
        f.is_null = o.null_fill_value;
        array_metadata probe;
        probe.shape = o.shape;
        probe.chunk_shape = o.chunks;
        probe.dtype = dtype;
        probe.dimension_names = o.dimension_names;
        check_create_args(probe, o.dimension_separator, '.', '/');
        if (o.dimension_names && o.attributes.is_object() &&
            o.attributes.contains(v2_dimension_names_attribute))
        {
            throw array_error(
                array_errc::invalid_argument,
                "dimension names given twice: as dimension_names and as the \"_ARRAY_DIMENSIONS\" "
                "attribute");
        }
        v2_layout layout;
        layout.order = o.order;
        layout.big_endian = o.big_endian;
        layout.dimension_separator = o.dimension_separator;
        layout.compressor = o.compressor;
        layout.filters = o.filters;
        json doc = with_key_context(join_key(p, ".zarray"), [&] {
            return make_v2_array_document(o.shape, o.chunks, dtype, f, layout);
        });
        auto core = with_key_context(join_key(p, ".zarray"), [&] {
            array_metadata parsed = parse_v2_array(doc);
            parsed.attributes = o.attributes;
            parsed.dimension_names = o.dimension_names;
            // The attributes mean what they mean when the array is opened.
            lift_v2_dimension_names(parsed);
            adopt_v2_fill_value_attribute(parsed);
            return prepare_create(store, p, std::move(parsed), exec, limits, o.overwrite);
        });
        core->m_write_empty_chunks.store(o.write_empty_chunks, std::memory_order_relaxed);
        ensure_parent_groups(store, p, 2, core->m_lv);
        write_array_metadata(store, p, core->m_meta);
        return core;
    }

    std::string chunk_key(const std::uint64_t* coords, std::size_t rank) const
    {
        std::string k;
        k.reserve(m_path.size() + 8 + rank * 4);
        k += m_path;
        if (!m_path.empty())
        {
            k += '/';
        }
        m_meta.key_encoding.append_key(std::span<const std::uint64_t>(coords, rank), k);
        return k;
    }

    /// The index cache for one operation: a fresh one (per-operation policies) or the shared one.
    index_cache_base* op_cache(std::optional<IndexCache>& local)
    {
        if constexpr (IndexCache::per_operation)
        {
            local.emplace();
            return &*local;
        }
        else
        {
            return &m_cache;
        }
    }

    /// Scratch spaces for the workers of one operation, returned to the pool afterwards.
    class scratch_lease
    {
    public:
        scratch_lease(array_core& c, std::size_t n) : m_core(c)
        {
            std::lock_guard<std::mutex> g(c.m_scratch_mutex);
            for (std::size_t i = 0; i < n; ++i)
            {
                if (!c.m_scratch_free.empty())
                {
                    m_items.push_back(std::move(c.m_scratch_free.back()));
                    c.m_scratch_free.pop_back();
                }
                else
                {
                    m_items.push_back(std::make_unique<codec::scratch_space>());
                }
            }
        }
        scratch_lease(const scratch_lease&) = delete;
        scratch_lease& operator=(const scratch_lease&) = delete;
        ~scratch_lease()
        {
            std::lock_guard<std::mutex> g(m_core.m_scratch_mutex);
            // Keep at most a few spaces: they hold chunk-sized buffers. Large I/O buffers (batches
            // of a shard's inner chunks, reused within the operation) are released.
            for (auto& s : m_items)
            {
                s->release_large_buffers(std::size_t{16} << 20);
                if (m_core.m_scratch_free.size() < 16)
                {
                    m_core.m_scratch_free.push_back(std::move(s));
                }
            }
        }
        codec::scratch_space& operator[](std::size_t i) { return *m_items[i]; }

    private:
        array_core& m_core;
        std::vector<std::unique_ptr<codec::scratch_space>> m_items;
    };

    void save_metadata()
    {
        std::lock_guard<std::mutex> g(m_meta_mutex);
        write_array_metadata(m_store, m_path, m_meta);
    }

    Store m_store;
    std::string m_path;
    array_metadata m_meta;
    Executor m_exec;
    Limits m_limits;
    limit_values m_lv;
    chain_type m_chain;
    io_counters m_counters;
    IndexCache m_cache; // used when the policy is not per-operation
    // Settings a user may change while other threads read or write through the same array: each
    // operation loads them once, so an operation runs with one value throughout.
    std::atomic<bool> m_write_empty_chunks{false};
    std::atomic<corruption_policy> m_on_corruption{corruption_policy::throw_error};
    std::mutex m_meta_mutex;
    std::mutex m_scratch_mutex;
    std::vector<std::unique_ptr<codec::scratch_space>> m_scratch_free;

private:
    static void check_create_args(const array_metadata& m, char sep, char a, char b)
    {
        if (m.shape.size() != m.chunk_shape.size())
        {
            throw array_error(array_errc::invalid_argument,
                              "shape has rank " + std::to_string(m.shape.size()) + " but the chunk shape has rank "
                                  + std::to_string(m.chunk_shape.size()));
        }
        if (sep != a && sep != b)
        {
            throw array_error(array_errc::invalid_argument,
                              std::string("chunk key separator must be '") + a + "' or '" + b + "'");
        }
        if (m.dimension_names && m.dimension_names->size() != m.shape.size())
        {
            throw array_error(array_errc::invalid_argument,
                              "dimension_names has " + std::to_string(m.dimension_names->size()) +
                                  " entries for rank " + std::to_string(m.shape.size()));
        }
    }

    static std::shared_ptr<array_core> prepare_create(Store& store, const std::string& p, array_metadata m,
                                                      Executor& exec, Limits& limits, bool overwrite)
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
        return std::make_shared<array_core>(store, p, std::move(m), std::move(exec), std::move(limits));
    }
};

/// The core of an array with the default policies (zarrxt_fwd.hpp) over `Store`: the one whose
/// kernels the compiled part holds (kernel/instantiations.hpp) and the one any_array uses.
template <class Store>
using default_array_core =
    array_core<dynamic_chain, Store, operation_index_cache<>, inline_executor, default_limits>;

} // namespace zarrxt::detail
