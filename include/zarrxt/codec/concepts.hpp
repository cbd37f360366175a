/** @file codec/concepts.hpp
 *  The three codec kinds and their requirements.
 *
 *  A codec chain is zero or more array->array codecs, exactly one array->bytes codec, then zero
 *  or more bytes->bytes codecs (Zarr v3 core, "codecs"). A codec type declares its kind with a tag
 *  (`using codec_kind = codec::bytes_to_bytes_tag;`), its Zarr name, a plain configuration, and
 *  the operations of its kind below. Codecs work on bytes and on untyped strided arrays, never on
 *  T, so each codec compiles once however many element types an application uses.
 *
 *  See docs/concepts/codec.md for the requirement tables and tests/concepts/exemplars.cpp for a
 *  minimal user codec that the test suite keeps compiling.
 */
#pragma once

#include "../detail/buffer.hpp"
#include "../detail/json.hpp"
#include "../detail/small_vector.hpp"
#include "../detail/strided_copy.hpp"
#include "../dtype.hpp"
#include "../fill_value.hpp"
#include "../limits.hpp"
#include "../record.hpp"

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace zarrxt
{
class value_arena; // vlen.hpp
}

namespace zarrxt::codec
{

struct array_to_array_tag
{
};
struct array_to_bytes_tag
{
};
struct bytes_to_bytes_tag
{
};

namespace detail
{
struct registry_table; // codec_registry.hpp
}

/// What a codec is bound to when a chain is built: the array representation it will see.
struct codec_context
{
    data_type dtype{};                 ///< the array's data type (data_type.hpp), parameters included
    std::vector<swap_run> record_runs; ///< records: the multi-byte scalars in one (record.hpp)
    dims chunk_shape;                  ///< shape of the array the codec receives (after a2a codecs)
    fill_value fill;
    limit_values limits = limit_values::from(default_limits{}); ///< caps for decodes the codec runs itself
    /// The user codecs a dynamic_chain consults before the built-ins (codec_registry::table());
    /// null: the built-ins only. Shared, so the chains built from this context (a shard's inner
    /// and index chains) see the same codecs and keep them alive.
    std::shared_ptr<const detail::registry_table> registry;

    std::size_t element_size() const noexcept { return dtype.size(); }
};

/// An untyped strided array: `data` points at element (0, ..., 0); strides count elements.
struct array_view
{
    std::byte* data = nullptr;
    std::size_t element_size = 0;
    dims shape;
    sdims strides;
    /// Write sources only: null, or a byte per element with the strides of `data` (pointing at
    /// element (0, ..., 0) too) that is non-zero where the source holds a value to store; the
    /// other elements keep the chunk's old contents (selection writes, selection.hpp).
    const std::uint8_t* mask = nullptr;

    std::uint64_t elements() const noexcept
    {
        std::uint64_t n = 1;
        for (auto e : shape)
        {
            n *= e;
        }
        return n;
    }

    /// True when the elements occupy exactly `elements()` consecutive slots in some axis order
    /// (a C-contiguous array, or one whose axes a transpose permuted): element-wise codecs can then
    /// run over the memory in order and keep the strides.
    bool is_dense() const noexcept
    {
        zarrxt::detail::small_vector<std::size_t> axes;
        for (std::size_t i = 0; i < shape.size(); ++i)
        {
            if (shape[i] == 0)
            {
                return true;
            }
            if (shape[i] != 1)
            {
                if (strides[i] <= 0)
                {
                    return false;
                }
                axes.push_back(i);
            }
        }
        std::sort(axes.begin(), axes.end(),
                  [&](std::size_t a, std::size_t b) { return strides[a] < strides[b]; });
        std::int64_t expect = 1;
        for (auto a : axes)
        {
            if (strides[a] != expect)
            {
                return false;
            }
            expect *= static_cast<std::int64_t>(shape[a]);
        }
        return true;
    }

    bool is_c_contiguous() const noexcept
    {
        std::int64_t expect = 1;
        for (std::size_t i = shape.size(); i-- > 0;)
        {
            if (shape[i] != 1 && strides[i] != expect)
            {
                return false;
            }
            expect *= static_cast<std::int64_t>(shape[i]);
        }
        return true;
    }

