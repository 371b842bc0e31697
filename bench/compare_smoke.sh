#!/usr/bin/env bash
# bench/compare_smoke.sh BUILD_DIR — the ctest smoke test of bench/compare (label bench):
# runs its smallest mode (allreduce, P = 2, 8 and 64 bytes, reused and fresh data, 20
# iterations, at most 2 forced algorithms per peer, results checked and read after every
# call (--use-result), no plots, one round of the paired rematch) without
# installing anything:
# the Debian MPIs when installed, and the PyPI peers (Open MPI 5, MPICH 5, Intel MPI,
# oneCCL) only when a full bench/compare run has already put them in the cache
# (~/.cache/collie-bench); the others are skipped with a message.  Checks compare.csv and
# summary.csv: exact headers, one ok row with a positive time per size and data mode for
# collie and for each peer that ran (auto and at least two forced algorithms; collie also
# with collie_alloc buffers and, when libcollie_heap.so is built, under the shared heap),
# and the ratio collie / best peer when a peer ran; then that compare_report.py counts the
# points at or below the best peer and within 1.3x as summary.csv's ratios say; with a
# peer, that every point had its rematch round (collie and the best peer configurations,
# rep -1) and a paired ratio that is collie's / its best peer's time of that round.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
OUT=$BUILD/compare-smoke
rm -rf "$OUT"
cd "$(dirname "$0")/.."
python3 bench/compare --smoke --check --use-result --no-setup --no-venv --no-install --rematch 1 \
  --build-dir "$BUILD" --out "$OUT" > "$OUT.txt" 2> "$OUT.err"
fail() { echo "compare_smoke: $*" >&2; cat "$OUT.txt" "$OUT.err" >&2; exit 1; }
grep "left out" "$OUT.err" | sed 's/^compare: /compare_smoke: skipped: /' || true

want_raw="coll,P,bytes,data,library,config,rep,status,us,iters,algorithm,line_ns_before,line_ns_after"
[ "$(head -1 "$OUT/compare.csv")" = "$want_raw" ] || fail "compare.csv header is $(head -1 "$OUT/compare.csv")"
# every launch is probed before and after (the machine's state: compare_state.py)
if [ -x "$BUILD/bench/floors" ] && [ "$(nproc)" -ge 2 ]; then
  bad=$(awk -F, 'NR > 1 && !($12 > 0 && $13 > 0)' "$OUT/compare.csv" | wc -l)
  [ "$bad" = 0 ] || fail "$bad rows without the cache-line probes (line_ns_before/after)"
fi
libs=(collie)
command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null && libs+=(openmpi)
command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null && libs+=(mpich)
for peer in intelmpi openmpi5 mpich5 oneccl; do   # the PyPI peers that were installed and ran
  grep "^$peer: " "$OUT/libraries.txt" | grep -qv "^$peer: left out" && libs+=("$peer")
