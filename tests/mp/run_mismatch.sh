#!/usr/bin/env bash
# run_mismatch.sh — ranks that disagree about a call (op, datatype, bcast root, reduce
# root, and roots that no rank takes; a small and a single-copy size) under collie-run with no timeout watchdog
# (COLLIE_TIMEOUT_MS=0): no hang, no rank set returning OK with different results, a
# message naming both calls.  With --check, COLLIE_CHECK=1 and every rank must report.
#
#   run_mismatch.sh CR MP_MISMATCH P [--check] [MODE ...]
set -u
run="$1" prog="$2" p="$3"
shift 3
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
[ $# -gt 0 ] || set -- op dtype bcast_root reduce_root bcast_root_next reduce_root_next
passed=0 failed=0
for mode in "$@"; do
    for count in 4 262144; do
        dir=$(mktemp -d "${TMPDIR:-/tmp}/collie-mm.XXXXXX") || exit 2
        COLLIE_CHECK=$check COLLIE_TIMEOUT_MS=0 "$run" -n "$p" --timeout 30 -- "$prog" "$mode" "$count" "$dir" \
            >"$dir/log" 2>&1
        all=""
        [ $check -eq 1 ] && all=all
        if "$prog" verify "$mode" "$p" "$dir" $all >"$dir/verify" 2>&1; then
            passed=$((passed + 1)); echo "PASS  P=$p check=$check $mode count=$count"
        else
            failed=$((failed + 1)); echo "FAIL  P=$p check=$check $mode count=$count"
            cat "$dir/verify" "$dir/log"
        fi
        rm -rf "$dir"
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
