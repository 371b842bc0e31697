#!/usr/bin/env bash
# Chunks that travel by reference: every algorithm of allreduce, reduce and bcast with
# buffers from collie_alloc, results checked by collie-bench --check (an independent exact
# reference).  From registered memory, chunks of messages below the single-copy size go
# by reference (COLLIE_SHM_BY_REFERENCE_MIN) and larger messages single-copy; either way
# the receiver maps the sender's block and reduces straight out of it (shm_mem.c).  The
# same runs with malloc buffers take the inbox and process_vm_readv paths.
# Usage: run_registered.sh COLLIE_RUN COLLIE_BENCH P
set -euo pipefail
run=$1 bench=$2 P=$3
check() {   # label, then environment assignments
  local label=$1; shift
  for coll in allreduce reduce bcast; do
    for alloc in --collie-alloc ""; do
      echo "== P=$P $coll ${alloc:-malloc} $label"
      env "$@" "$run" -n "$P" --timeout 300 "$bench" --coll "$coll" --algo all --check $alloc \
        --min-bytes 1K --max-bytes 1M --iters 2 --warmup 1 >/dev/null
    done
  done
}
check "default thresholds" COLLIE_LOG=error
# ... and direct_segments/direct_copy through the kernel copy instead of the copy cells
check "small thresholds" COLLIE_SHM_DIRECT_MIN=65536 COLLIE_SHM_BY_REFERENCE_MIN=64 \
    COLLIE_SHM_KERNEL_MIN=1
# A bcast at P = 2 from 2 MiB goes through the copy cells even from a mapped root buffer
# (direct_access.c, MAPPED_BCAST_PAIR_CELLS_MIN): both roots, reused and fresh data.
if [ "$P" = 2 ]; then
  for root in 0 1; do
    for fresh in "" --fresh-data; do
      echo "== P=2 bcast direct_copy collie_alloc root $root 2-4 MiB ${fresh:-reused}"
      # shellcheck disable=SC2086
      "$run" -n 2 --timeout 300 "$bench" --coll bcast --algo direct_copy --root "$root" \
        --collie-alloc --check $fresh --min-bytes 2M --max-bytes 4M --iters 2 --warmup 1 >/dev/null
    done
  done
fi
echo "all registered-memory runs passed at P=$P"
