/*
 * hierarchical.c — reduce in two steps for teams spanning several nodes: reduce inside
 * every node to its head (the root on the root's node, the first rank elsewhere), then
 * reduce among the heads to the root.
 *
 * Source: the two-level scheme of Sack & Gropp (SMP-aware collectives); each step runs the
 *   algorithm collie's selection picks for it (hier_compose.c): binomial / binary tree /
 *   Rabenseifner (Rabenseifner 2004) depending on size.
 * Rounds: R_reduce(node) + R_reduce(N nodes).
 * Bytes per rank: those of the two steps; heads that are not the root keep the node's
 *   partial result in scratch (n bytes).
 * Restrictions: as allreduce/hierarchical.c (node layout; non-commutative ops only with
 *   consecutive ranks per node).
 * Cost: T = T_reduce(p_node, n) + T_reduce(N, n; inter-node α, β).
 */
#include <stdlib.h>

#include "algorithms/hier_compose.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    hier_layout l;
    int *node, *heads;
    if (!hier_groups(s, a, &l, &node, &heads))
        return;
    bool root = a->rank == a->root;   /* non-roots have no receive buffer: scratch */
    int head_local = hier_local_index(&l, heads[l.my_node]);
    /* Off the root the input is read where the caller left it (SBUF_SEND). */
    hier_step(s, a, COLL_REDUCE, node, l.node_size, l.my_local, head_local, root && a->in_place, !root);
    if (heads[l.my_node] == a->rank && l.nnodes > 1)
        hier_step(s, a, COLL_REDUCE, heads, l.nnodes, l.my_node, hier_node_of(&l, a->root), true, !root);
    free(node);
    free(heads);
}

const collie_algorithm collie_algo_reduce_hierarchical = {
    .name = "hierarchical",
    .coll = COLL_REDUCE,
    .needs = 0,
    .summary = "reduce inside each node to a head, then among the heads to the root; chosen "
               "when the team spans nodes",
    .accepts = hier_accepts,
    .build = build,
};
