/*
 * bench_calls.c — collie-bench's calls: its own communication (agreeing, synchronising,
 * gathering times) that never uses the collective being measured, and the measured calls
 * in their four modes (persistent, blocking, nonblocking, poll); prepare() plans the
 * request of one size and finds out whether the forced algorithm took it, and if not why.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void die_collie(const bench *b, int st) {
    fprintf(stderr, "collie-bench: rank %d: %s: %s\n", b->rank, collie_strerror(st),
            collie_last_error());
    exit(1);
}

void must(const bench *b, int st) {
    if (st != COLLIE_OK)
        die_collie(b, st);
}

/* The benchmark's own communication (agreeing, synchronising, gathering times) never uses
 * the collective being measured, so it runs whatever algorithm is forced for that one, and
 * no collie_force_algorithm() call (which invalidates cached blocking plans) happens while
 * a size is measured.  The other collectives are set to "auto" once, at the start. */
void aux_allreduce(const bench *b, const void *in, void *out, size_t n, collie_dtype_t t,
                          collie_op_t op) {
    if (b->o.coll != COLL_ALLREDUCE) {
        must(b, collie_allreduce(b->team, in, out, n, t, op));
        return;
    }
    must(b, collie_reduce(b->team, in, out, n, t, op, 0));
    must(b, collie_bcast(b->team, out, n, t, 0));
}

int agree_min(const bench *b, int v) {
    int32_t in = v, out = 0;
    aux_allreduce(b, &in, &out, 1, COLLIE_INT32, COLLIE_MIN);
    return out;
}

int64_t aux_bcast0(const bench *b, int64_t v) {
    int64_t in = b->rank == 0 ? v : 0, out = v;
    if (b->o.coll != COLL_BCAST)
        must(b, collie_bcast(b->team, &out, 1, COLLIE_INT64, 0));
    else
        aux_allreduce(b, &in, &out, 1, COLLIE_INT64, COLLIE_SUM);
    return out;
}

void aux_barrier(const bench *b) {
    if (b->o.coll != COLL_BARRIER)
        must(b, collie_barrier(b->team));
    else
        agree_min(b, 0);
}

/* Rank 0 waits for every rank, then releases them: it leaves first, every other rank one
 * hand-over later.  Through collectives other than the measured one (whose algorithm may
 * be forced). */
static void aux_release(const bench *b) {
    int64_t one = 1, sum = 0, back = 0;
    if (b->o.coll == COLL_GATHER || b->o.coll == COLL_SCATTER) {
        must(b, collie_reduce(b->team, &one, &sum, 1, COLLIE_INT64, COLLIE_SUM, 0));
        must(b, collie_bcast(b->team, &sum, 1, COLLIE_INT64, 0));
        return;
    }
    int64_t *all = b->rank == 0 ? calloc((size_t)b->P, sizeof *all) : NULL;
    if (b->rank == 0 && !all)
        die_collie(b, COLLIE_ERR_NOMEM);
    must(b, collie_gather(b->team, &one, all, 1, COLLIE_INT64, 0));
    must(b, collie_scatter(b->team, all, &back, 1, COLLIE_INT64, 0));
    free(all);
}

void aux_sync_each(const bench *b) {
    if (b->o.release_each)
        aux_release(b);
    else
        aux_barrier(b);
}

/* The harness's own calls (the times' allreduce, the iteration count's bcast, the release's
 * gather and scatter) run `auto`, whatever COLLIE_<COLL>_ALGO says.  The barrier before each
 * timed call keeps COLLIE_BARRIER_ALGO: it is part of what is measured (the order in which
 * it lets the ranks go starts their clocks; docs/measurements.md, "The barrier's exit
 * order"), and until 2026-12-04 (session 50) this reset made every comparison of barriers
 * by the call after them time the same barrier twice. */
void set_auto_except_measured(const bench *b) {
    for (int c = 0; c < COLL_COUNT; c++)
        if (c != b->o.coll && c != COLL_BARRIER)
            must(b, collie_force_algorithm(c, "auto"));
}

const void *send_ptr(const bench *b) {
    bool in_place = b->o.in_place && (b->o.coll == COLL_ALLREDUCE || b->rank == b->o.root);
    return in_place ? COLLIE_IN_PLACE : b->sbuf;
}

/* The request of one size: in persistent mode the collie_*_init request that is timed;
 * in the other modes one planned like the blocking calls' cached plans (matched by start
 * order), never started, which names the algorithm those calls run (a persistent request,
 * matched by initialization order, may take another: drivers decline it). */
