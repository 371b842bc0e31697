/*
 * executor_slow.c — the executor's paths off the per-chunk fast path (executor.c), kept
 * out of it so that path stays one translation unit: staging a PUT's source, the
 * single-copy reads (a mapping of the sender's registered memory, or process_vm_readv, into
 * scratch when several sources are reduced), a chunk of another call met at the head of a
 * channel (stashed: stash.c), and the error that names a mismatched call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "core/executor_impl.h"

/* Copies the PUT's whole source to private memory; it is sent from there from now on. */
int collie_exec_stage(collie_request_t *req, const sched_op *op, uint32_t i) {
    req->staged[i] = malloc(op->bytes);
    if (!req->staged[i])
        return collie_fail(COLLIE_ERR_NOMEM, "cannot stage a message of %llu bytes",
                           (unsigned long long)op->bytes);
    memcpy(req->staged[i], local_ptr(req, req->sched.srcs[op->src]), op->bytes);
    req->nstaged++;
    return COLLIE_OK;
}

int collie_exec_mismatch(const collie_request_t *req, int peer, collie_slot_hdr *h,
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

int collie_exec_direct_read(collie_request_t *req, int peer, collie_slot_hdr *h, void *dst,
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
        const void *src = collie_exec_mapped_data(req, peer, h, len);
        if (src)
            memcpy(dst, src, len);
        else
            st = collie_exec_direct_read(req, peer, h, dst, len);
    } else if (len) {
        memcpy(dst, collie_slot_payload(h, len), len);
    }
    release_incoming(req->team->tp, peer);
    return st;
}

/* incoming_head (executor.c) when the team has a stash or chunks to discard, or the head chunk is not
 * this request's. */
collie_slot_hdr *collie_exec_incoming_slow(collie_request_t *req, int peer, uint32_t want,
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

/* Scratch for single-copy reads that feed a reduction: one chunk per source, per thread,
 * freed when the thread ends (a key's destructor: mp_soak's second thread leaked its 512 KiB
 * under LeakSanitizer). */
static _Thread_local char *scratch;
static _Thread_local size_t scratch_size;
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) { free(p); }
static void scratch_key_make(void) { (void)pthread_key_create(&scratch_key, scratch_free); }

char *collie_exec_direct_scratch(const collie_request_t *req, int nsrc) {
    size_t need = (size_t)nsrc * req->direct_chunk_bytes;
    if (need > scratch_size) {
        pthread_once(&scratch_once, scratch_key_make);
        free(scratch);
        scratch = aligned_alloc(64, need);
        scratch_size = scratch ? need : 0;
        (void)pthread_setspecific(scratch_key, scratch);
    }
    return scratch;
}

/* The chunk's data in the sender's registered memory, mapped here; NULL if not mapped. */
const void *collie_exec_mapped_data(const collie_request_t *req, int peer, collie_slot_hdr *h,
                                    uint64_t len) {
    collie_transport *tp = req->team->tp;
    if (!(h->bytes & SLOT_MAPPED))
        return NULL;
    const collie_slot_meta *m = collie_slot_meta_of(h);
    collie_mem_ref ref = { m->map_fd, m->map_serial, m->map_offset };
    return collie_map_peer(tp, peer, m->pid, &ref, len);
}
