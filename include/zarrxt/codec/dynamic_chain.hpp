/** @file codec/dynamic_chain.hpp
 *  `dynamic_chain`: a codec chain built at open from the array's metadata, for arrays whose codecs
 *  are not known at compile time (the default). Each codec is a built-in codec class, or a user codec
 *  from the context's codec_registry (codec_registry.hpp), held behind a small virtual interface;
 *  one virtual call per codec per chunk is noise next to decoding.
 *
 *  The codecs are the same classes a static `chain<...>` uses, so both paths decode identically.
 */
#pragma once

#include "../config.hpp"
#include "../detail/checked.hpp"
#include "../zarrxt_fwd.hpp"
#include "codec_spec.hpp"
#include "concepts.hpp"
#include "partial_decode.hpp"
#include "partial_encode.hpp"
#include "pipeline.hpp"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zarrxt
{

namespace codec
{
class sharding_base;

/********************************
 * type-erased codec interfaces *
 ********************************/

namespace detail
{

struct erased_codec
{
    virtual ~erased_codec() = default;
    virtual std::string_view codec_name() const = 0;
    virtual json codec_json() const = 0;
};

struct erased_a2a : erased_codec
{
    virtual dims encoded_shape(const dims&) const = 0;
    virtual dtype_id encoded_dtype(dtype_id) const = 0;
    virtual fill_value encoded_fill(const fill_value&) const = 0;
    virtual array_view decode(array_view, buffer&) const = 0;
    virtual array_view encode(array_view, buffer&) const = 0;
};

struct erased_a2b : erased_codec
{
    /// Decode one chunk; `arena` keeps variable-length values (vlen.hpp), unused by the others.
    virtual mutable_byte_view decode(mutable_byte_view, buffer&, value_arena* arena) const = 0;
    virtual byte_view encode(byte_view, buffer&) const = 0;
    /// Encoded size when fixed (the bytes codec), nullopt otherwise (sharding).
    virtual std::optional<std::size_t> fixed_size() const = 0;
    /// Non-null when this is a sharding codec (partial reads go through it).
    virtual const sharding_base* sharding() const { return nullptr; }
    /// The same codec as a partial decoder (the sharding codec), else nullptr.
    virtual const partial_decoder* as_partial_decoder() const { return nullptr; }
    /// The same codec as a partial encoder (the sharding codec), else nullptr.
    virtual const partial_encoder* as_partial_encoder() const { return nullptr; }
    /// See bytes::raw_swap_word (nullopt: a range of a chunk cannot be decoded on its own).
    virtual std::optional<std::size_t> raw_swap_word() const = 0;
};

struct erased_b2b : erased_codec
{
    virtual void encode(byte_view, buffer&) const = 0;
    virtual mutable_byte_view decode(mutable_byte_view, buffer&, const decode_hint&) const = 0;
    virtual std::optional<std::size_t> encoded_size(std::size_t) const = 0;
    /// Decode straight into `dest` (exactly the decoded size); false when the codec cannot.
    virtual bool decode_to(mutable_byte_view, mutable_byte_view) const = 0;
};

template <class C>
struct a2a_model final : erased_a2a
{
    explicit a2a_model(C c)
        : m_c(std::move(c))
    {
    }
    std::string_view codec_name() const override { return C::name; }
    json codec_json() const override { return m_c.to_json(); }
    dims encoded_shape(const dims& s) const override { return m_c.encoded_shape(s); }
    dtype_id encoded_dtype(dtype_id d) const override { return encoded_dtype_of(m_c, d); }
    fill_value encoded_fill(const fill_value& f) const override { return encoded_fill_of(m_c, f); }
    array_view decode(array_view v, buffer& b) const override { return m_c.decode(std::move(v), b); }
    array_view encode(array_view v, buffer& b) const override { return m_c.encode(std::move(v), b); }
    C m_c;
};

template <class C>
struct a2b_model final : erased_a2b
{
    explicit a2b_model(C c)
        : m_c(std::move(c))
    {
    }
    std::string_view codec_name() const override { return C::name; }
    json codec_json() const override { return m_c.to_json(); }
    mutable_byte_view decode(mutable_byte_view in, buffer& b, value_arena* arena) const override
    {
        return a2b_decode(m_c, in, b, arena);
    }
    byte_view encode(byte_view in, buffer& b) const override { return m_c.encode(in, b); }
    std::optional<std::size_t> fixed_size() const override
    {
        if constexpr (requires { m_c.fixed_encoded_size(); })
        {
            return m_c.fixed_encoded_size();
        }
        else
        {
            return std::nullopt;
        }
    }
    const partial_decoder* as_partial_decoder() const override
    {
        if constexpr (std::is_base_of_v<partial_decoder, C>)
        {
            return &m_c;
        }
        else
        {
            return nullptr;
        }
    }
    const partial_encoder* as_partial_encoder() const override
    {
        if constexpr (std::is_base_of_v<partial_encoder, C>)
        {
            return &m_c;
        }
        else
        {
            return nullptr;
        }
    }
    std::optional<std::size_t> raw_swap_word() const override
    {
        if constexpr (requires { m_c.raw_swap_word(); })
        {
            return m_c.raw_swap_word();
        }
        else
        {
            return std::nullopt;
        }
    }
    const sharding_base* sharding() const override
    {
        if constexpr (std::is_base_of_v<sharding_base, C>)
        {
            return &m_c;
        }
        else
        {
            return nullptr;
        }
    }
    C m_c;
};

template <class C>
struct b2b_model final : erased_b2b
{
    explicit b2b_model(C c)
        : m_c(std::move(c))
    {
    }
    std::string_view codec_name() const override { return C::name; }
    json codec_json() const override { return m_c.to_json(); }
    void encode(byte_view in, buffer& out) const override { m_c.encode(in, out); }
    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& h) const override
    {
        return m_c.decode(in, out, h);
    }
    std::optional<std::size_t> encoded_size(std::size_t n) const override { return m_c.encoded_size(n); }
    bool decode_to(mutable_byte_view in, mutable_byte_view dest) const override
    {
        if constexpr (direct_decoder<C>)
        {
            m_c.decode_to(in, dest);
            return true;
        }
        else
        {
            return false;
        }
    }
    C m_c;
};

/// Result of looking a codec name up among the built-ins (defined in codec/registry.hpp).
struct made_codec
{
    std::unique_ptr<erased_a2a> a2a;
    std::unique_ptr<erased_a2b> a2b;
    std::unique_ptr<erased_b2b> b2b;
};

/// Build codec C into `out` when `spec` names it (a built-in or a registered codec alike).
template <class C>
bool try_make(const codec_spec& spec, const codec_context& ctx, made_codec& out)
{
    if (!name_matches<C>(spec.name))
    {
        return false;
    }
    C c = C::from_json(spec.configuration, ctx);
    if constexpr (kind_rank<C>() == 0)
    {
        out.a2a = std::make_unique<a2a_model<C>>(std::move(c));
    }
    else if constexpr (kind_rank<C>() == 1)
    {
        out.a2b = std::make_unique<a2b_model<C>>(std::move(c));
    }
    else
    {
        out.b2b = std::make_unique<b2b_model<C>>(std::move(c));
    }
    return true;
}

/// One codec of a codec_registry (codec_registry.hpp): plain function pointers into the
/// instantiations for its type, so the table itself is not a template.
struct registry_entry
{
    std::string name;
    int kind = 0; // kind_rank
    bool (*matches)(std::string_view) noexcept = nullptr;
    bool (*make)(const codec_spec&, const codec_context&, made_codec&) = nullptr;
};

/// The shared, immutable state of a codec_registry; a codec_context points at it.
struct registry_table
{
    std::vector<registry_entry> entries;
    user_dtype_set dtypes; ///< the user data types (user_dtype.hpp)

    /// The entry for `name` (its name or an alias), or nullptr.
    const registry_entry* find(std::string_view name) const noexcept
    {
        for (const auto& e : entries)
        {
            if (e.matches(name))
            {
                return &e;
            }
        }
        return nullptr;
    }
};

ZARRXT_DECL made_codec make_builtin_codec(const codec_spec& spec, const codec_context& ctx);
ZARRXT_DECL int builtin_codec_kind(const std::string& name);
/// As the two above, consulting the user codecs of `ctx.registry` (codec_registry.hpp) first.
ZARRXT_DECL made_codec make_codec(const codec_spec& spec, const codec_context& ctx);
ZARRXT_DECL int codec_kind(const std::string& name, const codec_context& ctx);

} // namespace detail
} // namespace codec

