// A proxy in front of s3rver for the S3 tests: it checks every request's AWS Signature Version 4
// with the AWS SDK's own signer (@smithy/signature-v4) before passing it on, because s3rver checks
// the access key but not the signature (its authentication.js: "Signature version 4 calculation
// is unimplemented"; a wrong secret is accepted). A request whose signature, payload hash or
// Content-MD5 does not match what arrived is answered as S3 answers it (403
// SignatureDoesNotMatch, 400 XAmzContentSHA256Mismatch, 400 BadDigest) and never reaches s3rver.
//
//   node s3_sigv4_proxy.mjs NODE_MODULES LISTEN_PORT UPSTREAM_PORT ACCESS_KEY SECRET REGION
//
// Prints "listening PORT" once it accepts connections. Counts what it refused in
// GET /__proxy/stats (JSON), so a test can tell that the checks ran, and the requests it saw by
// method and multipart step ("PUT", "POST uploads", "PUT part", "POST uploadId", "DELETE uploadId").
// GET /__proxy/lose-next-completion: the next CompleteMultipartUpload goes to s3rver, which
// completes the upload, but its answer is dropped and the client's connection closed, as when an
// answer is lost on the network; the client's retry then meets an upload that no longer exists.
// GET /__proxy/refuse-next-completion: the next CompleteMultipartUpload is answered 404
// NoSuchUpload without reaching s3rver (an upload aborted meanwhile, by a lifecycle rule say).

import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';

const [nodeModules, listenPort, upstreamPort, accessKey, secret, region] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, 'zarrxt-proxy.js'));
const { SignatureV4 } = require('@smithy/signature-v4');
const { Sha256 } = require('@aws-crypto/sha256-js');

const signer = new SignatureV4({
  credentials: { accessKeyId: accessKey, secretAccessKey: secret },
  region,
  service: 's3',
  sha256: Sha256,
  uriEscapePath: false, // S3 signs the path as sent (each segment encoded once)
  applyChecksum: false,
});
const stats = { checked: 0, refused: 0, reasons: {}, requests: {}, lost_completions: 0 };
let nextCompletionFault = null; // 'lose' or 'refuse'
const isCompletion = (req, step) => req.method === 'POST' && step === ' uploadId';
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function refuse(res, status, code, message) {
  stats.refused += 1;
  stats.reasons[code] = (stats.reasons[code] || 0) + 1;
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

// "20261202T143311Z" -> Date
function amzDate(v) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v || '');
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : null;
}

// The query as name -> decoded value (decodeURIComponent: '+' stays '+', as S3 reads it).
function queryOf(search) {
  const q = {};
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    q[name] = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
  }
  return q;
}

async function check(req, body) {
  const auth = req.headers['authorization'];
  if (!auth) {
    return null; // unsigned: s3rver decides (it refuses writes without credentials)
  }
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) {
    return [400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed'];
  }
  const [, keyId, , credRegion, signedHeaders, signature] = m;
  if (keyId !== accessKey) {
    return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  }
  if (credRegion !== region) {
    return [400, 'AuthorizationHeaderMalformed', `the region '${credRegion}' is wrong; expecting '${region}'`];
  }
  const date = amzDate(req.headers['x-amz-date']);
  if (!date) {
    return [403, 'AccessDenied', 'X-Amz-Date is missing or malformed'];
  }
  const payload = req.headers['x-amz-content-sha256'];
  if (!payload) {
    return [400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'];
  }
  if (payload !== 'UNSIGNED-PAYLOAD' && crypto.createHash('sha256').update(body).digest('hex') !== payload) {
    return [400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed."];
  }
  const md5 = req.headers['content-md5'];
  if (md5 !== undefined && crypto.createHash('md5').update(body).digest('base64') !== md5) {
    return [400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.'];
  }
  const url = new URL(req.url, 'http://proxy');
  const headers = {};
  for (const name of signedHeaders.split(';')) {
    if (req.headers[name] === undefined) {
      return [403, 'SignatureDoesNotMatch', `the signed header ${name} is missing`];
    }
    headers[name] = req.headers[name];
  }
  const signed = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: req.headers.host, path: url.pathname, query: queryOf(url.search), headers },
    { signingDate: date, signableHeaders: new Set(signedHeaders.split(';')) });
  const expected = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization || '');
  stats.checked += 1;
  if (!expected || expected[1] !== signature) {
    return [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
  }
  return null;
}

const server = http.createServer((req, res) => {
  if (req.url === '/__proxy/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (req.url === '/__proxy/lose-next-completion' || req.url === '/__proxy/refuse-next-completion') {
    nextCompletionFault = req.url.includes('lose') ? 'lose' : 'refuse';
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('armed\n');
    return;
  }
  const q = new URL(req.url, 'http://proxy').searchParams;
  const step = q.has('uploads') ? ' uploads' : q.has('partNumber') ? ' part' : q.has('uploadId') ? ' uploadId' : '';
  stats.requests[req.method + step] = (stats.requests[req.method + step] || 0) + 1;
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks);
    let verdict;
    try {
      verdict = await check(req, body);
    } catch (e) {
      verdict = [500, 'InternalError', `the proxy could not check the signature: ${e.message}`];
    }
    if (verdict) {
      refuse(res, ...verdict);
      return;
    }
    if (nextCompletionFault === 'refuse' && isCompletion(req, step)) {
      nextCompletionFault = null;
      refuse(res, 404, 'NoSuchUpload', 'The specified upload does not exist.');
      return;
    }
    const up = http.request({ host: '127.0.0.1', port: +upstreamPort, method: req.method, path: req.url, headers: req.headers, agent },
      (ur) => {
        if (nextCompletionFault === 'lose' && isCompletion(req, step)) {
          nextCompletionFault = null;
          stats.lost_completions += 1;
          ur.resume();
          ur.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      });
    up.on('error', (e) => refuse(res, 502, 'BadGateway', e.message));
    up.end(body);
  });
});
server.keepAliveTimeout = 30000;
server.listen(+listenPort, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});
