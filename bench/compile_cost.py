#!/usr/bin/python3
"""What zarrxt costs a user's translation unit at compile time (issue 10, item 4).

    bench/compile_cost.py [--reps 3] [--compilers g++,clang++] [--trace] [--no-record]

Two programs that do the same numeric work: `plain` includes xtensor (xtensor, xview, xmath) and
nlohmann/json, fills a tensor, assigns a view expression and parses a JSON config; `zarrxt` does
the same and also creates a v3 array, writes the tensor, opens the array again and reads it back.
Each is compiled with `-std=c++20 -O2 -c` by each compiler, `--reps` times, the `zarrxt` unit
twice: header-only and with ZARRXT_SEPARATE_COMPILATION (its compiled part, <zarrxt/src.hpp>, is
built once and is not part of the user unit's cost). The figure is the CPU time of the compiler
(user + system, the median of the repetitions); the targets are zarrxt/plain <= 1.5 header-only and
<= 1.2 with separate compilation.

Before timing anything, both zarrxt variants are linked and run (the separate one against its
compiled part) and must print the same checksum as `plain`: the measured programs do the work.

`--trace` also compiles the zarrxt unit with clang++ -ftime-trace and lists where the time goes
(headers by inclusive parse time, the costliest template instantiations, front end vs back end).
The record goes to bench/records/<UTC time>-<commit>-compile.{json,md} unless --no-record.
"""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# The benchmark harness's helpers (machine, git state, timing of a build command).
from harness import ROOT, build_failed, git_info, machine_info, portable, sh, timed
TARGETS = {"header_only": 1.5, "separate": 1.2}

COMMON_HEAD = r"""#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>
#include <xtensor/xmath.hpp>
#include <nlohmann/json.hpp>
"""

COMMON_WORK = r"""
    const auto config = nlohmann::json::parse(R"({"rows": 300, "cols": 200, "scale": 0.5})");
    const std::size_t rows = config.at("rows").get<std::size_t>();
    const std::size_t cols = config.at("cols").get<std::size_t>();
    xt::xtensor<float, 2> a = xt::xtensor<float, 2>::from_shape({rows, cols});
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j)
            a(i, j) = static_cast<float>((i * 7 + j * 3) % 101);
    xt::xtensor<float, 2> b = xt::view(a, xt::range(1, rows - 1), xt::all()) * config.at("scale").get<float>() + 1.0f;
"""

PLAIN = COMMON_HEAD + r"""
#include <cstdio>

int main()
{""" + COMMON_WORK + r"""
    std::printf("checksum %.1f\n", static_cast<double>(xt::sum(b)()));
    return 0;
}
"""

ZARRXT = COMMON_HEAD + r"""#include <zarrxt/zarrxt.hpp>

#include <cstdio>

int main(int argc, char** argv)
{""" + COMMON_WORK + r"""
    zarrxt::filesystem_store store{argc > 1 ? argv[1] : "compile-cost.zarr"};
    auto w = zarrxt::create<float, 2>(store, "b",
                                      zarrxt::v3_options{.shape = {rows - 2, cols}, .chunk_shape = {64, 64}, .overwrite = true});
    w.write({{0, 0}, {rows - 2, cols}}, b);
    const auto r = zarrxt::open<float, 2>(store, "b").read({{0, 0}, {rows - 2, cols}});
    if (r != b)
    {
        std::printf("read back differs\n");
        return 1;
    }
    std::printf("checksum %.1f\n", static_cast<double>(xt::sum(r)()));
    return 0;
}
"""

COMPILED_PART = r"""#include <zarrxt/src.hpp>
"""

# The libraries zarrxt's config.hpp finds by __has_include (linked only when the header exists).
OPTIONAL_LIBS = [("zlib.h", "z"), ("zstd.h", "zstd"), ("libdeflate.h", "deflate"), ("blosc.h", "blosc"),
                 ("lz4.h", "lz4"), ("bzlib.h", "bz2"), ("lzma.h", "lzma")]


def log(msg):
    print("[compile-cost] " + msg, file=sys.stderr, flush=True)


