/*
 * direct_access_bcast.c — bcast `direct_copy` in the direct-access driver (the driver, the
 * board protocol and the choice of path: direct_access.c; the algorithm's reference,
 * cost and schedule: bcast/direct_copy.c).
 *
 * A reader waits for the root's post, then copies the root's buffer into its own (mapped,
 * or by process_vm_readv), or takes the copy cells or the slots (direct_use_cells), and
 * marks itself done; the root waits until every rank is done and checks that they did the
 * same call.  At P = 2 with both buffers in collie_alloc memory the two ranks split the
 * copy (pair_split below).
 */

#include "algorithms/direct_access.h"
#include "algorithms/direct_access_impl.h"
#include "base/base.h"
#include "core/fill_tune.h"

/* bcast, non-root: the first n bytes of the root's buffer, straight into this rank's
 * (mapped, or read by the kernel if it cannot be).  The whole buffer from a mapped root
 * is copied with memcpy or streaming stores as this reader's trial of the size class
 * chose (fill_tune.c, the mapped copies' table: a reader's call ends with this copy, so
 * the copy is what is timed); half of it (the split copy at P = 2) by the fixed rule, as
 * the root's half. */
static int copy_from_root(collie_request_t *req, uint64_t n) {
    collie_transport *tp = req->team->tp;
    int root = req->args.root;
    const collie_board_entry *e = &tp->board[root];
    char *into = req->buf[SBUF_RECV];
    const char *mapped = collie_map_peer(tp, root, e->pid, &e->send_ref, req->args.bytes);
    if (!mapped)
        return direct_read(req, root, e->send_addr, into, n);
    if (n < req->args.bytes) {
        collie_copy_out(tp, req->args.bytes, into, mapped, n);
        return COLLIE_OK;
    }
    fill_way way = mapped_out_tune_begin(req);
    collie_cell_read(way.stream, into, mapped, n);
    fill_tune_end(req, &way);
    return COLLIE_OK;
}

/* bcast through the cells: then done; the root waits until all are done. */
static int progress_copy_cells(collie_request_t *req, direct_state *d) {
    if (d->phase == DIRECT_CELLS) {
        int st = cells_progress(req, d->cells);
        if (st != COLLIE_OK)
            return st;
        direct_mark_done(req);
        d->phase = DIRECT_WAIT_DONE;
    }
    return direct_bcast_root_done(req);
}

/* A bcast at P = 2 whose buffers are both collie_alloc memory (or the shared heap's)
 * splits the copy: the reader copies the first half of the root's buffer while the root
 * copies the second half into the reader's buffer, both cores at once (one memcpy by the
 * reader alone leaves the root's core idle; the cells make two copies).  Measured
 * (2026-11-27, AMD EPYC VM, fast state; collie-bench --coll bcast --collie-alloc
 * --barrier-each [--fresh-data], 2 rounds), split against the reader's one copy (and the
 * cells from 2 MiB): 128 KiB 1.13-1.55 us against 1.53-2.16, 512 KiB 2.8-4.1 against
 * 6.3-11.5, 2 MiB 19-21 against 40-41, 8 MiB 71 / 96-98 (reused / fresh) against
 * 162 / 172-177, 32 MiB 493-507 / 1034-1093 against 830-841 / 1279-1293.  From 32 KiB
 * (direct_copy forced: 0.53-0.65 us against 0.58-0.80; at 8-16 KiB equal or worse with
 * reused data): below it the root's wait for the reader's post and the reader's for the
 * root's `done` cost as much as half a copy saves. */
#define PAIR_SPLIT_MIN (32u * 1024u)

/* Might this call split (the reader's buffer is still to be seen)? */
static bool pair_split_possible(const collie_request_t *req) {
    const collie_coll_args *a = &req->args;
    return a->size == 2 && a->bytes >= PAIR_SPLIT_MIN && req->team->tp->board[a->root].send_ref.fd >= 0;
}

/* Is the reader's buffer of this very call mapped?  The reader reads its own entry.  The
 * root reads the reader's, which may already describe the reader's next call: a reader
 * that does not split copies and leaves without waiting for the root, and may post its
 * next call before the root looks (mp_soak: the root then wrote half of a bcast into the
 * buffer of the reader's next call, past its end).  Such a reader did not split (one that
 * splits waits for the root's `done`), so the root splits only on a post of this call. */