    static sdims c_strides(const dims& shape)
    {
        sdims s(shape.size());
        std::int64_t acc = 1;
        for (std::size_t i = shape.size(); i-- > 0;)
        {
            s[i] = acc;
            acc *= static_cast<std::int64_t>(shape[i]);
        }
        return s;
    }
};

/// Bounds a bytes->bytes decoder must respect.
struct decode_hint
{
    std::optional<std::size_t> exact; ///< the decoded size is known and must match
    std::size_t max = 0;              ///< never produce more than this (limits; bombs stop here)
};

/// Reusable scratch space for one worker; codecs resize but never shrink these buffers.
struct scratch_space
{
    buffer a; ///< bytes->bytes stages alternate between a and b
    buffer b;
    buffer array; ///< array->array stages alternate between array and array_b
    buffer array_b;
    buffer work; ///< the kernels' chunk assembly buffer (never touched by codecs)
    buffer io;   ///< encoded bytes read from the store (a chunk, a batch of inner chunks, a copy window)
    buffer index; ///< a shard index read by a reader that keeps none (sharding_indexed's plan_read)
    /// Where the variable-length values this worker decodes are kept (vlen.hpp): the operation's,
    /// lent for its duration; null outside an operation on a variable-length array.
    value_arena* arena = nullptr;

