/*
 * direct_colls.c — the driver of allgather, reduce_scatter and alltoall `direct` (their
 * files in allgather/, reduce_scatter/ and alltoall/ hold the references, cost and the
 * schedule the verifier and the simulator see).
 *
 * Protocol (the board's words and checks: direct_board.c): every rank posts the memory
 *   its peers read — allgather its own block, reduce_scatter and alltoall its input — and
 *   waits until every rank posted the same call.  Then each rank reads what it needs
 *   straight into its own output: allgather block q from rank q, alltoall block r of rank
 *   q's input, reduce_scatter its block r of all P inputs, chunk by chunk, reduced in rank
 *   order (one reduction per result element, on the rank that owns it).  No rank writes
 *   another rank's memory.  It then marks itself done and waits until every rank is done
 *   (nobody reads its input any more).  In place it stages what would overwrite memory
 *   that peers still read and moves it into place after that wait: alltoall the incoming
 *   blocks, reduce_scatter on ranks > 0 the result (which overlays block 0 … of the input;
 *   rank 0's result is its own block 0, read by no one else, so it is written in place).
 * Access: a peer's posted memory is mapped when it lies in collie_alloc memory (or the
 *   shared heap), else read with process_vm_readv (direct_read; reduce_scatter through a
 *   chunk of scratch per peer).  A call in which some rank's posted memory is not
 *   registered and that moves at most collie_cells.slots_max bytes (COLLIE_SHM_SLOTS_MAX,
 *   counted over all blocks) runs the algorithm's schedule (flat's) through the slots
 *   instead, after the post, as direct_access.c does, when rank 0 chose that way for
 *   the call's size from timed calls (core/path_tune.c, its choice posted on the board),
 *   or else when its blocks have fewer than COLLIE_SHM_KERNEL_MIN bytes in all.  Every
 *   rank decides the same from the board.  The schedule then stays in user space (it is
 *   the other way).  allgather, alltoall and reduce_scatter (block forms) take the copy
 *   cells as that way when the shm transport has them (cells_blocks.c; an alltoall of
 *   blocks below 1 MiB has both, the slots and the cells, among its decider's ways:
 *   three_ways): a rank's data is
 *   copied once into its cells and once out (reduce_scatter: reduced out), in chunks up to
 *   a cell, with no system call and no message per 16 KiB slot; their steps need no `done`
 *   (every rank read the board before it publishes its first step, and a rank finishes
 *   only after every peer's last one).
 */
#include <stdlib.h>
#include <string.h>

#include "algorithms/cells.h"
#include "algorithms/direct_access.h"
#include "base/base.h"
#include "core/fill_tune.h"
#include "core/internal.h"
#include "core/path_tune.h"
#include "types/types.h"

#define CHUNK_TARGET (64u * 1024u)

enum phase { POST = 0, WAIT_READY, SLOTS, CELLS, WAIT_DONE, FINISHED };

typedef struct colls_state {
    int phase;
    bool read_direct;           /* this call read peers' memory (not the slots) */
    bool had_choice;            /* rank 0 chose the way of this call (path_tune.c) */
    bool all_mapped;            /* ... for memory that is all mapped */
    int path;                   /* ... PATH_USER (the slots or cells), PATH_KERNEL, or with
                                   all mapped PATH_MAPPED or PATH_CELLS */
    uint64_t posted_ns;         /* rank 0, timing the call */
    uint64_t total;             /* bytes of all blocks (the same on every rank) */
    uint64_t chunk;             /* reduce_scatter: bytes per chunk, an element multiple */
    cells_run *cells;           /* allgather, alltoall: the copy cells' engine, or NULL */
    fill_way mapped_out;        /* allgather, alltoall: how blocks are copied out of mapped
                                   peers' buffers (memcpy or streaming stores, fill_tune.c) */
    const char **view;          /* [size]: peer q's posted memory, mapped, or NULL */
    const void **srcs;          /* [size]: reduce_scatter's sources of one chunk */
    char *scratch;              /* reduce_scatter: [size][chunk] read from unmapped peers */
    char *stage_alloc;          /* in place, when TMP is too small: the staging memory */
    uint64_t stage_bytes;
} colls_state;

/* Bytes of all blocks of the call (allgather: every rank's block; reduce_scatter and
 * alltoall: this rank's input), the same on every rank: the v forms served here have the
 * same counts everywhere. */
static uint64_t call_total(const collie_coll_args *a) {
    int buf = a->coll == COLL_ALLGATHER ? SBUF_RECV : SBUF_SEND;
    uint64_t total = 0, off, len;
    for (int j = 0; j < a->size; j++)
        if (collie_coll_block(a, buf, j, &off, &len))
            total += len;
    return total;
}