def run_checked(cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if p.returncode != 0:
        sys.exit("[compile-cost] ERROR: %s failed:\n%s" % (" ".join(cmd), (p.stdout + p.stderr)[-3000:]))
    return p.stdout


def libs_for(compiler, tmp):
    """-l flags of the optional libraries whose headers this compiler sees."""
    out = []
    for header, lib in OPTIONAL_LIBS:
        probe = os.path.join(tmp, "probe.cpp")
        with open(probe, "w") as f:
            f.write("#include <%s>\nint main() { return 0; }\n" % header)
        if subprocess.run([compiler, "-fsyntax-only", probe], capture_output=True).returncode == 0:
            out.append("-l" + lib)
    return out


def variants():
    """name -> (source, extra flags)."""
    return {
        "plain": ("plain.cpp", []),
        "header_only": ("zarrxt.cpp", []),
        "separate": ("zarrxt.cpp", ["-DZARRXT_SEPARATE_COMPILATION"]),
    }


def base_flags():
    return ["-std=c++20", "-O2", "-I" + os.path.join(ROOT, "include")]


def verify(compiler, tmp):
    """Link and run every variant once; all must print plain's checksum."""
    libs = libs_for(compiler, tmp) + ["-pthread"]
    flags = base_flags()
    run_checked([compiler] + flags + ["-DZARRXT_SEPARATE_COMPILATION", "-c", "compiled.cpp", "-o", "compiled.o"], tmp)
    outputs = {}
    for name, (src, extra) in variants().items():
        exe = os.path.join(tmp, name + ".exe")
        objs = ["compiled.o"] if name == "separate" else []
        run_checked([compiler] + flags + extra + [src] + objs + ["-o", exe] + libs, tmp)
        outputs[name] = run_checked([exe, os.path.join(tmp, name + ".zarr")], tmp).strip()
    if len(set(outputs.values())) != 1:
        sys.exit("[compile-cost] ERROR: the programs disagree: %r" % outputs)
    return outputs["plain"]


def measure(compiler, tmp, reps):
    times = {name: [] for name in variants()}
    for _ in range(reps):
        # Interleaved, so a slow phase of the machine hits every variant alike.
        for name, (src, extra) in variants().items():
            try:
                wall, cpu = timed([compiler] + base_flags() + extra + ["-c", src, "-o", name + ".o"], cwd=tmp)
            except build_failed as e:
                sys.exit("[compile-cost] ERROR: %s" % e)
            times[name].append({"wall_s": wall, "cpu_s": cpu})
    res = {}
    for name, ts in times.items():
        cpu = [t["cpu_s"] for t in ts]
        res[name] = {"cpu_s": statistics.median(cpu), "cpu_min_s": min(cpu), "cpu_max_s": max(cpu),
                     "wall_s": statistics.median([t["wall_s"] for t in ts]), "trials": ts}
    res["ratio_header_only"] = res["header_only"]["cpu_s"] / res["plain"]["cpu_s"]
    res["ratio_separate"] = res["separate"]["cpu_s"] / res["plain"]["cpu_s"]
    return res


def trace(tmp, extra, top=12):
    """clang++ -ftime-trace of the zarrxt unit: where its front end and back end spend the time."""
    clang = shutil.which("clang++")
    if clang is None:
        return {"skipped": "clang++ not found"}
    run_checked([clang] + base_flags() + extra + ["-ftime-trace", "-c", "zarrxt.cpp", "-o", "trace.o"], tmp)
    with open(os.path.join(tmp, "trace.json")) as f:
        events = json.load(f)["traceEvents"]
    totals = {}
    sources = {}
    inst = {}
    for e in events:
        name, dur = e.get("name", ""), e.get("dur", 0) / 1e6
        detail = (e.get("args") or {}).get("detail", "")
        if name.startswith("Total "):
            totals[name[6:]] = totals.get(name[6:], 0) + dur
        elif name == "Source":
            # Inclusive time per header: a header parsed inside another counts in both.
            key = portable(detail)
            sources[key] = sources.get(key, 0) + dur
        elif name in ("InstantiateFunction", "InstantiateClass"):
            key = portable(detail)[:160]
            inst[key] = inst.get(key, 0) + dur

    def head(d):
        return [[k, round(v, 3)] for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:top]]

    keep = ["ExecuteCompiler", "Frontend", "Backend", "Source", "ParseClass", "InstantiateFunction",
            "InstantiateClass", "PerformPendingInstantiations", "CodeGen Function", "OptFunction",
            "OptModule"]
    return {"totals_s": {k: round(totals[k], 3) for k in keep if k in totals},
            "headers_s": head(sources), "instantiations_s": head(inst)}


