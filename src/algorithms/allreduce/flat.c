/*
 * flat.c — allreduce on shared memory: everyone writes, everyone reads.
 *
 * Source: the shared-memory collectives of today's MPI libraries (design/algorithms.md,
 *   `flat`); not from the papers.  Every rank PUTs its whole input to every other rank,
 *   then reduces all P inputs in one P-source REDUCE in rank order, straight out of the
 *   inboxes.  With P > SCHED_MAX_SOURCES the reduction is a chain of REDUCEs
 *   (pat_chain_*), still in rank order: ((x_0 ∘ … ∘ x_254) ∘ x_255 ∘ … ∘ x_508) ∘ …
 * Rounds: 2 (the PUTs, then the REDUCE), + 1 per extra chain link.
 * Bytes sent per rank: (P-1)·n.
 * Restrictions: shared memory only (P-1 full copies per rank only pay off where a PUT is
 *   a memcpy).  Any op: the operands are in rank order, and every rank builds the same
 *   n-ary expression, so the results are bitwise identical.
 * Scratch: none; n bytes when the chain has more than one link.
 * Cost: T = (P-1)(α + nβ) + (P-1)nγ, on shm α is one flag write and nβ one memcpy; the
 *   latency is ~2α for small n (writes overlap).
 */
#include "algorithms/algorithm.h"
#include "algorithms/flat_reduce.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    sched_round_begin(s);
    for (int i = 1; i < a->size; i++)
        sched_put(s, (a->rank + i) % a->size, sched_at(SBUF_SEND, 0), a->bytes);
    flat_reduce_all(s, a);
}

const collie_algorithm collie_algo_allreduce_flat = {
    .name = "flat",
    .coll = COLL_ALLREDUCE,
    .needs = ALGO_NEEDS_SHM,
    .summary = "every rank writes its input to all, every rank reduces all P in rank "
               "order (shared memory)",
    .accepts = NULL,
    .build = build,
};
