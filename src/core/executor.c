/*
 * executor.c — runs any schedule split-phase on any transport (layer 3).
 *
 * A request holds one rank's schedule.  collie_exec_progress() advances the current round
 * as far as it can without waiting and returns: operations of a round progress
 * concurrently, chunk by chunk (a PUT writes chunks while the peer grants credits; a
 * REDUCE consumes chunks of its incoming sources as they arrive and reduces straight out
 * of the inbox).  Messages to or from one peer keep operation order within a round, so
 * both sides agree on the FIFO order of every channel.  Nothing here blocks.
 *
 * A round ends when its REDUCEs are done; its PUTs may trail into later rounds (a message
 * larger than the channel can only drain while the receiver consumes it, perhaps in a
 * later round of its own) until the first later round that writes their source memory —
 * their deadline, computed once per schedule — or the end of the schedule.  A PUT still
 * unfinished at its deadline is staged: the rest of its source is copied to private memory
 * so the round can go on (like MPI's buffered send; needed when two ranks overwrite in
 * place what they are still sending each other).  A single-copy PUT with a deadline is
 * staged when it starts, since its descriptors point at the source.
 *
 * This file: the passes over the rounds and the per-chunk PUT and REDUCE steps, one
 * translation unit so the compiler inlines the fast path; a request's state is set up in
 * executor_prepare.c, the slow paths (single-copy reads, stashing, staging, mismatches)
 * are in executor_slow.c, the shared per-chunk helpers in executor_impl.h.
 */
#include <string.h>
#include <unistd.h>

#include "core/executor_impl.h"
#include "types/types.h"

/* ---- PUT ------------------------------------------------------------------------------ */

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
    m->pid = (int32_t)collie_self_pid();
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

/* A message of at most tp->demote_max_bytes (8 KiB unless COLLIE_SHM_DEMOTE_MAX says
 * otherwise; shm with a core per rank only) is pushed out of the writer's caches once
 * written: the reader's misses then are served by the shared cache.  Not larger ones:
 * while the reader copies out one chunk as the writer fills the next, that made 16-32 KiB
 * calls slower (P = 2 bcast 32 KiB fresh 3.8 -> 5.4 µs); nor with more ranks than cores,
 * where the reader often runs on the writer's core (P = 8 allreduce 2 KiB 10.7 -> 15 µs). */
static void demote_slot(const collie_transport *tp, const sched_op *op, collie_slot_hdr *h,
                        uint64_t len) {
    if (!tp->demote_max_bytes || op->bytes > tp->demote_max_bytes || (h->bytes & SLOT_DIRECT))
        return;
    collie_demote(h, COLLIE_CACHELINE);
    if (len > SLOT_INLINE_BYTES)
        collie_demote(collie_slot_payload(h, len), len);
}

static int put_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
    collie_transport *tp = req->team->tp;
    int q = op->peer;
    collie_channel *ch = &tp->to[q];
    uint64_t *prog = &req->progress[i];
    uint64_t n = req->nchunks[i], csize = req->chunk_len[i];
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
        demote_slot(tp, op, h, len);
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

int collie_exec_sends_consumed(collie_request_t *req) {
    collie_transport *tp = req->team->tp;
    for (int q = 0; q < tp->size; q++) {
        if (q == tp->rank || !tp->sent[q])
            continue;
        _Atomic uint64_t *consumed = &tp->to[q].consumed->value;
        if (atomic_load_explicit(consumed, memory_order_acquire) < tp->sent[q]) {
            req->blocked_peer = q;
            req->blocked_on_credit = true;
            note_wait(req, consumed, tp->sent[q]);
            return COLLIE_TIMEOUT;
        }
    }
    return COLLIE_OK;
}

