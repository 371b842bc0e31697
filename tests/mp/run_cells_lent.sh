#!/usr/bin/env bash
# allgather, alltoall and reduce_scatter through the copy cells with data lent in place
# (src/algorithms/cells_in_place.c): mp_colls' `cells` sweep (malloc and collie_alloc
# buffers mixed across the ranks of a call, in place and not, small cells so that large
# counts take many steps) with every registered block lent (COLLIE_SHM_CELLS_LEND_MIN=1),
# under COLLIE_LOG=debug: every result exact, every rank both lent its data and read a
# peer's lent data from its memory, and each of the three collectives was lent and read.
# Then with the peers' memory not mapped (COLLIE_SHM_MAP_PEERS=0: read with
# process_vm_readv instead), and with lending off (COLLIE_SHM_CELLS_LEND_MIN=0): exact,
# and no rank lent.
# Usage: run_cells_lent.sh COLLIE_RUN MP_COLLS P
set -euo pipefail
run=$1 prog=$2 P=$3
export COLLIE_SHM_KERNEL_MIN=0 COLLIE_SHM_CELL_BYTES=4096 COLLIE_SHM_CELLS=2
sweep() {   # lend_min
  COLLIE_SHM_CELLS_LEND_MIN=$1 COLLIE_LOG=debug "$run" -n "$P" --timeout 300 "$prog" cells 2>&1
}
log=$(sweep 1) || { echo "$log" | tail -40; exit 1; }
grep -q "passed (0 failures" <<<"$log" || { echo "FAIL: the sweep with lending"; echo "$log" | tail -20; exit 1; }
for ((r = 0; r < P; r++)); do
  grep -qE "collie\[$r\] debug: rank $r: its peers read its [a-z_]+ data straight" <<<"$log" ||
    { echo "FAIL: rank $r never lent its data"; exit 1; }
  grep -qE "collie\[$r\] debug: rank $r: reads rank [0-9]+'s lent [a-z_]+ data" <<<"$log" ||
    { echo "FAIL: rank $r never read a peer's lent data"; exit 1; }
done
for c in allgather alltoall reduce_scatter; do
  grep -qE "its peers read its $c data straight" <<<"$log" || { echo "FAIL: no rank lent its $c data"; exit 1; }
  grep -qE "reads rank [0-9]+'s lent $c data" <<<"$log" || { echo "FAIL: no rank read lent $c data"; exit 1; }
done
# Where a peer's memory cannot be mapped (COLLIE_SHM_MAP_PEERS=0) the readers take
# process_vm_readv: exact, and the log says so.
log=$(COLLIE_SHM_MAP_PEERS=0 sweep 1) || { echo "$log" | tail -40; exit 1; }
grep -q "passed (0 failures" <<<"$log" || { echo "FAIL: the sweep with lent data read by the kernel"; echo "$log" | tail -20; exit 1; }
for c in allgather alltoall reduce_scatter; do
  grep -qE "reads rank [0-9]+'s lent $c data with process_vm_readv" <<<"$log" ||
    { echo "FAIL: no rank read lent $c data with process_vm_readv"; exit 1; }
done
if grep -q "from its memory mapped here" <<<"$log"; then echo "FAIL: mapping off, yet a rank mapped"; exit 1; fi
log=$(sweep 0) || { echo "$log" | tail -40; exit 1; }
grep -q "passed (0 failures" <<<"$log" || { echo "FAIL: the sweep without lending"; echo "$log" | tail -20; exit 1; }
if grep -q "lent\|its peers read" <<<"$log"; then echo "FAIL: lending off, yet a rank lent"; exit 1; fi
echo "cells sweep exact at P=$P with lent data (mapped and read by the kernel) and without; every rank lent and read lent data"
