// zarrita reads the v3 consolidated metadata (the root zarr.json's "consolidated_metadata",
// kind "inline") that zarrxt::mpi::consolidate_metadata wrote.
//
//   node consolidated_peer.mjs DIR     DIR holds manifest.json and arrays/ (from mpi_tool peers)
//
// withConsolidatedMetadata must list every array of the manifest, and a copy of the store whose
// only zarr.json is the root one must read back exactly what the original store reads, so the
// consolidated document alone describes every array. zarrita comes from $ZARRXT_NODE_MODULES.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM || !fs.existsSync(path.join(NM, "zarrita", "package.json"))) {
  console.error("consolidated_peer: set ZARRXT_NODE_MODULES to a node_modules folder holding zarrita");
  process.exit(2);
}
const zarr = await import(pathToFileURL(path.join(NM, "zarrita", "dist", "src", "index.js")).href);
const FileSystemStore = (await import(pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "fs.js")).href)).default;

const dir = process.argv[2];
const names = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8")).arrays.map((e) => e.name).sort();
const arrays = path.join(dir, "arrays");
const bare = fs.mkdtempSync(path.join(os.tmpdir(), "zarrxt-cm-"));
const problems = [];
try {
  fs.cpSync(arrays, bare, {
    recursive: true,
    filter: (src) => path.basename(src) !== "zarr.json" || path.dirname(src) === arrays,
  });
  const store = await zarr.withConsolidatedMetadata(new FileSystemStore(bare), { format: "v3" });
  const listed = store.contents().filter((c) => c.kind === "array").map((c) => c.path.replace(/^\//, "")).sort();
  if (JSON.stringify(listed) !== JSON.stringify(names)) problems.push(`contents() lists ${listed}, expected ${names}`);
  const plain = new FileSystemStore(arrays);
  for (const name of names) {
    const direct = await zarr.open.v3(zarr.root(plain).resolve(name), { kind: "array" });
    const via = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
    for (const attr of ["shape", "chunks", "dtype", "fillValue"]) {
      const [a, b] = [JSON.stringify(direct[attr]), JSON.stringify(via[attr])];
      if (a !== b) problems.push(`${name}: ${attr} ${b} through consolidated metadata, ${a} from zarr.json`);
    }
    const [a, b] = [await zarr.get(direct, null), await zarr.get(via, null)];
    if (Buffer.compare(Buffer.from(a.data.buffer), Buffer.from(b.data.buffer)) !== 0) {
      problems.push(`${name}: values read through consolidated metadata differ`);
    }
  }
} catch (err) {
  problems.push(`zarrita threw: ${err?.stack ?? err}`);
} finally {
  fs.rmSync(bare, { recursive: true, force: true });
}
for (const p of problems) console.log(`FAIL ${p}`);
console.log(`zarrita read ${names.length} arrays through consolidated metadata alone: ${problems.length} problems`);
process.exit(problems.length || names.length === 0 ? 1 : 0);