/* Bytes of the memory rank q posts for its peers to read. */
static uint64_t peer_in_len(const collie_coll_args *a, int q) {
    uint64_t off, len;
    if (a->coll != COLL_ALLGATHER)
        return call_total(a);
    collie_coll_block(a, SBUF_RECV, q, &off, &len);
    return len;
}

/* In place, the memory staged until every rank is done: alltoall the RECV extent (the
 * incoming blocks at their RECV offsets), reduce_scatter on ranks > 0 the result. */
static uint64_t stage_need(const collie_coll_args *a) {
    uint64_t send, recv, off, len;
    if (!a->in_place || a->coll == COLL_ALLGATHER)
        return 0;
    if (a->coll == COLL_ALLTOALL) {
        collie_coll_buffer_bytes(a, a->rank, &send, &recv);
        return recv;
    }
    collie_coll_block(a, SBUF_SEND, a->rank, &off, &len);
    return a->rank ? len : 0;
}

static char *stage_of(collie_request_t *req, const colls_state *d) {
    return d->stage_alloc ? d->stage_alloc : req->buf[SBUF_TMP];
}

static int driver_prepare(collie_request_t *req) {
    const collie_coll_args *a = &req->args;
    int P = a->size;
    uint64_t elem = a->elem_size ? a->elem_size : 1;
    colls_state *d = calloc(1, sizeof *d);
    req->algo_state = d;
    if (!d)
        return collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory for %s direct", a->rank,
                           collie_coll_name(a->coll));
    d->total = call_total(a);
    d->chunk = CHUNK_TARGET / elem * elem;
    if (d->chunk == 0)
        d->chunk = elem;           /* elements larger than a chunk: one at a time */
    d->stage_bytes = stage_need(a);
    d->view = calloc((size_t)P, sizeof *d->view);
    bool red = a->coll == COLL_REDUCE_SCATTER;
    d->srcs = red ? calloc((size_t)P, sizeof *d->srcs) : NULL;
    d->scratch = red ? malloc((size_t)P * d->chunk) : NULL;
    if (d->stage_bytes > req->sched.tmp_bytes)
        d->stage_alloc = malloc(d->stage_bytes);
    const char *why = NULL;
    bool cells = cells_accepts(a, &why);
    d->cells = cells ? cells_new(req) : NULL;
    if (!d->view || (red && (!d->srcs || !d->scratch)) || (cells && !d->cells) ||
        (d->stage_bytes > req->sched.tmp_bytes && !d->stage_alloc))
        return collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory for %s direct (%d chunks of "
                           "%llu bytes, %llu staged)", a->rank, collie_coll_name(a->coll), P,
                           (unsigned long long)d->chunk, (unsigned long long)d->stage_bytes);
    collie_exec_user_space_only(req);   /* the schedule is the user-space way */
    return COLLIE_OK;
}

static void driver_start(collie_request_t *req) {
    colls_state *d = req->algo_state;
    d->phase = POST;
    d->read_direct = false;
    d->had_choice = false;
    d->mapped_out = (fill_way){ 0 };
    if (d->cells)
        cells_reset(d->cells);
}

/* alltoall of blocks below this with the copy cells: the decider times flat's schedule
 * through the slots (PATH_USER) as a third way beside the kernel copy and the cells.
 * Measured (2026-12-04, Intel Xeon VM, collie-bench --coll alltoall --algo all
 * --barrier-each [--fresh-data], malloc buffers, µs): at P = 4, 128 KiB blocks, `direct`
 * (its kernel copy) 58-63 reused against flat's 80-83 but 90-93 fresh against 88; at
 * P = 3, 64 KiB, 16-17 reused against 18 but 25-26 fresh against 20; the cells lost to
 * flat at both.  Which way wins depends on whether the program rewrites its input before
 * each call, which only timing the program's own calls can tell. */
#define SLOTS_TRIAL_BLOCK_MAX (1u << 20)

/* Does the decider time the slots, the kernel copy and the cells (above)?  The same
 * answer on every rank. */
static bool three_ways(const collie_request_t *req, const colls_state *d) {
    return req->args.coll == COLL_ALLTOALL && d->cells && req->args.bytes < SLOTS_TRIAL_BLOCK_MAX;
}

/* Posts what peers read of this rank: allgather its own block, else its input; rank 0
 * posts its choice of way with it and times the call. */
static void post(collie_request_t *req, colls_state *d) {
    const collie_coll_args *a = &req->args;
    if (path_tune_on(req) && a->rank == path_tune_decider(req)) {
        collie_board_entry *e = &req->team->tp->board[a->rank];
        e->path = path_tune_pick(req, three_ways(req, d));
        e->mapped_path = path_tune_pick_mapped(req);
        d->posted_ns = collie_now_ns();
    }
    uint64_t send, recv, len;
    collie_coll_buffer_bytes(a, a->rank, &send, &recv);
    const char *in = req->buf[SBUF_SEND];
    if (a->coll == COLL_ALLGATHER) {
        sched_ref own = collie_coll_own_block(a, &len);
        in = (const char *)req->buf[own.buf] + own.off;
        send = len;
    }
    direct_post(req, in, send, req->buf[SBUF_RECV], recv);
}

