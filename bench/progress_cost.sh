#!/usr/bin/env bash
# bench/progress_cost.sh — the cost and the overlap of the progress libcollie_mpi shares
# with MPI (bench/mpi_progress_bench.c), plain MPI and through the drop-in, interleaved.
#
#   bash bench/progress_cost.sh [--np "2 4"] [--reps 21] [--flavours "openmpi mpich"]
#
# Needs a build with libcollie_mpi (${BUILD_DIR:-build}).  Numbers taken while the machine
# is busy are noise: compare the lines of one run only.
set -euo pipefail
cd "$(dirname "$0")/.."
NPS="2 4"; REPS=21; FLAVOURS="openmpi mpich"
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NPS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --flavours) FLAVOURS=$2; shift 2 ;;
    *) echo "progress_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
B=$(cd "${BUILD_DIR:-build}" && pwd)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_btl=self,vader
run() {   # run FLAVOUR NP PRELOAD
  local f=$1 np=$2 pre=$3 prog=$B/bench/mpi_progress_bench_$1
  if [ "$f" = openmpi ]; then
    mpirun.openmpi --oversubscribe --bind-to none -np "$np" ${pre:+-x LD_PRELOAD=$pre} "$prog" "$REPS"
  else
    mpirun.mpich -np "$np" ${pre:+-genv LD_PRELOAD $pre} "$prog" "$REPS"
  fi
}
for f in $FLAVOURS; do
  for np in $NPS; do
    for side in plain collie; do
      pre=""; [ $side = collie ] && pre=$B/lib/$f/libcollie_mpi.so
      run "$f" "$np" "$pre" | sed "s/^/$f $side: /"
    done
  done
done
