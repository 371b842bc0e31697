#!/usr/bin/env bash
# bench/shared_heap.sh — the shared heap against plain malloc and collie_alloc buffers:
# collie-bench allreduce and bcast at P = 2 (default), 2 MiB and 8 MiB, each call after a
# barrier (the slowest rank's mean), reused and fresh data, with buffers from
#   malloc  posix_memalign, glibc (the copy cells / kernel copy),
#   heap    posix_memalign under collie-run --shared-heap (libcollie_heap.so: mapped),
#   alloc   collie_alloc (mapped).
# The three kinds run interleaved, ROUNDS times (a loaded machine drifts: compare within a
# round), and the table shows the best round per point and the ratios to malloc.
#
#   BUILD_DIR=build [ITERS=100] bash bench/shared_heap.sh [ROUNDS] [NP]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
ROUNDS=${1:-3}; NP=${2:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for r in $(seq "$ROUNDS"); do
  for coll in allreduce bcast; do
    for data in reused fresh; do
      fresh=(); [ $data = fresh ] && fresh=(--fresh-data)
      for kind in malloc heap alloc; do
        pre=(); extra=()
        [ $kind = heap ] && pre=(--shared-heap)
        [ $kind = alloc ] && extra=(--collie-alloc)
        "$B/collie-run" -n "$NP" --timeout 300 "${pre[@]}" -- "$B/collie-bench" --coll "$coll" \
          --min-bytes 2M --max-bytes 8M --step-factor 4 --iters ${ITERS:-100} --warmup 10 --barrier-each \
          "${fresh[@]}" "${extra[@]}" |
          awk -v c="$coll" -v d="$data" -v k="$kind" '$1 ~ /^[0-9]+$/ { print c, d, $1, k, $4, $8 }' \
          >> "$TMP/all.txt"
      done
    done
  done
done
# best round per (coll, data, bytes, kind), then one row per point
sort -k1,1 -k2,2 -k3,3n -k4,4 -k5,5g "$TMP/all.txt" | awk '!seen[$1" "$2" "$3" "$4]++' > "$TMP/best.txt"
echo "# P = $NP, us per call (best of $ROUNDS interleaved rounds), algorithm as chosen"
printf "%-9s %-6s %8s %9s %9s %9s %10s %10s  %s\n" coll data bytes malloc heap alloc heap/mall alloc/mall "algorithms (malloc heap alloc)"
awk '{ k=$1" "$2" "$3; t[k" "$4]=$5; a[k" "$4]=$6; if (!(k in seen)) { seen[k]=1; order[n++]=k } }
     END { for (i = 0; i < n; i++) { k = order[i]; split(k, f, " ");
       m = t[k" malloc"]; h = t[k" heap"]; c = t[k" alloc"];
       printf "%-9s %-6s %8s %9.1f %9.1f %9.1f %10.2f %10.2f  %s %s %s\n", f[1], f[2], f[3], m, h, c,
              h / m, c / m, a[k" malloc"], a[k" heap"], a[k" alloc"] } }' "$TMP/best.txt"
