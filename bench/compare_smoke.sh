#!/usr/bin/env bash
# bench/compare_smoke.sh BUILD_DIR — the ctest smoke test of bench/compare (label bench):
# runs its smallest mode (allreduce, P = 2, 8 and 64 bytes, 20 iterations, no virtual
# environment) and checks compare.csv and summary.csv: exact headers, one ok row with a
# positive time per size for collie and for each MPI installed here (auto and at least
# two forced algorithms; collie also with collie_alloc buffers), and the ratio
# collie / best peer when an MPI ran.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/compare-smoke
rm -rf "$OUT"
cd "$(dirname "$0")/.."
python3 bench/compare --smoke --no-setup --no-venv --build-dir "$BUILD" --out "$OUT" > "$OUT.txt"
fail() { echo "compare_smoke: $*" >&2; cat "$OUT.txt" >&2; exit 1; }

want_raw="coll,P,bytes,library,config,rep,status,us,iters,algorithm"
[ "$(head -1 "$OUT/compare.csv")" = "$want_raw" ] || fail "compare.csv header is $(head -1 "$OUT/compare.csv")"
libs=(collie)
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null && libs+=(openmpi)
command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null && libs+=(mpich)
for lib in "${libs[@]}"; do
  for size in 8 64; do
    n=$(awk -F, -v l="$lib" -v s="$size" '$1 == "allreduce" && $2 == 2 && $3 == s && $4 == l &&
          $5 == "auto" && $7 == "ok" && $8 > 0 && $9 == 20 && $10 != ""' "$OUT/compare.csv" | wc -l)
    [ "$n" = 1 ] || fail "$lib auto at $size bytes: $n good rows, want 1"
  done
  if [ "$lib" = collie ]; then
    n=$(awk -F, '$4 == "collie" && $5 == "collie_alloc" && $7 == "ok" && $8 > 0' "$OUT/compare.csv" | wc -l)
    [ "$n" = 2 ] || fail "collie with collie_alloc buffers: $n good rows, want 2"
    continue
  fi
  forced=$(awk -F, -v l="$lib" '$4 == l && $5 != "auto" && $7 == "ok" && $8 > 0 { print $5 }' \
             "$OUT/compare.csv" | sort -u | wc -l)
  [ "$forced" -ge 2 ] || fail "$lib: $forced forced algorithms measured, want >= 2"
done

want_sum="coll,P,bytes,collie_us,collie_algorithm,collie_alloc_us,openmpi_auto_us,openmpi_forced_us,openmpi_forced_algorithm,mpich_auto_us,mpich_forced_us,mpich_forced_algorithm,intelmpi_auto_us,intelmpi_forced_us,intelmpi_forced_algorithm,best_peer,best_peer_config,best_peer_us,ratio,ratio_collie_alloc"
[ "$(head -1 "$OUT/summary.csv")" = "$want_sum" ] || fail "summary.csv header is $(head -1 "$OUT/summary.csv")"
rows=$(tail -n +2 "$OUT/summary.csv" | awk -F, -v mpi=$((${#libs[@]} > 1)) '
  $4 > 0 && $5 != "" && $6 > 0 && (!mpi || ($18 > 0 && $19 > 0 && ($19 - $4 / $18) ^ 2 < 1e-4 * $19 ^ 2))' | wc -l)
[ "$rows" = 2 ] || fail "summary.csv: $rows good rows, want 2 (8 and 64 bytes)"
grep -q "^allreduce  2      8 " "$OUT.txt" || fail "no table row for 8 bytes"
echo "compare_smoke: ok (${libs[*]})"
