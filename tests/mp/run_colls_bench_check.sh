#!/usr/bin/env bash
# collie-bench --check --fresh-data on allgather, reduce_scatter, alltoall, gather, scatter,
# scan and exscan: every timed call gets new input (the call number mixed in), the last
# timed call's result and then one call with the check inputs are verified against the
# definition of the collective (tools/bench_colls_check.h, not the library's layout code).
# In place, non-zero roots, other ops and types, malloc and collie_alloc buffers; one
# element and 64 KiB per block.
# Usage: run_colls_bench_check.sh COLLIE_RUN COLLIE_BENCH P
set -euo pipefail
run=$1 bench=$2 P=$3
root=$((P - 1))
for args in "--coll allgather" "--coll allgather --in-place --collie-alloc" \
            "--coll reduce_scatter" "--coll reduce_scatter --in-place --op max --dtype int32" \
            "--coll alltoall --collie-alloc" "--coll alltoall --in-place" \
            "--coll gather --root $root" "--coll gather --root 1 --in-place --collie-alloc" \
            "--coll scatter --root $root --collie-alloc" "--coll scatter --root 1 --in-place" \
            "--coll scan --op prod --dtype int64" "--coll exscan --in-place --collie-alloc"; do
  echo "== P=$P $args"
  # shellcheck disable=SC2086
  out=$("$run" -n "$P" --timeout 120 "$bench" $args --mode blocking --fresh-data --check \
          --min-bytes 8 --max-bytes 64K --step-factor 8192 --iters 3 --warmup 1)
  grep -q "barrier-each fresh-data" <<<"$out" || { echo "no fresh-data header: $out"; exit 1; }
  rows=$(grep -c '^ *[0-9]' <<<"$out")
  [ "$rows" = 2 ] || { echo "want 2 rows, got $rows: $out"; exit 1; }
done
echo "checked runs of the newer collectives at P=$P"
