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

/* Non-root ranks have no receive buffer: their partial results live in scratch. */
static void to_scratch(hier_part *p, const collie_coll_args *a) {
    p->buf[SBUF_RECV] = SBUF_TMP;
    p->off[SBUF_RECV] = 0;
    p->off[SBUF_TMP] = a->bytes;
    if (p->args.in_place) {
        p->buf[SBUF_SEND] = SBUF_TMP;
        p->off[SBUF_SEND] = 0;
    }
}

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
    bool root = a->rank == a->root;
    int root_node = hier_node_of(&l, a->root);
    for (int i = 0; i < l.node_size; i++)
        node[i] = hier_rank_at(&l, l.my_node, i);
    for (int n = 0; n < l.nnodes; n++)
        heads[n] = hier_head(&l, n, a->root);
    int head_local = hier_local_index(&l, heads[l.my_node]);
    if (!root && a->bytes)
        sched_need_tmp(s, a->bytes);
    hier_part p;
    /* Off the root the input is read where the caller left it (SBUF_SEND). */
    hier_part_init(&p, a, COLL_REDUCE, l.node_size, l.my_local, head_local, root && a->in_place);
    p.members = node;
    if (!root)
        to_scratch(&p, a);
    hier_append(s, &p);
    if (heads[l.my_node] == a->rank && l.nnodes > 1) {
        hier_part_init(&p, a, COLL_REDUCE, l.nnodes, l.my_node, root_node, true);
        p.members = heads;
        if (!root)
            to_scratch(&p, a);
        hier_append(s, &p);
    }
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
