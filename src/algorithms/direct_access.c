/*
 * direct_access.c — the driver of allreduce and reduce `direct_segments` and bcast
 * `direct_copy` (their files in allreduce/, reduce/ and bcast/ hold the references, cost
 * and the schedule the verifier and the simulator see).
 *
 * Protocol: a rank posts its buffers' addresses on the team's board (transport.h) and
 *   waits until every rank posted the same call; it reduces its segment chunk by chunk
 *   (each chunk read from all P inputs, in rank order, then written to every output —
 *   all P for allreduce, the root's for reduce — so in place is safe: only this rank
 *   touches this segment anywhere); then it marks itself done and waits until every rank
 *   is done (its own output is complete and no one reads its input any more).
 *   bcast: a non-root waits only for the root's post, copies the root's buffer into its
 *   own and marks itself done; the root waits until every rank is done.
 * Access: a peer's buffer in collie_alloc memory is mapped (loads and stores), at any size.
 *   When a buffer the call reads or writes is not (it is malloc'd), the call goes through
 *   the copy cells (cells.c) instead, unless rank 0's start-up measurement found the kernel
 *   copy faster at this size (collie_cells.kernel_min, shm_cells.c): then such buffers are
 *   read with process_vm_readv into a chunk of scratch and written with
 *   process_vm_writev.  All ranks decide the same from the board (the posted buffers'
 *   registrations) and the segment's header.  A failed transfer is COLLIE_ERR_PEER naming
 *   the rank.  Through the cells, allreduce and reduce need no `done` (no rank reads
 *   another's buffers; a rank finishes only after every rank read the board); bcast keeps
 *   it, so the root does not post its next call before every rank read this one.
 *   Calls of at most collie_cells.slots_max bytes (COLLIE_SHM_SLOTS_MAX) that would take
 *   the cells run the algorithm's schedule through the slots instead (use_slots).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "algorithms/cells.h"
#include "algorithms/direct_access.h"
#include "algorithms/patterns.h"
#include "base/base.h"
#include "core/internal.h"
#include "types/types.h"

#define CHUNK_TARGET (64u * 1024u)

direct_segment direct_seg_of(const collie_coll_args *a, int q) {
    size_t lo = pat_seg_start(a->count, a->size, q), hi = pat_seg_start(a->count, a->size, q + 1);
    direct_segment s = { lo * a->elem_size, (hi - lo) * a->elem_size };
    return s;
}

bool direct_segments_accepts(const collie_coll_args *a, const char **why) {
    if (a->size > SCHED_MAX_SOURCES) {
        *why = "more than 255 ranks";
        return false;
    }
    return true;
}

/* ---- the schedules the verifier and the simulator see ----------------------------------- */

direct_segment direct_schedule_reduce_scatter(collie_schedule *s, const collie_coll_args *a,
                                              bool into_tmp) {
    int P = a->size, me = a->rank;
    direct_segment mine = direct_seg_of(a, me);
    sched_round_begin(s);
    for (int i = 1; i < P; i++) {
        direct_segment sq = direct_seg_of(a, (me + i) % P);
        if (sq.bytes)
            sched_put(s, (me + i) % P, sched_at(SBUF_SEND, sq.off), sq.bytes);
    }
    sched_ref srcs[SCHED_MAX_SOURCES];
    for (int q = 0; q < P; q++)
        srcs[q] = q == me ? sched_at(SBUF_SEND, mine.off) : sched_in(q);
    if (mine.bytes) {
        if (into_tmp)
            sched_need_tmp(s, mine.bytes);
        sched_round_begin(s);
        sched_reduce(s, into_tmp ? sched_at(SBUF_TMP, 0) : sched_at(SBUF_RECV, mine.off), srcs,
                     P, mine.bytes);
    }
    return mine;
}

/* ---- the driver ------------------------------------------------------------------------ */

enum phase { POST = 0, WAIT_READY, WAIT_DONE, CELLS, SLOTS };

typedef struct peer_view {
    const char *in;             /* mapped input (segment reads), or NULL: process_vm_readv */
    char *out;                  /* mapped output, or NULL: process_vm_writev */
} peer_view;

typedef struct direct_state {
    int phase;
    uint64_t chunk;             /* bytes per chunk, an element multiple */
    peer_view *view;            /* [size] */
    const void **srcs;          /* [size] */
    char *scratch;              /* [size][chunk]: chunks read from unmapped inputs */
    char *out_scratch;          /* [chunk]: a reduced chunk for an unmapped reduce root */
    cells_run *cells;           /* the copy-cell engine (with copy cells) */
    bool via_cells;             /* this call goes through them */
} direct_state;

