#!/usr/bin/env bash
# run_errors.sh — runs the error tests of mp_errors under collie-run, one line per mode,
# with the failure timeout each mode needs (COLLIE_TIMEOUT_MS), and a final line
# "N passed, N failed".
#
#   run_errors.sh --run PATH/collie-run --prog PATH/mp_errors [-n P] [MODE ...]
#   modes: args mismatch dead silent (default: all)
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
[ $# -gt 0 ] || set -- args mismatch dead silent

timeout_ms() {
    case "$1" in
        silent) echo 2000 ;;
        *) echo 3000 ;;
    esac
}

passed=0 failed=0
for mode in "$@"; do
    dir=$(mktemp -d "${TMPDIR:-/tmp}/collie-mperr.XXXXXX") || exit 2
    t0=$(date +%s.%N)
    COLLIE_TIMEOUT_MS=$(timeout_ms "$mode") "$run" -n "$p" --timeout 60 -- "$prog" "$mode" "$dir" >"$dir/log" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        printf 'PASS  P=%-3s errors %-9s %6ss\n' "$p" "$mode" "$secs"
    else
        failed=$((failed + 1))
        printf 'FAIL  P=%-3s errors %-9s %6ss  (exit status %s)\n' "$p" "$mode" "$secs" "$rc"
        head -n 40 "$dir/log" | sed 's/^/    /'
    fi
    rm -rf "$dir"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
