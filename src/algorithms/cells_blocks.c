/*
 * cells_blocks.c — allgather (and allgatherv), alltoall and reduce_scatter through the copy
 * cells (the engine's loop, words and checks: cells.c; the algorithms' files:
 * allgather/cells.c, alltoall/cells.c, reduce_scatter/cells.c).
 *
 * Every block goes in steps of `chunk` bytes; step k carries bytes [k·chunk, (k+1)·chunk)
 * of every block, so all ranks take the same steps (allgatherv: as many as its longest
 * block needs; a rank whose block is shorter publishes empty steps).
 *   allgather: at step k rank r copies chunk k of its own block into its cell (and into
 *     its own RECV block unless in place), publishes `in`; then, once every other rank q
 *     published step k, copies q's chunk from q's cell into RECV block q and publishes
 *     `freed`.  One copy in, P − 1 out.
 *   alltoall: the cell is cut into P − 1 parts of `chunk` bytes, one per peer (the part
 *     for q at index (q − r − 1) mod P: no part for r itself); at step k rank r copies
 *     chunk k of its SEND block for q into q's part of its cell for every q ≠ r, publishes
 *     `in`; then copies its part of every other rank's cell into its RECV block q.  In place is
 *     safe: chunk k of block q is copied into the cell (step k's copy-in) before chunk k
 *     of block q is overwritten (step k's copy-out), and no other step touches it.
 *   reduce_scatter: copy-in as alltoall's (chunk k of input block q into q's part); then,
 *     once every other rank published step k, rank r reduces chunk k of its block from its
 *     own input and its part of every other rank's cell, in rank order, into its RECV, and
 *     publishes `freed`.  Each result element is reduced once, on the rank that owns it.
 *     In place (block form only) the result's chunk k overlays input block 0's chunk k,
 *     which step k copied into the cell before (on rank 0 it is its own block: each
 *     element is read, then written); later steps read only later chunks, which lie
 *     beyond it, because a chunk is at most a block.
 * A rank fills its cell of step t only when every rank freed the step that used the cell
 * before, and copies out step k only once every peer published it, so up to window / width
 * steps are in flight (width: the cells per step, 1 but at P = 2).
 *
 * Steps: as cells_step_bytes gives them, but at P = 2 a whole block per step, up to
 * step_cells adjacent cells (a wide step, as cells.c's reductions take: 512 KiB with the
 * default cells).  Both ranks copy in and out at once there, so smaller steps overlap nothing
 * that was not already overlapping, and each step costs a flag's trip between the cores.
 * Measured (2026-11-27, AMD EPYC VM, bench/allgather_floor, 128 KiB blocks, reused): one
 * step 4.77 us per call, two 5.47, four 5.58; collie's allgather 128 KiB through the cells
 * in the slow state (200-230 ns line trips) 8.5-9.2 us against 9.1-11.6 in two steps.
 * alltoall's parts were a P-th of the cell (half unused at P = 2: 64 KiB steps); at
 * 512 KiB it took 28-31 us against allgather's 23-27 and Intel MPI's 24.5-26.  A block
 * larger than a cell goes in one step over adjacent cells (2026-11-28, fast state,
 * `collie-bench --coll allgather|alltoall --barrier-each [--fresh-data]`, 3 rounds
 * interleaved with COLLIE_SHM_CELLS_PER_STEP=1): allgather 512 KiB 25.2-25.7 us reused,
 * 22.7-23.5 fresh against 26.8-27.7 / 26.3-27.6 in 128 KiB steps, 2 MiB 96-98 against
 * 103-109; alltoall 512 KiB 27-29 against 30-31, 2 MiB 106-119 against 122-136.
 */
#include <string.h>

#include "algorithms/cells_impl.h"
#include "types/types.h"

/* alltoall: the parts of a cell, one per peer (a team of one moves nothing). */
static uint64_t parts_of(const collie_coll_args *a) { return a->size > 1 ? (uint64_t)a->size - 1 : 1; }

/* alltoall and reduce_scatter cut the cell into a part per peer; allgather does not. */
static bool has_parts(const collie_coll_args *a) { return a->coll != COLL_ALLGATHER; }