static int driver_prepare(collie_request_t *req) {
    int P = req->args.size;
    direct_state *d = calloc(1, sizeof *d);
    uint64_t elem = req->args.elem_size ? req->args.elem_size : 1;
    if (d) {
        d->chunk = CHUNK_TARGET / elem * elem;
        if (d->chunk == 0)
            d->chunk = elem;           /* elements larger than a chunk: one at a time */
        d->view = calloc((size_t)P, sizeof *d->view);
        d->srcs = calloc((size_t)P, sizeof *d->srcs);
        d->scratch = malloc((size_t)(P + 1) * d->chunk);
        d->out_scratch = d->scratch ? d->scratch + (size_t)P * d->chunk : NULL;
    }
    if (d && req->team->tp->cells)
        d->cells = cells_new(req);
    req->algo_state = d;
    if (!d || !d->view || !d->srcs || !d->scratch || (req->team->tp->cells && !d->cells))
        return collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory for direct_segments (%d chunks "
                           "of %llu bytes)", req->args.rank, P, (unsigned long long)(d ? d->chunk : 0));
    return COLLIE_OK;
}

static void driver_start(collie_request_t *req) {
    direct_state *d = req->algo_state;
    d->phase = POST;
    d->via_cells = false;
    if (d->cells)
        cells_reset(d->cells);
}

static void post(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    collie_board_entry *e = &tp->board[req->args.rank];
    e->check = req->check;
    e->pid = (int32_t)getpid();
    e->send_addr = (uint64_t)(uintptr_t)req->buf[SBUF_SEND];
    e->recv_addr = (uint64_t)(uintptr_t)req->buf[SBUF_RECV];
    collie_find_ref(tp, req->buf[SBUF_SEND], req->args.bytes, &e->send_ref);
    collie_find_ref(tp, req->buf[SBUF_RECV], req->args.bytes, &e->recv_ref);
    atomic_store_explicit(&e->ready, (uint64_t)req->call_seq + 1, memory_order_release);
    for (int q = 0; q < req->args.size; q++)
        if (q != req->args.rank)
            collie_wake_later(tp, q);
}

/* Has board word w (ready or done) reached req's call?  At or past it: a bcast non-root
 * returns without waiting for the others, so it may already be in a later call (whose
 * fields nobody of this call reads any more: a rank leaves a call that others read from
 * only after they are done).  Wrap-safe. */
static bool word_reached(const collie_request_t *req, const _Atomic uint64_t *w) {
    uint32_t want = req->call_seq + 1;
    return (int32_t)((uint32_t)atomic_load_explicit(w, memory_order_acquire) - want) >= 0;
}

/* Has q posted this very call (board)?  Then a message of it in q's channel is the slots
 * path's (use_slots): q posted before it sent, so this load sees the post. */
static bool posted_this_call(const collie_request_t *req, int q) {
    const collie_board_entry *e = &req->team->tp->board[q];
    return word_reached(req, &e->ready) && e->check == req->check;
}

/* A chunk of this call from q in the channel means q runs another collective here —
 * unless q posted this call and so takes the slots path. */
int direct_check_channel(collie_request_t *req, int q) {
    collie_transport *tp = req->team->tp;
    if (tp->discard && tp->discard[q])
        return COLLIE_OK;
    uint64_t s = tp->received[q] + 1;
    collie_slot_hdr *h = collie_slot(tp, &tp->from[q], s);
    if (atomic_load_explicit(&h->seq, memory_order_acquire) != s)
        return COLLIE_OK;
    const collie_slot_meta *m = collie_slot_meta_of(h);
    if (m->call_seq != req->call_seq || posted_this_call(req, q))
        return COLLIE_OK;
    collie_call_id theirs;
    collie_call_id_from_meta(m, h->check, &theirs);
    return collie_call_mismatch_req(req, q, "sent a message of", &theirs, NULL);
}

/* Rank q's board entry holds another call than req: name both. */
static int posted_other(collie_request_t *req, int q, const char *how) {
    collie_call_id theirs;
    if (collie_board_call(req->team->tp, q, req->call_seq, &theirs))
        return collie_call_mismatch_req(req, q, how, &theirs, NULL);
    return collie_fail(COLLIE_ERR_MISMATCH, "%s #%u (%llu bytes, %s): rank %d posted a "
                       "different call (count, type, op, root or algorithm)",
                       collie_coll_name(req->args.coll), req->call_seq,
                       (unsigned long long)req->args.bytes, req->algo->name, q);
}