/* Does some rank read through the kernel (its posted memory is not registered)?  And is
 * the slots' way the one chosen for such calls then?  With all memory mapped, from
 * PATH_MAPPED_TRIAL_MIN bytes per block, has rank 0 chosen the copy cells instead?  The
 * same answer on every rank. */
static bool use_slots(const collie_request_t *req, colls_state *d) {
    const collie_transport *tp = req->team->tp;
    bool unmapped = false;
    for (int q = 0; q < req->args.size; q++)
        if (peer_in_len(&req->args, q) && tp->board[q].send_ref.fd < 0)
            unmapped = true;
    if (!tp->cells || (!unmapped && !(d->cells && path_tune_mapped_trial(req))))
        return false;
    if (!path_tune_on(req))
        return d->total < tp->cells->kernel_min;
    const collie_board_entry *e = &tp->board[path_tune_decider(req)];
    d->had_choice = true;
    d->all_mapped = !unmapped;
    d->path = unmapped ? e->path : e->mapped_path;
    return d->path == PATH_USER || d->path == PATH_CELLS;
}

/* Maps the peers' posted memory where it can be; true if it mapped any. */
static bool map_peers(collie_request_t *req, colls_state *d) {
    collie_transport *tp = req->team->tp;
    bool any = false;
    for (int q = 0; q < req->args.size; q++) {
        const collie_board_entry *e = &tp->board[q];
        uint64_t len = peer_in_len(&req->args, q);
        d->view[q] = q == req->args.rank || !len ? NULL
                   : collie_map_peer(tp, q, e->pid, &e->send_ref, len);
        any = any || d->view[q];
    }
    return any;
}

/* len bytes at offset `from` of q's posted memory into dst: mapped (memcpy or streaming
 * stores, as mapped_out_tune_begin chose for the call), or the kernel copy. */
static int fetch(collie_request_t *req, const colls_state *d, int q, uint64_t from, char *dst,
                 uint64_t len) {
    if (d->view[q]) {
        collie_cell_read(d->mapped_out.stream, dst, d->view[q] + from, len);
        return COLLIE_OK;
    }
    return direct_read(req, q, req->team->tp->board[q].send_addr + from, dst, len);
}

/* allgather, alltoall: every peer's block for this rank, into RECV (alltoall in place: the
 * stage), starting at rank + 1; the own block by a local copy unless in place, with
 * streaming stores from collie_transport.stream_own_min (4 MiB) or when the copies out of
 * mapped peers stream (measured: transport/shm_cells.c, collie_shm_stream_own_min). */
static int read_blocks(collie_request_t *req, colls_state *d) {
    const collie_coll_args *a = &req->args;
    int P = a->size, me = a->rank;
    bool a2a = a->coll == COLL_ALLTOALL;
    char *into = a2a && a->in_place ? stage_of(req, d) : req->buf[SBUF_RECV];
    uint64_t off, len;
    for (int i = 1; i < P; i++) {
        int q = (me + i) % P;
        collie_coll_block(a, SBUF_RECV, q, &off, &len);
        int st = len ? fetch(req, d, q, a2a ? (uint64_t)me * a->bytes : 0, into + off, len) : COLLIE_OK;
        if (st)
            return st;
    }
    collie_coll_block(a, SBUF_RECV, me, &off, &len);
    bool stream = len >= req->team->tp->stream_own_min || d->mapped_out.stream;
    if (!a->in_place && len)
        collie_cell_fill(stream, (char *)req->buf[SBUF_RECV] + off,
                         (const char *)req->buf[SBUF_SEND] + (a2a ? (uint64_t)me * a->bytes : 0), len);
    return COLLIE_OK;
}

/* reduce_scatter: block `me` of all P inputs, chunk by chunk, reduced in rank order into
 * RECV (in place on ranks > 0: into the stage). */
