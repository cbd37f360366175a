// The zarrita.js peer of zarrxt's interoperability tests (Zarr v3).
//
//   node zarrita_peer.mjs write DIR    write a matrix of v3 arrays with zarrita into DIR
//   node zarrita_peer.mjs verify DIR   read arrays zarrxt wrote into DIR and check every value
//   node zarrita_peer.mjs dump-zip ARCHIVE NAME
//                                      print {shape, data} of the v3 array NAME inside the zip
//                                      archive ARCHIVE, read through @zarrita/storage's
//                                      ZipFileStore (STORED entries by range), as JSON
//   node zarrita_peer.mjs dump DIR NAME   the same for the v3 array NAME of the directory DIR
//   node zarrita_peer.mjs dump-strings DIR NAME
//                                      print the v2 fixed-width string array DIR/NAME (|S n, <U n)
//                                      as zarrita reads it: {dtype, shape, values} as JSON
//
// zarrita is loaded from $ZARRXT_NODE_MODULES (scripts/test installs zarrita 0.7.5 into
// <build>/npm/node_modules). The manifest (DIR/manifest.json) has one entry per array:
//   {name, dtype, shape, chunks, seed, written: null | {offset, extent}, fill_value (v3 JSON),
//    codecs (the zarr.json codec list), chunk_key_encoding, dimension_names (when the array has
//    them, as its zarr.json states them), expected, digest}
// and, from zarrxt, optionally overlay: {offset, extent, seed}, a box rewritten with the formula
// of another seed, and read_chunks: the chunk shape zarrita reports (inner chunks when sharded).
// "expected" (write only) is the array as zarrita reads it back, C order, little-endian, bool
// as one byte; "digest" the first 16 hex digits of its SHA-256.
//
// The value formula is stated in tests/peers/zarr_python_peer.py and implemented again here.
//
// What zarrita 0.7.5 cannot do, and how this script deals with it:
// - It cannot ENCODE gzip or crc32c (their encode() throws UnsupportedError). To still cover
//   those codecs in the zarrita-to-zarrxt direction, `write` registers two stand-in encoders
//   in zarrita's codec registry: gzip through Node's own zlib, crc32c computed by this script.
//   The arrays are otherwise written by zarrita (metadata, chunk keys, bytes and transpose);
//   their names contain "nodegzip" / "jscrc" so nobody mistakes them for zarrita's own output.
//   Reading back (the expected values) uses zarrita's stock decoders.
// - It cannot write sharded arrays (set() throws "set on sharded arrays"), so sharding is only
//   tested zarrxt -> zarrita; it reads the shard index from the end of the shard only.
// - Its crc32c decoder strips the checksum without checking it, so `verify` checks every
//   crc32c it meets itself: whole chunks, shard indexes, and every inner chunk of a shard (it
//   walks the shard index) whose inner codecs end with crc32c. The crc32c below is this
//   script's own; it is checked against the standard check value at start-up.
// - No float16 (Node 20 has no Float16Array) and no complex data types.
// - For bool with {"endian": "big"} zarrita byte-swaps in groups of 4 (its bytesPerElement()
//   falls back to 4 for BoolArray), on write and on read: its files are then wrong and it
//   misreads correct ones. Bool arrays here therefore always say "little" (see boolSafe).

import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import * as nodezlib from "node:zlib";

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM || !fs.existsSync(path.join(NM, "zarrita", "package.json"))) {
  console.error("zarrita_peer: set ZARRXT_NODE_MODULES to a node_modules folder holding zarrita");
  process.exit(2);
}
const zarr = await import(pathToFileURL(path.join(NM, "zarrita", "dist", "src", "index.js")).href);
const fsStoreUrl = pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "fs.js")).href;
const FileSystemStore = (await import(fsStoreUrl)).default;
const zipStoreUrl = pathToFileURL(path.join(NM, "@zarrita", "storage", "dist", "src", "zip.js")).href;
const ZipFileStore = (await import(zipStoreUrl)).default;
const ZARRITA_VERSION = JSON.parse(fs.readFileSync(path.join(NM, "zarrita", "package.json"), "utf8")).version;

