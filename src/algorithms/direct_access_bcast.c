/*
 * direct_access_bcast.c — bcast `direct_copy` in the direct-access driver (the driver, the
 * board protocol and the choice of path: direct_access.c; the algorithm's reference,
 * cost and schedule: bcast/direct_copy.c).
 *
 * A reader waits for the root's post, then copies the root's buffer into its own (mapped,
 * or by process_vm_readv), or takes the copy cells or the slots (direct_use_cells), and
 * marks itself done; the root waits until every rank is done and checks that they did the
 * same call.  At P = 2 with both buffers in collie_alloc memory the two ranks split the
 * copy (split_copy below); from 4 ranks, with every buffer mapped and at least 16 KiB
 * per rank, all ranks split it (TEAM_SPLIT_MIN_RANKS below).
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
        collie_copy_out(tp, req->args.size, req->args.bytes, into, mapped, n);
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

/* From 4 ranks, a bcast whose buffers are all mapped splits the copy among all ranks once
 * each rank's segment (the call's bytes / P) reaches TEAM_SPLIT_SEGMENT_MIN: rank s reads
 * segment s of the root's buffer once and writes it into every reader's buffer, where
 * otherwise each of the P - 1 readers reads all of the root's buffer.  Once the team's
 * outputs together reach collie_transport.stream_team_min (64 MiB) the writes are streaming
 * stores, as an allreduce's (direct_access.c, deliver_streams): past the caches a plain
 * store first reads its line from memory.  The cost: every rank waits for every post (to
 * map the outputs) and every reader for every rank's `done`.  Measured (2026-12-05, Intel
 * Xeon VM, 2 cores; collie-bench --coll bcast --algo direct_copy --collie-alloc
 * --barrier-each [--fresh-data], 2 rounds, µs, split / not): P = 4 128 KiB 7-8 / 14,
 * 1 MiB 47-51 / 109-133, 8 MiB 619-653 / 885-914 (fresh 831-833 / 1592-1802), 64 MiB
 * 9211-11173 / 16486-19374; P = 8 1 MiB 185-213 / 244-288, 64 MiB 16991-17807 /
 * 29079-29882 (fresh 19794-20203 / 28216-30194), 8 MiB 1721-1730 / 1766-1907; P = 6
 * 256 KiB-4 MiB 0.6-0.7 of the time; with --use-result the same or faster.  P = 16: 64 KiB
 * 65-70 / 52-64 (a 4 KiB segment), from 256 KiB the same or faster.  P = 3 (3 ranks on
 * 2 cores: the core with two ranks writes 4/3 of the call where a reader copies it once)
 * mixed: 1 MiB 46 / 60-62, but 2-16 MiB reused 1.2-1.5x and 16 MiB fresh 1.8x.  The
 * streaming writes against memcpy in the split: P = 4 32 MiB 3499-3627 / 8834-9718,
 * 16 MiB (64 MiB of outputs) 1669-1740 / 1278-1420 reused but 2374-2508 / 4887-5412
 * fresh; P = 8 4 MiB (32 MiB of outputs) 880-887 / 680-707. */
#define TEAM_SPLIT_MIN_RANKS 4
#define TEAM_SPLIT_SEGMENT_MIN (16u * 1024u)

/* Might this call split (the readers' buffers are still to be seen)?  Every rank decides the
 * same from the call and the root's post: nothing here may depend on a rank's settings. */
static bool split_possible(const collie_request_t *req) {
    const collie_coll_args *a = &req->args;
    if (a->bytes < PAIR_SPLIT_MIN || req->team->tp->board[a->root].send_ref.fd < 0)
        return false;
    if (a->size == 2)
        return true;
    return a->size >= TEAM_SPLIT_MIN_RANKS && a->bytes / (uint64_t)a->size >= TEAM_SPLIT_SEGMENT_MIN;
}

/* Is reader q's buffer of this very call mapped?  A reader reads its own entry.  The others
 * read q's, which may already describe q's next call: a reader that does not split copies
 * and leaves without waiting for the others, and may post its next call before they look
 * (mp_soak: the root then wrote half of a bcast into the buffer of the reader's next call,
 * past its end).  Such a reader did not split (one that splits waits for every `done`), so
 * a rank splits only on posts of this call. */
static bool reader_mapped(const collie_request_t *req, int q) {
    if (req->args.rank == q)
        return req->team->tp->board[q].recv_ref.fd >= 0;
    return direct_recv_mapped_this_call(req, q);
}

