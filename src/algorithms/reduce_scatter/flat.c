/*
 * flat.c — reduce_scatter (block and v forms): block j goes to rank j, which reduces the
 * P contributions in rank order.
 *
 * Source: the direct reduce-scatter of today's MPI libraries (MPICH's and Open MPI's
 *   "basic"/non-recursive variants); not from the papers.  Every rank PUTs block j of its
 *   input to rank j (starting at rank + 1) and reduces the P blocks meant for it — its own
 *   and P-1 incoming — in one REDUCE in rank order (a chain of REDUCEs when P exceeds
 *   SCHED_MAX_SOURCES), straight out of the inboxes.  Each result is computed once, on
 *   its rank.  In place the own block is copied to SBUF_TMP first (the result overwrites
 *   the start of the input).  The v form skips empty blocks (the counts are the same on
 *   every rank).
 * Rounds: 2 (the PUTs, then the reduction; more links of the chain for P > 255).
 * Bytes sent per rank: (P-1)·n for blocks of n bytes; received the same.
 * Restrictions: none; any op (rank order).  The message count (P(P-1)) makes it a
 *   small-P or shared-memory algorithm.
 * Scratch: in place n bytes (and n more for a chain).
 * Cost: T = 2α + (P-1)(nβ + nγ) (the P-1 incoming blocks dominate).
 */
#include "algorithms/algorithm.h"
#include "algorithms/flat_reduce.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    if (!a->v && a->bytes == 0)
        return;
    uint64_t off, len;
    for (int i = 1; i < P; i++) {
        int to = (me + i) % P;
        collie_coll_block(a, SBUF_SEND, to, &off, &len);
        if (len)
            sched_put(s, to, sched_at(SBUF_SEND, off), len);
    }
    collie_coll_block(a, SBUF_SEND, me, &off, &len);
    if (len == 0)
        return;
    flat_range f = { P, sched_at(SBUF_SEND, off), sched_at(SBUF_RECV, 0), len, 0 };
    if (a->in_place) {
        sched_need_tmp(s, len);
        sched_copy(s, sched_at(SBUF_TMP, 0), f.own, len);
        f.own = sched_at(SBUF_TMP, 0);
        f.tmp_off = len;
    }
    flat_reduce_range(s, a, &f);
}

const collie_algorithm collie_algo_reduce_scatter_flat = {
    .name = "flat",
    .coll = COLL_REDUCE_SCATTER,
    .needs = 0,
    .summary = "block j goes to rank j, which reduces the P blocks in rank order",
    .accepts = NULL,
    .build = build,
};
