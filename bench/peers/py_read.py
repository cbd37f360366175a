#!/usr/bin/python3
"""Python peers of the W1 region reads and the W2 whole-array reads: one timed read per process,
printed as one JSON object.

    py_read.py zarr DIR NAME EXTENT              python3-zarr 2.13 (Zarr v2 arrays), W1
    py_read.py gdal DIR NAME EXTENT              GDAL's Zarr driver through python3-gdal, W1
    py_read.py zarr-w2 DIR NAME KIND [COUNT]     python3-zarr, W2: z[:] of a 1-d uint8 array
    py_read.py gdal-w2 DIR NAME KIND [COUNT]     GDAL, W2: the multidimensional API's ReadAsArray

DIR may also be an http:// base URL (the remote-store benchmark, bench/remote_harness.py): the
array is then BASE/NAME, read by python3-zarr through fsspec's HTTPFileSystem (python3-fsspec and
python3-aiohttp) and by GDAL through /vsicurl/.

Run with Debian's /usr/bin/python3. W1: the region is EXTENT x EXTENT at [7, 11]; every value is
checked against (row * 17 + col * 31) % 65521 + 1. W2: the whole array (or only its first COUNT
elements: the harness's probe of whether the peer opens the array at all); KIND is repeated or
semi_random and every value is checked against make_data.py's w2_values. Only the read call is
timed; the answer is then checked and hashed (SHA-256 of its C-ordered little-endian bytes) for the
harness to compare with the formula's. Peak RSS is this process's high-water mark (VmHWM; it
includes the interpreter and numpy, reported separately as rss_start).
"""

import hashlib
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_data  # noqa: E402  (the W2 formula, shared with the data writer)


def rss():
    """Peak resident set of this process image (VmHWM). getrusage's ru_maxrss would include the
    peak of the harness that started us: on Linux it survives fork and exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def is_url(root):
    return root.startswith(("http://", "https://"))


def location(root, name):
    """Where the array NAME of the data set ROOT is, as the peer opens it."""
    return root.rstrip("/") + "/" + name if is_url(root) else os.path.join(root, name)


def gdal_path(path):
    """GDAL's name for a path: remote arrays go through its /vsicurl/ file system."""
    # GDAL's defaults are used as they are. GDAL_DISABLE_READDIR_ON_OPEN (EMPTY_DIR or TRUE), the
    # usual advice for /vsicurl/, changed neither the requests GDAL 3.6's Zarr driver sent to nginx
    # (counted in its access log: one GET per chunk plus a HEAD before some of them) nor its time,
    # so it is not set.
    return "/vsicurl/" + path if is_url(path) else path


def read_zarr(path, e):
    import zarr

    z = zarr.open_array(path, mode="r")
    t0 = time.perf_counter_ns()
    v = z[7 : 7 + e, 11 : 11 + e]
    return v, time.perf_counter_ns() - t0


def read_gdal(path, e):
    from osgeo import gdal

    gdal.UseExceptions()
    ds = gdal.OpenEx(gdal_path(path), gdal.OF_RASTER | gdal.OF_READONLY, allowed_drivers=["Zarr"])
    band = ds.GetRasterBand(1)
    t0 = time.perf_counter_ns()
    v = band.ReadAsArray(11, 7, e, e)  # xoff (column), yoff (row), width, height
    return v, time.perf_counter_ns() - t0


def read_zarr_w2(path, count):
    import zarr

    z = zarr.open_array(path, mode="r")
    n = z.shape[0] if count is None else count
    t0 = time.perf_counter_ns()
    v = z[:] if count is None else z[:count]
    return v, n, time.perf_counter_ns() - t0


def read_gdal_w2(path, count):
    # GDAL 3.6 also offers a 1-d Zarr array as a classic N x 1 raster; the multidimensional API is
    # the one made for Zarr's n-d arrays, and it returns the 1-d array as such.
    from osgeo import gdal

    gdal.UseExceptions()
    ds = gdal.OpenEx(gdal_path(path), gdal.OF_MULTIDIM_RASTER | gdal.OF_READONLY, allowed_drivers=["Zarr"])
    root = ds.GetRootGroup()
    names = root.GetMDArrayNames() or []  # None when it finds none
    if len(names) != 1:
        raise RuntimeError("GDAL sees arrays %s in %s, expected one" % (names, path))
    a = root.OpenMDArray(names[0])
    n = a.GetDimensions()[0].GetSize() if count is None else count
    t0 = time.perf_counter_ns()
    v = a.ReadAsArray() if count is None else a.ReadAsArray(array_start_idx=[0], count=[count])
    return v, n, time.perf_counter_ns() - t0


def main_w2():
    if len(sys.argv) not in (5, 6) or sys.argv[4] not in ("repeated", "semi_random"):
        print(__doc__, file=sys.stderr)
        return 2
    which, root, name, kind = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    count = int(sys.argv[5]) if len(sys.argv) == 6 else None
    start = rss()
    v, n, ns = (read_zarr_w2 if which == "zarr-w2" else read_gdal_w2)(location(root, name), count)
    peak = rss()
    if v.shape != (n,) or v.dtype != np.uint8:
        msg = "%s returned shape %s dtype %s, expected (%d,) uint8" % (which, v.shape, v.dtype, n)
        print(msg, file=sys.stderr)
        return 1
    v = np.ascontiguousarray(v)
    h = hashlib.sha256()
    step = 10_000_000  # compared and hashed in pieces: the formula's values need 8 bytes each
    for first in range(0, n, step):
        got = v[first : first + step]
        want = make_data.w2_values(kind, first, len(got))
        bad = np.flatnonzero(got != want)
        if len(bad):
            i = first + bad[0]
            msg = "%s read a wrong value at %d: %d, expected %d" % (which, i, v[i], want[bad[0]])
            print(msg, file=sys.stderr)
            return 1
        h.update(got.tobytes())
    print(
        json.dumps(
            {"read_ns": ns, "rss_peak": peak, "rss_start": start, "verified": True, "sha256": h.hexdigest()}
        )
    )
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("zarr-w2", "gdal-w2"):
        return main_w2()
    if len(sys.argv) != 5 or sys.argv[1] not in ("zarr", "gdal"):
        print(__doc__, file=sys.stderr)
        return 2
    which, root, name, e = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    start = rss()
    v, ns = (read_zarr if which == "zarr" else read_gdal)(location(root, name), e)
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
