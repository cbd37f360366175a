#!/usr/bin/python3
"""Ways of preparing read()'s fresh result, side by side with the peers (issue 11, item 6).

    fresh_ab.py --build DIR [--trials N] [--arrays NAME,NAME,...]

Reads each W2 array (1e8 uint8, BENCHMARKS.md; the data set of harness.py, written by it if
missing) whole, one thread, in fresh processes: zarrxt four ways (bench/w2 --fresh: `read` is
read() itself, `advice` the huge-page advice alone, `plain` nothing, `populate` 4 KiB pages mapped
first) and every peer that reads the array (python3-zarr, GDAL, zarrita; each is asked first, as
harness.py does). The runners of one trial run in an order rotated from trial to trial, so none
always follows the same neighbour (whose freed memory the next process meets); the first trial is
discarded. Every answer's SHA-256 is checked against the formula's.

Writes bench/records/<time>-<commit>-fresh.json and .md: per array and runner the median, the
quartiles and the range of the timed read, with the machine, build, versions and data hash.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness as hb  # noqa: E402  (data sets, formulas, peers, machine and build description)

WAYS = ["read", "advice", "plain", "populate"]
DEFAULT_ARRAYS = [
    hb.w2_array_name(layout, kind, codec)
    for layout in ["v2", "a", "c"]
    for kind in hb.W2_KINDS
    for codec in hb.W2_CODECS
]


def quartiles(values):
    v = sorted(values)
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="the release build directory (scripts/bench's)")
    ap.add_argument("--trials", type=int, default=9, help="kept trials per array (default 9)")
    ap.add_argument("--arrays", default=",".join(DEFAULT_ARRAYS), help="comma-separated W2 array names")
    ap.add_argument("--records", default=os.path.join(HERE, "records"))
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    exe = os.path.join(build, "bench", "w2")
    vers = hb.versions(build)
    node_env = hb.make_node_env(build, vers)
    w2_dir, data_info = hb.ensure_data(os.path.join(build, "bench-data"), "w2", node_env)

    now = datetime.datetime.now(datetime.timezone.utc)
    git = hb.git_info()
    rid = now.strftime("%Y%m%d-%H%M%S") + "-" + (git["commit"] or "unknown")[:8] + "-fresh"
    rec = {
        "id": rid,
        "machine": hb.machine_info(),
        "build": hb.build_info(build),
        "versions": vers,
        "git": git,
        "data": {"w2": data_info},
        "trials": args.trials,
        "unavailable": [],
        "arrays": [],
    }
    for name in args.arrays.split(","):
        layout, rest = name.split("_", 1)
        kind = "semi_random" if rest.startswith("semi_random") else "repeated"
        codec = rest[len(kind) + 1 :]
        shard = hb.W2_LAYOUTS.get(layout, 0)
        common = ["--data", kind, "--n", str(hb.W2_N), "--chunk", str(hb.W2_CHUNK), "--shard", str(shard)]
        common += ["--codec", codec, "--threads", "1"]
        runners = {}
        for way in WAYS:
            cmd = [exe, "--op", "read", "--dir", w2_dir, "--name", name, "--fresh", way] + common
            runners["zarrxt " + way] = (cmd, None)
        for p, mk in hb.W2_PEERS.items():
            reason = hb.probe(mk(w2_dir, name, kind, "8"), env=node_env)
            if reason is None:
                runners[p] = (mk(w2_dir, name, kind), node_env)
            else:
                rec["unavailable"].append({"peer": p, "array": name, "reason": reason})
        want = hb.w2_expected_sha(kind, hb.W2_N)
        order = list(runners)
        got = {k: [] for k in order}
        into = {k: [] for k in order}
        for t in range(1 + args.trials):
            hb.log("%s trial %d/%d" % (name, t, args.trials))
            rot = order[t % len(order) :] + order[: t % len(order)]
            for who in rot:
                cmd, env = runners[who]
                r = hb.run(cmd, env=env)
                hb.check_sha(who, name, r["sha256"], want)
                if t > 0:
                    got[who].append(r["ns"] if "ns" in r else r["read_ns"])
                    if "into_ns" in r:
                        into[who].append(r["into_ns"])
        rows = []
        for who in order:
            q1, q3 = quartiles(got[who])
            rows.append(
                {
                    "who": who,
                    "median_ns": statistics.median(got[who]),
                    "q1_ns": q1,
                    "q3_ns": q3,
                    "min_ns": min(got[who]),
                    "max_ns": max(got[who]),
                    "trials_ns": got[who],
                    "into_median_ns": statistics.median(into[who]) if into[who] else None,
                }
            )
        rec["arrays"].append({"array": name, "rows": rows})

    os.makedirs(args.records, exist_ok=True)
    base = os.path.join(args.records, rid)
    with open(base + ".json", "w") as f:
        json.dump(rec, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(markdown(rec))
    hb.log("wrote %s.md" % base)


def markdown(rec):
    ms = lambda ns: "%.1f" % (ns / 1e6)  # noqa: E731
    m = rec["machine"]
    out = ["# Fresh results: read() against other ways and the peers (%s)" % rec["id"], ""]
    out.append("`bench/fresh_ab.py`: each W2 array (1e8 uint8) read whole on one thread, one fresh process per")
    out.append("trial, runners in an order rotated every trial, %d kept trials after one discarded." % rec["trials"])
    out.append("zarrxt `read` is read() (detail/fresh_memory.hpp); `advice` the huge-page advice alone (read()")
    out.append("before it); `plain` no preparation; `populate` 4 KiB pages mapped first. Every answer's SHA-256")
    out.append("matched the formula's. Times in ms: the timed read (for the peers their own read call).")
    out.append("")
    out.append("- machine: %s, %d cores, %.1f GiB, kernel %s" % (m["cpu_model"], m["cores"],
                                                                 m["mem_total_bytes"] / 2**30, m["kernel"]))
    out.append("- build: %s %s" % (rec["build"]["compiler_version"], " ".join(rec["build"]["flags"])))
    out.append("- commit %s%s" % (rec["git"]["commit"], " (dirty)" if rec["git"]["dirty"] else ""))
    d = rec["data"]["w2"]
    out.append("- data w2: SHA-256 of manifest %s (%d files)" % (d["sha256"][:16], d["files"]))
    v = rec["versions"]
    out.append("- peers: python3-zarr %s, numpy %s, GDAL %s, zarrita %s (node %s)" % (
        v.get("python3-zarr"), v.get("numpy"), v.get("gdal"), v.get("zarrita"), v.get("node")))
    out.append("")
    for a in rec["arrays"]:
        out.append("## %s" % a["array"])
        out.append("")
        out.append("| runner | median | q1 | q3 | min | max | into (median) |")
        out.append("|---|---|---|---|---|---|---|")
        for r in a["rows"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                r["who"], ms(r["median_ns"]), ms(r["q1_ns"]), ms(r["q3_ns"]), ms(r["min_ns"]),
                ms(r["max_ns"]), ms(r["into_median_ns"]) if r["into_median_ns"] is not None else ""))
        out.append("")
    if rec["unavailable"]:
        out.append("Peers that cannot read an array (asked with an 8-element read):")
        out.append("")
        for u in rec["unavailable"]:
            out.append("- %s, %s: %s" % (u["peer"], u["array"], u["reason"]))
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
