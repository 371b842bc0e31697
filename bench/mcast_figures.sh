#!/usr/bin/env bash
# bench/mcast_figures.sh — the measurements of Hoefler et al. 2007 (Figures 5-7) on this
# machine, for the multicast broadcast `mcast` against `binomial` and `chain`:
#   Fig. 5: each rank's latency at a fixed team size (the skew across ranks);
#   Fig. 6: the latency of rank 1 against P;   Fig. 7: the latency of rank P-1 against P;
# each on loopback (all ranks in this network namespace) and, as root, across 4 network
# namespaces joined by a bridge (tests/mcast/netns_lib.sh; stage 2 still uses shared
# memory).  Latency = collie-bench --sync-start (a common start on the shared monotonic
# clock; a rank's median completion time, see collie-bench --help), root 0, 2-byte message.
#
#   bash bench/mcast_figures.sh [--np "2 4 8 12 16"] [--fixed-p 16] [--bytes 2]
#        [--iters 300] [--out DIR] [--no-netns] [--no-plot]
#
# Writes DIR/latency.csv (net,algorithm,P,rank,latency_us; default DIR docs/figures/mcast, which docs/performance.md shows)
# and, unless --no-plot, the PNGs of bench/plot_mcast.py (matplotlib from PyPI in a venv;
# it says so when it cannot plot).  The algorithms of one P run back to back in the same
# script; on a loaded machine the numbers are scheduler wake-ups, not the network.
set -euo pipefail
cd "$(dirname "$0")/.."
NPS="2 4 8 12 16"; FIXED=16; BYTES=2; ITERS=300; OUT=docs/figures/mcast; NETNS=1; PLOT=1
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --fixed-p) FIXED=$2; shift 2 ;;
    --bytes) BYTES=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-netns) NETNS=0; shift ;;
    --no-plot) PLOT=0; shift ;;
    *) echo "mcast_figures.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh >/dev/null
B=$(readlink -f "${BUILD_DIR:-build}")
mkdir -p "$OUT"
CSV="$OUT/latency.csv"
echo "net,algorithm,P,rank,latency_us" >"$CSV"
. tests/mcast/netns_lib.sh
TMP=$(mktemp -d)
TAG="cmf$$"
trap 'netns_down "$TAG" >/dev/null 2>&1 || true; rm -rf "$TMP"' EXIT

# measure NET WRAPPER P: one line per (algorithm, rank) into the CSV.
measure() {
  local net=$1 wrap=$2 p=$3 algo log
  for algo in mcast binomial chain; do
    log="$TMP/$net.$p.$algo.log"
    COLLIE_MCAST=on COLLIE_TIMEOUT_MS=60000 "$B/collie-run" -n "$p" --timeout 600 -- $wrap \
      "$B/collie-bench" --coll bcast --algo "$algo" --sync-start --per-rank --dtype int8 \
      --min-bytes "$BYTES" --max-bytes "$BYTES" --iters "$ITERS" >"$log" 2>&1 ||
      { echo "  $net P=$p $algo failed:"; tail -5 "$log"; continue; }
    if grep -q "fell back" "$log"; then
      echo "  $net P=$p $algo fell back (multicast not verified?):"; grep "fell back" "$log"; continue
    fi
    awk -v net="$net" -v algo="$algo" -v p="$p" '$1 == "#" && $2 == "rank" {
      printf "%s,%s,%s,%s,%s\n", net, algo, p, $3, $4 }' "$log" >>"$CSV"
    printf '  %-8s P=%-3s %-9s rank 1 %8s us, rank P-1 %8s us\n' "$net" "$p" "$algo" \
      "$(awk '$2 == "rank" && $3 == 1 { print $4 }' "$log")" \
      "$(awk -v l=$((p - 1)) '$2 == "rank" && $3 == l { print $4 }' "$log")"
  done
}

sizes=$(echo "$NPS $FIXED" | tr ' ' '\n' | sort -n | uniq | tr '\n' ' ')
echo "loopback: P = $sizes"
for p in $sizes; do measure loopback "" "$p"; done
if [ "$NETNS" = 1 ]; then
  if why=$(netns_check) && netns_up "$TAG" "$TMP"; then
    echo "netns (4 namespaces, bridge): P = $sizes"
    for p in $sizes; do measure netns "$TMP/wrap.sh" "$p"; done
  else
    echo "netns: skipped (${why:-setup failed})"
  fi
fi
# A markdown table for docs/performance.md: rank 1, rank P-1, and min/max over ranks.
{
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $BYTES-byte bcast from rank 0, median of $ITERS calls per rank (µs)."
  echo
  echo "| net | P | algorithm | rank 1 | rank P-1 | fastest rank | slowest rank |"
  echo "| --- | ---: | --- | ---: | ---: | ---: | ---: |"
  awk -F, 'NR > 1 { k = $1 "," $2 "," $3; if (!(k in lo) || $5 < lo[k]) lo[k] = $5
                    if (!(k in hi) || $5 > hi[k]) hi[k] = $5
                    if ($4 == 1) r1[k] = $5; if ($4 == $3 - 1) rl[k] = $5; order[k] = NR }
           END { for (k in order) { split(k, f, ",")
                   printf "| %s | %d | %s | %.1f | %.1f | %.1f | %.1f |\n", f[1], f[3], f[2], r1[k], rl[k], lo[k], hi[k] } }' \
    "$CSV" | sort -t'|' -k2,2 -k3,3n -k4,4
} >"$OUT/summary.md"
echo "wrote $CSV and $OUT/summary.md"
[ "$PLOT" = 1 ] && bash bench/plot_mcast.sh "$CSV" "$OUT" "$FIXED"
exit 0
