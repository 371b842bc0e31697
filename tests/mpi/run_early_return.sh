#!/usr/bin/env bash
# run_early_return.sh FLAVOUR NP PROGRAM LIBDIR — runs mpi_early_return (a plain MPI
# program) for each rooted collective, plain and with LD_PRELOAD=LIBDIR/libcollie_mpi.so.
# A collective the plain MPI runs (within the time limit, its checks passing) must run
# through the drop-in too; one the plain MPI cannot run is reported and left out.  Fails
# when the drop-in fails a collective that plain MPI runs, or when plain MPI ran none.
set -u
flavour=$1 np=$2 prog=$3 libdir=$4
here=$(dirname "$0")
limit=${COLLIE_MPI_TEST_TIMEOUT:-60}
lib=$libdir/libcollie_mpi.so
ran=0 bad=0
for coll in reduce gather gatherv bcast scatter scatterv; do
  # Plain runs take a second or two; one that hangs (MPICH's bcast root waits for its
  # readers) is stopped after 20 s.
  if ! out=$(COLLIE_MPI_TEST_TIMEOUT=20 "$here/run_mpi.sh" "$flavour" "$np" "$prog" "$coll" 2>&1) ||
     ! grep -q "passed: 0 failures" <<<"$out"; then
    echo "$coll: plain $flavour does not run it (left out):"
    tail -5 <<<"$out"
    continue
  fi
  ran=$((ran + 1))
  if [ "$flavour" = openmpi ]; then pre=(-x "LD_PRELOAD=$lib"); else pre=(-genv LD_PRELOAD "$lib"); fi
  # run_mpi.sh passes its arguments after -np N to mpirun: the preload goes first.
  out=$(COLLIE_MPI_TEST_TIMEOUT=$limit "$here/run_mpi.sh" "$flavour" "$np" "${pre[@]}" "$prog" "$coll" 2>&1)
  rc=$?
  if [ $rc = 0 ] && grep -q "passed: 0 failures" <<<"$out"; then
    echo "$coll: plain and through the drop-in: pass"
  else
    how="exit status $rc"
    [ $rc = 124 ] && how="still running after $limit s"
    echo "FAIL: $coll: plain $flavour runs it, through the drop-in it fails ($how):"
    tail -8 <<<"$out"
    bad=$((bad + 1))
  fi
done
if [ "$ran" = 0 ]; then echo "FAIL: plain $flavour ran none of the cases"; exit 1; fi
[ "$bad" = 0 ] && echo "PASS ($flavour, $np ranks, $ran collectives)"
exit $((bad > 0))
