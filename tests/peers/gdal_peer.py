#!/usr/bin/python3
"""The GDAL peer of zarrxt's interoperability tests with the wild writers (tests/test_interop_wild.cpp).

Run it with Debian's /usr/bin/python3, the interpreter that sees python3-gdal (GDAL 3.6):

    gdal_peer.py rasters SPEC.json        write the GeoTIFF rasters SPEC describes
    gdal_peer.py mdim SPEC.json OUT.nc    write the multidimensional netCDF hierarchy SPEC describes
    gdal_peer.py dump PATH OUT_DIR        read a hierarchy with GDAL's multidimensional API and write
                                          OUT_DIR/dump.json plus one .bin file per array

The values never come from here: the C++ test computes them (the formula of tests/support/interop.hpp)
and hands them over as files of little-endian C-order elements; "dump" hands back what GDAL read
the same way, so the test compares bytes, not printed numbers.

rasters SPEC: {"rasters": [{"path": "x.tif", "type": "Int16", "width": 11, "height": 9,
               "geotransform": [6 numbers] | null, "epsg": 32631 | null,
               "bands": [{"data": "b1.bin", "nodata": null | number | "NaN"}]}]}
mdim SPEC (a group, nested): {"attributes": {name: value}, "dimensions": [{"name", "size",
               "type", "direction"}], "arrays": [{"name", "type", "dimensions": [names], "data",
               "nodata", "unit", "blocksize": [...] | null, "attributes": {...}}], "groups": {name: SPEC}}
dump.json:   {"groups": {full name: {"attributes": {...}}}, "arrays": {full name: {"type",
               "dimensions": [full names], "sizes", "block_size", "nodata", "unit", "attributes",
               "data": "<n>.bin"}}}; non-finite floats are written as the strings "NaN",
               "Infinity", "-Infinity" (the JSON that the test parses has no such numbers).
"""

import json
import math
import os
import sys

import numpy as np
from osgeo import gdal, osr

gdal.UseExceptions()

NUMPY = {
    "Byte": "u1",
    "UInt16": "<u2",
    "Int16": "<i2",
    "UInt32": "<u4",
    "Int32": "<i4",
    "UInt64": "<u8",
    "Int64": "<i8",
    "Float32": "<f4",
    "Float64": "<f8",
    "CFloat32": "<c8",
    "CFloat64": "<c16",
}


def gdt(name):
    return getattr(gdal, "GDT_" + name)


def load(path, type_name, shape):
    return np.fromfile(path, dtype=NUMPY[type_name]).reshape(shape)


def nodata_value(v):
    if v is None:
        return None
    return float(v) if isinstance(v, str) else v


def make_rasters(spec_path):
    spec = json.load(open(spec_path))
    base = os.path.dirname(os.path.abspath(spec_path))
    for r in spec["rasters"]:
        ds = gdal.GetDriverByName("GTiff").Create(
            os.path.join(base, r["path"]), r["width"], r["height"], len(r["bands"]), gdt(r["type"])
        )
        if r.get("geotransform"):
            ds.SetGeoTransform(r["geotransform"])
        if r.get("epsg"):
            srs = osr.SpatialReference()
            srs.ImportFromEPSG(r["epsg"])
            ds.SetProjection(srs.ExportToWkt())
        for i, b in enumerate(r["bands"]):
            band = ds.GetRasterBand(i + 1)
            band.WriteArray(load(os.path.join(base, b["data"]), r["type"], (r["height"], r["width"])))
            nd = nodata_value(b.get("nodata"))
            if nd is not None:
                band.SetNoDataValue(nd)
        ds = None


def write_attribute(obj, name, value):
    if isinstance(value, str):
        a = obj.CreateAttribute(name, [], gdal.ExtendedDataType.CreateString())
    else:
        values = value if isinstance(value, list) else [value]
        kind = gdal.GDT_Float64 if any(isinstance(v, float) for v in values) else gdal.GDT_Int32
        a = obj.CreateAttribute(name, [len(values)] if isinstance(value, list) else [],
                                gdal.ExtendedDataType.Create(kind))
    a.Write(value)


def make_group(group, spec, base, dims):
    for name, value in spec.get("attributes", {}).items():
        write_attribute(group, name, value)
    dims = dict(dims)
    for d in spec.get("dimensions", []):
        dims[d["name"]] = group.CreateDimension(d["name"], d.get("type", ""), d.get("direction", ""), d["size"])
    for a in spec.get("arrays", []):
        opts = ["BLOCKSIZE=" + ",".join(str(b) for b in a["blocksize"])] if a.get("blocksize") else []
        arr = group.CreateMDArray(a["name"], [dims[n] for n in a["dimensions"]],
                                  gdal.ExtendedDataType.Create(gdt(a["type"])), opts)
        nd = nodata_value(a.get("nodata"))
        if nd is not None:
            arr.SetNoDataValueDouble(nd)  # netCDF: the fill value is defined before any data
        shape = [dims[n].GetSize() for n in a["dimensions"]]
        arr.Write(load(os.path.join(base, a["data"]), a["type"], shape))
        if a.get("unit"):
            arr.SetUnit(a["unit"])
        for name, value in a.get("attributes", {}).items():
            write_attribute(arr, name, value)
    for name, sub in spec.get("groups", {}).items():
        make_group(group.CreateGroup(name), sub, base, dims)


def make_mdim(spec_path, out):
    spec = json.load(open(spec_path))
    ds = gdal.GetDriverByName("netCDF").CreateMultiDimensional(out, [], ["FORMAT=NC4"])
    make_group(ds.GetRootGroup(), spec, os.path.dirname(os.path.abspath(spec_path)), {})
    ds = None


def finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    return v


def dump(path, out_dir):
    ds = gdal.OpenEx(path, gdal.OF_MULTIDIM_RASTER)
    out = {"groups": {}, "arrays": {}}
    os.makedirs(out_dir, exist_ok=True)

    def walk(group):
        out["groups"][group.GetFullName()] = {
            "attributes": {a.GetName(): finite(a.Read()) for a in group.GetAttributes()}
        }
        for name in group.GetMDArrayNames() or []:
            arr = group.OpenMDArray(name)
            type_name = gdal.GetDataTypeName(arr.GetDataType().GetNumericDataType())
            data_file = "%d.bin" % len(out["arrays"])
            values = arr.ReadAsArray()
            np.ascontiguousarray(values).astype(NUMPY[type_name]).tofile(os.path.join(out_dir, data_file))
            nodata = arr.GetNoDataValueAsDouble()  # None when the array has none
            out["arrays"][arr.GetFullName()] = {
                "type": type_name,
                "dimensions": [d.GetFullName() for d in arr.GetDimensions()],
                "sizes": [d.GetSize() for d in arr.GetDimensions()],
                "block_size": list(arr.GetBlockSize()),
                "nodata": finite(nodata),
                "unit": arr.GetUnit(),
                "attributes": {a.GetName(): finite(a.Read()) for a in arr.GetAttributes()},
                "data": data_file,
            }
        for name in group.GetGroupNames() or []:
            walk(group.OpenGroup(name))

    walk(ds.GetRootGroup())
    with open(os.path.join(out_dir, "dump.json"), "w") as f:
        json.dump(out, f, indent=1, allow_nan=False)


def main(argv):
    if len(argv) == 3 and argv[1] == "rasters":
        make_rasters(argv[2])
    elif len(argv) == 4 and argv[1] == "mdim":
        make_mdim(argv[2], argv[3])
    elif len(argv) == 4 and argv[1] == "dump":
        dump(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
