/*
 * mp_soak_v.c — the v forms in mp_soak's sequence (`vforms`): allgatherv, reduce_scatter,
 * alltoallv, gatherv and scatterv with counts drawn per rank from 0 to the call's count
 * (zeros included) and displacements with gaps of 0–2 elements, which the call must leave
 * as they were (SENTINEL).  Every rank computes the whole layout from the sequence's
 * draws, so it knows what every peer sends it and where.  Not in place.
 */
#include <stdlib.h>

#include "mp_soak.h"

/* The layouts' draws: a stream of their own per call (the same on every rank). */
static uint64_t vdraw(const call *c, int what) { return mix(draw(c->step, 63) ^ mix((uint64_t)what)); }

/* Elements rank a sends to rank b in an alltoallv (the same draw on both). */
static size_t pair_count(const call *c, int a, int b) {
    return (size_t)(vdraw(c, 300000 + a * 1024 + b) % (c->count + 1));
}

static size_t gap(const call *c, int what) { return (size_t)(vdraw(c, what) % 3); }

/* Where rank a puts its block for b in its alltoallv send buffer. */
static size_t send_displ(const call *c, int a, int b) {
    size_t at = 0;
    for (int q = 0; q < b; q++)
        at += pair_count(c, a, q) + gap(c, 200000 + a * 1024 + q);
    return at;
}

bool v_layout(call *c) {
    int P = c->size, me = c->rank;
    vlayout *v = &c->v;
    v->cnt = calloc((size_t)P, sizeof *v->cnt);
    v->displ = calloc((size_t)P, sizeof *v->displ);
    v->scnt = calloc((size_t)P, sizeof *v->scnt);
    v->sdispl = calloc((size_t)P, sizeof *v->sdispl);
    if (!v->cnt || !v->displ || !v->scnt || !v->sdispl)
        return false;
    /* gaps in the layout of the rank that holds it: the root's for gatherv and scatterv
     * (every rank needs it), else the rank's own */
    int owner = c->coll == C_GATHERV || c->coll == C_SCATTERV ? c->root : me;
    size_t at = 0;
    for (int q = 0; q < P; q++) {
        if (c->coll == C_ALLTOALLV) {
            v->cnt[q] = pair_count(c, q, me);
            v->scnt[q] = pair_count(c, me, q);
            v->sdispl[q] = send_displ(c, me, q);
        } else {
            v->cnt[q] = (size_t)(vdraw(c, q) % (c->count + 1));
        }
        if (c->coll != C_REDUCE_SCATTER)   /* its input and counts have no gaps */
            at += gap(c, 100000 + owner * 1024 + q);
        v->displ[q] = at;
        at += v->cnt[q];
    }
    return true;
}

void v_free(call *c) {
    free(c->v.cnt);
    free(c->v.displ);
    free(c->v.scnt);
    free(c->v.sdispl);
    c->v = (vlayout){ 0 };
}

/* The end of the layout (displacement + count of the last rank). */
static size_t span(const size_t *displ, const size_t *cnt, int P) { return P ? displ[P - 1] + cnt[P - 1] : 0; }

void v_extents(const call *c, size_t *ns, size_t *nr) {
    const vlayout *v = &c->v;
    size_t all = span(v->displ, v->cnt, c->size);
    switch (c->coll) {
    case C_ALLGATHERV: *ns = v->cnt[c->rank]; *nr = all; break;
    case C_REDUCE_SCATTER: *ns = all; *nr = v->cnt[c->rank]; break;
    case C_ALLTOALLV: *ns = span(v->sdispl, v->scnt, c->size); *nr = all; break;
    case C_GATHERV: *ns = v->cnt[c->rank]; *nr = is_root(c) ? all : 0; break;
    default: *ns = is_root(c) ? all : 0; *nr = v->cnt[c->rank]; break;   /* scatterv */
    }
}

int64_t v_given(const call *c, size_t j) { return input(c->step, c->sub, c->rank, j); }

/* The receive layout's block that element j falls in, or -1 in a gap. */
static int block_of(const call *c, size_t j, size_t *i) {
    for (int q = 0; q < c->size; q++)
        if (j >= c->v.displ[q] && j < c->v.displ[q] + c->v.cnt[q]) {
            *i = j - c->v.displ[q];
            return q;
        }
    return -1;
}

bool v_expected(const call *c, size_t j, int64_t *want) {
    size_t i = 0;
    int q;
    switch (c->coll) {
    case C_REDUCE_SCATTER:
        *want = reduced(c, 0, c->size, c->v.displ[c->rank] + j);
        return true;
    case C_SCATTERV:   /* the root's block for this rank, at its displacement there */
        *want = input(c->step, c->sub, c->root, c->v.displ[c->rank] + j);
        return true;
    default:
        q = block_of(c, j, &i);
        if (q < 0)
            *want = SENTINEL;
        else if (c->coll == C_ALLTOALLV)
            *want = input(c->step, c->sub, q, send_displ(c, q, c->rank) + i);
        else
            *want = input(c->step, c->sub, q, i);   /* allgatherv, gatherv */
        return true;
    }
}

int v_issue(call *c, collie_request_t **req) {
    collie_team_t *t = c->team;
    const vlayout *v = &c->v;
    collie_dtype_t ty = COLLIE_INT64;
    size_t mine = v->cnt[c->rank];
    switch (c->coll) {
    case C_ALLGATHERV:
        return req ? collie_iallgatherv(t, c->send, mine, c->recv, v->cnt, v->displ, ty, req)
                   : collie_allgatherv(t, c->send, mine, c->recv, v->cnt, v->displ, ty);
    case C_REDUCE_SCATTER:
        return req ? collie_ireduce_scatter(t, c->send, c->recv, v->cnt, ty, op_handle(c->op), req)
                   : collie_reduce_scatter(t, c->send, c->recv, v->cnt, ty, op_handle(c->op));
    case C_ALLTOALLV:
        return req ? collie_ialltoallv(t, c->send, v->scnt, v->sdispl, c->recv, v->cnt, v->displ, ty, req)
                   : collie_alltoallv(t, c->send, v->scnt, v->sdispl, c->recv, v->cnt, v->displ, ty);
    case C_GATHERV:
        return req ? collie_igatherv(t, c->send, mine, c->recv, v->cnt, v->displ, ty, c->root, req)
                   : collie_gatherv(t, c->send, mine, c->recv, v->cnt, v->displ, ty, c->root);
    default:
        return req ? collie_iscatterv(t, c->send, v->cnt, v->displ, c->recv, mine, ty, c->root, req)
                   : collie_scatterv(t, c->send, v->cnt, v->displ, c->recv, mine, ty, c->root);
    }
}
