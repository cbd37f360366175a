#!/usr/bin/python3
"""The scale-out benchmark: zarrxt::mpi against parallel HDF5 and two floors (bench/README.md,
section "Scale-out"; run it through scripts/bench-mpi, which installs and builds what it needs).

    harness.py --build DIR [--ranks 1,2,4] [--trials 5] [--rows 512] [--scratch DIR] [--settle S]
               [--quick]

For every rank count, trial after trial (one warm-up trial first, discarded), every case writes
the field and reads it back, each operation a fresh `mpirun -np P bench/mpi/bench_mpi` (the cases'
order rotates from trial to trial). Every operation starts from the same state: no dirty pages
(`sync`) and a pause of --settle seconds, so that memory the previous case freed has been handed
back to a VM's host by free page reporting (2 s after it is freed) whichever case came before.
Every trial also measures the codecs' own speeds, so the codec ratio the goals use is the median
of ratios taken beside the jobs, not one measurement per run. Every read checks every value
against the formula and a wrong value aborts the run; zarrita reads a box of each zarrxt-written
array and its SHA-256 is compared with the formula's (numpy). The record (JSON and Markdown)
goes to bench/records/.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = ["floor-io", "floor-zstd1", "zarrxt-raw", "zarrxt-zstd1", "hdf5-raw", "hdf5-deflate1"]
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
MPI_ENV = {
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_pml": "ob1",
    "OMPI_MCA_btl": "self,vader",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
}
COLS = 1024


def peer_box(rows):
    """The box zarrita reads: it straddles shard (64 x 512 x 512) and chunk (32 x 128 x 128) edges."""
    off0 = max(0, min(40, rows - 48))
    return [off0, 300, 200], [min(48, rows - off0), 400, 500]


def log(msg):
    print("[bench-mpi] " + msg, file=sys.stderr, flush=True)


def die(msg):
    log("ERROR: " + msg)
    sys.exit(1)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def first_line(cmd):
    try:
        r = sh(cmd)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def machine(build, scratch):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    intro = json.loads(sh(["meson", "introspect", "--buildoptions", build]).stdout or "[]")
    opts = {o["name"]: o["value"] for o in intro}
    commit = first_line(["git", "-C", ROOT, "rev-parse", "HEAD"])
    dirty = bool(sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout.strip())
    pkgs = {}
    for p in ["libhdf5-openmpi-dev", "libopenmpi-dev", "libzstd-dev", "zlib1g-dev", "xtensor-dev"]:
        pkgs[p] = first_line(["dpkg-query", "-W", "-f=${Version}", p])
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "compiler": first_line(["c++", "--version"]),
        "buildtype": opts.get("buildtype"),
        "optimization": opts.get("optimization"),
        "b_ndebug": opts.get("b_ndebug"),
        "openmpi": first_line(["mpirun", "--version"]),
        "packages": pkgs,
        "commit": commit,
        "dirty": dirty,
        "scratch": scratch.replace(ROOT + "/", ""),  # no machine's paths in a record
        "scratch_fs": first_line(["stat", "-f", "-c", "%T", scratch]),
        "load_start": os.getloadavg(),
    }


def mpirun(build, ranks, args, timeout=3600):
    exe = os.path.join(build, "bench", "mpi", "bench_mpi")
    env = dict(os.environ, **MPI_ENV)
    r = subprocess.run(MPIRUN + ["-np", str(ranks), exe] + args, capture_output=True, text=True, env=env,
                       timeout=timeout)
    if r.returncode != 0:
        die("%s on %d ranks failed (status %d):\n%s%s" % (" ".join(args), ranks, r.returncode, r.stdout, r.stderr))
    return r.stdout.strip().splitlines()[-1]


def formula_box(offset, extent):
    """The field's values in a box, as bench_mpi.cpp computes them (numpy, independently)."""
    i = np.arange(offset[0], offset[0] + extent[0], dtype=np.int64)[:, None, None]
    j = np.arange(offset[1], offset[1] + extent[1], dtype=np.int64)[None, :, None]
    k = np.arange(offset[2], offset[2] + extent[2], dtype=np.int64)[None, None, :]

    def tri(x, period, amp):
        m = x % period
        return amp * np.where(m < period // 2, m, period - m)

    smooth = tri(i, 256, 4) + tri(j, 512, 2) + tri(k, 384, 3)
    flat = ((i * COLS + j) * COLS + k).astype(np.uint64)
    noise = ((flat * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(56)).astype(np.int64)
    return ((smooth * 256 + noise).astype(np.float32) / np.float32(4096)).astype("<f4")


def zarrita_check(build, path, rows):
    """zarrita reads peer_box() of a zarrxt-written array; its SHA-256 must be the formula's."""
    env = dict(os.environ, ZARRXT_NODE_MODULES=os.path.join(build, "npm", "node_modules"))
    off, ext = peer_box(rows)
    r = sh(["node", os.path.join(HERE, "zarrita_box.mjs"), path, ",".join(map(str, off)), ",".join(map(str, ext))],
           env=env, timeout=1800)
    if r.returncode != 0:
        die("zarrita could not read %s:\n%s%s" % (path, r.stdout, r.stderr))
    got = r.stdout.strip().splitlines()[-1]
    want = hashlib.sha256(formula_box(off, ext).tobytes()).hexdigest()
    if got != want:
        die("zarrita read %s: SHA-256 %s, the formula gives %s" % (path, got, want))
    return got


def settle(path, seconds):
    """The same start for every operation: no dirty pages of earlier cases, and memory they freed
    already reported to the host (free page reporting waits 2 s), whichever case ran before."""
    subprocess.run(["sync", "-f", path])
    time.sleep(seconds)


def codec_summary(runs):
    """Medians over the trials' codec measurements, and the ratios taken trial by trial."""
    out = {"zstd_version": runs[0]["zstd_version"], "zlib_version": runs[0]["zlib_version"]}
    for k in ("zstd1_compress_mbps", "zstd1_decompress_mbps", "zstd1_ratio", "deflate1_compress_mbps",
              "deflate1_decompress_mbps", "deflate1_ratio"):
        out[k] = statistics.median(x[k] for x in runs)
    for op, k in (("write", "compress"), ("read", "decompress")):
        ratios = [x["zstd1_%s_mbps" % k] / x["deflate1_%s_mbps" % k] for x in runs]
        out[op + "_ratio"] = {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}
    return out


def clean(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


def run(args):
    build = os.path.abspath(args.build)
    scratch = os.path.abspath(args.scratch or os.path.join(build, "bench-mpi-data"))
    os.makedirs(scratch, exist_ok=True)
    ranks = [int(x) for x in args.ranks.split(",")]
    cases = args.cases.split(",") if args.cases else CASES
    rec = {"kind": "bench-mpi", "machine": machine(build, scratch), "rows": args.rows,
           "field": {"shape": [args.rows, COLS, COLS], "dtype": "float32", "bytes": args.rows * COLS * COLS * 4,
                     "shard": [64, 512, 512], "chunk": [32, 128, 128]},
           "trials_kept": args.trials, "ranks": ranks, "cases": cases}
    log("field hash")
    rec["field"]["sha256"] = mpirun(build, 1, ["hash", str(args.rows)])
    rec["settle_seconds"] = args.settle
    codec_runs = []
    results = {}
    peer = {}
    for p in ranks:
        for t in range(args.trials + 1):
            order = cases[t % len(cases):] + cases[:t % len(cases)]
            if t > 0:
                codec_runs.append(json.loads(mpirun(build, 1, ["codecs"])))
            for c in order:
                d = os.path.join(scratch, c)
                clean(d)
                settle(d, args.settle)
                w = json.loads(mpirun(build, p, ["write", c, d, str(args.rows)]))
                settle(d, args.settle)
                r = json.loads(mpirun(build, p, ["read", c, d, str(args.rows)]))
                if r["wrong_values"] != 0:
                    die("%s on %d ranks read %d wrong values" % (c, p, r["wrong_values"]))
                if c.startswith("zarrxt") and c not in peer and p == max(ranks) and t == 1:
                    log("zarrita checks %s" % c)
                    peer[c] = zarrita_check(build, os.path.join(d, "field"), args.rows)
                log("ranks %d trial %d %-13s write %7.2f s  read %7.2f s%s" % (
                    p, t, c, w["seconds"], r["seconds"], "" if t else "  (warm-up, discarded)"))
                if t > 0:
                    for op, x in (("write", w), ("read", r)):
                        e = results.setdefault("%s/%s/%d" % (c, op, p), {"case": c, "op": op, "ranks": p,
                                                                          "seconds": [], "peak_rss_kib": []})
                        e["seconds"].append(x["seconds"])
                        e["peak_rss_kib"].append(x["peak_rss_kib"])
                        e["stored_bytes"] = x["stored_bytes"]
                shutil.rmtree(d, ignore_errors=True)
    for e in results.values():
        e["median"] = statistics.median(e["seconds"])
        e["min"] = min(e["seconds"])
        e["max"] = max(e["seconds"])
    rec["results"] = list(results.values())
    rec["codec_runs"] = codec_runs
    rec["codecs"] = codec_summary(codec_runs)
    rec["peer_checks"] = {c: {"zarrita_box": peer_box(args.rows), "sha256": h} for c, h in peer.items()}
    rec["machine"]["load_end"] = os.getloadavg()
    return rec


def fmt_cell(e, nbytes):
    return "%.2f (%.2f–%.2f) s, %.0f MB/s" % (e["median"], e["min"], e["max"], nbytes / e["median"] / 1e6)


def markdown(rec):
    m = rec["machine"]
    res = {(e["case"], e["op"], e["ranks"]): e for e in rec["results"]}
    nbytes = rec["field"]["bytes"]
    cx = rec["codecs"]
    out = ["# Scale-out benchmark: zarrxt::mpi against parallel HDF5", ""]
    out.append("- machine: %s, %d cores, Linux %s; load average %s at the start, %s at the end" % (
        m["cpu"], m["cores"], m["kernel"], "/".join("%.1f" % x for x in m["load_start"]),
        "/".join("%.1f" % x for x in m["load_end"])))
    out.append("- build: %s (%s, -O%s, b_ndebug=%s); %s" % (m["compiler"], m["buildtype"], m["optimization"],
                                                              m["b_ndebug"], m["openmpi"]))
    out.append("- packages: " + ", ".join("%s %s" % kv for kv in m["packages"].items()))
    out.append("- commit %s%s; scratch file system %s" % (m["commit"], " (with local changes)" if m["dirty"] else "",
                                                          m["scratch_fs"]))
    out.append("- field: %s float32 (%.2f GiB), SHA-256 %s; zarrxt shards %s, inner chunks = HDF5 chunks %s" % (
        "x".join(map(str, rec["field"]["shape"])), nbytes / 2**30, rec["field"]["sha256"],
        "x".join(map(str, rec["field"]["shard"])), "x".join(map(str, rec["field"]["chunk"]))))
    out.append("- codecs on the field's chunks, one thread, measured in every kept trial (zstd %s, zlib %s), "
               "medians: zstd-1 compresses %.0f MB/s, decompresses %.0f MB/s, ratio %.3f; deflate-1 compresses "
               "%.0f MB/s, decompresses %.0f MB/s, ratio %.3f; zstd-1 over deflate-1 speed, trial by trial: "
               "compress %.2f (%.2f–%.2f), decompress %.2f (%.2f–%.2f)" % (
                   cx["zstd_version"], cx["zlib_version"], cx["zstd1_compress_mbps"], cx["zstd1_decompress_mbps"],
                   cx["zstd1_ratio"], cx["deflate1_compress_mbps"], cx["deflate1_decompress_mbps"],
                   cx["deflate1_ratio"], cx["write_ratio"]["median"], cx["write_ratio"]["min"],
                   cx["write_ratio"]["max"], cx["read_ratio"]["median"], cx["read_ratio"]["min"],
                   cx["read_ratio"]["max"]))
    out.append("- %d kept trials per figure after one warm-up; each a fresh mpirun, started after `sync` and a "
               "%.0f s pause; median (min–max) seconds of "
               "the slowest rank, from a barrier before open/create to a barrier after close, and the "
               "resulting MB/s of field data. Every read checked every value; zarrita's read of a box of each "
               "zarrxt array matched the formula's SHA-256." % (rec["trials_kept"], rec.get("settle_seconds", 0)))
    out.append("")
    for op in ("write", "read"):
        out.append("## %s" % op)
        out.append("")
        out.append("| ranks | " + " | ".join(rec["cases"]) + " |")
        out.append("|---|" + "---|" * len(rec["cases"]))
        for p in rec["ranks"]:
            cells = [fmt_cell(res[(c, op, p)], nbytes) if (c, op, p) in res else "–" for c in rec["cases"]]
            out.append("| %d | %s |" % (p, " | ".join(cells)))
        out.append("")
    out.append("## Ratios and goals")
    out.append("")
    out.append("Time ratios (< 1: zarrxt faster). E = floor / zarrxt (1: zarrxt as fast as the floor). The "
               "codec ratio is deflate-1's time over zstd-1's on the same chunks (compress for writes, "
               "decompress for reads), the median of the trials' own measurements: the speed-up to expect when both "
               "jobs are bound by their codec. The floor's speed-up (hdf5-deflate1 / floor-zstd1: zstd-1 and "
               "pread/pwrite, every core of the machine per rank) shows what a plain zstd job reaches: the work "
               "besides the codec (reading the compressed bytes, placing the values) costs the same whichever "
               "codec, and dilutes the speed-up.")
    out.append("")
    out.append("| op | ranks | zarrxt-raw / hdf5-raw | goal <= 1 | hdf5-deflate1 / zarrxt-zstd1 | codec ratio | "
               "goal: speed-up >= codec ratio | floor's speed-up | E raw (floor-io) | E zstd (floor-zstd1) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    goals = []
    for op in ("write", "read"):
        codec = cx[op + "_ratio"]["median"]
        for p in rec["ranks"]:
            g = lambda c: res.get((c, op, p), {}).get("median")  # noqa: E731
            raw = g("zarrxt-raw") / g("hdf5-raw") if g("zarrxt-raw") and g("hdf5-raw") else None
            speed = g("hdf5-deflate1") / g("zarrxt-zstd1") if g("hdf5-deflate1") and g("zarrxt-zstd1") else None
            floor_speed = (g("hdf5-deflate1") / g("floor-zstd1") if g("hdf5-deflate1") and g("floor-zstd1")
                           else None)
            e_raw = g("floor-io") / g("zarrxt-raw") if g("floor-io") and g("zarrxt-raw") else None
            e_z = g("floor-zstd1") / g("zarrxt-zstd1") if g("floor-zstd1") and g("zarrxt-zstd1") else None
            ok1 = raw is not None and raw <= 1
            ok2 = speed is not None and speed >= codec
            goals.append({"op": op, "ranks": p, "raw_ratio": raw, "deflate_speedup": speed, "codec_ratio": codec,
                          "raw_goal_met": ok1, "deflate_goal_met": ok2, "floor_speedup": floor_speed, "e_raw": e_raw,
                          "e_zstd": e_z})
            f = lambda x: "–" if x is None else "%.2f" % x  # noqa: E731
            out.append("| %s | %d | %s | %s | %s | %.2f | %s | %s | %s | %s |" % (
                op, p, f(raw), "yes" if ok1 else "**no**", f(speed), codec, "yes" if ok2 else "**no**",
                f(floor_speed), f(e_raw), f(e_z)))
    rec["goals"] = goals
    out.append("")
    out.append("Stored bytes: " + ", ".join(
        "%s %.3f GB" % (c, res[(c, "write", rec["ranks"][0])]["stored_bytes"] / 1e9)
        for c in rec["cases"] if (c, "write", rec["ranks"][0]) in res) + ".")
    out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--rows", type=int, default=512)
    ap.add_argument("--cases", default="")
    ap.add_argument("--scratch", default="")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds of pause before every operation")
    ap.add_argument("--quick", action="store_true", help="a 256 MiB field and 2 kept trials")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "records"))
    ap.add_argument("--render", metavar="JSON", help="write the Markdown of an existing record again (its data "
                    "unchanged) after the tables changed, and stop")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            rec = json.load(f)
        md = markdown(rec)
        with open(args.render[:-len(".json")] + ".md", "w") as f:
            f.write(md + "\n")
        print(md)
        return
    if not args.build:
        ap.error("--build is required")
    if args.quick:
        args.rows, args.trials = 64, 2
    rec = run(args)
    md = markdown(rec)
    stamp = datetime.datetime.utcnow().strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, "%s-%s-mpi" % (stamp, rec["machine"]["commit"][:8]))
    for ext, text in ((".json", json.dumps(rec, indent=1)), (".md", md)):
        if os.path.exists(base + ext):
            die("refusing to overwrite " + base + ext)
        with open(base + ext, "w") as f:
            f.write(text + "\n")
    print(md)
    log("record: %s.{json,md}" % base)


if __name__ == "__main__":
    main()