/* ---- REDUCE --------------------------------------------------------------------------- */

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
    return collie_exec_incoming_slow(req, peer, want, stashed, st);
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
            return collie_exec_mismatch(req, srcs[k].peer, h, len, op->bytes);
        if (!(h->bytes & SLOT_DIRECT)) {
            ptrs[k] = collie_slot_payload(h, len);
            continue;
        }
        if ((ptrs[k] = collie_exec_mapped_data(req, srcs[k].peer, h, len)) != NULL)
            continue;
        if (op->nsrc > 1 && !scratch && !(scratch = collie_exec_direct_scratch(req, op->nsrc)))
            return collie_fail(COLLIE_ERR_NOMEM, "no scratch for a single-copy read");
        void *into = op->nsrc == 1 ? (void *)dst : scratch + (size_t)k * req->direct_chunk_bytes;
        int st = collie_exec_direct_read(req, srcs[k].peer, h, into, len);
        if (st)
            return st;
        ptrs[k] = into;
        copied = op->nsrc == 1;
    }
    if (len && !copied && op->nsrc == 1 && srcs[0].buf == SBUF_IN) {
        collie_peer_copy(dst, ptrs[0], len);   /* a peer's slot or mapped buffer */
        return COLLIE_OK;
    }
    if (len && !copied)
        return collie_reduce_n(dst, ptrs, op->nsrc, len / req->args.elem_size, req->dtype, req->op);
    return COLLIE_OK;
}

/* Whether op receives one message whose sender chose its way (executor_prepare.c
 * decide_way): a collective without an op, one incoming source, more than a slot.  The
 * receiver then takes the chunking of the first chunk that arrives.  Not from its own
 * kernel_copy_allowed: in a v form the call's bytes (this rank's count) differ between
 * ranks, and with them whether the mid range applies. */
static bool follows_sender(const collie_request_t *req, const sched_op *op) {
    if (req->user_space_only || collie_coll_has_op(req->args.coll) || op->nsrc != 1 ||
        req->sched.srcs[op->src].buf != SBUF_IN)
        return false;
    return req->team->tp->direct_ok && op->bytes > req->chunk_bytes;
}

/* The first chunk of op's message arrived: its length says the sender's chunk size (the
 * single copy's chunks are larger than a slot's; a length that is neither is reported as a
 * mismatch by reduce_chunk). */
static void follow_sender(collie_request_t *req, const sched_op *op, uint32_t i,
                          const collie_slot_hdr *h) {
    uint64_t len = h->bytes & ~SLOT_FLAGS;
    uint64_t direct_len = op->bytes < req->direct_chunk_bytes ? op->bytes : req->direct_chunk_bytes;
    uint64_t c = len == direct_len ? req->direct_chunk_bytes : req->chunk_bytes;
    req->nchunks[i] = (op->bytes + c - 1) / c;
    req->chunk_len[i] = req->nchunks[i] > 1 ? c : op->bytes;
}

static int reduce_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
    collie_transport *tp = req->team->tp;
    const sched_ref *srcs = &req->sched.srcs[op->src];
    uint64_t *prog = &req->progress[i];
    collie_slot_hdr *heads[SCHED_MAX_SOURCES];
    bool stashed[SCHED_MAX_SOURCES];
    uint32_t want = chunk_check(req, op->bytes);
    while (*prog < req->nchunks[i]) {
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
        if (*prog == 0 && follows_sender(req, op))
            follow_sender(req, op, i, heads[0]);
        uint64_t csize = req->chunk_len[i];
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

/* A REDUCE with local sources only runs whole, at once. */
static bool has_incoming(const collie_request_t *req, const sched_op *op) {
    for (int k = 0; k < op->nsrc; k++)
        if (req->sched.srcs[op->src + (uint32_t)k].buf == SBUF_IN)
            return true;
    return false;
}

/* ---- rounds --------------------------------------------------------------------------- */

static bool peers_busy(collie_request_t *req, const sched_op *op) {
    uint32_t *busy_recv = req->busy + req->team->size;
    for (int k = 0; k < op->nsrc; k++) {
        const sched_ref *r = &req->sched.srcs[op->src + (uint32_t)k];
        if (r->buf == SBUF_IN && busy_recv[r->peer] == req->pass)
            return true;
    }
    return false;
}

static void mark_busy(collie_request_t *req, const sched_op *op) {
    uint32_t *busy_recv = req->busy + req->team->size;
    for (int k = 0; k < op->nsrc; k++) {
        const sched_ref *r = &req->sched.srcs[op->src + (uint32_t)k];
        if (r->buf == SBUF_IN)
            busy_recv[r->peer] = req->pass;
    }
}

static int op_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
    uint32_t *busy_send = req->busy;
    if (op->kind == SCHED_PUT) {
        if (busy_send[op->peer] == req->pass)
            return COLLIE_TIMEOUT;
        int st = put_progress(req, op, i, moved);
        if (st == COLLIE_TIMEOUT)
            busy_send[op->peer] = req->pass;
        return st;
    }
    if (!has_incoming(req, op)) {
        if (op->bytes) {
            const void *ptrs[SCHED_MAX_SOURCES];
            for (int k = 0; k < op->nsrc; k++)
                ptrs[k] = local_ptr(req, req->sched.srcs[op->src + (uint32_t)k]);
            int st = collie_reduce_n(local_ptr(req, op->dst), ptrs, op->nsrc,
                                     op->bytes / req->args.elem_size, req->dtype, req->op);
            if (st)
                return st;
        }
        req->progress[i] = OP_DONE;
        *moved = true;
        return COLLIE_OK;
    }
    if (peers_busy(req, op)) {
        mark_busy(req, op);
        return COLLIE_TIMEOUT;
    }
    int st = reduce_progress(req, op, i, moved);
    if (st == COLLIE_TIMEOUT)
        mark_busy(req, op);
    return st;
}

