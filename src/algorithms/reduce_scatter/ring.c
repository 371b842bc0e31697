/*
 * ring.c — reduce_scatter by pairwise exchange (the reduce-scatter half of the ring
 * allreduce).
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the pairwise-exchange
 *   reduce-scatter of the reduce-scatter section (MPICH's long-message reduce_scatter);
 *   Rabenseifner 2004 §3.7 (its first half, as allreduce/ring.c).  Step i = 1 … P-1: send
 *   block rank+i of the input to rank+i, receive rank-i's block for me and combine it.
 * Rank order (a case a neighbour-only ring cannot keep; solved as in allreduce/ring.c):
 *   my block arrives from ranks r-1, r-2, …, 0, P-1, …, r+1, so it is built as
 *   low = x_0 ∘ (… ∘ (x_{r-1} ∘ x_r)) and high = x_{r+1} ∘ (… ∘ x_{P-1}) (in TMP), and
 *   the last step forms low ∘ x_{r+1} ∘ high in one 3-source node.
 * Rounds: P - 1 (+1 local copy in place).
 * Bytes sent per rank: n(P-1)/P (n = P·B the input; v form: Σ of the others' blocks).
 * Restrictions: none — any P, any op (rank order, exactly once; block j is reduced on rank
 *   j only), any count; the v form (unequal counts) is served: every step moves one
 *   block of its own size, empty blocks send nothing.
 * Scratch: B for `high` (in place 2B: `low` too, then copied to RECV[0, B)).
 * Cost: T = (P-1)α + ((P-1)/P)n(β + γ).
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"

/* The state of my block: low = x_from … x_r, high = x_from … x_{P-1} (when has_high). */
typedef struct own_blk {
    sched_ref low, high, res;
    bool has_high;
    uint64_t bytes;
} own_blk;

/* Combines my block arriving from `from` in step `step`. */
static void combine(collie_schedule *s, const collie_coll_args *a, own_blk *o, int from,
                    int step) {
    if (from < a->rank) {                       /* a lower rank: in ∘ low */
        sched_recv_reduce(s, from, o->res, o->low, true, o->bytes);
        o->low = o->res;
    } else if (step == a->size - 1) {           /* the last one, rank + 1: low ∘ in ∘ high */
        sched_ref srcs[3] = { o->low, sched_in(from), o->high };
        sched_reduce(s, o->res, srcs, o->has_high ? 3 : 2, o->bytes);
    } else if (!o->has_high) {                  /* rank P-1 opens `high` */
        sched_recv(s, from, o->high, o->bytes);
        o->has_high = true;
    } else {                                    /* in ∘ high */
        sched_recv_reduce(s, from, o->high, o->high, true, o->bytes);
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    uint64_t own = cs_send_len(a, r);
    if (p == 1) {
        if (!a->in_place)
            sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), own);
        return;
    }
    /* in place RECV[0, B) is block 0 of the input, sent in step P-r: reduce in TMP */
    own_blk o = { sched_at(SBUF_SEND, cs_send_off(a, r)), sched_at(SBUF_TMP, 0),
                  sched_at(SBUF_RECV, 0), false, own };
    if (a->in_place) {
        o.res = sched_at(SBUF_TMP, 0);
        o.high = sched_at(SBUF_TMP, own);
    }
    if (own > 0)
        sched_need_tmp(s, a->in_place ? 2 * own : own);
    for (int i = 1; i < p; i++) {
        int to = pat_pairwise_to(r, i, p), from = pat_pairwise_from(r, i, p);
        sched_round_begin(s);
        cs_put(s, to, sched_at(SBUF_SEND, cs_send_off(a, to)), cs_send_len(a, to));
        if (own > 0)
            combine(s, a, &o, from, i);
    }
    if (a->in_place && own > 0) {
        sched_round_begin(s);
        sched_copy(s, sched_at(SBUF_RECV, 0), o.res, own);
    }
}

const collie_algorithm collie_algo_reduce_scatter_ring = {
    .name = "ring",
    .coll = COLL_REDUCE_SCATTER,
    .needs = 0,
    .summary = "pairwise-exchange reduce-scatter, P-1 steps (Thakur et al. 2005; "
               "Rabenseifner §3.7); any op in rank order; long messages; unequal counts too",
    .accepts = NULL,
    .build = build,
};
