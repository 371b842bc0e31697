#!/usr/bin/env bash
# run_errors.sh — runs the error tests of mp_errors under collie-run, one line per mode,
# with the failure watchdog each mode needs (COLLIE_TIMEOUT_MS; none for the modes that
# test the default waiting), and a final line "N passed, N failed".
#
#   run_errors.sh --run PATH/collie-run --prog PATH/mp_errors [-n P] [MODE ...]
#   modes: args mismatch dead silent misuse compute compute_watchdog poll killed stopped
#          (default: all).  killed runs the ring allreduce (survivors wait for survivors);
#          COLLIE_LONG_TESTS=1: killed once per allreduce algorithm of the fault trials and
#          per other collective, at 8 B and 8 MiB (MP_ERRORS_COLL, MP_ERRORS_BYTES pick the
#          call of mode killed); compute for 65 s.
set -u

run="" prog="" p=4
while [ $# -gt 0 ]; do
    case "$1" in
        --run) run="$2"; shift 2 ;;
        --prog) prog="$2"; shift 2 ;;
        -n) p="$2"; shift 2 ;;
        -*) echo "run_errors.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ -n "$run" ] && [ -n "$prog" ] || { echo "usage: run_errors.sh --run CR --prog MP_ERRORS [-n P] [MODE...]" >&2; exit 2; }
[ $# -gt 0 ] || set -- args mismatch dead silent misuse compute compute_watchdog poll killed stopped

# The watchdog of a mode ("" = none, the default waiting semantics).
timeout_ms() {
    case "$1" in
        silent|stopped) echo 2000 ;;
        compute_watchdog) echo 1000 ;;
        args|mismatch|dead) echo 3000 ;;
        *) echo "" ;;
    esac
}

# killed: collie-run exits 137 and names the killed rank P-1; every other mode exits 0.
verdict() {
    local mode=$1 rc=$2 log=$3
    if [ "$mode" = killed ]; then
        [ "$rc" -eq 137 ] && grep -q "collie-run: rank $((p - 1)) (pid [0-9]*) killed by signal 9" "$log" &&
            grep -q "mp_errors killed P=$p: passed" "$log"
    else
        [ "$rc" -eq 0 ]
    fi
}

passed=0 failed=0
one() {   # one MODE [VAR=VALUE ...]: runs the mode with extra environment
    local mode=$1; shift
    local prog_mode=${mode%_watchdog} dir t0 rc secs tmo
    dir=$(mktemp -d "${TMPDIR:-/tmp}/collie-mperr.XXXXXX") || exit 2
    tmo=$(timeout_ms "$mode")
    t0=$(date +%s.%N)
    if [ -n "$tmo" ]; then
        env "$@" COLLIE_TIMEOUT_MS="$tmo" "$run" -n "$p" --timeout 150 -- "$prog" "$prog_mode" "$dir" >"$dir/log" 2>&1
    else
        env -u COLLIE_TIMEOUT_MS "$@" "$run" -n "$p" --timeout 150 -- "$prog" "$prog_mode" "$dir" >"$dir/log" 2>&1
    fi
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if verdict "$mode" "$rc" "$dir/log"; then
        passed=$((passed + 1))
        printf 'PASS  P=%-3s errors %-16s %6ss %s\n' "$p" "$mode" "$secs" "$*"
        grep '^  ' "$dir/log" | grep -E 'poll|compute' | sed 's/^/    /'
    else
        failed=$((failed + 1))
        printf 'FAIL  P=%-3s errors %-16s %6ss  (exit status %s) %s\n' "$p" "$mode" "$secs" "$rc" "$*"
        head -n 40 "$dir/log" | sed 's/^/    /'
    fi
    rm -rf "$dir"
}

for mode in "$@"; do
    if [ "$mode" = killed ] && [ "${COLLIE_LONG_TESTS:-0}" = 1 ]; then
        for bytes in 8 8388608; do
            for algo in ring recursive_doubling direct_segments ring_pipelined flat; do
                one killed COLLIE_ALLREDUCE_ALGO=$algo MP_ERRORS_BYTES=$bytes
            done
            for coll in bcast reduce barrier; do
                one killed MP_ERRORS_COLL=$coll MP_ERRORS_BYTES=$bytes
            done
        done
    elif [ "$mode" = killed ]; then
        one killed COLLIE_ALLREDUCE_ALGO=${COLLIE_ALLREDUCE_ALGO:-ring}   # default a ring: survivors wait for survivors
    else
        one "$mode"
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
