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
#include "detail/core_instantiations.hpp" // the default cores, compiled once under the valve
#include "detail/fresh_memory.hpp"
#include "detail/xtensor.hpp"
#include "fixed_string.hpp"
#include "kernel/instantiations.hpp" // read.hpp, write.hpp, and their extern templates
#include "record.hpp"
#include "region.hpp"
#include "selection.hpp"
#include "store/filesystem.hpp"
#include "vlen.hpp"
#include "zarrxt_fwd.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace zarrxt
{

namespace detail
{
/// The dtype an element type names: std::string stands for the fixed-width strings (either kind;
/// the stored one is checked at open), every other type for its dtype_traits id.
template <class T>
constexpr dtype_id nominal_dtype() noexcept
{
    if constexpr (std::is_same_v<T, std::string>)
    {
        return dtype_id::fixed_utf32;
    }
    else if constexpr (record_type<T>)
    {
        return dtype_id::structured;
    }
    else
    {
        return dtype_of<T>();
    }
}

/// The name of user data type T (empty for every other type).
template <class T>
constexpr std::string_view user_type_name() noexcept
{
    if constexpr (requires { dtype_traits<T>::name; })
    {
        return dtype_traits<T>::name;
    }
    else
    {
        return {};
    }
}

/// `registry` with T's user data type added when T is one (opening as array<T, N> says the type).
template <class T>
codec_registry with_element_dtype(const codec_registry& registry)
{
    if constexpr (is_user(nominal_dtype<T>()))
    {
        codec_registry r = registry;
        r.add_dtype<T>();
        return r;
    }
    else
    {
        return registry;
    }
}
} // namespace detail

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
class array
{
    static_assert(element_type<T> || std::is_same_v<T, std::string> || record_type<T>,
                  "zarrxt::array<T, N>: T must be a Zarr element type (bool, (u)int8..64, float16, "
                  "float, double, std::complex<float|double>, std::chrono::sys_time<D>, "
                  "std::chrono::duration<std::int64_t, P>), std::string, a struct described by "
                  "ZARRXT_RECORD, or have a zarrxt::dtype_traits specialisation");
    static_assert(
        detail::nominal_dtype<T>() != dtype_id::user || user_element_type<T>,
        "zarrxt::array<T, N>: a user data type's dtype_traits must state name, fill_from_json(json) -> T "
        "and fill_to_json(T) -> json (user_dtype.hpp)");
    static_assert(N <= max_rank, "zarrxt::array<T, N>: N exceeds zarrxt::max_rank (32)");
    static_assert(!is_time(detail::nominal_dtype<T>()) || time_unit_for<T>().has_value(),
                  "zarrxt::array<T, N>: the period of this std::chrono type is no numpy time unit (a whole "
                  "number, up to 2^31-1, of Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)");
    static_assert(detail::nominal_dtype<T>() != dtype_id::datetime64 || !time_unit_for<T>().has_value() ||
                      (time_unit_for<T>()->base != time_base::Y && time_unit_for<T>()->base != time_base::M),
                  "zarrxt::array<T, N>: numpy's Y and M datetimes count calendar years and months, which a "
                  "std::chrono time point cannot; read such arrays as std::int64_t counts");

public:
    using value_type = T;
    using core_type = detail::array_core<Codecs, Store, IndexCache, Executor, Limits>;
    using chain_type = typename core_type::chain_type;
    using store_type = Store;
    using shape_type = std::array<std::uint64_t, N>;
    using region_type = region<N>;
    using tensor_type = xt::xtensor<T, N>;
    static constexpr std::size_t rank = N;
    /// std::string: fixed-width strings, |S n or <U n (the stored one is metadata().dtype).
    static constexpr bool is_string = std::is_same_v<T, std::string>;
    /// A struct described as a record (record.hpp): the v2 structured / v3 struct types.
    static constexpr bool is_record = record_type<T>;
    static constexpr dtype_id dtype = detail::nominal_dtype<T>();
    /// A user data type (user_dtype.hpp): T's dtype_traits describes it; opening and creating add
    /// it to the registry the array is opened with.
    static constexpr bool is_user_type = is_user(dtype);
    /// The element type as messages name it.
    static constexpr std::string_view type_name = is_string      ? std::string_view("std::string")
                                                  : is_record    ? std::string_view("a record struct")
                                                  : is_user_type ? detail::user_type_name<T>()
                                                                 : name(dtype);

    /// Adopt an untyped core after checking its dtype and rank (used by open, create and visit).
    explicit array(std::shared_ptr<core_type> core, array_settings settings = {});

    static array open(const Store& store, std::string_view path, Executor exec = Executor{}, Limits limits = Limits{});
    /// Open with user codecs: a dynamic chain (and a shard's inner chain) knows the codecs of
    /// `registry` besides the built-ins (codec/codec_registry.hpp).
    static array open(const Store& store, std::string_view path, const codec_registry& registry,
                      Executor exec = Executor{}, Limits limits = Limits{});
    static array create(Store& store, std::string_view path, const v3_options& options,
                        Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, codec_registry{}, std::move(exec), std::move(limits));
    }
    static array create(Store& store, std::string_view path, const v2_options& options,
                        Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, codec_registry{}, std::move(exec), std::move(limits));
    }
    /// Create with user codecs (as open with a registry): `options.codecs` may name them.
    static array create(Store& store, std::string_view path, const v3_options& options,
                        const codec_registry& registry, Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, registry, std::move(exec), std::move(limits));
    }
    static array create(Store& store, std::string_view path, const v2_options& options,
                        const codec_registry& registry, Executor exec = Executor{},
                        Limits limits = Limits{}) requires array_writable_store<Store>
    {
        return create_with(store, path, options, registry, std::move(exec), std::move(limits));
    }

    shape_type shape() const noexcept { return to_shape(m_core->metadata().shape); }
    shape_type chunk_shape() const noexcept { return to_shape(m_core->metadata().chunk_shape); }
    int zarr_format() const noexcept { return m_core->metadata().zarr_format; }
    const std::string& path() const noexcept { return m_core->path(); }
    const array_metadata& metadata() const noexcept { return m_core->metadata(); }
    /// The codec chain as bound (configurations with their defaults filled in).
    std::vector<codec_spec> codecs() const { return m_core->chain().specs(); }
    const chain_type& chain() const noexcept { return m_core->chain(); }
    T fill_value() const
    {
        if constexpr (is_record)
        {
            T v{};
            unpack_record(m_core->metadata().fill.data(), v);
            return v;
        }
        else if constexpr (is_user_type)
        {
            T v;
            std::memcpy(&v, m_core->metadata().fill.data(), sizeof(T));
            return v;
        }
        else if constexpr (is_string)
        {
            const array_metadata& m = m_core->metadata();
            if (is_vlen(m.dtype))
            {
                return m.fill.text ? *m.fill.text : std::string();
            }
            return decode_fixed_string(m.dtype, m.fill.data(), m.dtype.fixed_size);
        }
        else
        {
            return m_core->metadata().fill.template as<T>();
        }
    }
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

    /// Read a selection written as for xt::view, one slice per axis (selection.hpp): ranges with
    /// steps, xt::all(), integers (the axis is dropped), xt::keep / xt::drop, index vectors and
    /// std::vector<bool> masks. `a.read(xt::range(0, 100, 10), 3, xt::all())` is rank 2.
    template <selection_slice... S>
    xt::xtensor<T, kept_axes<S...>> read(const S&... s) const requires(sizeof...(S) == N && N > 0)
    {
        return read(selection<S...>{std::tuple<S...>(s...)});
    }
    template <class... S>
    xt::xtensor<T, kept_axes<S...>> read(const selection<S...>& sel) const
        requires(sizeof...(S) == N && N > 0);

    /// Read the elements at `points` (coordinate selection), in their order.
    xt::xtensor<T, 1> read_points(const std::vector<std::array<std::uint64_t, N>>& points) const;

    /// One element (a negative index is array.3, as one past the end is).
    template <std::integral... I>
    T at(I... i) const requires(sizeof...(I) == N)
    {
        region_type r;
        bool negative = false;
        std::size_t d = 0;
        ((negative = negative || std::cmp_less(i, 0), r.offset[d] = static_cast<std::uint64_t>(i),
          r.extent[d] = 1, ++d),
         ...);
        if (negative)
        {
            named([&] { throw array_error(array_errc::out_of_bounds, "at() with a negative index"); });
        }
        T v{};
        read_raw(r, &v);
        return v;
    }

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

    /// Write an expression of the selection's shape into the selected elements (select(...), as
    /// for read). Each box of the plan is one masked write: every chunk it touches is rewritten
    /// once, under the store's per-key lock, keeping its unselected elements. Where an index
    /// repeats, the last value given for it is stored.
    template <class... S, class E>
    void write(const selection<S...>& sel, const xt::xexpression<E>& e) requires(sizeof...(S) == N && N > 0 &&
                                                                                 array_writable_store<Store>);

    /// Write values[k] at points[k] (last one wins where points repeat).
    template <class E>
    void write_points(const std::vector<std::array<std::uint64_t, N>>& points,
                      const xt::xexpression<E>& values) requires array_writable_store<Store>;

    /// Write raw C-ordered memory of r.elements() values.
    void write_raw(const region_type& r, const T* data) requires array_writable_store<Store>;

    /// Grow or shrink any axes to `new_shape` (v2 and v3), starting from the shape stored now. The
    /// stored objects wholly outside the new shape are erased; in the edge chunks a boundary cuts,
    /// the part outside the shape is set to the fill value, so what a later grow uncovers reads as
    /// the fill value. The metadata document is written last, in one atomic replacement: readers
    /// that open the array see the old shape or the new one. This handle takes the new shape;
    /// other handles keep the shape they have until refresh(). Not serialised between writers:
    /// see docs/resize.md.
    void resize(const shape_type& new_shape) requires array_writable_store<Store>;

    /// Append `e` along `axis`: its extent on every other axis must be the array's; the array grows
    /// by its extent on `axis` (from the shape stored now) and `e` is written there before the
    /// new shape is committed, so a reader never sees the grown shape before its data (and a
    /// writer that dies midway leaves the old shape). Returns the region written.
    template <class E>
    region_type append(std::size_t axis, const xt::xexpression<E>& e) requires array_writable_store<Store>;

    /// Re-read the stored metadata (shape, attributes): after another handle or process resized
    /// or appended to the array.
    void refresh() { m_core = checked(m_core->reopened()); }

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
    /// `core` after the dtype and rank checks of the constructor (a reopened core may hold
    /// metadata that another process replaced).
    std::shared_ptr<core_type> checked(std::shared_ptr<core_type> core) const
    {
        return array(std::move(core), m_settings).m_core;
    }
    /// The box buffer of one selection (values, and a mask for writes): grown to the largest box,
    /// never shrunk, so the boxes of a plan reuse one allocation.
    struct box_buffer
    {
        std::unique_ptr<T[]> values;
        std::unique_ptr<std::uint8_t[]> mask;
        std::uint64_t size = 0;

        /// Room for n elements; with `masked`, the first n mask bytes cleared.
        void fit(std::uint64_t n, bool masked)
        {
            if (n > size)
            {
                size = n;
                values = std::make_unique<T[]>(static_cast<std::size_t>(n));
                mask = masked ? std::make_unique<std::uint8_t[]>(static_cast<std::size_t>(n)) : nullptr;
            }
            if (masked)
            {
                std::fill_n(mask.get(), n, std::uint8_t{0});
            }
        }
    };
    /// Points grouped by read unit (indices into `points`), after a bounds check (array.3).
    std::vector<std::vector<std::size_t>> point_groups(
        const std::vector<std::array<std::uint64_t, N>>& points) const;
    /// The bounding box of a group of points.
    static region_type points_box(const std::vector<std::array<std::uint64_t, N>>& points,
                                  const std::vector<std::size_t>& group);
    /// The C-order offset of point p inside box r.
    static std::uint64_t offset_in(const region_type& r, const std::array<std::uint64_t, N>& p);
    /// Write the elements of a C-ordered box where mask is non-zero (all of them when mask is null).
    void write_masked(const region_type& r, const T* data,
                      const std::uint8_t* mask) requires array_writable_store<Store>;
    template <class Options>
    static array create_with(Store& store, std::string_view path, const Options& options,
                             const codec_registry& registry, Executor exec, Limits limits);
    void check_read(const region_type& r) const;
    void check_write(const region_type& r) const;
    /// A fresh result that the read will write in full: when it is large, map it first, by the
    /// executor's workers, with huge pages while they pay (detail/fresh_memory.hpp). Elements that
    /// construction already wrote (strings) are mapped already.
    void prepare_result(T* out, std::size_t elements) const
    {
        if constexpr (std::is_trivially_default_constructible_v<T>)
        {
            detail::prepare_fresh(out, elements * sizeof(T), m_core->executor());
        }
    }
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
    /// std::string arrays: read box r (C order) into out through a buffer of its stored elements
    /// (fixed-width) or of vlen_element values kept in an arena of this read (variable-length).
    /// A <U element that is no text is the error, naming its chunk, or with the fill / collect
    /// policies the fill value (and, for collect, a problem); a vlen-utf8 chunk that is no text
    /// fails in its codec, like any damaged chunk. A member template (S is std::string), so that
    /// an explicit instantiation of array<T, N> for another T does not compile it (clang 14
    /// instantiated the body of a member constrained to std::string for every T).
    template <class S>
    void read_strings(const region_type& r, S* out, corruption_policy policy, problem_list* problems) const;
    /// Record structs: read box r (C order) into out through a buffer of its packed records, each
    /// unpacked member by member. A member template for the reason read_strings is.
    template <class S>
    void read_records(const region_type& r, S* out, corruption_policy policy, problem_list* problems) const;

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
array<T, N, Codecs, Store, IndexCache, Executor, Limits> open(const Store& store, std::string_view path,
                                                              const codec_registry& registry, Executor exec,
                                                              Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::open(store, path, registry,
                                                                          std::move(exec), std::move(limits));
}

