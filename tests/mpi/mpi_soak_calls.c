/*
 * mpi_soak_calls.c — mpi_soak's calls: the v forms' layouts, how many units each buffer
 * spans, which regions of them hold input before the call and results after it, and the
 * MPI call itself in its blocking, MPI_I* or persistent (MPI_*_init) form.
 *
 * The v forms' counts are drawn per rank from 0 to the call's count (zeros included); each
 * rank's layout has gaps of 0–2 units before each block and, for a third of the layouts,
 * its blocks in reverse rank order; every rank computes every layout from the sequence's
 * draws, so it knows where each peer's data comes from.  A rank may pass its buffer moved
 * by half its span, its displacements then partly negative (its own draw), and a non-root
 * of gatherv and scatterv may pass NULL arrays (MPI reads them at the root only).
 * Alltoallv in place needs counts that agree both ways: they are drawn per pair.
 */
#include <stdlib.h>

#include "mpi_soak.h"

/* The layouts' draws: a stream of their own per call (the same on every rank). */
static uint64_t vdraw(const call *c, uint64_t what) { return mix(draw(c->step, 63) ^ mix(what)); }

static int cnt_draw(const call *c, int q) { return (int)(vdraw(c, 100 + (uint64_t)q) % (c->n + 1)); }

int v_count(const call *c, int from, int to) {
    int a = from, b = to;
    if (c->in_place && a > b)   /* in place: what a sends b is what b sends a */
        a = to, b = from;
    return (int)(vdraw(c, 300000 + (uint64_t)a * 1024 + (uint64_t)b) % (c->n + 1));
}

/* Units `owner` has for q in its layout (its receive side, or its send side). */
static int side_cnt(const call *c, int owner, int q, bool send) {
    if (c->coll == C_ALLTOALLV)
        return send ? v_count(c, owner, q) : v_count(c, q, owner);
    return cnt_draw(c, q);
}

int v_displ(const call *c, int owner, int q, bool send) {
    uint64_t key = (uint64_t)owner * 2 + send;
    bool rev = vdraw(c, 700000 + key) % 3 == 0;
    int at = 0, P = c->size;
    for (int k = 0; k < P; k++) {
        int j = rev ? P - 1 - k : k;
        at += (int)(vdraw(c, 800000 + key * 1024 + (uint64_t)j) % 3);
        if (j == q)
            return at;
        at += side_cnt(c, owner, j, send);
    }
    return at;
}

static size_t span(const int *cnt, const int *displ, int P) {
    size_t end = 0;
    for (int q = 0; q < P; q++)
        if ((size_t)(displ[q] + cnt[q]) > end)
            end = (size_t)(displ[q] + cnt[q]);
    return end;
}

/* The MPI arrays of a layout: in the side's MPI elements, moved by `shift` units. */
static void scale(int *mc, int *md, const int *cnt, const int *displ, int P, const side *x, int shift) {
    int mult = side_count(x, 1);
    for (int q = 0; q < P; q++) {
        mc[q] = cnt[q] * mult;
        md[q] = (displ[q] - shift) * mult;
    }
}

bool v_layout(call *c) {
    int P = c->size, me = c->rank;
    int *all = calloc(8 * (size_t)P, sizeof(int));
    if (!all)
        return false;
    c->cnt = all, c->displ = all + P, c->scnt = all + 2 * P, c->sdispl = all + 3 * P;
    c->mcnt = all + 4 * P, c->mdispl = all + 5 * P, c->mscnt = all + 6 * P, c->msdispl = all + 7 * P;
    int owner = c->coll == C_GATHERV || c->coll == C_SCATTERV ? c->root : me, at = 0;
    bool send = c->coll == C_SCATTERV;
    for (int q = 0; q < P; q++) {
        c->cnt[q] = side_cnt(c, owner, q, send);
        c->displ[q] = c->coll == C_RS ? at : v_displ(c, owner, q, send);
        at += c->cnt[q];
        if (c->coll == C_ALLTOALLV) {
            c->cnt[q] = v_count(c, q, me);
            c->displ[q] = v_displ(c, me, q, false);
            c->scnt[q] = v_count(c, me, q);
            c->sdispl[q] = v_displ(c, me, q, true);
        }
    }
    /* negative displacements: the buffer passed is half the layout's span further on,
     * where this rank's layout is significant */
    uint64_t d = draw_mine(c->step, 60);
    bool root = me == c->root, moved = d % 4 == 0;
    int half = (int)(span(c->cnt, c->displ, P) / 2);
    if (c->coll == C_SCATTERV && root && moved)
        c->sshift = half;
    if ((c->coll == C_ALLGATHERV || c->coll == C_ALLTOALLV || (c->coll == C_GATHERV && root)) && moved)
        c->rshift = half;
    if (c->coll == C_ALLTOALLV && (d >> 8) % 4 == 0)
        c->sshift = (int)(span(c->scnt, c->sdispl, P) / 2);
    c->vnull = (c->coll == C_GATHERV || c->coll == C_SCATTERV) && me != c->root && (d >> 16) % 2;
    return true;
}

