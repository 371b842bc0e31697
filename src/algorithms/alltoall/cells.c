/*
 * alltoall/cells.c — alltoall through the shm transport's copy cells: every rank copies,
 * chunk by chunk, its blocks for all other ranks into its cell (one part per peer), and
 * every rank copies its part out of every other rank's cell.
 *
 * Source: the copy-in/copy-out pipeline of shared-memory collectives (MPICH's
 *   release_gather, Jain et al. SC18; Intel MPI's shm cells), here as a personalised
 *   exchange: two user-space copies per byte, no system call, no single-copy access.  Not
 *   in the papers' message model.  Engine: ../cells.c and ../cells_blocks.c.
 * Rounds: per chunk, one flag wait per peer (its copy-in) and one for a free cell,
 *   pipelined over the ring of cells.  Bytes per rank: copies (P−1)·n into its cell,
 *   (P−1)·n out of its peers' cells, its own block once (not in place).  A rank whose
 *   input lies in registered memory lends it instead (../cells_in_place.c): nothing into
 *   its cell, its peers copy their blocks straight from its input.
 * Restrictions: shm transport with copy cells (a->cell_bytes); elements at most a cell's
 *   part (cell bytes / (P − 1)); at most 255 ranks; block form (alltoallv: every rank knows only
 *   its own counts, so the ranks cannot agree on the steps), in place.
 * Cost: T ≈ (n/c + 1)·t_flag + 2·(P−1)·n·β_mem, c the chunk (≤ cell / (P − 1)).  build()
 *   gives the same data flow as messages (alltoall `flat`) for the verifier and the simulator.
 */
#include "algorithms/cells.h"

extern const collie_algorithm collie_algo_alltoall_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_alltoall_flat.build(s, a);
}

const collie_algorithm collie_algo_alltoall_cells = {
    .name = "cells",
    .coll = COLL_ALLTOALL,
    .needs = ALGO_NEEDS_SHM,
    .summary = "every rank copies its blocks into parts of its shared copy cells, chunk by "
               "chunk, and copies its part out of every other rank's cells (shm; block form)",
    .accepts = cells_accepts,
    .build = build,
    .driver = &collie_cells_driver,
};
