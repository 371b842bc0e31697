/*
 * binomial.c — allreduce as a binomial-tree reduce to rank 0 followed by a binomial-tree
 * broadcast from rank 0.
 *
 * Source: End 2016 §I and §IV (the binomial spanning tree baseline), design/algorithms.md;
 *   the reduce half is reduce/binomial.c (Rabenseifner 2004 §3.3), the broadcast half is
 *   bcast/binomial.c (Hoefler 2007 §4.1, Fig. 3), both with the tree of patterns.h
 *   (pat_binomial_*) rooted at rank 0.
 * Steps: 1. every rank combines its children one per round, nearest first, as
 *   acc = acc ∘ child (child i's subtree is the next contiguous rank range, so the result
 *   at rank 0 is x_0 ∘ … ∘ x_{P-1}), then sends acc to its parent;  2. rank 0's result
 *   goes down the same tree: a rank receives it from its parent and writes it to all its
 *   children in one round, farthest first.
 * Rounds: 2⌈lg P⌉ on the critical path (rank 0: ⌈lg P⌉ + 1); a rank with c children
 *   c + 3 at most.
 * Bytes sent per rank: n to the parent + n per child (rank 0: ⌈lg P⌉·n).
 * Restrictions: none — any P, any op.  Rank order is kept (tree rooted at 0); every
 *   element is reduced once, on one path, and copied everywhere: bitwise identical.
 * Scratch: n bytes on inner ranks other than 0 (rank 0 accumulates in RECV).
 * Cost (§3.1 model): T = ⌈lg P⌉(α_uni + nβ_uni + nγ) + ⌈lg P⌉(α_uni + nβ_uni).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

/* Reduce phase: combine the children into acc (RECV on rank 0, else TMP), send to the
 * parent. */
static void reduce_up(collie_schedule *s, const collie_coll_args *a) {
    sched_ref acc = sched_at(SBUF_SEND, 0);
    sched_ref dst = sched_at(a->rank == 0 ? SBUF_RECV : SBUF_TMP, 0);
    int nchildren = pat_binomial_nchildren(a->rank, 0, a->size);
    if (nchildren > 0 && a->rank != 0)
        sched_need_tmp(s, a->bytes);
    for (int i = 0; i < nchildren; i++) {
        sched_round_begin(s);
        sched_recv_reduce(s, pat_binomial_child(a->rank, 0, a->size, i), dst, acc, false,
                          a->bytes);
        acc = dst;
    }
    int parent = pat_binomial_parent(a->rank, 0, a->size);
    if (parent >= 0) {
        sched_round_begin(s);
        sched_put(s, parent, acc, a->bytes);
    }
}

/* Broadcast phase: RECV from the parent, then to every child. */
static void bcast_down(collie_schedule *s, const collie_coll_args *a) {
    sched_ref buf = sched_at(SBUF_RECV, 0);
    int parent = pat_binomial_parent(a->rank, 0, a->size);
    if (parent >= 0) {
        sched_round_begin(s);
        sched_recv(s, parent, buf, a->bytes);
    }
    sched_round_begin(s);
    for (int i = pat_binomial_nchildren(a->rank, 0, a->size) - 1; i >= 0; i--)
        sched_put(s, pat_binomial_child(a->rank, 0, a->size, i), buf, a->bytes);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    reduce_up(s, a);
    bcast_down(s, a);
}

const collie_algorithm collie_algo_allreduce_binomial = {
    .name = "binomial",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "binomial reduce to rank 0, then binomial broadcast (End 2016 baseline); "
               "short vectors",
    .accepts = NULL,
    .build = build,
};
