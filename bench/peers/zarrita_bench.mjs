// zarrita (zarrita.js 0.7.5, Node) as a writer of benchmark inputs and as a peer reader.
//
//   node zarrita_bench.mjs write-w1 DIR
//       write DIR/v3_raw (bytes) and DIR/v3_gzip (bytes + gzip level 5): 4096 x 4096 uint16,
//       64 x 64 chunks, value (row * 17 + col * 31) % 65521 + 1
//   node zarrita_bench.mjs read-w1 DIR NAME EXTENT
//       one timed read (Zarr v2 or v3) of the EXTENT x EXTENT region at [7, 11]; prints one JSON object
//   node zarrita_bench.mjs read-w2 DIR NAME KIND [COUNT]
//       one timed read (Zarr v2 or v3) of a whole 1-d uint8 array, or of its first COUNT elements
//       (the harness's probe of whether zarrita opens the array at all); KIND is repeated or semi_random
//
// DIR may also be an http:// base URL (the remote-store benchmark, bench/remote_harness.py): the
// array is then read through zarrita's FetchStore (Node's fetch) from BASE/NAME.
//
// zarrita is loaded from $ZARRXT_NODE_MODULES (scripts/bench installs it into <build>/npm).
// zarrita 0.7.5 cannot encode gzip (its encode() throws UnsupportedError); to write v3_gzip
// with zarrita all the same (its metadata, chunk grid, keys and bytes codec), a stand-in gzip
// encoder backed by Node's zlib (level 5, the level the metadata states) is registered while
// writing. Reading always uses zarrita's stock codecs.
// Timing covers the zarr.get() call only; the returned values are all checked against the
// formula and hashed (SHA-256 of the C-ordered little-endian bytes) outside the timing.

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as nodezlib from "node:zlib";

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM || !fs.existsSync(path.join(NM, "zarrita", "package.json"))) {
  console.error("zarrita_bench: set ZARRXT_NODE_MODULES to a node_modules folder holding zarrita");
  process.exit(2);
}
const zarr = await import(pathToFileURL(path.join(NM, "zarrita", "dist", "src", "index.js")).href);
const fsStoreUrl = pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "fs.js")).href;
const FileSystemStore = (await import(fsStoreUrl)).default;
const fetchStoreUrl = pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "fetch.js")).href;
const FetchStore = (await import(fetchStoreUrl)).default;

