/*
 * direct_access.c — the driver of allreduce and reduce `direct_segments` and bcast
 * `direct_copy` (their files in allreduce/, reduce/ and bcast/ hold the references, cost
 * and the schedule the verifier and the simulator see; bcast's moves are in
 * direct_access_bcast.c).
 *
 * Protocol (the board's words and checks: direct_board.c): a rank posts its buffers'
 *   addresses on the team's board (transport.h) and waits until every rank posted the
 *   same call; it reduces its segment chunk by chunk
 *   (each chunk read from all P inputs, in rank order, then written to every output —
 *   all P for allreduce, the root's for reduce — so in place is safe: only this rank
 *   touches this segment anywhere); then it marks itself done and waits until every rank
 *   is done (its own output is complete and no one reads its input any more).
 *   bcast: a non-root waits only for the root's post, copies the root's buffer into its
 *   own and marks itself done; the root waits until every rank is done (at P = 2 with
 *   both buffers in collie_alloc memory the two split the copy: direct_access_bcast.c).
 * Access: a peer's buffer in collie_alloc memory is mapped (loads and stores), at any size
 *   (but a bcast at P = 2 from 2 MiB whose reader's buffer is not takes the cells:
 *   MAPPED_BCAST_PAIR_CELLS_MIN).
 *   When a buffer the call reads or writes is not (it is malloc'd), the call goes through
 *   the copy cells (cells.c) instead, unless the kernel copy was chosen for this call: by
 *   COLLIE_SHM_KERNEL_MIN (collie_cells.kernel_min) or, unset, by the call's decider from
 *   timed calls of its size (path_tune.c; every rank reads the choice from the decider's
 *   board entry).  Then such buffers are read with process_vm_readv into a chunk of
 *   scratch and written with process_vm_writev.  All ranks decide the same from the
 *   board (the posted buffers' registrations and the decider's way) and the segment's
 *   header.  A failed transfer is COLLIE_ERR_PEER naming
 *   the rank.  Through the cells, allreduce and reduce need no `done` (no rank reads
 *   another's buffers; a rank finishes only after every rank read the board); bcast keeps
 *   it, so the root does not post its next call before every rank read this one.
 *   Calls of at most collie_cells.slots_max bytes (COLLIE_SHM_SLOTS_MAX) that would take
 *   the cells run the algorithm's schedule through the slots instead (use_slots; from
 *   128 KiB the decider also times the cells there and may choose them), whose
 *   messages then stay in user space too (the executor's kernel copy from 32/256 KiB
 *   would otherwise make "the user way" of path_tune.c a kernel copy after all).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "algorithms/cells.h"
#include "algorithms/direct_access.h"
#include "algorithms/direct_access_impl.h"
#include "core/path_tune.h"
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
    /* The slots path is the user-space way (use_cells): not the kernel copy per message. */
    collie_exec_user_space_only(req);
    req->algo_state = d;
    if (!d || !d->view || !d->srcs || !d->scratch || (req->team->tp->cells && !d->cells))
        return collie_fail(COLLIE_ERR_NOMEM, "rank %d: no memory for direct_segments (%d chunks "
                           "of %llu bytes)", req->args.rank, P, (unsigned long long)(d ? d->chunk : 0));
    return COLLIE_OK;
}

static void driver_start(collie_request_t *req) {
    direct_state *d = req->algo_state;
    d->phase = DIRECT_POST;
    d->via_cells = false;
    d->had_choice = false;
    d->deliver_stream = false;
    if (d->cells)
        cells_reset(d->cells);
}