// --------------------------------------------------------------------------------- formula

const MUL = 0x9e3779b97f4a7c15n;
const ADD = 0x632be59bd9b4e019n;
const M64 = (1n << 64n) - 1n;

const DTYPES = {
  bool: { width: 1, ctor: null },
  int8: { width: 1, ctor: Int8Array, bits: 8, signed: true },
  int16: { width: 2, ctor: Int16Array, bits: 16, signed: true },
  int32: { width: 4, ctor: Int32Array, bits: 32, signed: true },
  int64: { width: 8, ctor: BigInt64Array, bits: 64, signed: true },
  uint8: { width: 1, ctor: Uint8Array, bits: 8, signed: false },
  uint16: { width: 2, ctor: Uint16Array, bits: 16, signed: false },
  uint32: { width: 4, ctor: Uint32Array, bits: 32, signed: false },
  uint64: { width: 8, ctor: BigUint64Array, bits: 64, signed: false },
  float32: { width: 4, ctor: Float32Array, float: true },
  float64: { width: 8, ctor: Float64Array, float: true },
};

function floatValue(k) {
  switch (k % 97) {
    case 5:
      return NaN;
    case 11:
      return Infinity;
    case 23:
      return -Infinity;
    case 31:
      return -0;
  }
  return (((37 * k) % 2001) - 1000) / 7; // Float32Array rounds this double to nearest
}

/** The formula value of element `index` of an array with `seed` (Number, BigInt or boolean). */
function value(dtype, index, seed) {
  const k = index + 7919 * seed; // well below 2**53 for the arrays used here
  const d = DTYPES[dtype];
  if (dtype === "bool") return (5 * k + 1) % 7 < 3;
  if (d.float) return floatValue(k);
  const u = (BigInt(k) * MUL + ADD) & M64;
  const top = u >> BigInt(64 - d.bits);
  const v = d.signed ? BigInt.asIntN(d.bits, top) : top;
  return d.bits === 64 ? v : Number(v);
}

function typedArray(dtype, n) {
  return dtype === "bool" ? new zarr.BoolArray(n) : new DTYPES[dtype].ctor(n);
}

