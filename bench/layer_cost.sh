#!/usr/bin/env bash
# bench/layer_cost.sh — the cost of libcollie_mpi's layer: MPI_Allreduce through
# LD_PRELOAD=libcollie_mpi.so against collie_allreduce on the same communicator's team,
# interleaved in one run of bench/layer_cost.c (barrier, then one timed call on fresh
# values; blocks alternate between the sides; median of the blocks).
#
#   bash bench/layer_cost.sh [--np 2] [--bytes 8] [--iters 2000] [--rounds 21]
#                            [--flavours "openmpi mpich"] [--quantile 0.5]
#
# Prints one line per flavour with both times and the ratio drop-in / API (1.00 = the
# layer costs nothing).  Needs ${BUILD_DIR:-build}/lib/<flavour>/libcollie_mpi.so.
# The machine should be idle: a ratio is only as good as the noise allows.  On a loaded
# machine --quantile 0.1 takes each block's fastest tenth of calls (the software path
# without a descheduled peer) instead of its median.
set -euo pipefail
cd "$(dirname "$0")/.."
NP=2; BYTES=8; ITERS=2000; ROUNDS=21; FLAVOURS="openmpi mpich"
while [ $# -gt 0 ]; do
  case "$1" in
    --np) NP=$2; shift 2 ;;
    --bytes) BYTES=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --flavours) FLAVOURS=$2; shift 2 ;;
    --quantile) export LAYER_COST_QUANTILE=$2; shift 2 ;;
    *) echo "layer_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
B=$(cd "${BUILD_DIR:-build}" && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl=self,vader
count=$(( BYTES / 8 )); [ "$count" -ge 1 ] || count=1
for f in $FLAVOURS; do
  lib=$B/lib/$f/libcollie_mpi.so
  [ -f "$lib" ] || { echo "layer_cost.sh: missing $lib" >&2; exit 1; }
  "mpicc.$f" -O2 -Iinclude -o "$OUT/layer_cost_$f" bench/layer_cost.c -ldl
  printf '%-8s ' "$f"
  if [ "$f" = openmpi ]; then
    mpirun.openmpi -np "$NP" --oversubscribe --bind-to none -x "LD_PRELOAD=$lib" -x "LAYER_COST_QUANTILE=${LAYER_COST_QUANTILE:-0.5}" \
      "$OUT/layer_cost_$f" "$count" "$ITERS" "$ROUNDS"
  else
    mpirun.mpich -np "$NP" -genv LD_PRELOAD "$lib" "$OUT/layer_cost_$f" "$count" "$ITERS" "$ROUNDS"
  fi
done
