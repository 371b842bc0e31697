#!/usr/bin/env bash
# mp_colls' `direct` sweep (allgather, reduce_scatter, alltoall; malloc and collie_alloc
# buffers mixed across ranks) with the way of buffers that are not mapped chosen from timed
# calls (COLLIE_SHM_KERNEL_MIN unset), under COLLIE_LOG=debug: every result exact, and
# rank 0 times calls of all three, also with more ranks than cores (alltoall took the copy
# cells untimed there until session 44: path_tune.c, path_tune_cells_calls_in_trial).
# Usage: run_direct_timed.sh COLLIE_RUN MP_COLLS P
set -euo pipefail
run=$1 prog=$2 P=$3
unset COLLIE_SHM_KERNEL_MIN
log=$(COLLIE_LOG=debug "$run" -n "$P" --timeout 300 "$prog" direct 2>&1) || { echo "$log" | tail -40; exit 1; }
grep -q "passed (0 failures" <<<"$log" || { echo "FAIL: the sweep"; echo "$log" | tail -20; exit 1; }
timed() { grep -cE "collie\[0\] debug: rank 0: $1 of [0-9]+ B took .* us by" <<<"$log" || true; }
for c in allgather reduce_scatter alltoall; do
  [ "$(timed $c)" -gt 0 ] || { echo "FAIL: rank 0 timed no $c call ($P ranks on $(nproc) cores)"; exit 1; }
done
echo "direct sweep exact at P=$P; alltoall calls timed by rank 0: $(timed alltoall) ($(nproc) cores)"
