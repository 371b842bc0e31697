#!/usr/bin/env bash
# bench/auto_quality.sh — how good is `auto`?  For allreduce at each P and size it measures
# every algorithm (collie-bench --algo all) and auto (--algo auto), and prints
# time(auto) / time(fastest) per point, the share of points within 1.2 and the worst ratio.
#
#   bash bench/auto_quality.sh [--np "2 3 4 8"] [--min-bytes 8] [--max-bytes 16M] [--csv FILE]
#
# Times are the slowest rank's mean per call (collie-bench's max_us), float64 sum.  The
# whole sweep of one P runs in one collie-run launch for `all` and one for `auto`; with more
# ranks than cores the two launches can differ by tens of percent on the same algorithm, so
# read single points with care and the overall share as the result.
set -euo pipefail
cd "$(dirname "$0")/.."
NPS="2 3 4 8"; MIN=8; MAX=16M; CSV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --min-bytes) MIN=$2; shift 2 ;;
    --max-bytes) MAX=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    *) echo "auto_quality.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh >/dev/null
B=${BUILD_DIR:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for np in $NPS; do
  for algo in all auto; do
    "$B/collie-run" -n "$np" --timeout 1200 -- "$B/collie-bench" --coll allreduce --algo "$algo" \
      --min-bytes "$MIN" --max-bytes "$MAX" --step-factor 4 --csv "$TMP/run.csv" >/dev/null
    tail -n +2 "$TMP/run.csv" >> "$TMP/all.csv"
  done
done
[ -n "$CSV" ] && { echo "coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us"; cat "$TMP/all.csv"; } > "$CSV"
# columns: coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us
awk -F, '
  $2 == "auto" { a[$4 " " $5] = $12; used[$4 " " $5] = $3; next }
  $2 == $3 { k = $4 " " $5; if (!(k in best) || $12 < best[k]) { best[k] = $12; who[k] = $2 } }
  END {
    printf "%3s %9s %10s %-20s %10s %-20s %6s\n", "P", "bytes", "auto_us", "auto chose", "best_us", "fastest", "ratio"
    for (k in a) {
      split(k, f, " "); r = a[k] / best[k]; n++; if (r <= 1.2) ok++; if (r > worst) worst = r
      printf "%3s %9s %10.2f %-20s %10.2f %-20s %6.2f\n", f[1], f[2], a[k], used[k], best[k], who[k], r
    }
    printf "# %d points: %d (%.0f %%) within 1.2 of the fastest, worst ratio %.2f\n", n, ok, 100 * ok / n, worst
  }' "$TMP/all.csv" | { read -r header; echo "$header"; sort -k1,1n -k2,2n; }