static int init_request(const bench *b, size_t count, collie_request_t **req) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return o->mode == MODE_PERSISTENT ? more_call(b, count, 2, req) : more_request(b, count, req);
    if (o->mode != MODE_PERSISTENT) {
        bool reduces = o->coll == COLL_ALLREDUCE || o->coll == COLL_REDUCE;
        bool barrier = o->coll == COLL_BARRIER;
        int st = collie_request_build(b->team, o->coll, reduces ? send_ptr(b) : NULL,
                                      barrier ? NULL : b->rbuf, barrier ? 0 : count,
                                      barrier ? COLLIE_UINT8 : o->dtype, reduces ? o->op : NULL,
                                      o->coll == COLL_ALLREDUCE || barrier ? 0 : o->root, true, req);
        return st;
    }
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_allreduce_init(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, req);
    case COLL_REDUCE:
        return collie_reduce_init(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op,
                                  o->root, req);
    case COLL_BCAST: return collie_bcast_init(b->team, b->rbuf, count, o->dtype, o->root, req);
    default: return collie_barrier_init(b->team, req);
    }
}

static int call_blocking(const bench *b, size_t count) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return more_call(b, count, 0, NULL);
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_allreduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op);
    case COLL_REDUCE:
        return collie_reduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, o->root);
    case COLL_BCAST: return collie_bcast(b->team, b->rbuf, count, o->dtype, o->root);
    default: return collie_barrier(b->team);
    }
}

static int call_nonblocking(const bench *b, size_t count, collie_request_t **r) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return more_call(b, count, 1, r);
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_iallreduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, r);
    case COLL_REDUCE:
        return collie_ireduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, o->root, r);
    case COLL_BCAST: return collie_ibcast(b->team, b->rbuf, count, o->dtype, o->root, r);
    default: return collie_ibarrier(b->team, r);
    }
}

int run_once(const bench *b, collie_request_t *req, size_t count) {
    collie_request_t *r = NULL;
    int st;
    if (b->o.mode == MODE_PERSISTENT) {
        st = collie_start(req);
        return st != COLLIE_OK ? st : collie_wait(req);
    }
    if (b->o.mode == MODE_BLOCKING)
        return call_blocking(b, count);
    st = call_nonblocking(b, count, &r);
    if (st == COLLIE_OK && b->o.mode == MODE_POLL)
        do
            st = collie_test(r, 0);
        while (st == COLLIE_TIMEOUT);
    if (st == COLLIE_OK)
        st = collie_wait(r);
    collie_request_free(r);
    return st;
}

void run_loop(const bench *b, collie_request_t *req, size_t count, long n) {
    for (long i = 0; i < n; i++)
        must(b, run_once(b, req, count));
}

static bool is_forced(const bench *b) { return strcmp(b->spec, "auto") != 0; }

/* Whether the request runs another algorithm than the forced one. */
static bool fell_back(const bench *b, const char *used) {
    size_t n = strcspn(b->spec, ":");
    return is_forced(b) && (strlen(used) != n || strncmp(b->spec, used, n) != 0);
}

/* Why the forced algorithm declines the call req plans: the library falls back to another
 * algorithm silently, so ask the registry with the request's own arguments. */
static void decline_reason(bench *b, const collie_request_t *req) {
    char name[64];
    const char *why = NULL;
    collie_coll_args a = req->args;
    const collie_algorithm *alg = NULL;
    if (collie_parse_algo_spec(b->spec, name, sizeof name, &a.params) == COLLIE_OK)
        alg = collie_algorithm_find(b->o.coll, name);
    if (alg && !collie_algorithm_accepts(alg, &a, &why))
        snprintf(b->why, sizeof b->why, "%s", why ? why : "no reason given");
    else
        snprintf(b->why, sizeof b->why, "reason unknown");
}

/* Plans the request of one size (init_request); the least state over ranks: PREP_OK,
 * PREP_FELL_BACK (reason in b->why), PREP_FAILED (forced algorithm only; under auto a
 * failure is an error).  used receives the algorithm the request runs. */
int prepare(bench *b, size_t count, collie_request_t **req, char *used, size_t n) {
    *req = NULL;
    int st = init_request(b, count, req), state = st != COLLIE_OK ? PREP_FAILED : PREP_OK;
    snprintf(b->why, sizeof b->why, "%s", st != COLLIE_OK ? collie_last_error() : "");
    snprintf(used, n, "%s", *req && collie_request_algorithm(*req) ? collie_request_algorithm(*req)
                                                                    : "?");
    if (st == COLLIE_OK && fell_back(b, used)) {
        state = PREP_FELL_BACK;
        decline_reason(b, *req);
    }
    int all = agree_min(b, state);
    if (all == PREP_FAILED && !is_forced(b) && st != COLLIE_OK)
        die_collie(b, st);
    if (all == PREP_FAILED && !is_forced(b))
        exit(1);
    if (all < state)
        snprintf(b->why, sizeof b->why, "declined on another rank");
    if (all == PREP_FAILED) {
        collie_request_free(*req);
        *req = NULL;
    }
    return all;
}
