/*
 * linear.c — scatter (block and v forms): the root writes block j to rank j.
 *
 * Source: the linear scatter of today's MPI libraries (MPICH's and Open MPI's basic
 *   linear scatter); not from the papers.  The root PUTs block j of SBUF_SEND to every
 *   rank j (starting at root + 1) and copies its own block to SBUF_RECV unless in place
 *   (then it keeps it in SBUF_SEND); every other rank receives its block.  The v form
 *   sends every block, also empty ones, so that a recvcount differing from the root's
 *   sendcounts shows as a message of another size (COLLIE_ERR_MISMATCH).
 * Rounds: 1.
 * Bytes sent per rank: root (P-1)·n, others 0.
 * Restrictions: none.
 * Cost: T = α + (P-1)nβ (the root's link).
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    if (!a->v && a->bytes == 0)
        return;
    uint64_t off, len;
    if (me != a->root) {
        sched_recv(s, a->root, sched_at(SBUF_RECV, 0), a->bytes);   /* v: own count */
        return;
    }
    collie_coll_block(a, SBUF_SEND, me, &off, &len);
    if (!a->in_place && len)
        sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, off), len);
    for (int i = 1; i < P; i++) {
        int to = (me + i) % P;
        collie_coll_block(a, SBUF_SEND, to, &off, &len);
        sched_put(s, to, sched_at(SBUF_SEND, off), len);
    }
}

const collie_algorithm collie_algo_scatter_linear = {
    .name = "linear",
    .coll = COLL_SCATTER,
    .needs = 0,
    .summary = "the root writes block j to rank j",
    .accepts = NULL,
    .build = build,
};
