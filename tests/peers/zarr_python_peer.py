#!/usr/bin/python3
"""The zarr-python 2 peer of zarrxt's interoperability tests (Zarr v2).

Run it with Debian's /usr/bin/python3, the interpreter that sees python3-zarr 2.13 and
numcodecs 0.11:

    zarr_python_peer.py write DIR    write a matrix of v2 arrays with zarr-python into DIR
    zarr_python_peer.py verify DIR   check arrays that zarrxt wrote into DIR
    zarr_python_peer.py dump PATH    print one array as zarr-python reads it (hex, see below)
    zarr_python_peer.py dump-shape PATH    the shape as JSON on one line, then as dump
    zarr_python_peer.py resize PATH S0,S1,...   zarr-python's resize of one array
    zarr_python_peer.py append PATH AXIS N     zarr-python's append of N slices along AXIS,
                                            valued 3 * (C-order index) + 1 (int32)
    zarr_python_peer.py write-groups DIR    write a hierarchy (nested groups with attributes,
                                            arrays inside) into DIR/arrays, described in the
                                            manifest as well (see `groups` below)
    zarr_python_peer.py verify-groups DIR   check a hierarchy zarrxt wrote from such a manifest
    zarr_python_peer.py consolidate DIR     zarr.consolidate_metadata of the hierarchy in DIR/arrays
    zarr_python_peer.py verify-consolidated DIR   verify-groups through zarr.open_consolidated
                                            alone (the test removes every node's own metadata)
    zarr_python_peer.py write-times DIR    write datetime64 / timedelta64 arrays into DIR and print
                                            each one's description as JSON (see times_of)
    zarr_python_peer.py dump-times PATH     print one datetime64 / timedelta64 array as times_of does
    zarr_python_peer.py write-strings DIR  write |S n / <U n / >U n arrays into DIR and print each
                                            one's description as JSON (see strings_of)
    zarr_python_peer.py dump-strings PATH   print one fixed-width or |O string array as strings_of does
    zarr_python_peer.py write-vlen DIR     write |O arrays (vlen-utf8, vlen-bytes) into DIR and print
                                            each one's description as JSON (see strings_of)
    zarr_python_peer.py write-records DIR  write structured arrays into DIR and print each one's
                                            description as JSON (see records_of)
    zarr_python_peer.py dump-records PATH  print one structured array as records_of does
    zarr_python_peer.py selftest     print formula values, for comparing implementations by eye

Both directions share one manifest format, DIR/manifest.json:

    {"writer": "...", "arrays": [{
        "name": "int16.be.gzip.F.slash",   # the array's directory under DIR/arrays
        "dtype": "int16",                   # Zarr v3 data type name
        "shape": [...], "chunks": [...],
        "seed": 7,                          # the formula's per-array seed
        "written": null | {"offset": [...], "extent": [...]},   # null: the whole array
        "overlay": {"offset", "extent", "seed"},   # optional: a box rewritten with another seed
        "fill_value": <v2 JSON fill value>, # what unwritten elements read as (null: zero)
        "expect": {"typestr": ">i2", "order": "F", "dimension_separator": "/",
                   "compressor": null | {"id": "gzip", "level": 5, ...},
                   "filters": [{"id": "packbits"}, ...]},   # only when the array has filters
        "expected": "expected/<name>.bin",  # write only: the peer's own read-back
        "digest": "<16 hex digits>"}]}      # write only: SHA-256 of the expected bytes

Hierarchies add "groups": [{"path": "sub/deeper", "attributes": {...}, "groups": [child group
names], "arrays": [child array names]}] to the manifest; array names are then paths inside the
hierarchy and array entries carry their "attributes". The writer fills these from what
zarr-python reads back (attrs, group_keys, array_keys), not from what it was asked to write.

The expected bytes are the array as zarr-python reads it back, C order, little-endian, bool as
one byte. Comparing against the peer's own output (not against zarrxt's) is what lets the C++
test fail.

The value formula (implemented identically in zarrita_peer.mjs and tests/support/interop.hpp):
element i (flat C-order index in the whole array) of an array with seed s has k = i + 7919 * s;
    integers of b bits: u = (k * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) mod 2**64, value =
                        the top b bits of u (u >> (64 - b)), two's complement for signed types;
    bool:               ((5 * k + 1) mod 7) < 3;
    floats:             by k mod 97: 5 -> NaN, 11 -> +inf, 23 -> -inf, 31 -> -0.0; otherwise with
                        r = ((37 * k) mod 2001) - 1000: float16 r / 8 (exact), float32 the float64
                        r / 7 rounded to nearest, float64 r / 7;
    complex:            real part = float formula at 2k, imaginary part = float formula at 2k + 1.
NaN is the default quiet NaN of each width (0x7e00, 0x7fc00000, 0x7ff8000000000000). Floats are
compared bit for bit.
"""

import hashlib
import json
import math
import os
import sys

import lzma

import numpy as np
import zarr
from numcodecs import BZ2, LZMA, Blosc, GZip, PackBits, VLenBytes, VLenUTF8, Zlib, Zstd

MUL = 0x9E3779B97F4A7C15
ADD = 0x632BE59BD9B4E019
SEED_STRIDE = 7919

# (Zarr v3 name, numpy type string without byte order, element width)
DTYPES = [
    ("bool", "b1", 1),
    ("int8", "i1", 1),
    ("int16", "i2", 2),
    ("int32", "i4", 4),
    ("int64", "i8", 8),
    ("uint8", "u1", 1),
    ("uint16", "u2", 2),
    ("uint32", "u4", 4),
    ("uint64", "u8", 8),
    ("float16", "f2", 2),
    ("float32", "f4", 4),
    ("float64", "f8", 8),
    ("complex64", "c8", 8),
    ("complex128", "c16", 16),
]
KIND = {name: code for name, code, _ in DTYPES}

# Every geometry has ragged edge chunks on at least one axis except the last.
GEOMETRIES = [
    ([7, 5, 6], [3, 2, 4]),
    ([11, 9], [4, 4]),
    ([20], [6]),
    ([2, 3, 4, 5], [1, 2, 3, 2]),
    ([5, 4], [5, 4]),
]

