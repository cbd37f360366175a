/** @file visit.hpp
 *  Arrays whose dtype and rank are known only from their metadata.
 *
 *  `open_any(store, path)` opens any supported array untyped; `visit(a, f)` calls `f` with the
 *  matching `array<T, N>` (T one of the 14 element types, N from a rank list, 0..4 by default:
 *  `visit<zarrxt::ranks<1, 2, 3, 5>>(a, f)` to choose). `f` is instantiated for every combination,
 *  so keep the rank list to what the program needs. `any_array` also reads and writes raw bytes
 *  of a region for any rank up to 8 without instantiating anything per dtype (used by the tool).
 */
#pragma once

#include "array.hpp"
#include "vlen.hpp"
#include "zarrxt_fwd.hpp"

#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace zarrxt
{

template <std::size_t... Ranks>
struct ranks
{
};

template <class Store>
class any_array
{
public:
    using core_type = detail::default_array_core<Store>;
    static constexpr std::size_t max_bytes_rank = 8;

    explicit any_array(std::shared_ptr<core_type> core, array_settings settings = {})
        : m_core(std::move(core))
        , m_settings(settings)
    {
    }

    dtype_id dtype() const noexcept { return m_core->metadata().dtype; }
    std::size_t rank() const noexcept { return m_core->metadata().rank(); }
    const std::vector<std::uint64_t>& shape() const noexcept { return m_core->metadata().shape; }
    const std::vector<std::uint64_t>& chunk_shape() const noexcept { return m_core->metadata().chunk_shape; }
    const array_metadata& metadata() const noexcept { return m_core->metadata(); }
    /// v3 `dimension_names` or v2 `_ARRAY_DIMENSIONS`, as array<T, N>::dimension_names().
    const std::optional<dimension_name_list>& dimension_names() const noexcept
    {
        return m_core->metadata().dimension_names;
    }
    std::vector<codec_spec> codecs() const { return m_core->chain().specs(); }
    const dynamic_chain& chain() const noexcept { return m_core->chain(); }
    const std::string& path() const noexcept { return m_core->path(); }
    Store& store() const noexcept { return m_core->store(); }
    io_stats stats() const noexcept { return m_core->counters().snapshot(); }
    void reset_stats() noexcept { m_core->counters().reset(); }
    /// This handle's settings (see array_settings); with_settings gives a handle with others.
    const array_settings& settings() const noexcept { return m_settings; }
    any_array with_settings(const array_settings& s) const { return any_array(m_core, s); }
    const std::shared_ptr<core_type>& core() const noexcept { return m_core; }

    /// The typed handle (throws dtype_mismatch / rank_mismatch when T, N are not the stored ones).
    template <class T, std::size_t N>
    array<T, N, dynamic_chain, Store> as() const
    {
        return array<T, N, dynamic_chain, Store>(m_core, m_settings);
    }

    /// Read a region as native-endian, C-ordered element bytes into `out`. With `problems`, damaged
    /// chunks read as the fill value and are reported there (the collect policy); without, the
    /// handle's corruption policy applies. The elements of a variable-length array are
    /// vlen_element values pointing into `arena`, which must then be given and outlive their use
    /// (vlen.hpp); array.8 without one.
    void read_bytes(const std::vector<std::uint64_t>& offset, const std::vector<std::uint64_t>& extent,
                    std::byte* out, problem_list* problems = nullptr, value_arena* arena = nullptr) const
    {
        if (is_vlen(dtype()) && arena == nullptr)
        {
            throw array_error(array_errc::invalid_argument,
                              "read_bytes of a " + std::string(name(dtype())) +
                                  " array needs a value_arena to keep the values in");
        }
        dispatch_rank(offset, extent,
                      [&](auto n, const auto& r)
                      {
                          check_limit("max_read_elements", r.elements(), m_core->limits().max_read_elements);
                          m_core->template read<n.value>(r, out, kernel::c_strides<n.value>(r.extent),
                                                         problems != nullptr ? corruption_policy::collect
                                                                             : m_settings.on_corruption,
                                                         problems, arena);
                      });
    }

    /// Write native-endian, C-ordered element bytes of a region (vlen_element values for a
    /// variable-length array, which must point at bytes that live until the call returns).
    void write_bytes(const std::vector<std::uint64_t>& offset, const std::vector<std::uint64_t>& extent,
                     const std::byte* in)
    {
        std::vector<vlen_element> canonical;
        if (is_vlen(dtype()))
        {
            // Values equal to the fill value point at its bytes, so all-fill chunks are recognised.
            const std::uint64_t n = detail::checked_product(extent, "region elements");
            canonical.resize(detail::to_size(n, "region elements"));
            std::memcpy(canonical.data(), in, canonical.size() * sizeof(vlen_element));
            vlen_element fill;
            std::memcpy(&fill, metadata().fill.data(), sizeof fill);
            for (auto& e : canonical)
            {
                if (e.size == 0)
                {
                    e = vlen_element{};
                }
                else if (e.view() == fill.view())
                {
                    e = fill;
                }
            }
            in = reinterpret_cast<const std::byte*>(canonical.data());
        }
        dispatch_rank(offset, extent,
                      [&](auto n, const auto& r)
                      {
                          m_core->template write<n.value>(r, in, kernel::c_strides<n.value>(r.extent),
                                                          m_settings.write_empty_chunks);
                      });
    }

private:
    template <class F>
    void dispatch_rank(const std::vector<std::uint64_t>& offset, const std::vector<std::uint64_t>& extent,
                       F&& f) const
    {
        const std::size_t n = rank();
        if (offset.size() != n || extent.size() != n)
        {
            throw rank_mismatch("region has rank " + std::to_string(offset.size()) + ", the array has rank " +
                                std::to_string(n));
        }
        bool done = false;
        detail::static_for<0, max_bytes_rank + 1>(
            [&](auto k)
            {
                if (k.value == n && !done)
                {
                    region<k.value> r;
                    for (std::size_t d = 0; d < k.value; ++d)
                    {
                        r.offset[d] = offset[d];
                        r.extent[d] = extent[d];
                    }
                    detail::check_region(r, shape());
                    f(k, r);
                    done = true;
                }
            });
        if (!done)
        {
            throw array_error(array_errc::invalid_argument, "untyped region I/O supports ranks up to " +
                                                                std::to_string(max_bytes_rank) +
                                                                ", the array has rank " + std::to_string(n));
        }
    }

    std::shared_ptr<core_type> m_core;
    array_settings m_settings;
};

/// Open any supported array at `path`; its chain knows the user codecs of `registry` besides the
/// built-ins (codec/codec_registry.hpp), and so do the typed handles `visit` and `as` make of it.
template <class Store>
any_array<Store> open_any(const Store& store, std::string_view path, const codec_registry& registry = {})
{
    return any_array<Store>(
        any_array<Store>::core_type::open(store, path, inline_executor{}, default_limits{}, registry));
}

namespace detail
{

template <class Store, class F, std::size_t R0, std::size_t... Rs>
decltype(auto) visit_ranks(const any_array<Store>& a, F&& f, ranks<R0, Rs...>)
{
    return with_element_type(a.dtype(),
                             [&](auto t) -> decltype(auto)
                             {
                                 using T = typename decltype(t)::type;
                                 using R = decltype(f(std::declval<array<T, R0, dynamic_chain, Store>&>()));
                                 if constexpr (std::is_void_v<R>)
                                 {
                                     bool done = false;
                                     auto try_rank = [&](auto n)
                                     {
                                         if (!done && a.rank() == n.value)
                                         {
                                             auto typed = a.template as<T, n.value>();
                                             f(typed);
                                             done = true;
                                         }
                                     };
                                     try_rank(std::integral_constant<std::size_t, R0>{});
                                     (try_rank(std::integral_constant<std::size_t, Rs>{}), ...);
                                     if (!done)
                                     {
                                         throw rank_mismatch("visit: rank " + std::to_string(a.rank()) +
                                                             " is not in the visited rank list");
                                     }
                                 }
                                 else
                                 {
                                     std::optional<R> result;
                                     auto try_rank = [&](auto n)
                                     {
                                         if (!result && a.rank() == n.value)
                                         {
                                             auto typed = a.template as<T, n.value>();
                                             result.emplace(f(typed));
                                         }
                                     };
                                     try_rank(std::integral_constant<std::size_t, R0>{});
                                     (try_rank(std::integral_constant<std::size_t, Rs>{}), ...);
                                     if (!result)
                                     {
                                         throw rank_mismatch("visit: rank " + std::to_string(a.rank()) +
                                                             " is not in the visited rank list");
                                     }
                                     return R(std::move(*result));
                                 }
                             });
}

} // namespace detail

/// Call `f(array<T, N>&)` with the typed handle matching the stored dtype and rank.
template <class Ranks = default_visit_ranks, class Store, class F>
decltype(auto) visit(const any_array<Store>& a, F&& f)
{
    return detail::visit_ranks(a, std::forward<F>(f), Ranks{});
}

} // namespace zarrxt
