#!/usr/bin/env bash
# usage: run_peers.sh MPI_TOOL -- MPIRUN [ARGS...]
# Four ranks write v2 and sharded v3 arrays (mpi_tool peers); zarr-python 2 and zarrita then read
# every value back, and read the arrays again through the consolidated metadata alone. A peer
# that is missing or cannot run fails the test.
set -u
tool="$1"; shift 2
src="${ZARRXT_SOURCE_DIR:?set by meson}"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
timeout -k 10 300 "$@" -np 4 "$tool" peers "$dir" || { echo "the 4-rank writer failed (status $?)"; exit 1; }
fail=0
/usr/bin/python3 "$src/tests/peers/zarr_python_peer.py" verify "$dir/v2" || fail=1
/usr/bin/python3 "$src/tests/mpi/consolidated_peer.py" "$dir/v2" || fail=1
node "$src/tests/peers/zarrita_peer.mjs" verify "$dir/v3" || fail=1
node "$src/tests/mpi/consolidated_peer.mjs" "$dir/v3" || fail=1
exit $fail