done
for lib in "${libs[@]}"; do
  for data in reused fresh; do
    for size in 8 64; do
      n=$(awk -F, -v l="$lib" -v s="$size" -v d="$data" '$1 == "allreduce" && $2 == 2 &&
            $3 == s && $4 == d && $5 == l && $6 == "auto" && $7 > 0 && $8 == "ok" && $9 > 0 &&
            $10 == 20 && $11 != ""' "$OUT/compare.csv" | wc -l)
      [ "$n" = 1 ] || fail "$lib auto, $data data, at $size bytes: $n good rows, want 1"
    done
  done
  if [ "$lib" = collie ]; then
    n=$(awk -F, '$5 == "collie" && $6 == "collie_alloc" && $7 > 0 && $8 == "ok" && $9 > 0' "$OUT/compare.csv" | wc -l)
    [ "$n" = 4 ] || fail "collie with collie_alloc buffers: $n good rows, want 4"
    if [ -e "$BUILD/libcollie_heap.so" ]; then
      n=$(awk -F, '$5 == "collie" && $6 == "shared_heap" && $7 > 0 && $8 == "ok" && $9 > 0' "$OUT/compare.csv" | wc -l)
      [ "$n" = 4 ] || fail "collie under the shared heap: $n good rows, want 4"
    fi
    continue
  fi
  forced=$(awk -F, -v l="$lib" '$5 == l && $6 != "auto" && $8 == "ok" && $9 > 0 { print $6 }' \
             "$OUT/compare.csv" | sort -u | wc -l)
  [ "$forced" -ge 2 ] || fail "$lib: $forced forced algorithms measured, want >= 2"
done

peer_cols=""
for peer in openmpi mpich intelmpi openmpi5 mpich5 oneccl; do
  peer_cols+=",${peer}_auto_us,${peer}_forced_us,${peer}_forced_algorithm"
done
want_sum="coll,P,bytes,data,collie_us,collie_algorithm,collie_alloc_us,collie_heap_us$peer_cols,best_peer,best_peer_config,best_peer_us,ratio,ratio_collie_alloc,ratio_shared_heap,best_peer_state,state_matched,line_split_ns,rematch_rounds,rematch_collie_us,rematch_peer_us,rematch_ratio"
[ "$(head -1 "$OUT/summary.csv")" = "$want_sum" ] || fail "summary.csv header is $(head -1 "$OUT/summary.csv")"
# columns by name: collie_us, collie_algorithm, collie_alloc_us, best_peer_us, ratio
rows=$(awk -F, -v mpi=$((${#libs[@]} > 1)) '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { us = $col["collie_us"]; best = $col["best_peer_us"]; r = $col["ratio"] }
  us > 0 && $col["collie_algorithm"] != "" && $col["collie_alloc_us"] > 0 &&
  (!mpi || (best > 0 && r > 0 && (r - us / best) ^ 2 < 1e-4 * r ^ 2))' "$OUT/summary.csv" | wc -l)
[ "$rows" = 4 ] || fail "summary.csv: $rows good rows, want 4 (8 and 64 bytes, reused and fresh)"
grep -q "^allreduce  2      8 reused " "$OUT.txt" || fail "no table row for 8 bytes, reused data"
grep -q "^allreduce  2      8 fresh " "$OUT.txt" || fail "no table row for 8 bytes, fresh data"
# compare_report.py's per-team-size line against the ratios counted here from summary.csv
if [ ${#libs[@]} -gt 1 ]; then
  report=$(python3 bench/compare_report.py "$OUT/summary.csv") || fail "compare_report.py failed"
  for data in reused fresh; do
    want=$(awk -F, -v d=$data 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             $col["data"] == d && $col["ratio"] != "" { n++; r = $col["ratio"] + 0;
               w += (r <= 1.0); t += (r <= 1.3) }
             END { printf "| 2 | %s | %d | %d | %d |", d, n, w, t }' "$OUT/summary.csv")
    grep -qF "$want" <<< "$report" || fail "compare_report.py has no line '$want':
$report"
  done
fi
# the paired rematch: one round per point, its ratio that round's collie / peer time
if [ ${#libs[@]} -gt 1 ]; then
  rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { c = $col["rematch_collie_us"]; p = $col["rematch_peer_us"]; r = $col["rematch_ratio"] }
    $col["rematch_rounds"] == 1 && c > 0 && p > 0 && (r - c / p) ^ 2 < 1e-4 * r ^ 2' \
    "$OUT/summary.csv" | wc -l)
  [ "$rows" = 4 ] || fail "summary.csv: $rows points with a paired rematch round, want 4"
  n=$(awk -F, '$5 == "collie" && $6 == "auto" && $7 == -1 && $8 == "ok" && $9 > 0' "$OUT/compare.csv" | wc -l)
  [ "$n" = 4 ] || fail "compare.csv: $n rows of collie's rematch round (rep -1), want 4 (2 sizes, 2 data modes)"
  grep -q "^Paired rematch (4 of 4 points" <<< "$report" || fail "compare_report.py has no paired rematch tables"
fi
echo "compare_smoke: ok (${libs[*]})"
