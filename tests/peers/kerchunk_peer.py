"""The kerchunk peer of tests/test_store_kerchunk.cpp: Debian's python3-fsspec (its
ReferenceFileSystem) and python3-zarr 2.13 read one array through a reference file.

    kerchunk_peer.py REFS ARRAY   prints {"fsspec": version, "shape": [...], "values": [...]}
                                  (values flattened in C order); relative target paths are
                                  resolved against the working directory, as fsspec does
"""
import json
import sys

import fsspec
import zarr


def main():
    refs, path = sys.argv[1], sys.argv[2]
    mapper = fsspec.get_mapper("reference://", fo=refs)
    node = zarr.open(mapper, mode="r")
    a = node[path] if path else node
    print(json.dumps({"fsspec": fsspec.__version__, "fsspec_file": fsspec.__file__,
                      "shape": list(a.shape), "values": a[...].ravel().tolist()}))


if __name__ == "__main__":
    main()
