#!/usr/bin/env bash
# tests/mpi/abi_check.sh — does one libcollie_mpi build serve another implementation of
# its MPI ABI, with exactly one MPI library in the process?
#
#   bash tests/mpi/abi_check.sh PRELOAD PROGRAM NP LAUNCHER [LAUNCHER ARGS...]
#
# PROGRAM is tests/mpi/mpi_check built against the other MPI (e.g. MPICH 5 or Intel MPI
# from PyPI: compiled with Debian's mpicc.mpich, linked to their libmpi.so.12; or
# build/tests/mpi/mpi_check_abi with PRELOAD build/lib/abi/libcollie_mpi.so, the MPI-5
# standard ABI, LD_LIBRARY_PATH choosing whose libmpi_abi.so.1), LAUNCHER that MPI's mpiexec.  Debian's own MPI libraries (libmpich.so.12*, libmpi.so.40*) are
# hidden in a private mount namespace (bind-mounted over with an empty file), as on a
# machine where no other MPI is installed.  While the program runs, the MPI libraries
# mapped into one rank (/proc/<pid>/maps) are listed; passes when the run prints
# "passed", the log shows calls served by collie, and exactly one MPI library is mapped.
# ABI_CHECK_OMPI=1: the launcher is Open MPI's mpirun, which gets the preload as -x
# LD_PRELOAD=... for the ranks (its own processes do not load it).
# Needs root (unshare -m).  Exit 77 when it cannot run here.
set -u
pre=$1 prog=$2 np=$3; shift 3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for unshare -m"; exit 77; }
work=$(mktemp -d /tmp/collie-abi.XXXXXX)
trap 'rm -rf "$work"' EXIT
: >"$work/empty"
hide=""
for lib in /usr/lib/x86_64-linux-gnu/libmpich.so.12* /usr/lib/x86_64-linux-gnu/libmpi.so.40*; do
  [ -f "$lib" ] && [ ! -L "$lib" ] && hide="$hide mount --bind $work/empty $lib;"
done
# Samples the maps of the first rank (a process running PROGRAM) that has mapped the preload.
sampler() {
  for _ in $(seq 200); do
    for pid in $(pgrep -f "$(basename "$prog")"); do
      if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$prog")" ] &&
         grep -q libcollie_mpi "/proc/$pid/maps" 2>/dev/null; then
        sleep 0.5
        grep -oE '/[^ ]*lib(mpi|mpich|mpi_abi)[a-z_]*\.so[.0-9]*' "/proc/$pid/maps" | sort -u >"$work/maps"
        return
      fi
    done
    sleep 0.05
  done
}
if [ "${ABI_CHECK_OMPI:-0}" = 1 ]; then   # Open MPI: the preload for the ranks only (-x)
  run="cd '$work' && \"\$@\" -x LD_PRELOAD='$pre' -x COLLIE_MPI_LOG=1 -n $np '$prog' --quick"
else
  run="cd '$work' && LD_PRELOAD='$pre' COLLIE_MPI_LOG=1 \"\$@\" -n $np '$prog' --quick"
fi
unshare -m bash -c "$hide $run" _ "$@" >"$work/out" 2>"$work/err" &
job=$!
sampler
wait $job
rc=$?
echo "MPI libraries mapped in one rank:"; sed 's/^/  /' "$work/maps" 2>/dev/null
served=$(grep -c -- '-> collie' "$work/err"); pmpi=$(grep -c -- '-> PMPI' "$work/err")
echo "exit $rc; $(grep -E '^(passed|FAILED)' "$work/out"); collie served $served calls, PMPI $pmpi"
grep -q '^passed' "$work/out" || { grep -v '^collie_mpi' "$work/err" | tail -15; echo FAIL; exit 1; }
[ "$served" -gt 0 ] || { echo "FAIL: collie served nothing"; exit 1; }
[ "$(grep -c . "$work/maps" 2>/dev/null)" = 1 ] || { echo "FAIL: not exactly one MPI library mapped"; exit 1; }
echo PASS
