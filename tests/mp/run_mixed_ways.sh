#!/usr/bin/env bash
# Ranks that move their messages different ways in one call (kernel_ways_mixed.sh: rank 0 by
# the kernel copy, the others in user space), checked: mp_colls (allgather ... exscan, every
# algorithm, the v forms, in place, counts up to 300000) and every bcast algorithm through
# collie-bench --check --fresh-data from 64 KiB to 1 MiB with root 0 (the kernel copy's
# sender) and root P - 1 (a user-space sender), so receivers follow both kinds of sender.
# Usage: run_mixed_ways.sh COLLIE_RUN MP_COLLS COLLIE_BENCH P
set -euo pipefail
run=$1 colls=$2 bench=$3 P=$4
wrap="$(dirname "$0")/kernel_ways_mixed.sh"
out=$("$run" -n "$P" --timeout 300 "$wrap" "$colls" 2>&1) || { echo "$out" | tail -20; exit 1; }
grep -q "passed (0 failures" <<<"$out" || { echo "$out" | tail -20; exit 1; }
echo "$out" | tail -1
for root in 0 $((P - 1)); do
  out=$("$run" -n "$P" --timeout 300 "$wrap" "$bench" --coll bcast --algo all --root "$root" \
          --fresh-data --check --min-bytes 64K --max-bytes 1M --step-factor 4 --iters 5 \
          --warmup 1 2>&1) || { echo "bcast root $root:"; echo "$out" | tail -20; exit 1; }
  rows=$(grep -c '^ *[0-9].*[0-9] *[a-z_]*$' <<<"$out" || true)
  echo "bcast root $root: $rows rows checked"
  [ "$rows" -ge 18 ] || { echo "want at least 18 rows: $out"; exit 1; }
done
echo "mixed ways checked at P=$P"
