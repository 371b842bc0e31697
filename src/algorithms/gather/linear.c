/*
 * linear.c — gather (block and v forms): every rank writes its block to the root.
 *
 * Source: the linear gather of today's MPI libraries (MPICH's and Open MPI's basic linear
 *   gather); not from the papers.  Every non-root rank PUTs its block to the root, which
 *   receives each into its place in SBUF_RECV and copies its own (unless in place).  The v
 *   form sends every block, also empty ones, so that a count differing from the root's
 *   recvcounts shows as a message of another size (COLLIE_ERR_MISMATCH).
 * Rounds: 1.
 * Bytes sent per rank: n (root: 0); the root receives (P-1)·n.
 * Restrictions: none.
 * Cost: T = α + (P-1)nβ (the root's link).
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    if (!a->v && a->bytes == 0)
        return;
    uint64_t own, off, len;
    sched_ref mine = collie_coll_own_block(a, &own);
    if (me != a->root) {
        sched_put(s, a->root, mine, own);
        return;
    }
    collie_coll_block(a, SBUF_RECV, me, &off, &len);
    if (!a->in_place && own)
        sched_copy(s, sched_at(SBUF_RECV, off), mine, own);
    for (int i = 1; i < P; i++) {
        int from = (me + i) % P;
        collie_coll_block(a, SBUF_RECV, from, &off, &len);
        sched_recv(s, from, sched_at(SBUF_RECV, off), len);
    }
}

const collie_algorithm collie_algo_gather_linear = {
    .name = "linear",
    .coll = COLL_GATHER,
    .needs = 0,
    .summary = "every rank writes its block to the root",
    .accepts = NULL,
    .build = build,
};
