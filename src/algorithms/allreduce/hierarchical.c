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
    hier_layout_of(a, &l);
    int *node = malloc((size_t)l.node_size * sizeof *node), *heads = malloc((size_t)l.nnodes * sizeof *heads);
    if (!node || !heads) {
        free(node);
        free(heads);
        s->error = -2;   /* COLLIE_ERR_NOMEM */
        return;
    }
    for (int i = 0; i < l.node_size; i++)
        node[i] = hier_rank_at(&l, l.my_node, i);
    for (int n = 0; n < l.nnodes; n++)
        heads[n] = hier_rank_at(&l, n, 0);
    hier_part p;
    hier_part_init(&p, a, COLL_REDUCE, l.node_size, l.my_local, 0, a->in_place);
    p.members = node;
    hier_append(s, &p);
    if (l.my_local == 0 && l.nnodes > 1) {
        hier_part_init(&p, a, COLL_ALLREDUCE, l.nnodes, l.my_node, 0, true);
        p.members = heads;
        hier_append(s, &p);
    }
    hier_part_init(&p, a, COLL_BCAST, l.node_size, l.my_local, 0, true);
    p.members = node;
    hier_append(s, &p);
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
