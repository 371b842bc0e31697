#!/usr/bin/env bash
# run_mpi.sh FLAVOUR NP PROGRAM [ARGS...] — runs PROGRAM under that MPI's mpirun with NP
# ranks (more than cores is fine), with a time limit; exit status of the run.
set -u
flavour=$1 np=$2
shift 2
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl=self,vader
limit=${COLLIE_MPI_TEST_TIMEOUT:-300}
if [ "$flavour" = openmpi ]; then
  exec timeout -k 10 "$limit" mpirun.openmpi --oversubscribe --bind-to none -np "$np" "$@"
fi
exec timeout -k 10 "$limit" mpirun.mpich -np "$np" "$@"
