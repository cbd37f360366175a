#!/usr/bin/python3
"""Turn meson's test logs into the line CI reads: "N passed, N failed".

Usage: summarize_tests.py LOG... [--failed WHAT]...  One testlog.json per build directory; each
--failed adds a failure that has no log, such as a build that did not compile.

A doctest executable counts as its number of test cases (from doctest's own summary line); any
other test counts as one. A test case that could not run for lack of something optional prints
a line starting with "ZARRXT-SKIP:"; those are reported as skipped, not passed.
"""
import json
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")


def count(path):
    """(passed, failed, skipped) of one testlog.json; failures are printed as they are found."""
    passed = failed = skipped = 0
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
        skips = sum(1 for l in out.splitlines() if l.startswith("ZARRXT-SKIP:"))
        m = None
        for m in SUMMARY.finditer(out):
            pass
        ok = result in ("OK", "EXPECTEDFAIL")
        if m and result in ("OK", "FAIL"):
            p, f = int(m.group(2)), int(m.group(3))
            skipped += skips
            passed += max(p - skips, 0)
            failed += f
            if result == "FAIL" and f == 0:
                failed += 1  # non-zero exit without a failed case (crash after the summary)
            if result == "FAIL":
                print(f"FAILED: {build}: {t.get('name')} ({result})")
        elif result == "SKIP":
            skipped += 1
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
    passed = failed = skipped = 0
    for path in paths:
        p, f, s = count(path)
        if len(paths) > 1:
            # Not in the "N passed, N failed" form: only the last line is the total.
            print(f"{path}: passed {p}, failed {f}, skipped {s}")
        passed, failed, skipped = passed + p, failed + f, skipped + s
    for what in extra:
        print(f"FAILED: {what}")
        failed += 1
    if skipped:
        print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
