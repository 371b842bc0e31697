/*
 * cells.c — the copy-cell engine and driver of the `cells` algorithms (their files in
 * allreduce/, reduce/, bcast/, allgather/, alltoall/ and reduce_scatter/ hold the
 * references, cost and the schedule the verifier and the simulator see; allreduce's and
 * reduce's moves are in cells_reduce.c, allgather's, alltoall's and reduce_scatter's in
 * cells_blocks.c, the algorithms' driver in cells_driver.c); direct_access.c and
 * direct_colls.c run the same engine when a call's buffers cannot all be mapped and the
 * kernel copy was not measured to be faster.
 *
 * The vector goes in steps of one cell (cells.h).  Step k of allreduce/reduce at rank r:
 *   copy-in:  r copies the chunk's slices of the other ranks from its input into its cell
 *             (its own slice stays where it is);
 *   reduce:   r reduces its slice from all P ranks, in rank order (its own input, the
 *             others' cells), into its output (allreduce, the reduce root) or straight
 *             into its cell (a reduce non-root), and publishes the result in its cell;
 *   copy-out: r copies every other rank's reduced slice from that rank's cell into its
 *             output (allreduce, the reduce root).
 * bcast: the root copies each chunk into its cell; every other rank copies it out.
 * Each stage of step k waits only for the flags it needs (transport.h), so copy-in of
 * step k + 1 overlaps the others' reduction of step k, and so on, as far as the ring of
 * cells allows.  A waiter spins on the flag word, then yields, then sleeps (request.c);
 * a writer wakes a peer only when it announced that it sleeps.
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/cells_impl.h"
#include "algorithms/direct_access.h"
#include "algorithms/patterns.h"
#include "base/base.h"
#include "core/fill_tune.h"
#include "core/internal.h"
#include "types/types.h"

/* Declared in cells_impl.h. */
bool cells_moves_blocks(int coll) {
    return coll == COLL_ALLGATHER || coll == COLL_ALLTOALL || coll == COLL_REDUCE_SCATTER;
}

bool cells_accepts(const collie_coll_args *a, const char **why) {
    if (!a->cell_bytes) {
        *why = "needs the copy cells of the shm transport";
        return false;
    }
    if (a->size > SCHED_MAX_SOURCES) {
        *why = "more than 255 ranks";
        return false;
    }
    if (cells_moves_blocks(a->coll))
        return cells_blocks_accepts(a, why);
    if (a->elem_size > a->cell_bytes) {
        *why = "elements larger than a copy cell (COLLIE_SHM_CELL_BYTES)";
        return false;
    }
    return true;
}

cells_run *cells_new(collie_request_t *req) {
    size_t P = (size_t)req->args.size;
    cells_run *c = calloc(1, sizeof *c);
    if (c) {
        c->srcs = calloc(P, sizeof *c->srcs);
        c->view = calloc(P, sizeof *c->view);
        c->source = calloc(P, sizeof *c->source);
    }
    if (!c || !c->srcs || !c->view || !c->source) {
        cells_free(c);
        collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory for the copy cells' state", req->args.rank);
        return NULL;
    }
    return c;
}

void cells_free(cells_run *c) {
    if (c) {
        free(c->srcs);
        free(c->view);
        free(c->source);
        free(c->scratch);
    }
    free(c);
}

void cells_reset(cells_run *c) { c->begun = false; }

/* Bytes per step: a quarter of the call, at least 16 KiB for bcast (one copy in and one
 * out per step, so the readers start after a short first step) and 64 KiB for the others,
 * whose ranks all write and read and wait for two or three flags per step — a flag wait
 * costs a cache line's trip between cores, and that trip varies by 4-10x with where the
 * host puts two vCPUs (docs/performance.md, "The machine's state").  Measured at P = 2
 * on the AMD VM (2026-11-27, allreduce/alltoall/allgather through the cells, 32 KiB -
 * 2 MiB): with 210-220 ns trips, 128 KiB in 9.2-10.3 us against 12.8-13.7 in steps of
 * n/8 and 32 KiB blocks 2.8-3.1 against 3.4-3.6; with 40 ns trips allreduce 128 KiB 5.0
 * against 5.6, the rest within 5 %.  bcast in quarters rather than eighths (2026-11-29,
 * P = 2, `collie-bench --coll bcast --barrier-each`, the two in turn): 128 KiB 2.73-2.90
 * against 2.92-3.01 us with 35-40 ns trips, 6.15-6.42 against 6.77-7.56 with 200-220 ns;
 * 256 KiB 4.74-5.24 against 5.24-5.43 (fast), the same (slow); P = 8 256 / 512 KiB 25-28
 * / 47 against 31-32 / 54-56; from 1 MiB both are a cell.  At most a cell; a multiple
 * of 64 bytes when the element size divides 64, else of the element size. */
