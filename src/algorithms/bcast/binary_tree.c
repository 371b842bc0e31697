/*
 * binary_tree.c — broadcast along a binary tree in heap numbering, one put per child.
 *
 * Source: Abuelsoud–Paznikov §II-A, Alg. 1 ("RMA Bcast binary"): relative rank
 *   v = (rank - root) mod P (line 1), children 2v+1 and 2v+2 when < P (lines 4–6, 12),
 *   mapped back to real ranks by adding the root (lines 7, 13), one MPI_Put of the whole
 *   buffer into each child's window (lines 9, 15).  Their lock/unlock around each put is
 *   replaced by the notified write: the child knows its data is complete when the PUT's
 *   notification arrives.  (Alg. 1 as printed has typos — the outer "for r = 0 to p"
 *   loop and comp_rank(rank, …) instead of comp_rank(child, …) — this is the algorithm
 *   the text describes.)  Rabenseifner 2004 §3.3 for the tree's cost.  Index math:
 *   pat_bintree_* (patterns_bcast.h).  A rank waits for the vector from its parent, then
 *   writes it to its children in one round, child 2v+1 (the larger subtree) first.
 *   Versus binomial.c (Abuelsoud–Paznikov Alg. 2–3): the binomial tree's root has
 *   ⌈lg P⌉ children and the depth is ⌈lg P⌉; here every rank has at most 2 children and
 *   the depth is ⌊lg P⌋, so the root's link carries 2n instead of ⌈lg P⌉·n.
 * Rounds: non-root 2 (receive, then the PUTs to its children; leaves 1), root 1;
 *   depth ⌊lg P⌋.
 * Bytes sent per rank: n per child, at most 2n; leaves (about half the ranks) 0.
 * Restrictions: none — any P, any root.  Uses SBUF_RECV only.
 * Cost: T = ⌊lg P⌋(α_uni + 2nβ_uni) (each level, the second child waits for the first
 *   child's n bytes on the parent's link).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns_bcast.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    sched_ref buf = sched_at(SBUF_RECV, 0);
    int parent = pat_bintree_parent(a->rank, a->root, a->size);
    if (parent >= 0) {
        sched_round_begin(s);
        sched_recv(s, parent, buf, a->bytes);
    }
    sched_round_begin(s);
    int n = pat_bintree_nchildren(a->rank, a->root, a->size);
    for (int i = 0; i < n; i++)
        sched_put(s, pat_bintree_child(a->rank, a->root, a->size, i), buf, a->bytes);
}

const collie_algorithm collie_algo_bcast_binary_tree = {
    .name = "binary_tree",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "binary tree, children 2v+1 and 2v+2, one put per child (Abuelsoud-Paznikov "
               "Alg. 1); short messages",
    .accepts = NULL,
    .build = build,
};
