#!/usr/bin/env bash
# trust_trials.sh — reruns the mismatch reproductions of the reliability trial (D2: ops,
# D3: bcast roots, D11: datatypes of one size; plus reduce roots) TRIALS times per
# configuration with tests/mp/mp_mismatch, no watchdog (COLLIE_TIMEOUT_MS=0), and counts per
# configuration: runs where every rank returned OK from the mismatched call ("silent"),
# runs where some OK ranks hold different data ("diverged"), runs where no rank reported
# anything even in the next call ("unreported"), hangs (collie-run --timeout) and crashes.
#   bench/trust_trials.sh [BUILD_DIR] [TRIALS] [COLLIE_CHECK]
set -u
build=${1:-build} trials=${2:-20} check=${3:-0}
prog=$build/tests/mp/mp_mismatch
printf '%-12s %-2s %-8s %6s %6s %8s %10s %5s %7s\n' mode P count runs silent diverged unreported hangs crashes
for mode in op op_prod dtype bcast_root reduce_root; do
  for P in 2 4; do
    for count in 4 262144; do
      silent=0 diverged=0 unrep=0 hangs=0 crashes=0
      for t in $(seq "$trials"); do
        dir=$(mktemp -d)
        COLLIE_CHECK=$check COLLIE_TIMEOUT_MS=0 "$build/collie-run" -n "$P" --timeout 20 -- \
          "$prog" "$mode" "$count" "$dir" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 124 ] && hangs=$((hangs + 1))
        [ $rc -gt 128 ] && [ $rc -ne 124 ] && crashes=$((crashes + 1))
        n=$(cat "$dir"/rank* 2>/dev/null | wc -l)
        ok=$(cat "$dir"/rank* 2>/dev/null | awk '$1 == 0' | wc -l)
        okh=$(cat "$dir"/rank* 2>/dev/null | awk '$1 == 0 { print $3 }' | sort -u | wc -l)
        rep=$(cat "$dir"/rank* 2>/dev/null | awk '$1 == -4 || $2 == -4' | wc -l)
        [ "$n" -eq "$P" ] && [ "$ok" -eq "$P" ] && silent=$((silent + 1))
        [ "$mode" != reduce_root ] && [ "$okh" -gt 1 ] && diverged=$((diverged + 1))
        [ "$n" -eq "$P" ] && [ "$rep" -eq 0 ] && unrep=$((unrep + 1))
        rm -rf "$dir"
      done
      printf '%-12s %-2s %-8s %6s %6s %8s %10s %5s %7s\n' "$mode" "$P" "$count" "$trials" "$silent" \
        "$diverged" "$unrep" "$hangs" "$crashes"
    done
  done
done