#define BCAST_STEP_MIN (16u * 1024u)
#define STEP_MIN (64u * 1024u)
uint64_t cells_step_bytes(uint64_t bytes, uint64_t elem, uint64_t cell, bool bcast) {
    uint64_t part = bytes / 4, least = bcast ? BCAST_STEP_MIN : STEP_MIN;
    uint64_t want = part < least ? least : part;
    uint64_t unit = 64 % elem == 0 ? 64 : elem;
    if (want > cell)
        want = cell;
    uint64_t r = want / unit * unit;
    return r ? r : cell / elem * elem;
}

/* Rotating calls whose steps carry at least this many bytes start at the ring's first
 * cell: at P = 2 with fresh data (collie-bench --algo cells --barrier-each --fresh-data,
 * 2-3 rounds in turn, µs) allgather 128 KiB 11.8-12.3 -> 10.8-11.5, 256 KiB 24 -> 21.3-22.8,
 * 512 KiB 63-66 -> 57-58; alltoall 128 KiB 12.6-13.4 -> 10.9-11.8, 512 KiB 77-82 -> 70-73;
 * allreduce within noise; but from 64 KiB steps down slower (allgather 32 / 64 KiB 3.1-3.4 /
 * 5.7-6.3 -> 4.7-5.1 / 8.3-8.7), so smaller steps keep going round the ring. */
#define CALL_LAP_MIN (128u * 1024u)

void cells_take_steps(collie_request_t *req, cells_run *c, uint64_t nsteps, uint64_t chunk,
                      uint64_t width, uint32_t window) {
    collie_cells *cl = req->team->tp->cells;
    c->chunk = chunk;
    c->nsteps = nsteps;
    c->width = width;
    c->lap = window / width;
    c->ring = cl->ncells;
    c->floor = cl->step;
    /* rotation pays while a lap's lines are still in the caches: calls that fit in the
     * window (P = 2 allreduce 4 MiB fresh took 600 us rotating against 515) */
    c->rotate = cl->rotate && nsteps * width <= window;
    /* a wide step's cells are adjacent; a call that fills its window starts at the ring's
     * first cell, so that long calls one after another keep to the same cells; so does a
     * rotating call of large steps: each such call is then a lap of its own, and writes the
     * cells the last one read (CALL_LAP_MIN) */
    bool own_lap = c->rotate && chunk >= CALL_LAP_MIN;
    uint64_t align = nsteps * width >= window || own_lap ? cl->ncells : width;
    c->base = (cl->step + align - 1) / align * align;
    cl->step = nsteps ? cells_last_number(c, nsteps - 1) : c->base;
    c->next_in = c->next_red = c->next_out = 0;
    c->begun = true;
    c->lent = false;
    c->marked_done = false;
    c->root_reduced = false;
    int k = req->args.coll;
    bool fills = k != COLL_BCAST || req->args.rank == req->args.root;
    /* copies out of other ranks' cells into this rank's RECV: a bcast reader's, and every
     * rank's in allgather and alltoall (the reductions reduce out of the cells instead) */
    bool copies_out = !fills || k == COLL_ALLGATHER || k == COLL_ALLTOALL;
    c->fill = fills ? fill_tune_begin(req) : (fill_way){ cl->stream, false, false, 0 };
    c->out = copies_out ? out_tune_begin(req) : (fill_way){ false, false, FILL_OUT, 0 };
}

void cells_finish(collie_request_t *req, cells_run *c) {
    if (c && c->begun) {
        fill_tune_end(req, &c->fill);
        fill_tune_end(req, &c->out);
    }
}

uint64_t cells_width(uint64_t cell, uint64_t chunk, uint64_t widest) {
    uint64_t width = 1;
    while (width < widest && width * cell < chunk)
        width *= 2;
    return width;
}

