/*
 * allreduce/cells.c — allreduce through the shm transport's copy cells: a pipelined
 * reduce-scatter + allgather in which every rank reduces its slice of each cell-sized
 * chunk straight from all ranks' cells, in rank order.
 *
 * Source: the reduce-scatter + allgather of Rabenseifner 2004 §3, done per chunk through
 *   shared copy-in/copy-out cells as Intel MPI's shm cells and MPICH's release_gather
 *   (Jain et al. 2018, "Framework for scalable intra-node collective operations using
 *   shared memory", SC18) pipeline user buffers; collie's floor measurement `ar_2copy`
 *   (docs/performance.md, issue 14).  Engine and protocol: ../cells.c.
 * Rounds: per chunk, 3 flag waits (others' copy-in, others' result, cell free), pipelined
 *   over the ring of cells.  Bytes per rank: copies n·(P−1)/P into its cells, reduces n/P
 *   from P sources, copies n/P into its cell and n·(P−1)/P out; 2n + n/P copied.
 * Restrictions: shm transport with copy cells (a->cell_bytes); elements at most a cell;
 *   any op (rank order, each element reduced once, by one rank: the same bits everywhere);
 *   at most 255 ranks.
 * Cost: T ≈ (n/c + 2)·t_flag + n·(2 + 1/P)·β_mem + n/P·(P−1)·γ, c the cell bytes, with
 *   copy-in, reduction and copy-out of successive cells overlapping.  build() gives the
 *   same data flow as messages (direct_segments': a flat reduce-scatter + allgather).
 */
#include "algorithms/cells.h"
#include "algorithms/direct_access.h"

const collie_algorithm collie_algo_allreduce_cells = {
    .name = "cells",
    .coll = COLL_ALLREDUCE,
    .needs = ALGO_NEEDS_SHM,
    .summary = "pipelined reduce-scatter + allgather through shared copy cells (shm; every "
               "rank reduces its slice of each cell from all ranks' cells in rank order)",
    .accepts = cells_accepts,
    .build = direct_schedule_allreduce,
    .driver = &collie_cells_driver,
};
