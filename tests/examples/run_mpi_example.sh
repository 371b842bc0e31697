#!/usr/bin/env bash
# run_mpi_example.sh FLAVOUR NP PROGRAM LIBDIR — runs an unmodified MPI program plain and
# with LD_PRELOAD=LIBDIR/libcollie_mpi.so (COLLIE_MPI_LOG=1); passes when both runs exit 0
# and print the same output, and the log shows collie served MPI_Bcast, MPI_Allreduce,
# MPI_Reduce and MPI_Barrier.
set -u
flavour=$1 np=$2 prog=$3 libdir=$4
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL ($flavour, $np ranks): $*"; exit 1; }
if [ "$flavour" = openmpi ]; then
  pre=(-x "LD_PRELOAD=$libdir/libcollie_mpi.so" -x COLLIE_MPI_LOG=1)
else
  pre=(-genv LD_PRELOAD "$libdir/libcollie_mpi.so" -genv COLLIE_MPI_LOG 1)
fi
run_mpi() { bash "$here/../mpi/run_mpi.sh" "$flavour" "$np" "$@"; }
# mpirun.mpich takes -genv options before the program; run_mpi.sh passes them through
run_mpi "$prog" > "$work/plain.out" 2> "$work/plain.err" || { cat "$work/plain.err"; fail "plain run"; }
run_mpi "${pre[@]}" "$prog" > "$work/collie.out" 2> "$work/collie.err" ||
  { tail -20 "$work/collie.err"; fail "run with libcollie_mpi"; }
diff "$work/plain.out" "$work/collie.out" || fail "output differs with libcollie_mpi"
grep -q "histogram complete" "$work/plain.out" || fail "the program did not finish its check"
for fn in MPI_Bcast MPI_Allreduce MPI_Reduce MPI_Barrier; do
  grep -q "^collie_mpi: rank 0: $fn(.*-> collie\$" "$work/collie.err" || fail "$fn not served by collie"
done
echo "PASS ($flavour, $np ranks): identical output ($(wc -l < "$work/plain.out") lines), collie served" \
     "$(grep -c -- '-> collie$' "$work/collie.err") calls"
