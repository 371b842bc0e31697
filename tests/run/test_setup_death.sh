#!/usr/bin/env bash
# test_setup_death.sh — ranks started without collie-run (COLLIE_RANK/SIZE/JOB set by hand,
# as an embedder does), with no COLLIE_TIMEOUT_MS: rank 0 creates the job's shared memory
# and is SIGKILLed while rank 3 has not arrived yet.  Ranks 1 and 2 must fail within a
# few seconds naming rank 0, and /dev/shm/collie-<job> must be gone (it used to stay).
#
#   test_setup_death.sh PATH/collie-bench
set -u
bench=$1
job=setup-death-$$-$RANDOM
log=$(mktemp "${TMPDIR:-/tmp}/collie-sd.XXXXXX")
pids=()
for r in 0 1 2; do
    env -u COLLIE_TIMEOUT_MS COLLIE_RANK=$r COLLIE_SIZE=4 COLLIE_JOB=$job \
        "$bench" --coll allreduce --min-bytes 8 --max-bytes 8 --iters 1 >>"$log" 2>&1 &
    pids+=($!)
done
sleep 0.5
kill -9 "${pids[0]}"
t0=$(date +%s)
fail=0
for i in 1 2; do
    # wait with a bound: a rank that never returns is a failure, not a hung test
    for _ in $(seq 100); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "${pids[$i]}" 2>/dev/null; then
        echo "FAIL: rank $i still waits 10 s after rank 0 died"; kill -9 "${pids[$i]}"; fail=1
    fi
    wait "${pids[$i]}" && { echo "FAIL: rank $i exited 0"; fail=1; }
done
wait "${pids[0]}" 2>/dev/null
grep -q "rank 0 (pid [0-9]*) died" "$log" || { echo "FAIL: no rank named rank 0's death:"; cat "$log"; fail=1; }
if [ -e "/dev/shm/collie-$job" ]; then
    echo "FAIL: /dev/shm/collie-$job left behind"; rm -f "/dev/shm/collie-$job"; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: ranks 1, 2 failed in $(( $(date +%s) - t0 )) s naming rank 0; no segment left"
rm -f "$log"
exit $fail
