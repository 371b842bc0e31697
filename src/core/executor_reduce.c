/*
 * executor_reduce.c — the executor's REDUCE steps (see executor.c): the head chunk of each
 * incoming channel for this request (chunks of another call met there are stashed), its
 * check word and size checked, its data read (from the slot, a mapping of the sender's
 * registered memory or process_vm_readv) and reduced with the local sources into the
 * destination, then the slot released to the sender.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/executor_impl.h"
#include "types/types.h"

static int mismatch(const collie_request_t *req, int peer, collie_slot_hdr *h,
                    uint64_t want_len, uint64_t want_msg) {
    const collie_slot_meta *m = collie_slot_meta_of(h);
    collie_call_id theirs;
    char detail[160];
    collie_call_id_from_meta(m, h->check, &theirs);
    snprintf(detail, sizeof detail, "its message holds %u of %llu bytes where %u of %llu were "
             "expected (algorithm %s here)", h->bytes & ~SLOT_FLAGS,
             (unsigned long long)m->msg_bytes, (unsigned)want_len,
             (unsigned long long)want_msg, req->algo->name);
    return collie_call_mismatch_req(req, peer, "sent", &theirs, detail);
}

/* A chunk of another call at the head of a channel, where either call is persistent
 * (matched by initialization order, started in any order): that call's request takes it,
 * this one waits.  Between non-persistent calls (in start order) it is a mismatch. */
static bool another_call(const collie_request_t *req, collie_slot_hdr *h) {
    uint32_t seq = collie_slot_meta_of(h)->call_seq;
    return seq != req->call_seq && ((seq | req->call_seq) & COLLIE_PERSISTENT_SEQ);
}

static int direct_read(collie_request_t *req, int peer, collie_slot_hdr *h, void *dst,
                       uint64_t len) {
    const collie_slot_meta *m = collie_slot_meta_of(h);
    struct iovec local = { dst, len };
    struct iovec remote = { (void *)(uintptr_t)m->addr, len };
    ssize_t got = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
    if (got < 0 && errno == ESRCH) {
        collie_transport *tp = req->team->tp;
        if (tp->ops->check_peer(tp, peer) != COLLIE_OK)   /* names why the peer left */
            return COLLIE_ERR_PEER;
        collie_transport_blame(tp, peer);
        return collie_fail(COLLIE_ERR_PEER, "rank %d (pid %d) died before this rank read its "
                           "message", peer, (int)m->pid);
    }
    int failed = req->team->tp->board ? atomic_load_explicit(&req->team->tp->board[peer].failed,
                                                             memory_order_acquire) : 0;
    if (got < 0 && errno == EFAULT && failed)   /* it failed, and freed its buffers since */
        return collie_fail(failed, "rank %d stopped after an error (%s; its message names the "
                           "cause) before this rank read its message", peer,
                           collie_strerror(failed));
    if (got < 0 && errno == EFAULT)
        return collie_fail(COLLIE_ERR_ARG, "rank %d's buffer at %#llx is not readable for %llu "
                           "bytes (a count larger than its buffer?)", peer,
                           (unsigned long long)m->addr, (unsigned long long)len);
    if (got != (ssize_t)len)
        return collie_fail(COLLIE_ERR_TRANSPORT, "single-copy read of %llu bytes from rank %d "
                           "(pid %d, address %#llx) failed: %s", (unsigned long long)len, peer,
                           (int)m->pid, (unsigned long long)m->addr,
                           got < 0 ? strerror(errno) : "short read");
    return COLLIE_OK;
}

static void release_incoming(collie_transport *tp, int peer) {
    uint64_t s = ++tp->received[peer];
    atomic_store_explicit(&tp->from[peer].consumed->value, s, memory_order_release);
    collie_wake_later(tp, peer);
}

static const void *mapped_data(const collie_request_t *req, int peer, collie_slot_hdr *h,
                               uint64_t len);

/* Moves the chunk at the head of peer's channel, another call's, to the team's stash (its
 * data read now if it is a single-copy one) and returns the slot (stash.c). */
static int stash_chunk(collie_request_t *req, int peer, collie_slot_hdr *h) {
    uint64_t len = h->bytes & ~SLOT_FLAGS;
    collie_slot_hdr *copy = collie_stash_add(req->team, peer, h, len);
    if (!copy)
        return COLLIE_ERR_NOMEM;
    void *dst = collie_slot_payload(copy, len);
    int st = COLLIE_OK;
    if (h->bytes & SLOT_DIRECT) {
        const void *src = mapped_data(req, peer, h, len);
        if (src)
            memcpy(dst, src, len);
        else
            st = direct_read(req, peer, h, dst, len);
    } else if (len) {
        memcpy(dst, collie_slot_payload(h, len), len);
    }
    release_incoming(req->team->tp, peer);
    return st;
}

/* incoming_head when the team has a stash or chunks to discard, or the head chunk is not
 * this request's. */
__attribute__((noinline)) static collie_slot_hdr *incoming_slow(collie_request_t *req, int peer, uint32_t want,
                                      bool *stashed, int *st) {
    collie_transport *tp = req->team->tp;
    if (req->team->stash_count) {
        collie_slot_hdr *h = collie_stash_find(req->team, peer, req->call_seq);
        if (h) {
            *stashed = true;
            return h;
        }
    }
    for (;;) {
        if (tp->discard_total && tp->discard[peer] && !collie_discard_progress(tp, peer))
            return NULL;
        uint64_t s = tp->received[peer] + 1;
        collie_slot_hdr *h = collie_slot(tp, &tp->from[peer], s);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != s) {
            note_wait(req, &h->seq, s);
            return NULL;
        }
        if (h->check == want || !another_call(req, h))
            return h;
        if ((*st = stash_chunk(req, peer, h)) != COLLIE_OK)
            return NULL;
    }
}

