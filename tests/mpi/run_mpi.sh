#!/usr/bin/env bash
# usage: run_mpi.sh EXPECTED|- SECONDS -- MPIRUN [ARGS...]
# Run an MPI job in a fresh directory (substituted for @DIR@ in ARGS) under a time limit, so a
# rank stuck in a collective fails the test instead of stalling the suite; compare its output
# with EXPECTED unless that is "-". A job that cannot start fails: it is never a skip.
set -u
expected="$1"; seconds="$2"; shift 3
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
args=()
for a in "$@"; do args+=("${a//@DIR@/$dir}"); done
out=$(timeout -k 10 "$seconds" "${args[@]}" 2>&1); rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  printf '%s\n' "$out"; echo "timed out after $seconds s: a rank hung"; exit 1
fi
if [ $rc -ne 0 ]; then printf '%s\n' "$out"; echo "exit status $rc"; exit 1; fi
if [ "$expected" = "-" ]; then printf '%s\n' "$out"; exit 0; fi
diff -u "$expected" <(printf '%s\n' "$out")
