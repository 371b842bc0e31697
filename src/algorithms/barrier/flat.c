/*
 * flat.c — barrier on shared memory: gather to rank 0, release from rank 0.
 *
 * Source: the shared-memory collectives of today's MPI libraries (design/algorithms.md,
 *   `flat`); not from the papers.  Every rank but 0 notifies rank 0 (round 1) and waits
 *   for rank 0's notification (round 2); rank 0 waits for all P-1 notifications, then
 *   notifies everyone.  (Not all-to-all: that would cost P(P-1) notifications for one
 *   fewer round.)
 * Rounds: 2 (0 for P = 1).
 * Bytes sent per rank: 0 (rank 0: P-1 notifications, others 1).
 * Restrictions: shared memory only (rank 0 handles P-1 notifications per phase).
 * Cost: T = 2α + 2(P-1)·o, with o the per-notification overhead at rank 0.
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->rank != 0) {
        sched_round_begin(s);
        sched_notify(s, 0);
        sched_round_begin(s);
        sched_wait_notify(s, 0);
        return;
    }
    sched_round_begin(s);
    for (int q = 1; q < a->size; q++)
        sched_wait_notify(s, q);
    sched_round_begin(s);
    for (int q = 1; q < a->size; q++)
        sched_notify(s, q);
}

const collie_algorithm collie_algo_barrier_flat = {
    .name = "flat",
    .coll = COLL_BARRIER,
    .needs = ALGO_NEEDS_SHM,
    .summary = "everyone notifies rank 0, rank 0 notifies everyone (shared memory)",
    .accepts = NULL,
    .build = build,
};
