#!/usr/bin/env bash
# usage: check_compile.sh pass|fail EXPECTED_TEXT SOURCE COMPILER [ARGS...]
# "fail" passes only when compilation fails AND the diagnostics contain EXPECTED_TEXT, so an
# unrelated error (a typo, a missing header) cannot make a compile-fail test pass.
mode="$1"; expected="$2"; src="$3"; shift 3
out=$("$@" "$src" 2>&1); rc=$?
if [ "$mode" = pass ]; then
  [ $rc -eq 0 ] && exit 0
  printf '%s\n' "$out" | head -40; exit 1
fi
if [ $rc -eq 0 ]; then
  echo "expected a compile error, but $src compiled"; exit 1
fi
if printf '%s' "$out" | grep -qF -- "$expected"; then
  echo "refused as expected: $expected"; exit 0
fi
echo "compile error without the expected message \"$expected\":"; printf '%s\n' "$out" | grep -m5 error; exit 1
