/** @file codec/chain.hpp
 *  `chain<Codecs...>`: a codec chain fixed at compile time, e.g.
 *  `zarrxt::array<float, 3, zarrxt::chain<codec::bytes<>, codec::zstd>>`.
 *
 *  The codec sequence is a type: every call is inlined, only the named codecs are compiled, and the
 *  order (array->array..., one array->bytes, bytes->bytes...) is checked by a static_assert. At open
 *  the array's metadata must name the same codecs in the same order; otherwise `chain_mismatch`
 *  names the first difference. The configurations (levels, endianness, ...) still come from the
 *  metadata: the type fixes which codecs run, the values say how.
 */
#pragma once

#include "../detail/checked.hpp"
#include "../zarrxt_fwd.hpp"
#include "codec_spec.hpp"
#include "concepts.hpp"
#include "partial_decode.hpp"
#include "partial_encode.hpp"
#include "pipeline.hpp"

#include <array>
#include <concepts>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

namespace zarrxt
{

namespace codec
{
class sharding_base;
}

namespace detail
{

template <class C>
constexpr int static_kind() noexcept
{
    if constexpr (requires { typename C::codec_kind; })
    {
        return codec::kind_rank<C>();
    }
    else
    {
        return -1;
    }
}

template <int... K>
constexpr bool kinds_ordered() noexcept
{
    constexpr int ks[] = {K...};
    int last = 0;
    int a2b = 0;
    for (int k : ks)
    {
        if (k < last)
        {
            return false;
        }
        last = k;
        a2b += k == 1 ? 1 : 0;
    }
    return a2b == 1;
}

template <std::size_t I, std::size_t End, class F>
constexpr void static_for(F&& f)
{
    if constexpr (I < End)
    {
        f(std::integral_constant<std::size_t, I>{});
        static_for<I + 1, End>(f);
    }
}

template <std::size_t I, std::size_t Begin, class F>
constexpr void static_for_reverse(F&& f)
{
    // visits I-1, I-2, ..., Begin
    if constexpr (I > Begin)
    {
        f(std::integral_constant<std::size_t, I - 1>{});
        static_for_reverse<I - 1, Begin>(f);
    }
}

} // namespace detail

template <class... Codecs>
class chain
{
    static_assert(sizeof...(Codecs) > 0,
                  "zarrxt::chain: a codec chain needs at least one codec (an array->bytes "
                  "codec such as codec::bytes<>)");
    static_assert(((detail::static_kind<Codecs>() >= 0) && ...),
                  "zarrxt::chain: every element must be a codec type declaring `using codec_kind = "
                  "codec::array_to_array_tag / array_to_bytes_tag / bytes_to_bytes_tag;`");
    static_assert(
        detail::kinds_ordered<detail::static_kind<Codecs>()...>(),
        "zarrxt::chain: codecs are in the wrong order. A chain is zero or more array->array codecs "
        "(transpose), then exactly one array->bytes codec (bytes<>, sharding_indexed<...>), then zero or "
        "more bytes->bytes codecs (gzip, zstd, crc32c, blosc, ...)");
    static_assert((codec::any_codec<Codecs> && ...),
                  "zarrxt::chain: a codec does not meet the requirements of its kind (see "
                  "docs/concepts/codec.md)");

    static constexpr std::size_t n = sizeof...(Codecs);
    static constexpr std::size_t n_a2a = ((detail::static_kind<Codecs>() == 0 ? 1 : 0) + ...);
    static constexpr std::size_t a2b = n_a2a;
    static constexpr std::size_t n_b2b = n - n_a2a - 1;
    using tuple_type = std::tuple<Codecs...>;
    template <std::size_t I>
    using codec_at = std::tuple_element_t<I, tuple_type>;

public:
    static constexpr std::array<std::string_view, n> names{Codecs::name...};

    /// Bind to the codecs named by `specs`, which must match Codecs... one for one.
    static chain from_specs(const std::vector<codec_spec>& specs, const codec::codec_context& ctx);

    codec::array_view decode(mutable_byte_view encoded, codec::scratch_space& s,
                             const limit_values& limits) const;
    byte_view encode(const codec::array_view& chunk, codec::scratch_space& s) const;

