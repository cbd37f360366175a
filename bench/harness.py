#!/usr/bin/python3
"""The zarrxt benchmark suite (BENCHMARKS.md is the specification; bench/README.md the manual).

Run through scripts/bench, which installs what is missing and builds in release mode first:

    harness.py --build DIR [--quick] [--big] [--trials N] [--no-suite-build] [--only PARTS]
    harness.py --build DIR --compare OLD.json [NEW.json] [--force]
    harness.py --charts RECORD.json [--charts-dir DIR]

Without --compare it runs everything and writes bench/records/<time>-<commit>.json and .md:
  data     generated once under <build>/bench-data by independent writers, hashed every run
  w1       region reads of the 4096 x 4096 uint16 arrays and the index stress array
  w2       whole-array writes and reads of the 1-d uint8 arrays (1 thread and all cores); reads of
           their Zarr v2 copies (python3-zarr's) too, for the peers that read only v2
  micro    bench/bench_micro (doctest cases that print measurements)
  compile  compile time of examples/quickstart.cpp against a TU that includes only xtensor and
           nlohmann/json, and a clean build of the test suite on 2 cores
Every trial is a fresh process; the first trial of each case is discarded. zarrxt, its floor and
the peers run interleaved trial by trial, so a slow spell on the machine hits them alike. Every
answer is checked against the formula and its SHA-256 against the formula's; a wrong answer from
anyone aborts the run.

Every run also draws an SVG chart per workload next to the record (bench/charts.py, with Debian's
python3-matplotlib); --charts draws them from an existing record without running anything.

With --compare it compares OLD with NEW (or with a fresh run when NEW is not given). Records from
different machines, data or builds are refused unless --force; a change whose old and new
min-max ranges overlap is reported as noise.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
import make_data  # noqa: E402  (formulas shared with the data writer)

MiB = 1 << 20
PYTHON = "/usr/bin/python3"  # Debian's interpreter: the one that sees python3-zarr and GDAL
W1_ARRAYS = ["v2_gzip", "v3_raw", "v3_gzip", "v3_sharded"]
W1_EXTENTS = [256, 1024, 2048]
W2_N = 100_000_000
W2_CHUNK = 100_000
W2_LAYOUTS = {"a": 0, "b": 100_000, "c": 100_000_000}
# Zarr v2 arrays of layout a (written by python3-zarr), for the peers that read only v2: read cases only.
W2_V2 = "v2"
W2_KINDS = ["repeated", "semi_random"]
W2_CODECS = ["zstd", "none"]
W2_BIG = {"n": 1_000_000_000, "chunk": 100_000, "shard": 10_000_000}
# The directory of each data set under <build>/bench-data. A set whose contents change gets a new
# name (a revision after the dot), so that an older set is neither reused nor overwritten: it is
# written afresh, and the old directory can be deleted by hand.
DATA_SETS = {"w1": "w1", "w2": "w2.2", "w2big": "w2big"}

# Targets from BENCHMARKS.md (reported, never asserted by tests).
TARGET_E_READ = 0.8
TARGET_E_WRITE = 0.7
TARGET_E_INDEX_STRESS = 0.5
TARGET_PEER_SPEEDUP = 1.33
TARGET_THREAD_SPEEDUP = 1.7
TARGET_RSS_SLACK = 8 * MiB
TARGET_INDEX_STRESS = 3.0
TARGET_COMPILE_RATIO = 1.25


# What a peer's refusal means, put before the message the peer gave.
PEER_HINTS = {
    "python3-zarr": "zarr-python 2.13 reads Zarr v2 (.zarray) arrays only",
    "gdal": "GDAL 3.6's Zarr driver does not open this Zarr v3 (zarr.json) array",
}


def log(msg):
    print("[bench] " + msg, file=sys.stderr, flush=True)


def die(msg):
    log("ERROR: " + msg)
    sys.exit(1)


def run(cmd, env=None, cwd=None):
    """Run one trial process; its stdout's last line is a JSON object. Failure aborts the run."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    if p.returncode != 0:
        die(
            "%s failed (exit %d):\n%s"
            % (" ".join(map(shlex.quote, cmd)), p.returncode, p.stderr.strip()[-3000:])
        )
    lines = [x for x in p.stdout.strip().splitlines() if x.startswith("{")]
    if not lines:
        die("%s printed no result:\n%s" % (" ".join(cmd), p.stdout[-2000:]))
    return json.loads(lines[-1])


def portable(text):
    """`text` with this checkout's location left out (its paths relative to the repository), so
    that records name no machine's paths."""
    return text.replace(ROOT + "/", "")


