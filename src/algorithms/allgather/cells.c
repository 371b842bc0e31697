/*
 * allgather/cells.c — allgather (and allgatherv) through the shm transport's copy cells:
 * every rank copies its own block into its ring of cells, one chunk per step, while every
 * other rank copies the chunks out into its receive buffer as they appear.
 *
 * Source: the copy-in/copy-out pipeline of shared-memory collectives (MPICH's
 *   release_gather, Jain et al. SC18; Intel MPI's shm cells), as bcast `cells` runs it,
 *   with every rank a root at once.  Not in the papers' message model.  Engine:
 *   ../cells.c and ../cells_blocks.c.
 * Rounds: per chunk, one flag wait per peer (its copy-in) and one for a free cell,
 *   pipelined over the ring of cells.  Bytes per rank: copies n into its cell (and n into
 *   its own block of RECV unless in place) and (P−1)·n out of its peers' cells.  A block
 *   of at least (P − 1) × COLLIE_SHM_CELLS_LEND_MIN bytes in registered memory is lent
 *   instead (../cells_in_place.c): its peers copy it straight from there.
 * Restrictions: shm transport with copy cells (a->cell_bytes); elements at most a cell;
 *   at most 255 ranks; block and v forms, in place.
 * Cost: T ≈ (n/c + 1)·t_flag + (P + 1)·n·β_mem, c the chunk (≤ a cell), copy-in and
 *   copy-out of successive chunks overlapping.  build() gives the same data flow as
 *   messages (allgather `flat`) for the verifier and the simulator.
 */
#include "algorithms/cells.h"

extern const collie_algorithm collie_algo_allgather_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_allgather_flat.build(s, a);
}

const collie_algorithm collie_algo_allgather_cells = {
    .name = "cells",
    .coll = COLL_ALLGATHER,
    .needs = ALGO_NEEDS_SHM,
    .summary = "every rank copies its block into its shared copy cells, chunk by chunk, "
               "while the others copy the chunks out (shm)",
    .accepts = cells_accepts,
    .build = build,
    .driver = &collie_cells_driver,
};
