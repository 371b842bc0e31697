#!/usr/bin/env bash
# trust_costs.sh — the cost of COLLIE_CHECK=1 (issue 15): 8 B and 8 MiB bcast and
# allreduce at P = 2 and 4, with and without the agreement step, interleaved (every
# configuration once per turn, REPS turns), blocking calls; prints the median of avg_us
# over the turns and the ratio.
#   bench/trust_costs.sh [BUILD_DIR] [REPS]
set -u
build=${1:-build} reps=${2:-5}
tmp=$(mktemp -d)
for rep in $(seq "$reps"); do
  for P in 2 4; do
    for coll in bcast allreduce; do
      for bytes in 8 8M; do
        for check in 0 1; do
          COLLIE_CHECK=$check "$build/collie-run" -n "$P" --timeout 300 -- "$build/collie-bench" \
            --coll "$coll" --mode blocking --min-bytes "$bytes" --max-bytes "$bytes" 2>/dev/null |
            awk '!/^#/ && NF { print $4 }' >>"$tmp/$P-$coll-$bytes-$check"
        done
      done
    done
  done
done
med() { sort -g "$1" | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
printf '%-3s %-10s %-6s %12s %12s %8s\n' P coll bytes check=0_us check=1_us ratio
for P in 2 4; do for coll in bcast allreduce; do for bytes in 8 8M; do
  a=$(med "$tmp/$P-$coll-$bytes-0") b=$(med "$tmp/$P-$coll-$bytes-1")
  printf '%-3s %-10s %-6s %12.2f %12.2f %8.2f\n' "$P" "$coll" "$bytes" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
done; done; done
rm -rf "$tmp"
