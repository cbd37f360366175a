/** @file array.hpp
 *  `array<T, N, Codecs, Store, IndexCache, Executor, Limits>`: a typed handle to a Zarr array.
 *
 *  T and N are the caller's promise about the stored data type and rank; open() checks both and
 *  throws dtype_mismatch / rank_mismatch naming what is stored. Reads return (or fill) xtensor
 *  containers and views; writes take any xtensor expression of the region's shape, evaluated once.
 *  The handle is cheap to copy: copies share the store handle, metadata, caches and counters. Its
 *  settings (array_settings: corruption policy, write_empty_chunks) are its own values: a copy made
 *  with with_settings() reads and writes with other settings while the first goes on unchanged.
 *  Default template arguments are in zarrxt_fwd.hpp.
 */
#pragma once

#include "detail/array_core.hpp"
#include "detail/xtensor.hpp"
#include "kernel/instantiations.hpp" // read.hpp, write.hpp, and their extern templates
#include "region.hpp"
#include "store/filesystem.hpp"
#include "zarrxt_fwd.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace zarrxt
{

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
class array
{
    static_assert(element_type<T>, "zarrxt::array<T, N>: T must be a Zarr element type (bool, (u)int8..64, float16, "
                                   "float, double, std::complex<float|double>) or have a zarrxt::dtype_traits "
                                   "specialisation");
    static_assert(N <= max_rank, "zarrxt::array<T, N>: N exceeds zarrxt::max_rank (32)");

public:
    using value_type = T;
    using core_type = detail::array_core<Codecs, Store, IndexCache, Executor, Limits>;
    using chain_type = typename core_type::chain_type;
    using store_type = Store;
    using shape_type = std::array<std::uint64_t, N>;
    using region_type = region<N>;
    using tensor_type = xt::xtensor<T, N>;
    static constexpr std::size_t rank = N;
    static constexpr dtype_id dtype = dtype_of<T>();

    /// Adopt an untyped core after checking its dtype and rank (used by open, create and visit).
    explicit array(std::shared_ptr<core_type> core, array_settings settings = {});

    static array open(const Store& store, std::string_view path, Executor exec = Executor{}, Limits limits = Limits{});
    static array create(Store& store, std::string_view path, const v3_options& options,
                        Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, std::move(exec), std::move(limits));
    }
    static array create(Store& store, std::string_view path, const v2_options& options,
                        Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, std::move(exec), std::move(limits));
    }

    shape_type shape() const noexcept { return to_shape(m_core->metadata().shape); }
    shape_type chunk_shape() const noexcept { return to_shape(m_core->metadata().chunk_shape); }
    int zarr_format() const noexcept { return m_core->metadata().zarr_format; }
    const std::string& path() const noexcept { return m_core->path(); }
    const array_metadata& metadata() const noexcept { return m_core->metadata(); }
    /// The codec chain as bound (configurations with their defaults filled in).
    std::vector<codec_spec> codecs() const { return m_core->chain().specs(); }
    const chain_type& chain() const noexcept { return m_core->chain(); }
    T fill_value() const noexcept { return m_core->metadata().fill.template as<T>(); }
    Store& store() const noexcept { return m_core->store(); }

    /// The dimension names: v3 `dimension_names`, or v2's `_ARRAY_DIMENSIONS` attribute (which
    /// then is not among attributes()); empty when the array names none.
    const std::optional<dimension_name_list>& dimension_names() const noexcept
    {
        return m_core->metadata().dimension_names;
    }

    const json& attributes() const noexcept { return m_core->metadata().attributes; }
    /// Replace the attributes and write them (zarr.json for v3, .zattrs for v2). In v2 a
    /// well-formed `_ARRAY_DIMENSIONS` member among them replaces the dimension names.
    void set_attributes(json attributes) requires array_writable_store<Store>;

    /// Read a region into a new C-ordered tensor.
    tensor_type read(const region_type& r) const;
    /// Read the whole array.
    tensor_type read() const { return read(region_type::all(shape())); }

    /// Read a region into an existing container or view of the region's shape. Destinations with
    /// strides (xtensor containers, strided views) are written in place; others get a temporary.
    template <class E>
    void read_into(const region_type& r, E&& dest) const;

    /// Read into raw C-ordered memory of r.elements() values.
    void read_raw(const region_type& r, T* out) const;

    /// The result of read_checked: the values (damaged chunks as the fill value) and what was wrong.
    struct checked_read
    {
        tensor_type data;
        std::vector<chunk_problem> problems;
    };
    /// Read with the `collect` corruption policy: never fails on damaged chunks, reports each one.
    checked_read read_checked(const region_type& r) const;

    /// This handle's settings: what read() does with chunks it cannot decode (default: throw) and
    /// whether writes keep chunks that hold only the fill value (default: no, they are erased).
    const array_settings& settings() const noexcept { return m_settings; }
    /// A handle to the same array (sharing store, metadata, caches, counters) with other settings.
    array with_settings(const array_settings& s) const { return array(m_core, s, adopt_tag{}); }
    array with_corruption_policy(corruption_policy p) const
    {
        array_settings s = m_settings;
        s.on_corruption = p;
        return with_settings(s);
    }
    array with_write_empty_chunks(bool keep) const
    {
        array_settings s = m_settings;
        s.write_empty_chunks = keep;
        return with_settings(s);
    }

    /// Write an expression of the region's shape (evaluated once).
    template <class E>
    void write(const region_type& r, const xt::xexpression<E>& e) requires array_writable_store<Store>;

    /// Write raw C-ordered memory of r.elements() values.
    void write_raw(const region_type& r, const T* data) requires array_writable_store<Store>;

    io_stats stats() const noexcept { return m_core->counters().snapshot(); }
    void reset_stats() noexcept { m_core->counters().reset(); }
    /// The persistent index cache (meaningful for lru_index_cache).
    IndexCache& index_cache() noexcept { return m_core->index_cache(); }

    const std::shared_ptr<core_type>& core() const noexcept { return m_core; }