def markdown(rec):
    out = ["# Compile cost of a user translation unit", ""]
    m = rec["machine"]
    out.append("- machine: %s, %d cores, %s; load average %s at the start, %s at the end" % (
        m["cpu_model"], m["cores"], m["kernel"], m["load_start"], m["load_end"]))
    out.append("- commit %s%s; flags `%s`; %d repetitions, median CPU seconds (user + system) of the compiler" % (
        rec["commit"], " (dirty tree)" if rec["dirty"] else "", " ".join(rec["flags"]), rec["reps"]))
    out.append("- programs: bench/compile_cost.py (`plain`: xtensor + json work; `zarrxt`: the same plus "
               "create, write, open, read); every variant was linked and run and printed `%s`" % rec["checksum"])
    out.append("")
    out.append("| compiler | plain s | zarrxt header-only s | ratio (target <= %.1f) | zarrxt separate s | ratio (target <= %.1f) |"
               % (TARGETS["header_only"], TARGETS["separate"]))
    out.append("|---|---|---|---|---|---|")
    for c, r in rec["compilers"].items():
        out.append("| %s | %.2f | %.2f | **%.2f** %s | %.2f | **%.2f** %s |" % (
            r["version"], r["plain"]["cpu_s"], r["header_only"]["cpu_s"], r["ratio_header_only"],
            "met" if r["ratio_header_only"] <= TARGETS["header_only"] else "missed",
            r["separate"]["cpu_s"], r["ratio_separate"],
            "met" if r["ratio_separate"] <= TARGETS["separate"] else "missed"))
    for mode, t in rec.get("trace", {}).items():
        if "totals_s" not in t:
            continue
        out += ["", "## clang -ftime-trace of the zarrxt unit, %s" % mode, ""]
        out.append("Totals (s): " + ", ".join("%s %.2f" % kv for kv in t["totals_s"].items()))
        out += ["", "| header (inclusive parse time) | s |", "|---|---|"]
        out += ["| `%s` | %.2f |" % (k, v) for k, v in t["headers_s"]]
        out += ["", "| instantiation | s |", "|---|---|"]
        out += ["| `%s` | %.2f |" % (k.replace("|", "\\|"), v) for k, v in t["instantiations_s"]]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--compilers", default="g++,clang++")
    ap.add_argument("--trace", action="store_true", help="add a clang -ftime-trace breakdown")
    ap.add_argument("--no-record", action="store_true", help="print the Markdown, write no record")
    args = ap.parse_args()

    load_start = "%.1f/%.1f/%.1f" % os.getloadavg()
    rec = dict(git_info())
    commit = rec["commit"] or "unknown"
    rec.update({"reps": args.reps, "flags": base_flags()[:2], "compilers": {},
                "targets": TARGETS})
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("plain.cpp", PLAIN), ("zarrxt.cpp", ZARRXT), ("compiled.cpp", COMPILED_PART)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        for compiler in [c for c in args.compilers.split(",") if c]:
            if shutil.which(compiler) is None:
                log("%s not found; skipped" % compiler)
                continue
            log("%s: link and run every variant" % compiler)
            rec["checksum"] = verify(compiler, tmp)
            log("%s: %d timed repetitions" % (compiler, args.reps))
            r = measure(compiler, tmp, args.reps)
            r["version"] = ((sh([compiler, "--version"]) or "?").splitlines() or ["?"])[0]
            rec["compilers"][compiler] = r
            log("%s: header-only %.2fx, separate %.2fx" % (compiler, r["ratio_header_only"], r["ratio_separate"]))
        if args.trace:
            log("clang -ftime-trace")
            rec["trace"] = {"header-only": trace(tmp, []),
                            "separate": trace(tmp, ["-DZARRXT_SEPARATE_COMPILATION"])}
    rec["machine"] = dict(machine_info(), load_start=load_start, load_end="%.1f/%.1f/%.1f" % os.getloadavg())
    md = markdown(rec)
    if args.no_record:
        print(md)
        return 0
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = os.path.join(ROOT, "bench", "records", "%s-%s-compile" % (stamp, commit[:8]))
    with open(base + ".json", "w") as f:
        json.dump(rec, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(md)
    log("record: %s.{json,md}" % os.path.relpath(base, ROOT))
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
