#!/usr/bin/env bash
# run_mpi_check.sh FLAVOUR NP PROGRAM LIBDIR [ARGS...]
# Runs PROGRAM (mpi_check built for FLAVOUR) under mpirun with NP ranks twice: plain, and
# with LD_PRELOAD=LIBDIR/libcollie_mpi.so and COLLIE_MPI_LOG=1.  Passes when both runs
# check their results, print identical digests, and the log shows collie served
# MPI_Allreduce/Reduce/Bcast/Barrier and their I*/persistent forms while the cases collie
# cannot serve went to PMPI.  With COLLIE_MPI_NODE_SPLIT=k in the environment, every k
# consecutive ranks count as one node: the blocking calls must then run hierarchically
# (shm inside a "node", the mpi transport between leaders) and the split-phase ones go to
# PMPI.
set -u
split=${COLLIE_MPI_NODE_SPLIT:-}
unset COLLIE_MPI_NODE_SPLIT
flavour=$1 np=$2 prog=$3 libdir=$4
shift 4
args=("$@")
# The cases of allgather … exscan: about half of them unless COLLIE_LONG_TESTS=1; over the
# RMA transport (whose half communicators are one "node" each: shm) one per call and form
# on MPI_COMM_WORLD (suite time).
if [ "${COLLIE_LONG_TESTS:-0}" != 1 ]; then
  args+=(--colls-quick)
  [ "${COLLIE_MPI_TRANSPORT:-}" = rma ] && args+=(--colls-min)
