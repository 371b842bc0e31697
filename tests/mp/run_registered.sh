#!/usr/bin/env bash
# Single-copy chunks from registered memory: every algorithm of every collective with
# buffers from collie_alloc, results checked by collie-bench --check (an independent
# exact reference), messages large enough to go single-copy.  The receiver then maps the
# sender's collie_alloc block and reduces straight out of it (shm_mem.c); the same runs
# with malloc buffers take the process_vm_readv path.
# Usage: run_registered.sh COLLIE_RUN COLLIE_BENCH P
set -euo pipefail
run=$1 bench=$2 P=$3
export COLLIE_SHM_DIRECT_MIN=65536
for coll in allreduce reduce bcast; do
  for alloc in --collie-alloc ""; do
    echo "== P=$P $coll ${alloc:-malloc}"
    "$run" -n "$P" --timeout 300 "$bench" --coll "$coll" --algo all --check $alloc \
      --min-bytes 64K --max-bytes 1M --iters 2 --warmup 1 >/dev/null
  done
done
echo "all registered-memory runs passed at P=$P"
