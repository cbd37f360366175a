"""The Python side of zarrxt's zip store tests (tests/test_store_zip.cpp).

    /usr/bin/python3 zip_peer.py zarr-write PATH     zarr-python 2.13's ZipStore writes a v2 hierarchy
    /usr/bin/python3 zip_peer.py zarr-read PATH      zarr-python reads the v2 hierarchy zarrxt wrote
    /usr/bin/python3 zip_peer.py zipfile-write PATH  zipfile writes objects the C++ side knows by
                                                     name: DEFLATE, STORED, ZIP64 entries, a directory
                                                     entry, a name given twice, a comment
    /usr/bin/python3 zip_peer.py zipfile-check PATH  zipfile checks every CRC of an archive and
                                                     prints its names and each entry's SHA-256

Values are formulas both sides compute (see values() and the C++ test):
    g/ints   int32  (20, 30), chunks (7, 8), zlib        a[i, j] = i * 1000 + j - 500
    g/reals  float64 (100,),  chunks (16,), no compressor b[i] = i / 4
    g/attrs  a group attribute {"answer": 42}
Object payloads of zipfile-write: payload(n, k)[i] = (i * 7 + k) % 251.
"""

import hashlib
import sys
import warnings
import zipfile

import numpy as np


def payload(n, k):
    return bytes((i * 7 + k) % 251 for i in range(n))


def ints():
    i, j = np.meshgrid(np.arange(20), np.arange(30), indexing="ij")
    return (i * 1000 + j - 500).astype("<i4")


def reals():
    return np.arange(100, dtype="<f8") / 4


def zarr_write(path):
    import zarr
    import numcodecs

    store = zarr.ZipStore(path, mode="w")
    root = zarr.group(store=store)
    g = root.create_group("g")
    g.attrs["answer"] = 42
    a = g.create_dataset("ints", shape=(20, 30), chunks=(7, 8), dtype="<i4", compressor=numcodecs.Zlib(level=5))
    a[...] = ints()
    b = g.create_dataset("reals", shape=(100,), chunks=(16,), dtype="<f8", compressor=None)
    b[...] = reals()
    store.close()


def zarr_read(path):
    import zarr

    store = zarr.ZipStore(path, mode="r")
    root = zarr.open_group(store=store, mode="r")
    got = root["g/ints"][...]
    assert got.dtype == np.dtype("<i4") and (got == ints()).all(), "g/ints differs"
    got = root["g/reals"][...]
    assert (got == reals()).all(), "g/reals differs"
    assert root["g"].attrs["answer"] == 42, "attribute differs"
    store.close()
    print("zarr-read ok")


def zipfile_write(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("stored"), payload(1000, 1))
        z.writestr("deflated", payload(50000, 2), compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("empty", b"", compress_type=zipfile.ZIP_DEFLATED)
        z.writestr("dir/", b"")
        info = zipfile.ZipInfo("dir/zip64")
        info.compress_type = zipfile.ZIP_STORED
        with z.open(info, "w", force_zip64=True) as f:
            f.write(payload(3000, 3))
        info = zipfile.ZipInfo("dir/zip64-deflated")
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as f:
            f.write(payload(70000, 4))
        # A local extra field longer than the central one (what Info-ZIP's timestamps do).
        info = zipfile.ZipInfo("long-extra")
        info.extra = b"\x55\x54\x05\x00\x01\x00\x00\x00\x00" + b"\xfe\xca\x60\x00" + bytes(96)
        z.writestr(info, payload(500, 5))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Duplicate name": the second one is meant
            z.writestr("twice", payload(10, 6))
            z.writestr("twice", payload(20, 7))
        z.comment = b"an archive comment"
    # zipfile writes `extra` to the local and the central header alike: make the central one short.
    data = bytearray(open(path, "rb").read())
    name = b"long-extra"
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        if data[at + 46 : at + 46 + len(name)] == name:
            break
        at = data.find(b"PK\x01\x02", at + 4)
    assert at >= 0
    extra_len = int.from_bytes(data[at + 30 : at + 32], "little")
    comment_len = int.from_bytes(data[at + 32 : at + 34], "little")
    start = at + 46 + len(name)
    del data[start : start + extra_len]
    data[at + 30 : at + 32] = (0).to_bytes(2, "little")
    assert comment_len == 0
    # The central directory shrank: fix its size in the end record (before the comment).
    end = len(data) - 22 - len(b"an archive comment")
    assert data[end : end + 4] == b"PK\x05\x06"
    size = int.from_bytes(data[end + 12 : end + 16], "little")
    data[end + 12 : end + 16] = (size - extra_len).to_bytes(4, "little")
    open(path, "wb").write(bytes(data))
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        assert z.read("long-extra") == payload(500, 5)


def zipfile_check(path):
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        assert bad is None, "bad CRC in " + bad
        for info in z.infolist():
            print(info.filename, info.compress_type, hashlib.sha256(z.read(info)).hexdigest())


if __name__ == "__main__":
    verb, path = sys.argv[1], sys.argv[2]
    {"zarr-write": zarr_write, "zarr-read": zarr_read, "zipfile-write": zipfile_write,
     "zipfile-check": zipfile_check}[verb](path)
