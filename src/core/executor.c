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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/base.h"
#include "core/internal.h"
#include "types/types.h"

#define DIRECT_CHUNK_TARGET (256u * 1024u)
#define OP_DONE UINT64_MAX

/* Single copy (process_vm_readv) for messages from direct_min in any call; from direct_mid_min
 * in calls up to direct_mid_max_call only when the call does not reduce.  Measured at P = 2
 * with the input rewritten before every call (collie-bench --fresh-data, docs/performance.md):
 * the kernel copy of a peer's just-written input made allreduce and reduce 1.2-1.6x slower
 * than the two copies through the slots from 32 to 128 KiB (it only won with the same input
 * reused, whose lines stay cached on the reader); a bcast's or gather's is even or faster. */
static bool use_direct(const collie_request_t *req, uint64_t msg_bytes) {
    const collie_transport *tp = req->team->tp;
    if (!tp->direct_ok || msg_bytes <= req->chunk_bytes)
        return false;
    if (msg_bytes >= tp->direct_min_bytes)
        return true;
    return msg_bytes >= tp->direct_mid_min_bytes && !collie_coll_has_op(req->args.coll) &&
           req->args.bytes <= tp->direct_mid_max_call_bytes;
}

static uint64_t chunk_size(const collie_request_t *req, uint64_t msg_bytes) {
    return use_direct(req, msg_bytes) ? req->direct_chunk_bytes : req->chunk_bytes;
}

static uint64_t chunk_count(const collie_request_t *req, uint64_t msg_bytes) {
    if (msg_bytes == 0)
        return 1;
    uint64_t c = chunk_size(req, msg_bytes);
    return (msg_bytes + c - 1) / c;
}

static char *local_ptr(const collie_request_t *req, sched_ref r) {
    return (char *)req->buf[r.buf] + r.off;
}

/* The buffer a reference really names (SEND is RECV when the call is in place). */
static int canonical_buf(const collie_request_t *req, int buf) {
    return buf == SBUF_SEND && req->args.in_place ? SBUF_RECV : buf;
}

static bool writes_over(const collie_request_t *req, const sched_op *w, sched_ref src, uint64_t bytes) {
    if (w->kind != SCHED_REDUCE || !w->bytes)
        return false;
    if (canonical_buf(req, w->dst.buf) != canonical_buf(req, src.buf))
        return false;
    return w->dst.off < src.off + bytes && src.off < w->dst.off + w->bytes;
}

/* deadline[op] of a PUT: the first later round writing its source (nrounds if none). */
static void compute_deadlines(collie_request_t *req) {
    const collie_schedule *s = &req->sched;
    for (uint32_t k = 0; k < s->nrounds; k++) {
        const sched_round *rk = &s->rounds[k];
        for (uint32_t i = rk->first_op; i < rk->first_op + rk->nops; i++) {
            const sched_op *op = &s->ops[i];
            req->deadline[i] = s->nrounds;
            if (op->kind != SCHED_PUT || !op->bytes)
                continue;
            for (uint32_t j = k + 1; j < s->nrounds && req->deadline[i] == s->nrounds; j++)
                for (uint32_t w = s->rounds[j].first_op; w < s->rounds[j].first_op + s->rounds[j].nops; w++)
                    if (writes_over(req, &s->ops[w], s->srcs[op->src], op->bytes)) {
                        req->deadline[i] = j;
                        break;
                    }
        }
    }
}

int collie_exec_prepare(collie_request_t *req) {
    collie_team_t *team = req->team;
    collie_transport *tp = team->tp;
    size_t elem = req->args.elem_size ? req->args.elem_size : 1;
    req->chunk_bytes = (tp->slot_bytes / elem) * elem;
    if (req->chunk_bytes == 0)
        return collie_fail(COLLIE_ERR_UNSUPPORTED,
                           "elements of %zu bytes exceed the transport's slot of %u bytes "
                           "(raise COLLIE_SHM_SLOT_BYTES)", elem, tp->slot_bytes);
    req->direct_chunk_bytes = (DIRECT_CHUNK_TARGET / elem) * elem;
    if (req->direct_chunk_bytes < req->chunk_bytes)
        req->direct_chunk_bytes = req->chunk_bytes;
    uint32_t nops = req->sched.nops ? req->sched.nops : 1;
    req->progress = calloc(nops, sizeof *req->progress);
    req->last_seq = calloc(nops, sizeof *req->last_seq);
    req->deadline = calloc(nops, sizeof *req->deadline);
    req->trailing = calloc(nops, sizeof *req->trailing);
    req->staged = calloc(nops, sizeof *req->staged);
    req->busy = calloc(2 * (size_t)team->size, sizeof *req->busy);
    req->nchunks = calloc(nops, sizeof *req->nchunks);
    req->progress_cap = nops;
    if (req->sched.tmp_bytes) {
        req->tmp_alloc = aligned_alloc(64, (req->sched.tmp_bytes + 63) & ~(uint64_t)63);
        req->buf[SBUF_TMP] = req->tmp_alloc;
    }
    if (!req->progress || !req->last_seq || !req->busy || !req->nchunks || !req->deadline || !req->trailing || !req->staged ||
        (req->sched.tmp_bytes && !req->tmp_alloc))
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the state of a %s request",
                           collie_coll_name(req->args.coll));
    compute_deadlines(req);
    for (uint32_t i = 0; i < req->sched.nops; i++)
        req->nchunks[i] = chunk_count(req, req->sched.ops[i].bytes);
    return COLLIE_OK;
}

void collie_exec_restart(collie_request_t *req) {
    req->round = 0;
    req->ntrailing = 0;
    for (uint32_t i = 0; req->nstaged && i < req->progress_cap; i++) {
        free(req->staged[i]);
        req->staged[i] = NULL;
    }
    req->nstaged = 0;
    memset(req->progress, 0, req->progress_cap * sizeof *req->progress);
    req->blocked_peer = -1;
}

/* ---- PUT ------------------------------------------------------------------------------ */

/* The check word of one chunk: the call's hash and the message size. */
static uint32_t chunk_check(const collie_request_t *req, uint64_t msg_bytes) {
    uint32_t h = req->check ^ (uint32_t)msg_bytes ^ (uint32_t)(msg_bytes >> 32);
    return h * 0x9E3779B1u;
}

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
static int stage(collie_request_t *req, const sched_op *op, uint32_t i) {
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

/* Tells the waiting loop which word to watch: the head request can go on once
 * *word >= value (the first such word of a pass is enough). */
static void note_wait(collie_request_t *req, const _Atomic uint64_t *word, uint64_t value) {
    if (!req->team->wait_word) {
        req->team->wait_word = word;
        req->team->wait_value = value;
    }
}

static int put_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
    collie_transport *tp = req->team->tp;
    int q = op->peer;
    collie_channel *ch = &tp->to[q];
    uint64_t *prog = &req->progress[i];
    uint64_t n = req->nchunks[i], csize = n > 1 ? chunk_size(req, op->bytes) : op->bytes;
    bool direct = use_direct(req, op->bytes);
    if (*prog == 0)
        req->last_seq[i] = 0;
    if (direct && *prog == 0 && req->deadline[i] < req->sched.nrounds && !req->staged[i])
        if (stage(req, op, i) != COLLIE_OK)
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

/* ---- REDUCE --------------------------------------------------------------------------- */

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

static int reduce_progress(collie_request_t *req, const sched_op *op, uint32_t i, bool *moved) {
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
            int st = stage(req, &req->sched.ops[i], i);
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
