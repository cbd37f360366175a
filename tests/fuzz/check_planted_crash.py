#!/usr/bin/env python3
"""A fuzz finding must fail the suite, never pass as a skip.

Usage: check_planted_crash.py MESON BUILD_DIR SUMMARIZE_SCRIPT

Runs the suite fuzz_planted of BUILD_DIR (fuzz_metadata_v2 with the same libFuzzer arguments as
the fuzz suite, on an input that the target rejects as a contract violation when
ZARRXT_FUZZ_PLANTED_CRASH is set) through `meson test`, and requires: meson exits non-zero, its
log records the test as FAIL (not SKIP, which libFuzzer's default exit status 77 would give), the
target printed the planted violation, and scripts/summarize_tests.py counts exactly one failure
and prints the violation among its last lines (all that CI keeps).
"""
import json
import os
import subprocess
import sys


def main(meson, build, summarize):
    logbase = "fuzz-planted"
    # meson appends the setup's name to the log base (meson 1.0: fuzz-planted-planted_crash.json).
    candidates = [os.path.join(build, "meson-logs", name + ".json")
                  for name in (logbase + "-planted_crash", logbase)]
    for c in candidates:
        if os.path.exists(c):
            os.remove(c)
    run = subprocess.run(
        [meson, "test", "-C", build, "--no-rebuild", "--setup", "planted_crash", "--suite", "fuzz_planted",
         "--logbase", logbase, "--print-errorlogs"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    problems = []
    log = next((c for c in candidates if os.path.exists(c)), candidates[0])
    if run.returncode == 0:
        problems.append("meson test exited 0 on a planted crash")
    try:
        with open(log, encoding="utf-8") as f:
            results = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        results = []
        problems.append(f"no log {log}: {e}")
    if len(results) != 1:
        problems.append(f"expected one test in {log}, found {len(results)}")
    for r in results:
        if r.get("result") != "FAIL":
            problems.append(f"{r.get('name')} is {r.get('result')}, expected FAIL (exit status {r.get('returncode')})")
        out = (r.get("stdout") or "") + (r.get("stderr") or "")
        if "zarrxt fuzz contract violated: planted crash" not in out:
            problems.append("the target did not report the planted violation")
    summary = subprocess.run([sys.executable, summarize, log], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    last = summary.stdout.strip().splitlines()[-1] if summary.stdout.strip() else ""
    if summary.returncode == 0 or last != "0 passed, 1 failed":
        problems.append(f"summarize_tests.py says {last!r} (exit {summary.returncode}), expected '0 passed, 1 failed'")
    # CI keeps only the end of the output: the reason must be printed there, in the last "why"
    # block, between its header and the totals.
    out_lines = summary.stdout.strip().splitlines()
    headers = [i for i, l in enumerate(out_lines) if l.startswith("why ")]
    tail = out_lines[headers[-1]:] if headers else []
    if not any("contract violated: planted crash" in l for l in tail):
        problems.append("summarize_tests.py does not print the violation among its last lines")
    if problems:
        print(run.stdout[-4000:])
        print("\n".join("FAIL: " + p for p in problems))
        return 1
    print(f"a planted crash fails the suite: meson test exit {run.returncode}, result FAIL, summary {last!r}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
