/*
 * collie_mpi.h — collie inside an MPI program (link libcollie_mpi, or LD_PRELOAD it).
 *
 * collie_team_from_mpi gives the collie team of an intracommunicator (collie rank = MPI
 * rank): over shared memory when all its ranks share one node, else over shared memory
 * between the ranks of a node and MPI between nodes.  It is collective over comm the first
 * time it is called for comm; later calls return the same team.  The team belongs to the
 * communicator: it is freed by MPI_Comm_free or MPI_Finalize (never call collie_finalize
 * on it).
 *
 * With libcollie_mpi linked, collie_init() under mpirun makes collie_world() a team over
 * MPI_COMM_WORLD, the same way (initialising MPI first if the program did not);
 * collie_finalize() then also finalizes MPI if collie_init initialised it.  Call
 * collie_finalize before MPI_Finalize (the world's team needs MPI to shut down).
 */
#ifndef COLLIE_MPI_H
#define COLLIE_MPI_H

#include <mpi.h>
#include "collie.h"

#ifdef __cplusplus
extern "C" {
#endif

int collie_team_from_mpi(MPI_Comm comm, collie_team_t **team);

#ifdef __cplusplus
}
#endif
#endif /* COLLIE_MPI_H */
