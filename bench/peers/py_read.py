#!/usr/bin/python3
"""Python peers of the W1 region reads: one timed read per process, printed as one JSON object.

    py_read.py zarr DIR NAME EXTENT    python3-zarr 2.13 (Zarr v2 arrays)
    py_read.py gdal DIR NAME EXTENT    GDAL's Zarr driver through python3-gdal

Run with Debian's /usr/bin/python3. The region is EXTENT x EXTENT at [7, 11]. Only the read call
is timed; every value is then checked against the formula (row * 17 + col * 31) % 65521 + 1 and
the region hashed (SHA-256 of its C-ordered little-endian bytes) for the harness to compare with
zarrxt's answer. Peak RSS is this process's high-water mark (VmHWM; it includes the
interpreter and numpy, reported separately as rss_start).
"""

import hashlib
import json
import os
import resource
import sys
import time

import numpy as np


def rss():
    """Peak resident set of this process image (VmHWM). getrusage's ru_maxrss would include the
    peak of the harness that started us: on Linux it survives fork and exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def read_zarr(path, e):
    import zarr

    z = zarr.open_array(path, mode="r")
    t0 = time.perf_counter_ns()
    v = z[7 : 7 + e, 11 : 11 + e]
    return v, time.perf_counter_ns() - t0


def read_gdal(path, e):
    from osgeo import gdal

    gdal.UseExceptions()
    ds = gdal.OpenEx(path, gdal.OF_RASTER | gdal.OF_READONLY, allowed_drivers=["Zarr"])
    band = ds.GetRasterBand(1)
    t0 = time.perf_counter_ns()
    v = band.ReadAsArray(11, 7, e, e)  # xoff (column), yoff (row), width, height
    return v, time.perf_counter_ns() - t0


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("zarr", "gdal"):
        print(__doc__, file=sys.stderr)
        return 2
    which, root, name, e = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    start = rss()
    v, ns = (read_zarr if which == "zarr" else read_gdal)(os.path.join(root, name), e)
    peak = rss()
    r = np.arange(7, 7 + e, dtype=np.int64)[:, None]
    c = np.arange(11, 11 + e, dtype=np.int64)[None, :]
    want = ((r * 17 + c * 31) % 65521 + 1).astype("<u2")
    if v.shape != want.shape or v.dtype.itemsize != 2:
        print("%s returned shape %s dtype %s" % (which, v.shape, v.dtype), file=sys.stderr)
        return 1
    v = np.ascontiguousarray(v.astype("<u2"))
    bad = np.argwhere(v != want)
    if len(bad):
        i, j = bad[0]
        print(
            "%s read a wrong value at [%d, %d]: %d, expected %d"
            % (which, 7 + i, 11 + j, v[i, j], want[i, j]),
            file=sys.stderr,
        )
        return 1
    print(
        json.dumps(
            {
                "read_ns": ns,
                "rss_peak": peak,
                "rss_start": start,
                "verified": True,
                "sha256": hashlib.sha256(v.tobytes()).hexdigest(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