template <class T, std::size_t N, class Codecs, class IndexCache, class Executor, class Limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                                const v3_options& options,
                                                                const codec_registry& registry, Executor exec,
                                                                Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create(
        store, path, options, registry, std::move(exec), std::move(limits));
}

template <class T, std::size_t N, class Codecs, class IndexCache, class Executor, class Limits, class Store>
array<T, N, Codecs, Store, IndexCache, Executor, Limits> create(Store& store, std::string_view path,
                                                                const v2_options& options,
                                                                const codec_registry& registry, Executor exec,
                                                                Limits limits)
{
    return array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create(
        store, path, options, registry, std::move(exec), std::move(limits));
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
    // A time array is also readable as its raw int64 counts (NaT is then zarrxt::nat).
    const bool raw_counts = dtype == dtype_id::int64 && is_time(m.dtype);
    bool matches = is_string ? is_string_like(m.dtype) : m.dtype == dtype || raw_counts;
    if constexpr (is_user_type)
    {
        // A user type is its name and size, not its kind.
        matches =
            matches && m.dtype.user && m.dtype.user->name == type_name && m.dtype.user->size == sizeof(T);
    }
    if constexpr (is_record)
    {
        // The struct's fields, in order, with their types; the stored byte orders do not matter.
        if (matches && !same_fields(m.dtype.fields, record_fields_of<T>()))
        {
            dtype_mismatch e("the array stores records " + describe_fields(m.dtype.fields) + " but the struct describes " +
                             describe_fields(record_fields_of<T>()));
            e.with_key(where);
            throw e;
        }
    }
    if (!matches)
    {
        dtype_mismatch e("the array stores " + std::string(name(m.dtype)) + " but array<" +
                         std::string(type_name) + ", " + std::to_string(N) + "> was requested");
        e.with_key(where);
        throw e;
    }
    if constexpr (is_time(dtype))
    {
        if (!same_length(m.dtype.unit, *time_unit_for<T>()))
        {
            dtype_mismatch e("the array stores " + std::string(name(m.dtype)) + " in units of " +
                             to_string(m.dtype.unit) + " but the element type counts " +
                             to_string(*time_unit_for<T>()));
            e.with_key(where);
            throw e;
        }
    }
    if (m.rank() != N)
    {
        rank_mismatch e("the array has rank " + std::to_string(m.rank()) + " but array<" +
                        std::string(type_name) + ", " + std::to_string(N) + "> was requested");
        e.with_key(where);
        throw e;
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::open(const Store& store, std::string_view path,
                                                                    Executor exec, Limits limits) -> array
{
    return array(core_type::open(store, path, std::move(exec), std::move(limits),
                                 detail::with_element_dtype<T>(codec_registry{})));
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::open(const Store& store, std::string_view path,
                                                                    const codec_registry& registry,
                                                                    Executor exec, Limits limits) -> array
{
    return array(core_type::open(store, path, std::move(exec), std::move(limits),
                                 detail::with_element_dtype<T>(registry)));
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class Options>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::create_with(Store& store,
                                                                           std::string_view path,
                                                                           const Options& options,
                                                                           const codec_registry& registry,
                                                                           Executor exec, Limits limits)
    -> array
{
    if (options.shape.size() != N)
    {
        throw rank_mismatch("create: the options give rank " + std::to_string(options.shape.size()) +
                            " for array<" + std::string(type_name) + ", " + std::to_string(N) + ">");
    }
    if constexpr (is_time(dtype))
    {
        // The element type says the unit; options that say another one are a mistake.
        if (!options.unit)
        {
            Options with_unit = options;
            with_unit.unit = time_unit_for<T>();
            return create_with(store, path, with_unit, registry, std::move(exec), std::move(limits));
        }
        if (!same_length(*options.unit, *time_unit_for<T>()))
        {
            throw array_error(array_errc::invalid_argument,
                              "create: options.unit is " + to_string(*options.unit) +
                                  " but the element type counts " + to_string(*time_unit_for<T>()));
        }
    }
    data_type stored(dtype);
    if constexpr (is_user_type)
    {
        if constexpr (std::is_same_v<Options, v2_options>)
        {
            throw metadata_error(metadata_errc::unsupported_dtype,
                                 "create: the user data type \"" + std::string(type_name) +
                                     "\" has no Zarr v2 (numpy) data type; use Zarr v3");
        }
        stored.user = make_user_dtype<T>();
        stored.fixed_size = sizeof(T);
    }
    if constexpr (is_record)
    {
        if (options.fields.empty())
        {
            Options described = options;
            described.fields = record_fields_of<T>();
            return create_with(store, path, described, registry, std::move(exec), std::move(limits));
        }
        // Fields given as well must be the struct's: checked before anything is stored.
        std::vector<record_field> given = options.fields;
        layout_record(given);
        if (!same_fields(given, record_fields_of<T>()))
        {
            throw array_error(array_errc::invalid_argument, "create: options.fields " + describe_fields(given) +
                                                                " are not the struct's " +
                                                                describe_fields(record_fields_of<T>()));
        }
    }
    if constexpr (is_string)
    {
        if (!options.string)
        {
            throw array_error(array_errc::invalid_argument,
                              "create: an array of std::string needs options.string "
                              "(zarrxt::fixed_length_utf32(n) or zarrxt::null_terminated_bytes(n))");
        }
        stored = options.string->id;
    }
    return array(core_type::create(store, path, stored, options, std::move(exec), std::move(limits),
                                   detail::with_element_dtype<T>(registry)),
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
    prepare_result(out.data(), out.size());
    read_raw(r, out.data());
    return out;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_raw(const region_type& r, T* out) const
{
    check_read(r);
    if constexpr (is_string)
    {
        read_strings(r, out, m_settings.on_corruption, nullptr);
    }
    else if constexpr (is_record)
    {
        read_records(r, out, m_settings.on_corruption, nullptr);
    }
    else
    {
        m_core->template read<N>(r, reinterpret_cast<std::byte*>(out), kernel::c_strides<N>(r.extent),
                                 m_settings.on_corruption);
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class S>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_records(const region_type& r, S* out,
                                                                           corruption_policy policy,
                                                                           problem_list* problems) const
{
    static_assert(record_type<S>, "read_records reads described structs");
    const std::size_t width = m_core->metadata().element_size();
    const std::uint64_t n = r.elements();
    std::vector<std::byte> raw(
        detail::to_size(detail::checked_mul(n, width, "record region bytes"), "record region bytes"));
    m_core->template read<N>(r, raw.data(), kernel::c_strides<N>(r.extent), policy, problems);
    for (std::uint64_t i = 0; i < n; ++i)
    {
        unpack_record(raw.data() + i * width, out[i]);
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class S>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_strings(const region_type& r, S* out,
                                                                           corruption_policy policy,
                                                                           problem_list* problems) const
{
    static_assert(std::is_same_v<S, std::string>, "read_strings reads std::string elements");
    const array_metadata& m = m_core->metadata();
    const std::size_t width = m.element_size();
    const std::uint64_t n = r.elements();
    std::vector<std::byte> raw(
        detail::to_size(detail::checked_mul(n, width, "string region bytes"), "string region bytes"));
    if (is_vlen(m.dtype))
    {
        value_arena arena(m_core->limits().max_bytes_in_flight);
        m_core->template read<N>(r, raw.data(), kernel::c_strides<N>(r.extent), policy, problems, &arena);
        for (std::uint64_t i = 0; i < n; ++i)
        {
            vlen_element e;
            std::memcpy(&e, raw.data() + i * width, sizeof e);
            out[i] = std::string(e.view());
        }
        return;
    }
    m_core->template read<N>(r, raw.data(), kernel::c_strides<N>(r.extent), policy, problems);
    for (std::uint64_t i = 0; i < n; ++i)
    {
        try
        {
            out[i] = decode_fixed_string(m.dtype, raw.data() + i * width, width);
        }
        catch (error& e)
        {
            // Name the stored object that holds the element (the chunk, or the shard).
            std::vector<std::uint64_t> coords(N);
            std::uint64_t rest = i;
            for (std::size_t d = N; d-- > 0;)
            {
                coords[d] = m.chunk_index(d, r.offset[d] + rest % r.extent[d]);
                rest /= r.extent[d];
            }
            e.with_key(m_core->chunk_key(coords.data(), N));
            if (policy == corruption_policy::throw_error)
            {
                throw;
            }
            out[i] = decode_fixed_string(m.dtype, m.fill.data(), width);
            if (problems)
            {
                problems->add(e);
            }
        }
    }
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_checked(const region_type& r) const -> checked_read
{
    check_read(r);
    typename tensor_type::shape_type shape;
    for (std::size_t d = 0; d < N; ++d)
    {
        shape[d] = static_cast<std::size_t>(r.extent[d]);
    }
    checked_read result{tensor_type::from_shape(shape), {}};
    prepare_result(result.data.data(), result.data.size());
    problem_list problems;
    if constexpr (is_string)
    {
        read_strings(r, result.data.data(), corruption_policy::collect, &problems);
    }
    else if constexpr (is_record)
    {
        read_records(r, result.data.data(), corruption_policy::collect, &problems);
    }
    else
    {
        m_core->template read<N>(r, reinterpret_cast<std::byte*>(result.data.data()),
                                 kernel::c_strides<N>(r.extent), corruption_policy::collect, &problems);
    }
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
    if constexpr (detail::strided_destination<D> && std::is_same_v<std::decay_t<decltype(*dest.data())>, T> &&
                  !is_string && !is_record)
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
    if constexpr (detail::strided_destination<const E> && std::is_same_v<V, T> && !is_string && !is_record)
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
    write_masked(r, data, nullptr);
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::resize(const shape_type& new_shape) requires
    array_writable_store<Store>
{
    named(
        [&]
        {
            std::shared_ptr<core_type> current = checked(m_core->reopened());
            std::shared_ptr<core_type> next =
                current->template resize_to<N>(new_shape, m_settings.write_empty_chunks);
            if (next->metadata().shape != current->metadata().shape)
            {
                next->commit_metadata();
            }
            m_core = std::move(next);
        });
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class E>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::append(std::size_t axis,
                                                                      const xt::xexpression<E>& e)
    -> region_type requires array_writable_store<Store>
{
    const E& expr = e.derived_cast();
    region_type r;
    named(
        [&]
        {
            if (axis >= N)
            {
                throw array_error(array_errc::invalid_argument, "append along axis " + std::to_string(axis) +
                                                                    " of an array of rank " +
                                                                    std::to_string(N));
            }
            std::shared_ptr<core_type> current = checked(m_core->reopened());
            const auto& shape = expr.shape();
            std::vector<std::uint64_t> grown = current->metadata().shape;
            bool ok = shape.size() == N;
            for (std::size_t d = 0; ok && d < N; ++d)
            {
                ok = d == axis || static_cast<std::uint64_t>(shape[d]) == grown[d];
            }
            if (!ok)
            {
                std::vector<std::uint64_t> got(shape.begin(), shape.end());
                throw array_error(
                    array_errc::shape_mismatch,
                    "append of a value of shape " + detail::format_extents(got.data(), got.size()) +
                        " along axis " + std::to_string(axis) + " to an array of shape " +
                        detail::format_extents(grown.data(), grown.size()) + ": every other axis must match");
            }
            r.extent = to_shape(grown);
            r.offset[axis] = grown[axis];
            r.extent[axis] = static_cast<std::uint64_t>(shape[axis]);
            if (__builtin_add_overflow(grown[axis], r.extent[axis], &grown[axis]))
            {
                throw array_error(array_errc::invalid_argument,
                                  "append overflows the extent of axis " + std::to_string(axis));
            }
            std::shared_ptr<core_type> next = current->with_shape(grown);
            if (r.extent[axis] != 0)
            {
                array(next, m_settings, adopt_tag{}).write(r, expr);
                next->commit_metadata();
            }
            m_core = std::move(next);
        });
    return r;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class... S>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read(const selection<S...>& sel) const
    -> xt::xtensor<T, kept_axes<S...>>
requires(sizeof...(S) == N && N > 0)
{
    using result_type = xt::xtensor<T, kept_axes<S...>>;
    result_type out;
    named(
        [&]
        {
            const array_metadata& m = m_core->metadata();
            const auto plan = detail::plan_selection<N>(sel.slices, m.shape, detail::selection_unit(m));
            check_limit("max_read_elements", plan.elements(), m_core->limits().max_read_elements);
            const auto extents = detail::kept_counts<S...>(plan);
            typename result_type::shape_type shape;
            std::copy(extents.begin(), extents.end(), shape.begin());
            out = result_type::from_shape(shape);
            prepare_result(out.data(), out.size());
            box_buffer box;
            plan.template for_each_cell<region_type>(
                [&](const region_type& r, const auto& groups)
                {
                    check_limit("max_read_elements", r.elements(), m_core->limits().max_read_elements);
                    box.fit(r.elements(), false);
                    read_raw(r, box.values.get());
                    detail::for_each_pick<N>(groups, plan.counts,
                                             [&](std::uint64_t b, std::uint64_t o)
                                             { out.data()[o] = box.values[b]; });
                });
        });
    return out;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class... S, class E>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::write(
    const selection<S...>& sel,
    const xt::xexpression<E>& e) requires(sizeof...(S) == N && N > 0 && array_writable_store<Store>)
{
    constexpr std::size_t M = kept_axes<S...>;
    const E& expr = e.derived_cast();
    named(
        [&]
        {
            const array_metadata& m = m_core->metadata();
            const auto plan = detail::plan_selection<N>(sel.slices, m.shape, detail::selection_unit(m));
            const std::array<std::uint64_t, M> want = detail::kept_counts<S...>(plan);
            const auto& shape = expr.shape();
            bool ok = shape.size() == M;
            for (std::size_t d = 0; ok && d < M; ++d)
            {
                ok = static_cast<std::uint64_t>(shape[d]) == want[d];
            }
            if (!ok)
            {
                std::vector<std::uint64_t> got(shape.begin(), shape.end());
                throw array_error(array_errc::shape_mismatch,
                                  "value has shape " + detail::format_extents(got.data(), got.size()) +
                                      ", the selection has shape " + detail::format_extents(want.data(), M));
            }
            const xt::xtensor<T, M> values = expr; // evaluated once, C order
            box_buffer box;
            plan.template for_each_cell<region_type>(
                [&](const region_type& r, const auto& groups)
                {
                    check_limit("max_read_elements", r.elements(), m_core->limits().max_read_elements);
                    box.fit(r.elements(), true);
                    detail::for_each_pick<N>(groups, plan.counts,
                                             [&](std::uint64_t b, std::uint64_t o)
                                             {
                                                 box.values[b] = values.data()[o];
                                                 box.mask[b] = 1;
                                             });
                    write_masked(r, box.values.get(), box.mask.get());
                });
        });
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::point_groups(
    const std::vector<std::array<std::uint64_t, N>>& points) const -> std::vector<std::vector<std::size_t>>
{
    const array_metadata& m = m_core->metadata();
    const std::vector<std::uint64_t> unit = detail::selection_unit(m);
    for (std::size_t k = 0; k < points.size(); ++k)
    {
        for (std::size_t d = 0; d < N; ++d)
        {
            if (points[k][d] >= m.shape[d])
            {
                throw array_error(array_errc::out_of_bounds,
                                  "point " + std::to_string(k) + " " +
                                      detail::format_extents(points[k].data(), N) +
                                      " is outside the array shape " +
                                      detail::format_extents(m.shape.data(), m.shape.size()));
            }
        }
    }
    // The points of one read unit form a group (in their order, so the last of a repeated point
    // is written last).
    std::vector<std::size_t> order(points.size());
    for (std::size_t k = 0; k < order.size(); ++k)
    {
        order[k] = k;
    }
    auto unit_of = [&](std::size_t k)
    {
        std::array<std::uint64_t, N> u{};
        for (std::size_t d = 0; d < N; ++d)
        {
            u[d] = points[k][d] / unit[d];
        }
        return u;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return unit_of(a) < unit_of(b); });
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < order.size(); ++i)
    {
        if (i == 0 || unit_of(order[i]) != unit_of(order[i - 1]))
        {
            groups.emplace_back();
        }
        groups.back().push_back(order[i]);
    }
    return groups;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::points_box(
    const std::vector<std::array<std::uint64_t, N>>& points, const std::vector<std::size_t>& group)
    -> region_type
{
    region_type r;
    std::array<std::uint64_t, N> hi{};
    for (std::size_t d = 0; d < N; ++d)
    {
        r.offset[d] = ~std::uint64_t{0};
    }
    for (std::size_t k : group)
    {
        for (std::size_t d = 0; d < N; ++d)
        {
            r.offset[d] = std::min(r.offset[d], points[k][d]);
            hi[d] = std::max(hi[d], points[k][d] + 1);
        }
    }
    for (std::size_t d = 0; d < N; ++d)
    {
        r.extent[d] = hi[d] - r.offset[d];
    }
    return r;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
std::uint64_t array<T, N, Codecs, Store, IndexCache, Executor, Limits>::offset_in(
    const region_type& r, const std::array<std::uint64_t, N>& p)
{
    std::uint64_t off = 0;
    for (std::size_t d = 0; d < N; ++d)
    {
        off = off * r.extent[d] + (p[d] - r.offset[d]);
    }
    return off;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
auto array<T, N, Codecs, Store, IndexCache, Executor, Limits>::read_points(
    const std::vector<std::array<std::uint64_t, N>>& points) const -> xt::xtensor<T, 1>
{
    xt::xtensor<T, 1> out = xt::xtensor<T, 1>::from_shape({points.size()});
    named(
        [&]
        {
            check_limit("max_read_elements", points.size(), m_core->limits().max_read_elements);
            box_buffer box; // a group's box lies in one read unit
            for (const auto& group : point_groups(points))
            {
                const region_type r = points_box(points, group);
                box.fit(r.elements(), false);
                read_raw(r, box.values.get());
                for (std::size_t k : group)
                {
                    out.data()[k] = box.values[offset_in(r, points[k])];
                }
            }
        });
    return out;
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
template <class E>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::write_points(
    const std::vector<std::array<std::uint64_t, N>>& points,
    const xt::xexpression<E>& e) requires array_writable_store<Store>
{
    const E& expr = e.derived_cast();
    named(
        [&]
        {
            if (expr.dimension() != 1 || static_cast<std::size_t>(expr.shape()[0]) != points.size())
            {
                throw array_error(array_errc::shape_mismatch, "write_points of " +
                                                                  std::to_string(points.size()) +
                                                                  " points needs as many values in one axis");
            }
            const xt::xtensor<T, 1> values = expr;
            box_buffer box;
            for (const auto& group : point_groups(points))
            {
                const region_type r = points_box(points, group);
                box.fit(r.elements(), true);
                for (std::size_t k : group)
                {
                    const std::uint64_t at = offset_in(r, points[k]);
                    box.values[at] = values.data()[k];
                    box.mask[at] = 1;
                }
                write_masked(r, box.values.get(), box.mask.get());
            }
        });
}

template <class T, std::size_t N, class Codecs, class Store, class IndexCache, class Executor, class Limits>
void array<T, N, Codecs, Store, IndexCache, Executor, Limits>::write_masked(
    const region_type& r, const T* data, const std::uint8_t* mask) requires array_writable_store<Store>
{
    check_write(r);
    if constexpr (is_record)
    {
        // Packed first (the struct's padding is not part of a record).
        const std::size_t width = m_core->metadata().element_size();
        const std::uint64_t n = r.elements();
        std::vector<std::byte> raw(
            detail::to_size(detail::checked_mul(n, width, "record region bytes"), "record region bytes"));
        for (std::uint64_t i = 0; i < n; ++i)
        {
            if (!mask || mask[i])
            {
                pack_record(data[i], raw.data() + i * width);
            }
        }
        m_core->template write<N>(r, raw.data(), kernel::c_strides<N>(r.extent), m_settings.write_empty_chunks,
                                  mask);
    }
    else if constexpr (is_string)
    {
        // Encoded first, all of them: a value that cannot be stored is refused before any chunk changes.
        const array_metadata& m = m_core->metadata();
        const std::size_t width = m.element_size();
        const std::uint64_t n = r.elements();
        std::vector<std::byte> raw(
            detail::to_size(detail::checked_mul(n, width, "string region bytes"), "string region bytes"));
        if (is_vlen(m.dtype))
        {
            // Elements point at the caller's strings (the fill value's bytes where a value equals
            // it, so all-fill chunks are recognised); the arena keeps old values a rewrite reads.
            vlen_element fill;
            std::memcpy(&fill, m.fill.data(), sizeof fill);
            for (std::uint64_t i = 0; i < n; ++i)
            {
                if (mask && !mask[i])
                {
                    continue;
                }
                const std::string& v = data[i];
                if (m.dtype == dtype_id::string)
                {
                    if (const auto bad = detail::first_invalid_utf8(v))
                    {
                        throw array_error(array_errc::invalid_argument,
                                          "string value " + std::to_string(i) + " of the region is not UTF-8 at byte " +
                                              std::to_string(*bad) + " (the string data type holds text)");
                    }
                }
                const vlen_element e = v.empty() ? vlen_element{} : v == fill.view() ? fill
                                                                                        : vlen_element{v.data(), v.size()};
                std::memcpy(raw.data() + i * width, &e, sizeof e);
            }
            value_arena arena(m_core->limits().max_bytes_in_flight);
            m_core->template write<N>(r, raw.data(), kernel::c_strides<N>(r.extent), m_settings.write_empty_chunks,
                                      mask, &arena);
            return;
        }
        for (std::uint64_t i = 0; i < n; ++i)
        {
            if (!mask || mask[i])
            {
                encode_fixed_string(m.dtype, data[i], raw.data() + i * width, width);
            }
        }
        m_core->template write<N>(r, raw.data(), kernel::c_strides<N>(r.extent),
                                  m_settings.write_empty_chunks, mask);
    }
    else
    {
        m_core->template write<N>(r, reinterpret_cast<const std::byte*>(data), kernel::c_strides<N>(r.extent),
                                  m_settings.write_empty_chunks, mask);
    }
}

} // namespace zarrxt