function cStrides(shape) {
  const s = new Array(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}

const product = (s) => s.reduce((a, b) => a * b, 1);

/** Formula values of the box [offset, offset + extent) of an array of `shape`, C order. */
function formulaBox(dtype, shape, seed, offset, extent) {
  const n = product(extent);
  const out = typedArray(dtype, n);
  const st = cStrides(shape);
  const idx = new Array(shape.length).fill(0);
  for (let e = 0; e < n; e++) {
    let flat = 0;
    for (let d = 0; d < shape.length; d++) flat += (offset[d] + idx[d]) * st[d];
    const v = value(dtype, flat, seed);
    if (out instanceof zarr.BoolArray) out.set(e, v);
    else out[e] = v;
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

/** The fill value of a v3 JSON form as a JS scalar of the dtype. */
function fillScalar(dtype, j) {
  if (j === "NaN") return NaN;
  if (j === "Infinity") return Infinity;
  if (j === "-Infinity") return -Infinity;
  if (dtype === "int64" || dtype === "uint64") return BigInt(j);
  return j;
}

/** Little-endian bytes of one element. */
function scalarBytes(dtype, v) {
  const buf = new Uint8Array(DTYPES[dtype].width);
  if (dtype === "bool") {
    buf[0] = v ? 1 : 0;
    return buf;
  }
  const a = new DTYPES[dtype].ctor(1);
  a[0] = v;
  buf.set(new Uint8Array(a.buffer));
  return buf;
}

/** Copy the box [offset, offset + extent) of `src` into `dst` (both whole arrays, C order). */
function pasteBox(dst, src, shape, width, offset, extent) {
  const st = cStrides(shape);
  const idx = new Array(shape.length).fill(0);
  for (let k = 0; k < product(extent); k++) {
    let flat = 0;
    for (let d = 0; d < shape.length; d++) flat += (offset[d] + idx[d]) * st[d];
    dst.set(src.subarray(flat * width, (flat + 1) * width), flat * width);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
  }
}

function formulaBytes(dtype, shape, seed) {
  const all = formulaBox(dtype, shape, seed, shape.map(() => 0), shape);
  return Buffer.from(new Uint8Array(all.buffer, all.byteOffset, product(shape) * DTYPES[dtype].width));
}

/** What the whole array should hold, as little-endian bytes (the host is little-endian). */
function expectedBytes(e) {
  const width = DTYPES[e.dtype].width;
  const n = product(e.shape);
  const all = formulaBytes(e.dtype, e.shape, e.seed);
  let out = all;
  if (e.written) {
    out = Buffer.alloc(n * width);
    const one = scalarBytes(e.dtype, fillScalar(e.dtype, e.fill_value));
    for (let i = 0; i < n; i++) out.set(one, i * width);
    pasteBox(out, all, e.shape, width, e.written.offset, e.written.extent);
  }
  if (e.overlay) {
    // A box later rewritten with the formula of another seed (zarrxt updating an array in place).
    const again = formulaBytes(e.dtype, e.shape, e.overlay.seed);
    pasteBox(out, again, e.shape, width, e.overlay.offset, e.overlay.extent);
  }
  return out;
}

/** A zarrita chunk ({data, shape, stride}, any strides) or scalar as C-order little-endian bytes. */
function chunkBytes(dtype, chunk) {
  const width = DTYPES[dtype].width;
  if (chunk === null || typeof chunk !== "object" || !("data" in chunk)) {
    return Buffer.from(scalarBytes(dtype, chunk));
  }
  const { data, shape, stride } = chunk;
  const n = product(shape);
  const src = new Uint8Array(data.buffer, data.byteOffset, data.length * width);
  const out = Buffer.alloc(n * width);
  const idx = new Array(shape.length).fill(0);
  for (let e = 0; e < n; e++) {
    let at = 0;
    for (let d = 0; d < shape.length; d++) at += idx[d] * stride[d];
    out.set(src.subarray(at * width, (at + 1) * width), e * width);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

function firstDifference(got, want, width) {
  if (Buffer.compare(got, want) === 0) return null;
  if (got.length !== want.length) return `${got.length} bytes, expected ${want.length}`;
  let bad = 0;
  let first = "";
  for (let i = 0; i * width < got.length; i++) {
    const g = got.subarray(i * width, (i + 1) * width);
    const w = want.subarray(i * width, (i + 1) * width);
    if (Buffer.compare(g, w) !== 0 && ++bad <= 3) {
      first += ` [${i}] got ${g.toString("hex")} expected ${w.toString("hex")};`;
    }
  }
  return `${bad} of ${got.length / width} elements differ:${first}`;
}

// ---------------------------------------------------------------------------------- crc32c

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let j = 0; j < 8; j++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1; // Castagnoli, reflected
    t[i] = c >>> 0;
  }
  return t;
})();

function crc32c(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

if (crc32c(new TextEncoder().encode("123456789")) !== 0xe3069283) {
  throw new Error("crc32c self-check failed"); // the standard CRC-32C check value
}

/** Stand-in encoders for the codecs zarrita 0.7.5 cannot encode (see the header comment). */
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

class JsCrc32cCodec {
  kind = "bytes_to_bytes";
  static fromConfig() {
    return new JsCrc32cCodec();
  }
  encode(bytes) {
    const out = new Uint8Array(bytes.length + 4);
    out.set(bytes);
    new DataView(out.buffer).setUint32(bytes.length, crc32c(bytes), true);
    return out;
  }
  decode(bytes) {
    return bytes.subarray(0, bytes.length - 4);
  }
  computeEncodedSize(n) {
    return n + 4;
  }
}

// ----------------------------------------------------------------------------------- matrix

const GEOMETRIES = [
  [[7, 5, 6], [3, 2, 4]],
  [[11, 9], [4, 4]],
  [[20], [6]],
  [[2, 3, 4, 5], [1, 2, 3, 2]],
  [[5, 4], [5, 4]],
];

const reversed = (rank) => Array.from({ length: rank }, (_, i) => rank - 1 - i);

// Codec chains by label; `rank` and `width` fill in transpose orders and blosc's typesize.
const CHAINS = {
  "bytes-le": () => [{ name: "bytes", configuration: { endian: "little" } }],
  "bytes-be": () => [{ name: "bytes", configuration: { endian: "big" } }],
  transpose: (rank) => [
    { name: "transpose", configuration: { order: reversed(rank) } },
    { name: "bytes", configuration: { endian: "little" } },
  ],
  zstd: () => [
    { name: "bytes", configuration: { endian: "big" } },
    { name: "zstd", configuration: { level: 3, checksum: false } },
  ],
  blosc: (rank, width) => [
    { name: "bytes", configuration: { endian: "little" } },
    {
      name: "blosc",
      configuration: { cname: "lz4", clevel: 5, shuffle: "shuffle", typesize: width, blocksize: 0 },
    },
  ],
  nodegzip: (rank) => [
    { name: "transpose", configuration: { order: reversed(rank) } },
    { name: "bytes", configuration: { endian: "big" } },
    { name: "gzip", configuration: { level: 5 } },
  ],
  jscrc: () => [{ name: "bytes", configuration: { endian: "little" } }, { name: "crc32c" }],
  "zstd-jscrc": (rank) => [
    { name: "transpose", configuration: { order: reversed(rank) } },
    { name: "bytes", configuration: { endian: "little" } },
    { name: "zstd", configuration: { level: 1, checksum: false } },
    { name: "crc32c" },
  ],
};

/** Work around zarrita's bool byte-swap bug (see the header comment): bool never says "big". */
function boolSafe(dtype, codecs) {
  if (dtype !== "bool") return codecs;
  return codecs.map((c) => (c.name === "bytes" ? { name: "bytes", configuration: { endian: "little" } } : c));
}

const KEY_ENCODINGS = [
  { name: "default", configuration: { separator: "/" } },
  { name: "default", configuration: { separator: "." } },
  { name: "v2", configuration: { separator: "." } },
  { name: "v2", configuration: { separator: "/" } },
];
const keyLabel = (k) =>
  (k.name === "v2" ? "v2" : "def") + (k.configuration.separator === "/" ? "slash" : "dot");

function matrix() {
  const cases = [];
  const dtypes = Object.keys(DTYPES);
  const chains = Object.keys(CHAINS);
  dtypes.forEach((dtype, d) => {
    chains.forEach((chain, c) => {
      const [shape, chunks] = GEOMETRIES[(d + c) % GEOMETRIES.length];
      const key = KEY_ENCODINGS[(d + 2 * c) % KEY_ENCODINGS.length];
      cases.push({ dtype, chain, shape, chunks, key, fill: dtype === "bool" ? false : 0, written: null });
    });
  });
  const partial = { offset: [2, 1], extent: [5, 6] };
  const specials = [
    ["float64", "bytes-le", "nan", "NaN"],
    ["float32", "zstd", "nan", "NaN"],
    ["float64", "nodegzip", "neginf", "-Infinity"],
    ["int32", "nodegzip", "fillneg", -7],
    ["int64", "blosc", "fillneg", -5],
    ["uint64", "transpose", "fillbig", 2 ** 40],
    ["uint8", "jscrc", "fill", 200],
    ["bool", "bytes-le", "filltrue", true],
  ];
  for (const [dtype, chain, label, fill] of specials) {
    cases.push({ dtype, chain, shape: [11, 9], chunks: [4, 4], key: KEY_ENCODINGS[0], fill, written: partial,
      label });
  }
  const plain = (dtype, chain, shape, chunks, key, label) =>
    ({ dtype, chain, shape, chunks, key: KEY_ENCODINGS[key], fill: 0, written: null, label });
  cases.push(plain("int16", "bytes-be", [], [], 0, "scalar"));
  cases.push(plain("uint16", "zstd", [4, 3], [10, 10], 1, "bigchunk"));
  cases.push(plain("float32", "bytes-le", [0, 5], [2, 2], 0, "empty"));
  cases.push(plain("uint8", "zstd", [64, 64, 3], [20, 20, 3], 0, "image"));
  // Chunks of 100+ KB: longer zstd/deflate streams, multi-block blosc frames.
  cases.push(plain("float64", "zstd", [200, 300], [128, 160], 0, "large"));
  cases.push(plain("int32", "nodegzip", [200, 300], [128, 160], 3, "large"));
  cases.push(plain("uint16", "blosc", [200, 300], [128, 160], 1, "large"));
  // A transpose order that is not a reversal.
  cases.push({
    ...plain("float64", "perm", [3, 4, 5, 6], [2, 3, 2, 4], 2, "rank4"),
    codecs: [
      { name: "transpose", configuration: { order: [2, 0, 3, 1] } },
      { name: "bytes", configuration: { endian: "big" } },
    ],
  });
  return cases;
}

/**
 * dimension_names of the i-th array: none for every third, names for the others, with a null
 * (an unnamed axis, which the spec allows) in every other named array of rank 2 or more.
 */
function dimensionNamesFor(i, rank) {
  if (i % 3 === 2) return undefined;
  const names = ["t", "z", "y", "x"].slice(4 - rank);
  if (i % 2 === 1 && rank >= 2) names[0] = null;
  return names;
}

const caseName = (c) => [c.dtype, c.chain, keyLabel(c.key), ...(c.label ? [c.label] : [])].join(".");

// ------------------------------------------------------------------------------------ write

function boxSelection(offset, extent) {
  return offset.map((o, d) => zarr.slice(o, o + extent[d]));
}

async function writeMatrix(dir) {
  const stock = new Map(zarr.registry);
  const store = new FileSystemStore(path.join(dir, "arrays"));
  fs.mkdirSync(path.join(dir, "expected"), { recursive: true });
  const entries = [];
  const cases = matrix();
  for (const [i, c] of cases.entries()) {
    const seed = i + 1;
    const name = caseName(c);
    const codecs = boolSafe(c.dtype, c.codecs ?? CHAINS[c.chain](c.shape.length, DTYPES[c.dtype].width));
    const fillValue = typeof c.fill === "string" ? fillScalar(c.dtype, c.fill) : c.fill;
    const loc = zarr.root(store).resolve(name);
    await zarr.create(loc, {
      shape: c.shape,
      chunkShape: c.chunks,
      dtype: c.dtype,
      codecs,
      fillValue: typeof fillValue === "bigint" ? Number(fillValue) : fillValue,
      chunkSeparator: c.key.configuration.separator,
      dimensionNames: dimensionNamesFor(i, c.shape.length),
    });
    if (c.key.name !== "default") {
      // zarr.create() always writes the "default" chunk key encoding; switch the document to
      // "v2" so that zarrita, reopening it, writes the chunks under v2 keys itself.
      const p = path.join(dir, "arrays", name, "zarr.json");
      const doc = JSON.parse(fs.readFileSync(p, "utf8"));
      doc.chunk_key_encoding = c.key;
      fs.writeFileSync(p, JSON.stringify(doc, null, 2));
    }
    // Encoders for what zarrita cannot encode, only while writing (see the header comment).
    zarr.registry.set("gzip", () => NodeGzipCodec);
    zarr.registry.set("crc32c", () => JsCrc32cCodec);
    const arr = await zarr.open.v3(loc, { kind: "array" });
    const n = product(c.shape);
    if (c.shape.length === 0) {
      await zarr.set(arr, null, value(c.dtype, 0, seed));
    } else if (n > 0) {
      const offset = c.written ? c.written.offset : c.shape.map(() => 0);
      const extent = c.written ? c.written.extent : c.shape;
      const data = formulaBox(c.dtype, c.shape, seed, offset, extent);
      await zarr.set(arr, boxSelection(offset, extent), { data, shape: extent, stride: cStrides(extent) });
    }
    for (const [k, v] of stock) zarr.registry.set(k, v);
    // Read back with zarrita's own decoders: these bytes are what the C++ side must reproduce.
    const back = await zarr.open.v3(loc, { kind: "array" });
    const got = c.shape.length === 0 ? await zarr.get(back) : n > 0 ? await zarr.get(back, null) : null;
    const bytes = got === null ? Buffer.alloc(0) : chunkBytes(c.dtype, got);
    const rel = path.join("expected", `${name}.bin`);
    fs.writeFileSync(path.join(dir, rel), bytes);
    const doc = JSON.parse(fs.readFileSync(path.join(dir, "arrays", name, "zarr.json"), "utf8"));
    entries.push({
      name,
      dtype: c.dtype,
      shape: c.shape,
      chunks: c.chunks,
      seed,
      written: c.written,
      fill_value: doc.fill_value,
      codecs: doc.codecs,
      chunk_key_encoding: doc.chunk_key_encoding,
      ...(doc.dimension_names !== undefined ? { dimension_names: doc.dimension_names } : {}),
      expected: rel,
      digest: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
    });
  }
  const manifest = { writer: `zarrita ${ZARRITA_VERSION}`, arrays: entries };
  fs.writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest, null, 1));
  console.log(`zarrita ${ZARRITA_VERSION} wrote ${entries.length} arrays`);
  return 0;
}

// ----------------------------------------------------------------------------------- verify

function listFiles(root) {
  const out = [];
  const walk = (d) => {
    for (const ent of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.name !== "zarr.json") out.push(p);
    }
  };
  if (fs.existsSync(root)) walk(root);
  return out;
}

