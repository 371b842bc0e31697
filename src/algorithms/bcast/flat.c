/*
 * flat.c — broadcast on shared memory: the root writes to everyone.
 *
 * Source: the shared-memory collectives of today's MPI libraries (design/algorithms.md,
 *   `flat`); not from the papers.  The root PUTs its buffer to every other rank in one
 *   round (starting at root + 1, so concurrent broadcasts from different roots do not all
 *   hit rank 0 first); every other rank receives it.
 * Rounds: 1.
 * Bytes sent per rank: root (P-1)·n, others 0.
 * Restrictions: shared memory only (the root writes P-1 copies).  Uses SBUF_RECV only.
 * Cost: T = α_uni + (P-1)nβ_uni (on shm the copies are memcpy into the inboxes).
 */
#include "algorithms/algorithm.h"

void algo_bcast_root_to_all(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    sched_ref buf = sched_at(SBUF_RECV, 0);
    if (a->rank != a->root) {
        sched_recv(s, a->root, buf, a->bytes);
        return;
    }
    for (int i = 1; i < a->size; i++)
        sched_put(s, (a->root + i) % a->size, buf, a->bytes);
}

const collie_algorithm collie_algo_bcast_flat = {
    .name = "flat",
    .coll = COLL_BCAST,
    .needs = ALGO_NEEDS_SHM,
    .summary = "the root writes the buffer to every rank (shared memory)",
    .accepts = NULL,
    .build = algo_bcast_root_to_all,
};