private:
    struct adopt_tag
    {
    };
    // A copy of a checked handle with other settings: the core was checked when it was adopted.
    array(std::shared_ptr<core_type> core, const array_settings& s, adopt_tag)
        : m_core(std::move(core))
        , m_settings(s)
    {
    }
    static shape_type to_shape(const std::vector<std::uint64_t>& v) noexcept
    {
        shape_type s{};
        for (std::size_t i = 0; i < N; ++i)
        {
            s[i] = v[i];
        }
        return s;
    }
    template <class Options>
    static array create_with(Store& store, std::string_view path, const Options& options, Executor exec, Limits limits);
    void check_read(const region_type& r) const;
    void check_write(const region_type& r) const;
    /// Region and value errors name the array (its path, "/" for the root), as open() does.
    template <class F>
    void named(F&& f) const
    {
        try
        {
            f();
        }
        catch (error& e)
        {
            e.with_key(m_core->path().empty() ? std::string("/") : m_core->path());
            throw;
        }
    }
    template <class Shape>
    void check_shape(const region_type& r, const Shape& shape) const;

    std::shared_ptr<core_type> m_core;
    array_settings m_settings;
};

/******************
 * free functions *
 ******************/

// open() and create() are declared, with their defaults, in zarrxt_fwd.hpp.
template <class T, std::size_t N, class Codecs, class IndexCache, class Executor, class Limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> open(const Store& store, std::string_view path, Executor exec,
                                                             Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::open(store, path, std::move(exec),
                                                                          std::move(limits));
}

template <class T, std::size_t N, class Codecs, class IndexCache, class Executor, class Limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                               const v3_options& options, Executor exec, Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create(store, path, options, std::move(exec),
                                                                            std::move(limits));
}

template <class T, std::size_t N, class Codecs, class IndexCache, class Executor, class Limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                               const v2_options& options, Executor exec, Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create(store, path, options, std::move(exec),
                                                                            std::move(limits));
}