COMPRESSORS = [
    ("none", None),
    ("gzip", lambda: GZip(level=5)),
    ("zlib", lambda: Zlib(level=1)),
    ("zstd", lambda: Zstd(level=3)),
    ("blosc", lambda: Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)),
]

BLOSC_VARIANTS = [
    ("blosc-zstd-bitshuffle", lambda: Blosc(cname="zstd", clevel=3, shuffle=Blosc.BITSHUFFLE)),
    ("blosc-blosclz-noshuffle", lambda: Blosc(cname="blosclz", clevel=9, shuffle=Blosc.NOSHUFFLE)),
    ("blosc-zlib-shuffle", lambda: Blosc(cname="zlib", clevel=1, shuffle=Blosc.SHUFFLE)),
    ("blosc-lz4hc-autoshuffle", lambda: Blosc(cname="lz4hc", clevel=4, shuffle=Blosc.AUTOSHUFFLE)),
    ("blosc-lz4-blocksize", lambda: Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE, blocksize=64)),
]


# numcodecs' bz2 and lzma compressors and its PackBits filter (bool only), with settings numcodecs
# writes: bz2 at both ends of its level range, lzma in each container it can use (.xz with each
# integrity check, .lzma, raw with a delta filter). (label, dtype, byte order, order, compressor,
# filters); arrays of 11 x 9 in chunks of 4 x 4.
OTHER_CODECS = [
    ("bz2-1", "int32", "<", "C", lambda: BZ2(level=1), None),
    ("bz2-1", "float64", ">", "F", lambda: BZ2(level=1), None),
    ("bz2-9", "uint16", "<", "C", lambda: BZ2(level=9), None),
    ("lzma", "float32", "<", "C", lambda: LZMA(), None),
    ("lzma", "int64", ">", "F", lambda: LZMA(), None),
    ("lzma", "complex64", "<", "C", lambda: LZMA(), None),
    ("lzma-crc32", "float64", "<", "C", lambda: LZMA(check=lzma.CHECK_CRC32, preset=0), None),
    ("lzma-sha256", "uint64", "<", "C", lambda: LZMA(check=lzma.CHECK_SHA256, preset=1), None),
    ("lzma-alone", "uint8", "|", "C", lambda: LZMA(format=lzma.FORMAT_ALONE, preset=1), None),
    ("lzma-raw-delta", "int32", "<", "F", lambda: LZMA(format=lzma.FORMAT_RAW, filters=[
        {"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_LZMA2, "preset": 1}]), None),
    ("packbits", "bool", "|", "C", None, lambda: [PackBits()]),
    ("packbits-zlib", "bool", "|", "F", lambda: Zlib(level=1), lambda: [PackBits()]),
    ("packbits-bz2", "bool", "|", "C", lambda: BZ2(level=1), lambda: [PackBits()]),
]


# ----------------------------------------------------------------------------------- formula


def _float_base(k, code):
    """The float formula (float64 values) for uint64 indices k, specials included."""
    r = ((k * np.uint64(37)) % np.uint64(2001)).astype(np.int64) - 1000
    v = r / 8.0 if code == "f2" else r / 7.0
    m = k % np.uint64(97)
    v = np.where(m == 5, np.nan, v)
    v = np.where(m == 11, np.inf, v)
    v = np.where(m == 23, -np.inf, v)
    v = np.where(m == 31, -0.0, v)
    return v


def formula(dtype, n, seed):
    """n values of the formula for `dtype` (v3 name) as a native numpy array."""
    code = KIND[dtype]
    k = np.arange(n, dtype=np.uint64) + np.uint64(SEED_STRIDE * seed)
    if code == "b1":
        return ((k * np.uint64(5) + np.uint64(1)) % np.uint64(7)) < np.uint64(3)
    if code[0] in "iu":
        bits = 8 * int(code[1:])
        u = k * np.uint64(MUL) + np.uint64(ADD)  # uint64 arithmetic wraps modulo 2**64
        top = np.right_shift(u, np.uint64(64 - bits)).astype("u%d" % (bits // 8))
        return top.view(code) if code[0] == "i" else top
    if code[0] == "f":
        return _float_base(k, code).astype(code)
    part = "f4" if code == "c8" else "f8"
    out = np.empty(n, dtype=code)
    out.real = _float_base(2 * k, part).astype(part)
    out.imag = _float_base(2 * k + np.uint64(1), part).astype(part)
    return out


def fill_from_json(dtype, j):
    """A v2 JSON fill value as a numpy scalar of `dtype` (null: zero)."""
    code = KIND[dtype]
    if j is None:
        return np.zeros((), dtype=code)[()]

    def flt(x):
        return float(x) if not isinstance(x, str) else {"NaN": math.nan, "Infinity": math.inf,
                                                         "-Infinity": -math.inf}[x]

    if code[0] == "c":
        re_im = j if isinstance(j, list) else [j, 0]
        return np.array(complex(flt(re_im[0]), flt(re_im[1])), dtype=code)[()]
    if code[0] == "f":
        return np.array(flt(j), dtype=code)[()]
    return np.array(j, dtype=code)[()]


def expected_array(entry):
    """The whole array the manifest entry describes, as a native C-ordered numpy array."""
    shape = tuple(entry["shape"])
    n = int(np.prod(shape, dtype=np.int64))
    values = formula(entry["dtype"], n, entry["seed"]).reshape(shape)
    written = entry.get("written")
    if written is None:
        out = values.copy()
    else:
        out = np.full(shape, fill_from_json(entry["dtype"], entry["fill_value"]), dtype=KIND[entry["dtype"]])
        sel = tuple(slice(o, o + e) for o, e in zip(written["offset"], written["extent"]))
        out[sel] = values[sel]
    overlay = entry.get("overlay")
    if overlay is not None:
        # A box later rewritten with the formula of another seed (zarrxt updating an array in place).
        again = formula(entry["dtype"], n, overlay["seed"]).reshape(shape)
        sel = tuple(slice(o, o + e) for o, e in zip(overlay["offset"], overlay["extent"]))
        out[sel] = again[sel]
    return out


def le_bytes(a):
    """C order, little-endian, bool as one byte: the corpus convention."""
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def first_difference(got, want, width):
    """A readable description of where two little-endian byte strings differ, or None."""
    if got == want:
        return None
    if len(got) != len(want):
        return "size %d bytes, expected %d" % (len(got), len(want))
    def element(b, i):
        return b[i * width:(i + 1) * width]

    bad = [i for i in range(len(got) // width) if element(got, i) != element(want, i)]
    i = bad[0]
    return "%d of %d elements differ; first at flat index %d: got %s, expected %s" % (
        len(bad), len(got) // width, i, element(got, i).hex(), element(want, i).hex())


# ------------------------------------------------------------------------------------ writer


def matrix():
    """The arrays `write` produces: (name, dtype, byteorder, geometry, compressor label/factory,
    order, separator, fill_value, written region or None)."""
    cases = []
    for d, (dtype, code, width) in enumerate(DTYPES):
        orders = "<>" if width > 1 else "|"
        for e, bo in enumerate(orders):
            for c, (clabel, cfactory) in enumerate(COMPRESSORS):
                shape, chunks = GEOMETRIES[(d + c + e) % len(GEOMETRIES)]
                order = "F" if (d + c + e) % 2 else "C"
                sep = "/" if (c + e + d // 2) % 2 else "."
                cases.append(dict(dtype=dtype, byteorder=bo, shape=shape, chunks=chunks, clabel=clabel,
                                  compressor=cfactory, order=order, sep=sep, fill=0, written=None))
    for v, (clabel, cfactory) in enumerate(BLOSC_VARIANTS):
        for dtype in ("int32", "float64", "uint16", "complex64", "bool"):
            bo = "|" if dtype == "bool" else "<" if v % 2 else ">"
            cases.append(dict(dtype=dtype, byteorder=bo, shape=[11, 9], chunks=[4, 4],
                              clabel=clabel, compressor=cfactory, order="F" if v % 2 else "C", sep=".",
                              fill=0, written=None))
    for label, dtype, bo, order, cfactory, ffactory in OTHER_CODECS:
        cases.append(dict(dtype=dtype, byteorder=bo, shape=[11, 9], chunks=[4, 4], clabel=label,
                          compressor=cfactory, filters=ffactory, order=order, sep=".", fill=0, written=None))
    # A partly written PackBits array: unwritten chunks read as the fill value true.
    cases.append(dict(dtype="bool", byteorder="|", shape=[11, 9], chunks=[4, 4], clabel="packbits",
                      compressor=None, filters=lambda: [PackBits()], order="C", sep="/", fill=True,
                      written={"offset": [2, 1], "extent": [5, 6]}, label="filltrue"))
    # Fill values, with chunks that are never written (rows 8.. of an 11 x 9 array, chunks 4 x 4)
    # and chunks that are written only in part.
    partial = {"offset": [2, 1], "extent": [5, 6]}
    specials = [
        ("float64", "<", "nan", "zlib", "C", "NaN"),
        ("float32", ">", "nan", "zstd", "F", "NaN"),
        ("float16", "<", "nan", "none", "C", "NaN"),
        ("float64", ">", "neginf", "gzip", "C", "-Infinity"),
        ("int32", "<", "fill42", "zstd", "C", 42),
        ("int64", ">", "fillmin", "blosc", "F", -(2 ** 63)),
        ("uint64", "<", "fillmax", "none", "C", 2 ** 64 - 1),
        ("int8", "|", "fillneg", "gzip", "F", -3),
        ("bool", "|", "filltrue", "zlib", "C", True),
        ("complex128", "<", "fill", "zstd", "C", [1.5, -2.0]),
        ("complex64", ">", "fillnan", "none", "F", ["NaN", 0.25]),
    ]
    comp = dict(COMPRESSORS)
    for dtype, bo, label, clabel, order, fill in specials:
        cases.append(dict(dtype=dtype, byteorder=bo, shape=[11, 9], chunks=[4, 4], clabel=clabel,
                          compressor=comp[clabel], order=order, sep=".", fill=fill, written=partial,
                          label=label))
    # fill_value null: every chunk is written (zarr-python returns uninitialised memory otherwise).
    for dtype, clabel in (("int16", "none"), ("float64", "blosc"), ("uint8", "zstd")):
        cases.append(dict(dtype=dtype, byteorder="<", shape=[7, 5, 6], chunks=[3, 2, 4], clabel=clabel,
                          compressor=comp[clabel], order="C", sep="/", fill=None, written=None,
                          label="nullfill"))
    # Geometry corner cases.
    cases.append(dict(dtype="int32", byteorder="<", shape=[], chunks=[], clabel="zstd",
                      compressor=comp["zstd"], order="C", sep=".", fill=0, written=None, label="scalar"))
    cases.append(dict(dtype="uint16", byteorder=">", shape=[4, 3], chunks=[10, 10], clabel="gzip",
                      compressor=comp["gzip"], order="F", sep=".", fill=0, written=None, label="bigchunk"))
    cases.append(dict(dtype="float32", byteorder="<", shape=[0, 5], chunks=[2, 2], clabel="zlib",
                      compressor=comp["zlib"], order="C", sep=".", fill=0, written=None, label="empty"))
    cases.append(dict(dtype="uint8", byteorder="|", shape=[64, 64, 3], chunks=[20, 20, 3], clabel="zlib",
                      compressor=comp["zlib"], order="C", sep="/", fill=0, written=None, label="image"))
    cases.append(dict(dtype="float64", byteorder=">", shape=[3, 4, 5, 6], chunks=[2, 3, 2, 4], clabel="blosc",
                      compressor=comp["blosc"], order="F", sep="/", fill=0, written=None, label="rank4"))
    # Chunks of 100+ KB: multi-block blosc frames, longer zstd/deflate streams.
    for dtype, bo, clabel, order in (("float64", "<", "blosc", "F"), ("int16", ">", "zstd", "C"),
                                     ("uint32", "<", "gzip", "C")):
        cases.append(dict(dtype=dtype, byteorder=bo, shape=[200, 300], chunks=[128, 160], clabel=clabel,
                          compressor=comp[clabel], order=order, sep="/", fill=0, written=None, label="large"))
    return cases


def case_name(c):
    bo = {"<": "le", ">": "be", "|": "na"}[c["byteorder"]]
    sep = "slash" if c["sep"] == "/" else "dot"
    parts = [c["dtype"], bo, c["clabel"], c["order"], sep]
    if "label" in c:
        parts.append(c["label"])
    return ".".join(parts)


def check_coverage(cases):
    """The matrix promises: every dtype with every compressor, both orders, both separators and
    (multi-byte types) both byte orders. Fail loudly if an edit breaks that."""
    seen = set()
    for c in cases:
        for facet in (("c", c["clabel"]), ("o", c["order"]), ("s", c["sep"]), ("b", c["byteorder"])):
            seen.add((c["dtype"],) + facet)
    for dtype, _, width in DTYPES:
        need = [("c", label) for label, _ in COMPRESSORS] + [("o", "C"), ("o", "F"), ("s", "."), ("s", "/")]
        need += [("b", "<"), ("b", ">")] if width > 1 else [("b", "|")]
        missing = [n for n in need if (dtype,) + n not in seen]
        if missing:
            raise SystemExit("matrix coverage: %s lacks %s" % (dtype, missing))


def write_matrix(out_dir, cases=None, writer="zarr-python " + zarr.__version__):
    cases = matrix() if cases is None else cases
    os.makedirs(os.path.join(out_dir, "arrays"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "expected"), exist_ok=True)
    entries = []
    for seed, c in enumerate(cases, start=1):
        name = case_name(c)
        code = KIND[c["dtype"]]
        dt = np.dtype(c["byteorder"] + code if c["byteorder"] != "|" else "|" + code)
        compressor = c["compressor"]() if c["compressor"] else None
        filters = c["filters"]() if c.get("filters") else None
        z = zarr.open_array(os.path.join(out_dir, "arrays", name), mode="w", shape=tuple(c["shape"]),
                            chunks=tuple(c["chunks"]) if c["chunks"] else True, dtype=dt,
                            compressor=compressor, filters=filters,
                            fill_value=fill_from_json(c["dtype"], c["fill"])
                            if c["fill"] is not None else None, order=c["order"],
                            dimension_separator=c["sep"])
        with open(os.path.join(out_dir, "arrays", name, ".zarray")) as f:
            stored_fill = json.load(f)["fill_value"]  # the peer's own JSON form of the fill value
        entry = dict(name=name, dtype=c["dtype"], shape=c["shape"], chunks=list(z.chunks), seed=seed,
                     written=c["written"], fill_value=stored_fill)
        n = int(np.prod(c["shape"], dtype=np.int64))
        values = formula(c["dtype"], n, seed).reshape(tuple(c["shape"]))
        if c["written"] is None:
            if n > 0:
                z[...] = values
        else:
            sel = tuple(slice(o, o + e) for o, e in zip(c["written"]["offset"], c["written"]["extent"]))
            z[sel] = values[sel]
        data = le_bytes(z[...])
        rel = os.path.join("expected", name + ".bin")
        with open(os.path.join(out_dir, rel), "wb") as f:
            f.write(data)
        entry["expected"] = rel
        entry["digest"] = hashlib.sha256(data).hexdigest()[:16]
        # What zarr-python made of the request (it drops the compressor of 0-d arrays, for one).
        entry["expect"] = dict(typestr=z.dtype.str, order=z.order, dimension_separator=c["sep"],
                               compressor=z.compressor.get_config() if z.compressor is not None else None)
        if z.filters:
            entry["expect"]["filters"] = [f.get_config() for f in z.filters]
        entries.append(entry)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump({"writer": writer, "arrays": entries}, f, indent=1)
    return entries


# ---------------------------------------------------------------------------------- verifier


def verify_one(root, e, z=None):
    """Problems found with one array zarrxt wrote (an empty list when it is right); `z` is the
    array already opened (through consolidated metadata), else it is opened from its path."""
    problems = []
    path = os.path.join(root, "arrays", e["name"])
    try:
        z = zarr.open_array(path, mode="r") if z is None else z
    except Exception as exc:  # report, never stop: every array gets a line
        return ["zarr.open_array failed: %r" % exc]
    want = e.get("expect", {})
    if list(z.shape) != e["shape"]:
        problems.append("shape %s, expected %s" % (list(z.shape), e["shape"]))
    if list(z.chunks) != e["chunks"]:
        problems.append("chunks %s, expected %s" % (list(z.chunks), e["chunks"]))
    if "typestr" in want and z.dtype.str != want["typestr"]:
        problems.append("dtype %s, expected %s" % (z.dtype.str, want["typestr"]))
    if "order" in want and z.order != want["order"]:
        problems.append("order %s, expected %s" % (z.order, want["order"]))
    if "dimension_separator" in want:
        sep = getattr(z, "_dimension_separator", None) or "."
        if sep != want["dimension_separator"]:
            problems.append("dimension_separator %r, expected %r" % (sep, want["dimension_separator"]))
    if "compressor" in want:
        got = z.compressor.get_config() if z.compressor is not None else None
        exp = want["compressor"]
        differs = got is not None and any(got.get(k) != v for k, v in exp.items())
        if (got is None) != (exp is None) or differs:
            problems.append("compressor %s, expected %s" % (got, exp))
    if "filters" in want:
        got = [f.get_config() for f in z.filters] if z.filters else None
        if got != want["filters"]:
            problems.append("filters %s, expected %s" % (got, want["filters"]))
    # The fill value as zarr-python decodes it from .zarray.
    if e["fill_value"] is None:
        if z.fill_value is not None:
            problems.append("fill_value %r, expected None" % (z.fill_value,))
    else:
        exp_fill = np.array(fill_from_json(e["dtype"], e["fill_value"]), dtype=KIND[e["dtype"]])
        got_fill = np.array(z.fill_value, dtype=KIND[e["dtype"]])
        if le_bytes(got_fill) != le_bytes(exp_fill):
            problems.append("fill_value %r, expected %r" % (z.fill_value, e["fill_value"]))
    try:
        got = le_bytes(z[...])
    except Exception as exc:
        return problems + ["reading failed: %r" % exc]
    width = np.dtype(KIND[e["dtype"]]).itemsize
    diff = first_difference(got, le_bytes(expected_array(e)), width)
    if diff:
        problems.append(diff)
    return problems


def verify(root):
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    failed = 0
    for e in manifest["arrays"]:
        problems = verify_one(root, e)
        if problems:
            failed += 1
            print("FAIL %s: %s" % (e["name"], "; ".join(problems)))
        else:
            print("ok   %s" % e["name"])
    print("zarr-python %s verified %d arrays written by %s: %d failed"
          % (zarr.__version__, len(manifest["arrays"]), manifest.get("writer", "?"), failed))
    return 1 if failed else 0


# ------------------------------------------------------------------------------------- groups

# The hierarchy: nested groups with and without attributes (every JSON type, unicode, integers
# beyond 2**53), arrays at several depths with their own attributes.
GROUP_TREE = [
    ("", {"title": "zarrxt interop hierarchy", "version": 2}),
    ("sub", {"description": "a child group", "tags": ["a", "b"], "nested": {"x": 1, "y": [1.5, None, True]}}),
    ("sub/deeper", {}),
    ("sub/deeper/deepest", {"unicode": "\u00fcn\u00efc\u00f8d\u00e9 \u2713", "big": 2 ** 53 + 1, "neg": -7,
                            "float": 0.1}),
    ("other", {"empty_list": [], "empty_object": {}, "false": False}),
]
GROUP_ARRAYS = [
    # path, dtype, byte order, shape, chunks, compressor label, order, attributes
    ("values", "int32", "<", [6, 5], [4, 4], "zlib", "C", {"units": "m"}),
    ("sub/temps", "float64", ">", [7, 3], [3, 3], "none", "F", {"long_name": "temperature", "scale": 0.5}),
    ("sub/deeper/deepest/mask", "bool", "|", [9], [4], "zstd", "C", {}),
    ("other/counts", "uint16", "<", [3, 4, 5], [2, 2, 2], "gzip", "C", {"note": "three dims", "ids": [3, 1, 2]}),
]


def describe_groups(root):
    """What zarr-python reads of a hierarchy: the manifest's "groups" list."""
    out = []
    for path, _ in GROUP_TREE:
        g = zarr.open_group(os.path.join(root, path) if path else root, mode="r")
        out.append(dict(path=path, attributes=g.attrs.asdict(), groups=sorted(g.group_keys()),
                        arrays=sorted(g.array_keys())))
    return out


def write_groups(out_dir):
    root_dir = os.path.join(out_dir, "arrays")
    root = zarr.open_group(root_dir, mode="w")
    for path, attrs in GROUP_TREE:
        g = root.require_group(path) if path else root
        g.attrs.update(attrs)
    comp = dict(COMPRESSORS)
    cases = []
    for path, dtype, bo, shape, chunks, clabel, order, attrs in GROUP_ARRAYS:
        cases.append(dict(dtype=dtype, byteorder=bo, shape=shape, chunks=chunks, clabel=clabel,
                          compressor=comp[clabel], order=order, sep=".", fill=0, written=None, path=path,
                          attrs=attrs))
    entries = []
    os.makedirs(os.path.join(out_dir, "expected"), exist_ok=True)
    for seed, c in enumerate(cases, start=1000):
        code = KIND[c["dtype"]]
        dt = np.dtype(c["byteorder"] + code if c["byteorder"] != "|" else "|" + code)
        z = root.create_dataset(c["path"], shape=tuple(c["shape"]), chunks=tuple(c["chunks"]), dtype=dt,
                                compressor=c["compressor"]() if c["compressor"] else None,
                                fill_value=fill_from_json(c["dtype"], c["fill"]), order=c["order"])
        n = int(np.prod(c["shape"], dtype=np.int64))
        z[...] = formula(c["dtype"], n, seed).reshape(tuple(c["shape"]))
        z.attrs.update(c["attrs"])
        back = zarr.open_array(os.path.join(root_dir, c["path"]), mode="r")
        data = le_bytes(back[...])
        rel = os.path.join("expected", c["path"].replace("/", "__") + ".bin")
        with open(os.path.join(out_dir, rel), "wb") as f:
            f.write(data)
        with open(os.path.join(root_dir, c["path"], ".zarray")) as f:
            stored_fill = json.load(f)["fill_value"]
        entries.append(dict(name=c["path"], dtype=c["dtype"], shape=c["shape"], chunks=list(back.chunks), seed=seed,
                            written=None, fill_value=stored_fill, attributes=back.attrs.asdict(), expected=rel,
                            digest=hashlib.sha256(data).hexdigest()[:16],
                            expect=dict(typestr=back.dtype.str, order=back.order, dimension_separator=".",
                                        compressor=back.compressor.get_config() if back.compressor else None)))
    manifest = {"writer": "zarr-python " + zarr.__version__, "arrays": entries, "groups": describe_groups(root_dir)}
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("zarr-python %s wrote a hierarchy of %d groups and %d arrays" % (zarr.__version__, len(GROUP_TREE),
                                                                          len(entries)))
    return 0


def group_problems(grp, g):
    """How the group `grp` differs from its manifest entry `g` (attributes, child groups, arrays)."""
    problems = []
    if grp.attrs.asdict() != g["attributes"]:
        problems.append("attributes %r, expected %r" % (grp.attrs.asdict(), g["attributes"]))
    if sorted(grp.group_keys()) != g["groups"]:
        problems.append("child groups %s, expected %s" % (sorted(grp.group_keys()), g["groups"]))
    if sorted(grp.array_keys()) != g["arrays"]:
        problems.append("child arrays %s, expected %s" % (sorted(grp.array_keys()), g["arrays"]))
    return problems


def verify_groups(root):
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    root_dir = os.path.join(root, "arrays")
    failed = 0
    for g in manifest["groups"]:
        problems = []
        try:
            grp = zarr.open_group(os.path.join(root_dir, g["path"]) if g["path"] else root_dir, mode="r")
            problems += group_problems(grp, g)
        except Exception as exc:
            problems.append("zarr.open_group failed: %r" % exc)
        failed += 1 if problems else 0
        print(("FAIL group %r: %s" % (g["path"], "; ".join(problems))) if problems else "ok   group %r" % g["path"])
    for e in manifest["arrays"]:
        problems = verify_one(root, e)
        try:
            attrs = zarr.open_array(os.path.join(root_dir, e["name"]), mode="r").attrs.asdict()
            if attrs != e["attributes"]:
                problems.append("attributes %r, expected %r" % (attrs, e["attributes"]))
        except Exception as exc:
            problems.append("attributes unreadable: %r" % exc)
        failed += 1 if problems else 0
        print(("FAIL array %s: %s" % (e["name"], "; ".join(problems))) if problems else "ok   array %s" % e["name"])
    print("zarr-python %s verified a hierarchy of %d groups and %d arrays written by %s: %d failed"
          % (zarr.__version__, len(manifest["groups"]), len(manifest["arrays"]), manifest.get("writer", "?"), failed))
    return 1 if failed or not manifest["groups"] else 0


def consolidate(root):
    zarr.consolidate_metadata(os.path.join(root, "arrays"))
    print("zarr-python %s consolidated %s" % (zarr.__version__, os.path.join(root, "arrays")))
    return 0


def verify_consolidated(root):
    """verify_groups, every node reached through zarr.open_consolidated (its .zmetadata) only."""
    with open(os.path.join(root, "manifest.json")) as f:
        manifest = json.load(f)
    try:
        top = zarr.open_consolidated(os.path.join(root, "arrays"), mode="r")
    except Exception as exc:
        print("FAIL zarr.open_consolidated: %r" % exc)
        return 1
    failed = 0
    for g in manifest["groups"]:
        problems = []
        try:
            grp = top[g["path"]] if g["path"] else top
            problems += group_problems(grp, g)
        except Exception as exc:
            problems.append("group unreadable through consolidated metadata: %r" % exc)
        failed += 1 if problems else 0
        print(("FAIL group %r: %s" % (g["path"], "; ".join(problems))) if problems else "ok   group %r" % g["path"])
    for e in manifest["arrays"]:
        try:
            z = top[e["name"]]
            problems = verify_one(root, e, z)
            if z.attrs.asdict() != e["attributes"]:
                problems.append("attributes %r, expected %r" % (z.attrs.asdict(), e["attributes"]))
        except Exception as exc:
            problems = ["array unreadable through consolidated metadata: %r" % exc]
        failed += 1 if problems else 0
        print(("FAIL array %s: %s" % (e["name"], "; ".join(problems))) if problems else "ok   array %s" % e["name"])
    print("zarr-python %s verified through open_consolidated %d groups and %d arrays written by %s: %d failed"
          % (zarr.__version__, len(manifest["groups"]), len(manifest["arrays"]), manifest.get("writer", "?"), failed))
    return 1 if failed or not manifest["groups"] else 0


def times_of(z):
    """dtype, fill value (an integer or "NaT"), the stored counts and, for datetimes, numpy's text."""
    a = z[...]
    native = a.astype(a.dtype.newbyteorder("="))  # datetime_as_string misreads non-native input
    out = {"dtype": a.dtype.str, "shape": list(a.shape),
           "counts": [int(v) for v in native.view("i8").ravel()]}
    fill = z.fill_value
    if fill is None:
        out["fill"] = None
    else:
        fill = np.array(fill, dtype=a.dtype.newbyteorder("="))
        out["fill"] = "NaT" if np.isnat(fill) else int(fill.view("i8"))
    if a.dtype.kind == "M":
        out["text"] = [str(t) for t in np.datetime_as_string(native.ravel())]
    return out


def strings_of(z):
    """dtype, fill value and values of a string array (|S and vlen-bytes values and fill as hex,
    <U and vlen-utf8 as text), and the digest `zarrxt hash` defines for it: SHA-256 of every
    value's bytes (UTF-8 for text) after its length as a little-endian uint32, C order, first 16
    bytes as hex. In |O arrays a missing value (None, a chunk never written with fill None) is the
    empty value, as zarrxt reads it."""
    a = z[...]
    object_codec = z.filters[0].codec_id if a.dtype.kind == "O" else None
    raw = a.dtype.kind == "S" or object_codec == "vlen-bytes"

    def value(v):
        if v is None:
            return b"" if raw else ""
        return bytes(v) if raw else str(v)

    enc = (lambda v: value(v).hex()) if raw else value
    values = [enc(v) for v in a.ravel()]
    h = hashlib.sha256()
    for v in a.ravel():
        b = value(v) if raw else value(v).encode("utf-8")
        h.update(len(b).to_bytes(4, "little") + b)
    fill = z.fill_value
    return {"dtype": a.dtype.str, "object_codec": object_codec, "shape": list(a.shape), "values": values,
            "fill": None if fill is None else enc(fill), "hash": h.hexdigest()[:16]}


VLEN_ARRAYS = [
    # name, dtype, object codec, shape, chunks, fill ("default": zarr-python's own), order,
    # compressor, values; the last chunk of the arrays marked "gap" is left unwritten.
    ("str.default.gap", str, None, [7], [3], "default", "C", "default",
     ["a", "h\u00e9llo", "", "\U0001f389!", "tab\there", "a\x00b", "zz"]),
    ("str.F.zlib", object, VLenUTF8(), [3, 4], [2, 3], "n/a", "F", "zlib",
     ["\u65e5\u672c\u8a9e", "", "x" * 300, "n/a", "'\"", "q", "\u00df", "zz", "end", "1", "22", "333"]),
    ("bytes.none.gap", object, VLenBytes(), [5], [2], None, "C", None,
     [b"\xff\x00", b"", b"abc", b"\x80" * 40, b"z"]),
    ("bytes.blosc", object, VLenBytes(), [2, 2], [1, 2], None, "C", "default", [b"x", b"yy", b"", b"\x00\x01"]),
]


def write_vlen(out_dir):
    result = []
    for name, dtype, codec, shape, chunks, fill, order, compressor, values in VLEN_ARRAYS:
        data = np.empty(len(values), dtype=object)
        data[:] = values
        kwargs = compressor_kwargs(compressor)
        if fill != "default":
            kwargs["fill_value"] = fill
        if codec is not None:
            kwargs["object_codec"] = codec
        result.append(write_string_array(out_dir, name, data.reshape(shape), chunks, dtype=dtype, order=order,
                                         **kwargs))
    print(json.dumps(result))
    return 0


STRING_ARRAYS = [
    # name, dtype, shape, chunks, fill, order, compressor, values; the last chunk of the arrays
    # marked "gap" is left unwritten so that it reads as the fill value.
    ("S7.gap", "|S7", [7], [3], b"", "C", None,
     [b"a", b"a\x00b", b"", b"1234567", b"\xff\x80", b"~", b"zz"]),
    ("U13.be.F", ">U13", [3, 4], [2, 3], "", "F", None,
     ["h\u00e9llo", "\u65e5\u672c\u8a9e", "\U0001f389!", "", "x" * 13, "a\x00b", "tab\there", "q",
      "\u00df", "zz", "'\"", "end"]),
    ("U5.fill.zlib.gap", "<U5", [6], [4], "nope", "C", "zlib",
     ["one", "", "three", "\u20ac", "five!", "six"]),
    ("S3.fill.blosc", "|S3", [2, 2], [1, 2], b"ab", "C", "blosc", [b"x", b"yy", b"zzz", b"ab"]),
]


def write_string_array(out_dir, name, data, chunks, **kwargs):
    """Create the string array `name` (zarr.open_array's kwargs), write `data` (all of it, or for a
    name ending in ".gap" all but its last chunk along axis 0) and describe it as strings_of does."""
    path = os.path.join(out_dir, name)
    z = zarr.open_array(path, mode="w", shape=data.shape, chunks=chunks, **kwargs)
    if name.endswith(".gap"):
        last = (data.shape[0] - 1) // chunks[0] * chunks[0]
        z[0:last] = data[0:last]
    else:
        z[...] = data
    d = strings_of(zarr.open_array(path, mode="r"))
    d["name"] = name
    return d


def compressor_kwargs(compressor):
    """zarr.open_array's compressor argument: "zlib" (level 1), None (none); anything else
    ("default", "blosc") leaves zarr-python's own, blosc."""
    if compressor not in ("zlib", None):
        return {}
    return {"compressor": Zlib(level=1) if compressor == "zlib" else None}


def write_strings(out_dir):
    result = []
    for name, dtype, shape, chunks, fill, order, compressor, values in STRING_ARRAYS:
        data = np.array(values, dtype=dtype).reshape(shape)
        result.append(write_string_array(out_dir, name, data, chunks, dtype=dtype, fill_value=fill,
                                         order=order, **compressor_kwargs(compressor)))
    print(json.dumps(result))
    return 0


def record_json(v):
    """A record's value as JSON: fields in order as a list, bytes as hex, datetimes and timedeltas as
    their int64 counts, subarrays as lists, nested records as lists."""
    if isinstance(v, np.void) and v.dtype.names:
        return [record_json(v[n]) for n in v.dtype.names]
    if isinstance(v, np.ndarray):
        return [record_json(x) for x in v]
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).hex()
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return int(v.astype(np.int64))
    if isinstance(v, (np.floating, float)):
        return float(v)
    return int(v)


def records_of(z):
    """dtype, fill value and values of a structured array, and the digest `zarrxt hash` defines for
    records: SHA-256 of the records with every field little-endian, packed in field order, C order,
    first 16 bytes as hex."""
    a = z[...]
    le = a.dtype.newbyteorder("<")
    flat = a.ravel()
    fill = z.fill_value
    return {"dtype": json.loads(json.dumps(z.dtype.descr)), "shape": list(a.shape),
            "values": [record_json(flat[i]) for i in range(flat.size)],
            "fill": None if fill is None else record_json(fill),
            "hash": hashlib.sha256(np.ascontiguousarray(a.astype(le)).tobytes()).hexdigest()[:16]}


RECORD_ARRAYS = [
    # name, dtype, shape, chunks, order, compressor, base64 fill (patched into .zarray: zarr-python
    # 2.13 cannot create a record array with a fill value, but reads one), values; "gap" arrays
    # leave their last chunk along axis 0 unwritten, so they need the fill.
    ("mixed", [("x", "<i4"), ("y", ">f8"), ("s", "|S3"), ("v", "<u2", (2,)), ("t", "<M8[s]")], [4], [3], "C",
     None, None,
     [(1, 2.5, b"ab", (3, 4), 1577836800), (-2, -0.0, b"xyz", (0, 65535), -1),
      (2 ** 31 - 1, 1e300, b"", (7, 8), 0), (0, 0.125, b"\x00\x01", (1, 1), 86400)]),
    ("nested.F.zlib", [("p", [("a", "<f4"), ("b", ">i8")]), ("k", "|i1")], [3, 2], [2, 1], "F", "zlib", None,
     [((1.5, 7), 3), ((-2.0, 2 ** 40), -3), ((0.25, -1), 0), ((3.0, 5), 1), ((4.0, 6), 2), ((5.5, -7), 127)]),
    ("fill.gap", [("x", ">i2"), ("y", "<f4")], [5], [2], "C", None, ("x", ">i2", 7, "y", "<f4", 1.5),
     [(1, 0.5), (2, 1.0), (3, 1.5), (4, 2.0), (5, 2.5)]),
]


def write_records(out_dir):
    import base64
    result = []
    for name, descr, shape, chunks, order, compressor, fill, values in RECORD_ARRAYS:
        dt = np.dtype(descr)
        data = np.array(values, dtype=dt).reshape(shape)
        path = os.path.join(out_dir, name)
        z = zarr.open_array(path, mode="w", shape=shape, chunks=chunks, dtype=dt, order=order,
                            fill_value=None, **compressor_kwargs(compressor))
        if name.endswith(".gap"):
            last = (shape[0] - 1) // chunks[0] * chunks[0]
            z[0:last] = data[0:last]
        else:
            z[...] = data
        if fill is not None:
            meta_path = os.path.join(path, ".zarray")
            meta = json.load(open(meta_path))
            value = np.array([(fill[2], fill[5])], dtype=dt)
            meta["fill_value"] = base64.standard_b64encode(value.tobytes()).decode()
            json.dump(meta, open(meta_path, "w"))
        d = records_of(zarr.open_array(path, mode="r"))
        d["name"] = name
        result.append(d)
    print(json.dumps(result))
    return 0


TIME_ARRAYS = [
    # name, dtype, shape, chunks, fill, order, counts (None: NaT); the last chunk of "ns.nat" is
    # left unwritten so that it reads as the fill value.
    ("ns.nat", "<M8[ns]", [7], [3], "NaT", "C",
     [0, 1, -1, 1583020800123456789, None, 9223372036854775807, -9223372036854775807]),
    ("D.be.F", ">M8[D]", [3, 4], [2, 3], 0, "F",
     [0, -1, 11016, -719162, 2932896, -365000, 18321, 1, 2, 3, None, -25567]),
    ("10s", "<m8[10s]", [5], [2], -1, "C", [0, 7, -3, None, 42]),
    ("us.zlib", "<M8[us]", [4], [4], "NaT", "C", [1, -1, 0, 1700000000000000]),
    ("Y", "<M8[Y]", [3], [3], 0, "C", [-1971, 30, 0]),
    ("h.td", ">m8[h]", [2, 2], [1, 2], 0, "C", [1, -24, None, 48]),
]


def write_times(out_dir):
    result = []
    for name, dtype, shape, chunks, fill, order, counts in TIME_ARRAYS:
        nat = np.iinfo(np.int64).min
        values = np.array([nat if c is None else c for c in counts], dtype="<i8").view(
            np.dtype(dtype).newbyteorder("<")).reshape(shape, order="C").astype(dtype)
        fill_value = np.array(nat if fill == "NaT" else fill, dtype="<i8").view(
            np.dtype(dtype).newbyteorder("<"))[()]
        compressor = Zlib(level=1) if name.endswith("zlib") else None
        z = zarr.open_array(os.path.join(out_dir, name), mode="w", shape=shape, chunks=chunks,
                            dtype=dtype, fill_value=fill_value, order=order, compressor=compressor)
        if name == "ns.nat":
            z[0:6] = values[0:6]
        else:
            z[...] = values
        d = times_of(zarr.open_array(os.path.join(out_dir, name), mode="r"))
        d["name"] = name
        result.append(d)
    print(json.dumps(result))
    return 0


def selftest():
    """A few formula values, so a reader can compare implementations by eye."""
    for dtype, _, _ in DTYPES:
        print(dtype, le_bytes(formula(dtype, 6, 3)).hex())


def main(argv):
    if len(argv) == 3 and argv[1] == "write":
        cases = matrix()
        check_coverage(cases)
        entries = write_matrix(argv[2], cases)
        print("zarr-python %s wrote %d arrays" % (zarr.__version__, len(entries)))
        return 0
    if len(argv) == 3 and argv[1] == "verify":
        return verify(argv[2])
    if len(argv) == 3 and argv[1] == "dump":
        print(le_bytes(zarr.open_array(argv[2], mode="r")[...]).hex())
        return 0
    if len(argv) == 3 and argv[1] == "dump-shape":
        z = zarr.open_array(argv[2], mode="r")
        print(json.dumps(list(z.shape)))
        print(le_bytes(z[...]).hex())
        return 0
    if len(argv) == 4 and argv[1] == "resize":
        zarr.open_array(argv[2], mode="r+").resize(*[int(x) for x in argv[3].split(",")])
        return 0
    if len(argv) == 5 and argv[1] == "append":
        # Appends n slices along axis whose values are 3 * (C-order index) + 1, as int32.
        z = zarr.open_array(argv[2], mode="r+")
        axis, n = int(argv[3]), int(argv[4])
        shape = list(z.shape)
        shape[axis] = n
        z.append((np.arange(int(np.prod(shape)), dtype="<i4") * 3 + 1).reshape(shape), axis=axis)
        return 0
    if len(argv) == 3 and argv[1] == "write-times":
        return write_times(argv[2])
    if len(argv) == 3 and argv[1] == "dump-times":
        print(json.dumps(times_of(zarr.open_array(argv[2], mode="r"))))
        return 0
    if len(argv) == 3 and argv[1] == "write-strings":
        return write_strings(argv[2])
    if len(argv) == 3 and argv[1] == "write-records":
        return write_records(argv[2])
    if len(argv) == 3 and argv[1] == "dump-records":
        print(json.dumps(records_of(zarr.open_array(argv[2], mode="r"))))
        return 0
    if len(argv) == 3 and argv[1] == "write-vlen":
        return write_vlen(argv[2])
    if len(argv) == 3 and argv[1] == "dump-strings":
        print(json.dumps(strings_of(zarr.open_array(argv[2], mode="r"))))
        return 0
    if len(argv) == 3 and argv[1] == "write-groups":
        return write_groups(argv[2])
    if len(argv) == 3 and argv[1] == "verify-groups":
        return verify_groups(argv[2])
    if len(argv) == 3 and argv[1] == "consolidate":
        return consolidate(argv[2])
    if len(argv) == 3 and argv[1] == "verify-consolidated":
        return verify_consolidated(argv[2])
    if len(argv) == 2 and argv[1] == "selftest":
        selftest()
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main(sys.argv))
