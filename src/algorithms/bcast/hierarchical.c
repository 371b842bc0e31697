/*
 * hierarchical.c — broadcast in two steps for teams spanning several nodes: broadcast
 * among the heads (the root on the root's node, the first rank elsewhere), then inside
 * every node from its head.
 *
 * Source: the two-level scheme of Sack & Gropp (SMP-aware collectives); each step runs the
 *   algorithm collie's selection picks for it (hier_compose.c): binomial, scatter-allgather
 *   (Barnett et al. / Thakur et al. 2005) or chain depending on size.
 * Rounds: R_bcast(N nodes) + R_bcast(node).
 * Bytes per rank: those of the two steps.
 * Restrictions: the team spans several nodes (or node=K is given).
 * Cost: T = T_bcast(N, n; inter-node α, β) + T_bcast(p_node, n).
 */
#include <stdlib.h>

#include "algorithms/hier_compose.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    hier_layout l;
    int *node, *heads;
    if (!hier_groups(s, a, &l, &node, &heads))
        return;
    if (heads[l.my_node] == a->rank && l.nnodes > 1)
        hier_step(s, a, COLL_BCAST, heads, l.nnodes, l.my_node, hier_node_of(&l, a->root), true, false);
    hier_step(s, a, COLL_BCAST, node, l.node_size, l.my_local, hier_local_index(&l, heads[l.my_node]),
              true, false);
    free(node);
    free(heads);
}

const collie_algorithm collie_algo_bcast_hierarchical = {
    .name = "hierarchical",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "broadcast among one head per node, then inside each node; chosen when the "
               "team spans nodes",
    .accepts = hier_accepts,
    .build = build,
};