void direct_map_peers(collie_request_t *req, direct_state *d) {
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

/* Source q's piece [off, off+len) of its input, read if it is not mapped. */
static int source(collie_request_t *req, direct_state *d, int q, uint64_t off, uint64_t len) {
    if (d->view[q].in) {
        d->srcs[q] = d->view[q].in + off;
        return COLLIE_OK;
    }
    char *into = d->scratch + (size_t)q * d->chunk;
    int st = direct_read(req, q, req->team->tp->board[q].send_addr + off, into, len);
    d->srcs[q] = into;
    return st;
}

int direct_deliver(collie_request_t *req, direct_state *d, int q, const char *from, uint64_t off,
                   uint64_t len) {
    if (d->view[q].out) {
        collie_cell_fill(d->deliver_stream, d->view[q].out + off, from, len);
        return COLLIE_OK;
    }
    const collie_board_entry *e = &req->team->tp->board[q];
    struct iovec local = { (void *)from, len }, remote = { (void *)(uintptr_t)(e->recv_addr + off), len };
    ssize_t n = process_vm_writev(e->pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)len ? COLLIE_OK : direct_peer_io_failed(req, q, "writing", n < 0 ? errno : 0);
}

/* Where this rank's reduced chunks go first: its own output (allreduce, the reduce root),
 * the root's output when it is mapped, else scratch that is then written to the root. */
static char *first_target(const collie_request_t *req, const direct_state *d) {
    int root = req->args.coll == COLL_ALLREDUCE ? req->args.rank : req->args.root;
    return d->view[root].out;
}

/* Does this call write into the mapped peers' outputs with streaming stores?  An
 * allreduce from collie_transport.stream_out_min bytes, or once the team's outputs
 * together reach stream_team_min (measured: transport/shm_cells.c). */
static bool deliver_streams(const collie_request_t *req) {
    const collie_coll_args *a = &req->args;
    const collie_transport *tp = req->team->tp;
    return a->coll == COLL_ALLREDUCE && collie_outputs_stream(tp, a->size, a->bytes);
}

/* This rank's segment, chunk by chunk: all P reads, the reduction, the writes. */
static int reduce_segment(collie_request_t *req, direct_state *d) {
    int P = req->args.size, me = req->args.rank;
    bool everyone = req->args.coll == COLL_ALLREDUCE;
    d->deliver_stream = deliver_streams(req);
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
            st = direct_deliver(req, d, (me + i) % P, dst, off, len);
        if (!everyone && !st && !target)
            st = direct_deliver(req, d, req->args.root, dst, off, len);
        if (st)
            return st;
    }
    return COLLIE_OK;
}

/* A bcast at P = 2 from this size goes through the cells even when the root's buffer is
 * mapped (collie_alloc), unless the reader's is too (then the split copy,
 * direct_access_bcast.c): measured 2026-11-25 (collie-bench --coll bcast --collie-alloc
 * --algo direct_copy / cells, 512 KiB-8 MiB, reused and fresh, 3 rounds), the cells took
 * 0.76-0.89 of the mapped copy's time at 2 MiB, 0.84-0.98 at 4 MiB, 0.95-0.97 at 8 MiB:
 * the root's copy-in and the reader's copy-out run in parallel on both cores, in cache,
 * where one 2 MiB memcpy out of the root's buffer leaves the root's core idle.  Up to
 * 1 MiB the mapped copy won (512 KiB reused: 12 against 34 us), and from P = 3 it won or
 * tied at every size (P = 3 8 MiB: 563-808 against 1170-1333 us). */
#define MAPPED_BCAST_PAIR_CELLS_MIN (2u << 20)

/* Does the call read or write a buffer that is not mapped (board: the posted buffers)? */
static bool some_unmapped(const collie_request_t *req) {
    const collie_coll_args *a = &req->args;
    const collie_board_entry *b = req->team->tp->board;
    if (a->coll == COLL_BCAST)
        return b[a->root].send_ref.fd < 0;
    if (a->coll == COLL_REDUCE && b[a->root].recv_ref.fd < 0)
        return true;
    for (int q = 0; q < a->size; q++)
        if (b[q].send_ref.fd < 0 || (a->coll == COLL_ALLREDUCE && b[q].recv_ref.fd < 0))
            return true;
    return false;
}

/* Is this call to go through the copy cells (or the slots: use_slots) rather than the
 * buffers themselves, mapped or by the kernel copy?  (See the top of the file.)  When the
 * way for unmapped buffers was the decider's to choose, d->had_choice says so. */
bool direct_use_cells(const collie_request_t *req, direct_state *d) {
    const collie_transport *tp = req->team->tp;
    const collie_coll_args *a = &req->args;
    if (!tp->cells || a->elem_size > tp->cells->cell_bytes)
        return false;
    bool tuned = path_tune_on(req);
    if (!tuned && a->bytes >= tp->cells->kernel_min)
        return false;
    bool mapped = !some_unmapped(req);
    if (mapped && a->coll == COLL_BCAST && a->size == 2 && a->bytes >= MAPPED_BCAST_PAIR_CELLS_MIN &&
        !direct_bcast_splits(req))
        return true;
    if (mapped && !path_tune_mapped_trial(req))
        return false;
    if (!tuned)
        return true;
    d->had_choice = true;
    d->all_mapped = mapped;
    const collie_board_entry *e = &tp->board[path_tune_decider(req)];
    d->path = mapped ? e->mapped_path : e->path;
    return d->path == PATH_USER || d->path == PATH_CELLS;
}

