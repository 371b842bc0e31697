#!/usr/bin/env bash
# run_matrix.sh — runs mp_collectives under collie-run for every (P, collective, algorithm)
# combination: the algorithms come from `mp_collectives --list-algorithms COLL` (so a newly
# registered algorithm is tested automatically), plus "auto".  After each allreduce run
# the per-rank result files of the association-sensitive sums must be bitwise identical.
# Prints one line per combination and a final line "N passed, N failed".
#
#   run_matrix.sh --run PATH/collie-run --prog PATH/mp_collectives
#                 [--colls "allreduce reduce bcast barrier"] [--timeout S] [--long-only]
#                 [--algos "NAME ..."] [--alloc malloc|collie|mixed] P [P ...]
#
# --long-only: run only when COLLIE_LONG_TESTS=1, else exit 77 (ctest's "skipped").
# --algos: only these of the registered algorithms (and no "auto"); --alloc: passed to
# mp_collectives (where the buffers come from; mixed: collie_alloc and malloc per rank).
set -u

run="" prog="" colls="allreduce reduce bcast barrier" timeout=120 long_only=0 only="" alloc=malloc
while [ $# -gt 0 ]; do
    case "$1" in
        --run) run="$2"; shift 2 ;;
        --prog) prog="$2"; shift 2 ;;
        --colls) colls="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --long-only) long_only=1; shift ;;
        --algos) only="$2"; shift 2 ;;
        --alloc) alloc="$2"; shift 2 ;;
        --) shift; break ;;
        -*) echo "run_matrix.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ -z "$run" ] || [ -z "$prog" ] || [ $# -eq 0 ]; then
    echo "usage: run_matrix.sh --run COLLIE_RUN --prog MP_COLLECTIVES [--colls LIST] [--timeout S] P..." >&2
    exit 2
fi
if [ $long_only -eq 1 ] && [ "${COLLIE_LONG_TESTS:-0}" != 1 ]; then
    echo "skipped: set COLLIE_LONG_TESTS=1 to run"
    exit 77
fi

# A hang shows up as COLLIE_ERR_PEER after this long instead of the 60 s default.
export COLLIE_TIMEOUT_MS="${COLLIE_TIMEOUT_MS:-20000}"
passed=0 failed=0
top=$(mktemp -d "${TMPDIR:-/tmp}/collie-mp.XXXXXX") || exit 2
trap 'rm -rf "$top"' EXIT

now() { date +%s.%N; }

# Bitwise comparison of DIR/assoc_*_r<rank>.bin across ranks 0..P-1; prints the problems.
compare_results() {
    local dir="$1" p="$2" f prefix r bad=0
    for f in "$dir"/assoc_*_r0.bin; do
        [ -e "$f" ] || { echo "    no result files written"; return 1; }
        prefix="${f%_r0.bin}"
        for ((r = 1; r < p; r++)); do
            if ! cmp -s "$f" "${prefix}_r$r.bin"; then
                echo "    $(basename "$prefix"): rank $r's result differs from rank 0's (not bitwise identical)"
                bad=1
            fi
        done
    done
    return $bad
}

run_one() {
    local p="$1" coll="$2" algo="$3" dir log t0 t1 rc ok=1 why=""
    dir=$(mktemp -d "$top/run.XXXXXX")
    log="$dir/log"
    t0=$(now)
    "$run" -n "$p" --timeout "$timeout" -- "$prog" --coll "$coll" --algo "$algo" --dir "$dir" \
        --alloc "$alloc" >"$log" 2>&1
    rc=$?
    t1=$(now)
    [ $rc -eq 0 ] || { ok=0; why="exit status $rc"; }
    if [ $rc -eq 0 ] && [ "$coll" = allreduce ] && ! compare_results "$dir" "$p" >>"$log"; then
        ok=0; why="${why:+$why, }results differ between ranks"
    fi
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $ok -eq 1 ]; then
        passed=$((passed + 1))
        printf 'PASS  P=%-3s %-9s %-24s %6ss\n' "$p" "$coll" "$algo" "$secs"
    else
        failed=$((failed + 1))
        printf 'FAIL  P=%-3s %-9s %-24s %6ss  (%s)\n' "$p" "$coll" "$algo" "$secs" "$why"
        grep -E 'FAIL|ERROR|differs|error|Assert|Sanitizer|timed out|killed' "$log" | head -n 25 | sed 's/^/    /'
    fi
    rm -rf "$dir"
}

for p in "$@"; do
    for coll in $colls; do
        if ! algos=$("$prog" --list-algorithms "$coll"); then
            failed=$((failed + 1))
            echo "FAIL  P=$p $coll: --list-algorithms failed"
            continue
        fi
        [ -n "$only" ] || algos="$algos auto"
        for algo in $algos; do
            if [ -n "$only" ] && ! [[ " $only " == *" $algo "* ]]; then
                continue
            fi
            run_one "$p" "$coll" "$algo"
        done
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