bool cells_blocks_accepts(const collie_coll_args *a, const char **why) {
    uint64_t part = a->cell_bytes;
    if (a->coll == COLL_ALLTOALL && a->v) {
        *why = "alltoallv: a rank knows only its own counts, so the ranks cannot agree on steps";
        return false;
    }
    /* Its v form in place cannot take the cells (the result could overlay input that a
     * later step copies), and in place is each rank's own choice: declining only where it
     * is in place made the ranks of one call pick different algorithms (a mismatch) or,
     * under `direct`, different ways (a hang).  So the v form declines on every rank. */
    if (a->coll == COLL_REDUCE_SCATTER && a->v) {
        *why = "reduce_scatter with per-rank counts: in place (any rank's own choice) the "
               "result could overlay input that a later step copies";
        return false;
    }
    if (has_parts(a))
        part = a->cell_bytes / parts_of(a);
    if (a->elem_size > part) {
        *why = has_parts(a) ? "elements larger than a copy cell's part per peer "
                              "(COLLIE_SHM_CELL_BYTES / (team size - 1))"
                            : "elements larger than a copy cell (COLLIE_SHM_CELL_BYTES)";
        return false;
    }
    return true;
}

/* The longest block of the call (the same on every rank). */
static uint64_t longest_block(const collie_coll_args *a) {
    uint64_t most = 0, off, len;
    int buf = a->coll == COLL_REDUCE_SCATTER ? SBUF_SEND : SBUF_RECV;
    if (a->coll == COLL_ALLTOALL)
        return a->bytes;
    for (int q = 0; q < a->size; q++)
        if (collie_coll_block(a, buf, q, &off, &len) && len > most)
            most = len;
    return most;
}

void cells_blocks_begin(collie_request_t *req, cells_run *c) {
    const collie_coll_args *a = &req->args;
    uint64_t elem = a->elem_size ? a->elem_size : 1, cell = req->team->tp->cells->cell_bytes;
    uint64_t most = longest_block(a);
    if (has_parts(a))
        cell = cell / parts_of(a) / elem * elem;
    uint64_t chunk = cells_step_bytes(most, elem, cell, false), width = 1;
    if (a->size == 2 && most > chunk) {
        /* P = 2: the whole block in one step, over up to step_cells adjacent cells (of
         * `cell` bytes each: alltoall's part of one) */
        uint64_t widest = req->team->tp->cells->step_cells, span = widest * cell;
        chunk = (most < span ? most : span) / elem * elem;
        width = cells_width(cell, chunk, widest);
    }
    cells_take_steps(req, c, chunk ? (most + chunk - 1) / chunk : 0, chunk, width,
                     req->team->tp->cells->window);
    cells_lend_begin(req, c);
}

/* Bytes [*at, *at + *n) of a block of `len` bytes at step k (*n 0: nothing left). */
static void piece(const cells_run *c, uint64_t k, uint64_t len, uint64_t *at, uint64_t *n) {
    *at = k * c->chunk;
    *n = *at >= len ? 0 : len - *at < c->chunk ? len - *at : c->chunk;
}

/* allgather: this rank's chunk k into its cell. */
static void fill_allgather(collie_request_t *req, const cells_run *c, char *cell) {
    uint64_t len, at, n;
    sched_ref own = collie_coll_own_block(&req->args, &len);
    piece(c, c->next_in, len, &at, &n);
    if (n)
        collie_cell_fill(c->fill.stream, cell, (const char *)req->buf[own.buf] + own.off + at, n);
}

/* alltoall, reduce_scatter: where the part for rank q is in rank r's cell. */
static uint64_t part_of(const collie_coll_args *a, const cells_run *c, int r, int q) {
    return (uint64_t)((q - r - 1 + a->size) % a->size) * c->chunk;
}

/* alltoall, reduce_scatter: chunk k of the input block for every q ≠ rank into q's part
 * of the cell. */
static void fill_alltoall(collie_request_t *req, const cells_run *c, char *cell) {
    const collie_coll_args *a = &req->args;
    uint64_t off, len, at, n;
    for (int q = 0; q < a->size; q++) {
        collie_coll_block(a, SBUF_SEND, q, &off, &len);
        piece(c, c->next_in, len, &at, &n);
        if (n && q != a->rank)
            collie_cell_fill(c->fill.stream, cell + part_of(a, c, a->rank, q),
                             (const char *)req->buf[SBUF_SEND] + off + at, n);
    }
}

/* Chunk k of the own block into the own RECV block (not in place), after the cell is
 * published: the peers copy out meanwhile. */
static void copy_own(collie_request_t *req, const cells_run *c) {
    const collie_coll_args *a = &req->args;
    uint64_t soff = 0, len, at, n, roff, rlen;
    if (a->in_place || a->coll == COLL_REDUCE_SCATTER)
        return;
    if (a->coll == COLL_ALLTOALL)
        collie_coll_block(a, SBUF_SEND, a->rank, &soff, &len);
    else
        collie_coll_own_block(a, &len);
    piece(c, c->next_in, len, &at, &n);
    collie_coll_block(a, SBUF_RECV, a->rank, &roff, &rlen);
    if (n)
        memcpy((char *)req->buf[SBUF_RECV] + roff + at, (const char *)req->buf[SBUF_SEND] + soff + at, n);
}

