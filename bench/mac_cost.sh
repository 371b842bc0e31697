#!/usr/bin/env bash
# mac_cost.sh — the cost of the multicast MAC (issue 15): the mcast bcast of 8 B and 8 MiB
# at P = 2 and 4, blocking, built without the MAC (OLD_BUILD: a build of commit 50d45c5,
# e.g. `git archive 50d45c5 | tar -x -C /tmp/old` then cmake) and with it (NEW_BUILD),
# interleaved REPS turns; prints the medians of avg_us and the ratio.
#   bench/mac_cost.sh OLD_BUILD NEW_BUILD [REPS]
set -u
old=$1 new=$2 reps=${3:-5}
tmp=$(mktemp -d)
for rep in $(seq "$reps"); do
  for P in 2 4; do for bytes in 8 8M; do for v in old new; do
    b=$old; [ $v = new ] && b=$new
    COLLIE_BCAST_ALGO=mcast "$b/collie-run" -n "$P" --timeout 300 -- "$b/collie-bench" --coll bcast \
      --algo mcast --mode blocking --min-bytes "$bytes" --max-bytes "$bytes" 2>/dev/null |
      awk '!/^#/ && NF { print $4, $8 }' >>"$tmp/$P-$bytes-$v"
  done; done; done
done
med() { awk '{print $1}' "$1" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
printf '%-3s %-6s %12s %12s %8s %s\n' P bytes no_mac_us mac_us ratio algos
for P in 2 4; do for bytes in 8 8M; do
  a=$(med "$tmp/$P-$bytes-old") b=$(med "$tmp/$P-$bytes-new")
  printf '%-3s %-6s %12.2f %12.2f %8.2f %s\n' "$P" "$bytes" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{print b/a}')" "$(awk '{print $2}' "$tmp/$P-$bytes-new" "$tmp/$P-$bytes-old" | sort -u | tr '\n' ' ')"
done; done
rm -rf "$tmp"
