#!/usr/bin/python3
"""Input data of the zarrxt benchmarks, written by writers that are not zarrxt.

Run with Debian's /usr/bin/python3 (python3-zarr 2.13, numcodecs 0.11, numpy):

    make_data.py w1 DIR          v2_gzip (python3-zarr), v3_sharded and index_stress (spec writer)
    make_data.py w2 DIR [--big]  the W2 1-d uint8 arrays: v3 (spec writer) and v2_* (python3-zarr);
                                 --big: the 1e9 layout only

DIR must not exist yet. The v3 arrays that zarrita can write (v3_raw, v3_gzip) are written by
bench/peers/zarrita_bench.mjs. The others are written by the small spec-following writer below
(numpy for the values, zlib for gzip, numcodecs' Zstd on libzstd for zstd, and a CRC-32C written
from the Castagnoli polynomial), because no independent writer installed here can:
  - sharded arrays: zarrita 0.7.5 refuses to write shards, and Debian's zarr-python 2.13 predates
    the final v3 spec;
  - the unsharded W2 zstd arrays: zarrita's zstd encoder (numcodecs.js) turns level 0 into level 1,
    and Zarr's zstd level 0 means libzstd's default level, 3. The W2 "none" arrays come from the
    same writer so that all W2 layouts are produced alike.
The W2 v2 arrays (v2_<kind>_<codec>: layout a, one object per 1e5-element chunk, Zstd(level=3) or
no compressor) are written by python3-zarr itself, for the peers that read only Zarr v2
(python3-zarr 2.13 and GDAL 3.6).

The value formulas (the C++ side implements them again in bench/common.hpp):
  W1: element (row, col) of a 4096 x 4096 uint16 array is (row * 17 + col * 31) % 65521 + 1.
  W2 repeated:    every element is 1.
  W2 semi_random: element i is S[i % 256] + (fmix32((i + 12345) mod 2**32) % 3) - 1, where
                  S[j] = floor(128.5 + 50 * sin(2 * pi * j / 256)) and fmix32 is murmur3's 32-bit
                  finaliser (a counter-based generator: any element can be computed alone).
"""

import json
import math
import os
import sys
import zlib

import numpy as np

W1_SHAPE = 4096
GZIP_LEVEL = 5
W2_SEED = 12345


def w1_values(rows, cols, r0=0, c0=0):
    r = np.arange(r0, r0 + rows, dtype=np.int64)[:, None]
    c = np.arange(c0, c0 + cols, dtype=np.int64)[None, :]
    return ((r * 17 + c * 31) % 65521 + 1).astype("<u2")


def sine_table():
    t = [math.floor(128.5 + 50 * math.sin(2 * math.pi * j / 256)) for j in range(256)]
    # No sample lies near a rounding boundary, so every language's sin() gives this table.
    assert all(0.001 < (128.5 + 50 * math.sin(2 * math.pi * j / 256)) % 1 < 0.999 for j in range(256))
    return np.array(t, dtype=np.int64)


def w2_values(kind, first, n):
    if kind == "repeated":
        return np.ones(n, dtype=np.uint8)
    i = np.arange(first, first + n, dtype=np.uint64)
    h = (i + np.uint64(W2_SEED)).astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    noise = (h % np.uint32(3)).astype(np.int64) - 1
    return (sine_table()[(i & np.uint64(255)).astype(np.int64)] + noise).astype(np.uint8)


# ------------------------------------------------------------------------------- CRC-32C


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# ------------------------------------------------------------------------- v3 spec writer


def gzip_bytes(raw):
    c = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)  # wbits 31: a gzip member, mtime 0
    return c.compress(raw) + c.flush()


def zstd_codec():
    # Zarr's zstd level 0 means libzstd's default level, 3 (ZSTD_CLEVEL_DEFAULT). numcodecs 0.11
    # turns level 0 into level 1 (about 30 % larger output on semi_random), so ask for 3 itself.
    from numcodecs import Zstd

    return Zstd(level=3)


def write_file(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def codec_json(codec, endian=True):
    out = [{"name": "bytes", "configuration": {"endian": "little"}}] if endian else [{"name": "bytes"}]
    if codec == "gzip":
        out.append({"name": "gzip", "configuration": {"level": GZIP_LEVEL}})
    elif codec == "zstd":
        out.append({"name": "zstd", "configuration": {"level": 0, "checksum": False}})
    return out


def write_v3_metadata(path, shape, chunk_shape, dtype, codecs):
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunk_shape}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0,
        "codecs": codecs,
        "attributes": {"writer": "bench/peers/make_data.py (spec writer)"},
    }
    write_file(os.path.join(path, "zarr.json"), json.dumps(doc, indent=2).encode())


def sharding_json(inner_shape, codec, endian=True):
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": inner_shape,
            "codecs": codec_json(codec, endian),
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end",
        },
    }


def encode_inner(raw, codec):
    if codec == "gzip":
        return gzip_bytes(raw)
    if codec == "zstd":
        return bytes(zstd_codec().encode(raw))
    return raw


def shard_bytes(pieces):
    """Inner chunks back to back, then the index (offset, nbytes per chunk, C order) + crc32c."""
    out = bytearray()
    index = np.empty((len(pieces), 2), dtype="<u8")
    for k, p in enumerate(pieces):
        index[k] = (len(out), len(p))
        out += p
    ib = index.tobytes()
    return bytes(out) + ib + crc32c(ib).to_bytes(4, "little")


