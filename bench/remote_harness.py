#!/usr/bin/python3
"""The remote-store benchmark (bench/README.md, "Remote stores (HTTP, latency)"; run it through
scripts/bench-remote, which installs what is missing and builds bench/remote first).

    remote_harness.py --build DIR [--quick] [--trials N] [--only w1,seed,rps] [--delay-ms 30]
                      [--delay-via nginx|proxy]

It serves <build>/bench-data (the data sets of bench/harness.py, written once by independent
writers) with a loopback nginx, and for the latency cases holds every request a fixed delay:
`--delay-via nginx` (the default) in nginx itself, on a second port (the echo module's
echo_sleep, then nginx's own static file handler: the same ranges, ETags and 404s); `--delay-via
proxy` in bench/peers/delay_proxy.mjs in front of nginx, a Node process that on this 2-core machine
needs a good part of a core of its own to move 100 MB and a thousand requests, which the readers
then lack. Requests in flight (peak and mean) come from the proxy's counters, or in nginx mode
from nginx's log of every delayed request (start and duration), summed by this harness. It runs,
every trial a fresh process:
  w1    the W1 region reads over HTTP from nginx directly: zarrxt (1 thread; all cores at 2048),
        zarrita's FetchStore, python3-zarr through fsspec, GDAL through /vsicurl/
  seed  the W2 1e8-element uint8 array (semi_random, zstd) of layouts a, b and c: reads and writes
        through zarrxt's in-process latency_store over memory, and reads over HTTP through the
        delay proxy (also the Zarr v2 copy, for the v2-only peers), beside the same peers
  rps   4 KiB ranges of one object from nginx: zarrxt's HTTP store against curl's parallel mode
One warm-up trial is discarded per case (except GDAL's slow W2 reads: one kept trial, no warm-up);
zarrxt and the peers run interleaved trial by trial. Every answer's SHA-256 is compared with the
formula's; a wrong answer, or a program that fails, stops the run. The record (JSON and Markdown)
goes to bench/records/<UTC time>-<commit>-remote.{json,md}; an existing record is never overwritten.
"""

import argparse
import atexit
import datetime
import hashlib
import json
import os
import platform
import select
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness as hb  # noqa: E402  (the data sets, their formulas and hashes, the peers' hints)

PYTHON = hb.PYTHON
NGINX = "/usr/sbin/nginx"
# nginx's echo module (Debian libnginx-mod-http-echo, which nginx-light depends on): echo_sleep.
NGINX_ECHO = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
PROXY = os.path.join(HERE, "peers", "delay_proxy.mjs")
NODE_PEER = ["node", os.path.join(HERE, "peers", "zarrita_bench.mjs")]
PY_PEER = [PYTHON, os.path.join(HERE, "peers", "py_read.py")]

SEED_KIND = "semi_random"
SEED_CODEC = "zstd"
SEED_LAYOUTS = ["a", "b", "c"]
# The one object of the single-shard W2 array, uncompressed (1e8 bytes): bench/remote reads the
# ranges through one handle as one batch and wants them distinct, so the object must hold
# RPS_COUNT of them (a W1 shard, about 280 KB, holds 67).
RPS_DATA = "w2"
RPS_KEY = "c_semi_random_none/c/0"
RPS_SIZE = 4096
RPS_COUNT = 20000
RPS_TRIALS = 3
CURL_PARALLEL = 64
TRIAL_TIMEOUT_S = 1800  # a hung reader must not keep the servers up forever

# Goals of issue 12 for the seed reads and writes (at all cores; reported, never asserted).
GOAL_READ_S = {"a": 0.25, "b": 0.25, "c": 0.15}
GOAL_WRITE_OVER_READ = 1.5


def log(msg):
    print("[bench-remote] " + msg, file=sys.stderr, flush=True)


def die(msg):
    log("ERROR: " + msg)
    sys.exit(1)


def quoted(cmd):
    return " ".join(map(shlex.quote, cmd))


# ------------------------------------------------------------------------------------ servers

# Every server this harness started; stopped at exit, whatever the exit (die() is sys.exit).
_servers = []


def stop_servers():
    while _servers:
        p = _servers.pop()
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


atexit.register(stop_servers)
# SIGTERM would otherwise end the process without running atexit, leaving the servers behind.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def child_env(node_modules=None, zarrita_version=None):
    """The environment of every client: no proxy variables, as libcurl (zarrxt, GDAL, curl) and
    urllib obey http_proxy; every request here goes to loopback and must reach nginx or our proxy."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    if node_modules:
        env["ZARRXT_NODE_MODULES"] = node_modules
        env["ZXB_ZARRITA_VERSION"] = zarrita_version or "?"
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def nginx_conf(prefix, root, port, delayed=None):
    """`delayed`: (port, delay_ms) of a second server holding every request delay_ms before nginx
    serves it as the first does, logging each request's end time and duration."""
    tmp = os.path.join(prefix, "tmp")
    lines = ["# Written by bench/remote_harness.py for one run."]
    if delayed:
        lines.append("load_module %s;" % NGINX_ECHO)
    lines += [
        # One worker: the machine has 2 cores and the reader being measured needs the other.
        "worker_processes 1;",
        # Room for the thousands of connections a reader (or the proxy) opens at once.
        "worker_rlimit_nofile 16384;",
    ]
    if os.geteuid() == 0:
        # As root the worker would drop to "nobody", who may not be able to enter the build tree.
        lines.append("user root;")
    lines += [
        "error_log %s warn;" % os.path.join(prefix, "error.log"),
        "pid %s;" % os.path.join(prefix, "nginx.pid"),
        "events { worker_connections 4096; }",
        "http {",
        "  access_log off;",
        "  default_type application/octet-stream;",
        "  sendfile on;",
        # A reader's connections are reused for every request of a run, as against a real server.
        "  keepalive_requests 100000;",
        "  keepalive_timeout 60s;",
        # nginx's redirect of a directory name to NAME/ (GDAL asks for it) would otherwise name
        # nginx's own port, and the reader would go on past the delay proxy.
        "  absolute_redirect off;",
    ]
    # Debian's compiled-in temp paths are under /var/lib/nginx; keep everything in the prefix.
    for what in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        lines.append("  %s_temp_path %s;" % (what, tmp))
    lines += [
        "  server {",
        "    listen 127.0.0.1:%d;" % port,
        "    root %s;" % root,
        "  }",
    ]
    if delayed:
        # $msec is the time the request ended (logged at once, nginx buffers no access log unless
        # told to), $request_time its duration from the first byte read: the interval in flight.
        lines += [
            "  log_format zx_delay '$msec $request_time';",
            "  server {",
            "    listen 127.0.0.1:%d;" % delayed[0],
            "    root %s;" % root,
            "    access_log %s zx_delay;" % os.path.join(prefix, "delay.log"),
            # The delay is a timer in nginx's event loop; then an internal redirect to a location
            # without handlers of its own, i.e. the static file handler (ranges, ETags, If-Match).
            "    location / { echo_sleep %.3f; echo_exec @data; }" % (delayed[1] / 1000.0),
            "    location @data { }",
            "  }",
        ]
    lines.append("}")
    return "\n".join(lines) + "\n"