/* Every rank posted: does the call split?  (Every rank decides from the same posts.) */
bool direct_bcast_splits(const collie_request_t *req) {
    if (!split_possible(req))
        return false;
    for (int q = 0; q < req->args.size; q++)
        if (q != req->args.root && !reader_mapped(req, q))
            return false;
    return true;
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
    collie_copy_out(tp, 2, n, d->view[reader].out + h, from, n - h);
    return COLLIE_OK;
}

/* len bytes at off of the root's buffer, where this rank can write them from: the root's
 * own, the root's mapped, or read into this reader's output by the kernel. */
static const char *root_piece(collie_request_t *req, direct_state *d, uint64_t off, uint64_t len,
                              int *st) {
    int root = req->args.root;
    *st = COLLIE_OK;
    if (req->args.rank == root)
        return (const char *)req->buf[SBUF_RECV] + off;
    if (d->view[root].in)
        return d->view[root].in + off;
    char *mine = (char *)req->buf[SBUF_RECV] + off;
    *st = direct_read(req, root, req->team->tp->board[root].send_addr + off, mine, len);
    return mine;
}

/* From 4 ranks: this rank's segment of the root's buffer, chunk by chunk, into every
 * reader's buffer (its own last). */
static int team_split_segment(collie_request_t *req, direct_state *d) {
    const collie_coll_args *a = &req->args;
    const collie_transport *tp = req->team->tp;
    direct_map_peers(req, d);
    d->deliver_stream = collie_outputs_stream(tp, a->size, a->bytes);
    direct_segment mine = direct_seg_of(a, a->rank);
    for (uint64_t at = 0; at < mine.bytes; at += d->chunk) {
        uint64_t off = mine.off + at, len = mine.bytes - at < d->chunk ? mine.bytes - at : d->chunk;
        int st;
        const char *from = root_piece(req, d, off, len, &st);
        bool have_own = from == (const char *)req->buf[SBUF_RECV] + off;   /* root, or read */
        for (int i = 1; i <= a->size && st == COLLIE_OK; i++) {
            int q = (a->rank + i) % a->size;
            if (q != a->root && !(q == a->rank && have_own))
                st = direct_deliver(req, d, q, from, off, len);
        }
        if (st)
            return st;
    }
    return COLLIE_OK;
}

/* Every rank posted and the call splits: this rank's part, then done; a reader then waits
 * for every rank's `done` (its buffer is complete only then), the root for everyone's. */
static int split_copy(collie_request_t *req, direct_state *d) {
    bool is_root = req->args.rank == req->args.root;
    int st;
    if (req->args.size > 2)
        st = team_split_segment(req, d);
    else
        st = is_root ? split_root_half(req, d) : copy_from_root(req, split_at(req));
    if (st)
        return st;
    direct_mark_done(req);
    d->phase = is_root ? DIRECT_WAIT_DONE : DIRECT_WAIT_WRITERS;
    return COLLIE_OK;
}

/* Has rank q posted this call?  COLLIE_TIMEOUT while not, a mismatch when it posted
 * another. */
static int wait_posted(collie_request_t *req, int q) {
    if (!direct_reached(req, q, true))
        return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    return direct_posted_this_call(req, q) ? COLLIE_OK : direct_posted_other(req, q, "posted");
}

/* Every other rank posted this call or a later one (COLLIE_TIMEOUT while one has not).  At
 * P = 2 a post of another call is a mismatch.  From 4 ranks a reader that does not split
 * may be calls ahead (it needs only the roots of its next calls), its post of this call
 * gone from the board's history: it posted, and direct_bcast_splits sees that it did not
 * post this call mapped; a mismatch is then found where the call goes on. */
static int wait_all_posted(collie_request_t *req) {
    if (req->args.size == 2)
        return wait_posted(req, 1 - req->args.rank);
    return direct_all_reached(req, true);
}

/* bcast: a non-root waits for the root's post, copies, is done; the root waits for all
 * (or the cells, or the slots, or the split copy).  Once the root posted (the root: at
 * once), and every rank where the call might split: the path of this call. */
static int leave_ready_copy(collie_request_t *req, direct_state *d) {
    int root = req->args.root, st;
    bool is_root = req->args.rank == root;
    if (!is_root && (st = wait_posted(req, root)) != COLLIE_OK)
        return st;
    if (split_possible(req) && (st = wait_all_posted(req)) != COLLIE_OK)
        return st;
    bool cells = direct_use_cells(req, d);
    if (!cells && direct_bcast_splits(req))
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
    if (d->phase == DIRECT_WAIT_WRITERS)
        return direct_all_reached(req, false);
    if (d->via_cells)
        return progress_copy_cells(req, d);
    if (d->phase == DIRECT_SLOTS && (st = direct_progress_slots(req, d)) != COLLIE_OK)
        return st;
    return direct_bcast_root_done(req);
}
