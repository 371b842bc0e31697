#!/usr/bin/env bash
# bench/preload_compare.sh — the same unmodified MPI program (bench/mpi_coll_bench.c) with
# the MPI's own collectives and with LD_PRELOAD=libcollie_mpi.so, for Open MPI and MPICH,
# interleaved in one script (same sizes, float64, sum, root 0, same timing loop).
#
#   bash bench/preload_compare.sh [--coll allreduce|reduce|bcast] [--np "2 4 8"]
#                                 [--sizes "8 64K 8M"] [--reps 3] [--flavours "openmpi mpich"]
#                                 [--limit SECONDS] [--csv FILE]
#
# Prints per (flavour, P, size) the best mean µs over the repetitions of each side and the
# ratio collie / MPI (< 1: collie faster).  Needs a build with libcollie_mpi
# (${BUILD_DIR:-build}/lib/<flavour>/libcollie_mpi.so: bash scripts/setup.sh with WITH_MPI=1).
# Never trust numbers taken while the machine is busy.
set -euo pipefail
cd "$(dirname "$0")/.."
COLL=allreduce; NPS="2 4 8"; SIZES="8 64K 8M"; REPS=3; FLAVOURS="openmpi mpich"; LIMIT=120; CSV=""
while [ $# -gt 0 ]; do
  case "$1" in
    --coll) COLL=$2; shift 2 ;;
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --flavours) FLAVOURS=$2; shift 2 ;;
    --limit) LIMIT=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    *) echo "preload_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
B=$(cd "${BUILD_DIR:-build}" && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for f in $FLAVOURS; do
  [ -f "$B/lib/$f/libcollie_mpi.so" ] || { echo "missing $B/lib/$f/libcollie_mpi.so" >&2; exit 1; }
  "mpicc.$f" -O2 -o "$OUT/bench_$f" bench/mpi_coll_bench.c
done

run_one() {  # flavour P bytes preload(0|1) -> prints avg µs or "timeout"
  local f=$1 np=$2 bytes=$3 pre=$4 args=(--coll "$COLL" --min-bytes "$3" --max-bytes "$3")
  local lib=$B/lib/$f/libcollie_mpi.so
  if [ "$f" = openmpi ]; then
    local env=(); [ "$pre" = 1 ] && env=(-x "LD_PRELOAD=$lib")
    timeout "$LIMIT" mpirun.openmpi -np "$np" --oversubscribe --bind-to none "${env[@]}" "$OUT/bench_$f" "${args[@]}"
  else
    local env=(); [ "$pre" = 1 ] && env=(-genv LD_PRELOAD "$lib")
    timeout "$LIMIT" mpirun.mpich -np "$np" "${env[@]}" "$OUT/bench_$f" "${args[@]}"
  fi 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $4; found = 1; exit } END { if (!found) print "timeout" }'
}

[ -n "$CSV" ] && echo "coll,flavour,P,bytes,side,rep,avg_us" > "$CSV"
declare -A best
for f in $FLAVOURS; do
  for np in $NPS; do
    for size in $SIZES; do
      for rep in $(seq "$REPS"); do
        for pre in 0 1; do
          us=$(run_one "$f" "$np" "$size" "$pre")
          side=$([ "$pre" = 1 ] && echo collie || echo mpi)
          [ -n "$CSV" ] && echo "$COLL,$f,$np,$size,$side,$rep,$us" >> "$CSV"
          key="$f/$np/$size/$side"
          if [ "$us" != timeout ] && { [ -z "${best[$key]:-}" ] || awk -v a="$us" -v b="${best[$key]}" 'BEGIN { exit !(a < b) }'; }; then
            best[$key]=$us
          fi
        done
      done
    done
  done
done
printf "%-8s %3s %8s %12s %12s %8s\n" flavour P bytes "MPI µs" "collie µs" ratio
for f in $FLAVOURS; do
  for np in $NPS; do
    for size in $SIZES; do
      m=${best[$f/$np/$size/mpi]:-timeout} c=${best[$f/$np/$size/collie]:-timeout}
      r=$(awk -v m="$m" -v c="$c" 'BEGIN { if (m + 0 > 0 && c + 0 > 0) printf "%.2f", c / m; else print "-" }')
      printf "%-8s %3s %8s %12s %12s %8s\n" "$f" "$np" "$size" "$m" "$c" "$r"
    done
  done
done