/* PUTs of earlier rounds that have not finished, oldest first. */
static int trailing_progress(collie_request_t *req, bool *moved) {
    uint32_t kept = 0;
    for (uint32_t t = 0; t < req->ntrailing; t++) {
        uint32_t i = req->trailing[t];
        int st = op_progress(req, &req->sched.ops[i], i, moved);
        if (st < 0)
            return st;
        if (req->progress[i] != OP_DONE)
            req->trailing[kept++] = i;
    }
    req->ntrailing = kept;
    return COLLIE_OK;
}

/* Stages the trailing PUTs that must finish before round r may start; false on error. */
static int stage_due(collie_request_t *req, uint32_t r) {
    for (uint32_t t = 0; t < req->ntrailing; t++) {
        uint32_t i = req->trailing[t];
        if (req->deadline[i] <= r && !req->staged[i]) {
            int st = collie_exec_stage(req, &req->sched.ops[i], i);
            if (st)
                return st;
        }
    }
    return COLLIE_OK;
}

/* Progresses the current round; COLLIE_OK when all its REDUCEs are done. */
static int round_progress(collie_request_t *req, bool *moved) {
    const sched_round *rd = &req->sched.rounds[req->round];
    bool reduces_done = true;
    for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++) {
        if (req->progress[i] == OP_DONE)
            continue;
        const sched_op *op = &req->sched.ops[i];
        int st = op_progress(req, op, i, moved);
        if (st < 0)
            return st;
        if (st != COLLIE_OK && op->kind == SCHED_REDUCE)
            reduces_done = false;
    }
    return reduces_done ? COLLIE_OK : COLLIE_TIMEOUT;
}

/* The round's REDUCEs are done: its unfinished PUTs trail. */
static void close_round(collie_request_t *req) {
    const sched_round *rd = &req->sched.rounds[req->round];
    for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++)
        if (req->progress[i] != OP_DONE)
            req->trailing[req->ntrailing++] = i;
    req->round++;
}

static void next_pass(collie_request_t *req) {
    if (++req->pass == 0) {
        memset(req->busy, 0, 2 * (size_t)req->team->size * sizeof *req->busy);
        req->pass = 1;
    }
}

int collie_exec_progress(collie_request_t *req) {
    bool moved = false;
    int st;
    collie_transport *tp = req->team->tp;
    if (tp->ops->progress)
        tp->ops->progress(tp);
    for (;;) {
        next_pass(req);
        if ((st = trailing_progress(req, &moved)) < 0)
            return st;
        if (req->round == req->sched.nrounds) {
            st = req->ntrailing ? COLLIE_TIMEOUT : collie_no_extra_message(req);
            if (st == COLLIE_OK && req->way_posted_ns)
                st = collie_exec_sends_consumed(req);
            if (st == COLLIE_OK)
                collie_exec_finished(req);
            break;
        }
        if ((st = stage_due(req, req->round)) != COLLIE_OK)
            return st;
        if ((st = round_progress(req, &moved)) != COLLIE_OK)
            break;
        close_round(req);
    }
    if (moved)
        req->moves++;
    return st;
}
