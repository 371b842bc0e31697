/*
 * reduce/direct_segments.c — reduce by direct access to every rank's buffers: each rank
 * reduces one segment straight out of all P inputs and writes it straight into the
 * root's output.
 *
 * Source: the reduce-scatter + gather decomposition of Rabenseifner 2004 §4 (every rank
 *   owns 1/P of the vector), done in one step on shared memory instead of in messages.
 *   Not in the papers' message model: the data moves by loads and stores (collie_alloc
 *   buffers, mapped) or one kernel copy (process_vm_readv / process_vm_writev).
 * Protocol (the driver in ../direct_access.c): post the buffers on the team's board,
 *   wait until all posted; reduce this rank's segment from all inputs, chunk by chunk,
 *   straight into the root's output when it is mapped (else through one chunk of scratch
 *   and process_vm_writev); mark done, wait until all are done.
 * Rounds: 2 synchronisations.  Bytes per rank: reads n (n/P from each rank), writes n/P
 *   into the root's output; the root's reduction work is spread over all P ranks.
 * Restrictions: shared-memory transport with single-copy access (ALGO_NEEDS_SINGLE_COPY);
 *   at most 255 ranks; any op (rank order, exactly once per element).
 * Cost: T ≈ 2·t_sync + n·(1 + 1/P)·β_mem + n/P·(P−1)·γ.  build() gives the same data flow
 *   as messages (a flat reduce-scatter, then a gather to the root) for the verifier and the
 *   simulator; at P = 2 reduce `flat`'s schedule (the non-root's input to the root), the
 *   same bytes in one round, and so with more ranks than cores (args.shared_cores: there
 *   the root reducing alone beat the P-way split, direct_access.c).  A call of at most
 *   COLLIE_SHM_SLOTS_MAX bytes whose buffers are not all mapped runs this schedule through
 *   the slots (direct_access.c), with more ranks than cores at every size where the
 *   decider timed the slots fastest.
 */
#include "algorithms/direct_access.h"
#include "algorithms/flat_reduce.h"

void direct_schedule_reduce(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    int P = a->size, me = a->rank, root = a->root;
    if (P == 2 || a->shared_cores) {
        if (me != root)
            sched_put(s, root, sched_at(SBUF_SEND, 0), a->bytes);
        else
            flat_reduce_all(s, a);
        return;
    }
    direct_segment mine = direct_schedule_reduce_scatter(s, a, me != root);
    sched_round_begin(s);
    if (me != root && mine.bytes)
        sched_put(s, root, sched_at(SBUF_TMP, 0), mine.bytes);
    for (int i = 1; me == root && i < P; i++) {
        int q = (me + i) % P;
        direct_segment sq = direct_seg_of(a, q);
        if (sq.bytes)
            sched_recv(s, q, sched_at(SBUF_RECV, sq.off), sq.bytes);
    }
}

const collie_algorithm collie_algo_reduce_direct_segments = {
    .name = "direct_segments",
    .coll = COLL_REDUCE,
    .needs = ALGO_NEEDS_SHM | ALGO_NEEDS_SINGLE_COPY,
    .summary = "every rank reduces 1/P of the vector straight from all inputs into the "
               "root's output (shared memory, single copy; collie_alloc buffers are mapped)",
    .accepts = direct_segments_accepts,
    .build = direct_schedule_reduce,
    .driver = &collie_direct_access_driver,
};
