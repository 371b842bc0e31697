/*
 * binary_tree.c — reduce along a binary tree in heap order (children 2v+1, 2v+2).
 *
 * Source: Rabenseifner 2004, §3.3 (the classical binary tree reduce: whole vectors, half of
 *   the ranks finish in each step); the tree shape and the rank rotation by the root as in
 *   Abuelsoud–Paznikov Alg. 1 (relative rank v = rank - root mod P, children 2v+1, 2v+2).
 *   Tree: pat_btree_*.  Every rank combines its own input and the partial results of its
 *   (at most two) children in one 3-source REDUCE — both children's messages are consumed
 *   chunk by chunk as they arrive, so the levels of the tree pipeline through the
 *   executor's chunks — and sends the result to its parent.
 * Rounds: 2 on inner ranks (reduce, send), 1 on leaves (send) and on the root (reduce);
 *   ⌊lg P⌋ levels of messages on the critical path.
 * Bytes sent per rank: n for every rank but the root, which sends nothing.
 * Restrictions: commutative ops only.  The subtree of v in heap order, {v, 2v+1, 2v+2,
 *   4v+3, …}, is not a contiguous range of ranks, so no rank order can be kept without
 *   changing the tree (the binomial tree, reduce/binomial.c, keeps it).  Any P, any root,
 *   any count.  Non-root ranks accumulate in TMP and never touch RECV.
 * Scratch: n bytes on inner non-root ranks.
 * Cost: T = ⌊lg P⌋(α_uni + 2nβ_uni + 2nγ) (each level receives and reduces two vectors;
 *   §3.3's ⌈lg p⌉(α_uni + nβ_uni + nγ) counts one child per step); with the executor's
 *   chunking of c bytes the levels overlap:
 *   T ≈ ⌊lg P⌋(α_uni + 2cβ_uni + 2cγ) + 2nβ_uni + 2nγ.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns_blocks.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    int nchildren = pat_btree_nchildren(a->rank, a->root, a->size);
    int parent = pat_btree_parent(a->rank, a->root, a->size);
    sched_ref acc = sched_at(SBUF_SEND, 0);
    if (nchildren > 0 || parent < 0) {
        sched_ref srcs[3] = { acc };
        for (int i = 0; i < nchildren; i++)
            srcs[1 + i] = sched_in(pat_btree_child(a->rank, a->root, a->size, i));
        acc = sched_at(parent < 0 ? SBUF_RECV : SBUF_TMP, 0);
        if (parent >= 0)
            sched_need_tmp(s, a->bytes);
        sched_reduce(s, acc, srcs, 1 + nchildren, a->bytes);
    }
    if (parent >= 0) {
        sched_round_begin(s);
        sched_put(s, parent, acc, a->bytes);
    }
}

const collie_algorithm collie_algo_reduce_binary_tree = {
    .name = "binary_tree",
    .coll = COLL_REDUCE,
    .needs = ALGO_NEEDS_COMMUTATIVE,
    .summary = "binary tree in heap order, children 2v+1 and 2v+2, root rotation "
               "(Rabenseifner §3.3, Abuelsoud-Paznikov Alg. 1); short vectors",
    .accepts = NULL,
    .build = build,
};
