#!/usr/bin/env bash
# run_soak.sh FLAVOUR NP PROGRAM LIBDIR CALLS SEED[,SEED...]
# Runs mpi_soak (built for FLAVOUR) with NP ranks, CALLS calls, for each seed: plain, then
# with LD_PRELOAD=LIBDIR/libcollie_mpi.so (COLLIE_MPI_LOG=summary, COLLIE_TIMEOUT_MS=60000
# so that a hang in collie fails with its message).  Both runs must pass their checks; the
# summary must show calls served by collie and calls passed to PMPI.  A failing run's output
# ends with the command that replays it.
set -u
flavour=$1 np=$2 prog=$3 libdir=$4 calls=$5 seeds=$6
lib=$libdir/libcollie_mpi.so
work=$(mktemp -d /tmp/collie-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${COLLIE_MPI_TEST_TIMEOUT:-120}
. "$(dirname "$0")/mpi_launch.sh"

run() {   # run OUT SEED [VAR=VALUE...]
  local out=$1 seed=$2
  shift 2
  mpi_launch "$flavour" "$np" "$limit" "$out" "$out" "$@" -- "$prog" "$calls" "$seed"
}
fail() {   # fail OUT WHAT
  grep -v '^collie_mpi: ' "$1" | tail -25
  echo "FAIL ($flavour, $np ranks, $calls calls): $2"
  exit 1
}

[ -f "$lib" ] || { echo "FAIL: $lib is missing"; exit 1; }
for seed in ${seeds//,/ }; do
  run "$work/plain" "$seed" || fail "$work/plain" "the plain MPI run of seed $seed failed (exit $?)"
  grep -q 'plain MPI: passed (0 failures)' "$work/plain" || fail "$work/plain" "the plain run of seed $seed did not pass"
  run "$work/collie" "$seed" "LD_PRELOAD=$lib" COLLIE_MPI_LOG=summary COLLIE_TIMEOUT_MS=60000 ||
    fail "$work/collie" "the run of seed $seed with libcollie_mpi failed (exit $?); replay: LD_PRELOAD=$lib mpirun -np $np $prog $calls $seed"
  grep -q 'libcollie_mpi: passed (0 failures)' "$work/collie" ||
    fail "$work/collie" "the run of seed $seed with libcollie_mpi did not pass"
  served=$(sed -n 's/^collie_mpi: *[0-9]* *calls, \([0-9]*\) served by collie, \([0-9]*\) passed to PMPI$/\1 \2/p' "$work/collie")
  set -- $served
  [ "${1:-0}" -gt 0 ] || fail "$work/collie" "collie served no call (seed $seed)"
  [ "${2:-0}" -gt 0 ] || fail "$work/collie" "no call went to PMPI (seed $seed)"
  echo "seed $seed: $(grep -h 'mpi_soak,' "$work/plain") | $(grep -h 'mpi_soak,' "$work/collie"), $1 calls served by collie, $2 passed to PMPI"
done
echo "PASS ($flavour, $np ranks, $calls calls, seeds $seeds)"
