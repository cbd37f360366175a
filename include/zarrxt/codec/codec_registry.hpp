/** @file codec/codec_registry.hpp
 *  `codec_registry`: the user codecs a metadata-built chain (`dynamic_chain`) knows besides the
 *  built-ins, passed as a value where arrays are opened or created. There is no global table and
 *  nothing to register at static-initialisation time: two arrays opened with different registries
 *  in one program each see their own codecs.
 *
 *  `reg.add<C>()` takes any codec type meeting one of the three codec concepts (codec/concepts.hpp);
 *  its `name` (and `aliases`) are what metadata names it by, its `from_json` builds it, its kind tag
 *  says where it may stand in a chain. It is held behind the same type-erased interfaces as the
 *  built-ins (dynamic_chain.hpp), so it decodes and encodes exactly as it would in a static chain.
 *
 *  Lookup: the registry first, then the built-ins (codec/registry.hpp). A user codec named like a
 *  built-in therefore replaces it for the arrays opened with that registry (e.g. a faster zstd),
 *  and a later `add` of a name replaces an earlier one. The registry reaches every chain built from
 *  the array's codec_context, so a shard's inner and index chains see it too.
 *
 *  It holds user data types too (`reg.add_dtype<T>()`, user_dtype.hpp): a v3 document whose
 *  `data_type` names one opens with that registry, and a chain bound for such an array sees its
 *  element size and swap word.
 *
 *  A registry is cheap to copy: its entries are shared and never changed once made; `add` makes a
 *  new table, so copies taken before it keep the codecs they had.
 */
#pragma once

#include "../detail/json.hpp"
#include "codec_spec.hpp"
#include "concepts.hpp"
#include "dynamic_chain.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/******************
 * codec_registry *
 ******************/

class codec_registry
{
public:
    /// An empty registry: the built-ins only.
    codec_registry() = default;

    /// Add codec type C (a later add of the same name replaces the earlier one). Returns *this.
    template <class C>
    codec_registry& add();

    /// Add user data type T, the C++ element type whose dtype_traits describes it (user_dtype.hpp);
    /// a later add of the same name replaces the earlier one. Returns *this.
    template <class T>
    codec_registry& add_dtype();

    /// The names of the registered codecs, in the order they were added.
    std::vector<std::string> names() const;
    /// The names of the registered data types, in the order they were added.
    std::vector<std::string> dtype_names() const;
    bool empty() const noexcept
    {
        return !m_table || (m_table->entries.empty() && m_table->dtypes.entries.empty());
    }
    /// The user data types (null when there are none): what a document's data_type is parsed with.
    const user_dtype_set* dtypes() const noexcept
    {
        return m_table && !m_table->dtypes.entries.empty() ? &m_table->dtypes : nullptr;
    }

    /// The shared table a codec_context carries (null when empty).
    const std::shared_ptr<const codec::detail::registry_table>& table() const noexcept { return m_table; }

private:
    std::shared_ptr<const codec::detail::registry_table> m_table;
};

/******************
 * implementation *
 ******************/

template <class C>
codec_registry& codec_registry::add()
{
    static_assert(codec::any_codec<C>,
                  "codec_registry::add<C>: C must meet array_to_array_codec, array_to_bytes_codec or "
                  "bytes_to_bytes_codec (see docs/concepts/codec.md)");
    auto next = std::make_shared<codec::detail::registry_table>();
    if (m_table)
    {
        next->dtypes = m_table->dtypes;
        for (const auto& e : m_table->entries)
        {
            // A name C answers to is taken over by C (its aliases too).
            if (!codec::name_matches<C>(e.name))
            {
                next->entries.push_back(e);
            }
        }
    }
    next->entries.push_back(codec::detail::registry_entry{
        std::string(C::name), codec::kind_rank<C>(), &codec::name_matches<C>, &codec::detail::try_make<C>});
    m_table = std::move(next);
    return *this;
}

template <class T>
codec_registry& codec_registry::add_dtype()
{
    static_assert(user_element_type<T>,
                  "codec_registry::add_dtype<T>: dtype_traits<T> must describe a user data type: id "
                  "dtype_id::user, a name, fill_from_json and fill_to_json (see user_dtype.hpp)");
    auto d = make_user_dtype<T>();
    auto next = std::make_shared<codec::detail::registry_table>();
    if (m_table)
    {
        next->entries = m_table->entries;
        for (const auto& e : m_table->dtypes.entries)
        {
            if (e->name != d->name)
            {
                next->dtypes.entries.push_back(e);
            }
        }
    }
    next->dtypes.entries.push_back(std::move(d));
    m_table = std::move(next);
    return *this;
}

inline std::vector<std::string> codec_registry::dtype_names() const
{
    std::vector<std::string> out;
    if (m_table)
    {
        for (const auto& e : m_table->dtypes.entries)
        {
            out.push_back(e->name);
        }
    }
    return out;
}

inline std::vector<std::string> codec_registry::names() const
{
    std::vector<std::string> out;
    if (m_table)
    {
        for (const auto& e : m_table->entries)
        {
            out.push_back(e.name);
        }
    }
    return out;
}

} // namespace zarrxt