/*****************
 * dynamic_chain *
 *****************/

class dynamic_chain
{
public:
    dynamic_chain() = default;
    dynamic_chain(dynamic_chain&&) noexcept = default;
    dynamic_chain& operator=(dynamic_chain&&) noexcept = default;

    /// Build a chain for arrays of `ctx` (also used for a shard's inner and index chains).
    static dynamic_chain from_specs(const std::vector<codec_spec>& specs, const codec::codec_context& ctx);

    /// Decode one whole chunk; the result is a view in the chunk's own axis order, possibly
    /// pointing into `encoded` (decoded in place) or into `s`.
    codec::array_view decode(mutable_byte_view encoded, codec::scratch_space& s,
                             const limit_values& limits) const;

    /// Decode one whole chunk straight into `dest` (C order, native, exactly the chunk's bytes).
    /// Returns false, having done nothing, when the chain has array->array codecs or is sharded.
    bool decode_into(mutable_byte_view encoded, mutable_byte_view dest, codec::scratch_space& s,
                     const limit_values& limits) const;

    /// How a write rewrites part of one stored chunk (codec/partial_encode.hpp): the sharding
    /// codec when the chain is exactly [sharding_indexed], else nullptr (the whole chunk is
    /// rebuilt and encoded).
    const codec::partial_encoder* partial_encoder() const noexcept
    {
        return m_a2a.empty() && m_b2b.empty() && m_a2b ? m_a2b->as_partial_encoder() : nullptr;
    }
    /// How a region of one stored chunk is read (codec/partial_decode.hpp): the sharding codec
    /// when the chain is exactly [sharding_indexed], the raw decoder when a stored chunk is its
    /// elements in C order (only `bytes`, or a full-width `packbits`), else nullptr (the chunk is
    /// fetched whole and decoded).
    const codec::partial_decoder* partial_decoder() const noexcept
    {
        if (!m_a2a.empty() || !m_b2b.empty() || !m_a2b)
        {
            return nullptr;
        }
        if (const codec::partial_decoder* s = m_a2b->as_partial_decoder())
        {
            return s;
        }
        return m_raw ? &*m_raw : nullptr;
    }