function codecNames(codecs) {
  return codecs.map((c) =>
    c.name === "sharding_indexed"
      ? `sharding_indexed(${codecNames(c.configuration.codecs)}|${codecNames(c.configuration.index_codecs)})`
      : c.name,
  ).join(",");
}

async function verifyOne(dir, e) {
  const problems = [];
  const arrDir = path.join(dir, "arrays", e.name);
  const doc = JSON.parse(fs.readFileSync(path.join(arrDir, "zarr.json"), "utf8"));
  if (codecNames(doc.codecs) !== codecNames(e.codecs)) {
    problems.push(`codecs ${codecNames(doc.codecs)}, expected ${codecNames(e.codecs)}`);
  }
  if (JSON.stringify(doc.chunk_key_encoding) !== JSON.stringify(e.chunk_key_encoding)) {
    const [got, exp] = [doc.chunk_key_encoding, e.chunk_key_encoding].map((k) => JSON.stringify(k));
    problems.push(`chunk_key_encoding ${got}, expected ${exp}`);
  }
  const store = new FileSystemStore(path.join(dir, "arrays"));
  const arr = await zarr.open.v3(zarr.root(store).resolve(e.name), { kind: "array" });
  if (arr.dtype !== e.dtype) problems.push(`dtype ${arr.dtype}, expected ${e.dtype}`);
  if (JSON.stringify(arr.shape) !== JSON.stringify(e.shape)) {
    problems.push(`shape ${arr.shape}, expected ${e.shape}`);
  }
  const readChunks = e.read_chunks ?? e.chunks;
  if (JSON.stringify(arr.chunks) !== JSON.stringify(readChunks)) {
    problems.push(`chunks ${arr.chunks}, expected ${readChunks}`);
  }
  // dimension_names, in the document and as zarrita reports them.
  const wantNames = JSON.stringify(e.dimension_names ?? null);
  if (JSON.stringify(doc.dimension_names ?? null) !== wantNames) {
    problems.push(`zarr.json dimension_names ${JSON.stringify(doc.dimension_names)}, expected ${wantNames}`);
  }
  if (JSON.stringify(arr.dimensionNames ?? null) !== wantNames) {
    problems.push(`zarrita reports dimension names ${JSON.stringify(arr.dimensionNames)}, expected ${wantNames}`);
  }
  const width = DTYPES[e.dtype].width;
  const want = expectedBytes(e);
  // The fill value as zarrita decodes it.
  if (e.fill_value !== undefined) {
    const got = Buffer.from(scalarBytes(e.dtype, arr.fillValue));
    const exp = Buffer.from(scalarBytes(e.dtype, fillScalar(e.dtype, e.fill_value)));
    if (Buffer.compare(got, exp) !== 0) {
      problems.push(`fill value ${arr.fillValue}, expected ${e.fill_value}`);
    }
  }
  const n = product(e.shape);
  if (e.shape.length === 0) {
    const d = firstDifference(chunkBytes(e.dtype, await zarr.get(arr)), want, width);
    if (d) problems.push(`scalar: ${d}`);
  } else if (n > 0) {
    const d = firstDifference(chunkBytes(e.dtype, await zarr.get(arr, null)), want, width);
    if (d) problems.push(`whole array: ${d}`);
    // A sub-region straddling chunk (and shard) boundaries, ending at the ragged far corner.
    const offset = e.shape.map((s) => Math.floor(s / 3));
    const extent = e.shape.map((s, d) => s - offset[d]);
    const sub = chunkBytes(e.dtype, await zarr.get(arr, boxSelection(offset, extent)));
    const st = cStrides(e.shape);
    const parts = [];
    const idx = new Array(e.shape.length).fill(0);
    for (let k = 0; k < product(extent); k++) {
      let flat = 0;
      for (let d = 0; d < e.shape.length; d++) flat += (offset[d] + idx[d]) * st[d];
      parts.push(want.subarray(flat * width, (flat + 1) * width));
      for (let d = e.shape.length - 1; d >= 0; d--) {
        if (++idx[d] < extent[d]) break;
        idx[d] = 0;
      }
    }
    const ds = firstDifference(sub, Buffer.concat(parts), width);
    if (ds) problems.push(`region from ${offset}: ${ds}`);
  }
  // zarrita's crc32c decoder does not check checksums: check them here.
  const outer = doc.codecs[doc.codecs.length - 1];
  const sharding = doc.codecs.length === 1 && doc.codecs[0].name === "sharding_indexed" ? doc.codecs[0] : null;
  for (const file of listFiles(arrDir)) {
    const bytes = fs.readFileSync(file);
    const rel = path.relative(arrDir, file);
    if (outer.name === "crc32c") {
      const stored = bytes.readUInt32LE(bytes.length - 4);
      if (stored !== crc32c(bytes.subarray(0, bytes.length - 4))) {
        problems.push(`chunk ${rel}: crc32c mismatch`);
      }
    }
    if (sharding) {
      checkShard(bytes, sharding.configuration, doc.chunk_grid.configuration.chunk_shape, `shard ${rel}`, problems);
    }
  }
  return problems;
}

