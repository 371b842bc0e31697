/*
 * bcast/cells.c — broadcast through the shm transport's copy cells: the root copies the
 * vector into its ring of cells, one cell-sized chunk at a time, while every other rank
 * copies the chunks out as they appear.
 *
 * Source: the copy-in/copy-out pipeline of shared-memory broadcast (MPICH's
 *   release_gather bcast, Jain et al., SC18: "the copying in next cell can be overlapped
 *   with copying out of previous cells"; Intel MPI's shm cells); collie's floor
 *   measurements `bc_2copy` / `bc_ring` (docs/performance.md, issue 14).  Engine: ../cells.c.
 * Rounds: per chunk, one flag wait for a reader (the root's copy-in), for the root one
 *   (the cell is free again), pipelined over the ring of cells; then every rank marks the
 *   call done on the board and the root waits for all (ranks that disagree about the root
 *   meet only there: ../cells.c, bcast_agree).  Bytes per rank: the root copies n into
 *   its cells, every other rank copies n out (all readers at once).
 * Restrictions: shm transport with copy cells (a->cell_bytes); at most 255 ranks.
 * Cost: T ≈ (n/c + 2)·t_flag + (n + c)·β_mem, c the cell bytes (copy-in and copy-out of
 *   successive cells overlap).  build() gives the same data flow as messages (the root's
 *   buffer to every rank: `flat`).
 */
#include "algorithms/cells.h"

const collie_algorithm collie_algo_bcast_cells = {
    .name = "cells",
    .coll = COLL_BCAST,
    .needs = ALGO_NEEDS_SHM,
    .summary = "pipeline through the root's shared copy cells: the root copies in while "
               "every reader copies out (shm)",
    .accepts = cells_accepts,
    .build = algo_bcast_root_to_all,
    .driver = &collie_cells_driver,
};
