/** @file metadata/bind_chain.hpp
 *  From an array's metadata to its bound codec chain. This is the one place where metadata meets
 *  the codecs: the codecs see only a codec_context (data type, chunk shape, fill value, limits)
 *  and a list of codec_specs, never array_metadata, so codec/ does not depend on metadata/.
 */
#pragma once

#include "../codec/codec_registry.hpp"
#include "../codec/concepts.hpp"
#include "array_metadata.hpp"

namespace zarrxt
{

/// The context a chain for the chunks of an array is bound to; `registry`: the user codecs a
/// dynamic chain knows besides the built-ins (codec_registry.hpp).
inline codec::codec_context context_of(const array_metadata& m, const limit_values& limits,
                                       const codec_registry& registry = {})
{
    codec::codec_context ctx;
    ctx.dtype = m.dtype;
    if (m.dtype == dtype_id::structured)
    {
        ctx.record_runs = record_swap_runs(m.dtype.fields);
    }
    ctx.chunk_shape = dims(m.chunk_shape);
    ctx.fill = m.fill;
    ctx.limits = limits;
    ctx.registry = registry.table();
    return ctx;
}

/// Build and validate the codec chain of an array: `dynamic_chain` or a static `chain<...>`.
template <class Chain>
Chain bind_chain(const array_metadata& m, const limit_values& limits, const codec_registry& registry = {})
{
    return Chain::from_specs(m.codecs, context_of(m, limits, registry));
}

} // namespace zarrxt
