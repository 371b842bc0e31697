/*
 * reduce_scatter/cells.c — reduce_scatter (block form only: see cells_blocks_accepts)
 * through the shm transport's copy cells: every rank copies, chunk by chunk, its input
 * blocks for all other ranks into parts of its cells, and every rank reduces its own block
 * from its input and its part of every other rank's cell, in rank order.
 *
 * Source: the reduce-scatter half of Rabenseifner 2004 §3 (every rank owns one block of
 *   the result) done in one step on shared memory, with the data moved by the
 *   copy-in/copy-out pipeline of shared-memory collectives (MPICH's release_gather, Jain
 *   et al. SC18; Intel MPI's shm cells), as allreduce `cells` runs its reduce-scatter
 *   phase.  Not in the papers' message model.  Engine: ../cells.c and ../cells_blocks.c.
 * Rounds: per chunk, one flag wait per peer (its copy-in) and one for a free cell,
 *   pipelined over the ring of cells.  Bytes per rank: copies (P−1)·n into its cell (n its
 *   block), reads (P−1)·n from its peers' cells, reduces P·n element-wise, writes n.  A
 *   rank whose input lies in registered memory lends it instead (../cells_in_place.c, not
 *   in place): nothing into its cell, its peers reduce straight out of its input.
 * Restrictions: shm transport with copy cells (a->cell_bytes); elements at most a cell's
 *   part (cell bytes / (P − 1)); at most 255 ranks; any op (rank order, each result
 *   element reduced once, on its owner); the block form only.
 * Cost: T ≈ (n/c + 1)·t_flag + 2·(P−1)·n·β_mem + (P−1)·n·γ, c the chunk (≤ cell / (P − 1)).
 *   build() gives the same data flow as messages (reduce_scatter `flat`) for the verifier
 *   and the simulator.
 */
#include "algorithms/cells.h"

extern const collie_algorithm collie_algo_reduce_scatter_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_reduce_scatter_flat.build(s, a);
}

const collie_algorithm collie_algo_reduce_scatter_cells = {
    .name = "cells",
    .coll = COLL_REDUCE_SCATTER,
    .needs = ALGO_NEEDS_SHM,
    .summary = "every rank copies its input blocks into parts of its shared copy cells, "
               "chunk by chunk, and reduces its own block from its input and its part of "
               "every other rank's cells, in rank order (shm)",
    .accepts = cells_accepts,
    .build = build,
    .driver = &collie_cells_driver,
};
