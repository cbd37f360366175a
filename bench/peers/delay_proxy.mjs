// An HTTP/1.1 proxy that adds a fixed delay to every request: the "remote" of the remote-store
// benchmark (bench/remote_harness.py), put in front of a loopback nginx so that every reader,
// zarrxt and the peers alike, pays the same round trip per request.
//
//   node delay_proxy.mjs --listen PORT --upstream PORT [--delay-ms 30]
//
// Prints "ready PORT" on stdout once it listens (PORT 0 picks a free port; the one taken is
// printed). Each request is held --delay-ms after it arrives, then forwarded to 127.0.0.1:upstream
// with its method, path and headers (Range, If-Match, ...); status, headers and body stream back.
// Nothing limits concurrency here: a reader that keeps 1000 requests in flight waits one delay for
// all of them, as it would against a real object store, and the proxy must not be what serialises it.
//
// It counts the requests in flight (from arrival to the end of the response) and answers two
// control paths itself, without delay and without counting them:
//   GET /__zx/reset   zero the counters
//   GET /__zx/stats   {"requests", "peak_in_flight", "mean_in_flight", "busy_s"}: mean_in_flight is
//                     the time integral of the in-flight count over busy_s, the time during which at
//                     least one request was in flight (so idle gaps between reads do not dilute it)

import * as http from "node:http";

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) {
    if (fallback === undefined) {
      console.error(`delay_proxy: ${name} is required`);
      process.exit(2);
    }
    return fallback;
  }
  return Number(process.argv[i + 1]);
}

const listenPort = arg("--listen");
const upstreamPort = arg("--upstream");
const delayMs = arg("--delay-ms", 30);

// Keep-alive and no socket cap towards nginx: a fresh TCP connection per request would add its
// own cost on top of the delay, and a cap would queue requests the reader sent concurrently.
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 4096 });

// Hop-by-hop headers describe one connection, not the message; they are not forwarded (RFC 9110
// section 7.6.1), so a client's "Connection: close" does not close the pooled upstream socket.
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);
function endToEnd(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k)) out[k] = v;
  return out;
}

// In-flight accounting: the integral of the count over time, advanced at every change.
let requests = 0;
let inFlight = 0;
let peak = 0;
let integral = 0; // request-seconds
let busy = 0; // seconds with inFlight > 0
let last = process.hrtime.bigint();

function advance() {
  const now = process.hrtime.bigint();
  const dt = Number(now - last) / 1e9;
  if (inFlight > 0) {
    integral += inFlight * dt;
    busy += dt;
  }
  last = now;
}

function control(req, res) {
  advance();
  if (req.url === "/__zx/reset") {
    requests = 0;
    peak = inFlight; // requests still running stay counted
    integral = 0;
    busy = 0;
    res.writeHead(200, { "content-type": "text/plain" }).end("reset\n");
  } else if (req.url === "/__zx/stats") {
    const body = JSON.stringify({
      requests,
      peak_in_flight: peak,
      mean_in_flight: busy > 0 ? integral / busy : 0,
      busy_s: busy,
    });
    res.writeHead(200, { "content-type": "application/json" }).end(body + "\n");
  } else {
    res.writeHead(404).end();
  }
}

function forward(req, res) {
  advance();
  requests += 1;
  inFlight += 1;
  peak = Math.max(peak, inFlight);
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    advance();
    inFlight -= 1;
  };
  // 'finish': the last byte handed to the kernel; 'close': also when the client went away first.
  res.on("finish", finish);
  res.on("close", finish);

  setTimeout(() => {
    const up = http.request(
      {
        host: "127.0.0.1",
        port: upstreamPort,
        method: req.method,
        path: req.url,
        headers: endToEnd(req.headers),
        agent,
      },
      (ur) => {
        res.writeHead(ur.statusCode, ur.statusMessage, endToEnd(ur.headers));
        ur.pipe(res);
      },
    );
    up.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" }).end(`delay_proxy: ${e.message}\n`);
      else res.destroy(e);
    });
    req.pipe(up);
  }, delayMs);
}

const server = http.createServer((req, res) => {
  if (req.url.startsWith("/__zx/")) control(req, res);
  else forward(req, res);
});
// Node leaves maxConnections unset (no limit); said here so no one adds one. Idle keep-alive
// connections live 60 s like nginx's, so a reader's pool survives the gaps between its reads;
// headersTimeout is kept above keepAliveTimeout, the usual pairing for a Node keep-alive server.
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;
server.on("clientError", (e, socket) => socket.destroy(e));
// A backlog of 4096: a reader opening a thousand connections at once must not see refusals.
server.listen(listenPort, "127.0.0.1", 4096, () => {
  console.log(`ready ${server.address().port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
