/** @file codec/vlen_utf8.hpp
 *  `vlen-utf8` (array -> bytes): variable-length UTF-8 text (the `string` data type; v2 `|O` arrays with the `vlen-utf8`
 *  filter, what zarr-python writes for `dtype=str`).
 *  Spec: https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/vlen-utf8
 *  Zarr v2 equivalent: the `vlen-utf8` object codec, the first of an `|O` array's filters
 *  (metadata/v2.hpp lowers it to this codec and raises it back).
 *
 *  The chunk layout and the strict decoding rules are in codec/vlen_format.hpp. No configuration.
 */
#pragma once

#include "vlen_format.hpp"

namespace zarrxt::codec
{

using vlen_utf8 = detail::vlen_codec<true>;
static_assert(array_to_bytes_codec<vlen_utf8>, "vlen_utf8 must model array_to_bytes_codec");

} // namespace zarrxt::codec
