/*
 * direct.c — allgather (and allgatherv) by direct access: every rank reads every other
 * rank's block straight into its own receive buffer.
 *
 * Source: the one-sided "get" allgather of shared-memory MPI implementations (Intel MPI's
 *   topo_shm and Open MPI's xpmem/CMA single-copy components: each rank reads its peers'
 *   buffers in place), here on collie's board (direct_board.c) as allreduce
 *   `direct_segments` and bcast `direct_copy` use it.  Not in the papers' message model:
 *   the data moves by one memcpy from a mapped collie_alloc buffer or one process_vm_readv
 *   per peer.
 * Protocol (the driver in ../direct_colls.c): every rank posts the address of its own
 *   block (SEND, or in place its block of RECV) and waits until all posted; it reads
 *   block q from rank q for q = rank+1, …, rank−1 into its RECV, copies its own unless in
 *   place, marks itself done and waits until every rank is done (its block is read until
 *   then).  Small calls with malloc'd blocks take flat's schedule through the slots.
 * Rounds: 2 synchronisations.  Bytes per rank: reads (P−1)·n from its peers (n a block),
 *   writes nothing into another rank's memory; P·(P−1) block copies in all, in parallel.
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   block and v forms, in place; not persistent requests (its own protocol).
 * Cost: T ≈ 2·t_sync + (P−1)·n·β_mem (mapped; the kernel copy adds a system call per
 *   peer).  build() gives the same data flow as messages (allgather `flat`) for the
 *   verifier and the simulator.
 */
#include "algorithms/direct_access.h"

extern const collie_algorithm collie_algo_allgather_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_allgather_flat.build(s, a);
}

const collie_algorithm collie_algo_allgather_direct = {
    .name = "direct",
    .coll = COLL_ALLGATHER,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank reads every other rank's block straight into its own buffer "
               "(shared memory, single copy; collie_alloc buffers are mapped)",
    .accepts = NULL,
    .build = build,
    .driver = &collie_direct_colls_driver,
};
