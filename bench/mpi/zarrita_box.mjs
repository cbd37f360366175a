// The peer check of the scale-out benchmark: zarrita reads a box of a zarrxt-written array and
// prints the SHA-256 of its values (C order, little-endian); harness.py compares it with the
// SHA-256 of the formula's values for that box.
//
//   node zarrita_box.mjs ARRAY_DIR OFFSET EXTENT      e.g. 40,300,200 48,400,500
//
// zarrita comes from $ZARRXT_NODE_MODULES (scripts/bench-mpi installs zarrita 0.7.5 there).
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM || !fs.existsSync(path.join(NM, "zarrita", "package.json"))) {
  console.error("zarrita_box: set ZARRXT_NODE_MODULES to a node_modules folder holding zarrita");
  process.exit(2);
}
const zarr = await import(pathToFileURL(path.join(NM, "zarrita", "dist", "src", "index.js")).href);
const FileSystemStore = (await import(pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "fs.js")).href)).default;

const [dir, off, ext] = process.argv.slice(2);
const offset = off.split(",").map(Number);
const extent = ext.split(",").map(Number);
const arr = await zarr.open.v3(zarr.root(new FileSystemStore(dir)), { kind: "array" });
const sel = offset.map((o, d) => zarr.slice(o, o + extent[d]));
const chunk = await zarr.get(arr, sel);
console.log(createHash("sha256").update(Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength)).digest("hex"));