def write_sharded_2d(path, values, shard, inner, codec):
    n = values.shape[0]
    write_v3_metadata(path, [n, n], [shard, shard], "uint16", [sharding_json([inner, inner], codec)])
    g = shard // inner
    for sr in range(n // shard):
        for sc in range(n // shard):
            pieces = []
            for ir in range(g):
                for ic in range(g):
                    r = sr * shard + ir * inner
                    c = sc * shard + ic * inner
                    pieces.append(
                        encode_inner(
                            np.ascontiguousarray(values[r : r + inner, c : c + inner]).tobytes(), codec
                        )
                    )
            write_file(os.path.join(path, "c", str(sr), str(sc)), shard_bytes(pieces))


def write_1d(path, kind, n, chunk, shard, codec):
    """A 1-d uint8 array; shard == 0: chunks are objects, else shards of shard/chunk inner chunks."""
    outer = shard if shard else chunk
    codecs = [sharding_json([chunk], codec, endian=False)] if shard else codec_json(codec, endian=False)
    write_v3_metadata(path, [n], [outer], "uint8", codecs)
    per = shard // chunk if shard else 1
    for obj in range(n // outer):
        first = obj * outer
        pieces = [
            encode_inner(w2_values(kind, first + k * chunk, chunk).tobytes(), codec) for k in range(per)
        ]
        write_file(os.path.join(path, "c", str(obj)), shard_bytes(pieces) if shard else pieces[0])


# ------------------------------------------------------------------------------- data sets


def make_w1(root):
    import zarr
    from numcodecs import GZip

    values = w1_values(W1_SHAPE, W1_SHAPE)
    z = zarr.open_array(
        os.path.join(root, "v2_gzip"),
        mode="w-",
        shape=(W1_SHAPE, W1_SHAPE),
        chunks=(64, 64),
        dtype="<u2",
        compressor=GZip(level=GZIP_LEVEL),
        fill_value=0,
    )
    z[:, :] = values
    write_sharded_2d(os.path.join(root, "v3_sharded"), values, 512, 64, "gzip")
    write_sharded_2d(os.path.join(root, "index_stress"), w1_values(1024, 1024), 1024, 8, "none")
    return {
        "v2_gzip": "python3-zarr %s, numcodecs GZip(level=%d)" % (zarr.__version__, GZIP_LEVEL),
        "v3_sharded": "bench/peers/make_data.py spec writer (zlib gzip level %d, crc32c index)" % GZIP_LEVEL,
        "index_stress": "bench/peers/make_data.py spec writer (raw inner chunks, crc32c index)",
    }


W2_LAYOUTS = [("a", 0), ("b", 100_000), ("c", 100_000_000)]
W2_N = 100_000_000
W2_CHUNK = 100_000


def write_1d_v2(path, kind, codec):
    """A Zarr v2 1-d uint8 array of layout a, written by python3-zarr chunk by chunk."""
    import zarr

    z = zarr.open_array(
        path,
        mode="w-",
        shape=(W2_N,),
        chunks=(W2_CHUNK,),
        dtype="|u1",
        compressor=zstd_codec() if codec == "zstd" else None,
        fill_value=0,
    )
    step = 100 * W2_CHUNK  # whole chunks, 10 MB at a time
    for first in range(0, W2_N, step):
        z[first : first + step] = w2_values(kind, first, step)
    return "python3-zarr %s, %s" % (
        zarr.__version__,
        "numcodecs Zstd(level=3)" if codec == "zstd" else "no compressor",
    )


def make_w2(root, big):
    import numcodecs

    writers = {}
    kinds = ["repeated", "semi_random"]
    if big:
        for kind in kinds:
            for codec in ["zstd", "none"]:
                name = "big_%s_%s" % (kind, codec)
                write_1d(os.path.join(root, name), kind, 1_000_000_000, 100_000, 10_000_000, codec)
                writers[name] = "spec writer"
    else:
        for kind in kinds:
            for codec in ["zstd", "none"]:
                for label, shard in W2_LAYOUTS:
                    name = "%s_%s_%s" % (label, kind, codec)
                    write_1d(os.path.join(root, name), kind, W2_N, W2_CHUNK, shard, codec)
                    writers[name] = "spec writer"
    note = (
        "bench/peers/make_data.py spec writer (numcodecs %s Zstd(level=3): libzstd's default, which is what "
        "the metadata's level 0 means)" % numcodecs.__version__
    )
    writers = {k: note for k in writers}
    if not big:
        for kind in kinds:
            for codec in ["zstd", "none"]:
                name = "v2_%s_%s" % (kind, codec)
                writers[name] = write_1d_v2(os.path.join(root, name), kind, codec)
    return writers


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("w1", "w2"):
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[2]
    if os.path.exists(root):
        print("make_data: %s exists; refusing to overwrite it" % root, file=sys.stderr)
        return 1
    os.makedirs(root)
    writers = make_w1(root) if sys.argv[1] == "w1" else make_w2(root, "--big" in sys.argv)
    with open(os.path.join(root, "writers.json"), "w") as f:
        json.dump(writers, f, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
