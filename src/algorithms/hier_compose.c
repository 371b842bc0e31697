/*
 * hier_compose.c — node layouts and schedule composition for the hierarchical algorithms.
 *
 * A sub-call's schedule is built by the algorithm collie's selection picks for it (with no
 * node layout, so never a hierarchical one again), on its own small rank space, then its
 * rounds are appended to the caller's schedule: peers become global ranks, buffers are
 * renamed (e.g. an in-place sub-call's SBUF_SEND is the caller's SBUF_RECV) and shifted
 * (a sub-call's scratch lives after the caller's own scratch).
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/hier_compose.h"

/* Selection (src/select): the sub-calls take the algorithm collie would take for them. */
const collie_algorithm *collie_select(collie_coll_args *a);

void hier_layout_of(const collie_coll_args *a, hier_layout *l) {
    l->a = a;
    if (a->node_of && a->nnodes > 0)
        l->nnodes = a->nnodes;
    else {
        long long per = collie_param(&a->params, "node", a->size);
        per = per < 1 ? 1 : per;
        l->nnodes = (int)((a->size + per - 1) / per);
    }
    l->my_node = hier_node_of(l, a->rank);
    l->my_local = hier_local_index(l, a->rank);
    l->node_size = hier_node_size(l, l->my_node);
}

int hier_node_of(const hier_layout *l, int rank) {
    const collie_coll_args *a = l->a;
    if (a->node_of && a->nnodes > 0)
        return a->node_of[rank];
    long long per = collie_param(&a->params, "node", a->size);
    return (int)(rank / (per < 1 ? 1 : per));
}

int hier_local_index(const hier_layout *l, int rank) {
    int node = hier_node_of(l, rank), k = 0;
    for (int r = 0; r < rank; r++)
        k += hier_node_of(l, r) == node;
    return k;
}

int hier_node_size(const hier_layout *l, int node) {
    int n = 0;
    for (int r = 0; r < l->a->size; r++)
        n += hier_node_of(l, r) == node;
    return n;
}

int hier_rank_at(const hier_layout *l, int node, int local) {
    for (int r = 0; r < l->a->size; r++)
        if (hier_node_of(l, r) == node && local-- == 0)
            return r;
    return -1;
}

int hier_head(const hier_layout *l, int node, int root) {
    return hier_node_of(l, root) == node ? root : hier_rank_at(l, node, 0);
}

bool hier_blocked(const hier_layout *l) {
    for (int r = 1; r < l->a->size; r++)
        if (hier_node_of(l, r) < hier_node_of(l, r - 1))
            return false;
    return true;
}

bool hier_accepts(const collie_coll_args *a, const char **why) {
    bool layout = (a->node_of && a->nnodes > 1) || collie_param(&a->params, "node", 0) > 0;
    if (!layout) {
        *why = "the team does not span several nodes (give node=RANKS_PER_NODE to force)";
        return false;
    }
    hier_layout l;
    hier_layout_of(a, &l);
    if (l.nnodes > HIER_MAX_NODES) {
        *why = "more nodes than the hierarchical algorithms handle";
        return false;
    }
    if (a->coll != COLL_BCAST && !a->commutative && !hier_blocked(&l)) {
        *why = "non-commutative op and the nodes' ranks are not consecutive";
        return false;
    }
    return true;
}

void hier_part_init(hier_part *part, const collie_coll_args *a, int coll, int group_size, int index,
                    int root, bool in_place) {
    memset(part, 0, sizeof *part);
    collie_coll_args *s = &part->args;
    s->coll = coll;
    s->rank = index;
    s->size = group_size;
    s->root = root;
    s->count = a->count;
    s->elem_size = a->elem_size;
    s->bytes = a->bytes;
    s->commutative = a->commutative;
    s->idempotent = a->idempotent;
    s->in_place = in_place;
    s->shared_memory = false;   /* flat algorithms read peers' memory: not across the groups */
    for (int b = 0; b < SBUF_COUNT; b++)
        part->buf[b] = b;
    if (in_place)
        part->buf[SBUF_SEND] = SBUF_RECV;
}

static sched_ref map_ref(const hier_part *p, sched_ref r) {
    if (r.buf == SBUF_IN)
        return sched_in(p->members[r.peer]);
    return sched_at(p->buf[r.buf], r.off + p->off[r.buf]);
}

static void append_op(collie_schedule *s, const hier_part *p, const collie_schedule *sub,
                      const sched_op *op) {
    if (op->kind == SCHED_PUT) {
        sched_put(s, p->members[op->peer], map_ref(p, sub->srcs[op->src]), op->bytes);
        return;
    }
    sched_ref srcs[SCHED_MAX_SOURCES];
    for (int i = 0; i < op->nsrc; i++)
        srcs[i] = map_ref(p, sub->srcs[op->src + (uint32_t)i]);
    sched_reduce(s, map_ref(p, op->dst), srcs, op->nsrc, op->bytes);
}

void hier_append(collie_schedule *s, hier_part *part) {
    if (part->args.size < 1)
        return;
    const collie_algorithm *alg = collie_select(&part->args);
    if (!alg) {
        s->error = -7;   /* COLLIE_ERR_INTERNAL: no algorithm for a sub-call */
        return;
    }
    collie_schedule sub;
    sched_init(&sub, part->args.rank, part->args.size, part->args.elem_size);
    alg->build(&sub, &part->args);
    sched_finish(&sub);
    if (sub.error)
        s->error = sub.error;
    if (sub.tmp_bytes)
        sched_need_tmp(s, part->off[SBUF_TMP] + sub.tmp_bytes);
    for (uint32_t k = 0; k < sub.nrounds; k++) {
        sched_round_begin(s);
        const sched_round *rd = &sub.rounds[k];
        for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++)
            append_op(s, part, &sub, &sub.ops[i]);
    }
    sched_free(&sub);
}

bool hier_groups(collie_schedule *s, const collie_coll_args *a, hier_layout *l, int **node,
                 int **heads) {
    hier_layout_of(a, l);
    *node = malloc((size_t)l->node_size * sizeof **node);
    *heads = malloc((size_t)l->nnodes * sizeof **heads);
    if (!*node || !*heads) {
        free(*node);
        free(*heads);
        s->error = -2;   /* COLLIE_ERR_NOMEM */
        return false;
    }
    for (int i = 0; i < l->node_size; i++)
        (*node)[i] = hier_rank_at(l, l->my_node, i);
    int root = a->coll == COLL_ALLREDUCE ? 0 : a->root;   /* allreduce: first ranks */
    for (int n = 0; n < l->nnodes; n++)
        (*heads)[n] = hier_head(l, n, root);
    return true;
}

void hier_step(collie_schedule *s, const collie_coll_args *a, int coll, const int *members, int size,
               int index, int root, bool in_place, bool in_scratch) {
    hier_part p;
    hier_part_init(&p, a, coll, size, index, root, in_place);
    p.members = members;
    if (in_scratch) {
        p.buf[SBUF_RECV] = SBUF_TMP;
        p.off[SBUF_RECV] = 0;
        p.off[SBUF_TMP] = a->bytes;
        if (in_place) {
            p.buf[SBUF_SEND] = SBUF_TMP;
            p.off[SBUF_SEND] = 0;
        }
        if (a->bytes)
            sched_need_tmp(s, a->bytes);
    }
    hier_append(s, &p);
}
