// zarrita reads an array from a zip archive zarrxt wrote (tests/test_store_zip.cpp):
//
//   node zarrita_zip.mjs ARCHIVE PATH    print {"shape", "data"} of the array PATH in ARCHIVE as JSON
//
// Through @zarrita/storage's ZipFileStore over the archive's bytes (unzipit reads the central
// directory; STORED entries are read by range, so a sharded array is read index first).
// zarrita is loaded from $ZARRXT_NODE_MODULES, as in zarrita_peer.mjs.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM || !fs.existsSync(path.join(NM, "zarrita", "package.json"))) {
  console.error("zarrita_zip: set ZARRXT_NODE_MODULES to a node_modules folder holding zarrita");
  process.exit(2);
}
const zarr = await import(pathToFileURL(path.join(NM, "zarrita", "dist", "src", "index.js")).href);
const zipUrl = pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "zip.js")).href;
const ZipFileStore = (await import(zipUrl)).default;

const [archive, node] = process.argv.slice(2);
const store = ZipFileStore.fromBlob(new Blob([fs.readFileSync(archive)]));
const arr = await zarr.open.v3(zarr.root(store).resolve(node), { kind: "array" });
const chunk = await zarr.get(arr);
console.log(JSON.stringify({ shape: chunk.shape, data: Array.from(chunk.data, Number) }));
