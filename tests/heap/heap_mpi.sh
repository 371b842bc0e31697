#!/bin/bash
# heap_mpi.sh FLAVOUR MPI_CHECK LIBDIR LIBCOLLIE_HEAP — an unmodified MPI program (mpi_check
# --quick, which checks its own results) at 2 ranks with LD_PRELOAD=libcollie_heap.so:
# libcollie_mpi.so: it must pass, and collie must have mapped a peer's shared heap and used
# its buffers in place (COLLIE_LOG=debug).  Prints "heap mpi FLAVOUR: passed".
set -u
flavour=$1 prog=$2 libdir=$3 heap=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
pre="$heap:$libdir/libcollie_mpi.so"
if [ "$flavour" = openmpi ]; then
  timeout 300 mpirun.openmpi -np 2 -x LD_PRELOAD="$pre" -x COLLIE_LOG=debug "$prog" --quick >"$dir/out" 2>"$dir/err"
else
  timeout 300 mpirun.mpich -np 2 -genv LD_PRELOAD "$pre" -genv COLLIE_LOG debug "$prog" --quick >"$dir/out" 2>"$dir/err"
fi
rc=$?
fail() { echo "heap mpi $flavour: FAILED: $*"; tail -n 5 "$dir/out"; grep -v " debug: " "$dir/err" | tail -n 20; exit 1; }
[ $rc = 0 ] || fail "exit $rc"
grep -q "passed: 0 wrong results" "$dir/out" || fail "mpi_check did not pass"
[ "$(grep -cE "mapped rank [01]'s shared heap" "$dir/err")" -ge 2 ] || fail "the ranks did not map each other's heap"
grep -qE "used peers' shared-heap buffers in place [1-9]" "$dir/err" || fail "no heap buffer was used in place"
echo "heap mpi $flavour: passed"