    /// Encode a C-contiguous chunk; the result may point into `chunk` itself or into `s`.
    byte_view encode(const codec::array_view& chunk, codec::scratch_space& s) const;

    std::vector<codec_spec> specs() const;
    const codec::codec_context& context() const noexcept { return m_ctx; }
    std::size_t size() const noexcept { return m_a2a.size() + 1 + m_b2b.size(); }

    /// Encoded size for a decoded chunk when every stage has a fixed size (shard index chains).
    std::optional<std::size_t> fixed_encoded_size() const { return m_sizes.back(); }

    /// The sharding codec when the chain is exactly [sharding_indexed] (partial reads apply),
    /// else nullptr.
    const codec::sharding_base* sharding() const noexcept
    {
        return m_a2a.empty() && m_b2b.empty() && m_a2b ? m_a2b->sharding() : nullptr;
    }
    /// The sharding codec anywhere in the chain (for reporting), else nullptr.
    const codec::sharding_base* any_sharding() const noexcept { return m_a2b ? m_a2b->sharding() : nullptr; }

private:
    codec::codec_context m_ctx;
    std::vector<std::unique_ptr<codec::detail::erased_a2a>> m_a2a;
    std::unique_ptr<codec::detail::erased_a2b> m_a2b;
    std::vector<std::unique_ptr<codec::detail::erased_b2b>> m_b2b;
    std::vector<dims> m_shapes;            // shape entering a2a[i]; back() enters a2b
    std::size_t m_stored_element_size = 0; // element size entering a2b (array->array codecs may change it)
    std::size_t m_decoded_bytes = 0;       // bytes of the array entering a2b
    std::vector<std::optional<std::size_t>> m_sizes; // size entering b2b[i] when encoding; back() = encoded
    std::optional<codec::raw_decoder> m_raw;
};

