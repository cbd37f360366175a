/** @file codec/vlen_bytes.hpp
 *  `vlen-bytes` (array -> bytes): variable-length bytes (the `bytes` data type, also named `variable_length_bytes`;
 *  v2 `|O` arrays with the `vlen-bytes` filter).
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-bytes
 *  Zarr v2 equivalent: the `vlen-bytes` object codec, the first of an `|O` array's filters
 *  (metadata/v2.hpp lowers it to this codec and raises it back).
 *
 *  The chunk layout and the strict decoding rules are in codec/vlen_format.hpp. No configuration.
 */
#pragma once

#include "vlen_format.hpp"

namespace zarrxt::codec
{

using vlen_bytes = detail::vlen_codec<false>;
static_assert(array_to_bytes_codec<vlen_bytes>, "vlen_bytes must model array_to_bytes_codec");

} // namespace zarrxt::codec
