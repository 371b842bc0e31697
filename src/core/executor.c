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
 * This file prepares a request and schedules its rounds and passes; the PUT steps are in
 * executor_put.c, the REDUCE steps in executor_reduce.c, their shared per-chunk helpers in
 * executor_impl.h.
 */
#include <stdlib.h>
#include <string.h>

#include "core/executor_impl.h"
#include "types/types.h"

#define DIRECT_CHUNK_TARGET (256u * 1024u)

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
        int st = collie_exec_put_progress(req, op, i, moved);
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
    int st = collie_exec_reduce_progress(req, op, i, moved);
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
