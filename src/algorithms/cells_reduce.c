/*
 * cells_reduce.c — allreduce and reduce through the copy cells (the engine's loop, bcast
 * and the shared step helpers are in cells.c; the stages are described there).  Step k at
 * rank r: copy-in of the chunk's slices of the other ranks into r's cell, the reduction of
 * r's slice from all P ranks in rank order, and copy-out of the others' reduced slices
 * (allreduce, the reduce root).  A reduce at P = 2 goes whole instead (below).
 */
#include "algorithms/cells_impl.h"
#include "algorithms/direct_access.h"
#include "base/base.h"
#include "types/types.h"

static bool gets_result(const collie_request_t *req) {
    return req->args.coll == COLL_ALLREDUCE || req->args.rank == req->args.root;
}

/* Declared in cells_impl.h: a reduce at P = 2 goes whole through the cells (below, "the
 * whole vector"). */
bool cells_whole_vector(const collie_request_t *req) {
    return req->args.size == 2 && req->args.coll == COLL_REDUCE;
}

/* The chunk's slices of the other ranks (the whole chunk when the vector goes whole) from
 * this rank's input into its cell. */
static int copy_in(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    int me = req->args.rank;
    bool whole = cells_whole_vector(req);
    step_view v = cells_view_of(req, c, c->next_in);
    int st = cells_may_write(req, c, v.last);
    if (st)
        return st;
    uint64_t lo = 0, n = 0;
    if (!whole)
        cells_slice_of(req, &v, me, &lo, &n);
    char *cell = collie_cell(cl, me, v.t, c->rotate);
    const char *in = (const char *)req->buf[SBUF_SEND] + v.off;
    collie_cell_fill(c->fill.stream, cell, in, lo);
    collie_cell_fill(c->fill.stream, cell + lo + n, in + lo + n, v.len - lo - n);
    *collie_cell_check(cl, me, v.t, c->rotate) = req->check;
    cells_publish(req, &cl->ctrl[me].in, v.last);
    if (whole)   /* only the non-root copies in when the vector goes whole: it reads no cell */
        cells_publish(req, &cl->ctrl[me].freed, v.last);
    c->next_in++;
    return COLLIE_OK;
}

/* An allreduce at P = 2 publishes each reduced slice in the peer's cell, over the lines of
 * it that the reduction has just read (the peer's copy of this rank's slice), and each
 * rank copies the other's result out of its own cell: every write then lands on lines the
 * writer has in its cache, where writing into its own cell took lines the peer had read
 * last (Intel MPI's shared-memory allreduce does this, seen with gdb; bench/allreduce_floor
 * staged 512 KiB fresh 59 -> 49 us; measurements.md, session 49).  More ranks would have
 * to write a slice into every peer's cell (P - 1 copies instead of one). */
static bool result_to_peer(const collie_request_t *req) {
    return req->args.size == 2 && req->args.coll == COLL_ALLREDUCE;
}

static int reduce_step(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    int me = req->args.rank;
    step_view v = cells_view_of(req, c, c->next_red);
    int st = cells_all_at(req, c, &v, false);
    if (st)
        return st;
    uint64_t lo, n;
    cells_slice_of(req, &v, me, &lo, &n);
    char *cell = collie_cell(cl, me, v.t, c->rotate);
    for (int q = 0; q < req->args.size; q++)
        c->srcs[q] = q == me ? (const char *)req->buf[SBUF_SEND] + v.off + lo : collie_cell(cl, q, v.t, c->rotate) + lo;
    char *dst = gets_result(req) ? (char *)req->buf[SBUF_RECV] + v.off + lo : cell + lo;
    st = collie_reduce_n(dst, c->srcs, req->args.size, n / req->args.elem_size, req->dtype, req->op);
    if (st)
        return st;
    if (req->args.coll == COLL_ALLREDUCE || me != req->args.root) {
        char *out = result_to_peer(req) ? collie_cell(cl, 1 - me, v.t, c->rotate) + lo : cell + lo;
        if (dst != out)
            collie_cell_fill(c->fill.stream, out, dst, n);
        cells_publish(req, &cl->ctrl[me].out, v.last);
    }
    if (!gets_result(req))
        cells_publish(req, &cl->ctrl[me].freed, v.last);
    c->next_red++;
    return COLLIE_OK;
}