/* Has rank q's `ready` (or `done`) reached this call?  Else note q as the one waited for. */
static bool reached(collie_request_t *req, int q, bool ready) {
    collie_board_entry *e = &req->team->tp->board[q];
    const _Atomic uint64_t *w = ready ? &e->ready : &e->done;
    if (word_reached(req, w))
        return true;
    req->blocked_peer = q;
    req->team->wait_word = w;
    req->team->wait_value = (uint64_t)req->call_seq + 1;
    return false;
}

/* Waits (without blocking) until every rank's `ready` (`done`) reached the call. */
static int all_reached(collie_request_t *req, bool ready) {
    for (int q = 0; q < req->args.size; q++)
        if (!reached(req, q, ready))
            return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    return COLLIE_OK;
}

static int check_calls(collie_request_t *req) {
    collie_board_entry *b = req->team->tp->board;
    for (int q = 0; q < req->args.size; q++)
        if (b[q].check != req->check)
            return posted_other(req, q, "posted");
    return COLLIE_OK;
}

static void map_peers(collie_request_t *req, direct_state *d) {
    collie_transport *tp = req->team->tp;
    uint64_t len = req->args.bytes;
    for (int q = 0; q < req->args.size; q++) {
        peer_view *v = &d->view[q];
        const collie_board_entry *e = &tp->board[q];
        if (q == req->args.rank) {
            v->in = req->buf[SBUF_SEND];
            v->out = req->buf[SBUF_RECV];
            continue;
        }
        v->in = collie_map_peer(tp, q, e->pid, &e->send_ref, len);
        v->out = (char *)(uintptr_t)collie_map_peer(tp, q, e->pid, &e->recv_ref, len);
    }
}

static int peer_io_failed(const collie_request_t *req, int q, const char *what, int err) {
    if (err == ESRCH) {
        collie_transport *tp = req->team->tp;
        if (tp->ops->check_peer(tp, q) != COLLIE_OK)   /* names why the peer left */
            return COLLIE_ERR_PEER;
        collie_transport_blame(tp, q);
        return collie_fail(COLLIE_ERR_PEER, "rank %d: %s rank %d's buffer failed: rank %d (pid "
                           "%d) died", req->args.rank, what, q, q, (int)req->team->tp->board[q].pid);
    }
    if (err == EFAULT || err == 0)
        return collie_fail(COLLIE_ERR_ARG, "rank %d: %s rank %d's buffer failed (%s): rank %d's "
                           "buffer is not accessible for %llu bytes (a count larger than its "
                           "buffer?)", req->args.rank, what, q, err ? strerror(err) : "short "
                           "transfer", q, (unsigned long long)req->args.bytes);
    return collie_fail(COLLIE_ERR_PEER, "rank %d: %s rank %d's buffer failed (%s); the rank "
                       "died or its memory is not accessible", req->args.rank, what, q,
                       err ? strerror(err) : "short transfer");
}

/* Source q's piece [off, off+len) of its input, read if it is not mapped. */
static int source(collie_request_t *req, direct_state *d, int q, uint64_t off, uint64_t len) {
    if (d->view[q].in) {
        d->srcs[q] = d->view[q].in + off;
        return COLLIE_OK;
    }
    const collie_board_entry *e = &req->team->tp->board[q];
    char *into = d->scratch + (size_t)q * d->chunk;
    struct iovec local = { into, len }, remote = { (void *)(uintptr_t)(e->send_addr + off), len };
    ssize_t n = process_vm_readv(e->pid, &local, 1, &remote, 1, 0);
    if (n != (ssize_t)len)
        return peer_io_failed(req, q, "reading", n < 0 ? errno : 0);
    d->srcs[q] = into;
    return COLLIE_OK;
}

static int deliver(collie_request_t *req, direct_state *d, int q, const char *from, uint64_t off,
                   uint64_t len) {
    if (d->view[q].out) {
        memcpy(d->view[q].out + off, from, len);
        return COLLIE_OK;
    }
    const collie_board_entry *e = &req->team->tp->board[q];
    struct iovec local = { (void *)from, len }, remote = { (void *)(uintptr_t)(e->recv_addr + off), len };
    ssize_t n = process_vm_writev(e->pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)len ? COLLIE_OK : peer_io_failed(req, q, "writing", n < 0 ? errno : 0);
}

/* Where this rank's reduced chunks go first: its own output (allreduce, the reduce root),
 * the root's output when it is mapped, else scratch that is then written to the root. */
static char *first_target(const collie_request_t *req, const direct_state *d) {
    int root = req->args.coll == COLL_ALLREDUCE ? req->args.rank : req->args.root;
    return d->view[root].out;
}