fi
lib=$libdir/libcollie_mpi.so
work=$(mktemp -d /tmp/collie-mpi-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${COLLIE_MPI_TEST_TIMEOUT:-400}
. "$(dirname "$0")/mpi_launch.sh"

run() {   # run OUT ERR [VAR=VALUE...]
  local out=$1 err=$2
  shift 2
  mpi_launch "$flavour" "$np" "$limit" "$out" "$err" "$@" -- "$prog" "${args[@]}"
}

fail() { echo "FAIL ($flavour, $np ranks): $*"; exit 1; }

[ -f "$lib" ] || fail "$lib is missing"
start=$(date +%s)
run "$work/plain.out" "$work/plain.err" COLLIE_MPI_TEST=plain ||
  { cat "$work/plain.err" "$work/plain.out" | tail -30; fail "the plain MPI run failed"; }
mid=$(date +%s)
extra=()
[ -n "$split" ] && extra=("COLLIE_MPI_NODE_SPLIT=$split" COLLIE_LOG=debug)
[ -n "${COLLIE_MPI_TRANSPORT:-}" ] && extra+=("COLLIE_MPI_TRANSPORT=$COLLIE_MPI_TRANSPORT")
run "$work/collie.out" "$work/collie.err" "LD_PRELOAD=$lib" COLLIE_MPI_LOG=1 "${extra[@]}" ||
  { grep -v '^collie_mpi: rank' "$work/collie.err" | tail -30; tail -5 "$work/collie.out"; fail "the run with libcollie_mpi failed"; }
end=$(date +%s)
echo "plain run $((mid - start)) s, collie run $((end - mid)) s${split:+ (node split $split, transport ${COLLIE_MPI_TRANSPORT:-p2p})}"
grep -q '^passed' "$work/plain.out" || fail "plain run did not pass"
grep -q '^passed' "$work/collie.out" || fail "collie run did not pass"
if ! diff -q "$work/plain.out" "$work/collie.out" >/dev/null; then
  diff "$work/plain.out" "$work/collie.out" | head -20
  fail "results differ between MPI and collie"
fi
log=$work/collie.err
served="collie"
if [ -n "$split" ]; then
  served="collie over shm+mpi"
  [ "${COLLIE_MPI_TRANSPORT:-p2p}" = rma ] && served="collie over shm+mpi-rma"
  for coll in allreduce reduce bcast; do
    grep -q "debug: $coll of .*: auto chose hierarchical (the team spans" "$log" ||
      fail "collie did not choose the hierarchical $coll"
  done
fi
for fn in MPI_Allreduce MPI_Reduce MPI_Bcast MPI_Barrier MPI_Iallreduce MPI_Ireduce MPI_Ibcast MPI_Ibarrier \
          MPI_Allreduce_init MPI_Reduce_init MPI_Bcast_init MPI_Barrier_init; do
  grep -q "^collie_mpi: rank 0: $fn(.*-> $served\$" "$log" || fail "the log shows no $fn served by $served"
done
grep -q -- "MPI_LONG_DOUBLE, .*-> PMPI (long double: collie has no such type)" "$log" || fail "the long double reduction did not go to PMPI with its reason"
# Every predefined type either served or passed on with its own reason.
for t in MPI_CHAR MPI_BYTE MPI_C_BOOL MPI_CXX_BOOL MPI_C_COMPLEX MPI_C_DOUBLE_COMPLEX MPI_COMPLEX \
         MPI_AINT MPI_COUNT MPI_INTEGER MPI_REAL MPI_DOUBLE_PRECISION MPI_2INTEGER; do
  grep -q "^collie_mpi: rank 0: MPI_Allreduce(count=[0-9]*, $t, .*-> $served\$" "$log" ||
    fail "the log shows no MPI_Allreduce on $t served by $served"
done
grep -q -- "MPI_C_DOUBLE_COMPLEX, .*-> PMPI (collie reduces complex numbers with MPI_SUM only)" "$log" ||
  fail "the complex product did not go to PMPI with its reason"
grep -q -- "MPI_LOGICAL, .*-> PMPI (Fortran LOGICAL: its .TRUE. value is the compiler's)" "$log" ||
  fail "the Fortran LOGICAL reduction did not go to PMPI with its reason"
grep -q -- "MPI_CHARACTER, .*-> PMPI (Fortran CHARACTER: MPICH reduces it signed, Open MPI unsigned)" "$log" ||
  fail "the Fortran CHARACTER reduction did not go to PMPI with its reason"
if grep -E -- "-> PMPI \((predefined datatype collie does not know|derived datatype collie cannot flatten)" "$log" |
   grep -v -- "(count=[0-9]*, -," | grep -q .; then
  grep -- "-> PMPI (predefined datatype collie does not know" "$log" | head -3
  fail "a predefined type went to PMPI without its reason"
fi
grep -q -- "-> PMPI (user op on a derived datatype)" "$log" || fail "the derived user-op reduction did not go to PMPI"
# allgather(v) … exscan: every blocking, MPI_I* and persistent entry point served by collie,
# none passed to PMPI but the long double scan (with its reason).
xfns=()
for f in Allgather Allgatherv Reduce_scatter_block Reduce_scatter Alltoall Alltoallv Gather Gatherv \
         Scatter Scatterv Scan Exscan; do
  xfns+=("MPI_$f" "MPI_I$(echo "${f:0:1}" | tr A-Z a-z)${f:1}" "MPI_${f}_init")
done
for fn in "${xfns[@]}"; do
  grep -q "^collie_mpi: rank 0: $fn(.*-> $served\$" "$log" || fail "the log shows no $fn served by $served"
done
grep -q -- "MPI_Scan(count=50, MPI_LONG_DOUBLE, .*-> PMPI (long double: collie has no such type)" "$log" ||
  fail "the long double scan did not go to PMPI with its reason"
if grep -Ei "^collie_mpi: rank [0-9]+: MPI_I?(Allgather|Reduce_scatter|Alltoall|Gather|Scatter|Scan|Exscan)[a-z_]*\(.*-> PMPI" "$log" |
   grep -v "MPI_LONG_DOUBLE, .*(long double: collie has no such type)" | grep -q .; then
  grep -Ei "MPI_I?(Allgather|Reduce_scatter|Alltoall|Gather|Scatter|Scan|Exscan)[a-z_]*\(.*-> PMPI" "$log" | head -3
  fail "a call of allgather … exscan went to PMPI"
fi
# The same calls once more with COLLIE_MPI_LOG=summary (--colls-only --quick; one node, up to
# 4 ranks): the table at MPI_Finalize must show each of them served by collie.
if [ -z "$split" ] && [ "$np" -le 4 ]; then
  args=(--colls-only --quick)
  run "$work/sum.out" "$work/sum.err" "LD_PRELOAD=$lib" COLLIE_MPI_LOG=summary ||
    { tail -30 "$work/sum.err"; fail "the summary run with libcollie_mpi failed"; }
  grep -q '^passed' "$work/sum.out" || fail "the summary run did not pass"
  for fn in "${xfns[@]}"; do
    grep -Eq "^collie_mpi: +[0-9]+  $fn +collie\$" "$work/sum.err" ||
      { grep "$fn " "$work/sum.err"; fail "the summary shows no $fn served by collie"; }
  done
  echo "summary run: $(grep -E '^collie_mpi: +[0-9]+  calls' "$work/sum.err" | sed 's/^collie_mpi: *//')"
fi
echo "collie served $(grep -c -- '^collie_mpi: .*-> collie' "$log") calls, PMPI $(grep -c -- '-> PMPI' "$log") (all ranks)"
echo "PASS ($flavour, $np ranks): $(grep -c . "$work/collie.out") identical result lines"
