/*
 * executor_put.c — the executor's PUT steps (see executor.c): a message written chunk by
 * chunk into the peer's channel while it grants credits; each chunk carries its payload,
 * or for single-copy messages a description the receiver reads from (process_vm_readv or
 * a mapping of registered memory).  A PUT that must outlive its source is staged: its
 * source copied to private memory first.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/executor_impl.h"

static void fill_header(const collie_request_t *req, collie_slot_hdr *h, uint64_t msg_bytes,
                        uint64_t len) {
    collie_slot_meta *m = collie_slot_meta_of(h);
    h->bytes = (uint32_t)len;
    h->check = chunk_check(req, msg_bytes);
    m->msg_bytes = msg_bytes;
    m->call_bytes = req->id.bytes;
    m->call_seq = req->call_seq;
    m->coll = (uint8_t)req->args.coll;
    m->vform = req->id.vform;
    m->root = req->id.root;
    m->dtype = req->id.dtype;
    m->op = req->id.op;
}

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

/* Whether [data, data+len) lies in this rank's registered memory (collie_alloc). */
static bool registered(const collie_request_t *req, const char *data, uint64_t len,
                       collie_mem_ref *ref) {
    return collie_find_ref(req->team->tp, data, len, ref);
}

/* A single-copy chunk: the receiver maps the data if it lies in registered memory (ref),
 * else reads it with process_vm_readv. */
static void describe_direct(collie_slot_hdr *h, const char *data, const collie_mem_ref *ref) {
    collie_slot_meta *m = collie_slot_meta_of(h);
    h->bytes |= SLOT_DIRECT;
    m->pid = (int32_t)getpid();
    m->addr = (uint64_t)(uintptr_t)data;
    if (ref) {
        h->bytes |= SLOT_MAPPED;
        m->map_fd = ref->fd;
        m->map_serial = ref->serial;
        m->map_offset = ref->offset;
    }
}

/* Writes chunk (off, len) of PUT i into slot h: single-copy for large messages; by
 * reference when the source is registered memory no later round overwrites (the
 * receiver reduces straight out of it); else the payload itself. */
static void write_chunk(collie_request_t *req, uint32_t i, collie_slot_hdr *h, const char *src,
                        uint64_t off, uint64_t len, bool direct) {
    collie_mem_ref ref;
    bool own_source = !req->staged[i];
    if (direct) {
        describe_direct(h, src + off, own_source && registered(req, src + off, len, &ref) ? &ref : NULL);
        return;
    }
    const collie_transport *tp = req->team->tp;
    if (tp->direct_ok && len >= tp->by_reference_min_bytes &&
        req->args.bytes <= tp->by_reference_max_call_bytes && own_source &&
        req->deadline[i] == req->sched.nrounds && registered(req, src + off, len, &ref)) {
        describe_direct(h, src + off, &ref);
        return;
    }
    if (len)
        memcpy(collie_slot_payload(h, len), src + off, len);
}

/* Writes as many chunks of PUT i as the peer's credits allow; COLLIE_OK when the PUT is
 * done (single-copy chunks: read by the peer), COLLIE_TIMEOUT while it waits. */
int collie_exec_put_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
    collie_transport *tp = req->team->tp;
    int q = op->peer;
    collie_channel *ch = &tp->to[q];
    uint64_t *prog = &req->progress[i];
    uint64_t n = req->nchunks[i], csize = n > 1 ? chunk_size(req, op->bytes) : op->bytes;
    bool direct = use_direct(req, op->bytes);
    if (*prog == 0)
        req->last_seq[i] = 0;
    if (direct && *prog == 0 && req->deadline[i] < req->sched.nrounds && !req->staged[i])
        if (collie_exec_stage(req, op, i) != COLLIE_OK)
            return COLLIE_ERR_NOMEM;
    const char *src = req->staged[i] ? req->staged[i]
                                     : op->bytes ? local_ptr(req, req->sched.srcs[op->src]) : NULL;
    bool wrote = false;
    while (*prog < n) {
        uint64_t s = tp->sent[q] + 1;
        if (s > tp->nslots + tp->credit[q]) {   /* the cached credit is exhausted: re-read */
            tp->credit[q] = atomic_load_explicit(&ch->consumed->value, memory_order_acquire);
            if (s > tp->nslots + tp->credit[q])
                break;
        }
        collie_slot_hdr *h = collie_slot(tp, ch, s);
        uint64_t off = *prog * csize;
        uint64_t len = op->bytes - off < csize ? op->bytes - off : csize;
        fill_header(req, h, op->bytes, len);
        write_chunk(req, i, h, src, off, len, direct);
        if (h->bytes & SLOT_DIRECT)
            req->last_seq[i] = s;
        atomic_store_explicit(&h->seq, s, memory_order_release);
        tp->sent[q] = s;
        (*prog)++;
        wrote = true;
    }
    if (wrote) {
        *moved = true;
        collie_wake_later(tp, q);
    }
    if (*prog < n) {
        req->blocked_peer = q;
        req->blocked_on_credit = true;
        note_wait(req, &ch->consumed->value, tp->sent[q] + 1 - tp->nslots);
        return COLLIE_TIMEOUT;
    }
    /* A PUT with single-copy chunks is done only when the peer has read the data. */
    if (req->last_seq[i] && atomic_load_explicit(&ch->consumed->value, memory_order_acquire) < req->last_seq[i]) {
        req->blocked_peer = q;
        req->blocked_on_credit = true;
        note_wait(req, &ch->consumed->value, req->last_seq[i]);
        return COLLIE_TIMEOUT;
    }
    *prog = OP_DONE;
    return COLLIE_OK;
}