    /// See dynamic_chain::decode_into.
    bool decode_into(mutable_byte_view encoded, mutable_byte_view dest, codec::scratch_space& s,
                     const limit_values& limits) const;
    /// See dynamic_chain::partial_encoder.
    const codec::partial_encoder* partial_encoder() const noexcept
    {
        if constexpr (n == 1 && std::is_base_of_v<codec::partial_encoder, codec_at<0>>)
        {
            return &std::get<0>(m_codecs); // the sharding codec
        }
        else
        {
            return nullptr;
        }
    }
    /// See dynamic_chain::partial_decoder.
    const codec::partial_decoder* partial_decoder() const noexcept
    {
        if constexpr (n == 1 && std::is_base_of_v<codec::partial_decoder, codec_at<0>>)
        {
            return &std::get<0>(m_codecs); // the sharding codec
        }
        else
        {
            return m_raw ? &*m_raw : nullptr;
        }
    }

    std::vector<codec_spec> specs() const;
    const codec::codec_context& context() const noexcept { return m_ctx; }
    std::optional<std::size_t> fixed_encoded_size() const { return m_sizes[n_b2b]; }

    const codec::sharding_base* sharding() const noexcept
    {
        if constexpr (n == 1 && std::is_base_of_v<codec::sharding_base, codec_at<0>>)
        {
            return &std::get<0>(m_codecs);
        }
        else
        {
            return nullptr;
        }
    }
    const codec::sharding_base* any_sharding() const noexcept
    {
        if constexpr (std::is_base_of_v<codec::sharding_base, codec_at<a2b>>)
        {
            return &std::get<a2b>(m_codecs);
        }
        else
        {
            return nullptr;
        }
    }

    template <std::size_t I>
    const codec_at<I>& get() const noexcept
    {
        return std::get<I>(m_codecs);
    }

private:
    tuple_type m_codecs;
    codec::codec_context m_ctx;
    std::array<dims, n_a2a + 1> m_shapes;
    std::array<std::optional<std::size_t>, n_b2b + 1> m_sizes;
    std::size_t m_stored_element_size = 0;
    std::size_t m_decoded_bytes = 0;
    std::optional<codec::raw_decoder> m_raw;

