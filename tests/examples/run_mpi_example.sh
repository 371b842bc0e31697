#!/usr/bin/env bash
# run_mpi_example.sh FLAVOUR NP PROGRAM LIBDIR — runs an unmodified MPI program plain and
# with LD_PRELOAD=LIBDIR/libcollie_mpi.so (COLLIE_MPI_LOG=1); passes when both runs exit 0
# and print the same output, and the log shows collie served MPI_Bcast, MPI_Allreduce,
# MPI_Reduce and MPI_Barrier; a third run with COLLIE_MPI_LOG=summary must print a table
# whose totals match the per-call log of the second.
set -u
flavour=$1 np=$2 prog=$3 libdir=$4
here=$(dirname "$0")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL ($flavour, $np ranks): $*"; exit 1; }
if [ "$flavour" = openmpi ]; then
  pre=(-x "LD_PRELOAD=$libdir/libcollie_mpi.so" -x COLLIE_MPI_LOG=1)
  summary=(-x "LD_PRELOAD=$libdir/libcollie_mpi.so" -x COLLIE_MPI_LOG=summary)
else
  pre=(-genv LD_PRELOAD "$libdir/libcollie_mpi.so" -genv COLLIE_MPI_LOG 1)
  summary=(-genv LD_PRELOAD "$libdir/libcollie_mpi.so" -genv COLLIE_MPI_LOG summary)
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
run_mpi "${summary[@]}" "$prog" > "$work/sum.out" 2> "$work/sum.err" ||
  { tail -20 "$work/sum.err"; fail "run with COLLIE_MPI_LOG=summary"; }
diff -q "$work/plain.out" "$work/sum.out" >/dev/null || fail "output differs with COLLIE_MPI_LOG=summary"
served=$(grep -c -- '-> collie$' "$work/collie.err") pmpi=$(grep -c -- '-> PMPI' "$work/collie.err")
grep -q "^collie_mpi: summary of $np ranks" "$work/sum.err" || { cat "$work/sum.err"; fail "no summary"; }
grep -Eq "^collie_mpi: +$((served + pmpi)) +calls, $served served by collie, $pmpi passed to PMPI\$" \
  "$work/sum.err" || { cat "$work/sum.err"; fail "summary totals differ from the per-call log ($served, $pmpi)"; }
grep -q -- '-> ' "$work/sum.err" && fail "COLLIE_MPI_LOG=summary printed per-call lines"
echo "PASS ($flavour, $np ranks): identical output ($(wc -l < "$work/plain.out") lines), collie served" \
     "$(grep -c -- '-> collie$' "$work/collie.err") calls"