/* allreduce, the reduce root: the other ranks' reduced slices, into the output. */
static int copy_out(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    step_view v = cells_view_of(req, c, c->next_out);
    int st = cells_all_at(req, c, &v, true);
    if (st)
        return st;
    for (int q = 0; q < req->args.size; q++) {
        if (q == req->args.rank)
            continue;
        uint64_t lo, n;
        cells_slice_of(req, &v, q, &lo, &n);
        int holder = result_to_peer(req) ? req->args.rank : q;   /* whose cell holds q's result */
        collie_peer_copy((char *)req->buf[SBUF_RECV] + v.off + lo, collie_cell(cl, holder, v.t, c->rotate) + lo, n);
    }
    cells_publish(req, &cl->ctrl[req->args.rank].freed, v.last);
    c->next_out++;
    return COLLIE_OK;
}

/* ---- P = 2: the whole vector through the cells ----------------------------------------- */

/* A reduce at P = 2 goes whole, as `flat` does: the non-root copies each whole chunk of
 * its input into its cell, and the root reduces the chunk from both ranks' data in rank
 * order (its own input and the peer's cell) straight into its output.  Against the
 * reduce-scatter + gather above this saves the non-root's reduction, the copy of its
 * reduced slice and that slice's crossing: 0.55-0.85 of the time from 512 KiB, reused and
 * fresh (docs/design.md).  An allreduce gains nothing so (both ranks reduce everything):
 * measured equal at 1 MiB, and 512 KiB moved no closer to the peers. */
static int reduce_whole(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    int me = req->args.rank, peer = 1 - me;
    step_view v = cells_view_of(req, c, c->next_red);
    int st = cells_all_at(req, c, &v, false);
    if (st)
        return st;
    c->srcs[me] = (const char *)req->buf[SBUF_SEND] + v.off;
    c->srcs[peer] = collie_cell(cl, peer, v.t, c->rotate);
    st = collie_reduce_n((char *)req->buf[SBUF_RECV] + v.off, c->srcs, 2, v.count, req->dtype, req->op);
    if (st)
        return st;
    cells_publish(req, &cl->ctrl[me].freed, v.last);
    c->next_red++;
    return COLLIE_OK;
}

/* The root reduces, the other rank copies in; no rank does both.  The non-root finishes
 * only once the root freed the first step: the root reduces it only after it checked
 * every rank's call on the board (direct_check_calls), and a non-root that finished
 * before then could run ahead (zero-count calls need nobody) until its board history no
 * longer held this call, and the root took the correct call for a mismatch (seen under
 * load once all of a call's steps fitted in the ring). */
static int move_whole(collie_request_t *req, cells_run *c) {
    if (gets_result(req))
        return c->next_red < c->nsteps ? reduce_whole(req, c) : COLLIE_TIMEOUT;
    if (c->next_in < c->nsteps)
        return copy_in(req, c);
    int root = req->args.root;
    step_view first = cells_view_of(req, c, 0);
    if (!cells_reached(req, root, &req->team->tp->cells->ctrl[root].freed, first.last))
        return direct_check_channel(req, root) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    c->root_reduced = true;
    return COLLIE_OK;
}

static bool whole_done(const collie_request_t *req, const cells_run *c) {
    if (gets_result(req))
        return c->next_red == c->nsteps;
    return c->next_in == c->nsteps && (c->root_reduced || c->nsteps == 0);
}

/* One move of the stage that is furthest along and can go; COLLIE_TIMEOUT: none can. */
static int move_steps(collie_request_t *req, cells_run *c) {
    int st = COLLIE_TIMEOUT;
    if (gets_result(req) && c->next_out < c->next_red && (st = copy_out(req, c)) != COLLIE_TIMEOUT)
        return st;
    if (c->next_red < c->next_in && (st = reduce_step(req, c)) != COLLIE_TIMEOUT)
        return st;
    if (c->next_in < c->nsteps && c->next_in < c->next_red + c->lap)
        st = copy_in(req, c);
    return st;
}

/* Declared in cells_impl.h. */
bool cells_reduction_done(const collie_request_t *req, const cells_run *c) {
    if (cells_whole_vector(req))
        return whole_done(req, c);
    return gets_result(req) ? c->next_out == c->nsteps : c->next_red == c->nsteps;
}


/* Declared in cells_impl.h. */
int cells_reduction_move(collie_request_t *req, cells_run *c) {
    return cells_whole_vector(req) ? move_whole(req, c) : move_steps(req, c);
}
