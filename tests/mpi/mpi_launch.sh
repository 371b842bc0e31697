# mpi_launch.sh — sourced by the run_*.sh scripts: one way to start a program under the
# MPI flavour of the test, as root too, with more ranks than cores.
#   mpi_launch FLAVOUR NP LIMIT OUT ERR [VAR=VALUE...] -- PROGRAM [ARGS...]
# runs PROGRAM with NP ranks for at most LIMIT seconds, VAR=VALUE in every rank's
# environment, stdout to OUT and stderr to ERR (ERR may be OUT: both then go there, in
# order); its exit status.
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
  else
    "${cmd[@]}" >"$out" 2>"$err"
  fi
}