/* After soak_prepare has drawn the sides' shapes: the MPI arrays. */
static void v_scale(call *c) {
    int P = c->size;
    scale(c->mcnt, c->mdispl, c->cnt, c->displ, P, c->coll == C_SCATTERV ? &c->s : &c->r,
          c->coll == C_SCATTERV ? c->sshift : c->rshift);
    scale(c->mscnt, c->msdispl, c->scnt, c->sdispl, P, &c->s, c->sshift);
}

void v_free(call *c) {
    free(c->cnt);
    c->cnt = c->displ = c->scnt = c->sdispl = NULL;
    c->mcnt = c->mdispl = c->mscnt = c->msdispl = NULL;
}

void extents(const call *c, size_t *ns, size_t *nr) {
    size_t n = c->n, P = (size_t)c->size, total = 0;
    bool root = c->rank == c->root, ip = c->in_place;
    for (int q = 0; is_vform(c->coll) && q < c->size; q++)
        total += (size_t)c->cnt[q];
    size_t lay = is_vform(c->coll) ? span(c->cnt, c->displ, c->size) : 0;
    size_t mine = is_vform(c->coll) ? (size_t)c->cnt[c->rank] : 0;
    switch (c->coll) {
    case C_ALLREDUCE: case C_SCAN: case C_EXSCAN: *ns = n, *nr = n; break;
    case C_REDUCE: *ns = n, *nr = root ? n : 0; break;
    case C_BCAST: *ns = 0, *nr = n; break;
    case C_ALLGATHER: *ns = n, *nr = P * n; break;
    case C_ALLGATHERV: *ns = mine, *nr = lay; break;
    case C_RSB: *ns = P * n, *nr = ip ? P * n : n; break;
    case C_RS: *ns = total, *nr = ip ? total : mine; break;
    case C_ALLTOALL: *ns = P * n, *nr = P * n; break;
    case C_ALLTOALLV: *ns = span(c->scnt, c->sdispl, c->size), *nr = lay; break;
    case C_GATHER: *ns = n, *nr = root ? P * n : 0; break;
    case C_GATHERV: *ns = mine, *nr = root ? lay : 0; break;
    case C_SCATTER: *ns = root ? P * n : 0, *nr = ip ? 0 : n; break;
    case C_SCATTERV: *ns = root ? lay : 0, *nr = ip ? 0 : mine; break;
    default: *ns = *nr = 0; break;
    }
    if (ip && c->coll != C_SCATTER && c->coll != C_SCATTERV)
        *ns = 0;
}

static int put_region(region *rg, int k, size_t at, size_t units, int src, int r, size_t from) {
    rg[k] = (region){ .at = at, .units = units, .src = src, .r = r, .lo = 0, .hi = r, .from = from };
    return k + 1;
}