let innerChecksums = 0; // inner-chunk checksums verified by checkShard, for the summary line

/**
 * Walk a shard's index (sharding_indexed configuration `cfg`, shard shape `shardShape`): check
 * the index's own crc32c, that every entry lies inside the shard, and the crc32c of every inner
 * chunk whose codecs end with crc32c; nested shards are walked the same way.
 */
function checkShard(bytes, cfg, shardShape, label, problems) {
  const inner = cfg.chunk_shape;
  const count = product(shardShape.map((s, d) => s / inner[d]));
  const indexCodecs = cfg.index_codecs;
  const indexCrc = indexCodecs.some((c) => c.name === "crc32c");
  const bigEndian = indexCodecs.some((c) => c.name === "bytes" && c.configuration?.endian === "big");
  const indexSize = 16 * count + (indexCrc ? 4 : 0);
  if (bytes.length < indexSize) {
    problems.push(`${label}: ${bytes.length} bytes, shorter than its ${indexSize}-byte index`);
    return;
  }
  const at = (cfg.index_location ?? "end") === "start" ? 0 : bytes.length - indexSize;
  const index = bytes.subarray(at, at + indexSize);
  if (indexCrc && index.readUInt32LE(16 * count) !== crc32c(index.subarray(0, 16 * count))) {
    problems.push(`${label}: index crc32c mismatch`);
  }
  const innerCodecs = cfg.codecs;
  const innerCrc = innerCodecs[innerCodecs.length - 1].name === "crc32c";
  const nested = innerCodecs.length === 1 && innerCodecs[0].name === "sharding_indexed" ? innerCodecs[0] : null;
  const missing = 0xffffffffffffffffn;
  for (let i = 0; i < count; i++) {
    const read = (k) => (bigEndian ? index.readBigUInt64BE(16 * i + 8 * k) : index.readBigUInt64LE(16 * i + 8 * k));
    const [offset, nbytes] = [read(0), read(1)];
    if (offset === missing && nbytes === missing) continue;
    if (offset + nbytes > BigInt(bytes.length)) {
      problems.push(`${label}: inner chunk ${i} at ${offset}+${nbytes} lies outside the shard`);
      continue;
    }
    const chunk = bytes.subarray(Number(offset), Number(offset + nbytes));
    if (innerCrc) {
      if (chunk.length < 4 || chunk.readUInt32LE(chunk.length - 4) !== crc32c(chunk.subarray(0, chunk.length - 4))) {
        problems.push(`${label}: inner chunk ${i} crc32c mismatch`);
      } else {
        innerChecksums++;
      }
    }
    if (nested) checkShard(chunk, nested.configuration, inner, `${label} inner chunk ${i}`, problems);
  }
}