/* The header of peer's next chunk for this request (want: its check word), or NULL if it
 * has not arrived; *stashed when it comes from the stash.  Chunks of other calls met on
 * the way are stashed when either call is persistent (started in any order). */
static inline collie_slot_hdr *incoming_head(collie_request_t *req, int peer, uint32_t want,
                                             bool *stashed, int *st) {
    collie_transport *tp = req->team->tp;
    *stashed = false;
    if (!req->team->stash_count && !tp->discard_total) {
        uint64_t s = tp->received[peer] + 1;
        collie_slot_hdr *h = collie_slot(tp, &tp->from[peer], s);
        if (atomic_load_explicit(&h->seq, memory_order_acquire) != s) {
            note_wait(req, &h->seq, s);
            return NULL;
        }
        if (h->check == want)
            return h;
    }
    return incoming_slow(req, peer, want, stashed, st);
}

/* Scratch for single-copy reads that feed a reduction: one chunk per source. */
static char *direct_scratch(const collie_request_t *req, int nsrc) {
    static _Thread_local char *scratch;
    static _Thread_local size_t scratch_size;
    size_t need = (size_t)nsrc * req->direct_chunk_bytes;
    if (need > scratch_size) {
        free(scratch);
        scratch = aligned_alloc(64, need);
        scratch_size = scratch ? need : 0;
    }
    return scratch;
}

/* The chunk's data in the sender's registered memory, mapped here; NULL if not mapped. */
static const void *mapped_data(const collie_request_t *req, int peer, collie_slot_hdr *h,
                               uint64_t len) {
    collie_transport *tp = req->team->tp;
    if (!(h->bytes & SLOT_MAPPED))
        return NULL;
    const collie_slot_meta *m = collie_slot_meta_of(h);
    collie_mem_ref ref = { m->map_fd, m->map_serial, m->map_offset };
    return collie_map_peer(tp, peer, m->pid, &ref, len);
}

/* Reduces chunk `c` of op: every incoming source has arrived (heads[k] non-null). */
static int reduce_chunk(collie_request_t *req, const sched_op *op, collie_slot_hdr **heads,
                        uint64_t off, uint64_t len) {
    const sched_ref *srcs = &req->sched.srcs[op->src];
    const void *ptrs[SCHED_MAX_SOURCES];
    char *dst = len ? local_ptr(req, op->dst) + off : NULL;
    bool copied = false;
    char *scratch = NULL;
    uint32_t check = chunk_check(req, op->bytes);
    for (int k = 0; k < op->nsrc; k++) {
        if (srcs[k].buf != SBUF_IN) {
            ptrs[k] = len ? local_ptr(req, srcs[k]) + off : NULL;
            continue;
        }
        collie_slot_hdr *h = heads[k];
        if (h->check != check || (h->bytes & ~SLOT_FLAGS) != len)
            return mismatch(req, srcs[k].peer, h, len, op->bytes);
        if (!(h->bytes & SLOT_DIRECT)) {
            ptrs[k] = collie_slot_payload(h, len);
            continue;
        }
        if ((ptrs[k] = mapped_data(req, srcs[k].peer, h, len)) != NULL)
            continue;
        if (op->nsrc > 1 && !scratch && !(scratch = direct_scratch(req, op->nsrc)))
            return collie_fail(COLLIE_ERR_NOMEM, "no scratch for a single-copy read");
        void *into = op->nsrc == 1 ? (void *)dst : scratch + (size_t)k * req->direct_chunk_bytes;
        int st = direct_read(req, srcs[k].peer, h, into, len);
        if (st)
            return st;
        ptrs[k] = into;
        copied = op->nsrc == 1;
    }
    if (len && !copied)
        return collie_reduce_n(dst, ptrs, op->nsrc, len / req->args.elem_size, req->dtype, req->op);
    return COLLIE_OK;
}

/* Reduces the chunks of REDUCE i that have arrived from every incoming source; COLLIE_OK
 * when the REDUCE is done, COLLIE_TIMEOUT while a source's next chunk is missing. */
int collie_exec_reduce_progress(collie_request_t *req, const sched_op *op, uint32_t i,
                                bool *moved) {
    collie_transport *tp = req->team->tp;
    const sched_ref *srcs = &req->sched.srcs[op->src];
    uint64_t *prog = &req->progress[i];
    uint64_t n = req->nchunks[i], csize = n > 1 ? chunk_size(req, op->bytes) : op->bytes;
    collie_slot_hdr *heads[SCHED_MAX_SOURCES];
    bool stashed[SCHED_MAX_SOURCES];
    uint32_t want = chunk_check(req, op->bytes);
    while (*prog < n) {
        for (int k = 0; k < op->nsrc; k++) {
            if (srcs[k].buf != SBUF_IN)
                continue;
            int st = COLLIE_OK;
            heads[k] = incoming_head(req, srcs[k].peer, want, &stashed[k], &st);
            if (st != COLLIE_OK)
                return st;
            if (!heads[k]) {
                req->blocked_peer = srcs[k].peer;
                req->blocked_on_credit = false;
                return COLLIE_TIMEOUT;
            }
        }
        uint64_t off = *prog * csize;
        uint64_t len = op->bytes - off < csize ? op->bytes - off : csize;
        int st = reduce_chunk(req, op, heads, off, len);
        if (st)
            return st;
        for (int k = 0; k < op->nsrc; k++) {
            if (srcs[k].buf != SBUF_IN)
                continue;
            if (stashed[k])
                collie_stash_drop(req->team, srcs[k].peer, heads[k]);
            else
                release_incoming(tp, srcs[k].peer);
        }
        (*prog)++;
        *moved = true;
    }
    *prog = OP_DONE;
    return COLLIE_OK;
}
