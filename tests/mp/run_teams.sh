#!/usr/bin/env bash
# run_teams.sh — runs mp_teams under collie-run and checks its verdict line.
#   run_teams.sh [--long-only] COLLIE_RUN MP_TEAMS P [MODE]
# MODE main (default): exit 0 and "mp_teams main P=<P>: passed".
# MODE dead, dead_during: rank P-1 is killed (collie-run exits 137 naming it) and rank 0
# reports that its split / dup failed: "mp_teams MODE P=<P>: passed".
# --long-only: only with COLLIE_LONG_TESTS=1, else exit 77 (ctest's "skipped").
set -u
long_only=0
if [ "${1:-}" = --long-only ]; then long_only=1; shift; fi
run=$1 prog=$2 p=$3 mode=${4:-main}
if [ $long_only -eq 1 ] && [ "${COLLIE_LONG_TESTS:-0}" != 1 ]; then
    echo "skipped: set COLLIE_LONG_TESTS=1 to run"
    exit 77
fi
log=$(mktemp "${TMPDIR:-/tmp}/collie-teams.XXXXXX") || exit 2
"$run" -n "$p" --timeout 120 -- "$prog" "$mode" >"$log" 2>&1
rc=$?
cat "$log"
ok=1
grep -q "^mp_teams $mode P=$p: passed" "$log" || ok=0
grep -q "FAIL" "$log" && ok=0
if [ "$mode" = dead ] || [ "$mode" = dead_during ]; then
    [ $rc -eq 137 ] && grep -q "collie-run: rank $((p - 1)) (pid [0-9]*) killed by signal 9" "$log" || ok=0
else
    [ $rc -eq 0 ] || ok=0
fi
rm -f "$log"
[ $ok -eq 1 ] && echo "run_teams: $mode P=$p passed" && exit 0
echo "run_teams: $mode P=$p FAILED (collie-run exit $rc)"
exit 1