/* An allreduce at P = 2 from this size keeps to PAIR_WINDOW cells: its steps (a cell each)
 * wrap back to the call's first cell every second step, so that the lines both ranks
 * write and read in a call stay few (the result goes into the peer's cell: result_to_peer
 * in cells_reduce.c).  Measured (collie-bench --coll allreduce --algo cells, P = 2, 2
 * rounds, µs, the window of 8 against 2 for every call; Intel Xeon VM, 2 MiB L2 per core,
 * 2026-12-05):
 * fresh data 512 KiB 44.2-46.1 -> 39.3-40.7, 1 MiB 121-124 -> 100-102, 2 MiB 270-272 ->
 * 259-264, 4-8 MiB within noise; reused 512 KiB 46-47 -> 39.5-41, 1 MiB 136-137 -> 105-109;
 * but 256 KiB (steps of 64 KiB) 24-26 -> 29-30, and reduce, bcast and allgather no faster
 * or slower with the narrow window (reduce 256 / 512 KiB 15 / 28 -> 24-26 / 31-33), so
 * only this case.  The call then wraps within its window as a long call does (no
 * rotation).  Not measured on an AMD VM. */
#define PAIR_WINDOW 2u
#define PAIR_WINDOW_MIN (512u * 1024u)

static uint32_t call_window(const collie_request_t *req, const collie_cells *cl) {
    bool pair_allreduce = req->args.size == 2 && req->args.coll == COLL_ALLREDUCE;
    return pair_allreduce && req->args.bytes >= PAIR_WINDOW_MIN && cl->window > PAIR_WINDOW
               ? PAIR_WINDOW : cl->window;
}

/* Takes this call's steps (the same on every rank: they all take the same calls). */
static void begin(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    uint64_t elem = req->args.elem_size ? req->args.elem_size : 1;
    bool bcast = req->args.coll == COLL_BCAST;
    uint32_t window = call_window(req, cl);
    /* steps of one cell in a narrowed window (two of them must fit in it) */
    uint64_t widest = bcast || window != cl->window ? 1 : cl->step_cells;
    uint64_t chunk = cells_step_bytes(req->args.bytes, elem, widest * cl->cell_bytes, bcast);
    cells_take_steps(req, c, chunk ? (req->args.bytes + chunk - 1) / chunk : 0, chunk,
                     cells_width(cl->cell_bytes, chunk, widest), window);
}

/* Declared in cells_impl.h. */
step_view cells_view_of(const collie_request_t *req, const cells_run *c, uint64_t k) {
    step_view v;
    v.t = cells_first_number(c, k);
    v.last = cells_last_number(c, k);
    v.off = k * c->chunk;
    v.len = req->args.bytes - v.off < c->chunk ? req->args.bytes - v.off : c->chunk;
    v.count = v.len / req->args.elem_size;
    return v;
}

/* Declared in cells_impl.h. */
void cells_slice_of(const collie_request_t *req, const step_view *v, int q, uint64_t *lo, uint64_t *n) {
    size_t a = pat_seg_start(v->count, req->args.size, q), b = pat_seg_start(v->count, req->args.size, q + 1);
    *lo = a * req->args.elem_size;
    *n = (b - a) * req->args.elem_size;
}

/* Has q's word reached step t?  Else note it as what this rank waits for. */
bool cells_reached(collie_request_t *req, int q, collie_counter *w, uint64_t t) {
    if (atomic_load_explicit(&w->value, memory_order_acquire) >= t)
        return true;
    req->blocked_peer = q;
    req->team->wait_word = &w->value;
    req->team->wait_value = t;
    return false;
}

void cells_publish(collie_request_t *req, collie_counter *w, uint64_t t) {
    collie_transport *tp = req->team->tp;
    atomic_store_explicit(&w->value, t, memory_order_release);
    for (int q = 0; q < req->args.size; q++)
        if (q != req->args.rank)
            collie_wake_later(tp, q);
    req->moves++;
}

/* The cell of q at step t holds this call's data (else the ranks called different things:
 * named from q's board history when it still holds q's call of this number). */
int cells_check_cell(collie_request_t *req, const cells_run *c, int q, uint64_t t) {
    if (*collie_cell_check(req->team->tp->cells, q, t, c->rotate) == req->check)
        return COLLIE_OK;
    collie_call_id theirs;
    if (collie_board_call(req->team->tp, q, req->call_seq, &theirs) && theirs.check != req->check)
        return collie_call_mismatch_req(req, q, "called", &theirs, NULL);
    return collie_fail(COLLIE_ERR_MISMATCH, "%s #%u (%llu bytes, %s): rank %d's copy cell holds "
                       "another call: ranks called different collectives, counts, types or "
                       "algorithms", collie_coll_name(req->args.coll), req->call_seq,
                       (unsigned long long)req->args.bytes, req->algo->name, q);
}

/* Every rank freed step number last − ncells, so this rank may write its cells up to step
 * number `last`.  Numbers skipped before this call (floor, base] were never used: their
 * cells were last used at or before floor.  A number skipped inside an earlier call's laps
 * (cells_first_number) is waited for as the next number that call used: stricter than
 * needed, never waiting on this call. */