static int reduce_own_block(collie_request_t *req, colls_state *d) {
    const collie_coll_args *a = &req->args;
    int P = a->size, me = a->rank;
    uint64_t off, len;
    collie_coll_block(a, SBUF_SEND, me, &off, &len);
    char *out = d->stage_bytes ? stage_of(req, d) : req->buf[SBUF_RECV];
    for (uint64_t at = 0; at < len; at += d->chunk) {
        uint64_t n = len - at < d->chunk ? len - at : d->chunk;
        for (int q = 0; q < P; q++) {
            char *into = d->scratch + (size_t)q * d->chunk;
            int st = q == me || d->view[q] ? COLLIE_OK : fetch(req, d, q, off + at, into, n);
            if (st)
                return st;
            d->srcs[q] = q == me ? (const char *)req->buf[SBUF_SEND] + off + at
                       : d->view[q] ? d->view[q] + off + at : into;
        }
        int st = collie_reduce_n(out + at, d->srcs, P, n / a->elem_size, req->dtype, req->op);
        if (st)
            return st;
    }
    return COLLIE_OK;
}

/* Once every rank posted: the slots, or this rank's reads, then done. */
static int leave_ready(collie_request_t *req, colls_state *d) {
    int st;
    if ((st = direct_all_reached(req, true)) != COLLIE_OK || (st = direct_check_calls(req)) != COLLIE_OK)
        return st;
    if (use_slots(req, d)) {
        bool slots = !d->cells || (d->had_choice && !d->all_mapped && d->path == PATH_USER &&
                                   three_ways(req, d));
        d->phase = slots ? SLOTS : CELLS;
        if (d->phase == SLOTS)
            direct_mark_done(req);
        return COLLIE_OK;
    }
    if (map_peers(req, d) && req->args.coll != COLL_REDUCE_SCATTER)
        d->mapped_out = mapped_out_tune_begin(req);
    st = req->args.coll == COLL_REDUCE_SCATTER ? reduce_own_block(req, d) : read_blocks(req, d);
    if (st)
        return st;
    direct_mark_done(req);
    d->read_direct = true;
    d->phase = WAIT_DONE;
    return COLLIE_OK;
}

/* In place, once nobody reads this rank's memory: the staged bytes into RECV. */
static void unstage(collie_request_t *req, colls_state *d) {
    const collie_coll_args *a = &req->args;
    if (!d->read_direct || !d->stage_bytes)
        return;
    char *recv = req->buf[SBUF_RECV];
    const char *stage = stage_of(req, d);
    uint64_t off, len;
    if (a->coll == COLL_REDUCE_SCATTER) {
        memcpy(recv, stage, d->stage_bytes);
        return;
    }
    for (int q = 0; q < a->size; q++) {
        collie_coll_block(a, SBUF_RECV, q, &off, &len);
        if (q != a->rank && len)
            memcpy(recv + off, stage + off, len);
    }
}

/* The call is over on this rank: the decider records its time for the way it took. */
static void finish(collie_request_t *req, colls_state *d) {
    d->phase = FINISHED;
    cells_finish(req, d->cells);
    fill_tune_end(req, &d->mapped_out);
    if (d->had_choice && req->args.rank == path_tune_decider(req)) {
        uint64_t ns = collie_now_ns() - d->posted_ns;
        if (d->all_mapped)
            path_tune_record_mapped(req, d->path, ns);
        else
            path_tune_record(req, d->path, ns);
    }
    d->had_choice = false;
}

static int driver_progress(collie_request_t *req) {
    colls_state *d = req->algo_state;
    int st;
    if (req->args.size == 1 || d->total == 0)
        return collie_exec_progress(req);
    if (d->phase == POST) {
        post(req, d);
        d->phase = WAIT_READY;
        req->moves++;
    }
    if (d->phase == WAIT_READY && (st = leave_ready(req, d)) != COLLIE_OK)
        return st;
    if (d->phase == SLOTS) {
        if ((st = collie_exec_progress(req)) != COLLIE_OK)
            return st;
        if (d->had_choice && path_tune_timed(req, d->all_mapped) &&
            (st = collie_exec_sends_consumed(req)) != COLLIE_OK)
            return st;
        d->phase = WAIT_DONE;
    }
    if (d->phase == CELLS) {
        if ((st = cells_progress(req, d->cells)) != COLLIE_OK)
            return st;
        /* a timed call waits for all, as the other ways do (cells_all_freed) */
        if (d->had_choice && path_tune_timed(req, d->all_mapped) &&
            (st = cells_all_freed(req, d->cells)) != COLLIE_OK)
            return st;
        finish(req, d);
    }
    if (d->phase == WAIT_DONE) {
        if ((st = direct_all_reached(req, false)) != COLLIE_OK)
            return st;
        unstage(req, d);
        finish(req, d);
    }
    return COLLIE_OK;
}

static void driver_release(collie_request_t *req) {
    colls_state *d = req->algo_state;
    if (d) {
        free(d->view);
        free(d->srcs);
        free(d->scratch);
        free(d->stage_alloc);
        cells_free(d->cells);
        free(d);
    }
    req->algo_state = NULL;
}

const collie_algo_driver collie_direct_colls_driver = {
    driver_prepare, driver_start, driver_progress, NULL, driver_release,
};