/* bcast at P >= 5: through the slots it is the root writing P - 1 copies (flat's
 * schedule), through the cells one copy in and P - 1 readers.  Measured (2026-11-25,
 * P = 5 and 8, 64-256 KiB, reused and fresh data, 2 rounds): the cells took 0.4-0.75 of
 * binary_tree's time at 256 KiB (P = 8 at 64-128 KiB too), where the slots took 0.9-1.0
 * (P = 8, 256 KiB).  So from 5 ranks a bcast takes the slots only up to 32 KiB (reduce
 * keeps them: there the cells lost at 64-128 KiB). */
#define BCAST_MANY_RANKS 5
#define BCAST_MANY_SLOTS_MAX (32u * 1024u)
/* reduce at P = 2 through the cells goes whole (cells.c): 512 KiB with fresh data
 * 32-34 us against the slots' 59-64, reused 34-36 against 41-44; at 256 KiB the slots
 * still win with reused data (18 against 27 us).  Where the way is tuned and both ranks
 * have a core the decider tries the slots at every size instead (pair_tries_slots). */
#define REDUCE_PAIR_SLOTS_MAX (256u * 1024u)

/* bcast and reduce at P = 2 where both ranks have a core, with the way tuned
 * (path_tune.c): the decider tries the slots at every size, beside the cells and the
 * kernel copy.  Measured (2026-12-03, Intel Xeon VM, collie-bench --barrier-each
 * [--fresh-data], µs, slowest rank): bcast, binomial's schedule through the slots against
 * direct_copy through the cells, 1 MiB 71-86 against 84-95, 2 MiB 158-170 against
 * 183-210, 8 MiB 647-704 against 683-802, reused and fresh alike; reduce, binomial against
 * direct_segments (which took the cells), fresh 512 KiB 40-45 against 69-71, 1 MiB 88-94
 * against 111-136, 4 MiB 461-479 against 520-551, reused equal within 10 %.  On the same
 * kind of VM on 2026-11-25 the cells won bcast 1 MiB with fresh data (0.74x) and lost it
 * reused (1.27x), and won reduce 512 KiB (REDUCE_PAIR_SLOTS_MAX below).  One rank per
 * core: the trial's timed calls are too noisy with more ranks than cores. */
static bool pair_tries_slots(const collie_request_t *req) {
    int c = req->args.coll;
    return (c == COLL_BCAST || c == COLL_REDUCE) && req->args.size == 2 && path_tune_on(req) &&
           !req->args.shared_cores;
}

/* reduce with more ranks than cores: the slots run flat's schedule (reduce/direct_segments.c:
 * every input to the root, the root reduces), which the decider tries at every size beside
 * the cells and the kernel copy.  Measured (2026-12-04, Intel Xeon VM, P = 3, collie-bench
 * --coll reduce --algo all --barrier-each [--fresh-data], malloc buffers): reduce `flat`
 * took 0.6-0.9 of direct_segments' time at every size from 512 KiB to 8 MiB (2 MiB reused
 * 274 against 338 us, fresh 353 against 540): with ranks in turn on the cores the
 * segments' P-way split only adds waits; the root reducing alone while the others copy in
 * keeps both cores busy.  Mapped buffers keep the segments (0.5-0.7 of flat's time). */
static bool shared_cores_tries_slots(const collie_request_t *req) {
    return req->args.coll == COLL_REDUCE && req->args.shared_cores && path_tune_on(req);
}

/* A call that would take the cells but is at most collie_cells.slots_max bytes runs the
 * algorithm's schedule (build()) through the slots instead, as a schedule algorithm does:
 * up to ~512 KiB the cells' steps cost more than they save (docs/design.md); lower for
 * bcast from 5 ranks and reduce at P = 2 (above), whatever COLLIE_SHM_SLOTS_MAX says.  Every
 * rank read the board before it starts (done), so none may post its next call before all
 * are done: a bcast root and allreduce/reduce ranks wait for everyone's done at the end. */
static bool slots_by_size(const collie_request_t *req) {
    uint64_t max = req->team->tp->cells->slots_max;
    if (req->args.coll == COLL_BCAST && req->args.size >= BCAST_MANY_RANKS && max > BCAST_MANY_SLOTS_MAX)
        max = BCAST_MANY_SLOTS_MAX;
    if (req->args.coll == COLL_REDUCE && req->args.size == 2 && max > REDUCE_PAIR_SLOTS_MAX)
        max = REDUCE_PAIR_SLOTS_MAX;
    return req->args.bytes <= max;
}