async function verify(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
  let failed = 0;
  for (const e of manifest.arrays) {
    let problems;
    try {
      problems = await verifyOne(dir, e);
    } catch (err) {
      problems = [`zarrita threw: ${err?.stack ?? err}`];
    }
    if (problems.length) {
      failed++;
      console.log(`FAIL ${e.name}: ${problems.join("; ")}`);
    } else {
      console.log(`ok   ${e.name}`);
    }
  }
  console.log(
    `zarrita ${ZARRITA_VERSION} verified ${manifest.arrays.length} arrays written by ${manifest.writer} ` +
      `(${innerChecksums} inner-chunk crc32c checked): ${failed} failed`,
  );
  return failed ? 1 : 0;
}

// zarrita reads numpy's fixed-width strings from v2 metadata only (its v3 has the variable-length
// "string" type, not fixed_length_utf32). Its getters drop every NUL, inner ones too, and decode
// |S bytes as UTF-8 text; callers compare values for which that loses nothing. With "v3", the
// array is opened as v3 (the "string" data type with vlen-utf8, whose values are a plain array).
async function dumpStrings(dir, name, version) {
  const store = new FileSystemStore(dir);
  const open = version === "v3" ? zarr.open.v3 : zarr.open.v2;
  const arr = await open(zarr.root(store).resolve(name), { kind: "array" });
  const chunk = await zarr.get(arr);
  const at = (i) => (typeof chunk.data.get === "function" ? chunk.data.get(i) : chunk.data[i]);
  // In C order whatever the layout zarrita returns (F-order arrays come back with F strides).
  const values = [];
  const idx = chunk.shape.map(() => 0);
  for (let n = 0; n < chunk.data.length; n++) {
    values.push(at(idx.reduce((off, v, d) => off + v * chunk.stride[d], 0)));
    for (let d = idx.length - 1; d >= 0 && ++idx[d] === chunk.shape[d]; d--) idx[d] = 0;
  }
  console.log(JSON.stringify({ dtype: arr.dtype, shape: chunk.shape, values }));
  return 0;
}

