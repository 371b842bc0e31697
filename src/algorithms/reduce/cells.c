/*
 * reduce/cells.c — reduce through the shm transport's copy cells: a pipelined
 * reduce-scatter + gather in which every rank reduces its slice of each cell-sized chunk
 * straight from all ranks' cells, in rank order, and the root copies the results out.
 *
 * Source: the reduce-scatter + gather of Rabenseifner 2004 §4, done per chunk through
 *   shared copy-in/copy-out cells (Intel MPI's shm cells; MPICH's release_gather reduce,
 *   Jain et al., SC18).  Engine and protocol: ../cells.c.
 * Rounds: per chunk, 2 flag waits for a non-root (others' copy-in, cell free), 3 for the
 *   root, pipelined over the ring of cells.  Bytes per rank: copies n·(P−1)/P into its
 *   cells and reduces n/P from P sources (a non-root straight into its cell); the root
 *   also copies n·(P−1)/P out.
 * Restrictions: shm transport with copy cells (a->cell_bytes); elements at most a cell;
 *   any op (rank order, each element reduced once); at most 255 ranks.
 * Cost: T ≈ (n/c + 2)·t_flag + n·(2 − 1/P)·β_mem + n/P·(P−1)·γ at the root, c the cell
 *   bytes.  build() gives the same data flow as messages (direct_segments': a flat
 *   reduce-scatter + gather).
 */
#include "algorithms/cells.h"
#include "algorithms/direct_access.h"

const collie_algorithm collie_algo_reduce_cells = {
    .name = "cells",
    .coll = COLL_REDUCE,
    .needs = ALGO_NEEDS_SHM,
    .summary = "pipelined reduce-scatter + gather through shared copy cells (shm; every "
               "rank reduces its slice of each cell from all ranks' cells in rank order)",
    .accepts = cells_accepts,
    .build = direct_schedule_reduce,
    .driver = &collie_cells_driver,
};
