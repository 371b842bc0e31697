#!/usr/bin/env bash
# mpi4py_preload.sh PYTHON LIBDIR MODE — runs mpi4py_program.py on 3 Open MPI ranks:
#   plain     without libcollie_mpi
#   default   with LD_PRELOAD=LIBDIR/libcollie_mpi.so, mpi4py's default thread level
#             (MPI_THREAD_MULTIPLE: the drop-in must pass every call to MPI, correctly)
#   funneled  the same with MPI4PY_RC_THREAD_LEVEL=funneled: collie must serve the calls
# Exit 77 (skip) when mpi4py is not installed.
set -u
py=$1 libdir=$2 mode=$3
here=$(cd "$(dirname "$0")" && pwd)
run=("$here/../mpi/run_mpi.sh" openmpi 3 env)
case $mode in
  plain) ;;
  default) run+=(LD_PRELOAD="$libdir/libcollie_mpi.so" COLLIE_MPI_LOG=1) ;;
  funneled) run+=(LD_PRELOAD="$libdir/libcollie_mpi.so" COLLIE_MPI_LOG=1
                  MPI4PY_RC_THREAD_LEVEL=funneled) ;;
  *) echo "mode: plain, default or funneled"; exit 2 ;;
esac
out=$("${run[@]}" "$py" "$here/mpi4py_program.py" 2>&1)
st=$?
echo "$out"
if [ $st = 77 ] || grep -q '^SKIP' <<<"$out"; then exit 77; fi
[ $st = 0 ] || { echo "FAIL: exit status $st"; exit 1; }
[ "$(grep -o 'mpi4py program: OK' <<<"$out" | wc -l)" = 3 ] || { echo "FAIL: not every rank OK"; exit 1; }
served=$(grep -o -- '-> collie' <<<"$out" | wc -l)
case $mode in
  plain) [ "$served" = 0 ] || { echo "FAIL: collie served calls without the preload"; exit 1; } ;;
  funneled) [ "$served" -gt 0 ] || { echo "FAIL: the preload served no call"; exit 1; } ;;
esac
echo "mpi4py $mode: OK ($served calls served by collie)"
