#!/usr/bin/env bash
# Ranks that count the job's CPUs differently (different affinity masks, or a launcher that
# binds some ranks and not others) still build the same schedules and take the same ways:
# what depends on "more ranks than cores" is rank 0's count, stored in the segment header
# (transport.h, collie_transport.shared_cores).  Each rank here is told a different CPU
# count through COLLIE_JOB_CPUS (what collie-run passes to bound ranks):
# - P = 2, rank 1 says 1 CPU: bcast and reduce, whose P = 2 slots trial depends on it;
# - P = 3, rank 0 says 4 CPUs, the others 2: reduce direct_segments, whose schedule
#   (flat or reduce-scatter + gather) depends on it.
# Every call is checked (collie-bench --check); a disagreement hangs (stopped by
# --timeout 60) or gives wrong results.
# Usage: test_mixed_cpus.sh COLLIE_RUN COLLIE_BENCH
set -euo pipefail
run=$1 bench=$2
unset COLLIE_SHM_KERNEL_MIN COLLIE_JOB_CPUS
# $1: CPUs rank 0 counts, $2: CPUs the other ranks count, $3: ranks, then collie-bench's
# arguments.
mixed() {
  local cpus0=$1 cpus_other=$2 np=$3; shift 3
  "$run" -n "$np" --timeout 60 --bind-to none sh -c \
    'if [ "$COLLIE_RANK" = 0 ]; then export COLLIE_JOB_CPUS='"$cpus0"'; else export COLLIE_JOB_CPUS='"$cpus_other"'; fi; exec "$@"' \
    sh "$bench" "$@" 2>&1
}
for coll in bcast reduce; do
  out=$(mixed 2 1 2 --coll "$coll" --algo auto --min-bytes 256K --max-bytes 4M \
        --step-factor 4 --barrier-each --check) || { echo "$out" | tail -20; echo "FAIL: P=2 $coll"; exit 1; }
done
for slots_max in default 8M; do     # 8M: every call runs the schedule through the slots
  for algo in direct_segments auto; do
    out=$(if [ $slots_max != default ]; then export COLLIE_SHM_SLOTS_MAX=$slots_max; fi
          mixed 4 2 3 --coll reduce --algo "$algo" --min-bytes 64K --max-bytes 4M \
            --step-factor 4 --barrier-each --check) ||
      { echo "$out" | tail -20; echo "FAIL: P=3 reduce $algo, slots up to $slots_max"; exit 1; }
  done
done
echo "passed: ranks counting different CPUs agree (P=2 bcast/reduce, P=3 reduce)"
