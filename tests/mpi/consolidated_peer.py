#!/usr/bin/python3
"""zarr-python 2 reads the v2 consolidated metadata zarrxt::mpi::consolidate_metadata wrote.

    consolidated_peer.py DIR     DIR holds manifest.json and arrays/ (from mpi_tool peers)

open_consolidated must list every array of the manifest, and a copy of the store with every
per-node metadata file removed (only .zmetadata and the chunks left) must read back exactly what
the original store reads, so the consolidated document alone describes every array.
"""

import json
import os
import shutil
import sys
import tempfile

import zarr

root = sys.argv[1]
with open(os.path.join(root, "manifest.json")) as f:
    names = sorted(e["name"] for e in json.load(f)["arrays"])
arrays = os.path.join(root, "arrays")
problems = []
with tempfile.TemporaryDirectory() as tmp:
    bare = os.path.join(tmp, "bare")
    shutil.copytree(arrays, bare, ignore=shutil.ignore_patterns(".zarray", ".zgroup", ".zattrs"))
    group = zarr.open_consolidated(bare, mode="r")
    listed = sorted(group.array_keys())
    if listed != names:
        problems.append("open_consolidated lists %s, expected %s" % (listed, names))
    for name in names:
        direct = zarr.open_array(os.path.join(arrays, name), mode="r")
        via = group[name]
        for attr in ("shape", "chunks", "dtype", "order", "fill_value"):
            a, b = getattr(direct, attr), getattr(via, attr)
            if repr(a) != repr(b):
                problems.append("%s: %s %r through .zmetadata, %r from .zarray" % (name, attr, b, a))
        if direct[...].tobytes() != via[...].tobytes():
            problems.append("%s: values read through .zmetadata differ" % name)
for p in problems:
    print("FAIL " + p)
print("zarr-python %s read %d arrays through .zmetadata alone: %d problems" % (zarr.__version__, len(names),
                                                                              len(problems)))
sys.exit(1 if problems or not names else 0)