static int copy_in(collie_request_t *req, cells_run *c) {
    collie_cells *cl = req->team->tp->cells;
    int me = req->args.rank;
    uint64_t t = cells_first_number(c, c->next_in);
    int st = cells_may_write(req, c, cells_last_number(c, c->next_in));
    if (st)
        return st;
    char *cell = collie_cell(cl, me, t, c->rotate);
    /* lent: the peers copy this step's chunks from this rank's memory instead */
    if (!c->lent && req->args.coll == COLL_ALLGATHER)
        fill_allgather(req, c, cell);
    else if (!c->lent)
        fill_alltoall(req, c, cell);   /* and reduce_scatter's */
    *collie_cell_check(cl, me, t, c->rotate) = req->check;
    cells_publish(req, &cl->ctrl[me].in, cells_last_number(c, c->next_in));
    copy_own(req, c);
    c->next_in++;
    return COLLIE_OK;
}

/* Step t of every other rank (from rank + 1 on) into this rank's RECV blocks: out of its
 * cell, or from its memory where it lent its data (cells_in_place.c). */
static int copy_out(collie_request_t *req, cells_run *c, uint64_t t) {
    collie_cells *cl = req->team->tp->cells;
    const collie_coll_args *a = &req->args;
    int P = a->size, me = a->rank;
    uint64_t off, len, at, n;
    for (int i = 1; i < P; i++) {
        int q = (me + i) % P;
        uint64_t part = has_parts(a) ? part_of(a, c, q, me) : 0;
        collie_coll_block(a, SBUF_RECV, q, &off, &len);
        piece(c, c->next_out, len, &at, &n);
        if (!n)
            continue;
        char *dst = (char *)req->buf[SBUF_RECV] + off + at;
        bool done;
        uint64_t from = (a->coll == COLL_ALLTOALL ? (uint64_t)me * a->bytes : 0) + at;
        int st = cells_lent_fetch(req, c, q, from, dst, len - at, &done);
        if (st)
            return st;
        if (!done)
            collie_cell_read(c->out.stream, dst, collie_cell(cl, q, t, c->rotate) + part, n);
    }
    return COLLIE_OK;
}

/* reduce_scatter: the chunk of this rank's block at step t, from its input and its part
 * of every other rank's cell (or the lender's input), reduced in rank order into RECV. */
static int reduce_out(collie_request_t *req, cells_run *c, uint64_t t) {
    collie_cells *cl = req->team->tp->cells;
    const collie_coll_args *a = &req->args;
    int P = a->size, me = a->rank;
    uint64_t off, len, at, n;
    collie_coll_block(a, SBUF_SEND, me, &off, &len);
    piece(c, c->next_out, len, &at, &n);
    if (!n)
        return COLLIE_OK;
    for (int q = 0; q < P; q++) {
        int st = COLLIE_OK;
        const char *lent = q == me ? NULL : cells_lent_source(req, c, q, off + at, n, &st);
        if (st)
            return st;
        c->srcs[q] = q == me ? (const char *)req->buf[SBUF_SEND] + off + at
                   : lent ? lent : collie_cell(cl, q, t, c->rotate) + part_of(a, c, q, me);
    }
    return collie_reduce_n((char *)req->buf[SBUF_RECV] + at, c->srcs, P, n / a->elem_size,
                           req->dtype, req->op);
}

/* Step next_out, once every other rank published it: copied out (reduce_scatter:
 * reduced), then freed. */
static int take_out(collie_request_t *req, cells_run *c) {
    int P = req->args.size, me = req->args.rank;
    uint64_t t = cells_first_number(c, c->next_out), last = cells_last_number(c, c->next_out);
    for (int i = 1; i < P; i++) {
        int st = cells_wait_in(req, c, (me + i) % P, t, last);
        if (st)
            return st;
    }
    if (req->args.coll == COLL_REDUCE_SCATTER) {
        int st = reduce_out(req, c, t);
        if (st)
            return st;
    } else {
        int st = copy_out(req, c, t);
        if (st)
            return st;
    }
    cells_publish(req, &req->team->tp->cells->ctrl[me].freed, last);
    c->next_out++;
    return COLLIE_OK;
}

/* Copy-out (reduce_scatter: the reduction) of the oldest step in flight if it can go,
 * else copy-in of the next. */
int cells_blocks_move(collie_request_t *req, cells_run *c) {
    int st = COLLIE_TIMEOUT;
    if (c->next_out < c->next_in && (st = take_out(req, c)) != COLLIE_TIMEOUT)
        return st;
    if (c->next_in < c->nsteps && c->next_in < c->next_out + c->lap)
        st = copy_in(req, c);
    return st;
}
