#!/usr/bin/python3
"""Turn meson's test log into the line CI reads: "N passed, N failed".

A doctest executable counts as its number of test cases (from doctest's own summary line); any
other test counts as one. A test case that could not run for lack of something optional prints
a line starting with "ZARRXT-SKIP:"; those are reported as skipped, not passed.
"""
import json
import re
import sys

SUMMARY = re.compile(r"\[doctest\] test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed")


def main(path):
    passed = failed = skipped = 0
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        print(f"cannot read {path}: {e}")
        print("0 passed, 1 failed")
        return 1
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
        elif result == "SKIP":
            skipped += 1
        elif ok:
            passed += 1
        else:
            failed += 1
            print(f"FAILED: {t.get('name')} ({result})")
    if skipped:
        print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"))
