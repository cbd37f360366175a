#!/usr/bin/env bash
# usage: run_example.sh EXECUTABLE EXPECTED: run the example in a fresh directory and diff its output.
set -u
exe="$1"; expected="$2"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
out=$("$exe" "$dir" 2>&1); rc=$?
if [ $rc -ne 0 ]; then printf '%s\n' "$out"; echo "exit status $rc"; exit 1; fi
diff -u "$expected" <(printf '%s\n' "$out")