int cells_may_write(collie_request_t *req, const cells_run *c, uint64_t last) {
    collie_cells *cl = req->team->tp->cells;
    uint64_t need = last > cl->ncells ? last - cl->ncells : 0;
    if (need > c->floor && need <= c->base)
        need = c->floor;
    if (need <= cl->freed_by_all)
        return COLLIE_OK;
    uint64_t least = UINT64_MAX;
    for (int q = 0; q < req->args.size; q++) {
        if (!cells_reached(req, q, &cl->ctrl[q].freed, need))
            return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
        uint64_t v = atomic_load_explicit(&cl->ctrl[q].freed.value, memory_order_acquire);
        least = v < least ? v : least;
    }
    cl->freed_by_all = least;
    return COLLIE_OK;
}

int cells_all_freed(collie_request_t *req, const cells_run *c) {
    if (!c || !c->begun || !c->nsteps)
        return COLLIE_OK;
    return cells_may_write(req, c, cells_last_number(c, c->nsteps - 1) + req->team->tp->cells->ncells);
}

int cells_wait_in(collie_request_t *req, const cells_run *c, int q, uint64_t first, uint64_t last) {
    if (!cells_reached(req, q, &req->team->tp->cells->ctrl[q].in, last))
        return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    return cells_check_cell(req, c, q, first);
}

/* Declared in cells_impl.h. */
int cells_all_at(collie_request_t *req, const cells_run *c, const step_view *v, bool out) {
    collie_cells *cl = req->team->tp->cells;
    for (int q = 0; q < req->args.size; q++) {
        if (q == req->args.rank)
            continue;
        if (!out) {
            int st = cells_wait_in(req, c, q, v->t, v->last);
            if (st)
                return st;
            continue;
        }
        if (!cells_reached(req, q, &cl->ctrl[q].out, v->last))
            return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
        int st = cells_check_cell(req, c, q, v->t);
        if (st)
            return st;
    }
    return COLLIE_OK;
}

/* ---- bcast ------------------------------------------------------------------------------ */

static int move_bcast(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    int me = req->args.rank, root = req->args.root;
    char *buf = req->buf[SBUF_RECV];
    if (me == root) {
        step_view v = cells_view_of(req, c, c->next_in);
        int st = cells_may_write(req, c, v.last);
        if (st)
            return st;
        collie_cell_fill(c->fill.stream, collie_cell(cl, me, v.t, c->rotate), buf + v.off, v.len);
        *collie_cell_check(cl, me, v.t, c->rotate) = req->check;
        cells_publish(req, &cl->ctrl[me].in, v.last);
        cells_publish(req, &cl->ctrl[me].freed, v.last);
        c->next_in = c->next_out = c->next_in + 1;
        return COLLIE_OK;
    }
    step_view v = cells_view_of(req, c, c->next_out);
    int st = cells_wait_in(req, c, root, v.t, v.last);
    if (st)
        return st;
    collie_cell_read(c->out.stream, buf + v.off, collie_cell(cl, root, v.t, c->rotate), v.len);
    cells_publish(req, &cl->ctrl[me].freed, v.last);
    c->next_out++;
    return COLLIE_OK;
}

/* ---- the engine ------------------------------------------------------------------------- */

static bool done_here(const collie_request_t *req, const cells_run *c) {
    switch (req->args.coll) {
    case COLL_BCAST:
        return c->next_out == c->nsteps;
    case COLL_ALLGATHER:
    case COLL_ALLTOALL:
    case COLL_REDUCE_SCATTER:
        return c->next_out == c->nsteps;
    default:
        return cells_reduction_done(req, c);
    }
}

static int move(collie_request_t *req, cells_run *c) {
    switch (req->args.coll) {
    case COLL_BCAST:
        return move_bcast(req, c);
    case COLL_ALLGATHER:
    case COLL_ALLTOALL:
    case COLL_REDUCE_SCATTER:
        return cells_blocks_move(req, c);
    default:
        return cells_reduction_move(req, c);
    }
}

int cells_progress(collie_request_t *req, cells_run *c) {
    if (!c->begun && cells_moves_blocks(req->args.coll))
        cells_blocks_begin(req, c);
    else if (!c->begun)
        begin(req, c);
    for (;;) {
        if (done_here(req, c))
            return c->lent ? cells_all_freed(req, c) : COLLIE_OK;
        int st = move(req, c);
        if (st != COLLIE_OK)
            return st;
    }
}