/******************
 * implementation *
 ******************/

inline dynamic_chain dynamic_chain::from_specs(const std::vector<codec_spec>& specs,
                                               const codec::codec_context& ctx)
{
    if (specs.empty())
    {
        throw metadata_error(metadata_errc::invalid_value, "a codec chain needs at least one codec");
    }
    std::vector<int> kinds;
    std::vector<std::string> names;
    for (const auto& s : specs)
    {
        kinds.push_back(codec::detail::codec_kind(s.name, ctx));
        names.push_back(s.name);
    }
    codec::detail::check_kind_order(kinds, names);

    dynamic_chain c;
    c.m_ctx = ctx;
    c.m_shapes.push_back(ctx.chunk_shape);
    codec::codec_context stage = ctx;
    for (const auto& s : specs)
    {
        auto made = codec::detail::make_codec(s, stage);
        if (made.a2a)
        {
            stage.chunk_shape = made.a2a->encoded_shape(stage.chunk_shape);
            stage.fill = made.a2a->encoded_fill(stage.fill);
            // Only a change of kind replaces the type: a transpose keeps a fixed-width string's size.
            if (const dtype_id out = made.a2a->encoded_dtype(stage.dtype.id); out != stage.dtype.id)
            {
                stage.dtype = zarrxt::data_type(out);
            }
            c.m_shapes.push_back(stage.chunk_shape);
            c.m_a2a.push_back(std::move(made.a2a));
        }
        else if (made.a2b)
        {
            c.m_a2b = std::move(made.a2b);
            c.m_stored_element_size = stage.element_size();
            c.m_decoded_bytes =
                zarrxt::detail::to_size(zarrxt::detail::checked_mul(zarrxt::detail::checked_product(
                                                                        stage.chunk_shape, "chunk elements"),
                                                                    stage.element_size(), "chunk bytes"),
                                        "chunk bytes");
            if (is_vlen(stage.dtype))
            {
                stage.dtype = dtype_id::uint8; // the codecs after a vlen codec see a stream of bytes
            }
        }
        else
        {
            c.m_b2b.push_back(std::move(made.b2b));
        }
    }
    c.m_sizes =
        codec::detail::b2b_sizes(c.m_a2b->fixed_size(), c.m_b2b.size(),
                                 [&](std::size_t i, std::size_t n) { return c.m_b2b[i]->encoded_size(n); });
    if (c.m_a2a.empty() && c.m_b2b.empty() && c.m_a2b->fixed_size() == c.m_decoded_bytes)
    {
        if (const auto word = c.m_a2b->raw_swap_word())
        {
            c.m_raw.emplace(ctx.chunk_shape, c.m_stored_element_size, *word);
        }
    }
    return c;
}

