/** @file codec/registry.hpp
 *  The built-in codecs a `dynamic_chain` can build from metadata: a compile-time list, looked up by
 *  name. There is no run-time registration to remember and no global table; a codec is compiled
 *  into a program only through the headers it includes (this one includes all built-ins). User
 *  codecs come in a codec_registry value (codec_registry.hpp) whose table the codec_context carries, which
 *  make_codec and codec_kind consult before this list.
 */
#pragma once

#include "blosc.hpp"
#include "bytes.hpp"
#include "cast_value.hpp"
#include "crc32c.hpp"
#include "dynamic_chain.hpp"
#include "gzip.hpp"
#include "numcodecs/bitround.hpp"
#include "numcodecs/bz2.hpp"
#include "numcodecs/delta.hpp"
#include "numcodecs/fixedscaleoffset.hpp"
#include "numcodecs/lz4.hpp"
#include "numcodecs/lzma.hpp"
#include "numcodecs/packbits.hpp"
#include "numcodecs/shuffle.hpp"
#include "packbits.hpp"
#include "scale_offset.hpp"
#include "sharding_indexed.hpp"
#include "transpose.hpp"
#include "vlen_bytes.hpp"
#include "vlen_utf8.hpp"
#include "zlib.hpp"
#include "zstd.hpp"

#include <string>

namespace zarrxt::codec::detail
{

template <class... Codecs>
struct codec_list
{
};

using builtin_codecs =
    codec_list<transpose, numcodecs::delta, numcodecs::bitround, numcodecs::fixedscaleoffset, cast_value,
               scale_offset, numcodecs::packbits, bytes<>, packbits, vlen_utf8, vlen_bytes,
               sharding_indexed<dynamic_chain, dynamic_chain, any_index_cache>, gzip, zlib, zstd, crc32c,
               blosc, numcodecs::shuffle, numcodecs::lz4, numcodecs::bz2, numcodecs::lzma>;

template <class... Codecs>
int kind_of_name(const std::string& name, codec_list<Codecs...>)
{
    int kind = -1;
    ((kind = kind < 0 && name_matches<Codecs>(name) ? kind_rank<Codecs>() : kind), ...);
    return kind;
}

template <class... Codecs>
made_codec make_from_list(const codec_spec& spec, const codec_context& ctx, codec_list<Codecs...>)
{
    made_codec out;
    (try_make<Codecs>(spec, ctx, out) || ...);
    return out;
}

/// The codec names an unknown-codec error lists: the built-ins, then a registry's own.
[[noreturn]] inline void throw_unknown_codec(const std::string& name, const registry_table* user = nullptr)
{
    std::string registered;
    if (user != nullptr)
    {
        for (const auto& e : user->entries)
        {
            registered += (registered.empty() ? "; registered: " : ", ") + e.name;
        }
    }
    throw metadata_error(
        metadata_errc::unknown_codec,
        "codec \"" + name +
            "\" is not supported by zarrxt (supported: bytes, transpose, gzip, zstd, crc32c, "
            "blosc, sharding_indexed, packbits, cast_value, scale_offset, vlen-utf8, vlen-bytes, "
            "numcodecs.zlib, "
            "numcodecs.delta, numcodecs.bitround, numcodecs.fixedscaleoffset, numcodecs.shuffle, "
            "numcodecs.lz4, numcodecs.bz2, numcodecs.lzma, numcodecs.packbits" +
            registered + ")");
}

ZARRXT_DECL int builtin_codec_kind(const std::string& name)
{
    const int k = kind_of_name(name, builtin_codecs{});
    if (k < 0)
    {
        throw_unknown_codec(name);
    }
    return k;
}

ZARRXT_DECL made_codec make_builtin_codec(const codec_spec& spec, const codec_context& ctx)
{
    made_codec m = make_from_list(spec, ctx, builtin_codecs{});
    if (!m.a2a && !m.a2b && !m.b2b)
    {
        throw_unknown_codec(spec.name);
    }
    return m;
}

ZARRXT_DECL int codec_kind(const std::string& name, const codec_context& ctx)
{
    if (ctx.registry)
    {
        if (const registry_entry* e = ctx.registry->find(name))
        {
            return e->kind;
        }
    }
    const int k = kind_of_name(name, builtin_codecs{});
    if (k < 0)
    {
        throw_unknown_codec(name, ctx.registry.get());
    }
    return k;
}

ZARRXT_DECL made_codec make_codec(const codec_spec& spec, const codec_context& ctx)
{
    if (ctx.registry)
    {
        if (const registry_entry* e = ctx.registry->find(spec.name))
        {
            made_codec m;
            e->make(spec, ctx, m);
            return m;
        }
    }
    made_codec m = make_from_list(spec, ctx, builtin_codecs{});
    if (!m.a2a && !m.a2b && !m.b2b)
    {
        throw_unknown_codec(spec.name, ctx.registry.get());
    }
    return m;
}

} // namespace zarrxt::codec::detail
