/** @file zarrxt.hpp
 *  The umbrella header: everything a user needs. Library headers never include it.
 */
#pragma once

#include "array.hpp"
#include "codec/blosc.hpp"
#include "codec/bytes.hpp"
#include "codec/cast_value.hpp"
#include "codec/chain.hpp"
#include "codec/crc32c.hpp"
#include "codec/dynamic_chain.hpp"
#include "codec/gzip.hpp"
#include "codec/packbits.hpp"
#include "codec/scale_offset.hpp"
#include "codec/sharding_indexed.hpp"
#include "codec/transpose.hpp"
#include "codec/zlib.hpp"
#include "codec/zstd.hpp"
#include "config.hpp"
#include "consolidated.hpp"
#include "datetime.hpp"
#include "group.hpp"
#include "store/consolidated.hpp"
#include "store/counting.hpp"
#include "store/filesystem.hpp"
#include "store/latency.hpp"
#include "store/memory.hpp"
#include "visit.hpp"
