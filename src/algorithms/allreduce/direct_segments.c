/*
 * allreduce/direct_segments.c — allreduce by direct access to every rank's buffers: each rank
 * reduces one segment straight out of all P inputs and writes the result straight into
 * all P outputs.
 *
 * Source: the reduce-scatter + allgather decomposition of Rabenseifner 2004 §3 (every
 *   rank owns 1/P of the vector), done in one step on shared memory instead of in
 *   messages, as the issue #7 note on a "two-thread reduction that reads both inputs in
 *   place" suggests (and as Intel MPI's topo_shm algorithms and the shared-memory
 *   allreduce of the GASPI-SHAN paper do with their own segments).  Not in the papers'
 *   message model: the data moves by loads and stores (collie_alloc buffers, mapped) or
 *   one kernel copy (process_vm_readv / process_vm_writev, other buffers).
 * Protocol (the driver in ../direct_access.c): post the buffers on the team's board,
 *   wait until all posted; reduce this rank's segment from all inputs, chunk by chunk,
 *   writing each chunk into all P outputs; mark done, wait until all are done.
 * Rounds: 2 synchronisations.  Bytes per rank: reads n (n/P from each rank), writes n
 *   (n/P into each rank's output); nothing is staged except the chunk read from a peer
 *   that is not mapped.
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   any op (rank order, exactly once per element, the same bits on every rank).
 * Cost: T ≈ 2·t_sync + n·(1 + 1/P)·β_mem + n/P·(P−1)·γ  (memory bandwidth β_mem per
 *   rank; no α per message).  build() gives the same data flow as messages (a flat
 *   reduce-scatter + allgather) for the verifier and the simulator; at P = 2 allreduce
 *   `flat`'s schedule (the same bytes in one round).  A call of at most
 *   COLLIE_SHM_SLOTS_MAX bytes whose buffers are not all mapped runs this schedule through
 *   the slots (direct_access.c).
 */
#include "algorithms/direct_access.h"
#include "algorithms/flat_reduce.h"

/* ---- the schedule (verifier, simulator): flat reduce-scatter + allgather ---------------- */

void direct_schedule_allreduce(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    int P = a->size, me = a->rank;
    if (P == 2) {   /* allreduce `flat`: the same bytes as below, in one round */
        sched_round_begin(s);
        sched_put(s, 1 - me, sched_at(SBUF_SEND, 0), a->bytes);
        flat_reduce_all(s, a);
        return;
    }
    direct_segment mine = direct_schedule_reduce_scatter(s, a, false);
    sched_round_begin(s);
    for (int i = 1; i < P && mine.bytes; i++)
        sched_put(s, (me + i) % P, sched_at(SBUF_RECV, mine.off), mine.bytes);
    for (int i = 1; i < P; i++) {
        int q = (me + P - i) % P;
        direct_segment sq = direct_seg_of(a, q);
        if (sq.bytes)
            sched_recv(s, q, sched_at(SBUF_RECV, sq.off), sq.bytes);
    }
}

const collie_algorithm collie_algo_allreduce_direct_segments = {
    .name = "direct_segments",
    .coll = COLL_ALLREDUCE,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank reduces 1/P of the vector straight from all inputs into all "
               "outputs (shared memory, single copy; collie_alloc buffers are mapped)",
    .accepts = direct_segments_accepts,
    .build = direct_schedule_allreduce,
    .driver = &collie_direct_access_driver,
};