/* Input: where this rank's data sits in the buffer that holds it. */
static int input_regions(const call *c, region *rg) {
    size_t n = c->n;
    int me = c->rank, P = c->size, k = 0;
    bool ip = c->in_place, root = me == c->root;
    switch (c->coll) {
    case C_BARRIER: return 0;
    case C_BCAST: return root ? put_region(rg, 0, 0, n, R_VALUE, me, 0) : 0;
    case C_ALLGATHER: case C_GATHER:
        return put_region(rg, 0, ip ? (size_t)me * n : 0, n, R_VALUE, me, 0);
    case C_ALLGATHERV: case C_GATHERV:
        return put_region(rg, 0, ip ? (size_t)c->displ[me] : 0, (size_t)c->cnt[me], R_VALUE, me, 0);
    case C_RSB: case C_ALLTOALL: return put_region(rg, 0, 0, (size_t)P * n, R_VALUE, me, 0);
    case C_RS: return put_region(rg, 0, 0, span(c->cnt, c->displ, P), R_VALUE, me, 0);
    case C_SCATTER: return root ? put_region(rg, 0, 0, (size_t)P * n, R_VALUE, me, 0) : 0;
    case C_SCATTERV: case C_ALLTOALLV:
        if (c->coll == C_SCATTERV && !root)
            return 0;
        for (int q = 0; q < P; q++) {
            bool recv = c->coll == C_ALLTOALLV && ip;
            const int *cn = c->coll == C_SCATTERV || recv ? c->cnt : c->scnt;
            const int *di = c->coll == C_SCATTERV || recv ? c->displ : c->sdispl;
            k = put_region(rg, k, (size_t)di[q], (size_t)cn[q], R_VALUE, me, (size_t)di[q]);
        }
        return k;
    default: return put_region(rg, 0, 0, n, R_VALUE, me, 0);   /* the reductions but rs(b) */
    }
}

static int reduce_region(region *rg, int k, size_t at, size_t units, int lo, int hi, size_t from) {
    rg[k] = (region){ .at = at, .units = units, .src = R_REDUCE, .lo = lo, .hi = hi, .from = from };
    return k + 1;
}

/* Output: what the receive buffer holds after the call. */
static int output_regions(const call *c, region *rg) {
    size_t n = c->n;
    int me = c->rank, P = c->size, k = 0, root = c->root;
    bool ip = c->in_place;
    size_t pre = 0, total = 0;
    for (int q = 0; c->coll == C_RS && q < P; q++)
        pre += q < me ? (size_t)c->cnt[q] : 0, total += (size_t)c->cnt[q];
    switch (c->coll) {
    case C_BARRIER: return 0;
    case C_ALLREDUCE: return reduce_region(rg, 0, 0, n, 0, P, 0);
    case C_REDUCE: return me == root ? reduce_region(rg, 0, 0, n, 0, P, 0) : 0;
    case C_SCAN: return reduce_region(rg, 0, 0, n, 0, me + 1, 0);
    case C_EXSCAN:
        return me == 0 ? put_region(rg, 0, 0, n, R_ANY, 0, 0) : reduce_region(rg, 0, 0, n, 0, me, 0);
    case C_BCAST: return put_region(rg, 0, 0, n, R_VALUE, root, 0);
    case C_RSB:
        k = reduce_region(rg, 0, 0, n, 0, P, (size_t)me * n);
        return ip ? put_region(rg, k, n, (size_t)(P - 1) * n, R_ANY, 0, 0) : k;
    case C_RS:
        k = reduce_region(rg, 0, 0, (size_t)c->cnt[me], 0, P, pre);
        return ip ? put_region(rg, k, (size_t)c->cnt[me], total - (size_t)c->cnt[me], R_ANY, 0, 0) : k;
    case C_SCATTER: return ip ? 0 : put_region(rg, 0, 0, n, R_VALUE, root, (size_t)me * n);
    case C_SCATTERV:
        return ip ? 0
                  : put_region(rg, 0, 0, (size_t)c->cnt[me], R_VALUE, root, (size_t)v_displ(c, root, me, true));
    default: break;
    }
    if ((c->coll == C_GATHER || c->coll == C_GATHERV) && me != root)
        return 0;
    for (int q = 0; q < P; q++) {
        bool v = is_vform(c->coll);
        size_t at = v ? (size_t)c->displ[q] : (size_t)q * n, units = v ? (size_t)c->cnt[q] : n, from = 0;
        if (c->coll == C_ALLTOALL)
            from = (size_t)me * n;
        if (c->coll == C_ALLTOALLV)   /* where q keeps the block for this rank */
            from = (size_t)v_displ(c, q, me, !ip);
        k = put_region(rg, k, at, units, R_VALUE, q, from);
    }
    return k;
}

int regions(const call *c, bool out, region *rg) {
    return out ? output_regions(c, rg) : input_regions(c, rg);
}

/* ---- the calls ----------------------------------------------------------------------------- */

