#!/usr/bin/env bash
# bench/auto_quality.sh — how good is `auto`?  For allreduce (or --coll C) at each P and size it measures
# every algorithm and auto interleaved in one launch (collie-bench --algo all,auto
# --repeat R: each size is measured for every algorithm and auto in turn, R turns), and
# prints per point time(auto) / time(fastest), the share of points within 1.2 and the
# worst ratio.
#
#   bash bench/auto_quality.sh [--np "2 3 4 8"] [--min-bytes 8] [--max-bytes 16M]
#                              [--repeat 5] [--iters N] [--csv FILE] [--quick]
#                              [--coll C] [--collie-alloc]
#
# --coll: any collective of collie-bench (sizes are a rank's block where there is one);
# --collie-alloc: buffers from collie_alloc (the direct algorithms then map them).
#
# Times are the slowest rank's mean per call (collie-bench's max_us), float64 sum; each
# algorithm's time at a point is the median of its R turns.  Because the turns interleave
# all algorithms within one launch, launch-to-launch variance (placement, other load)
# cancels in the ratios.  --quick (a check that the tooling works, not a measurement):
# P = 2 3, 8 B … 2 KiB, 2 turns of 20 calls.  Run it on an otherwise idle machine: with
# more ranks than cores, time slices of other processes dominate small messages.
set -euo pipefail
cd "$(dirname "$0")/.."
NPS="2 3 4 8"; MIN=8; MAX=16M; CSV=""; REPEAT=5; ITERS=""; COLL=allreduce; ALLOC=()
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --min-bytes) MIN=$2; shift 2 ;;
    --max-bytes) MAX=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    --coll) COLL=$2; shift 2 ;;
    --collie-alloc) ALLOC=(--collie-alloc); shift ;;
    --quick) NPS="2 3"; MAX=2K; REPEAT=2; ITERS=20; shift ;;
    *) echo "auto_quality.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh >/dev/null
B=${BUILD_DIR:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
iters_opt=()
[ -n "$ITERS" ] && iters_opt=(--iters "$ITERS")
for np in $NPS; do
  "$B/collie-run" -n "$np" --timeout 3600 -- "$B/collie-bench" --coll "$COLL" "${ALLOC[@]}" \
    --algo all,auto --repeat "$REPEAT" "${iters_opt[@]}" --min-bytes "$MIN" \
    --max-bytes "$MAX" --step-factor 4 --csv "$TMP/run.csv" >/dev/null
  tail -n +2 "$TMP/run.csv" >> "$TMP/all.csv"
done
[ -n "$CSV" ] && { echo "coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us"; cat "$TMP/all.csv"; } > "$CSV"
# columns: coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us
awk -F, '
  function median(list,   v, n, i, j, x) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  $2 == "auto" { k = $4 " " $5; a[k] = a[k] " " $12; used[k] = $3; next }
  $2 == $3 { k = $4 " " $5; t[k, $2] = t[k, $2] " " $12; algos[$2] = 1; keys[k] = 1 }
  END {
    printf "%3s %9s %10s %-20s %10s %-20s %6s\n", "P", "bytes", "auto_us", "auto chose", "best_us", "fastest", "ratio"
    for (k in a) {
      am = median(a[k]); best = -1
      for (g in algos) if ((k, g) in t) { m = median(t[k, g]); if (best < 0 || m < best) { best = m; who = g } }
      if (best <= 0) continue
      split(k, f, " "); r = am / best; n++; if (r <= 1.2) ok++; if (r > worst) worst = r
      printf "%3s %9s %10.2f %-20s %10.2f %-20s %6.2f\n", f[1], f[2], am, used[k], best, who, r
    }
    printf "# %d points: %d (%.0f %%) within 1.2 of the fastest, worst ratio %.2f\n", n, ok, n ? 100 * ok / n : 0, worst
  }' "$TMP/all.csv" | { read -r header; echo "$header"; sort -k1,1n -k2,2n; }