    static bool name_at(std::size_t i, const std::string& name)
    {
        bool match = false;
        detail::static_for<0, n>(
            [&](auto k)
            {
                if (k.value == i)
                {
                    match = codec::name_matches<codec_at<k.value>>(name);
                }
            });
        return match;
    }
};

/******************
 * implementation *
 ******************/

template <class... Codecs>
chain<Codecs...> chain<Codecs...>::from_specs(const std::vector<codec_spec>& specs,
                                              const codec::codec_context& ctx)
{
    for (std::size_t i = 0; i < std::max(n, specs.size()); ++i)
    {
        if (i >= specs.size() || i >= n || !name_at(i, specs[i].name))
        {
            std::string expected = "[";
            for (std::size_t k = 0; k < n; ++k)
            {
                expected += (k ? ", " : "") + std::string(names[k]);
            }
            expected += "]";
            std::string found = "[";
            for (std::size_t k = 0; k < specs.size(); ++k)
            {
                found += (k ? ", " : "") + specs[k].name;
            }
            found += "]";
            throw chain_mismatch(
                "static codec chain " + expected + " does not match the stored chain " + found + ": codec #" +
                std::to_string(i) + " is " +
                (i < specs.size() ? "\"" + specs[i].name + "\"" : std::string("missing")) +
                ", the chain type expects " +
                (i < n ? "\"" + std::string(names[i]) + "\"" : std::string("no more codecs")));
        }
    }
    chain c;
    c.m_ctx = ctx;
    codec::codec_context stage = ctx;
    c.m_shapes[0] = ctx.chunk_shape;
    detail::static_for<0, n>(
        [&](auto i)
        {
            using C = codec_at<i.value>;
            std::get<i.value>(c.m_codecs) = C::from_json(specs[i.value].configuration, stage);
            if constexpr (i.value < n_a2a)
            {
                stage.chunk_shape = std::get<i.value>(c.m_codecs).encoded_shape(stage.chunk_shape);
                stage.fill = codec::encoded_fill_of(std::get<i.value>(c.m_codecs), stage.fill);
                stage.dtype = codec::encoded_type_of(std::get<i.value>(c.m_codecs), stage.dtype);
                c.m_shapes[i.value + 1] = stage.chunk_shape;
            }
            if constexpr (i.value == a2b)
            {
                c.m_stored_element_size = stage.element_size();
                c.m_decoded_bytes = zarrxt::detail::to_size(
                    zarrxt::detail::checked_mul(
                        zarrxt::detail::checked_product(stage.chunk_shape, "chunk elements"),
                        stage.element_size(), "chunk bytes"),
                    "chunk bytes");
                if (is_vlen(stage.dtype))
                {
                    stage.dtype = dtype_id::uint8; // the codecs after a vlen codec see a stream of bytes
                }
            }
        });
    std::optional<std::size_t> size;
    if constexpr (requires { std::get<a2b>(c.m_codecs).fixed_encoded_size(); })
    {
        size = std::get<a2b>(c.m_codecs).fixed_encoded_size();
    }
    c.m_sizes[0] = size;
    detail::static_for<0, n_b2b>(
        [&](auto i)
        {
            const auto& prev = c.m_sizes[i.value];
            c.m_sizes[i.value + 1] =
                prev ? std::get<a2b + 1 + i.value>(c.m_codecs).encoded_size(*prev) : std::nullopt;
        });
    if constexpr (n == 1 && requires { std::get<0>(c.m_codecs).raw_swap_word(); })
    {
        const auto word = std::get<0>(c.m_codecs).raw_swap_word();
        if (word && size == c.m_decoded_bytes)
        {
            c.m_raw.emplace(ctx.chunk_shape, c.m_stored_element_size, *word);
        }
    }
    return c;
}

template <class... Codecs>
codec::array_view chain<Codecs...>::decode(mutable_byte_view encoded, codec::scratch_space& s,
                                           const limit_values& limits) const
{
    codec::detail::stage_buffers stages(s);
    mutable_byte_view cur = encoded;
    detail::static_for_reverse<n, a2b + 1>(
        [&](auto i)
        {
            buffer& out = stages.next();
            cur = std::get<i.value>(m_codecs).decode(
                cur, out, {m_sizes[i.value - a2b - 1], static_cast<std::size_t>(limits.max_chunk_bytes)});
            stages.landed(cur, out);
        });
    cur = codec::a2b_decode(std::get<a2b>(m_codecs), cur, stages.next(), s.arena);
    codec::array_view v;
    v.data = cur.data();
    v.element_size = m_stored_element_size;
    v.shape = m_shapes[n_a2a];
    v.strides = codec::array_view::c_strides(v.shape);
    detail::static_for_reverse<n_a2a, 0>(
        [&](auto i)
        {
            buffer& out = codec::detail::a2a_target(s, v.data);
            v = std::get<i.value>(m_codecs).decode(std::move(v), out);
        });
    return v;
}

template <class... Codecs>
bool chain<Codecs...>::decode_into(mutable_byte_view encoded, mutable_byte_view dest, codec::scratch_space& s,
                                   const limit_values& limits) const
{
    if constexpr (n_a2a != 0 || std::is_base_of_v<codec::sharding_base, codec_at<a2b>> ||
                  !requires(const codec_at<a2b>& c) { c.fixed_encoded_size(); })
    {
        return false;
    }
    else
    {
        if (m_sizes[0] != dest.size())
        {
            return false;
        }
        codec::detail::stage_buffers stages(s);
        mutable_byte_view cur = encoded;
        detail::static_for_reverse<n, a2b + 2>(
            [&](auto i)
            {
                buffer& out = stages.next();
                cur = std::get<i.value>(m_codecs).decode(
                    cur, out, {m_sizes[i.value - a2b - 1], static_cast<std::size_t>(limits.max_chunk_bytes)});
                stages.landed(cur, out);
            });
        auto copy_in = [&](mutable_byte_view v)
        {
            if (v.size() != dest.size())
            {
                throw codec_error(codec_errc::size_mismatch, codec_at<a2b>::name,
                                  "chunk has " + std::to_string(v.size()) + " bytes, expected " +
                                      std::to_string(dest.size()));
            }
            std::memcpy(dest.data(), v.data(), v.size());
        };
        if constexpr (n_b2b == 0)
        {
            copy_in(cur);
        }
        else if constexpr (codec::direct_decoder<codec_at<a2b + 1>>)
        {
            std::get<a2b + 1>(m_codecs).decode_to(cur, dest);
        }
        else
        {
            buffer& out = stages.next();
            copy_in(std::get<a2b + 1>(m_codecs).decode(
                cur, out, {m_sizes[0], static_cast<std::size_t>(limits.max_chunk_bytes)}));
        }
        codec::a2b_decode(std::get<a2b>(m_codecs), dest, stages.next(), s.arena);
        return true;
    }
}

template <class... Codecs>
byte_view chain<Codecs...>::encode(const codec::array_view& chunk, codec::scratch_space& s) const
{
    codec::array_view v = chunk;
    detail::static_for<0, n_a2a>(
        [&](auto i)
        {
            buffer& out = codec::detail::a2a_target(s, v.data);
            v = std::get<i.value>(m_codecs).encode(std::move(v), out);
        });
    const std::size_t bytes = static_cast<std::size_t>(v.elements()) * v.element_size;
    byte_view cur = std::get<a2b>(m_codecs).encode(byte_view(v.data, bytes), s.a);
    codec::detail::stage_buffers stages(s);
    if (cur.data() == s.a.data() && bytes != 0)
    {
        stages.landed(cur, s.a);
    }
    detail::static_for<a2b + 1, n>(
        [&](auto i)
        {
            buffer& out = stages.next();
            std::get<i.value>(m_codecs).encode(cur, out);
            cur = out.view();
            stages.landed(cur, out);
        });
    return cur;
}

template <class... Codecs>
std::vector<codec_spec> chain<Codecs...>::specs() const
{
    std::vector<codec_spec> out;
    detail::static_for<0, n>(
        [&](auto i)
        { out.emplace_back(std::string(names[i.value]), std::get<i.value>(m_codecs).to_json()); });
    return out;
}

/// What the kernels and handles need of a bound codec chain (`chain<...>` and `dynamic_chain` are
/// the two models): built from codec specs for a context, whole-chunk decode and encode, the
/// partial decoder and encoder of one stored object (or none), and the specs it is bound to.
template <class C>
concept codec_chain = std::movable<C> &&
    requires(const C& c, const std::vector<codec_spec>& specs, const codec::codec_context& ctx,
             mutable_byte_view encoded, const codec::array_view& chunk, codec::scratch_space& s,
             const limit_values& limits)
{
    {
        C::from_specs(specs, ctx)
        } -> std::same_as<C>;
    {
        c.decode(encoded, s, limits)
        } -> std::same_as<codec::array_view>;
    {
        c.decode_into(encoded, encoded, s, limits)
        } -> std::same_as<bool>;
    {
        c.encode(chunk, s)
        } -> std::same_as<byte_view>;
    {
        c.partial_decoder()
        } -> std::same_as<const codec::partial_decoder*>;
    {
        c.partial_encoder()
        } -> std::same_as<const codec::partial_encoder*>;
    {
        c.specs()
        } -> std::same_as<std::vector<codec_spec>>;
    {
        c.context()
        } -> std::same_as<const codec::codec_context&>;
};

/// A single codec used where a chain is expected becomes a one-codec chain
/// (`array<T, N, sharding_indexed<...>>` means `array<T, N, chain<sharding_indexed<...>>>`).
/// Anything else is refused here, with the reason, rather than deep inside a kernel.
template <class C>
struct as_chain
{
    static_assert(
        codec::any_codec<C>,
        "zarrxt::array: the Codecs parameter must be zarrxt::dynamic_chain, a zarrxt::chain<...>, or one "
        "codec (a type meeting zarrxt::codec::any_codec, see docs/concepts/codec.md)");
    using type = chain<C>;
};
template <class... Codecs>
struct as_chain<chain<Codecs...>>
{
    using type = chain<Codecs...>;
};
template <>
struct as_chain<dynamic_chain>
{
    using type = dynamic_chain;
};
template <class C>
using as_chain_t = typename as_chain<C>::type;

} // namespace zarrxt
