#!/usr/bin/env bash
# run_interlock.sh FLAVOUR NP PROGRAM LIBDIR PATTERNS SIZES [--long]
# Runs mpi_interlock or mpi_requests (built for FLAVOUR) with NP ranks plain and with
# LD_PRELOAD=LIBDIR/libcollie_mpi.so (COLLIE_MPI_LOG=1): both must pass their checks, and
# the log must show collie served the MPI_Iallreduce (and, for porder and gapped, the
# persistent calls; for gapped, rank 0's MPI_Ibcast of a type with gaps; for ordered, a
# persistent call matched by start order).  COLLIE_TIMEOUT_MS=60000 turns a hang into a failure.  With --long the test runs
# only when COLLIE_LONG_TESTS=1 (exit 77: skipped).
set -u
flavour=$1 np=$2 prog=$3 libdir=$4 patterns=$5 sizes=$6
if [ "${7:-}" = --long ] && [ "${COLLIE_LONG_TESTS:-0}" != 1 ]; then
  echo "skipped: set COLLIE_LONG_TESTS=1"; exit 77
fi
lib=$libdir/libcollie_mpi.so
work=$(mktemp -d /tmp/collie-interlock.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${COLLIE_MPI_TEST_TIMEOUT:-240}
. "$(dirname "$0")/mpi_launch.sh"

run() {   # run OUT ERR [VAR=VALUE...]
  local out=$1 err=$2
  shift 2
  mpi_launch "$flavour" "$np" "$limit" "$out" "$err" "$@" -- "$prog" "$patterns" "$sizes"
}
fail() { echo "FAIL ($flavour, $np ranks, $patterns): $*"; exit 1; }

[ -f "$lib" ] || fail "$lib is missing"
run "$work/plain.out" "$work/plain.err" || { tail -20 "$work/plain.err" "$work/plain.out"; fail "the plain MPI run failed"; }
grep -q '^passed: 0 failures' "$work/plain.out" || fail "the plain run did not pass"
run "$work/collie.out" "$work/collie.err" "LD_PRELOAD=$lib" COLLIE_MPI_LOG=1 COLLIE_TIMEOUT_MS=60000 ||
  { grep -v '^collie_mpi: rank' "$work/collie.err" | tail -20; tail -5 "$work/collie.out"; fail "the run with libcollie_mpi failed"; }
grep -q '^passed: 0 failures' "$work/collie.out" || { cat "$work/collie.out"; fail "the collie run did not pass"; }
grep -q '^collie_mpi: rank 0: MPI_I*[A-Za-z]*(.*-> collie$' "$work/collie.err" || fail "collie served no call"
case $patterns in *gapped*)   # rank 0's type has gaps: collie packs it
  grep -q '^collie_mpi: rank 0: MPI_Ibcast(.*-> collie$' "$work/collie.err" ||
    fail "collie did not serve MPI_Ibcast of a type with gaps";;
esac
case $patterns in *ordered*)   # the info key: matched by start order
  grep -q '^collie_mpi: rank 0: MPI_Allreduce_init(.*-> collie (matched by start order' "$work/collie.err" ||
    grep -q 'skipped' "$work/collie.out" || fail "collie did not take the start-order assertion";;
esac
case $patterns in *allgather*)   # mpi_rma_progress: over the RMA transport between "nodes"
  [ "${COLLIE_MPI_TRANSPORT:-}" = rma ] &&
    { grep -q '^collie_mpi: rank 0: MPI_Allgather(.*-> collie over shm+mpi-rma$' "$work/collie.err" ||
      fail "collie did not serve MPI_Allgather over the RMA transport"; };;
esac
case $patterns in *porder*|*gapped*)
  grep -q 'MPI_Bcast_init(.*-> collie$' "$work/collie.err" || grep -q 'skipped' "$work/collie.out" ||
    fail "collie did not serve the persistent calls";;
esac
paste -d'|' <(grep -v '^passed' "$work/plain.out") <(grep -v '^passed' "$work/collie.out") |
  sed 's/|/   | drop-in: /; s/^/plain: /'
echo "PASS ($flavour, $np ranks, $patterns)"