/* This rank's segment, chunk by chunk: all P reads, the reduction, the writes. */
static int reduce_segment(collie_request_t *req, direct_state *d) {
    int P = req->args.size, me = req->args.rank;
    bool everyone = req->args.coll == COLL_ALLREDUCE;
    direct_segment mine = direct_seg_of(&req->args, me);
    char *target = first_target(req, d);
    for (uint64_t at = 0; at < mine.bytes; at += d->chunk) {
        uint64_t off = mine.off + at, len = mine.bytes - at < d->chunk ? mine.bytes - at : d->chunk;
        for (int q = 0; q < P; q++) {
            int st = source(req, d, q, off, len);
            if (st)
                return st;
        }
        char *dst = target ? target + off : d->out_scratch;
        int st = collie_reduce_n(dst, d->srcs, P, len / req->args.elem_size, req->dtype, req->op);
        for (int i = 1; everyone && !st && i < P; i++)
            st = deliver(req, d, (me + i) % P, dst, off, len);
        if (!everyone && !st && !target)
            st = deliver(req, d, req->args.root, dst, off, len);
        if (st)
            return st;
    }
    return COLLIE_OK;
}

/* Posts this rank's `done` and wakes the ranks that may wait for it. */
static void mark_done(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    tp->board[req->args.rank].done_check = req->check;
    atomic_store_explicit(&tp->board[req->args.rank].done, (uint64_t)req->call_seq + 1,
                          memory_order_release);
    for (int q = 0; q < req->args.size; q++)
        if (q != req->args.rank)
            collie_wake_later(tp, q);
    req->moves++;
}

/* Is this call to go through the copy cells?  (See the top of the file.) */
static bool use_cells(const collie_request_t *req) {
    const collie_transport *tp = req->team->tp;
    const collie_coll_args *a = &req->args;
    if (!tp->cells || a->bytes >= tp->cells->kernel_min || a->elem_size > tp->cells->cell_bytes)
        return false;
    const collie_board_entry *b = tp->board;
    if (a->coll == COLL_BCAST)
        return b[a->root].send_ref.fd < 0;
    if (a->coll == COLL_REDUCE && b[a->root].recv_ref.fd < 0)
        return true;
    for (int q = 0; q < a->size; q++)
        if (b[q].send_ref.fd < 0 || (a->coll == COLL_ALLREDUCE && b[q].recv_ref.fd < 0))
            return true;
    return false;
}

/* A call that would take the cells but is at most collie_cells.slots_max bytes runs the
 * algorithm's schedule (build()) through the slots instead, as a schedule algorithm does:
 * up to ~512 KiB the cells' steps cost more than they save (docs/design.md).  Every
 * rank read the board before it starts (done), so none may post its next call before all
 * are done: a bcast root and allreduce/reduce ranks wait for everyone's done at the end. */
static bool use_slots(const collie_request_t *req) {
    return req->args.bytes <= req->team->tp->cells->slots_max;
}

/* The slots path: the schedule, then what WAIT_DONE waits for (the caller's). */
static int progress_slots(collie_request_t *req, direct_state *d) {
    int st = collie_exec_progress(req);
    if (st == COLLIE_OK)
        d->phase = WAIT_DONE;
    return st;
}

/* allreduce, reduce, once every rank posted: the path of this call, and its first move. */
static int leave_ready_segments(collie_request_t *req, direct_state *d) {
    int st;
    if ((st = all_reached(req, true)) != COLLIE_OK || (st = check_calls(req)) != COLLIE_OK)
        return st;
    if (use_cells(req)) {
        d->phase = use_slots(req) ? SLOTS : CELLS;
        if (d->phase == SLOTS)
            mark_done(req);
        return COLLIE_OK;
    }
    map_peers(req, d);
    if ((st = reduce_segment(req, d)) != COLLIE_OK)
        return st;
    mark_done(req);
    d->phase = WAIT_DONE;
    return COLLIE_OK;
}

/* allreduce, reduce: all posted -> this rank's segment -> done -> all done (or the cells,
 * or the slots then all done). */
static int progress_segments(collie_request_t *req, direct_state *d) {
    int st;
    if (d->phase == WAIT_READY && (st = leave_ready_segments(req, d)) != COLLIE_OK)
        return st;
    if (d->phase == CELLS)
        return cells_progress(req, d->cells);
    if (d->phase == SLOTS && (st = progress_slots(req, d)) != COLLIE_OK)
        return st;
    return all_reached(req, false);
}

