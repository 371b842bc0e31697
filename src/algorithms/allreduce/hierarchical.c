/*
 * hierarchical.c — allreduce in three steps for teams spanning several nodes: reduce
 * inside every node to its first rank, allreduce among those heads (one per node), then
 * broadcast inside every node.
 *
 * Source: the two-level scheme of Sack & Gropp (SMP-aware collectives) and of MPI
 *   libraries' "hierarchical"/"han" components; each step runs the algorithm collie's
 *   selection picks for it (hier_compose.c), e.g. binomial trees inside a node and
 *   Rabenseifner / ring / recursive doubling (Rabenseifner 2004; Thakur et al. 2005)
 *   among the heads.
 * Rounds: R_reduce(node) + R_allreduce(N nodes) + R_bcast(node).
 * Bytes per rank: those of the three steps; across nodes only the heads send, once per
 *   node, what the chosen allreduce sends for P = N.
 * Restrictions: the team spans several nodes (transport's node layout) or node=K is given
 *   (K consecutive ranks per node, for tests and the simulator); non-commutative ops only
 *   when every node's ranks are consecutive.
 * Cost: T = T_reduce(p_node, n) + T_allreduce(N, n; inter-node α, β) + T_bcast(p_node, n),
 *   the node steps with shared-memory α, β.
 */
#include <stdlib.h>

#include "algorithms/hier_compose.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    hier_layout l;
    int *node, *heads;   /* heads: the first rank of every node */
    if (!hier_groups(s, a, &l, &node, &heads))
        return;
    hier_step(s, a, COLL_REDUCE, node, l.node_size, l.my_local, 0, a->in_place, false);
    if (l.my_local == 0 && l.nnodes > 1)
        hier_step(s, a, COLL_ALLREDUCE, heads, l.nnodes, l.my_node, 0, true, false);
    hier_step(s, a, COLL_BCAST, node, l.node_size, l.my_local, 0, true, false);
    free(node);
    free(heads);
}

const collie_algorithm collie_algo_allreduce_hierarchical = {
    .name = "hierarchical",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "reduce inside each node, allreduce among one head per node, broadcast inside "
               "each node; chosen when the team spans nodes",
    .accepts = hier_accepts,
    .build = build,
};