    /// Kept between operations, the I/O buffer (a batch of a shard's inner chunks) would stay that
    /// large per worker for the array's lifetime: release it past `keep` bytes when an operation ends.
    void release_large_buffers(std::size_t keep) noexcept
    {
        io.release_if_above(keep);
        index.release_if_above(keep);
    }
};

/// Optional for bytes->bytes codecs: decode straight into caller memory of exactly the decoded size.
template <class C>
concept direct_decoder = requires(const C& c, mutable_byte_view in, mutable_byte_view dest)
{
    c.decode_to(in, dest);
};

/*********************************
 * requirements, one per kind    *
 *********************************/

template <class C>
concept named_codec = requires(const C& c, const json& cfg, const codec_context& ctx)
{
    {
        C::name
        } -> std::convertible_to<std::string_view>;
    {
        c.to_json()
        } -> std::convertible_to<json>;
    {
        C::from_json(cfg, ctx)
        } -> std::same_as<C>;
};

/// bytes -> bytes: `decode` returns the decoded bytes, either inside `out` or a sub-span of `in`
/// (a checksum codec strips its trailer without copying). `encode` appends nothing: it replaces
/// `out` with the encoded bytes. `encoded_size` returns the encoded size for a decoded size when it
/// is fixed (checksums) and nullopt otherwise (compressors); shard index chains need it fixed.
template <class C>
concept bytes_to_bytes_codec = named_codec<C> && std::is_same_v<typename C::codec_kind, bytes_to_bytes_tag> &&
    requires(const C& c, byte_view in, mutable_byte_view min, buffer& out, const decode_hint& hint)
{
    {
        c.encode(in, out)
        } -> std::same_as<void>;
    {
        c.decode(min, out, hint)
        } -> std::same_as<mutable_byte_view>;
    {
        c.encoded_size(std::size_t{})
        } -> std::same_as<std::optional<std::size_t>>;
};

/// array -> bytes: `decode` turns encoded bytes into a C-contiguous native-order array of
/// `ctx.chunk_shape` (possibly in place, possibly into `scratch`) and returns its bytes;
/// `encode` turns a C-contiguous native array into bytes (possibly without copying).
template <class C>
concept array_to_bytes_codec = named_codec<C> && std::is_same_v<typename C::codec_kind, array_to_bytes_tag> &&
    requires(const C& c, mutable_byte_view in, byte_view cin, buffer& scratch)
{
    {
        c.decode(in, scratch)
        } -> std::same_as<mutable_byte_view>;
    {
        c.encode(cin, scratch)
        } -> std::same_as<byte_view>;
};

/// Decode with an array->bytes codec. A codec whose values live outside the decoded chunk (the
/// vlen codecs) declares `decode(in, scratch, value_arena*)` and gets the operation's arena.
template <class C>
mutable_byte_view a2b_decode(const C& c, mutable_byte_view in, buffer& scratch, value_arena* arena)
{
    if constexpr (requires { c.decode(in, scratch, arena); })
    {
        return c.decode(in, scratch, arena);
    }
    else
    {
        return c.decode(in, scratch);
    }
}

/// array -> array: `encoded_shape` maps the decoded shape to the encoded one; `decode` maps an
/// encoded view to a view in decoded axis order (a transpose only permutes strides); `encode`
/// materialises the encoded array, C-contiguous, into `out`.
template <class C>
concept array_to_array_codec = named_codec<C> && std::is_same_v<typename C::codec_kind, array_to_array_tag> &&
    requires(const C& c, const dims& shape, array_view v, buffer& out)
{
    {
        c.encoded_shape(shape)
        } -> std::same_as<dims>;
    {
        c.decode(v, out)
        } -> std::same_as<array_view>;
    {
        c.encode(v, out)
        } -> std::same_as<array_view>;
};

/// Optional for array->array codecs: the element type they store when it differs from the one
/// they receive (numcodecs.fixedscaleoffset). Codecs after them are bound to that type.
template <class C>
dtype_id encoded_dtype_of(const C& c, dtype_id in)
{
    if constexpr (requires { c.encoded_dtype(in); })
    {
        return c.encoded_dtype(in);
    }
    else
    {
        return in;
    }
}

/// The data type the codecs after `c` are bound to: `in` itself, parameters kept (a fixed-width
/// string's size, a record's fields), unless `c` stores another kind; the codecs that do
/// (numeric casts) take only numeric types, which have no parameters.
template <class C>
data_type encoded_type_of(const C& c, const data_type& in)
{
    const dtype_id out = encoded_dtype_of(c, in.id);
    return out == in.id ? in : zarrxt::data_type(out);
}

/// Optional for array->array codecs that change the element type: the fill value as the codecs
/// after them see it (cast_value, scale_offset); unchanged otherwise.
template <class C>
fill_value encoded_fill_of(const C& c, const fill_value& in)
{
    if constexpr (requires { c.encoded_fill(in); })
    {
        return c.encoded_fill(in);
    }
    else
    {
        return in;
    }
}

/// Whether `n` names codec C: its Zarr name, or one of the older names it is still read under
/// (`static constexpr std::string_view aliases[]`, e.g. "zlib" for numcodecs.zlib).
template <class C>
bool name_matches(std::string_view n) noexcept
{
    if (n == C::name)
    {
        return true;
    }
    if constexpr (requires { C::aliases; })
    {
        for (std::string_view a : C::aliases)
        {
            if (n == a)
            {
                return true;
            }
        }
    }
    return false;
}

template <class C>
concept any_codec = array_to_array_codec<C> || array_to_bytes_codec<C> || bytes_to_bytes_codec<C>;

/// 0 = array->array, 1 = array->bytes, 2 = bytes->bytes (the order a chain must follow).
template <class C>
constexpr int kind_rank() noexcept
{
    if constexpr (std::is_same_v<typename C::codec_kind, array_to_array_tag>)
    {
        return 0;
    }
    else if constexpr (std::is_same_v<typename C::codec_kind, array_to_bytes_tag>)
    {
        return 1;
    }
    else
    {
        return 2;
    }
}

/// Shared configuration helpers for from_json implementations.
namespace detail
{

[[noreturn]] inline void bad_config(std::string_view codec, const std::string& msg)
{
    throw metadata_error(metadata_errc::invalid_codec_config, std::string(codec) + ": " + msg);
}

inline void check_keys(std::string_view codec, const json& cfg, std::initializer_list<std::string_view> known)
{
    if (!cfg.is_object())
    {
        bad_config(codec, "configuration must be an object");
    }
    for (auto it = cfg.begin(); it != cfg.end(); ++it)
    {
        bool ok = false;
        for (auto k : known)
        {
            ok = ok || it.key() == k;
        }
        if (!ok)
        {
            bad_config(codec, "unknown configuration member \"" + it.key() + "\"");
        }
    }
}

inline std::int64_t int_member(std::string_view codec, const json& cfg, const char* key, std::int64_t def,
                               std::int64_t lo, std::int64_t hi)
{
    auto it = cfg.find(key);
    if (it == cfg.end())
    {
        return def;
    }
    if (!it->is_number_integer())
    {
        bad_config(codec, "\"" + std::string(key) + "\" must be an integer, got " + it->dump());
    }
    const auto v = it->get<std::int64_t>();
    if (v < lo || v > hi)
    {
        bad_config(codec, "\"" + std::string(key) + "\" must be in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "], got " + std::to_string(v));
    }
    return v;
}

/// For element-wise array->array codecs: `f(src, dst, n)` converts n elements in memory order into
/// `out` (elements of `out_size` bytes); the result keeps the input's shape and element strides.
/// A view that is not dense is first made C-contiguous.
template <class F>
array_view map_elements(const array_view& in, buffer& out, std::size_t out_size, F&& f)
{
    const std::size_t n = static_cast<std::size_t>(in.elements());
    array_view src = in;
    buffer dense;
    if (!in.is_dense())
    {
        dense.resize_discard(n * in.element_size);
        src.strides = array_view::c_strides(in.shape);
        zarrxt::detail::strided_copy(dense.data(), src.strides, in.data, in.strides, in.shape,
                                     in.element_size);
        src.data = dense.data();
    }
    out.resize_discard(n * out_size);
    if (n != 0)
    {
        f(static_cast<const std::byte*>(src.data), out.data(), n);
    }
    array_view r = src;
    r.data = out.data();
    r.element_size = out_size;
    return r;
}

} // namespace detail
} // namespace zarrxt::codec
