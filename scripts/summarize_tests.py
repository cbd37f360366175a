#!/usr/bin/python3
"""Turn meson's test logs into the line CI reads: "N passed, N failed".

Usage: summarize_tests.py LOG... [--failed WHAT]...  One testlog.json per build directory; each
--failed adds a failure that has no log, such as a build that did not compile.

A doctest executable counts as its number of test cases (from doctest's own summary line); any
other test counts as one. A test case that could not run for lack of something optional prints
a line starting with "ZARRXT-SKIP:"; those are reported as skipped, not passed, with their reason.

A skip can never hide a failure:
- a test that meson reports as SKIP (exit status 77, which is also libFuzzer's default for a
  finding) is counted as failed: no test of this project skips that way on purpose;
- a doctest executable that ran no test case (a suite whose --source-file filter matched
  nothing) is counted as failed;
- with ZARRXT_REQUIRE_PEERS=1 (scripts/test sets it after installing the peers), a
  "ZARRXT-SKIP: peer: ..." or "ZARRXT-SKIP: corpus: ..." line is counted as failed too (the test
  itself fails in that case; this is the second lock).
"""
import json
import os
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")


REQUIRED_SKIP = re.compile(r"ZARRXT-SKIP: (peer|corpus): ")

# Lines of a failed test's output that say why it failed: doctest's failed checks and their
# values, libFuzzer's and the sanitizers' reports, the fuzz targets' contract messages, the
# artifact and its bytes. CI keeps only the end of this script's output, so these are printed
# just above the totals.
TELLING = re.compile(r"ERROR|error:|CHECK|REQUIRE|values:|logged:|contract violated|SUMMARY|ALARM|"
                     r"Test unit written|^Base64|^0x[0-9a-f]|out-of-memory|timeout|Assertion|terminate")
TELLING_MAX = 14


def telling_lines(out):
    """At most TELLING_MAX lines of `out` that explain a failure, each cut to 300 characters."""
    picked = [l.strip()[:300] for l in out.splitlines() if TELLING.search(l)]
    if not picked:
        picked = [l.strip()[:300] for l in out.splitlines() if l.strip()][-TELLING_MAX:]
    return picked[:TELLING_MAX]


def count(path, require_peers=False, reasons=None, why=None):
    """(passed, failed, skipped) of one testlog.json; failures are printed as they are found, skip
    reasons collected into `reasons` and the telling lines of failed tests into `why`."""
    passed = failed = skipped = 0
    reasons = {} if reasons is None else reasons
    why = [] if why is None else why
    build = path.split("/meson-logs/")[0].rstrip("/").split("/")[-1]
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"cannot read {path}: {e}")
        return 0, 1, 0
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        skip_lines = [l for l in out.splitlines() if l.startswith("ZARRXT-SKIP:")]
        required = [l for l in skip_lines if REQUIRED_SKIP.match(l)] if require_peers else []
        for l in skip_lines:
            if l in required:
                continue
            key = f"{build}: {t.get('name')}: {l[len('ZARRXT-SKIP:'):].strip()}"
            reasons[key] = reasons.get(key, 0) + 1
        for l in required:
            print(f"FAILED: {build}: {t.get('name')}: a peer or corpus test skipped although "
                  f"ZARRXT_REQUIRE_PEERS=1: {l}")
        skips = len(skip_lines) - len(required)
        m = None
        for m in SUMMARY.finditer(out):
            pass
        ok = result in ("OK", "EXPECTEDFAIL")
        if not ok:
            why.append((f"{build}: {t.get('name')}", telling_lines(out)))
        if m and int(m.group(1)) == 0:
            # A doctest run with no test case: its filter (or its files) lost every test.
            failed += 1
            print(f"FAILED: {build}: {t.get('name')} ran no test case")
        elif m and result in ("OK", "FAIL"):
            p, f = int(m.group(2)), int(m.group(3))
            skipped += skips
            passed += max(p - skips - len(required), 0)
            failed += f + len(required)
            if result == "FAIL" and f == 0:
                failed += 1  # non-zero exit without a failed case (crash after the summary)
            if result == "FAIL":
                print(f"FAILED: {build}: {t.get('name')} ({result})")
        elif result == "SKIP":
            failed += 1
            print(f"FAILED: {build}: {t.get('name')} (SKIP: exit status {t.get('returncode')}; "
                  f"no test skips that way on purpose, and it is libFuzzer's default status for a finding)")
        elif ok and required:
            failed += 1
        elif ok:
            passed += 1
        else:
            failed += 1
            print(f"FAILED: {build}: {t.get('name')} ({result})")
    return passed, failed, skipped


def main(args):
    paths = []
    extra = []
    i = 0
    while i < len(args):
        if args[i] == "--failed" and i + 1 < len(args):
            extra.append(args[i + 1])
            i += 2
            continue
        paths.append(args[i])
        i += 1
    if not paths and not extra:
        paths = ["build/meson-logs/testlog.json"]
    require_peers = os.environ.get("ZARRXT_REQUIRE_PEERS") == "1"
    reasons = {}
    why = []
    passed = failed = skipped = 0
    for path in paths:
        p, f, s = count(path, require_peers, reasons, why)
        if len(paths) > 1:
            # Not in the "N passed, N failed" form: only the last line is the total.
            print(f"{path}: passed {p}, failed {f}, skipped {s}")
        passed, failed, skipped = passed + p, failed + f, skipped + s
    for what in extra:
        print(f"FAILED: {what}")
        failed += 1
    for reason, n in sorted(reasons.items()):
        print(f"skipped: {reason}" + (f" ({n} times)" if n > 1 else ""))
    if skipped:
        print(f"{skipped} skipped")
    for name, lines in why:
        print(f"why {name} failed:")
        for l in lines:
            print(f"    {l}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
