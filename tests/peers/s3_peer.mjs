// The independent S3 and HTTP clients of zarrxt's S3 tests (tests/test_store_s3.cpp).
//
//   node s3_peer.mjs download ENDPOINT BUCKET PREFIX DIR   every object under PREFIX into DIR
//                                                           (the AWS SDK for JavaScript, v3)
//   node s3_peer.mjs upload DIR ENDPOINT BUCKET PREFIX     every file of DIR as an object
//   node s3_peer.mjs zarrita-digest URL PATH               read the v3 array at PATH of the store
//                                                           at URL with zarrita's FetchStore (plain
//                                                           HTTP GETs and ranges, unsigned) and print
//                                                           the first 16 hex digits of the SHA-256 of
//                                                           its elements, C order, little-endian
//
// Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (the test sets them); region us-east-1,
// path-style addressing (what s3rver serves). Modules come from $ZARRXT_NODE_MODULES.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const NM = process.env.ZARRXT_NODE_MODULES;
if (!NM) {
  console.error('ZARRXT_NODE_MODULES is not set');
  process.exit(2);
}
const require = createRequire(path.join(NM, 'zarrxt-s3-peer.js'));

function client(endpoint) {
  const { S3Client } = require('@aws-sdk/client-s3');
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY },
    // The SDK would add CRC32 checksums that s3rver 3.7 does not know; the plain signed request suffices.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

async function download(endpoint, bucket, prefix, dir) {
  const { ListObjectsV2Command, GetObjectCommand } = require('@aws-sdk/client-s3');
  const s3 = client(endpoint);
  const base = prefix === '' ? '' : prefix.replace(/\/$/, '') + '/';
  let token;
  let n = 0;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: base, ContinuationToken: token }));
    for (const o of page.Contents || []) {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key }));
      const bytes = await got.Body.transformToByteArray();
      const dest = path.join(dir, o.Key.slice(base.length));
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.writeFileSync(dest, bytes);
      n += 1;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  console.log(`downloaded ${n}`);
}

async function upload(dir, endpoint, bucket, prefix) {
  const { PutObjectCommand } = require('@aws-sdk/client-s3');
  const s3 = client(endpoint);
  const base = prefix === '' ? '' : prefix.replace(/\/$/, '') + '/';
  let n = 0;
  const walk = async (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        await walk(p);
      } else {
        const key = base + path.relative(dir, p).split(path.sep).join('/');
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: fs.readFileSync(p) }));
        n += 1;
      }
    }
  };
  await walk(dir);
  console.log(`uploaded ${n}`);
}

async function zarritaDigest(url, arrayPath) {
  const zarr = await import(pathToFileURL(path.join(NM, 'zarrita', 'dist', 'src', 'index.js')).href);
  const fetchUrl = pathToFileURL(path.join(NM, '@zarrita', 'storage', 'dist', 'src', 'fetch.js')).href;
  const FetchStore = (await import(fetchUrl)).default;
  const store = new FetchStore(url);
  const arr = await zarr.open.v3(zarr.root(store).resolve(arrayPath), { kind: 'array' });
  const chunk = await zarr.get(arr);
  const data = chunk.data;
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength); // little-endian hosts
  console.log(createHash('sha256').update(bytes).digest('hex').slice(0, 16));
}

const [cmd, ...args] = process.argv.slice(2);
try {
  if (cmd === 'download') await download(...args);
  else if (cmd === 'upload') await upload(...args);
  else if (cmd === 'zarrita-digest') await zarritaDigest(...args);
  else {
    console.error(`unknown command ${cmd}`);
    process.exit(2);
  }
} catch (e) {
  console.error(`${cmd} failed: ${e.name}: ${e.message}`);
  process.exit(1);
}
