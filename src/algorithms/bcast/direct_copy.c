/*
 * bcast/direct_copy.c — broadcast by direct access: every rank copies the root's buffer
 * straight into its own.
 *
 * Source: the one-sided (RMA) broadcast of the linear tree (issue: "one-sided, put-based
 *   broadcast trees: linear ..."), turned into gets: on shared memory each rank reads the
 *   root's buffer itself, so the root does no copying and the P − 1 copies run in
 *   parallel (the shape of Intel MPI's topo_shm_flat and Open MPI's basic_linear over
 *   single-copy CMA).  Not a message algorithm: the data moves by one memcpy from a mapped
 *   collie_alloc buffer or one process_vm_readv.
 * Protocol (the driver in ../direct_access.c and ../direct_access_bcast.c): every rank
 *   posts on the team's board; a non-root waits for the root's post, copies, and posts
 *   done; the root waits until every rank is done (its buffer is read until then).  At
 *   P = 2 from 32 KiB with both buffers mapped the root also waits for the reader's post
 *   and copies the second half into the reader's buffer, the reader the first half, and
 *   the reader then waits for the root's done.
 * Rounds: 1 synchronisation (2 for the root; 2 each when split).  Bytes per rank: a
 *   non-root reads n; the root moves nothing (split: each moves n/2).
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   at most 255 ranks.
 * Cost: T ≈ t_sync + n·β_mem (a non-root), the root t_sync + max over ranks; split
 *   2·t_sync + (n/2)·β_mem.  build()
 *   gives the same data flow as messages (the root's buffer to every rank: `flat`) for the
 *   verifier and the simulator.
 */
#include "algorithms/direct_access.h"

const collie_algorithm collie_algo_bcast_direct_copy = {
    .name = "direct_copy",
    .coll = COLL_BCAST,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank copies the root's buffer straight into its own (shared memory, "
               "single copy; collie_alloc buffers are mapped)",
    .accepts = direct_segments_accepts,
    .build = algo_bcast_root_to_all,
    .driver = &collie_direct_access_driver,
};
