#!/usr/bin/env bash
# run_killed_algos.sh — the `killed` trial of run_errors.sh (the last rank SIGKILLs itself
# in its 21st call of a loop; every survivor must return COLLIE_ERR_PEER naming it, within
# the fault budget, and collie-run must name it) for every registered algorithm of every
# collective forced in turn (COLLIE_<COLL>_ALGO), at each size: a dead peer is an error on
# every path, never a hang.  An algorithm that declines a call hands it to `auto`, which
# is then what is tried.
#
#   run_killed_algos.sh CR MP_ERRORS MP_COLLECTIVES P [BYTES ...]   (default 8 262144)
#   (MP_COLLECTIVES --list-algorithms COLL names the registered algorithms; BYTES per
#   rank's block)
set -u
run="$1" prog="$2" lister="$3" p="$4"
shift 4
[ $# -gt 0 ] || set -- 8 262144
here=$(cd "$(dirname "$0")" && pwd)
passed=0 failed=0
for bytes in "$@"; do
    for coll in allreduce bcast reduce barrier allgather reduce_scatter alltoall gather scatter scan exscan; do
        algos=$("$lister" --list-algorithms "$coll") || { echo "FAIL: cannot list the algorithms of $coll"; exit 1; }
        var="COLLIE_$(echo "$coll" | tr a-z A-Z)_ALGO"
        for algo in $algos; do
            if out=$(env "$var=$algo" MP_ERRORS_COLL="$coll" MP_ERRORS_BYTES="$bytes" \
                     bash "$here/run_errors.sh" --run "$run" --prog "$prog" -n "$p" killed 2>&1); then
                passed=$((passed + 1)); echo "PASS  P=$p $coll $algo $bytes B"
            else
                failed=$((failed + 1)); echo "FAIL  P=$p $coll $algo $bytes B"; echo "$out" | grep -v "^PASS" | head -20
            fi
        done
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
