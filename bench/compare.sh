#!/usr/bin/env bash
# bench/compare.sh — collie against the MPI libraries installed here, in one script,
# interleaved, same sizes / type (float64) / op (sum) / root 0 / timing method.
#
#   bash bench/compare.sh [--coll allreduce|reduce|bcast] [--np "2 8"] [--sizes "8 8M"]
#                         [--reps 3] [--csv FILE] [--limit SECONDS]
#
# For each P and repetition it runs collie-bench (collie-run, algorithm auto, blocking
# calls like MPI's), then Open MPI's and MPICH's own MPI_<Coll> (bench/mpi_coll_bench.c
# built with each MPI's mpicc).  Each size is a separate launch so the libraries
# alternate.  The table keeps each library's best (lowest) mean over the repetitions and
# prints the ratio collie / best MPI.  Installs Open MPI and MPICH with apt-get if missing.
# A run that takes longer than --limit seconds (default 120; MPICH busy-polls, so with more
# ranks than cores one call can take milliseconds) is stopped and shown as "timeout".
set -euo pipefail
cd "$(dirname "$0")/.."
COLL=allreduce; NPS="2 8"; SIZES="8 8M"; REPS=3; CSV=""; LIMIT=120
while [ $# -gt 0 ]; do
  case "$1" in
    --coll) COLL=$2; shift 2 ;;
    --np) NPS=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --csv) CSV=$2; shift 2 ;;
    --limit) LIMIT=$2; shift 2 ;;
    *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
WITH_MPI=1 bash scripts/setup.sh >/dev/null
B=${BUILD_DIR:-build}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
libs=(collie)
if command -v mpicc.openmpi >/dev/null; then
  mpicc.openmpi -O2 -o "$OUT/bench_openmpi" bench/mpi_coll_bench.c && libs+=(openmpi)
fi
if command -v mpicc.mpich >/dev/null; then
  mpicc.mpich -O2 -o "$OUT/bench_mpich" bench/mpi_coll_bench.c && libs+=(mpich)
fi

run_one() {  # lib P bytes -> prints "avg_us algorithm"
  local lib=$1 np=$2 bytes=$3 args=(--coll "$COLL" --min-bytes "$3" --max-bytes "$3")
  case $lib in
    collie) timeout "$LIMIT" "$B/collie-run" -n "$np" -- "$B/collie-bench" "${args[@]}" --mode blocking ;;
    openmpi) timeout "$LIMIT" mpirun.openmpi -np "$np" --oversubscribe --bind-to none "$OUT/bench_openmpi" "${args[@]}" ;;
    mpich) timeout "$LIMIT" mpirun.mpich -np "$np" "$OUT/bench_mpich" "${args[@]}" ;;
  esac 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $4, $8; found = 1; exit } END { if (!found) print "timeout", "-" }'
}

[ -n "$CSV" ] && echo "coll,P,bytes,library,rep,avg_us,algorithm" > "$CSV"
declare -A best algo skip_mpich
for np in $NPS; do
  for size in $SIZES; do
    for rep in $(seq "$REPS"); do
      for lib in "${libs[@]}"; do
        [ "$lib" = mpich ] && [ -n "${skip_mpich[$np]:-}" ] && continue
        read -r us alg < <(run_one "$lib" "$np" "$size")
        key="$np/$size/$lib"
        [ "$us" = timeout ] && [ "$lib" = mpich ] && skip_mpich[$np]=1  # the next ones would time out too
        if [ "$us" != timeout ] && { [ -z "${best[$key]:-}" ] || awk "BEGIN{exit !($us < ${best[$key]})}"; }; then best[$key]=$us; algo[$key]=$alg; fi
        [ -n "$CSV" ] && echo "$COLL,$np,$size,$lib,$rep,$us,$alg" >> "$CSV"
      done
    done
  done
done

printf '# %s, float64 sum, best mean of %s runs, µs (lower is better)\n' "$COLL" "$REPS"
printf '%3s %8s' P bytes; for lib in "${libs[@]}"; do printf ' %12s' "$lib"; done; printf ' %10s  %s\n' "collie/best" "collie algorithm"
for np in $NPS; do
  for size in $SIZES; do
    printf '%3s %8s' "$np" "$size"
    peer=""
    for lib in "${libs[@]}"; do
      v=${best[$np/$size/$lib]:-}
      if [ -z "$v" ]; then printf ' %12s' timeout; continue; fi
      printf ' %12.2f' "$v"
      if [ "$lib" != collie ] && { [ -z "$peer" ] || awk "BEGIN{exit !($v < $peer)}"; }; then peer=$v; fi
    done
    ratio=$(awk "BEGIN{ if (\"$peer\" == \"\" || \"${best[$np/$size/collie]:-}\" == \"\") print \"-\"; else printf \"%.2f\", ${best[$np/$size/collie]:-0} / $peer }")
    printf ' %10s  %s\n' "$ratio" "${algo[$np/$size/collie]:-}"
  done
done
