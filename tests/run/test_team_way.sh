#!/usr/bin/env bash
# The schedules' way is the team's (core/path_tune.c, team_way): alltoall `flat` of 512 KiB
# blocks on 4 ranks, each rank timing the way of the messages it sends (kernel copy against
# shared memory), results checked by collie-bench --check; once rank 0 chose, every rank's
# last choice in the log (COLLIE_LOG=info) is rank 0's, whatever its own trial said.
# Usage: test_team_way.sh COLLIE_RUN COLLIE_BENCH
set -euo pipefail
run=$1 bench=$2
unset COLLIE_SHM_KERNEL_MIN
log=$(COLLIE_LOG=info "$run" -n 4 --timeout 120 "$bench" --coll alltoall --algo flat \
      --min-bytes 512K --max-bytes 512K --barrier-each --check 2>&1) || { echo "$log" | tail -20; exit 1; }
pat='the messages it sends in alltoall of 524288 B'
way0=$(grep "collie\[0\] info: rank 0: $pat" <<<"$log" | sed -n 's/.*taking \(.*\)$/\1/p' | tail -1)
[ -n "$way0" ] || { echo "FAIL: rank 0 chose no way"; echo "$log" | grep taking; exit 1; }
for r in 1 2 3; do
  last=$(grep "collie\[$r\] info: rank $r: $pat" <<<"$log" | sed -n 's/.*taking \(.*\)$/\1/p' | tail -1)
  last=${last%, rank 0\'s choice}
  [ "$last" = "$way0" ] || {
    echo "FAIL: rank $r ends with '${last:-no choice}', rank 0 chose '$way0'"; echo "$log" | grep taking; exit 1; }
done
echo "passed: every rank takes rank 0's way ($way0)"