// The store of a data set: a directory, or an http:// base URL. FetchStore asks for a shard's
// index (a suffix of the object) with a HEAD for the size and then a range by default; nginx
// answers suffix ranges, so useSuffixRequest spares zarrita that extra round trip: the peer runs
// as well configured as it can be for this server.
function storeOf(dir) {
  if (/^https?:\/\//.test(dir)) return new FetchStore(dir, { useSuffixRequest: true });
  return new FileSystemStore(dir);
}

const W1 = 4096;
const w1Value = (r, c) => ((r * 17 + c * 31) % 65521) + 1;

// Peak resident set of this process image (VmHWM). process.resourceUsage().maxRSS is getrusage's
// ru_maxrss, which on Linux carries the peak of the harness that started us across fork and exec.
function peakRss() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

function fail(msg) {
  console.error(`zarrita_bench: ${msg}`);
  process.exit(1);
}

class NodeGzipCodec {
  kind = "bytes_to_bytes";
  constructor(level) {
    this.level = level;
  }
  static fromConfig(config) {
    return new NodeGzipCodec(config?.level ?? 5);
  }
  encode(bytes) {
    return new Uint8Array(nodezlib.gzipSync(bytes, { level: this.level }));
  }
  decode(bytes) {
    return new Uint8Array(nodezlib.gunzipSync(bytes));
  }
}

async function writeW1(dir) {
  const store = new FileSystemStore(dir);
  const data = new Uint16Array(W1 * W1);
  for (let r = 0; r < W1; r++) for (let c = 0; c < W1; c++) data[r * W1 + c] = w1Value(r, c);
  const variants = [
    ["v3_raw", [{ name: "bytes", configuration: { endian: "little" } }]],
    [
      "v3_gzip",
      [
        { name: "bytes", configuration: { endian: "little" } },
        { name: "gzip", configuration: { level: 5 } },
      ],
    ],
  ];
  const stock = zarr.registry.get("gzip");
  zarr.registry.set("gzip", () => NodeGzipCodec);
  try {
    for (const [name, codecs] of variants) {
      const arr = await zarr.create(zarr.root(store).resolve(name), {
        shape: [W1, W1],
        chunkShape: [64, 64],
        dtype: "uint16",
        codecs,
        fillValue: 0,
      });
      await zarr.set(arr, null, { data, shape: [W1, W1], stride: [W1, 1] });
    }
  } finally {
    zarr.registry.set("gzip", stock);
  }
}

async function readW1(dir, name, extent) {
  const rssStart = peakRss();
  const store = storeOf(dir);
  const arr = await zarr.open(zarr.root(store).resolve(name), { kind: "array" }); // v2 or v3
  const sel = [zarr.slice(7, 7 + extent), zarr.slice(11, 11 + extent)];
  const t0 = process.hrtime.bigint();
  const got = await zarr.get(arr, sel);
  const ns = process.hrtime.bigint() - t0;
  const rssPeak = peakRss();
  const v = got.data;
  if (v.length !== extent * extent || got.shape[0] !== extent || got.shape[1] !== extent) fail("wrong shape");
  for (let r = 0; r < extent; r++) {
    for (let c = 0; c < extent; c++) {
      const want = w1Value(7 + r, 11 + c);
      const x = v[r * extent + c];
      if (x !== want) fail(`wrong value at [${7 + r}, ${11 + c}]: ${x}, expected ${want}`);
    }
  }
  const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const out = { read_ns: Number(ns), rss_peak: rssPeak, rss_start: rssStart, verified: true };
  out.sha256 = createHash("sha256").update(bytes).digest("hex");
  console.log(JSON.stringify(out));
}

// murmur3's 32-bit finaliser (bench/peers/make_data.py states the W2 formula).
function fmix32(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

async function readW2(dir, name, kind, count) {
  const rssStart = peakRss();
  const store = storeOf(dir);
  const arr = await zarr.open(zarr.root(store).resolve(name), { kind: "array" }); // v2 or v3
  const n = count === undefined ? arr.shape[0] : count;
  const t0 = process.hrtime.bigint();
  const got = await zarr.get(arr, count === undefined ? null : [zarr.slice(0, count)]);
  const ns = process.hrtime.bigint() - t0;
  const rssPeak = peakRss();
  const v = got.data;
  if (v.length !== n) fail("wrong length");
  if (kind === "repeated") {
    for (let i = 0; i < v.length; i++) if (v[i] !== 1) fail(`wrong value at ${i}: ${v[i]}`);
  } else {
    const sine = new Int32Array(256);
    for (let j = 0; j < 256; j++) sine[j] = Math.floor(128.5 + 50 * Math.sin((2 * Math.PI * j) / 256));
    for (let i = 0; i < v.length; i++) {
      const want = sine[i & 255] + (fmix32((i + 12345) >>> 0) % 3) - 1;
      if (v[i] !== want) fail(`wrong value at ${i}: ${v[i]}, expected ${want}`);
    }
  }
  const bytes = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  const out = { read_ns: Number(ns), rss_peak: rssPeak, rss_start: rssStart, verified: true };
  out.sha256 = createHash("sha256").update(bytes).digest("hex");
  console.log(JSON.stringify(out));
}

const [cmd, ...rest] = process.argv.slice(2);
try {
  if (cmd === "write-w1") await writeW1(rest[0]);
  else if (cmd === "read-w1") await readW1(rest[0], rest[1], Number(rest[2]));
  else if (cmd === "read-w2") await readW2(rest[0], rest[1], rest[2], rest[3] && Number(rest[3]));
  else {
    fail("usage: zarrita_bench.mjs write-w1 DIR | read-w1 DIR NAME EXTENT | read-w2 DIR NAME KIND [COUNT]");
  }
} catch (e) {
  fail(`${cmd} failed: ${e?.stack ?? e}`);
}
