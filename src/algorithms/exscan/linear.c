/*
 * linear.c — exclusive scan: a chain, rank r receives x0 ∘ … ∘ x(r-1) from rank r - 1.
 *
 * Source: the linear exscan of today's MPI libraries (MPICH's and Open MPI's basic
 *   linear exscan); not from the papers.  Rank 0 PUTs its input to rank 1 and leaves its
 *   SBUF_RECV untouched; rank r > 0 receives the prefix into SBUF_RECV (its result) and,
 *   unless it is the last, PUTs prefix ∘ x(r) (in SBUF_TMP) to r + 1.  In place the input
 *   is copied to SBUF_TMP first (the incoming prefix overwrites it).
 * Rounds: up to 4 per rank, P in sequence (the chain).
 * Bytes sent per rank: n (rank P-1: 0).
 * Restrictions: none; any op (rank order).
 * Scratch: n bytes (ranks 1 … P-2, and in place).
 * Cost: T = (P-1)(α + nβ) + (P-2)nγ.
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    sched_ref own = sched_at(SBUF_SEND, 0), recv = sched_at(SBUF_RECV, 0);
    sched_ref tmp = sched_at(SBUF_TMP, 0);
    if (a->bytes == 0 || P == 1)
        return;
    if (me == 0) {
        sched_put(s, 1, own, a->bytes);
        return;
    }
    bool last = me == P - 1;
    if (a->in_place && !last) {
        sched_need_tmp(s, a->bytes);
        sched_copy(s, tmp, own, a->bytes);
        own = tmp;
        sched_round_begin(s);
    }
    sched_recv(s, me - 1, recv, a->bytes);
    if (last)
        return;
    sched_need_tmp(s, a->bytes);
    sched_round_begin(s);
    sched_ref two[2] = { recv, own };
    sched_reduce(s, tmp, two, 2, a->bytes);
    sched_round_begin(s);
    sched_put(s, me + 1, tmp, a->bytes);
}

const collie_algorithm collie_algo_exscan_linear = {
    .name = "linear",
    .coll = COLL_EXSCAN,
    .needs = 0,
    .summary = "a chain: rank r receives the prefix from rank r-1, passes on prefix and input",
    .accepts = NULL,
    .build = build,
};