/* May req take the slots: by its size, or (where the decider chose its way: by_choice)
 * as a P = 2 bcast or reduce at any size (pair_tries_slots)? */
static bool slots_allowed(const collie_request_t *req, bool by_choice) {
    return slots_by_size(req) || (by_choice && (pair_tries_slots(req) || shared_cores_tries_slots(req)));
}

/* The slots, unless the decider chose the cells for this call (path_tune.c tries both
 * where the size allows the slots, and for a P = 2 bcast or reduce with a buffer that is
 * not mapped at every size: then the slots are its PATH_USER). */
bool direct_use_slots(const collie_request_t *req, const direct_state *d) {
    return slots_allowed(req, d->had_choice) && !(d->had_choice && d->path == PATH_CELLS);
}

/* The slots path: the schedule, then what DIRECT_WAIT_DONE waits for (the caller's).  The
 * other ranks mark `done` as they enter it, so in a call timed for the trial the decider
 * waits until its messages were consumed (a bcast root would else stop its clock before
 * its readers copied out; collie_exec_sends_consumed). */
int direct_progress_slots(collie_request_t *req, direct_state *d) {
    int st = collie_exec_progress(req);
    if (st == COLLIE_OK && d->had_choice && path_tune_timed(req, d->all_mapped))
        st = collie_exec_sends_consumed(req);
    if (st == COLLIE_OK)
        d->phase = DIRECT_WAIT_DONE;
    return st;
}

/* allreduce, reduce, once every rank posted: the path of this call, and its first move. */
static int leave_ready_segments(collie_request_t *req, direct_state *d) {
    int st;
    if ((st = direct_all_reached(req, true)) != COLLIE_OK || (st = direct_check_calls(req)) != COLLIE_OK)
        return st;
    if (direct_use_cells(req, d)) {
        d->phase = direct_use_slots(req, d) ? DIRECT_SLOTS : DIRECT_CELLS;
        if (d->phase == DIRECT_SLOTS)
            direct_mark_done(req);
        return COLLIE_OK;
    }
    direct_map_peers(req, d);
    if ((st = reduce_segment(req, d)) != COLLIE_OK)
        return st;
    direct_mark_done(req);
    d->phase = DIRECT_WAIT_DONE;
    return COLLIE_OK;
}

/* allreduce, reduce: all posted -> this rank's segment -> done -> all done (or the cells,
 * or the slots then all done). */
static int progress_segments(collie_request_t *req, direct_state *d) {
    int st;
    if (d->phase == DIRECT_WAIT_READY && (st = leave_ready_segments(req, d)) != COLLIE_OK)
        return st;
    if (d->phase == DIRECT_CELLS) {   /* a timed call waits for all, as the other ways do */
        st = cells_progress(req, d->cells);
        if (st == COLLIE_OK && d->had_choice && path_tune_timed(req, d->all_mapped))
            st = cells_all_freed(req, d->cells);
        return st;
    }
    if (d->phase == DIRECT_SLOTS && (st = direct_progress_slots(req, d)) != COLLIE_OK)
        return st;
    return direct_all_reached(req, false);
}

/* The decider posts its choice of way with the call and times the call. */
static void post(collie_request_t *req, direct_state *d) {
    bool decides = path_tune_on(req) && req->args.rank == path_tune_decider(req);
    if (decides) {
        collie_board_entry *e = &req->team->tp->board[req->args.rank];
        e->path = path_tune_pick(req, slots_allowed(req, true));
        e->mapped_path = path_tune_pick_mapped(req);
        d->posted_ns = collie_now_ns();
    }
    direct_post(req, req->buf[SBUF_SEND], req->args.bytes, req->buf[SBUF_RECV], req->args.bytes);
    d->phase = DIRECT_WAIT_READY;
    req->moves++;
}

static int driver_progress(collie_request_t *req) {
    direct_state *d = req->algo_state;
    if (req->args.size == 1 || req->args.bytes == 0)
        return collie_exec_progress(req);
    if (d->phase == DIRECT_POST)
        post(req, d);
    int st = req->args.coll == COLL_BCAST ? direct_progress_bcast(req, d) : progress_segments(req, d);
    if (st == COLLIE_OK)
        cells_finish(req, d->cells);
    if (st == COLLIE_OK && d->had_choice && req->args.rank == path_tune_decider(req)) {
        uint64_t ns = collie_now_ns() - d->posted_ns;
        if (d->all_mapped)
            path_tune_record_mapped(req, d->path, ns);
        else
            path_tune_record(req, d->path, ns);
        d->had_choice = false;
    }
    return st;
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

