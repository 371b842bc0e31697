#!/usr/bin/env bash
# soak_sweep.sh COLLIE_RUN PYTHON SOAK CALLS SEEDS P... — a soak script (python/tests/soak.py
# or python/tests_torch/soak.py) at every P given for seeds 1..SEEDS, one run after another,
# each under collie-run's timeout; prints each failing run's last lines and, at the end,
# "soak sweep: N passed, M failed".  The heavy sweeps of COLLIE_LONG_TESTS=1.
set -uo pipefail
run=$1 py=$2 soak=$3 calls=$4 seeds=$5
shift 5
passed=0 failed=0
for p in "$@"; do
  for seed in $(seq 1 "$seeds"); do
    if out=$("$run" -n "$p" --timeout 120 "$py" "$soak" "$calls" "$seed" 2>&1); then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
      echo "FAILED: P = $p, seed $seed:"
      # the soak's own lines and the exceptions' last lines, not the tracebacks
      echo "$out" | grep -E "soak|Error|collie-run" | tail -8
    fi
  done
done
echo "soak sweep: $passed passed, $failed failed"
[ "$failed" = 0 ]
