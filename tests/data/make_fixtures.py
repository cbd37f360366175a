#!/usr/bin/python3
"""Regenerate the committed Zarr v2 fixtures in tests/data/v2 with Debian's python3-zarr 2.13.

    /usr/bin/python3 tests/data/make_fixtures.py

The values follow the formula stated in tests/peers/zarr_python_peer.py (whose writer this
reuses), so the C++ test can check them without Python. Next to the arrays (v2/arrays/<name>)
are the values as zarr-python reads them back (v2/expected/<name>.bin: C order, little-endian,
bool as one byte) and v2/manifest.json. Output is deterministic: gzip's header timestamp is
pinned to 0, the other compressors have none.
"""

import os
import shutil
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
sys.dont_write_bytecode = True  # no __pycache__ inside the source tree

import gzip  # noqa: E402

import zarr_python_peer as peer  # noqa: E402

# GzipFile stamps the current time into each member header; pin it so reruns are byte-identical.
gzip.time = types.SimpleNamespace(time=lambda: 0)

C = dict(peer.COMPRESSORS)
B = dict(peer.BLOSC_VARIANTS)
PARTIAL = {"offset": [1, 2], "extent": [4, 3]}

# Small arrays (a few hundred bytes each) that between them cover every dtype, both byte
# orders, all compressors, F order, both separators, ragged edges, fill values with unwritten
# chunks, null fill and a scalar.
FIXTURES = [
    dict(dtype="int16", byteorder=">", shape=[3, 4, 5], chunks=[2, 3, 2], clabel="gzip", compressor=C["gzip"],
         order="F", sep="/", fill=0, written=None),
    dict(dtype="float32", byteorder="<", shape=[6, 7], chunks=[4, 3], clabel="zlib", compressor=C["zlib"],
         order="C", sep=".", fill="NaN", written=PARTIAL, label="nan"),
    dict(dtype="complex64", byteorder=">", shape=[5, 3], chunks=[2, 2], clabel="zstd", compressor=C["zstd"],
         order="C", sep="/", fill=0, written=None),
    dict(dtype="complex128", byteorder="<", shape=[6, 7], chunks=[4, 3], clabel="none", compressor=None,
         order="F", sep=".", fill=[1.5, -2.0], written=PARTIAL, label="fill"),
    dict(dtype="bool", byteorder="|", shape=[9, 4], chunks=[4, 4], clabel="blosc", compressor=C["blosc"],
         order="C", sep=".", fill=0, written=None),
    dict(dtype="float16", byteorder="<", shape=[13], chunks=[5], clabel="none", compressor=None,
         order="C", sep=".", fill=0, written=None),
    dict(dtype="float64", byteorder=">", shape=[3, 2, 3, 2], chunks=[2, 2, 2, 1],
         clabel="blosc-zstd-bitshuffle", compressor=B["blosc-zstd-bitshuffle"], order="F", sep="/", fill=0,
         written=None),
    dict(dtype="uint64", byteorder="<", shape=[6, 7], chunks=[4, 3], clabel="zstd", compressor=C["zstd"],
         order="C", sep=".", fill=2 ** 64 - 1, written=PARTIAL, label="fillmax"),
    dict(dtype="int64", byteorder=">", shape=[4, 3], chunks=[3, 3], clabel="zlib", compressor=C["zlib"],
         order="F", sep=".", fill=None, written=None, label="nullfill"),
    dict(dtype="int8", byteorder="|", shape=[5, 6], chunks=[2, 4], clabel="gzip", compressor=C["gzip"],
         order="F", sep="/", fill=0, written=None),
    dict(dtype="uint8", byteorder="|", shape=[7], chunks=[3], clabel="blosc-blosclz-noshuffle",
         compressor=B["blosc-blosclz-noshuffle"], order="C", sep=".", fill=0, written=None),
    dict(dtype="uint16", byteorder=">", shape=[4, 5], chunks=[3, 3], clabel="none", compressor=None,
         order="C", sep=".", fill=0, written=None),
    dict(dtype="int32", byteorder="<", shape=[], chunks=[], clabel="zstd", compressor=C["zstd"],
         order="C", sep=".", fill=0, written=None, label="scalar"),
    dict(dtype="uint32", byteorder=">", shape=[5, 5], chunks=[2, 3], clabel="blosc-lz4hc-autoshuffle",
         compressor=B["blosc-lz4hc-autoshuffle"], order="F", sep=".", fill=0, written=None),
]


def main():
    out = os.path.join(HERE, "v2")
    shutil.rmtree(out, ignore_errors=True)
    entries = peer.write_matrix(out, FIXTURES, writer="zarr-python " + peer.zarr.__version__
                                + " via tests/data/make_fixtures.py")
    print("wrote %d fixtures into %s" % (len(entries), out))


if __name__ == "__main__":
    main()