/* One MPI call in the call's form: MPI_X, MPI_Ix, or the persistent MPI_X_init. */
#define ISSUE(c, B, I, P, ...)                                                                  \
    ((c)->form == F_BLOCKING      ? MPI_##B(__VA_ARGS__)                                         \
     : (c)->form == F_NONBLOCKING ? MPI_##I(__VA_ARGS__, &(c)->req)                              \
                                  : PINIT(P)(__VA_ARGS__, info_of(c), &(c)->req))

static MPI_Info info_of(const call *c) { return c->ordered ? ordered_info : MPI_INFO_NULL; }

int issue(call *c) {
    bool scatter = c->coll == C_SCATTER || c->coll == C_SCATTERV;
    size_t es = elem_size(c->kind);
    const void *sb = c->in_place && !scatter ? MPI_IN_PLACE
                     : c->s.buf + (size_t)c->sshift * (size_t)side_extent(&c->s) * es;
    void *rb = c->in_place && scatter ? MPI_IN_PLACE
               : c->r.buf + (size_t)c->rshift * (size_t)side_extent(&c->r) * es;
    MPI_Datatype st = side_type(c, &c->s), rt = side_type(c, &c->r);
    int sc = side_count(&c->s, c->n), rc = side_count(&c->r, c->n), root = c->root;
    int mine = is_vform(c->coll) ? c->cnt[c->rank] : 0;
    MPI_Op op = is_reduction(c->coll) ? op_handle(c) : MPI_OP_NULL;
    MPI_Comm m = c->comm;
    if (is_vform(c->coll))
        v_scale(c);
    const int *vc = c->vnull ? NULL : c->mcnt, *vd = c->vnull ? NULL : c->mdispl;
    switch (c->coll) {
    case C_ALLREDUCE: return ISSUE(c, Allreduce, Iallreduce, Allreduce_init, sb, rb, rc, rt, op, m);
    case C_REDUCE: return ISSUE(c, Reduce, Ireduce, Reduce_init, sb, rb, rc, rt, op, root, m);
    case C_BCAST: return ISSUE(c, Bcast, Ibcast, Bcast_init, rb, rc, rt, root, m);
    case C_BARRIER: return ISSUE(c, Barrier, Ibarrier, Barrier_init, m);
    case C_ALLGATHER: return ISSUE(c, Allgather, Iallgather, Allgather_init, sb, sc, st, rb, rc, rt, m);
    case C_ALLGATHERV:
        return ISSUE(c, Allgatherv, Iallgatherv, Allgatherv_init, sb, side_count(&c->s, (size_t)mine), st, rb,
                     c->mcnt, c->mdispl, rt, m);
    case C_RSB:
        return ISSUE(c, Reduce_scatter_block, Ireduce_scatter_block, Reduce_scatter_block_init, sb, rb,
                     rc, rt, op, m);
    case C_RS:
        return ISSUE(c, Reduce_scatter, Ireduce_scatter, Reduce_scatter_init, sb, rb, c->mcnt, rt, op, m);
    case C_ALLTOALL: return ISSUE(c, Alltoall, Ialltoall, Alltoall_init, sb, sc, st, rb, rc, rt, m);
    case C_ALLTOALLV:
        return ISSUE(c, Alltoallv, Ialltoallv, Alltoallv_init, sb, c->mscnt, c->msdispl, st, rb, c->mcnt,
                     c->mdispl, rt, m);
    case C_GATHER: return ISSUE(c, Gather, Igather, Gather_init, sb, sc, st, rb, rc, rt, root, m);
    case C_GATHERV:
        return ISSUE(c, Gatherv, Igatherv, Gatherv_init, sb, side_count(&c->s, (size_t)mine), st, rb, vc, vd,
                     rt, root, m);
    case C_SCATTER: return ISSUE(c, Scatter, Iscatter, Scatter_init, sb, sc, st, rb, rc, rt, root, m);
    case C_SCATTERV:
        return ISSUE(c, Scatterv, Iscatterv, Scatterv_init, sb, vc, vd, st, rb,
                     side_count(&c->r, (size_t)mine), rt, root, m);
    case C_SCAN: return ISSUE(c, Scan, Iscan, Scan_init, sb, rb, rc, rt, op, m);
    default: return ISSUE(c, Exscan, Iexscan, Exscan_init, sb, rb, rc, rt, op, m);
    }
}