def probe(cmd, env=None):
    """Run a peer once; returns None when it works, else the reason it gave (its last error line)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode == 0:
        return None
    lines = [x.strip() for x in p.stderr.strip().splitlines() if x.strip()]
    return portable(lines[-1])[:300] if lines else "exit %d" % p.returncode


# The peers' programs, and the commands of the W2 whole-array reads: name -> command for
# (data set dir, array, kind[, count]).
PY_READ = [PYTHON, os.path.join(HERE, "peers", "py_read.py")]
ZARRITA = ["node", os.path.join(HERE, "peers", "zarrita_bench.mjs")]
W2_PEERS = {
    "python3-zarr": lambda d, a, k, *count: PY_READ + ["zarr-w2", d, a, k, *count],
    "gdal": lambda d, a, k, *count: PY_READ + ["gdal-w2", d, a, k, *count],
    "zarrita": lambda d, a, k, *count: ZARRITA + ["read-w2", d, a, k, *count],
}


def make_node_env(build, vers):
    """The environment the Node peers run in: the build's npm modules and zarrita's version."""
    env = dict(os.environ)
    env["ZARRXT_NODE_MODULES"] = os.path.join(build, "npm", "node_modules")
    env["ZXB_ZARRITA_VERSION"] = vers.get("zarrita") or "?"
    return env


def summary(values):
    v = sorted(values)
    return {"median": statistics.median(v), "min": v[0], "max": v[-1], "trials": values}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 22)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def sh(cmd, cwd=None):
    try:
        return subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


# ------------------------------------------------------------------------------ environment


def machine_info():
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    return {"cpu_model": model, "cores": os.cpu_count(), "kernel": platform.release(), "mem_total_bytes": mem}


def compile_command(build, source_suffix):
    with open(os.path.join(build, "compile_commands.json")) as f:
        for e in json.load(f):
            if e["file"].endswith(source_suffix):
                return e
    return None


def flags_of(entry):
    """The compiler and its flags, without the file names and dependency-file options."""
    args = shlex.split(entry["command"])
    out = []
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MQ", "-MF", "-c"):
            skip = a != "-c"
            continue
        if a in ("-MD",) or a.endswith((".cpp", ".cc")):
            continue
        out.append(a)
    return args[0], out


def build_info(build):
    entry = compile_command(build, "bench/seed_reads.cpp")
    compiler, flags = flags_of(entry) if entry else ("c++", [])
    opts = json.loads(sh(["meson", "introspect", "--buildoptions", build]) or "[]")
    pick = {
        o["name"]: o["value"]
        for o in opts
        if o["name"] in ("buildtype", "optimization", "debug", "b_ndebug", "cpp_std")
    }
    version = (sh([compiler, "--version"]) or "").splitlines()[:1]
    # Include paths name this checkout; keep them out of what decides "same build".
    portable = [f for f in flags if not f.startswith(("-I", "-isystem"))]
    return {
        "compiler": compiler,
        "compiler_version": version[0] if version else "?",
        "flags": portable,
        "options": pick,
        "meson": sh(["meson", "--version"]),
    }


def versions(build):
    v = {}
    for name, pc in [
        ("xtensor", "xtensor"),
        ("zstd", "libzstd"),
        ("zlib", "zlib"),
        ("libdeflate", "libdeflate"),
        ("c-blosc", "blosc"),
        ("nlohmann_json", "nlohmann_json"),
    ]:
        v[name] = sh(["pkg-config", "--modversion", pc])
    for name, pkg in [
        ("python3-zarr", "python3-zarr"),
        ("numcodecs", "python3-numcodecs"),
        ("numpy", "python3-numpy"),
        ("gdal", "python3-gdal"),
        ("doctest", "doctest-dev"),
    ]:
        v[name] = sh(["dpkg-query", "-W", "-f=${Version}", pkg])
    try:
        with open(os.path.join(build, "npm", "node_modules", "zarrita", "package.json")) as f:
            v["zarrita"] = json.load(f)["version"]
    except OSError:
        v["zarrita"] = None
    v["node"] = sh(["node", "--version"])
    v["python"] = platform.python_version()
    return v


def git_info():
    commit = sh(["git", "rev-parse", "HEAD"], cwd=ROOT)
    dirty = bool(sh(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT))
    return {"commit": commit, "dirty": dirty}


# ------------------------------------------------------------------------------------- data


def manifest(root):
    lines = []
    for d, _, files in os.walk(root):
        for name in files:
            p = os.path.join(d, name)
            rel = os.path.relpath(p, root)
            if rel == "manifest.sha256":
                continue
            lines.append("%s  %d  %s" % (sha256_file(p), os.path.getsize(p), rel))
    lines.sort(key=lambda x: x.split("  ", 2)[2])
    return "\n".join(lines) + "\n"


def stored_bytes(root, name):
    total = 0
    for d, _, files in os.walk(os.path.join(root, name)):
        total += sum(
            os.path.getsize(os.path.join(d, f)) for f in files if f not in ("zarr.json", ".zarray", ".zattrs")
        )
    return total


def w2_array_name(layout, kind, codec):
    return ("big_%s_%s" if layout == "big" else layout + "_%s_%s") % (kind, codec)


def data_arrays(kind):
    """The arrays a data set must hold."""
    if kind == "w1":
        return W1_ARRAYS + ["index_stress"]
    layouts = ["big"] if kind == "w2big" else list(W2_LAYOUTS) + [W2_V2]
    return [w2_array_name(lay, k, c) for lay in layouts for k in W2_KINDS for c in W2_CODECS]


def ensure_data(data_root, kind, env, big=False):
    """Write a data set once (into NAME.tmp, renamed when complete) and check its manifest."""
    name = DATA_SETS[kind]
    final = os.path.join(data_root, name)
    if not os.path.isdir(final):
        tmp = final + ".tmp"
        if os.path.exists(tmp):
            log("removing the unfinished %s from an interrupted run" % tmp)
            shutil.rmtree(tmp)
        os.makedirs(data_root, exist_ok=True)
        log("writing data set %s (once; reused by later runs)" % name)
        t0 = time.time()
        mk = [PYTHON, os.path.join(HERE, "peers", "make_data.py")]
        if kind == "w1":
            subprocess.run(mk + ["w1", tmp], check=True)
            subprocess.run(
                ["node", os.path.join(HERE, "peers", "zarrita_bench.mjs"), "write-w1", tmp],
                check=True,
                env=env,
            )
            with open(os.path.join(tmp, "writers.json")) as f:
                writers = json.load(f)
            writers["v3_raw"] = "zarrita %s (bytes)" % env.get("ZXB_ZARRITA_VERSION", "?")
            writers["v3_gzip"] = (
                "zarrita %s with a stand-in gzip encoder on Node's zlib, level 5 (zarrita 0.7.5 "
                "cannot encode gzip)" % env.get("ZXB_ZARRITA_VERSION", "?")
            )
            with open(os.path.join(tmp, "writers.json"), "w") as f:
                json.dump(writers, f, indent=2, sort_keys=True)
        else:
            subprocess.run(mk + ["w2", tmp] + (["--big"] if big else []), check=True)
        with open(os.path.join(tmp, "manifest.sha256"), "w") as f:
            f.write(manifest(tmp))
        os.rename(tmp, final)
        log("data set %s written in %.0f s" % (name, time.time() - t0))
    log("hashing data set %s" % name)
    with open(os.path.join(final, "manifest.sha256")) as f:
        saved = f.read()
    now = manifest(final)
    if now != saved:
        die(
            "data set %s changed since it was written (manifest mismatch); delete %s to write it again"
            % (name, final)
        )
    with open(os.path.join(final, "writers.json")) as f:
        writers = json.load(f)
    arrays = sorted(writers)
    missing = sorted(set(data_arrays(kind)) - set(arrays))
    if missing:
        die(
            "data set %s lacks the arrays %s; delete %s to write it again" % (name, ", ".join(missing), final)
        )
    return final, {
        "sha256": hashlib.sha256(now.encode()).hexdigest(),
        "files": now.count("\n"),
        "bytes": sum(int(x.split("  ")[1]) for x in now.splitlines()),
        "writers": writers,
        "stored_bytes": {a: stored_bytes(final, a) for a in arrays},
    }


def w1_expected_sha(extent):
    import numpy as np

    v = make_data.w1_values(extent, extent, 7, 11)
    return hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()


def w2_expected_sha(kind, n):
    h = hashlib.sha256()
    step = 10_000_000
    for first in range(0, n, step):
        h.update(make_data.w2_values(kind, first, min(step, n - first)).tobytes())
    return h.hexdigest()


# ----------------------------------------------------------------------------------- trials


def trials(n_keep, warmup, runners):
    """Run `runners` (name -> zero-argument function returning a dict) interleaved; keep the last n_keep."""
    out = {k: [] for k in runners}
    for t in range(warmup + n_keep):
        for name, fn in runners.items():
            r = fn()
            if t >= warmup:
                out[name].append(r)
    return out


def check_sha(who, case_id, got, want):
    if got != want:
        die("wrong answer: %s on %s returned SHA-256 %s, the formula gives %s" % (who, case_id, got, want))


def median_of(results, key):
    return statistics.median([r[key] for r in results])


def median_dict(results, key):
    keys = results[0][key].keys()
    return {k: statistics.median([r[key][k] for r in results]) for k in keys}


# --------------------------------------------------------------------------------------- W1


def run_w1(ctx):
    build, data, env = ctx["build"], ctx["w1_dir"], ctx["node_env"]
    exe = os.path.join(build, "bench", "seed_reads")
    node = ["node", os.path.join(HERE, "peers", "zarrita_bench.mjs")]
    pyr = [PYTHON, os.path.join(HERE, "peers", "py_read.py")]
    peers = {
        "python3-zarr": lambda a, e: pyr + ["zarr", data, a, str(e)],
        "gdal": lambda a, e: pyr + ["gdal", data, a, str(e)],
        "zarrita": lambda a, e: node + ["read-w1", data, a, str(e)],
    }
    # Which peer can read which array: asked, not assumed (the reason is what the peer said).
    can = {}
    unavailable = []
    for a in W1_ARRAYS + ["index_stress"]:
        for p, cmd in peers.items():
            reason = probe(cmd(a, 8), env=env)  # an 8 x 8 read: does the peer open this array at all?
            if reason is not None and p in PEER_HINTS:
                reason = "%s; it said: %s" % (PEER_HINTS[p], reason)
            can[(p, a)] = reason is None
            if reason is not None:
                unavailable.append({"peer": p, "array": a, "reason": reason})
                log("peer %s cannot read %s: %s" % (p, a, reason))
    ctx["peers_unavailable"] += unavailable

    cases = []
    extents = [2048] if ctx["quick"] else W1_EXTENTS
    threads = ctx["cores"]
    for a in W1_ARRAYS:
        for e in extents:
            cases.append({"array": a, "extent": e, "cache": "op", "threads": 1})
        if threads > 1 and not ctx["quick"]:
            cases.append({"array": a, "extent": 2048, "cache": "op", "threads": threads})
    cases.append({"array": "index_stress", "extent": 256, "cache": "lru", "threads": 1})
    cases.append({"array": "index_stress", "extent": 256, "cache": "none", "threads": 1})

    results = []
    for c in cases:
        cid = "w1/%s/%d/%s/t%d" % (c["array"], c["extent"], c["cache"], c["threads"])
        log("%s" % cid)
        want = w1_expected_sha(c["extent"])
        cmd = [
            exe,
            "--data",
            data,
            "--array",
            c["array"],
            "--extent",
            str(c["extent"]),
            "--cache",
            c["cache"],
            "--threads",
            str(c["threads"]),
        ]
        runners = {"zarrxt": lambda cmd=cmd: run(cmd)}
        # Peers run on the single-thread cases (they are single-threaded); on index stress only
        # the cold-index row is comparable.
        if c["threads"] == 1 and not (c["array"] == "index_stress" and c["cache"] == "lru"):
            for p, mk in peers.items():
                if can[(p, c["array"])]:
                    runners[p] = lambda cmd=mk(c["array"], c["extent"]): run(cmd, env=env)
        got = trials(ctx["trials"], ctx["warmup"], runners)
        for who, rs in got.items():
            for r in rs:
                check_sha(who, cid, r["sha256"], want)
        ours = got.pop("zarrxt")
        rec = dict(c)
        rec["id"] = cid
        rec["output_bytes"] = ours[0]["output_bytes"]
        rec["sha256"] = want
        rec["ours"] = {
            "ns": summary([r["read_ns"] for r in ours]),
            "rss_peak": summary([r["rss_peak"] for r in ours]),
            "rss_start": median_of(ours, "rss_start"),
            "stats": ours[-1]["stats"],
            "read_syscalls": ours[-1]["syscr"],
            "read_bytes": ours[-1]["rchar"],
            "into_ns": summary([r["read_into_ns"] for r in ours]),
        }
        floor1 = summary([r["floor_ns"] for r in ours])
        rec["floor"] = {
            "ns_1thread": floor1,
            "phases": median_dict(ours, "floor_phases"),
            "read_syscalls": ours[-1]["floor_syscr"],
            "objects": ours[-1]["floor_objects"],
            "index_cached": c["cache"] == "lru",
        }
        rec["fault_ns"] = summary([r["fault_ns"] for r in ours])
        finish_case(rec, floor1, c["threads"], rec["output_bytes"], got, ctx)
        results.append(rec)
    return results


def warm_ns(c):
    """zarrxt's time in the floor's condition (read_into), or its plain time (writes, old records)."""
    return (c["ours"].get("into_ns") or c["ours"]["ns"])["median"]


def finish_case(rec, floor1, p, nbytes, peers, ctx):
    """Sets the case's floor (for p threads), E and each peer's figures and speedup."""
    floor_ns = floor1["median"] if p == 1 else max(floor1["median"] / p, nbytes / ctx["bw_p"] * 1e9)
    rec["floor"]["ns"] = floor_ns
    # E is taken in the floor's condition: read_into a destination already faulted in, process
    # buffers warm (the floor allocates and faults its buffers untimed). Peers are compared with
    # read() into a fresh array, which is what they do.
    rec["E"] = floor_ns / warm_ns(rec)
    rec["peers"] = {}
    for who, rs in peers.items():
        ns = summary([r["read_ns"] for r in rs])
        rec["peers"][who] = {
            "ns": ns,
            "rss_peak": summary([r["rss_peak"] for r in rs]),
            "rss_start": median_of(rs, "rss_start"),
            "speedup": ns["median"] / rec["ours"]["ns"]["median"],
        }


# --------------------------------------------------------------------------------------- W2


def w2_case(layout, kind, codec, op, threads, n=W2_N, chunk=W2_CHUNK, shard=None):
    shard = W2_LAYOUTS.get(layout, 0) if shard is None else shard  # v2: no shards
    return {
        "layout": layout,
        "data": kind,
        "codec": codec,
        "op": op,
        "threads": threads,
        "n": n,
        "chunk": chunk,
        "shard": shard,
    }


def w2_cases(ctx):
    if ctx["quick"]:
        return [
            w2_case(layout, "semi_random", "zstd", op, 1) for layout in ["a", "c"] for op in ["read", "write"]
        ] + [w2_case(W2_V2, "semi_random", "zstd", "read", 1)]
    threads = [1, ctx["cores"]] if ctx["cores"] > 1 else [1]
    combos = [(k, c, op, p) for k in W2_KINDS for c in W2_CODECS for op in ["write", "read"] for p in threads]
    cases = []
    if ctx["w2_small"]:
        # Writes are of Zarr v3 arrays only; the v2 arrays (python3-zarr's) are read.
        cases += [
            w2_case(layout, k, c, op, p)
            for k, c, op, p in combos
            for layout in list(W2_LAYOUTS) + ([W2_V2] if op == "read" else [])
        ]
    if ctx["big"]:
        cases += [
            w2_case("big", k, c, op, p, W2_BIG["n"], W2_BIG["chunk"], W2_BIG["shard"])
            for k, c, op, p in combos
        ]
    return cases


def run_w2(ctx):
    build, env = ctx["build"], ctx["node_env"]
    exe = os.path.join(build, "bench", "w2")
    node = ["node", os.path.join(HERE, "peers", "zarrita_bench.mjs")]
    scratch = ctx["scratch"]
    if os.path.exists(scratch):
        shutil.rmtree(scratch)  # only ever holds trial outputs of this harness (see --scratch)
    os.makedirs(scratch)
    cases = w2_cases(ctx)

    # Peers read the 1e8-element arrays on the single-thread read cases. Which peer can read which
    # array is asked, not assumed: each reads the array's first 8 elements once (the reason it gives
    # when it cannot is recorded).
    peers = W2_PEERS

    def peer_case(c):
        return c["op"] == "read" and c["threads"] == 1 and c["layout"] != "big" and not ctx["no_w2_peers"]

    can = {}
    arrays = {(w2_array_name(c["layout"], c["data"], c["codec"]), c["data"]) for c in cases if peer_case(c)}
    for a, kind in sorted(arrays):
        for p, cmd in peers.items():
            reason = probe(cmd(ctx["w2_dir"], a, kind, "8"), env=env)
            if reason is not None and p in PEER_HINTS:
                reason = "%s; it said: %s" % (PEER_HINTS[p], reason)
            can[(p, a)] = reason is None
            if reason is not None:
                ctx["peers_unavailable"].append({"peer": p, "array": "w2/" + a, "reason": reason})
                log("peer %s cannot read w2/%s: %s" % (p, a, reason))

    expected = {}
    results = []
    for c in cases:
        cid = "w2/%s/%s/%s/%s/t%d" % (c["layout"], c["data"], c["codec"], c["op"], c["threads"])
        log(cid)
        key = (c["data"], c["n"])
        if key not in expected:
            expected[key] = w2_expected_sha(c["data"], c["n"])
        name = w2_array_name(c["layout"], c["data"], c["codec"])
        src_dir = ctx["w2big_dir"] if c["layout"] == "big" else ctx["w2_dir"]
        common = [
            "--data",
            c["data"],
            "--n",
            str(c["n"]),
            "--chunk",
            str(c["chunk"]),
            "--shard",
            str(c["shard"]),
            "--codec",
            c["codec"],
            "--threads",
            str(c["threads"]),
        ]
        if c["op"] == "read":
            cmd = [exe, "--op", "read", "--dir", src_dir, "--name", name] + common
        else:
            cmd = [exe, "--op", "write", "--dir", scratch] + common
        runners = {"zarrxt": lambda cmd=cmd: run(cmd)}
        if peer_case(c):
            for p, mk in peers.items():
                if can[(p, name)]:
                    runners[p] = lambda cmd=mk(src_dir, name, c["data"]): run(cmd, env=env)
        got = trials(ctx["trials"], ctx["warmup"], runners)
        ours = got.pop("zarrxt")
        rec = dict(c)
        rec["id"] = cid
        if c["op"] == "read":
            for who, rs in [("zarrxt", ours)] + list(got.items()):
                for r in rs:
                    check_sha(who, cid, r["sha256"], expected[key])
        else:
            # zarrxt checked its own write by reading it back; an independent reader checks it too.
            keep = cmd + ["--keep"]
            r = run(keep)
            peer = run(node + ["read-w2", scratch, "ours", c["data"]], env=env)
            shutil.rmtree(os.path.join(scratch, "ours"))
            check_sha("zarrita reading zarrxt's write", cid, peer["sha256"], expected[key])
            rec["checked_by"] = "zarrita read the written array back: SHA-256 matches the formula"
            rec["stored_bytes"] = r["stored_bytes"]
            rec["floor_stored_bytes"] = r["floor_stored_bytes"]
        rec["bytes"] = c["n"]
        rec["ours"] = {
            "ns": summary([r["ns"] for r in ours]),
            "rss_peak": summary([r["rss_peak"] for r in ours]),
            "rss_start": median_of(ours, "rss_start"),
            "stats": ours[-1]["stats"],
        }
        if c["op"] == "read":
            rec["ours"]["read_syscalls"] = ours[-1]["syscr"]
            rec["ours"]["into_ns"] = summary([r["into_ns"] for r in ours])
            rec["fault_ns"] = summary([r["fault_ns"] for r in ours])
        floor1 = summary([r["floor_ns"] for r in ours])
        rec["floor"] = {"ns_1thread": floor1}
        if c["op"] == "read":
            rec["floor"]["phases"] = median_dict(ours, "floor_phases")
        finish_case(rec, floor1, c["threads"], c["n"], got, ctx)
        results.append(rec)
    shutil.rmtree(scratch)
    return results


# ------------------------------------------------------------------------------------ micro


def run_micro(ctx):
    exe = os.path.join(ctx["build"], "bench", "bench_micro")
    env = dict(os.environ)
    env["ZXB_MICRO_SECONDS"] = "0.05" if ctx["quick"] else "0.5"
    p = subprocess.run(
        [exe, "--no-intro"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    if p.returncode != 0:
        die("bench_micro failed:\n" + p.stdout[-3000:])
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("BENCH "):
            out.append(json.loads(line[6:]))
    return out


# ---------------------------------------------------------------------------------- compile


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class build_failed(Exception):
    pass


def timed(cmd, cwd=None):
    """Wall and CPU seconds of a build command; a failing build raises build_failed (a broken build
    is recorded as such, it does not throw away the measurements already taken)."""
    c0 = child_cpu()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        lines = [x for x in p.stdout.splitlines() if "error" in x or "FAILED" in x]
        raise build_failed("%s failed: %s" % (" ".join(cmd[:3]), " | ".join(lines[:6])[:1500]))
    return wall, child_cpu() - c0


def run_compile(ctx):
    build = ctx["build"]
    entry = compile_command(build, "examples/quickstart.cpp")
    if entry is None:
        return {"skipped": "examples are not configured in %s" % build}
    compiler, flags = flags_of(entry)
    reps = 1 if ctx["quick"] else 3
    res = {"flags": flags, "compiler": compiler}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "only_xtensor_json.cpp")
        with open(base, "w") as f:
            f.write(
                "// Includes what zarrxt builds on, and nothing else.\n"
                "#if __has_include(<xtensor/xtensor.hpp>)\n#include <xtensor/xtensor.hpp>\n"
                "#else\n#include <xtensor/containers/xtensor.hpp>\n#endif\n"
                "#include <nlohmann/json.hpp>\nint main() { return 0; }\n"
            )
        src = os.path.join(entry["directory"], entry["file"])
        sides = {"quickstart": src, "xtensor_json_only": base}
        times = {k: [] for k in sides}
        try:
            for _ in range(reps):
                for k, path in sides.items():
                    out = os.path.join(tmp, k + ".o")
                    wall, cpu = timed([compiler] + flags + ["-c", path, "-o", out], cwd=entry["directory"])
                    times[k].append({"wall_s": wall, "cpu_s": cpu})
        except build_failed as e:
            log("compile-time measurement failed; recorded as such: %s" % e)
            res["failed"] = str(e)
            return res
        for k in sides:
            res[k] = {
                "cpu_s": summary([t["cpu_s"] for t in times[k]]),
                "wall_s": summary([t["wall_s"] for t in times[k]]),
            }
        res["ratio_cpu"] = res["quickstart"]["cpu_s"]["median"] / res["xtensor_json_only"]["cpu_s"]["median"]
    if ctx["suite_build"]:
        scratch = os.path.join(build, "compile-scratch")
        if os.path.exists(scratch):
            shutil.rmtree(scratch)
        log("clean build of the test suite on 2 cores (measured once)")
        what = (
            "clean `ninja -j2` of a fresh release build dir with -Dbench=false -Dexamples=false (the test "
            "executables, their doctest main and the zarrxt tool they run)"
        )
        try:
            setup = [
                "meson",
                "setup",
                scratch,
                ROOT,
                "--buildtype=release",
                "-Dbench=false",
                "-Dexamples=false",
            ]
            timed(setup)
            wall, cpu = timed(["ninja", "-j2", "-C", scratch])
            res["test_suite_build"] = {"wall_s": wall, "cpu_s": cpu, "jobs": 2, "what": what}
        except build_failed as e:
            log("the test suite did not build; recorded as such: %s" % e)
            res["test_suite_build"] = {"failed": str(e), "what": what}
        shutil.rmtree(scratch, ignore_errors=True)
    return res


# ---------------------------------------------------------------------------------- targets


def evaluate(rec):
    t = []

    def add(what, case, value, target, met, note=""):
        t.append(
            {"what": what, "case": case, "value": value, "target": target, "met": bool(met), "note": note}
        )

    def add_rss(c, output_bytes, note=""):
        limit = output_bytes + TARGET_RSS_SLACK
        rss = c["ours"]["rss_peak"]["median"]
        add("peak RSS (MiB)", c["id"], rss / MiB, "<= %.1f" % (limit / MiB), rss <= limit, note)

    def add_fastest_peer(c):
        if c["peers"]:
            best = min(c["peers"].items(), key=lambda kv: kv[1]["ns"]["median"])
            add(
                "speedup vs fastest peer (%s)" % best[0],
                c["id"],
                best[1]["speedup"],
                ">= %.2f" % TARGET_PEER_SPEEDUP,
                best[1]["speedup"] >= TARGET_PEER_SPEEDUP,
            )

    for c in rec.get("w1", []):
        if c["threads"] == 1 and c["extent"] == 2048:
            add(
                "E (single thread, W1 2048)",
                c["id"],
                c["E"],
                ">= %.2f" % TARGET_E_READ,
                c["E"] >= TARGET_E_READ,
            )
        add_fastest_peer(c)
        add_rss(c, c["output_bytes"], "process total; at start %.1f MiB" % (c["ours"]["rss_start"] / MiB))
        if c["array"] == "index_stress" and c["cache"] == "none":
            add(
                "index stress, no cache: E",
                c["id"],
                c["E"],
                ">= %.2f" % TARGET_E_INDEX_STRESS,
                c["E"] >= TARGET_E_INDEX_STRESS,
            )
        if c["array"] == "index_stress" and c["cache"] == "lru":
            ratio = c["ours"]["ns"]["median"] / c["floor"]["ns"]
            add(
                "index stress, cache on: time / payload-range floor",
                c["id"],
                ratio,
                "<= %.1f" % TARGET_INDEX_STRESS,
                ratio <= TARGET_INDEX_STRESS,
            )
    w1_by = {c["id"]: c for c in rec.get("w1", [])}
    for c in rec.get("w1", []):
        if c["threads"] > 1 and c["array"] != "v3_raw":
            one = w1_by.get(c["id"].rsplit("/t", 1)[0] + "/t1")
            if one:
                s = warm_ns(one) / warm_ns(c)
                add(
                    "all cores vs 1 thread (compressed)",
                    c["id"],
                    s,
                    ">= %.2f" % TARGET_THREAD_SPEEDUP,
                    s >= TARGET_THREAD_SPEEDUP,
                )
    w2_by = {c["id"]: c for c in rec.get("w2", [])}
    for c in rec.get("w2", []):
        if c["threads"] == 1:
            target = TARGET_E_READ if c["op"] == "read" else TARGET_E_WRITE
            add("E (single thread, W2 %s)" % c["op"], c["id"], c["E"], ">= %.2f" % target, c["E"] >= target)
        else:
            one = w2_by.get(c["id"].rsplit("/t", 1)[0] + "/t1")
            if one and c["codec"] != "none":
                s = warm_ns(one) / warm_ns(c)
                add(
                    "all cores vs 1 thread (compressed)",
                    c["id"],
                    s,
                    ">= %.2f" % TARGET_THREAD_SPEEDUP,
                    s >= TARGET_THREAD_SPEEDUP,
                )
        add_fastest_peer(c)
        if c["op"] == "read":
            add_rss(c, c["bytes"])
    # W2 layout expectations: (c) faster than (a); (b) at most (a) plus the index reads.
    for c in rec.get("w2", []):
        if c["layout"] != "a":
            continue
        rest = c["id"].split("/", 2)[2]
        cc = w2_by.get("w2/c/" + rest)
        cb = w2_by.get("w2/b/" + rest)
        ta = c["ours"]["ns"]["median"]
        if cc:
            add(
                "layout c (1 shard) faster than a (1000 chunks)",
                cc["id"],
                cc["ours"]["ns"]["median"] / ta,
                "< 1",
                cc["ours"]["ns"]["median"] < ta,
                "time c / time a",
            )
        if cb:
            extra = max(cb["floor"]["ns_1thread"]["median"] - c["floor"]["ns_1thread"]["median"], 0)
            add(
                "layout b <= a + index reads",
                cb["id"],
                cb["ours"]["ns"]["median"] / (ta + extra),
                "<= 1",
                cb["ours"]["ns"]["median"] <= ta + extra,
                "index cost taken as floor(b) - floor(a)",
            )
        big = w2_by.get("w2/big/" + rest)
        if big and cb:
            ratio = big["ours"]["ns"]["median"] / cb["ours"]["ns"]["median"]
            add(
                "1e9 (1e7 shards) / 1e8 (layout b): linear scaling",
                big["id"],
                ratio,
                "about 10",
                8 <= ratio <= 12,
            )
    comp = rec.get("compile", {})
    if "ratio_cpu" in comp:
        add(
            "compile: quickstart / (xtensor + json only), CPU time",
            "compile/quickstart",
            comp["ratio_cpu"],
            "<= %.2f" % TARGET_COMPILE_RATIO,
            comp["ratio_cpu"] <= TARGET_COMPILE_RATIO,
        )
    for m in rec.get("micro", []):
        if m["name"].startswith("codec/"):
            add(
                "codec wrapper / raw library call",
                "micro/" + m["name"],
                m["ratio"],
                ">= 0.95",
                m["ratio"] >= 0.95,
            )
    return t


# --------------------------------------------------------------------------------- markdown


def ms(ns):
    return "%.1f" % (ns / 1e6) if ns >= 1e6 else "%.3f" % (ns / 1e6)


def rng(s):
    return "%s (%s–%s)" % (ms(s["median"]), ms(s["min"]), ms(s["max"]))


def markdown(rec):
    m = rec["machine"]
    b = rec["build"]
    out = ["# zarrxt benchmark record %s" % rec["id"], ""]
    out.append(
        "- machine: %s, %d cores, kernel %s, %.1f GiB"
        % (m["cpu_model"], m["cores"], m["kernel"], m["mem_total_bytes"] / 2**30)
    )
    out.append(
        "- build: %s, %s %s" % (b["options"].get("buildtype"), b["compiler_version"], " ".join(b["flags"]))
    )
    out.append(
        "- commit %s%s; mode %s; %d kept trials after %d warm-up, each a fresh process"
        % (
            rec["git"]["commit"][:12] if rec["git"]["commit"] else "?",
            " (dirty)" if rec["git"]["dirty"] else "",
            rec["mode"],
            rec["settings"]["trials"],
            rec["settings"]["warmup"],
        )
    )
    out.append("- versions: " + ", ".join("%s %s" % (k, v) for k, v in rec["versions"].items() if v))
    for k, d in rec["data"].items():
        out.append(
            "- data %s: SHA-256 of manifest %s (%d files, %.1f MB)"
            % (k, d["sha256"][:16], d["files"], d["bytes"] / 1e6)
        )
        if k == "w1":
            out.append(
                "  - stored bytes (chunk data, the real codec level): "
                + ", ".join("%s %.2f MB" % (a, b / 1e6) for a, b in sorted(d["stored_bytes"].items()))
            )
    out.append(
        "- load average at start %s, at end %s (other work on the machine shows here)"
        % (rec["load"]["start"], rec["load"]["end"])
    )
    if "filesystems" in rec:
        out.append(
            "- file systems: data on %s; W2 writes into %s (%s)"
            % (
                rec["filesystems"]["data"],
                rec["filesystems"]["w2_write_scratch"],
                rec["filesystems"]["w2_write_scratch_type"],
            )
        )
    out.append(
        "- memcpy bandwidth: %.1f GB/s (1 thread), %.1f GB/s (%d threads)"
        % (
            rec["memcpy"]["bytes_per_s_1"] / 1e9,
            rec["memcpy"]["bytes_per_s_p"] / 1e9,
            rec["memcpy"]["threads"],
        )
    )
    out.append("")
    out.append(
        "Times in ms: median (min–max). zarrxt = `read()` into a fresh array (or the write), in a fresh "
        "process, as the peers run; into = `read_into` the same read again into that now faulted array, "
        "buffers warm (the floor's condition: it allocates and faults its buffers untimed). "
        "E = floor / into for reads, floor / zarrxt for writes. Thread speedups use into. Peer columns: "
        "the peer's time and zarrxt's speedup over it (against zarrxt's `read()`)."
    )
    if rec.get("w1"):
        out += ["", "## W1 region reads (4096 x 4096 uint16, region at [7, 11])", ""]
        peers = sorted({p for c in rec["w1"] for p in c["peers"]})
        out.append(
            "| case | zarrxt | into | floor | E | RSS MiB | "
            + " | ".join(peers)
            + " | I/O: index / payload reads, read syscalls (floor) |"
        )
        out.append("|---" * (7 + len(peers)) + "|")
        for c in rec["w1"]:
            cells = [
                "%s %d² %s%s"
                % (
                    c["array"],
                    c["extent"],
                    "cache " + c["cache"] + " " if c["array"] == "index_stress" else "",
                    "t%d" % c["threads"],
                ),
                rng(c["ours"]["ns"]),
                ms(c["ours"]["into_ns"]["median"]) if "into_ns" in c["ours"] else "–",
                ms(c["floor"]["ns"]),
                "%.2f" % c["E"],
                "%.1f" % (c["ours"]["rss_peak"]["median"] / MiB),
            ]
            for p in peers:
                if p in c["peers"]:
                    cells.append("%s (%.2fx)" % (ms(c["peers"][p]["ns"]["median"]), c["peers"][p]["speedup"]))
                else:
                    cells.append("–")
            s = c["ours"]["stats"]
            cells.append(
                "%d / %d, %d (%d)"
                % (
                    s["index_reads"],
                    s["payload_reads"],
                    c["ours"]["read_syscalls"],
                    c["floor"]["read_syscalls"],
                )
            )
            out.append("| " + " | ".join(cells) + " |")
        out += [
            "",
            "Floor phases (ms, median): io / decode / memcpy; fault = first touch of a fresh output buffer",
            "",
        ]
        out.append("| case | io | decode | memcpy | fault |")
        out.append("|---|---|---|---|---|")
        for c in rec["w1"]:
            if c["threads"] != 1:
                continue
            ph = c["floor"]["phases"]
            out.append(
                "| %s | %s | %s | %s | %s |"
                % (
                    c["id"],
                    ms(ph["io_ns"]),
                    ms(ph["decode_ns"]),
                    ms(ph["copy_ns"]),
                    ms(c["fault_ns"]["median"]),
                )
            )
    if rec.get("w2"):
        v2 = any(c["layout"] == W2_V2 for c in rec["w2"])
        out += [
            "",
            "## W2 whole-array writes and reads (1-d uint8; a: 1e5 chunks, b: 1e5 shards, c: one shard%s)"
            % ("; v2: Zarr v2 as a, written by python3-zarr" if v2 else ""),
            "",
        ]
        peers = sorted({p for c in rec["w2"] for p in c["peers"]})
        out.append(
            "| case | zarrxt | MB/s | into | floor | E | fault | stored MB | RSS MiB | I/O: index / payload reads, "
            "writes | " + " | ".join(peers) + " |"
        )
        out.append("|---" * (10 + len(peers)) + "|")
        for c in rec["w2"]:
            stored = c.get("stored_bytes") or rec["data"].get(
                "w2big" if c["layout"] == "big" else "w2", {}
            ).get("stored_bytes", {}).get(w2_array_name(c["layout"], c["data"], c["codec"]))
            cells = [
                c["id"],
                rng(c["ours"]["ns"]),
                "%.0f" % (c["bytes"] / (c["ours"]["ns"]["median"] * 1e-9) / 1e6),
                ms(c["ours"]["into_ns"]["median"]) if "into_ns" in c["ours"] else "–",
                ms(c["floor"]["ns"]),
                "%.2f" % c["E"],
                ms(c["fault_ns"]["median"]) if "fault_ns" in c else "–",
                "%.3g" % (stored / 1e6) if stored else "–",
                "%.1f" % (c["ours"]["rss_peak"]["median"] / MiB),
                "%d / %d, %d"
                % (
                    c["ours"]["stats"]["index_reads"],
                    c["ours"]["stats"]["payload_reads"],
                    c["ours"]["stats"]["writes"],
                ),
            ]
            for p in peers:
                z = c["peers"].get(p)
                cells.append("%s (%.2fx)" % (ms(z["ns"]["median"]), z["speedup"]) if z else "–")
            out.append("| " + " | ".join(cells) + " |")
    if rec.get("micro"):
        out += ["", "## Microbenchmarks (bench/bench_micro; MB/s, median of alternating batches)", ""]
        out.append("| benchmark | zarrxt | baseline | baseline MB/s | ratio |")
        out.append("|---|---|---|---|---|")
        for x in rec["micro"]:
            out.append(
                "| %s | %.0f | %s | %.0f | %.2f |"
                % (
                    x["name"],
                    x["ours_bytes_per_s"] / 1e6,
                    x["baseline"],
                    x["baseline_bytes_per_s"] / 1e6,
                    x["ratio"],
                )
            )
    comp = rec.get("compile")
    if comp and "failed" in comp:
        out += ["", "## Compile cost", "", "- not measured: " + comp["failed"]]
    if comp and "quickstart" in comp:
        out += ["", "## Compile cost (same flags as the build)", ""]
        out.append(
            "- examples/quickstart.cpp: %.2f s CPU (%.2f s wall)"
            % (comp["quickstart"]["cpu_s"]["median"], comp["quickstart"]["wall_s"]["median"])
        )
        out.append(
            "- a TU including only xtensor and nlohmann/json: %.2f s CPU (%.2f s wall)"
            % (comp["xtensor_json_only"]["cpu_s"]["median"], comp["xtensor_json_only"]["wall_s"]["median"])
        )
        out.append("- ratio (CPU): %.2f (target <= %.2f)" % (comp["ratio_cpu"], TARGET_COMPILE_RATIO))
        suite = comp.get("test_suite_build")
        if suite and "failed" in suite:
            out.append("- test suite, clean build with 2 jobs: did not build (%s)" % suite["failed"])
        elif suite:
            out.append(
                "- test suite, clean build with 2 jobs: %.0f s wall, %.0f s CPU (measured once)"
                % (suite["wall_s"], suite["cpu_s"])
            )
    if rec.get("targets"):
        missed = [t for t in rec["targets"] if not t["met"]]
        out += ["", "## Targets: %d met, %d missed" % (len(rec["targets"]) - len(missed), len(missed)), ""]
        out.append("| target | case | value | wanted | met |")
        out.append("|---|---|---|---|---|")
        for t in sorted(rec["targets"], key=lambda t: (t["met"], t["what"])):
            out.append(
                "| %s | %s | %.2f | %s | %s |"
                % (t["what"], t["case"], t["value"], t["target"], "yes" if t["met"] else "**no**")
            )
    return "\n".join(out + markdown_tail(rec)) + "\n"


def record_paths(records, rid):
    """The JSON and Markdown paths of the record `rid` in `records` (created); records are never
    overwritten (shared with bench/remote_harness.py)."""
    os.makedirs(records, exist_ok=True)
    paths = (os.path.join(records, rid + ".json"), os.path.join(records, rid + ".md"))
    for p in paths:
        if os.path.exists(p):
            die("%s exists; refusing to overwrite a record" % p)
    return paths


def markdown_tail(rec):
    """The last sections of a record's Markdown: the peers that could not run a case, the notes
    (shared with bench/remote_harness.py)."""
    out = []
    if rec.get("peers_unavailable"):
        out += ["", "## Peers that cannot run a case", ""]
        for u in rec["peers_unavailable"]:
            out.append("- %s on %s: %s" % (u["peer"], u["array"], u["reason"]))
    if rec.get("notes"):
        out += ["", "## Notes", ""] + ["- " + n for n in rec["notes"]]
    return out


# ---------------------------------------------------------------------------------- compare


def comparable(rec):
    """Every figure worth comparing: name -> (value, min, max, unit, lower_is_better)."""
    out = {}
    for part in ("w1", "w2"):
        for c in rec.get(part, []):
            ns = c["ours"]["ns"]
            out[c["id"]] = (ns["median"] / 1e6, ns["min"] / 1e6, ns["max"] / 1e6, "ms", True)
            out[c["id"] + " E"] = (c["E"], None, None, "E", False)
            if "into_ns" in c["ours"]:
                i = c["ours"]["into_ns"]
                out[c["id"] + " into"] = (i["median"] / 1e6, i["min"] / 1e6, i["max"] / 1e6, "ms", True)
            for p, v in c.get("peers", {}).items():
                out[c["id"] + " speedup vs " + p] = (v["speedup"], None, None, "x", False)
    for m in rec.get("micro", []):
        out["micro/" + m["name"]] = (m["ours_bytes_per_s"] / 1e6, None, None, "MB/s", False)
        out["micro/" + m["name"] + " ratio"] = (m["ratio"], None, None, "ratio", False)
    comp = rec.get("compile", {})
    if "ratio_cpu" in comp:
        out["compile/quickstart cpu"] = (comp["quickstart"]["cpu_s"]["median"], None, None, "s", True)
        out["compile/ratio"] = (comp["ratio_cpu"], None, None, "ratio", True)
    return out


def compare(old, new, force, noise):
    problems = []
    if old["machine"] != new["machine"]:
        problems.append("machines differ: %s vs %s" % (old["machine"], new["machine"]))
    if {k: v["sha256"] for k, v in old["data"].items()} != {k: v["sha256"] for k, v in new["data"].items()}:
        problems.append("input data differ (dataset hashes)")
    ob = {k: old["build"][k] for k in ("compiler_version", "flags", "options")}
    nb = {k: new["build"][k] for k in ("compiler_version", "flags", "options")}
    if ob != nb:
        problems.append("builds differ: %s vs %s" % (ob, nb))
    if problems and not force:
        die("refusing to compare (use --force to compare anyway):\n  " + "\n  ".join(problems))
    for p in problems:
        log("compared anyway (--force): " + p)
    a, b = comparable(old), comparable(new)
    rows = []
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        d = y[0] / x[0] - 1 if x[0] else 0.0
        # Noise: the trial ranges overlap, or the change is inside the run-to-run band (absolute
        # times on shared machines move 10-30 % between runs; see BENCHMARKS.md).
        overlap = x[1] is not None and y[1] is not None and not (y[2] < x[1] or y[1] > x[2])
        if overlap or abs(d) <= noise:
            verdict = "noise"
        else:
            verdict = "better" if (d < 0) == x[4] else "worse"
        rows.append((k, x, y, d, verdict))
    print(
        "Old: %s   New: %s   (noise band %.0f %%; ranges are min-max over trials)\n"
        % (old["id"], new["id"], 100 * noise)
    )
    print("| figure | old | new | change | verdict |")
    print("|---|---|---|---|---|")

    def fmt(v):
        if v[1] is None:
            return "%.3g %s" % (v[0], v[3])
        return "%.3g %s (%.3g–%.3g)" % (v[0], v[3], v[1], v[2])

    for k, x, y, d, v in rows:
        print(
            "| %s | %s | %s | %+.1f %% | %s |"
            % (k, fmt(x), fmt(y), 100 * d, v if v == "noise" else "**%s**" % v)
        )
    print(
        "\n%d figures compared: %d better, %d worse, %d noise"
        % (
            len(rows),
            sum(r[4] == "better" for r in rows),
            sum(r[4] == "worse" for r in rows),
            sum(r[4] == "noise" for r in rows),
        )
    )
    only = sorted(set(a) ^ set(b))
    if only:
        print("%d figures appear in one record only (not compared)" % len(only))


# ------------------------------------------------------------------------------------- main


def draw_charts(rec, out_dir):
    try:
        import charts
    except ImportError as e:
        die("cannot draw the charts (%s); python3-matplotlib is needed" % e)
    try:
        return charts.render(rec, out_dir)
    except ImportError as e:
        die("cannot draw the charts (%s); install Debian's python3-matplotlib" % e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", help="the release build directory (needed to run, not for --charts)")
    ap.add_argument("--quick", action="store_true", help="a small subset with 2 kept trials")
    ap.add_argument(
        "--big", action="store_true", help="add the W2 1e9-element layout (needs ~3 GB of memory, 1 GB+ disk)"
    )
    ap.add_argument("--trials", type=int, help="kept trials per case (default 5; 2 with --quick)")
    ap.add_argument(
        "--only",
        default="w1,w2,micro,compile",
        help="comma-separated parts: w1, w2, w2big (the 1e9 layout alone), micro, compile",
    )
    ap.add_argument(
        "--no-suite-build", action="store_true", help="skip the timed clean build of the test suite"
    )
    ap.add_argument("--no-w2-peers", action="store_true", help="skip the peers on the W2 reads")
    ap.add_argument("--compare", nargs="+", metavar="JSON", help="OLD.json [NEW.json]")
    ap.add_argument(
        "--force", action="store_true", help="compare records from different machines/data/builds"
    )
    ap.add_argument(
        "--noise", type=float, default=0.10, help="relative change counted as noise (default 0.10)"
    )
    ap.add_argument(
        "--scratch",
        help="where W2 writes go (default <build>/bench-data/scratch; it is emptied). Creating a file on "
        "ext4 can cost a millisecond beside jobs that fsync; a tmpfs here isolates zarrxt's own cost",
    )
    ap.add_argument("--records", default=os.path.join(HERE, "records"))
    ap.add_argument("--charts", metavar="JSON", help="draw the SVG charts of an existing record; run nothing")
    ap.add_argument("--charts-dir", help="where --charts writes (default: the record's directory)")
    args = ap.parse_args()

    if args.charts:
        with open(args.charts) as f:
            rec = json.load(f)
        for path in draw_charts(rec, args.charts_dir or os.path.dirname(os.path.abspath(args.charts))):
            log("chart: %s" % path)
        return 0
    if not args.build:
        ap.error("--build is required to run the benchmarks")

    if args.compare and len(args.compare) == 2:
        with open(args.compare[0]) as f:
            old = json.load(f)
        with open(args.compare[1]) as f:
            new = json.load(f)
        compare(old, new, args.force, args.noise)
        return 0
    old = None
    if args.compare:
        with open(args.compare[0]) as f:
            old = json.load(f)

    build = os.path.abspath(args.build)
    parts = set(args.only.split(","))
    vers = versions(build)
    node_env = make_node_env(build, vers)
    ctx = {
        "build": build,
        "quick": args.quick,
        "big": args.big or "w2big" in parts,
        "w2_small": "w2" in parts,
        "cores": os.cpu_count(),
        "trials": args.trials or (2 if args.quick else 5),
        "warmup": 1,
        "node_env": node_env,
        "data_root": os.path.join(build, "bench-data"),
        "scratch": os.path.abspath(args.scratch)
        if args.scratch
        else os.path.join(build, "bench-data", "scratch"),
        "peers_unavailable": [],
        "suite_build": not args.no_suite_build and not args.quick,
        "no_w2_peers": args.no_w2_peers,
    }
    now = datetime.datetime.now(datetime.timezone.utc)
    git = git_info()
    rid = (
        now.strftime("%Y%m%d-%H%M%S")
        + "-"
        + (git["commit"] or "nogit")[:8]
        + ("-quick" if args.quick else "")
    )
    json_path, md_path = record_paths(args.records, rid)

    rec = {
        "schema": 1,
        "id": rid,
        "created": now.isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": machine_info(),
        "build": build_info(build),
        "versions": vers,
        "git": git,
        "settings": {
            "trials": ctx["trials"],
            "warmup": ctx["warmup"],
            "w1_region_offset": [7, 11],
            "threads_all_cores": ctx["cores"],
        },
        "load": {"start": [round(x, 2) for x in os.getloadavg()]},
        "data": {},
    }
    if git["dirty"]:
        log("the working tree has uncommitted changes; the record says so")

    if "w1" in parts:
        ctx["w1_dir"], rec["data"]["w1"] = ensure_data(ctx["data_root"], "w1", node_env)
    if "w2" in parts:
        ctx["w2_dir"], rec["data"]["w2"] = ensure_data(ctx["data_root"], "w2", node_env)
    if ctx["big"]:
        ctx["w2big_dir"], rec["data"]["w2big"] = ensure_data(ctx["data_root"], "w2big", node_env, big=True)
    rec["filesystems"] = {
        "data": sh(["stat", "-f", "-c", "%T", ctx["data_root"]]),
        "w2_write_scratch": ctx["scratch"] if args.scratch else "<build>/bench-data/scratch",
        "w2_write_scratch_type": sh(["stat", "-f", "-c", "%T", os.path.dirname(ctx["scratch"])]),
    }
    rec["memcpy"] = run(
        [os.path.join(build, "bench", "w2"), "--op", "bandwidth", "--threads", str(ctx["cores"])]
    )
    ctx["bw_p"] = rec["memcpy"]["bytes_per_s_p"]

    t0 = time.time()
    if "w1" in parts:
        rec["w1"] = run_w1(ctx)
    if ctx["w2_small"] or ctx["big"]:
        rec["w2"] = run_w2(ctx)
    if "micro" in parts:
        log("microbenchmarks")
        rec["micro"] = run_micro(ctx)
    if "compile" in parts:
        log("compile cost")
        rec["compile"] = run_compile(ctx)
    rec["peers_unavailable"] = ctx["peers_unavailable"]
    rec["load"]["end"] = [round(x, 2) for x in os.getloadavg()]
    rec["duration_s"] = round(time.time() - t0)
    rec["notes"] = [
        "The floor of a P-thread case is max(floor_1 / P, bytes / memcpy bandwidth with P threads).",
        "RSS is the whole process's peak resident set, read from VmHWM in /proc/self/status rather than "
        "getrusage: on Linux ru_maxrss survives fork and exec, so every trial would report the harness's own "
        "peak (the deviation from BENCHMARKS.md's wording keeps its intent, 'nothing large in the parent'). "
        "'At start' is the peak before the array is opened; peers' RSS includes their interpreter.",
        "I/O: zarrxt's own counters, index reads and payload reads (one per range or coalesced batch of "
        "ranges; the filesystem store reads every range of one object through one open handle); the floor "
        "opens each object once and reads its ranges with pread.",
        "Peers are timed around their read call only, like zarrxt; they run single-threaded (GDAL 3.6's Zarr "
        "driver and zarrita decode on one thread), so only the single-thread rows list them.",
    ]
    rec["targets"] = evaluate(rec)
    with open(json_path, "x") as f:
        json.dump(rec, f, indent=1)
    with open(md_path, "x") as f:
        f.write(markdown(rec))
    log("record: %s" % json_path)
    log("table:  %s" % md_path)
    for path in draw_charts(rec, args.records):
        log("chart:  %s" % path)
    missed = [t for t in rec["targets"] if not t["met"]]
    log("targets: %d met, %d missed" % (len(rec["targets"]) - len(missed), len(missed)))
    if old is not None:
        compare(old, rec, args.force, args.noise)
    return 0


if __name__ == "__main__":
    sys.exit(main())
