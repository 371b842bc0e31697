#!/usr/bin/env bash
# bench/compare_colls_smoke.sh BUILD_DIR — the ctest smoke test of bench/compare on the
# newer collectives (label bench): allgather, reduce_scatter_block and alltoall at P = 2,
# 8 and 64 bytes per block, fresh data, results checked (--check: collie-bench against
# tools/bench_colls_check.h, mpi_coll_bench against its own expected()), each library's
# auto only (no forced algorithms), collie with malloc and collie_alloc buffers and, when
# libcollie_heap.so is built, under the shared heap, and one Debian MPI (Open MPI, else
# MPICH; nothing from PyPI: bench/compare_smoke.sh covers those; one MPI keeps it short).
# Checks one good row per (library, config, collective, size) in compare.csv and the
# ratio in summary.csv.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/compare-colls-smoke
rm -rf "$OUT"
cd "$(dirname "$0")/.."
colls="allgather reduce_scatter_block alltoall"
libs=(collie)
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
  libs+=(openmpi)
elif command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
  libs+=(mpich)
fi
python3 bench/compare --colls "$colls" --np 2 --sizes "8 64" --data fresh --reps 1 --no-forced --state-wait 0 \
  --iters 5 --limit 60 --check --no-setup --no-venv --no-install --build-dir "$BUILD" \
  --libs "${libs[*]}" --out "$OUT" > "$OUT.txt" 2> "$OUT.err"
fail() { echo "compare_colls_smoke: $*" >&2; cat "$OUT.txt" "$OUT.err" >&2; exit 1; }
grep "left out" "$OUT.err" | sed 's/^compare: /compare_colls_smoke: skipped: /' || true

rows() {   # library config coll size: good rows in compare.csv
  awk -F, -v l="$1" -v c="$2" -v k="$3" -v s="$4" '$1 == k && $2 == 2 && $3 == s &&
    $4 == "fresh" && $5 == l && $6 == c && $8 == "ok" && $9 > 0 && $10 == 5' "$OUT/compare.csv" |
    wc -l
}
for lib in "${libs[@]}"; do
  configs=(auto)
  [ "$lib" = collie ] && configs+=(collie_alloc)
  [ "$lib" = collie ] && [ -e "$BUILD/libcollie_heap.so" ] && configs+=(shared_heap)
  for config in "${configs[@]}"; do
    for coll in $colls; do
      for size in 8 64; do
        n=$(rows "$lib" "$config" "$coll" "$size")
        [ "$n" = 1 ] || fail "$lib $config, $coll at $size bytes: $n good rows, want 1"
      done
    done
  done
done
# summary.csv: a row per (collective, size); with an MPI, the ratio collie / best peer
good=$(awk -F, -v mpi=$((${#libs[@]} > 1)) '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { us = $col["collie_us"]; best = $col["best_peer_us"]; r = $col["ratio"] }
  us > 0 && $col["collie_alloc_us"] > 0 &&
  (!mpi || (best > 0 && r > 0 && (r - us / best) ^ 2 < 1e-4 * r ^ 2))' "$OUT/summary.csv" | wc -l)
[ "$good" = 6 ] || fail "summary.csv: $good good rows, want 6 (3 collectives, 2 sizes)"
grep -q "^reduce_scatter_block  2      8 fresh " "$OUT.txt" ||
  fail "no table row for reduce_scatter_block"
echo "compare_colls_smoke: ok (${libs[*]})"
