/** @file detail/json.hpp
 *  The only header that includes nlohmann/json. zarrxt uses ordered_json so that documents it
 *  reads and writes back keep their member order (lossless round trips of zarr.json/.zarray).
 */
#pragma once

#include <nlohmann/json.hpp>

namespace zarrxt
{
using json = nlohmann::ordered_json;
} // namespace zarrxt
