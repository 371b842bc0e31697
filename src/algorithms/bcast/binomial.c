/*
 * binomial.c — broadcast along a binomial tree.
 *
 * Source: Hoefler 2007 §4.1, Fig. 3 (Open MPI's binomial broadcast); Abuelsoud–Paznikov
 *   Alg. 2–3 (the same tree as a loop of one-sided puts); Rabenseifner 2004 §3.3 for the
 *   cost.  Tree: pat_binomial_* with root rotation (relative rank v = rank - root mod P;
 *   parent v minus its lowest set bit).  A rank waits for the vector from its parent, then
 *   writes it to all its children in one round, farthest child first.
 * Rounds: 1 (receive) + 1 (all child PUTs) — the root and leaves 1; depth ⌈lg P⌉.
 * Bytes sent per rank: n per child: the root ⌈lg P⌉·n, leaves 0.
 * Restrictions: none — any P, any root.  Uses SBUF_RECV only (input at the root, output
 *   elsewhere).
 * Cost: T = ⌈lg P⌉(α_uni + nβ_uni)  (§3.3); a rank sending to c children back to back
 *   pays c·nβ_uni on its link.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    sched_ref buf = sched_at(SBUF_RECV, 0);
    int parent = pat_binomial_parent(a->rank, a->root, a->size);
    if (parent >= 0) {
        sched_round_begin(s);
        sched_recv(s, parent, buf, a->bytes);
    }
    sched_round_begin(s);
    for (int i = pat_binomial_nchildren(a->rank, a->root, a->size) - 1; i >= 0; i--)
        sched_put(s, pat_binomial_child(a->rank, a->root, a->size, i), buf, a->bytes);
}

const collie_algorithm collie_algo_bcast_binomial = {
    .name = "binomial",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "binomial tree, every rank forwards to its children (Hoefler 2007 §4.1); "
               "short messages",
    .accepts = NULL,
    .build = build,
};
