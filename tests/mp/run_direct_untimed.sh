#!/usr/bin/env bash
# mp_colls' `direct` sweep (allgather, reduce_scatter, alltoall; malloc and collie_alloc
# buffers mixed across ranks) with the way of buffers that are not mapped chosen from timed
# calls (COLLIE_SHM_KERNEL_MIN unset), under COLLIE_LOG=debug: every result exact, and
# with more ranks than cores rank 0 times no alltoall call (its way is then the copy
# cells, untimed: direct_colls.c, cells_without_trial) while it still times allgather's
# and reduce_scatter's; where every rank has a core it times alltoall's too.
# Usage: run_direct_untimed.sh COLLIE_RUN MP_COLLS P
set -euo pipefail
run=$1 prog=$2 P=$3
unset COLLIE_SHM_KERNEL_MIN
log=$(COLLIE_LOG=debug "$run" -n "$P" --timeout 300 "$prog" direct 2>&1) || { echo "$log" | tail -40; exit 1; }
grep -q "passed (0 failures" <<<"$log" || { echo "FAIL: the sweep"; echo "$log" | tail -20; exit 1; }
timed() { grep -cE "collie\[0\] debug: rank 0: $1 of [0-9]+ B took .* us by" <<<"$log" || true; }
for c in allgather reduce_scatter; do
  [ "$(timed $c)" -gt 0 ] || { echo "FAIL: rank 0 timed no $c call (the check would see nothing)"; exit 1; }
done
n=$(timed alltoall)
if [ "$P" -gt "$(nproc)" ]; then
  [ "$n" = 0 ] || { echo "FAIL: $P ranks on $(nproc) cores, yet rank 0 timed $n alltoall calls"; exit 1; }
else
  [ "$n" -gt 0 ] || { echo "FAIL: every rank has a core, yet rank 0 timed no alltoall call"; exit 1; }
fi
echo "direct sweep exact at P=$P; alltoall calls timed by rank 0: $n ($(nproc) cores)"
