/*
 * linear.c — inclusive scan: a chain, rank r receives x0 ∘ … ∘ x(r-1) from rank r - 1.
 *
 * Source: the linear scan of today's MPI libraries (MPICH's and Open MPI's basic linear
 *   scan); not from the papers.  Rank 0's result is its input; rank r > 0 reduces the
 *   prefix arriving from r - 1 with its own input (prefix first: rank order), straight
 *   out of the inbox, into SBUF_RECV, then PUTs that to r + 1.
 * Rounds: 2 per rank, P in sequence (the chain).
 * Bytes sent per rank: n (rank P-1: 0).
 * Restrictions: none; any op (rank order).
 * Cost: T = (P-1)(α + nβ + nγ).
 */
#include "algorithms/algorithm.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, me = a->rank;
    sched_ref send = sched_at(SBUF_SEND, 0), recv = sched_at(SBUF_RECV, 0);
    if (a->bytes == 0)
        return;
    if (me == 0 && !a->in_place)
        sched_copy(s, recv, send, a->bytes);
    if (me > 0)
        sched_recv_reduce(s, me - 1, recv, send, true, a->bytes);
    if (me + 1 < P) {
        sched_round_begin(s);
        sched_put(s, me + 1, recv, a->bytes);
    }
}

const collie_algorithm collie_algo_scan_linear = {
    .name = "linear",
    .coll = COLL_SCAN,
    .needs = 0,
    .summary = "a chain: rank r combines the prefix from rank r-1 with its input",
    .accepts = NULL,
    .build = build,
};