/******************
 * implementation *
 ******************/

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
array<T, N, Codecs, Store, IndexCache, Executor, Limits>::array(std::shared_ptr<core_type> core,
                                                                array_settings settings)
    : m_core(std::move(core))
    , m_settings(settings)
{
    const array_metadata& m = m_core->metadata();
    const std::string where = m_core->path().empty() ? std::string("/") : m_core->path();
    if (m.dtype != dtype)
    {
        dtype_mismatch e("the array stores " + std::string(name(m.dtype)) + " but array<" + std::string(name(dtype))
                         + ", " + std::to_string(N) + "> was requested");
        e.with_key(where);
        throw e;
    }
    if (m.rank() != N)
    {
        rank_mismatch e("the array has rank " + std::to_string(m.rank()) + " but array<" + std::string(name(dtype))
                        + ", " + std::to_string(N) + "> was requested");
        e.with_key(where);
        throw e;
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::open(const Store& store, std::string_view path,
                                                                    Executor exec, Limits limits) -> array
{
    return array(core_type::open(store, path, std::move(exec), std::move(limits)));
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class Options>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create_with(Store& store, std::string_view path,
                                                                           const Options& options, Executor exec,
                                                                           Limits limits) -> array
{
    if (options.shape.size() != N)
    {
        throw rank_mismatch("create: the options give rank " + std::to_string(options.shape.size()) + " for array<"
                            + std::string(name(dtype)) + ", " + std::to_string(N) + ">");
    }
    return array(core_type::create(store, path, dtype, options, std::move(exec), std::move(limits)),
                 array_settings{.write_empty_chunks = options.write_empty_chunks});
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::set_attributes(json attributes) requires
    array_writable_store<Store>
{
    if (!attributes.is_object())
    {
        throw array_error(array_errc::invalid_argument, "attributes must be a JSON object");
    }
    m_core->set_attributes(std::move(attributes));
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::check_read(const region_type& r) const
{
    named(
        [&]
        {
            detail::check_region(r, m_core->metadata().shape);
            check_limit("max_read_elements", r.elements(), m_core->limits().max_read_elements);
        });
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::check_write(const region_type& r) const
{
    named([&] { detail::check_region(r, m_core->metadata().shape); });
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class Shape>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::check_shape(const region_type& r, const Shape& shape) const
{
    bool ok = shape.size() == N;
    for (std::size_t d = 0; ok && d < N; ++d)
    {
        ok = static_cast<std::uint64_t>(shape[d]) == r.extent[d];
    }
    if (!ok)
    {
        std::vector<std::uint64_t> got(shape.begin(), shape.end());
        named([&] {
            throw array_error(array_errc::shape_mismatch, "value has shape " + detail::format_extents(got.data(), got.size())
                                                              + ", the region has extent "
                                                              + detail::format_extents(r.extent.data(), N));
        });
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read(const region_type& r) const -> tensor_type
{
    check_read(r);
    typename tensor_type::shape_type shape;
    for (std::size_t d = 0; d < N; ++d)
    {
        shape[d] = static_cast<std::size_t>(r.extent[d]);
    }
    tensor_type out = tensor_type::from_shape(shape);
    // The result is fresh memory the read touches first: large ones get huge pages (see buffer.hpp).
    detail::advise_huge_pages(out.data(), out.size() * sizeof(T));
    read_raw(r, out.data());
    return out;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_raw(const region_type& r, T* out) const
{
    check_read(r);
    kernel::strides_t<N> strides{};
    std::int64_t acc = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        strides[d] = acc;
        acc *= static_cast<std::int64_t>(r.extent[d]);
    }
    m_core->template read<N>(r, reinterpret_cast<std::byte*>(out), strides, m_settings.on_corruption);
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_checked(const region_type& r) const -> checked_read
{
    check_read(r);
    typename tensor_type::shape_type shape;
    kernel::strides_t<N> strides{};
    std::int64_t acc = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        shape[d] = static_cast<std::size_t>(r.extent[d]);
        strides[d] = acc;
        acc *= static_cast<std::int64_t>(r.extent[d]);
    }
    checked_read result{tensor_type::from_shape(shape), {}};
    problem_list problems;
    m_core->template read<N>(r, reinterpret_cast<std::byte*>(result.data.data()), strides,
                             corruption_policy::collect, &problems);
    result.problems = problems.take();
    return result;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class E>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_into(const region_type& r, E&& dest) const
{
    using D = std::decay_t<E>;
    check_read(r);
    check_shape(r, dest.shape());
    if constexpr (detail::strided_destination<D> && std::is_same_v<std::decay_t<decltype(*dest.data())>, T>)
    {
        auto strides = detail::to_strides<N>(dest.strides());
        m_core->template read<N>(r, reinterpret_cast<std::byte*>(dest.data() + dest.data_offset()), strides,
                                 m_settings.on_corruption);
    }
    else
    {
        dest = read(r);
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class E>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::write(
    const region_type& r, const xt::xexpression<E>& e) requires array_writable_store<Store>
{
    check_write(r);
    const E& expr = e.derived_cast();
    check_shape(r, expr.shape());
    using V = std::decay_t<typename E::value_type>;
    if constexpr (detail::strided_destination<const E> && std::is_same_v<V, T>)
    {
        // A container or strided view: write from its memory without a copy.
        auto strides = detail::to_strides<N>(expr.strides());
        m_core->template write<N>(r, reinterpret_cast<const std::byte*>(expr.data() + expr.data_offset()),
                                  strides, m_settings.write_empty_chunks);
    }
    else
    {
        const tensor_type evaluated = expr; // evaluate the expression exactly once
        write_raw(r, evaluated.data());
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::write_raw(
    const region_type& r, const T* data) requires array_writable_store<Store>
{
    check_write(r);
    kernel::strides_t<N> strides{};
    std::int64_t acc = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        strides[d] = acc;
        acc *= static_cast<std::int64_t>(r.extent[d]);
    }
    m_core->template write<N>(r, reinterpret_cast<const std::byte*>(data), strides,
                              m_settings.write_empty_chunks);
}

} // namespace zarrxt
