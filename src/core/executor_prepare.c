/*
 * executor_prepare.c — a request's executor state (executor.c runs it): chunk sizes (the
 * slot's, or larger single-copy chunks, as this rank's way for its messages gives them),
 * per-operation progress, the deadline of every PUT (the first later round that writes its
 * source), and the reset before each start.
 */
#include <stdlib.h>
#include <string.h>

#include "core/executor_impl.h"
#include "core/path_tune.h"

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

/* Every operation's chunk size and count (they depend on use_direct; a receiver that
 * follows its sender's way recounts at the message's first chunk, executor.c). */
static void count_chunks(collie_request_t *req) {
    for (uint32_t i = 0; i < req->sched.nops; i++) {
        uint64_t bytes = req->sched.ops[i].bytes;
        req->nchunks[i] = chunk_count(req, bytes);
        req->chunk_len[i] = req->nchunks[i] > 1 ? chunk_size(req, bytes) : bytes;
    }
}

/* Whether some message of req's schedule may take the kernel copy. */
static bool any_kernel_copy(const collie_request_t *req) {
    for (uint32_t i = 0; i < req->sched.nops; i++)
        if (kernel_copy_allowed(req, req->sched.ops[i].bytes))
            return true;
    return false;
}

/* How this rank's messages move (executor_impl.h use_direct).  A reduction's receiver
 * combines several senders' chunks in step, so there every rank keeps the same rule, rank
 * 0's COLLIE_SHM_KERNEL_MIN: the kernel copy (where the thresholds allow it) for calls of
 * at least that many bytes; unset or 0, never.  Measured (AMD EPYC VM, 2026-11-29,
 * collie-bench --algo A --barrier-each, slowest rank, with the kernel copy against
 * without): reduce `flat` at P = 3, 256 KiB-4 MiB, 48-49 / 198-210 / 871-930 us against
 * 18-19 / 58-80 / 316-324; allreduce `ring` at P = 4, 1-16 MiB, 2-2.3x slower;
 * `rabenseifner` at P = 3 2.6-4.9x.  (The reductions' own driver, direct_segments, times
 * the kernel copy per call instead: path_tune.c.)  Otherwise each rank chooses for the
 * messages it sends (its own COLLIE_SHM_KERNEL_MIN; unset: timed per call, path_tune.c)
 * and the receivers follow. */
static void decide_way(collie_request_t *req) {
    const collie_transport *tp = req->team->tp;
    if (!any_kernel_copy(req))
        return;
    if (collie_coll_has_op(req->args.coll)) {
        uint64_t from = tp->cells ? tp->cells->kernel_min : 0;
        req->send_user = tp->cells && (from == 0 || req->args.bytes < from);
        return;
    }
    if (tp->kernel_min_own == 0)
        req->way_tuned = true;
    else
        req->send_user = req->args.bytes < tp->kernel_min_own;
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
    req->chunk_len = calloc(nops, sizeof *req->chunk_len);
    req->progress_cap = nops;
    if (req->sched.tmp_bytes) {
        req->tmp_alloc = aligned_alloc(64, (req->sched.tmp_bytes + 63) & ~(uint64_t)63);
        req->buf[SBUF_TMP] = req->tmp_alloc;
    }
    if (!req->progress || !req->last_seq || !req->busy || !req->nchunks || !req->chunk_len ||
        !req->deadline || !req->trailing || !req->staged ||
        (req->sched.tmp_bytes && !req->tmp_alloc))
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the state of a %s request",
                           collie_coll_name(req->args.coll));
    compute_deadlines(req);
    decide_way(req);
    count_chunks(req);
    return COLLIE_OK;
}

void collie_exec_user_space_only(collie_request_t *req) {
    req->user_space_only = true;
    req->way_tuned = false;
    req->send_user = false;
    count_chunks(req);
}

/* A request whose way is tuned: this call's way, and its start if it is a trial call. */
static void pick_way(collie_request_t *req) {
    bool user = path_tune_sched_pick(req) == PATH_USER;
    if (user != req->send_user) {
        req->send_user = user;
        count_chunks(req);
    }
    req->way_posted_ns = path_tune_sched_timed(req) ? collie_now_ns() : 0;
}

void collie_exec_finished(collie_request_t *req) {
    if (req->way_tuned && req->way_posted_ns) {
        path_tune_sched_record(req, req->send_user ? PATH_USER : PATH_KERNEL,
                               collie_now_ns() - req->way_posted_ns);
        req->way_posted_ns = 0;
    }
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
    if (req->way_tuned)
        pick_way(req);
}
