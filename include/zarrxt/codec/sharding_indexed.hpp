/** @file codec/sharding_indexed.hpp
 *  `sharding_indexed` (array -> bytes): a shard holds a grid of inner chunks, each encoded with the
 *  inner codec chain, plus an index locating them.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html
 *
 *  Shard layout (index at the end; with index_location "start" the index comes first):
 *
 *      +----------+----------+-----+----------------------------------------------+
 *      | chunk a  | chunk b  | ... | index: (offset, nbytes) uint64 per inner     |
 *      | (inner   | encoded) |     | chunk in C order, encoded by index_codecs    |
 *      +----------+----------+-----+----------------------------------------------+
 *
 *  An entry of (2^64-1, 2^64-1) marks an inner chunk that is not stored (it reads as fill value).
 *  Every entry is validated before use: inside the shard, no overflow, not overlapping the index.
 *
 *  Reads are partial: the index is read once (or served by the index cache), then only the byte
 *  ranges of the inner chunks a request touches, with adjacent ranges coalesced. Writes rebuild a
 *  shard once per call: touched inner chunks are re-encoded, untouched ones are copied as encoded
 *  bytes without decoding, empty inner chunks are not stored, and a shard left with no inner chunk
 *  is erased. Nested sharding (a sharding codec as the inner chain) reads through byte ranges of
 *  the outer shard all the way down.
 *
 *  The codec is split by concept under sharding_indexed/: declaration.hpp (the class),
 *  config.hpp (configuration and geometry), index_format.hpp (the index as data, which the caches
 *  hold), index.hpp (reading and validating an index), read.hpp and write.hpp. This header is the
 *  extension's: it includes every part.
 */
#pragma once

#include "sharding_indexed/config.hpp"
#include "sharding_indexed/declaration.hpp"
#include "sharding_indexed/index.hpp"
#include "sharding_indexed/read.hpp"
#include "sharding_indexed/write.hpp"