// Print {shape, data} of the v3 array NAME of `store` as JSON (data C-ordered, as numbers).
async function dumpArray(store, name) {
  const arr = await zarr.open.v3(zarr.root(store).resolve(name), { kind: "array" });
  const chunk = await zarr.get(arr);
  // Written synchronously: the process.exit below would cut an asynchronous pipe write short.
  fs.writeSync(1, JSON.stringify({ shape: chunk.shape, data: Array.from(chunk.data, Number) }) + "\n");
  return 0;
}

async function dumpZip(archive, name) {
  return dumpArray(ZipFileStore.fromBlob(new Blob([fs.readFileSync(archive)])), name);
}

// ------------------------------------------------------------------------------------- main

const [cmd, dir, name, version] = process.argv.slice(2);
let status = 2;
if (cmd === "write" && dir) status = await writeMatrix(dir);
else if (cmd === "verify" && dir) status = await verify(dir);
else if (cmd === "dump-strings" && dir && name) status = await dumpStrings(dir, name, version);
else if (cmd === "dump-zip" && dir && name) status = await dumpZip(dir, name);
else if (cmd === "dump" && dir && name) status = await dumpArray(new FileSystemStore(dir), name);
else console.error("usage: node zarrita_peer.mjs write|verify DIR | dump-strings DIR NAME [v3] | dump-zip ARCHIVE NAME | dump DIR NAME");
process.exit(status);
