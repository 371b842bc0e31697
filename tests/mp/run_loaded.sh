#!/usr/bin/env bash
# Correct programs on a loaded machine: reduce, allreduce and bcast of 128-512 KiB (where
# the copy cells and the kernel copy serve, and a reduce's non-root may finish before its
# root has checked the call) in long loops while two busy processes compete for the cores,
# so that ranks are preempted at any point.  Every call must succeed (no false mismatch:
# a non-root that went on to its next call had replaced its board post, which the root
# read as another call) and the checked call must be exact.  Can only fail, not prove the
# absence of a race: before the fix it failed in about 1 of 4 reduce loops here.  Reduce loops
# of 1,500 calls per size, allreduce and bcast of 400.  One round (2 reduce loops; 15-100 s
# here, as the busy processes let the ranks run) in the suite; three with COLLIE_LONG_TESTS=1.
# Usage: run_loaded.sh COLLIE_RUN COLLIE_BENCH
set -euo pipefail
run=$1 bench=$2
# The busy processes stop with this script however it ends (killed by a test timeout too).
hogs=() me=$$
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
for _ in 1 2; do
  (while kill -0 "$me" 2>/dev/null; do :; done) &
  hogs+=($!)
done
rounds=1
[ "${COLLIE_LONG_TESTS:-0}" = 1 ] && rounds=3
for ((rep = 1; rep <= rounds; rep++)); do
  for P in 2 3; do
    for coll in reduce allreduce bcast; do
      iters=1500
      [ "$coll" = reduce ] || iters=400    # the race was the reduce's; the others for breadth
      out=$("$run" -n "$P" --timeout 120 "$bench" --coll "$coll" --min-bytes 128K \
            --max-bytes 512K --step-factor 2 --iters "$iters" --check 2>&1) ||
        { echo "FAIL: $coll P=$P (round $rep):"; echo "$out" | tail -20; exit 1; }
    done
  done
done
echo "loaded: every call succeeded and every checked result was exact"
