/*
 * flat.c — reduce on shared memory: everyone writes to the root, the root reduces.
 *
 * Source: the shared-memory collectives of today's MPI libraries (design/algorithms.md,
 *   `flat`); not from the papers.  Every non-root rank PUTs its input to the root; the
 *   root reduces all P inputs in one P-source REDUCE in rank order, straight out of the
 *   inboxes.  With P > SCHED_MAX_SOURCES the reduction is a chain of REDUCEs
 *   (pat_chain_*), still in rank order, accumulating in TMP until the last link.
 * Rounds: 1 for every rank (root: 1 per chain link).
 * Bytes sent per rank: n (root: 0).
 * Restrictions: shared memory only (the root receives P-1 full vectors).  Any op: the
 *   operands are in rank order.
 * Scratch: none; n bytes on the root when the chain has more than one link.
 * Cost: T = α_uni + (P-1)(nβ_uni + nγ) (the root's inbox reads dominate).
 */
#include "algorithms/algorithm.h"
#include "algorithms/flat_reduce.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    if (a->rank != a->root) {
        sched_put(s, a->root, sched_at(SBUF_SEND, 0), a->bytes);
        return;
    }
    if (a->size == 1) {
        sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), a->bytes);
        return;
    }
    flat_reduce_all(s, a);
}

const collie_algorithm collie_algo_reduce_flat = {
    .name = "flat",
    .coll = COLL_REDUCE,
    .needs = ALGO_NEEDS_SHM,
    .summary = "every rank writes its input to the root, the root reduces all P in rank "
               "order (shared memory)",
    .accepts = NULL,
    .build = build,
};
