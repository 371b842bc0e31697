#!/usr/bin/env bash
# run_mismatch_algos.sh — run_mismatch.sh with every registered algorithm of each
# collective forced in turn (COLLIE_<COLL>_ALGO), with the mismatches that collective can
# meet: an algorithm whose ranks never read what would tell them that their peers called
# something else (a bcast root, a reduce's non-root) must still report it, never return
# OK with different results or hang.  An algorithm that declines a call hands it to
# `auto`, which is then what is tried.
#
#   run_mismatch_algos.sh CR MP_MISMATCH MP_COLLECTIVES P [--long-only]
#   (MP_COLLECTIVES --list-algorithms COLL names the registered algorithms; --long-only:
#   run only when COLLIE_LONG_TESTS=1, else exit 77, ctest's "skipped")
set -u
run="$1" prog="$2" lister="$3" p="$4"
if [ "${5:-}" = --long-only ] && [ "${COLLIE_LONG_TESTS:-0}" != 1 ]; then
    echo "skipped: set COLLIE_LONG_TESTS=1 to run"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
declare -A modes=(
    [allreduce]="op dtype"
    [bcast]="bcast_root bcast_root_next"
    [reduce]="reduce_root reduce_root_next"
    [allgather]="allgather_count"
    [reduce_scatter]="reduce_scatter_counts"
    [alltoall]="alltoallv_counts"
    [gather]="gather_root gatherv_count"
    [scan]="scan_count"
)
passed=0 failed=0
for coll in allreduce bcast reduce allgather reduce_scatter alltoall gather scan; do
    algos=$("$lister" --list-algorithms "$coll") || { echo "FAIL: cannot list the algorithms of $coll"; exit 1; }
    var="COLLIE_$(echo "$coll" | tr a-z A-Z)_ALGO"
    for algo in $algos; do
        # shellcheck disable=SC2086
        if out=$(env "$var=$algo" bash "$here/run_mismatch.sh" "$run" "$prog" "$p" ${modes[$coll]} 2>&1); then
            passed=$((passed + 1)); echo "PASS  P=$p $coll $algo"
        else
            failed=$((failed + 1)); echo "FAIL  P=$p $coll $algo"; echo "$out" | grep -v "^PASS"
        fi
    done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
