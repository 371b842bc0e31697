# mpi_launch.sh — sourced by the run_*.sh scripts: one way to start a program under the
# MPI flavour of the test, as root too, with more ranks than cores.
#   mpi_launch FLAVOUR NP LIMIT OUT ERR [VAR=VALUE...] -- PROGRAM [ARGS...]
# runs PROGRAM with NP ranks for at most LIMIT seconds, VAR=VALUE in every rank's
# environment, stdout to OUT and stderr to ERR (ERR may be OUT: both then go there, in
# order); its exit status.  With ERR apart from OUT, each rank's stderr goes to a file of its
# own, appended to ERR in rank order at the end: mpirun forwards the ranks' output in pieces
# that may cut a line, so lines from different ranks could interleave in one stream (a
# check of rank 0's log lines failed once that way).
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1

mpi_launch() {
  local flavour=$1 np=$2 limit=$3 out=$4 err=$5 envargs=()
  shift 5
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ "$flavour" = openmpi ]; then envargs+=(-x "$1"); else envargs+=(-genv "${1%%=*}" "${1#*=}"); fi
    shift
  done
  shift
  local cmd=(timeout -k 10 "$limit" mpirun.mpich -np "$np" "${envargs[@]}" "$@")
  if [ "$flavour" = openmpi ]; then
    cmd=(timeout -k 10 "$limit" mpirun.openmpi --oversubscribe --bind-to none -np "$np" \
         "${envargs[@]}" "$@")
  fi
  if [ "$err" = "$out" ]; then
    "${cmd[@]}" >"$out" 2>&1
    return
  fi
  local dir status
  dir=$(mktemp -d /tmp/collie-rank-err.XXXXXX)
  # shellcheck disable=SC2016  # expanded by each rank's shell
  local per_rank=(/bin/sh -c 'exec "$@" 2>"$0/rank.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-x}}"' "$dir")
  cmd=("${cmd[@]:0:${#cmd[@]}-$#}" "${per_rank[@]}" "$@")
  "${cmd[@]}" >"$out" 2>"$err"
  status=$?
  for f in $(ls "$dir" | sort -t. -k2 -n); do cat "$dir/$f" >>"$err"; done
  rm -rf "$dir"
  return $status
}
