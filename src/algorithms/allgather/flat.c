/*
 * flat.c — allgather (and allgatherv): every rank writes its block to every rank.
 *
 * Source: the direct ("linear") allgather of today's MPI libraries (MPICH's and Open MPI's
 *   basic linear component); not from the papers.  In one round every rank PUTs its own
 *   block to every other rank (starting at rank + 1, so the ranks do not all write to
 *   rank 0 first), receives every other rank's block into its place in SBUF_RECV and,
 *   unless in place, copies its own block there.  The v form skips empty blocks (the
 *   counts are the same on every rank, so both ends skip them).
 * Rounds: 1.
 * Bytes sent per rank: (P-1)·n for blocks of n bytes; P(P-1) messages in all.
 * Restrictions: none (any transport); the message count makes it a small-P or
 *   shared-memory algorithm.
 * Cost: T = α + (P-1)nβ (the P-1 puts of a rank leave back to back).
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    if (!a->v && a->bytes == 0)
        return;
    uint64_t own, off, len;
    sched_ref mine = collie_coll_own_block(a, &own);
    collie_coll_block(a, SBUF_RECV, me, &off, &len);
    if (!a->in_place && own)
        sched_copy(s, sched_at(SBUF_RECV, off), mine, own);
    for (int i = 1; i < P; i++) {
        int to = (me + i) % P, from = (me - i + P) % P;
        if (own)
            sched_put(s, to, mine, own);
        collie_coll_block(a, SBUF_RECV, from, &off, &len);
        if (len)
            sched_recv(s, from, sched_at(SBUF_RECV, off), len);
    }
}

const collie_algorithm collie_algo_allgather_flat = {
    .name = "flat",
    .coll = COLL_ALLGATHER,
    .needs = 0,
    .summary = "every rank writes its block to every rank in one round",
    .accepts = NULL,
    .build = build,
};
