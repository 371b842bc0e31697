/*
 * direct.c — alltoall by direct access: every rank reads its block of every other rank's
 * input straight into its own receive buffer.
 *
 * Source: the one-sided "get" alltoall of shared-memory MPI implementations (Open MPI's
 *   CMA/xpmem single-copy and Intel MPI's topo_shm read peers' buffers in place; the
 *   pairwise order of Thakur, Rabenseifner & Gropp 2005 as the order of the reads), here
 *   on collie's board (direct_board.c) as allreduce `direct_segments` uses it.  Not in the
 *   papers' message model: the data moves by one memcpy from a mapped collie_alloc
 *   buffer or one process_vm_readv per peer.
 * Protocol (the driver in ../direct_colls.c): every rank posts its input and waits until
 *   all posted; rank r reads block r of rank q's input for q = r+1, …, r−1 into block q of
 *   its RECV, copies its own block unless in place, marks itself done and waits until
 *   every rank is done.  In place the incoming blocks go to scratch first and into RECV
 *   after that wait (peers read the blocks they replace until then).  With malloc'd
 *   inputs the call may take flat's schedule through the slots or the copy cells
 *   instead, as rank 0 timed fastest for the size (../direct_colls.c).
 * Rounds: 2 synchronisations.  Bytes per rank: reads (P−1)·n (n a block), writes nothing
 *   into another rank's memory.
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   the block form only (alltoallv: a rank knows only its own displacements, not where its
 *   block lies in a peer's input); not persistent requests.
 * Scratch: in place P·n.
 * Cost: T ≈ 2·t_sync + (P−1)·n·β_mem (+ a system call per peer through the kernel; in
 *   place + P·n·β_mem).  build() gives the same data flow as messages (alltoall `flat`)
 *   for the verifier and the simulator.
 */
#include "algorithms/direct_access.h"

extern const collie_algorithm collie_algo_alltoall_flat;

static void build(collie_schedule *s, const collie_coll_args *a) {
    collie_algo_alltoall_flat.build(s, a);
}

static bool accepts(const collie_coll_args *a, const char **why) {
    if (a->v) {
        *why = "alltoallv: a rank knows only its own displacements, not where its block "
               "lies in a peer's input";
        return false;
    }
    return true;
}

const collie_algorithm collie_algo_alltoall_direct = {
    .name = "direct",
    .coll = COLL_ALLTOALL,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank reads its block of every other rank's input straight into its "
               "own buffer (shared memory, single copy; collie_alloc buffers are mapped)",
    .accepts = accepts,
    .build = build,
    .driver = &collie_direct_colls_driver,
};