/* bcast, non-root: the root's buffer, straight into this rank's. */
static int copy_from_root(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    int root = req->args.root;
    const collie_board_entry *e = &tp->board[root];
    char *into = req->buf[SBUF_RECV];
    uint64_t n = req->args.bytes;
    const char *mapped = collie_map_peer(tp, root, e->pid, &e->send_ref, n);
    if (mapped) {
        memcpy(into, mapped, n);
        return COLLIE_OK;
    }
    for (uint64_t at = 0; at < n;) {
        uint64_t len = n - at < (1u << 20) ? n - at : (1u << 20);
        struct iovec local = { into + at, len }, remote = { (void *)(uintptr_t)(e->send_addr + at), len };
        ssize_t got = process_vm_readv(e->pid, &local, 1, &remote, 1, 0);
        if (got <= 0)
            return peer_io_failed(req, root, "reading", got < 0 ? errno : 0);
        at += (uint64_t)got;
    }
    return COLLIE_OK;
}

/* bcast, root: every rank done with exactly this call must have done the same call (two
 * ranks that both believe they are the root meet only here).  A rank past it did a later
 * call, after this one's check. */
static int check_done_calls(collie_request_t *req) {
    collie_board_entry *b = req->team->tp->board;
    uint64_t want = (uint64_t)req->call_seq + 1;
    for (int q = 0; q < req->args.size; q++) {
        if (atomic_load_explicit(&b[q].done, memory_order_acquire) != want)
            continue;
        uint32_t check = b[q].done_check;
        atomic_thread_fence(memory_order_acquire);
        if (check != req->check && atomic_load_explicit(&b[q].done, memory_order_relaxed) == want)
            return posted_other(req, q, "did");
    }
    return COLLIE_OK;
}

/* bcast through the cells: then done; the root waits until all are done. */
static int progress_copy_cells(collie_request_t *req, direct_state *d) {
    if (d->phase == CELLS) {
        int st = cells_progress(req, d->cells);
        if (st != COLLIE_OK)
            return st;
        mark_done(req);
        d->phase = WAIT_DONE;
    }
    if (req->args.rank != req->args.root)
        return COLLIE_OK;
    int st = all_reached(req, false);
    return st != COLLIE_OK ? st : check_done_calls(req);
}

/* bcast: a non-root waits for the root's post, copies, is done; the root waits for all
 * (or the cells, or the slots).  Once the root posted (the root: at once): the path of
 * this call. */
static int leave_ready_copy(collie_request_t *req, direct_state *d) {
    int root = req->args.root, st;
    bool is_root = req->args.rank == root;
    if (!is_root) {
        if (!reached(req, root, true))
            return direct_check_channel(req, root) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
        if (req->team->tp->board[root].check != req->check)
            return posted_other(req, root, "posted");
    }
    if (use_cells(req)) {
        d->phase = use_slots(req) ? SLOTS : CELLS;
        d->via_cells = d->phase == CELLS;
        if (d->phase == SLOTS)
            mark_done(req);
        return COLLIE_OK;
    }
    if (!is_root && (st = copy_from_root(req)) != COLLIE_OK)
        return st;
    mark_done(req);
    d->phase = WAIT_DONE;
    return COLLIE_OK;
}

static int progress_copy(collie_request_t *req, direct_state *d) {
    int st;
    if (d->phase == WAIT_READY && (st = leave_ready_copy(req, d)) != COLLIE_OK)
        return st;
    if (d->via_cells)
        return progress_copy_cells(req, d);
    if (d->phase == SLOTS && (st = progress_slots(req, d)) != COLLIE_OK)
        return st;
    if (req->args.rank != req->args.root)
        return COLLIE_OK;
    return (st = all_reached(req, false)) != COLLIE_OK ? st : check_done_calls(req);
}

static int driver_progress(collie_request_t *req) {
    direct_state *d = req->algo_state;
    if (req->args.size == 1 || req->args.bytes == 0)
        return collie_exec_progress(req);
    if (d->phase == POST) {
        post(req);
        d->phase = WAIT_READY;
        req->moves++;
    }
    return req->args.coll == COLL_BCAST ? progress_copy(req, d) : progress_segments(req, d);
}

static void driver_release(collie_request_t *req) {
    direct_state *d = req->algo_state;
    if (d) {
        free(d->view);
        free(d->srcs);
        free(d->scratch);
        cells_free(d->cells);
        free(d);
    }
    req->algo_state = NULL;
}

const collie_algo_driver collie_direct_access_driver = {
    driver_prepare, driver_start, driver_progress, NULL, driver_release,
};