def start_nginx(prefix, root, delay_ms=None):
    """nginx serving `root` on a free loopback port (ETags and byte ranges are nginx's defaults);
    with `delay_ms`, also on a second port where every request waits delay_ms first. Returns the
    port, or (port, delayed port)."""
    os.makedirs(os.path.join(prefix, "tmp"), exist_ok=True)
    conf = os.path.join(prefix, "nginx.conf")
    for _ in range(5):  # a free port can be taken between our probe and nginx's bind
        port = free_port()
        delayed = (free_port(), delay_ms) if delay_ms is not None else None
        with open(conf, "w") as f:
            f.write(nginx_conf(prefix, root, port, delayed))
        with open(os.path.join(prefix, "stderr.log"), "w") as err:
            p = subprocess.Popen(
                [NGINX, "-p", prefix, "-c", conf, "-g", "daemon off;"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            )
        _servers.append(p)

        def listening():
            return accepts(port) and (delayed is None or accepts(delayed[0]))

        until = time.time() + 10
        while time.time() < until and p.poll() is None and not listening():
            time.sleep(0.02)
        if p.poll() is None and listening():
            return port if delayed is None else (port, delayed[0])
        _servers.remove(p)
        if p.poll() is None:
            p.kill()
        p.wait()
    problem = ""
    for name in ("stderr.log", "error.log"):
        path = os.path.join(prefix, name)
        if os.path.exists(path):
            with open(path) as f:
                problem += f.read()[-2000:]
    die("nginx did not start:\n" + problem)


def start_proxy(prefix, upstream, delay_ms):
    """bench/peers/delay_proxy.mjs in front of nginx; returns its port."""
    err = open(os.path.join(prefix, "proxy.log"), "w")
    p = subprocess.Popen(
        ["node", PROXY, "--listen", "0", "--upstream", str(upstream), "--delay-ms", str(delay_ms)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True,
    )
    _servers.append(p)
    ready, _, _ = select.select([p.stdout], [], [], 20)
    line = p.stdout.readline().split() if ready else []
    if len(line) != 2 or line[0] != "ready":
        err.flush()
        with open(os.path.join(prefix, "proxy.log")) as f:
            die("the delay proxy did not start (it printed %r):\n%s" % (line, f.read()[-2000:]))
    return int(line[1])


def in_flight_stats(intervals):
    """What delay_proxy.mjs reports, from (start, end) intervals in seconds: requests, the peak
    count in flight, and the mean count over the time at least one was in flight (busy_s)."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], -e[1]))
    count = peak = 0
    integral = busy = 0.0
    last = None
    for t, d in events:
        if last is not None and count > 0:
            integral += count * (t - last)
            busy += t - last
        count += d
        peak = max(peak, count)
        last = t
    return {"requests": len(intervals), "peak_in_flight": peak,
            "mean_in_flight": integral / busy if busy > 0 else 0, "busy_s": busy}


def start_log_stats(log_path):
    """The delay proxy's control paths (/__zx/reset, /__zx/stats) answered from nginx's log of the
    delayed server, on a port of this process; returns the port. Reset remembers where the log
    ends; stats reads what was logged since. nginx writes a line as a request ends, just before the
    client can see the last byte, so stats waits a few milliseconds for the last ones."""
    import http.server
    import threading

    state = {"offset": 0}

    class handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/__zx/reset":
                state["offset"] = os.path.getsize(log_path) if os.path.exists(log_path) else 0
                body = b"reset\n"
            elif self.path == "/__zx/stats":
                time.sleep(0.005)
                intervals = []
                if os.path.exists(log_path):
                    with open(log_path, "rb") as f:
                        f.seek(state["offset"])
                        for line in f.read().decode().splitlines():
                            end, took = (float(x) for x in line.split())
                            intervals.append((end - took, end))
                body = (json.dumps(in_flight_stats(intervals)) + "\n").encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


# urllib obeys http_proxy too; the proxy's control paths are asked directly.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def proxy_control(port, what):
    with _direct.open("http://127.0.0.1:%d/__zx/%s" % (port, what), timeout=30) as r:
        body = r.read()
    return json.loads(body) if what == "stats" else None


# ------------------------------------------------------------------------------------- trials


def run(cmd, env):
    """One trial process; its last stdout line that is a JSON object is the result."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=TRIAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        die("%s did not finish in %d s" % (quoted(cmd), TRIAL_TIMEOUT_S))
    if p.returncode != 0:
        die("%s failed (exit %d):\n%s" % (quoted(cmd), p.returncode, (p.stderr.strip() or p.stdout)[-3000:]))
    lines = [x for x in p.stdout.strip().splitlines() if x.startswith("{")]
    if not lines:
        die("%s printed no result:\n%s" % (quoted(cmd), p.stdout[-2000:]))
    return json.loads(lines[-1])


def through_proxy(ctx, fn):
    """A trial whose requests pass the delay proxy: the proxy's counters of that trial alone go
    into its result (reset before, read after)."""

    def trial():
        proxy_control(ctx["stats_port"], "reset")
        r = fn()
        stats = proxy_control(ctx["stats_port"], "stats")
        # bench/remote reports the proxy's counters of its timed read alone (its open and its
        # floor pass the proxy too); the peers' trials are their read and little else.
        r.setdefault("proxy", stats)
        return r

    return trial


def interleaved(n_keep, warmup, runners, once=()):
    """hb.trials (round after round, every runner once per round; the first `warmup` rounds are
    discarded), except that the runners named in `once` run a single time, in the last round, and
    that run is kept: GDAL's W2 reads with the 30 ms delay take 35 to 60 s each."""
    out = {k: [] for k in runners}
    rounds = warmup + n_keep
    for t in range(rounds):
        for name, fn in runners.items():
            if name in once:
                if t == rounds - 1:
                    out[name].append(fn())
                continue
            r = fn()
            if t >= warmup:
                out[name].append(r)
    return out


def med(results, key):
    vals = [r[key] for r in results if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def proxy_summary(results):
    """The proxy's view of a reader's trials (medians over the kept trials)."""
    rs = [r["proxy"] for r in results if "proxy" in r]
    if not rs:
        return None
    return {k: statistics.median([x[k] for x in rs]) for k in ("requests", "peak_in_flight", "mean_in_flight",
                                                                 "busy_s")}


def check_ours(cid, r, want=None):
    if r.get("verified") is not True:
        die("zarrxt on %s did not report verified: true (it printed %s)" % (cid, json.dumps(r)[:500]))
    if want is not None:
        hb.check_sha("zarrxt", cid, r.get("sha256"), want)


def probe_peers(ctx, probes, arrays, label):
    """Which peer can read which array: asked, not assumed. probes[peer](array) is the command of a
    tiny read (as harness.py's probes); returns the set of (peer, array) that worked."""
    can = set()
    for a in arrays:
        for p, mk in probes.items():
            reason = hb.probe(mk(a), env=ctx["env"])
            if reason is None:
                can.add((p, a))
                continue
            if p in hb.PEER_HINTS and not a.startswith(hb.W2_V2):  # the hints explain refusals of v3
                reason = "%s; it said: %s" % (hb.PEER_HINTS[p], reason)
            ctx["peers_unavailable"].append({"peer": p, "array": label + a, "reason": reason})
            log("peer %s cannot read %s%s: %s" % (p, label, a, reason))
    return can


def peer_figures(ours_ns, got):
    out = {}
    for who, rs in got.items():
        ns = hb.summary([r["read_ns"] for r in rs])
        out[who] = {
            "ns": ns,
            "rss_peak": hb.summary([r["rss_peak"] for r in rs]),
            "speedup": ns["median"] / ours_ns,
            "kept_trials": len(rs),
        }
        px = proxy_summary(rs)
        if px:
            out[who]["proxy"] = px
    return out


# ----------------------------------------------------------------------------------------- W1


def run_w1(ctx):
    base = "http://127.0.0.1:%d/%s" % (ctx["nginx_port"], hb.DATA_SETS["w1"])
    peers = {
        "zarrita": lambda a, e: NODE_PEER + ["read-w1", base, a, str(e)],
        "python3-zarr": lambda a, e: PY_PEER + ["zarr", base, a, str(e)],
        "gdal": lambda a, e: PY_PEER + ["gdal", base, a, str(e)],
    }
    probes = {p: (lambda a, mk=mk: mk(a, 8)) for p, mk in peers.items()}  # an 8 x 8 region
    can = probe_peers(ctx, probes, hb.W1_ARRAYS, "w1 over HTTP: ")
    extents = [2048] if ctx["quick"] else hb.W1_EXTENTS
    cases = []
    for a in hb.W1_ARRAYS:
        for e in extents:
            cases.append((a, e, 1))
        if ctx["cores"] > 1:
            cases.append((a, 2048, ctx["cores"]))
    results = []
    for a, e, t in cases:
        cid = "w1/%s/%d/t%d" % (a, e, t)
        log(cid)
        want = hb.w1_expected_sha(e)
        cmd = [ctx["exe"], "w1", "--url", base, "--array", a, "--extent", str(e), "--threads", str(t)]
        runners = {"zarrxt": lambda cmd=cmd: run(cmd, ctx["env"]),
                   # the same read with a thread of the benchmark's own driving the store (drive)
                   "zarrxt driven": lambda cmd=cmd: run(cmd + ["--driver", "1"], ctx["env"])}
        if t == 1:  # the peers are single-threaded readers
            for p, mk in peers.items():
                if (p, a) in can:
                    runners[p] = lambda cmd=mk(a, e): run(cmd, ctx["env"])
        got = interleaved(ctx["trials"], ctx["warmup"], runners)
        ours = got.pop("zarrxt")
        driven = got.pop("zarrxt driven")
        for r in ours + driven:
            check_ours(cid, r, want)
        for who, rs in got.items():
            for r in rs:
                hb.check_sha(who, cid, r["sha256"], want)
        ns = hb.summary([r["read_ns"] for r in ours])
        driven_ns = hb.summary([r["read_ns"] for r in driven])
        floor = med(ours, "floor_ns" if t == 1 else "floor_p_ns")
        results.append({
            "id": cid, "array": a, "extent": e, "threads": t, "sha256": want,
            "output_bytes": ours[0].get("output_bytes"),
            "ours": {
                "ns": ns,
                "rss_peak": hb.summary([r["rss_peak"] for r in ours]),
                "requests": med(ours, "requests"),
                "peak_in_flight": med(ours, "peak_in_flight"),
            },
            "floor": {
                "ns": floor,
                "ns_1thread": med(ours, "floor_ns"),
                "fetch_ns": med(ours, "floor_fetch_ns"),
                "what": "floor_ns" if t == 1 else "floor_p_ns",
            },
            "E": floor / ns["median"] if floor else None,
            "driven": {"ns": driven_ns, "E": floor / driven_ns["median"] if floor else None},
            "peers": peer_figures(ns["median"], got),
        })
    return results


# --------------------------------------------------------------------------------------- seed


def seed_record(cid, store, layout, op, t, ours):
    ns = hb.summary([r["ns"] for r in ours])
    floor = med(ours, "floor_ns")
    return {
        "id": cid, "store": store, "layout": layout, "op": op, "threads": t,
        "bytes": ours[0].get("bytes"),
        "ours": {
            "ns": ns,
            "rss_peak": hb.summary([r["rss_peak"] for r in ours]),
            # latency store: "requests" counts its delays (a batch of prefetched ranges pays one),
            # "recorded_requests" the requests themselves; over HTTP, requests sent.
            "requests": med(ours, "requests"),
            "recorded_requests": med(ours, "recorded_requests"),
            "peak_in_flight": med(ours, "peak_in_flight"),
            "mean_in_flight": med(ours, "mean_in_flight"),
        },
        "floor": {"ns": floor},
        "E": floor / ns["median"] if floor else None,
        "peers": {},
    }


def run_seed(ctx):
    w2_dir = ctx["w2_dir"]
    want = hb.w2_expected_sha(SEED_KIND, hb.W2_N)
    threads = [1, ctx["cores"]] if ctx["cores"] > 1 else [1]
    delay = str(ctx["delay_ms"])
    results = []

    # B1: the in-process latency store over memory (the program loads the array's files first).
    for op in ("read", "write"):
        for layout in SEED_LAYOUTS:
            name = hb.w2_array_name(layout, SEED_KIND, SEED_CODEC)
            for t in threads:
                cid = "seed/latency/%s/%s/t%d" % (layout, op, t)
                log(cid)
                cmd = [ctx["exe"], "seed", "--store", "latency", "--op", op, "--layout", layout, "--dir", w2_dir,
                       "--name", name, "--threads", str(t), "--delay-ms", delay]
                got = interleaved(ctx["trials"], ctx["warmup"], {"zarrxt": lambda cmd=cmd: run(cmd, ctx["env"])})
                for r in got["zarrxt"]:
                    check_ours(cid, r, want if op == "read" else None)
                results.append(seed_record(cid, "latency", layout, op, t, got["zarrxt"]))

    # B2: over HTTP through the delay proxy, zarrxt and the peers alike.
    base = "http://127.0.0.1:%d/%s" % (ctx["proxy_port"], hb.DATA_SETS["w2"])
    peers = {
        "zarrita": lambda a, count=None: NODE_PEER + ["read-w2", base, a, SEED_KIND] + ([count] if count else []),
        "python3-zarr": lambda a, count=None: PY_PEER + ["zarr-w2", base, a, SEED_KIND] + ([count] if count else []),
        "gdal": lambda a, count=None: PY_PEER + ["gdal-w2", base, a, SEED_KIND] + ([count] if count else []),
    }
    layouts = SEED_LAYOUTS + [hb.W2_V2]
    arrays = [hb.w2_array_name(layout, SEED_KIND, SEED_CODEC) for layout in layouts]
    probes = {p: (lambda a, mk=mk: mk(a, "8")) for p, mk in peers.items()}  # the first 8 elements
    can = probe_peers(ctx, probes, arrays, "w2 over HTTP: ")
    for layout in layouts:
        name = hb.w2_array_name(layout, SEED_KIND, SEED_CODEC)
        for t in threads:
            cid = "seed/http/%s/read/t%d" % (layout, t)
            log(cid)
            cmd = [ctx["exe"], "seed", "--store", "http", "--op", "read", "--layout", layout, "--url", base,
                   "--name", name, "--threads", str(t), "--proxy-stats", "http://127.0.0.1:%d" % ctx["stats_port"]]
            runners = {"zarrxt": through_proxy(ctx, lambda cmd=cmd: run(cmd, ctx["env"])),
                       "zarrxt driven": through_proxy(ctx, lambda cmd=cmd: run(cmd + ["--driver", "1"], ctx["env"]))}
            if t == 1:
                for p, mk in peers.items():
                    if (p, name) in can:
                        runners[p] = through_proxy(ctx, lambda cmd=mk(name): run(cmd, ctx["env"]))
            got = interleaved(ctx["trials"], ctx["warmup"], runners, once={"gdal"})
            ours = got.pop("zarrxt")
            driven = got.pop("zarrxt driven")
            for r in ours + driven:
                check_ours(cid, r, want)
            for who, rs in got.items():
                for r in rs:
                    hb.check_sha(who, cid, r["sha256"], want)
            rec = seed_record(cid, "http", layout, "read", t, ours)
            rec["ours"]["proxy"] = proxy_summary(ours)
            dns = hb.summary([r["ns"] for r in driven])
            rec["driven"] = {"ns": dns, "E": rec["floor"]["ns"] / dns["median"] if rec["floor"]["ns"] else None}
            rec["peers"] = peer_figures(rec["ours"]["ns"]["median"], got)
            results.append(rec)
    return {"sha256": want, "array_kind": SEED_KIND, "codec": SEED_CODEC, "n": hb.W2_N, "cases": results}


# ---------------------------------------------------------------------------------------- rps


def rps_ranges(size, count):
    """The i-th range: offset (i * RPS_SIZE) % (size - RPS_SIZE), RPS_SIZE bytes (as bench/remote picks them)."""
    return [((i * RPS_SIZE) % (size - RPS_SIZE), RPS_SIZE) for i in range(count)]


def curl_config(path, url, size, count):
    # One transfer per range ("next" separates them). Each prints its status and size so that every
    # answer is checked: a 200 with the whole object, or a short body, would inflate the rate.
    with open(path, "w") as f:
        for i, (off, n) in enumerate(rps_ranges(size, count)):
            if i:
                f.write("next\n")
            f.write('url = "%s"\nrange = %d-%d\noutput = /dev/null\nsilent\nshow-error\n'
                    'write-out = "%%{http_code} %%{size_download}\\n"\n' % (url, off, off + n - 1))


def run_curl(cfg, count, env):
    # --parallel-max is capped at 300 by curl; 64 transfers at once. --no-progress-meter: curl 7.88
    # draws its parallel progress meter even with -s in every transfer of the config.
    cmd = ["curl", "--parallel", "--parallel-max", str(CURL_PARALLEL), "--parallel-immediate", "-s",
           "--no-progress-meter", "-K", cfg]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=TRIAL_TIMEOUT_S)
    seconds = time.perf_counter() - t0
    lines = p.stdout.split("\n")[:-1]
    bad = [x for x in lines if x != "206 %d" % RPS_SIZE]
    if p.returncode != 0 or len(lines) != count or bad:
        die("curl --parallel: exit %d, %d answers of %d, wrong ones: %s %s"
            % (p.returncode, len(lines), count, bad[:5], p.stderr[-1000:]))
    return {"requests": count, "seconds": seconds, "requests_per_s": count / seconds}


def ranges_sha(path, size, count):
    """SHA-256 of the ranges' bytes, in order: what bench/remote hashes of what it received."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for off, n in rps_ranges(size, count):
            f.seek(off)
            h.update(f.read(n))
    return h.hexdigest()


def run_rps(ctx):
    base = "http://127.0.0.1:%d/%s" % (ctx["nginx_port"], hb.DATA_SETS[RPS_DATA])
    path = os.path.join(ctx["w2_dir"], RPS_KEY)
    size = os.path.getsize(path)
    count = RPS_COUNT
    want = ranges_sha(path, size, count)
    cfg = os.path.join(ctx["prefix"], "curl-ranges.cfg")
    curl_config(cfg, base + "/" + RPS_KEY, size, count)
    cmd = [ctx["exe"], "rps", "--url", base, "--key", RPS_KEY, "--size", str(RPS_SIZE), "--count", str(count)]
    log("rps: %d ranges of %d bytes of %s (%d bytes)" % (count, RPS_SIZE, RPS_KEY, size))
    got = interleaved(RPS_TRIALS, ctx["warmup"], {
        "zarrxt": lambda: run(cmd, ctx["env"]),
        "curl": lambda: run_curl(cfg, count, ctx["env"]),
    })
    for r in got["zarrxt"]:
        if r.get("object_size") not in (None, size) or r.get("requests") != count:
            die("zarrxt rps answered %s; expected %d requests of an object of %d bytes" % (json.dumps(r), count, size))
        hb.check_sha("zarrxt", "rps", r.get("sha256"), want)
    out = {"data_set": hb.DATA_SETS[RPS_DATA], "key": RPS_KEY, "object_size": size, "sha256": want,
           "range_bytes": RPS_SIZE, "count": count, "curl_parallel_max": CURL_PARALLEL}
    for who, rs in got.items():
        out[who] = {
            "requests_per_s": hb.summary([r["requests_per_s"] for r in rs]),
            "seconds": hb.summary([r["seconds"] for r in rs]),
        }
        if who == "zarrxt":
            out[who]["peak_in_flight"] = med(rs, "peak_in_flight")
    out["ratio"] = out["zarrxt"]["requests_per_s"]["median"] / out["curl"]["requests_per_s"]["median"]
    return out


# ---------------------------------------------------------------------------------- the record


def first_line(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        return p.stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return None


def dpkg_version(pkg):
    return first_line(["dpkg-query", "-W", "-f=${Version}", pkg])


def build_info(build):
    entry = hb.compile_command(build, "bench/remote.cpp")
    compiler, flags = hb.flags_of(entry) if entry else ("c++", [])
    intro = json.loads(hb.sh(["meson", "introspect", "--buildoptions", build]) or "[]")
    opts = {o["name"]: o["value"] for o in intro
            if o["name"] in ("buildtype", "optimization", "debug", "b_ndebug", "cpp_std")}
    return {
        "compiler": compiler,
        "compiler_version": first_line([compiler, "--version"]),
        # Include paths name this checkout; they say nothing about the build.
        "flags": [f for f in flags if not f.startswith(("-I", "-isystem"))],
        "options": opts,
        "meson": hb.sh(["meson", "--version"]),
    }


def versions(build):
    v = {"nginx": (first_line([NGINX, "-v"]) or "").replace("nginx version: ", "") or None,
         "node": first_line(["node", "--version"])}
    try:
        with open(os.path.join(build, "npm", "node_modules", "zarrita", "package.json")) as f:
            v["zarrita"] = json.load(f)["version"]
    except OSError:
        v["zarrita"] = None
    for name, pkg in [("python3-zarr", "python3-zarr"), ("fsspec", "python3-fsspec"),
                      ("aiohttp", "python3-aiohttp"), ("gdal", "python3-gdal"), ("numpy", "python3-numpy"),
                      ("libcurl-dev", "libcurl4-openssl-dev")]:
        v[name] = dpkg_version(pkg)
    v["curl"] = first_line(["curl", "--version"])
    v["python"] = platform.python_version()
    return v


def ms(ns):
    return "–" if ns is None else ("%.1f" % (ns / 1e6) if ns >= 1e6 else "%.3f" % (ns / 1e6))


def rng(s):
    return "%s (%s–%s)" % (ms(s["median"]), ms(s["min"]), ms(s["max"]))


def num(x, fmt="%.0f"):
    return "–" if x is None else fmt % x


def goals(rec):
    out = []

    def add(what, case, value, target, met):
        out.append({"what": what, "case": case, "value": value, "target": target, "met": bool(met)})

    seed = {c["id"]: c for c in (rec.get("seed") or {}).get("cases", [])}
    allc = rec["machine"]["cores"]
    for c in seed.values():
        if c["op"] == "read" and c["threads"] == allc and c["layout"] in GOAL_READ_S:
            s = c["ours"]["ns"]["median"] / 1e9
            lim = GOAL_READ_S[c["layout"]]
            add("read at %d threads (s)" % allc, c["id"], s, "<= %.2f" % lim, s <= lim)
        if c["op"] == "write":
            r = seed.get(c["id"].replace("/write/", "/read/"))
            if r:
                ratio = c["ours"]["ns"]["median"] / r["ours"]["ns"]["median"]
                add("write / read of the same layout", c["id"], ratio, "<= %.1f" % GOAL_WRITE_OVER_READ,
                    ratio <= GOAL_WRITE_OVER_READ)
    for c in list(seed.values()) + rec.get("w1", []):
        for p, f in c["peers"].items():
            add("faster than %s at %d thread" % (p, c["threads"]), c["id"], f["speedup"], "> 1", f["speedup"] > 1)
    return out


def markdown(rec):
    m, b, v = rec["machine"], rec["build"], rec["versions"]
    out = ["# zarrxt remote-store benchmark %s" % rec["id"], ""]
    out.append("- machine: %s, %d cores, kernel %s, %.1f GiB; load average %s at the start, %s at the end"
               % (m["cpu_model"], m["cores"], m["kernel"], m["mem_total_bytes"] / 2**30, rec["load"]["start"],
                  rec["load"]["end"]))
    out.append("- build: %s, %s %s" % (b["options"].get("buildtype"), b["compiler_version"], " ".join(b["flags"])))
    out.append("- commit %s%s; mode %s; %d kept trials after %d warm-up, each a fresh process"
               % ((rec["git"]["commit"] or "?")[:12], " (dirty)" if rec["git"]["dirty"] else "", rec["mode"],
                  rec["settings"]["trials"], rec["settings"]["warmup"]))
    out.append("- versions: " + ", ".join("%s %s" % (k, x) for k, x in v.items() if x))
    for k, d in rec["data"].items():
        out.append("- data %s: SHA-256 of manifest %s (%d files, %.1f MB)" % (k, d["sha256"][:16], d["files"],
                                                                              d["bytes"] / 1e6))
    out.append("- servers: %s" % rec["servers"]["what"])
    out.append("")
    out.append("Times in ms: median (min–max) of the kept trials; `read()` (or the write) only, no process "
               "start, no metadata open. Peer columns: the peer's median and zarrxt's speedup over it "
               "(peer / zarrxt; > 1: zarrxt faster).")
    if rec.get("w1"):
        peers = sorted({p for c in rec["w1"] for p in c["peers"]})
        out += ["", "## W1 region reads over HTTP (nginx on loopback, no delay)", ""]
        out.append("| case | zarrxt | floor | E | zarrxt driven | E driven | " + " | ".join(peers) +
                   " | requests | peak in flight |")
        out.append("|---" * (8 + len(peers)) + "|")
        for c in rec["w1"]:
            d = c.get("driven")
            cells = ["%s %d² t%d" % (c["array"], c["extent"], c["threads"]), rng(c["ours"]["ns"]),
                     ms(c["floor"]["ns"]), num(c["E"], "%.2f"), rng(d["ns"]) if d else "–",
                     num(d["E"], "%.2f") if d else "–"]
            for p in peers:
                f = c["peers"].get(p)
                cells.append("%s (%.2fx)" % (ms(f["ns"]["median"]), f["speedup"]) if f else "–")
            cells += [num(c["ours"]["requests"]), num(c["ours"]["peak_in_flight"])]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        out.append("Floor: the program's own fetch of exactly the needed objects and ranges plus the best "
                   "decode (`floor_ns`; on all cores `floor_p_ns`); E = floor / zarrxt. \"zarrxt driven\": the "
                   "same read with one more thread of the benchmark's own running `http_store::drive`.")
    seed = rec.get("seed")
    if seed:
        cases = seed["cases"]
        peers = sorted({p for c in cases for p in c["peers"]})
        out += ["", "## Seed: W2 1e8 uint8 %s %s, %d ms per request" % (seed["array_kind"], seed["codec"],
                                                                        rec["settings"]["delay_ms"]), ""]
        out.append("Stores: `latency` = zarrxt's in-process latency_store over memory (the array's files "
                   "loaded first); `http` = " + ("nginx holding each request the delay itself (echo_sleep)" if rec["settings"].get(
                       "delay_via") == "nginx" else "nginx behind bench/peers/delay_proxy.mjs") +
                   ". Layouts: a 1e5-element "
                   "chunks, b 1e5-element shards, c one shard, v2 the Zarr v2 copy of a (python3-zarr's). "
                   "Requests: zarrxt's count (the latency store's requests and the delays they paid: a batch "
                   "of prefetched ranges pays one). In flight: zarrxt's own count, and the proxy's (peak / "
                   "time-weighted mean while busy). Floors are bench/remote's: for the latency store the "
                   "fewest round trips a whole read (or write) needs plus the local decode (or encode) "
                   "divided by the threads; over HTTP, libcurl fetching the same objects all at once, "
                   "decoding as they arrive.")
        out.append("")
        out.append("| case | zarrxt | MB/s | floor | E | zarrxt driven | E driven | requests | zarrxt peak / mean "
                   "in flight | proxy peak / mean in flight | " + " | ".join(peers) + " |")
        out.append("|---" * (10 + len(peers)) + "|")
        for c in cases:
            o = c["ours"]
            px = o.get("proxy")
            requests = num(o["requests"])
            if o.get("recorded_requests") is not None:
                requests = "%s in %s delays" % (num(o["recorded_requests"]), requests)
            d = c.get("driven")
            cells = [c["id"], rng(o["ns"]), num((c["bytes"] or hb.W2_N) / (o["ns"]["median"] * 1e-9) / 1e6),
                     ms(c["floor"]["ns"]), num(c["E"], "%.2f"), rng(d["ns"]) if d else "–",
                     num(d["E"], "%.2f") if d else "–", requests,
                     "%s / %s" % (num(o["peak_in_flight"]), num(o["mean_in_flight"], "%.1f")),
                     "%s / %s" % (num(px["peak_in_flight"]), num(px["mean_in_flight"], "%.1f")) if px else "–"]
            for p in peers:
                f = c["peers"].get(p)
                if f:
                    note = "" if f["kept_trials"] > 1 else ", 1 trial"
                    cells.append("%s (%.2fx%s)" % (ms(f["ns"]["median"]), f["speedup"], note))
                else:
                    cells.append("–")
            out.append("| " + " | ".join(cells) + " |")
        viewed = [(c, p, f) for c in cases for p, f in c["peers"].items() if f.get("proxy")]
        if viewed:
            out += ["", "The proxy's view of the peers' reads (medians over their kept trials):", ""]
            out.append("| case | peer | requests | peak in flight | mean in flight |")
            out.append("|---|---|---|---|---|")
            for c, p, f in viewed:
                x = f["proxy"]
                out.append("| %s | %s | %.0f | %.0f | %.1f |" % (c["id"], p, x["requests"], x["peak_in_flight"],
                                                                 x["mean_in_flight"]))
        if any(f["kept_trials"] == 1 for _, p, f in viewed if p == "gdal"):
            out += ["", "GDAL reads the W2 array with the 30 ms delay one request at a time, in 35 to 60 s: it ran "
                        "once per case, with no warm-up (its single run is what is shown)."]
    rps = rec.get("rps")
    if rps:
        out += ["", "## Requests per second: %d distinct ranges of %d bytes of one %d-byte object (%s/%s), "
                "nginx direct" % (rps["count"], rps["range_bytes"], rps["object_size"], rps["data_set"], rps["key"]),
                ""]
        out.append("| reader | requests/s | seconds | in flight |")
        out.append("|---|---|---|---|")
        z, c = rps["zarrxt"], rps["curl"]
        out.append("| zarrxt | %.0f (%.0f–%.0f) | %.3f | peak %s |" % (
            z["requests_per_s"]["median"], z["requests_per_s"]["min"], z["requests_per_s"]["max"],
            z["seconds"]["median"], num(z.get("peak_in_flight"))))
        out.append("| curl --parallel | %.0f (%.0f–%.0f) | %.3f | at most %d |" % (
            c["requests_per_s"]["median"], c["requests_per_s"]["min"], c["requests_per_s"]["max"],
            c["seconds"]["median"], rps["curl_parallel_max"]))
        out.append("")
        out.append("zarrxt / curl: %.2f. curl's time is its whole process (start, config parsing, one "
                   "connection per parallel slot) around `curl --parallel --parallel-max %d`; zarrxt's is its "
                   "own measurement of the requests." % (rps["ratio"], rps["curl_parallel_max"]))
    if rec.get("goals"):
        g = rec["goals"]
        missed = [x for x in g if not x["met"]]
        out += ["", "## Goals (issue 12): %d met, %d not met" % (len(g) - len(missed), len(missed)), ""]
        out.append("| goal | case | value | wanted | met |")
        out.append("|---|---|---|---|---|")
        for x in g:
            out.append("| %s | %s | %.3g | %s | %s |" % (x["what"], x["case"], x["value"], x["target"],
                                                       "met" if x["met"] else "**not met**"))
    return "\n".join(out + hb.markdown_tail(rec)) + "\n"


# --------------------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the release build directory (bench/remote built in it)")
    ap.add_argument("--quick", action="store_true", help="fewer cases and 2 kept trials")
    ap.add_argument("--trials", type=int, help="kept trials per case (default 5; 2 with --quick)")
    ap.add_argument("--only", default="w1,seed,rps", help="comma-separated parts: w1, seed, rps")
    ap.add_argument("--delay-ms", type=int, default=30, help="delay per request of the latency cases")
    ap.add_argument("--delay-via", choices=["nginx", "proxy"], default="nginx",
                    help="where the delay is added: in nginx (echo_sleep) or in bench/peers/delay_proxy.mjs")
    ap.add_argument("--records", default=os.path.join(HERE, "records"))
    args = ap.parse_args()
    parts = set(args.only.split(","))
    if parts - {"w1", "seed", "rps"}:
        ap.error("unknown parts: %s" % ", ".join(sorted(parts - {"w1", "seed", "rps"})))

    build = os.path.abspath(args.build)
    exe = os.path.join(build, "bench", "remote")
    if not os.access(exe, os.X_OK):
        die("%s is missing; scripts/bench-remote builds it" % exe)
    for tool in (NGINX,):
        if not os.access(tool, os.X_OK):
            die("%s is missing (Debian package nginx-light)" % tool)
    if "seed" in parts and args.delay_via == "nginx" and not os.path.exists(NGINX_ECHO):
        die("%s is missing (Debian package libnginx-mod-http-echo)" % NGINX_ECHO)
    vers = versions(build)
    git = hb.git_info()
    now = datetime.datetime.now(datetime.timezone.utc)
    rid = now.strftime("%Y%m%d-%H%M%S") + "-" + (git["commit"] or "nogit")[:8] + "-remote"
    json_path, md_path = hb.record_paths(args.records, rid)

    node_modules = os.path.join(build, "npm", "node_modules")
    env = child_env(node_modules, vers.get("zarrita"))
    ctx = {
        "build": build, "exe": exe, "env": env, "quick": args.quick, "cores": os.cpu_count(),
        "trials": args.trials or (2 if args.quick else 5), "warmup": 1, "delay_ms": args.delay_ms,
        "peers_unavailable": [],
    }
    rec = {
        "schema": 1, "kind": "bench-remote", "id": rid, "created": now.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full", "parts": sorted(parts),
        "machine": hb.machine_info(), "build": build_info(build), "versions": vers, "git": git,
        "settings": {"trials": ctx["trials"], "warmup": ctx["warmup"], "delay_ms": args.delay_ms,
                     "delay_via": args.delay_via if "seed" in parts else None,
                     "w1_region_offset": [7, 11], "threads_all_cores": ctx["cores"]},
        "load": {"start": [round(x, 2) for x in os.getloadavg()]},
        "data": {},
    }
    if git["dirty"]:
        log("the working tree has uncommitted changes; the record says so")
    data_root = os.path.join(build, "bench-data")
    if "w1" in parts:
        ctx["w1_dir"], rec["data"]["w1"] = hb.ensure_data(data_root, "w1", env)
    if parts & {"seed", "rps"}:
        ctx["w2_dir"], rec["data"]["w2"] = hb.ensure_data(data_root, "w2", env)

    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="zx-bench-remote-") as prefix:
        ctx["prefix"] = prefix
        try:
            what = "nginx (1 worker, keep-alive, sendfile) serving <build>/bench-data on loopback"
            if "seed" in parts and args.delay_via == "nginx":
                ctx["nginx_port"], ctx["proxy_port"] = start_nginx(prefix, data_root, args.delay_ms)
                ctx["stats_port"] = start_log_stats(os.path.join(prefix, "delay.log"))
                what += ("; for the seed reads the same nginx on a second port holds every request %d ms "
                         "(echo_sleep) before serving it" % args.delay_ms)
            else:
                ctx["nginx_port"] = start_nginx(prefix, data_root)
            if "seed" in parts and args.delay_via == "proxy":
                ctx["proxy_port"] = ctx["stats_port"] = start_proxy(prefix, ctx["nginx_port"], args.delay_ms)
                what += "; bench/peers/delay_proxy.mjs (%d ms per request) in front of it for the seed reads" % (
                    args.delay_ms)
            rec["servers"] = {"what": what}
            log(what)
            if "w1" in parts:
                rec["w1"] = run_w1(ctx)
            if "seed" in parts:
                rec["seed"] = run_seed(ctx)
            if "rps" in parts:
                rec["rps"] = run_rps(ctx)
        finally:
            stop_servers()
    rec["peers_unavailable"] = ctx["peers_unavailable"]
    rec["load"]["end"] = [round(x, 2) for x in os.getloadavg()]
    rec["duration_s"] = round(time.time() - t0)
    rec["goals"] = goals(rec)
    rec["notes"] = [
        "Peers are timed around their read call only, like zarrxt, and run single-threaded, so only the "
        "single-thread rows list them. zarrita reads through @zarrita/storage's FetchStore (Node's fetch, "
        "suffix ranges for shard indexes), python3-zarr 2.13 through fsspec's HTTPFileSystem (aiohttp), GDAL "
        "through /vsicurl/ with its default settings.",
        "GDAL's W2 reads with the 30 ms delay take 35 to 60 s each (one request at a time), so they run once "
        "per case, in the last round of the case's trials, without a warm-up.",
        ("The delay proxy holds every request for the delay, then forwards it to nginx on a pool of keep-alive "
         "connections without a limit" if args.delay_via == "proxy" else
         "The delay is nginx's own (echo_sleep on a second server of the same nginx, then its static file "
         "handler); in flight counts come from its log of each request's end and duration (ms resolution)")
        + "; the mean in flight is the time integral of the count of requests in flight over the time at "
        "least one was.",
        "Every answer's SHA-256 was compared with the formula's before any number was kept; zarrxt's writes "
        "were verified by the program itself (verified: true).",
    ]
    with open(json_path, "x") as f:
        json.dump(rec, f, indent=1)
    md = markdown(rec)
    with open(md_path, "x") as f:
        f.write(md)
    print(md)
    missed = [x for x in rec["goals"] if not x["met"]]
    log("record: %s" % json_path)
    log("table:  %s" % md_path)
    log("goals: %d met, %d not met" % (len(rec["goals"]) - len(missed), len(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
