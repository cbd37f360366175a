#!/usr/bin/env bash
# usage: run_kill.sh MPI_TOOL -- MPIRUN [ARGS...]
# Crash safety under MPI: four ranks write generation after generation of a sharded array (odd
# ones shard-aligned, even ones through owner routing; fsync'ed writes) and rank 2 is SIGKILLed:
# in three rounds at a random moment, then in rounds that freeze it (SIGSTOP) while one of its
# shard writes is in progress (its temporary file, named with its pid, exists) and kill it there,
# until one such kill has left that temporary file behind, i.e. really interrupted a shard write
# (at most 10 tries: otherwise the test fails, having shown nothing). After every kill every shard must hold the
# old or the new generation, whole (mpi_tool check). A last full write shows the array is still
# usable.
set -u
tool="$1"; shift 2
mpirun=("$@")
dir=$(mktemp -d)
log="$dir.log"
trap 'rm -rf "$dir" "$log"' EXIT
temps() { find "$dir/k" -name ".zarrxt-tmp-$1-*" | wc -l; }

timeout 300 "${mpirun[@]}" -np 4 "$tool" generations "$dir" 1 1 || { echo "generation 1 failed"; exit 1; }
next=2
interrupted=0
round=0
while [ $round -lt 3 ] || { [ $interrupted -eq 0 ] && [ $round -lt 13 ]; }; do
  round=$((round + 1))
  rm -f "$dir"/pid-* "$dir/done"
  # Far more generations than can finish before the kill comes (at most a second after the first
  # one is done, or when a shard write is caught): 15 once did, on a fast machine, and the round
  # then had nothing to kill. The kill ends the job either way; 255 is the last generation the
  # array's values can encode.
  last=$((next + 1000 > 255 ? 255 : next + 1000))
  timeout 300 "${mpirun[@]}" -np 4 "$tool" generations "$dir" "$next" "$last" > "$log" 2>&1 &
  job=$!
  # Wait for a first generation of this round to be complete.
  for _ in $(seq 1200); do [ -s "$dir/done" ] && [ -s "$dir/pid-2" ] && break; sleep 0.05; done
  if [ ! -s "$dir/done" ] || [ ! -s "$dir/pid-2" ]; then
    cat "$log"; echo "round $round: the writers never completed a generation"; kill "$job"; exit 1
  fi
  pid=$(cat "$dir/pid-2")
  if [ $round -le 3 ]; then
    how="at a random moment"
    sleep "0.$((RANDOM % 90 + 10))"
  else
    how="inside a shard write"
    # Seen a temporary file of rank 2: stop it (SIGSTOP), and if the file is still there the
    # shard write is frozen half-way; otherwise the rename won the race: let it go and look again.
    pattern="$dir/k/c/*/0/.zarrxt-tmp-$pid-*"
    for _ in $(seq 20000); do
      if compgen -G "$pattern" > /dev/null; then
        kill -STOP "$pid"
        compgen -G "$pattern" > /dev/null && break
        kill -CONT "$pid"
      fi
      sleep 0.001
    done
  fi
  kill -9 "$pid"
  wait "$job"; rc=$?
  if [ $rc -eq 0 ]; then echo "round $round: all generations finished before the kill"; exit 1; fi
  if [ $rc -eq 124 ]; then cat "$log"; echo "round $round: the job hung after the kill"; exit 1; fi
  done_gen=$(cat "$dir/done")
  left=$(temps "$pid") # rank 2's own unfinished shard writes
  [ "$left" -gt 0 ] && interrupted=$((interrupted + 1))
  echo "round $round: rank 2 killed $how after generation $done_gen was complete (job status $rc);" \
       "its shard writes interrupted: $left"
  # Generation done_gen is on disk everywhere; the one after it (or, if rank 0 had not yet noted
  # it, the one after that) may be on some shards: old or new, never a mix.
  "${mpirun[@]}" -np 1 "$tool" check "$dir" "$done_gen" $((done_gen + 2)) || { echo "round $round: FAILED"; exit 1; }
  next=$((done_gen + 3))
done
if [ "$interrupted" -eq 0 ]; then echo "no kill landed inside a shard write of rank 2: the test showed nothing"; exit 1; fi
echo "$interrupted of $round kills interrupted a shard write of rank 2"
timeout 300 "${mpirun[@]}" -np 4 "$tool" generations "$dir" "$next" "$next" || { echo "the last write failed"; exit 1; }
"${mpirun[@]}" -np 1 "$tool" check "$dir" "$next" "$next" || exit 1
