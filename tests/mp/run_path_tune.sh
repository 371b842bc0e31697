#!/usr/bin/env bash
# mp_path_tune under COLLIE_LOG=debug: every call exact (the program checks), and the log
# shows that the decider of each collective timed both ways and chose one: rank 0 for
# allreduce, the root (P - 1) for reduce and bcast; then reduce and bcast with the root
# moving every call, checked exact.  The algorithms that have the choice are
# forced (auto takes others at some sizes: trees for a small bcast).
# Usage: run_path_tune.sh COLLIE_RUN MP_PATH_TUNE P
set -euo pipefail
run=$1 prog=$2 P=$3
export COLLIE_ALLREDUCE_ALGO=direct_segments COLLIE_REDUCE_ALGO=direct_segments
export COLLIE_BCAST_ALGO=direct_copy
log=$(COLLIE_LOG=debug "$run" -n "$P" --timeout 240 "$prog" 40 2>&1) || { echo "$log" | tail -40; exit 1; }
fail() { echo "FAIL: $*"; echo "$log" | grep -E "took|taking|exact" | tail -60; exit 1; }
[ "$(grep -c 'calls of each collective at 3 sizes exact' <<<"$log")" = "$P" ] || fail "not every rank checked its results"
root=$((P - 1))
for c in "allreduce 0" "reduce $root" "bcast $root"; do
  set -- $c
  for way in "the kernel copy" "shared memory"; do
    grep -q "collie\[$2\] debug: rank $2: $1 of [0-9]* B took .* us by $way" <<<"$log" ||
      fail "$1: rank $2 never timed a call by $way"
  done
  n=$(grep -c "collie\[$2\] info: rank $2: $1 of .* taking" <<<"$log" || true)
  [ "$n" = 3 ] || fail "$1: rank $2 chose a way for $n size classes, want 3"
  others=$(grep "debug: rank [0-9]*: $1 of [0-9]* B took" <<<"$log" | grep -vc "collie\[$2\]" || true)
  [ "$others" = 0 ] || fail "$1: ranks other than $2 timed calls"
done
# Roots moving every call: each root decides from its own timings; results still exact.
log=$("$run" -n "$P" --timeout 240 "$prog" 80 rotate 2>&1) || { echo "$log" | tail -40; exit 1; }
[ "$(grep -c 'exact (roots rotating)' <<<"$log")" = "$P" ] || { echo "FAIL: rotating roots: $log"; exit 1; }
echo "path choice checked at P=$P"
