/*
 * direct_board.c — the team's board protocol shared by the drivers that read (and write)
 * other ranks' buffers directly: direct_access.c (allreduce and reduce `direct_segments`,
 * bcast `direct_copy`), direct_colls.c (allgather, reduce_scatter and alltoall `direct`)
 * and the copy cells (cells.c: mismatch checks).
 *
 * A rank posts its call (hash, pid, the addresses of what peers read and write, and their
 * collie_alloc references) in its board entry and bumps `ready`; it waits until every rank's
 * `ready` reached the call and checks that all posted the same call; when done with other
 * ranks' buffers it bumps `done`.  Both words hold the call's sequence number + 1, never
 * reset (wrap-safe comparisons).  A peer's buffer is read with process_vm_readv when it is
 * not mapped (direct_read); a failed transfer names the rank and why.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "algorithms/direct_board.h"
#include "base/base.h"
#include "core/internal.h"

void direct_post(collie_request_t *req, const void *in, uint64_t in_len, const void *out,
                 uint64_t out_len) {
    collie_transport *tp = req->team->tp;
    collie_board_entry *e = &tp->board[req->args.rank];
    /* the check first: a peer that reads this entry's fields between two reads of the check
     * sees a change once any field of the new post is visible (direct_recv_mapped_this_call) */
    atomic_store_explicit((_Atomic uint32_t *)&e->check, req->check, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    e->pid = (int32_t)collie_self_pid();
    e->send_addr = (uint64_t)(uintptr_t)in;
    e->recv_addr = (uint64_t)(uintptr_t)out;
    collie_find_ref(tp, in, in_len, &e->send_ref);
    collie_find_ref(tp, out, out_len, &e->recv_ref);
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

/* Has q posted this very call?  (Then a message of it in q's channel is the slots path's,
 * use_slots: q posted before it sent, so these loads see the post.)  q's board entry holds
 * its latest post: a rank whose buffers nobody reads (a reduce's non-root through the
 * cells) may already have gone on to its next call and posted that, so a post of another
 * call is checked against the record of this call number in q's board history (published
 * when q started the call, before its post).  Without that, a loaded machine turned a
 * correct program's reduce into a mismatch error (mp.path_tune.P2 and mp.registered.P2
 * under ctest -j3, 3 of 8 runs). */
bool direct_posted_this_call(const collie_request_t *req, int q) {
    const collie_board_entry *e = &req->team->tp->board[q];
    if (!word_reached(req, &e->ready))
        return false;
    if (e->check == req->check)
        return true;
    collie_call_id theirs;
    return collie_board_call(req->team->tp, q, req->call_seq, &theirs) && theirs.check == req->check;
}

bool direct_recv_mapped_this_call(const collie_request_t *req, int q) {
    const collie_board_entry *e = &req->team->tp->board[q];
    const _Atomic uint32_t *check = (const _Atomic uint32_t *)&e->check;
    uint64_t want = (uint64_t)req->call_seq + 1;
    if (atomic_load_explicit(&e->ready, memory_order_acquire) != want ||
        atomic_load_explicit(check, memory_order_relaxed) != req->check)
        return false;
    bool mapped = e->recv_ref.fd >= 0;
    atomic_thread_fence(memory_order_acquire);
    return mapped && atomic_load_explicit(check, memory_order_relaxed) == req->check &&
           atomic_load_explicit(&e->ready, memory_order_relaxed) == want;
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
    if (m->call_seq != req->call_seq || direct_posted_this_call(req, q))
        return COLLIE_OK;
    collie_call_id theirs;
    collie_call_id_from_meta(m, h->check, &theirs);
    return collie_call_mismatch_req(req, q, "sent a message of", &theirs, NULL);
}

/* Rank q's board entry holds another call than req: name both. */
int direct_posted_other(collie_request_t *req, int q, const char *how) {
    collie_call_id theirs;
    if (collie_board_call(req->team->tp, q, req->call_seq, &theirs))
        return collie_call_mismatch_req(req, q, how, &theirs, NULL);
    return collie_fail(COLLIE_ERR_MISMATCH, "%s #%u (%llu bytes, %s): rank %d posted a "
                       "different call (count, type, op, root or algorithm)",
                       collie_coll_name(req->args.coll), req->call_seq,
                       (unsigned long long)req->args.bytes, req->algo->name, q);
}

/* Has rank q's `ready` (or `done`) reached this call?  Else note q as the one waited for. */
bool direct_reached(collie_request_t *req, int q, bool ready) {
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
int direct_all_reached(collie_request_t *req, bool ready) {
    for (int q = 0; q < req->args.size; q++)
        if (!direct_reached(req, q, ready))
            return direct_check_channel(req, q) ? COLLIE_ERR_MISMATCH : COLLIE_TIMEOUT;
    return COLLIE_OK;
}

int direct_check_calls(collie_request_t *req) {
    for (int q = 0; q < req->args.size; q++)
        if (!direct_posted_this_call(req, q))
            return direct_posted_other(req, q, "posted");
    return COLLIE_OK;
}

int direct_peer_io_failed(const collie_request_t *req, int q, const char *what, int err) {
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

/* Reads len bytes at q's address addr into `into` (process_vm_readv, in pieces of at most
 * 1 MiB; a short read goes on where it stopped). */
int direct_read(collie_request_t *req, int q, uint64_t addr, void *into, uint64_t len) {
    return direct_read_pid(req, q, (int)req->team->tp->board[q].pid, addr, into, len);
}

int direct_read_pid(collie_request_t *req, int q, int pid, uint64_t addr, void *into, uint64_t len) {
    for (uint64_t at = 0; at < len;) {
        uint64_t n = len - at < (1u << 20) ? len - at : (1u << 20);
        struct iovec local = { (char *)into + at, n }, remote = { (void *)(uintptr_t)(addr + at), n };
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got <= 0)
            return direct_peer_io_failed(req, q, "reading", got < 0 ? errno : 0);
        at += (uint64_t)got;
    }
    return COLLIE_OK;
}

/* The bcast root (direct_copy and `cells`), once every rank is done: every rank done
 * with exactly this call must have done the same call (two ranks that both believe they
 * are the root meet only here).  A rank past it did a later call, after this
 * one's check.  `done_call` holds a call's number and check in one word: read separately,
 * a rank already marking its next call done (a bcast with another root) could pair this
 * call's `done` with the next call's check (a false mismatch, seen in mp.bcast.P4). */
static int check_done_calls(collie_request_t *req) {
    collie_board_entry *b = req->team->tp->board;
    uint64_t want = (uint64_t)req->call_seq + 1;
    for (int q = 0; q < req->args.size; q++) {
        uint64_t call = atomic_load_explicit(&b[q].done_call, memory_order_acquire);
        if ((uint32_t)(call >> 32) != (uint32_t)want)
            continue;
        if ((uint32_t)call != req->check)
            return direct_posted_other(req, q, "did");
    }
    return COLLIE_OK;
}

/* Declared in direct_board.h. */
int direct_bcast_root_done(collie_request_t *req) {
    if (req->args.rank != req->args.root)
        return COLLIE_OK;
    int st = direct_all_reached(req, false);
    return st != COLLIE_OK ? st : check_done_calls(req);
}

/* Posts this rank's `done` and wakes the ranks that may wait for it. */
void direct_mark_done(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    uint64_t seq1 = (uint64_t)req->call_seq + 1;
    atomic_store_explicit(&tp->board[req->args.rank].done_call,
                          (uint64_t)(uint32_t)seq1 << 32 | req->check, memory_order_relaxed);
    atomic_store_explicit(&tp->board[req->args.rank].done, seq1, memory_order_release);
    for (int q = 0; q < req->args.size; q++)
        if (q != req->args.rank)
            collie_wake_later(tp, q);
    req->moves++;
}