static bool reader_mapped(const collie_request_t *req) {
    int reader = 1 - req->args.root;
    if (req->args.rank == reader)
        return req->team->tp->board[reader].recv_ref.fd >= 0;
    return direct_recv_mapped_this_call(req, reader);
}

/* Both posted: does it split?  (Both ranks decide from the reader's post of this call.) */
bool direct_pair_split(const collie_request_t *req) {
    return pair_split_possible(req) && reader_mapped(req);
}

static uint64_t split_at(const collie_request_t *req) { return req->args.bytes / 2 / 64 * 64; }

/* The root's half: into the reader's buffer, mapped or by process_vm_writev. */
static int split_root_half(collie_request_t *req, direct_state *d) {
    collie_transport *tp = req->team->tp;
    int reader = 1 - req->args.root;
    uint64_t h = split_at(req), n = req->args.bytes;
    const char *from = (const char *)req->buf[SBUF_RECV] + h;
    direct_map_peers(req, d);
    if (!d->view[reader].out)
        return direct_deliver(req, d, reader, from, h, n - h);
    collie_copy_out(tp, n, d->view[reader].out + h, from, n - h);
    return COLLIE_OK;
}

/* Both posted and the call splits: this rank's half, then done; the reader then waits for
 * the root's `done` (its buffer is complete only then), the root for everyone's. */
static int split_copy(collie_request_t *req, direct_state *d) {
    bool is_root = req->args.rank == req->args.root;
    int st = is_root ? split_root_half(req, d) : copy_from_root(req, split_at(req));
    if (st)
        return st;
    direct_mark_done(req);
    d->phase = is_root ? DIRECT_WAIT_DONE : DIRECT_WAIT_ROOT;
    return COLLIE_OK;
}

/* Has rank q posted this call?  COLLIE_TIMEOUT while not, a mismatch when it posted
 * another. */
static int wait_posted(collie_request_t *req, int q) {
    if (!direct_reached(req, q, true))
        return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    return direct_posted_this_call(req, q) ? COLLIE_OK : direct_posted_other(req, q, "posted");
}

/* bcast: a non-root waits for the root's post, copies, is done; the root waits for all
 * (or the cells, or the slots, or the split copy).  Once the root posted (the root: at
 * once, or once the reader posted where the call might split): the path of this call. */
static int leave_ready_copy(collie_request_t *req, direct_state *d) {
    int root = req->args.root, st;
    bool is_root = req->args.rank == root;
    if (!is_root && (st = wait_posted(req, root)) != COLLIE_OK)
        return st;
    if (is_root && pair_split_possible(req) && (st = wait_posted(req, 1 - root)) != COLLIE_OK)
        return st;
    bool cells = direct_use_cells(req, d);
    if (!cells && direct_pair_split(req))
        return split_copy(req, d);
    if (cells) {
        d->phase = direct_use_slots(req, d) ? DIRECT_SLOTS : DIRECT_CELLS;
        d->via_cells = d->phase == DIRECT_CELLS;
        if (d->phase == DIRECT_SLOTS)
            direct_mark_done(req);
        return COLLIE_OK;
    }
    if (!is_root && (st = copy_from_root(req, req->args.bytes)) != COLLIE_OK)
        return st;
    direct_mark_done(req);
    d->phase = DIRECT_WAIT_DONE;
    return COLLIE_OK;
}

int direct_progress_bcast(collie_request_t *req, direct_state *d) {
    int st;
    if (d->phase == DIRECT_WAIT_READY && (st = leave_ready_copy(req, d)) != COLLIE_OK)
        return st;
    if (d->phase == DIRECT_WAIT_ROOT)
        return direct_reached(req, req->args.root, false) ? COLLIE_OK : COLLIE_TIMEOUT;
    if (d->via_cells)
        return progress_copy_cells(req, d);
    if (d->phase == DIRECT_SLOTS && (st = direct_progress_slots(req, d)) != COLLIE_OK)
        return st;
    return direct_bcast_root_done(req);
}
