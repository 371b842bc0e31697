#!/usr/bin/env bash
# collie-bench --fresh-data: every call's input is rewritten with new values (the call
# number mixed into the pattern) before the barrier; --check verifies the last timed
# call's result against an exact reference for that call, and then one call with the
# usual check inputs.  allreduce (also in place), reduce at a non-zero root and bcast,
# malloc and collie_alloc buffers, sizes from one element to 256 KiB; then --release-each
# and --use-result.
# Usage: run_fresh_data.sh COLLIE_RUN COLLIE_BENCH P
set -euo pipefail
run=$1 bench=$2 P=$3
root=$((P - 1))
for args in "--coll allreduce" "--coll allreduce --in-place" "--coll reduce --root $root" \
            "--coll bcast --root $root" "--coll allreduce --dtype int32 --op max"; do
  for alloc in "" --collie-alloc; do
    echo "== P=$P $args ${alloc:-malloc}"
    # shellcheck disable=SC2086
    out=$("$run" -n "$P" --timeout 120 "$bench" $args $alloc --mode blocking --fresh-data \
            --check --min-bytes 8 --max-bytes 256K --step-factor 32 --iters 3 --warmup 1)
    grep -q "barrier-each fresh-data" <<<"$out" || { echo "no fresh-data header: $out"; exit 1; }
    rows=$(grep -c '^ *[0-9]' <<<"$out")
    [ "$rows" = 4 ] || { echo "want 4 rows, got $rows: $out"; exit 1; }
  done
done
# checked_rows OPTION HEADER ARGS...: collie-bench ARGS with OPTION, --fresh-data and
# --check at 8 B, 256 B and 8 KiB; its header must contain HEADER and it must print 3 rows.
checked_rows() {
  local option=$1 header=$2 out rows; shift 2
  echo "== P=$P $* $option"
  out=$("$run" -n "$P" --timeout 120 "$bench" "$@" --mode blocking "$option" --fresh-data \
          --check --min-bytes 8 --max-bytes 64K --step-factor 32 --iters 3 --warmup 1)
  grep -q "$header" <<<"$out" || { echo "no '$header' in the header: $out"; exit 1; }
  rows=$(grep -c '^ *[0-9]' <<<"$out")
  [ "$rows" = 3 ] || { echo "want 3 rows, got $rows: $out"; exit 1; }
}
# --release-each: rank 0's release instead of the barrier (a gather and a scatter; a reduce
# and a bcast when gather itself is measured), results still checked.
for args in "--coll bcast --root $root" "--coll gather"; do
  # shellcheck disable=SC2086
  checked_rows --release-each "release-each fresh-data" $args
done
# --use-result: every rank reads its result after each call (in the call's time): the
# header says so, and the results are still checked exact (reduce and gather at a
# non-zero root: only the root has a result; exscan: rank 0 has none).
for args in "--coll allreduce" "--coll reduce --root $root" "--coll bcast --root $root" \
            "--coll gather --root $root" "--coll alltoall" "--coll exscan"; do
  # shellcheck disable=SC2086
  checked_rows --use-result "barrier-each fresh-data use-result" $args
done
echo "fresh-data runs checked at P=$P"
