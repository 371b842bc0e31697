/*
 * binomial.c — reduce along a binomial tree.
 *
 * Source: Rabenseifner 2004, §3.3 (the classical tree reduce: whole vectors, recursive
 *   distance doubling, half the ranks finish each step); the binomial shape as in
 *   design/algorithms.md (End 2016 §I/IV baseline, Hoefler 2007 §4.1 Fig. 3).
 *   Tree: pat_binomial_* (relative rank v = rank - root mod P; parent v minus its lowest
 *   set bit).  Each rank combines its children one per round, nearest first, as
 *   acc = acc ∘ child (the child's subtree is the next contiguous range of relative
 *   ranks), then sends acc to its parent.
 *   Non-commutative ops: relative order is rank order only for root 0, so the tree is
 *   rooted at rank 0 and rank 0 sends the result to the root (one extra message when
 *   root != 0); the result is x_0 ∘ … ∘ x_{P-1} with the association of the tree.
 * Rounds: root ⌈lg P⌉ (+1 non-commutative, root != 0); a rank with c children c + 1.
 * Bytes sent per rank: n for every rank but the root (in the extra case rank 0 sends its
 *   n to the root instead of to a parent).
 * Restrictions: none — any P, any root, any op.  Non-root ranks accumulate in TMP and
 *   never touch RECV.
 * Scratch: n bytes on inner non-root ranks.
 * Cost: T = ⌈lg P⌉(α_uni + nβ_uni + nγ)  (§3.3), + α_uni + nβ_uni for a non-commutative
 *   op with root != 0.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

/* Reduces the subtree of this rank in the tree rooted at tree_root; returns where the
 * result is (dst_buf, or SBUF_SEND for a leaf). */
static sched_ref reduce_subtree(collie_schedule *s, const collie_coll_args *a, int tree_root,
                                int dst_buf) {
    sched_ref acc = sched_at(SBUF_SEND, 0), dst = sched_at(dst_buf, 0);
    int nchildren = pat_binomial_nchildren(a->rank, tree_root, a->size);
    if (nchildren > 0 && dst_buf == SBUF_TMP)
        sched_need_tmp(s, a->bytes);
    for (int i = 0; i < nchildren; i++) {
        int child = pat_binomial_child(a->rank, tree_root, a->size, i);
        sched_round_begin(s);
        sched_recv_reduce(s, child, dst, acc, false, a->bytes);
        acc = dst;
    }
    return acc;
}

/* The tree rooted at tree_root; the root's result goes to RECV only if it is the real
 * root, else to TMP. */
static sched_ref tree(collie_schedule *s, const collie_coll_args *a, int tree_root) {
    bool real_root = a->rank == a->root && a->rank == tree_root;
    sched_ref acc = reduce_subtree(s, a, tree_root, real_root ? SBUF_RECV : SBUF_TMP);
    int parent = pat_binomial_parent(a->rank, tree_root, a->size);
    if (parent >= 0) {
        sched_round_begin(s);
        sched_put(s, parent, acc, a->bytes);
    }
    return acc;
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    int tree_root = a->commutative ? a->root : 0;
    sched_ref acc = tree(s, a, tree_root);
    if (a->rank == a->root && a->rank == tree_root) {
        sched_copy(s, sched_at(SBUF_RECV, 0), acc, a->bytes);  /* P = 1: no children */
        return;
    }
    sched_round_begin(s);
    if (a->rank == tree_root)
        sched_put(s, a->root, acc, a->bytes);
    else if (a->rank == a->root)
        sched_recv(s, tree_root, sched_at(SBUF_RECV, 0), a->bytes);
}

const collie_algorithm collie_algo_reduce_binomial = {
    .name = "binomial",
    .coll = COLL_REDUCE,
    .needs = 0,
    .summary = "binomial tree, one child per round (Rabenseifner §3.3); short vectors",
    .accepts = NULL,
    .build = build,
};