inline codec::array_view dynamic_chain::decode(mutable_byte_view encoded, codec::scratch_space& s,
                                               const limit_values& limits) const
{
    codec::detail::stage_buffers stages(s);
    mutable_byte_view cur = encoded;
    for (std::size_t i = m_b2b.size(); i-- > 0;)
    {
        buffer& out = stages.next();
        cur = m_b2b[i]->decode(cur, out, {m_sizes[i], static_cast<std::size_t>(limits.max_chunk_bytes)});
        stages.landed(cur, out);
    }
    cur = m_a2b->decode(cur, stages.next(), s.arena);
    codec::array_view v;
    v.data = cur.data();
    v.element_size = m_stored_element_size;
    v.shape = m_shapes.back();
    v.strides = codec::array_view::c_strides(v.shape);
    for (std::size_t i = m_a2a.size(); i-- > 0;)
    {
        buffer& out = codec::detail::a2a_target(s, v.data);
        v = m_a2a[i]->decode(std::move(v), out);
    }
    return v;
}

inline bool dynamic_chain::decode_into(mutable_byte_view encoded, mutable_byte_view dest,
                                       codec::scratch_space& s, const limit_values& limits) const
{
    if (!m_a2a.empty() || m_a2b->sharding() != nullptr || m_a2b->fixed_size() != dest.size())
    {
        return false;
    }
    codec::detail::stage_buffers stages(s);
    mutable_byte_view cur = encoded;
    for (std::size_t i = m_b2b.size(); i-- > 1;)
    {
        buffer& out = stages.next();
        cur = m_b2b[i]->decode(cur, out, {m_sizes[i], static_cast<std::size_t>(limits.max_chunk_bytes)});
        stages.landed(cur, out);
    }
    if (!m_b2b.empty() && !m_b2b[0]->decode_to(cur, dest))
    {
        buffer& out = stages.next();
        cur = m_b2b[0]->decode(cur, out, {m_sizes[0], static_cast<std::size_t>(limits.max_chunk_bytes)});
        if (cur.size() != dest.size())
        {
            throw codec_error(codec_errc::size_mismatch, m_a2b->codec_name(),
                              "chunk has " + std::to_string(cur.size()) + " bytes, expected " +
                                  std::to_string(dest.size()));
        }
        std::memcpy(dest.data(), cur.data(), cur.size());
    }
    else if (m_b2b.empty())
    {
        if (cur.size() != dest.size())
        {
            throw codec_error(codec_errc::size_mismatch, m_a2b->codec_name(),
                              "chunk has " + std::to_string(cur.size()) + " bytes, expected " +
                                  std::to_string(dest.size()));
        }
        std::memcpy(dest.data(), cur.data(), cur.size());
    }
    m_a2b->decode(dest, stages.next(), s.arena); // in place: size check, byte swap
    return true;
}

inline byte_view dynamic_chain::encode(const codec::array_view& chunk, codec::scratch_space& s) const
{
    codec::array_view v = chunk;
    for (std::size_t i = 0; i < m_a2a.size(); ++i)
    {
        buffer& out = codec::detail::a2a_target(s, v.data);
        v = m_a2a[i]->encode(std::move(v), out);
    }
    // The a2b stage sees a C-contiguous array (a2a outputs are materialised).
    const std::size_t n = static_cast<std::size_t>(v.elements()) * v.element_size;
    byte_view cur = m_a2b->encode(byte_view(v.data, n), s.a);
    codec::detail::stage_buffers stages(s);
    if (cur.data() == s.a.data() && n != 0)
    {
        stages.landed(cur, s.a);
    }
    for (std::size_t i = 0; i < m_b2b.size(); ++i)
    {
        buffer& out = stages.next();
        m_b2b[i]->encode(cur, out);
        cur = out.view();
        stages.landed(cur, out);
    }
    return cur;
}

inline std::vector<codec_spec> dynamic_chain::specs() const
{
    std::vector<codec_spec> out;
    for (const auto& c : m_a2a)
    {
        out.emplace_back(std::string(c->codec_name()), c->codec_json());
    }
    out.emplace_back(std::string(m_a2b->codec_name()), m_a2b->codec_json());
    for (const auto& c : m_b2b)
    {
        out.emplace_back(std::string(c->codec_name()), c->codec_json());
    }
    return out;
}

} // namespace zarrxt

#if ZARRXT_DEFINITIONS
#include "registry.hpp"
#endif
