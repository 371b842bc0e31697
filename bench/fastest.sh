#!/usr/bin/env bash
# bench/fastest.sh — which algorithm is fastest on this machine: runs collie-bench
# --algo all (results checked) for every collective at each P and size, and prints, per
# (collective, P, bytes), every algorithm's time (the slowest rank's mean per call) and the fastest.
#
#   bash bench/fastest.sh [--np "2 3 4 8"] [--sizes "8 64K 8M"] [--colls "allreduce reduce bcast"]
#                         [--csv FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
NPS="2 3 4 8"; SIZES="8 64K 8M"; COLLS="allreduce reduce bcast"; CSV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --colls) COLLS=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    *) echo "fastest.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh >/dev/null
B=${BUILD_DIR:-build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for coll in $COLLS; do
  for np in $NPS; do
    for size in $SIZES; do
      "$B/collie-run" -n "$np" --timeout 600 -- "$B/collie-bench" --coll "$coll" --algo all \
        --min-bytes "$size" --max-bytes "$size" --check --csv "$TMP/run.csv" >/dev/null
      tail -n +2 "$TMP/run.csv" >> "$TMP/all.csv"
    done
  done
done
[ -n "$CSV" ] && { echo "coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us"; cat "$TMP/all.csv"; } > "$CSV"
# columns: coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us
awk -F, '$2 == $3 {
    key = $1 " " $4 " " $5; t[key] = t[key] sprintf(" %s=%.2f", $2, $12)
    if (!(key in best) || $12 < best[key]) { best[key] = $12; who[key] = $2 }
  }
  END { for (k in best) printf "%-22s fastest %-20s %10.2f us |%s\n", k, who[k], best[k], t[k] }' \
  "$TMP/all.csv" | sort -k1,1 -k2,2n -k3,3n
