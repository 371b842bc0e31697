/*
 * api.c — the public collective calls' common path: argument checks (api_check.c), then
 * blocking (plan, start, wait — plans of repeated calls are cached per team; v forms are
 * planned afresh each time, their arrays being the caller's), split-phase (collie_i*) and
 * persistent (collie_*_init + collie_start) forms; the four original collectives' entry
 * points (allgather … exscan: api_colls.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "core/api.h"
#include "core/internal.h"
#include "types/types.h"

typedef collie_call call;

/* Re-reports the message of a failed check with the function name in front. */
static int rewrap(int st, const char *fn) {
    char msg[600];
    const char *m = collie_last_error();
    const char *colon = strstr(m, ": ");
    if (strncmp(m, "rank ", 5) == 0 && colon)
        m = colon + 2;
    snprintf(msg, sizeof msg, "%s", m);
    return collie_fail(st, "%s: %s", fn, msg);
}

static int plan_owned(collie_team_t *team, const call *c, int persistent, collie_request_t **req) {
    if (!req)
        return collie_fail(COLLIE_ERR_ARG, "%s: request pointer is NULL", c->fn);
    *req = NULL;
    int st = collie_api_check(team, c);
    if (st)
        return st;
    collie_op_t op = collie_coll_has_op(c->coll) ? c->op : NULL;
    collie_coll_v v = { NULL, NULL, NULL, NULL, 0 };
    if (c->v) {
        v = *c->v;
        v.own = collie_call_own(c, team->rank);
    }
    st = collie_request_build_v(team, NULL, c->coll, c->sendbuf, c->recvbuf,
                                c->v ? v.own : c->count, c->v ? &v : NULL, c->dtype, op, c->root,
                                persistent, req);
    return st ? rewrap(st, c->fn) : COLLIE_OK;
}

/* The entry points below hold the team for their thread (owner.c) while they run, once the
 * handle is known to be a live team. */
static int enter(collie_team_t *team, const char *fn) {
    int bad = collie_team_check(team, fn);
    return bad ? bad : collie_team_enter(team, fn);
}

static int plan(collie_team_t *team, const call *c, int persistent, collie_request_t **req) {
    int st = enter(team, c->fn);
    if (st) {
        if (req)
            *req = NULL;
        return st;
    }
    st = plan_owned(team, c, persistent, req);
    collie_team_leave(team);
    return st;
}

/* Starts req and makes the first progress at once (messages leave eagerly). */
static int start_now(collie_request_t *req) {
    int st = collie_start(req);
    if (st)
        return st;
    st = collie_request_test(req, 0);
    return st < 0 ? st : COLLIE_OK;
}

static int nonblocking_owned(collie_team_t *team, const call *c, collie_request_t **req) {
    int st = plan(team, c, false, req);
    if (st)
        return st;
    st = start_now(*req);
    if (st < 0) {
        collie_request_free(*req);
        *req = NULL;
    }
    return st;
}

/* ---- blocking calls with a per-team plan cache ------------------------------------------- */

static bool same_call(const collie_request_t *r, const call *c, unsigned generation) {
    return r && r->args.coll == c->coll && r->args.count == c->count && r->dtype == c->dtype &&
           r->args.root == c->root && r->op == (collie_coll_has_op(c->coll) ? c->op : NULL) &&
           (!r->op || r->args.commutative == collie_op_commutative(c->op)) &&
           r->args.in_place == collie_call_in_place(c) && !r->args.v && !c->v &&
           r->algo_generation == generation;
}

/* The cached plan of this call with its buffers set, or NULL (*st: an error setting them). */
static collie_request_t *cached(collie_team_t *team, const call *c, int *st) {
    for (unsigned i = 0; i < sizeof team->cache / sizeof team->cache[0]; i++) {
        collie_request_t *r = team->cache[i];
        if (same_call(r, c, collie_select_generation)) {
            *st = collie_request_set_buffers(r, c->sendbuf, c->recvbuf);
            return *st ? NULL : r;
        }
    }
    return NULL;
}

/* A v form: planned for this call only (its arrays may change before the next). */
static int blocking_once(collie_team_t *team, const call *c) {
    collie_request_t *req = NULL;
    int st = plan(team, c, false, &req);
    if (!st)
        st = collie_start_owned(req);
    if (!st)
        st = collie_blocking_wait(req);
    collie_request_free(req);
    return st;
}

static int blocking_owned(collie_team_t *team, call *c) {
    if (!collie_coll_has_op(c->coll))
        c->op = NULL;
    int st = collie_api_check(team, c);
    if (st)
        return st;
    if (c->v)
        return blocking_once(team, c);
    collie_request_t *req = cached(team, c, &st);
    if (st)
        return st;
    if (!req) {
        if ((st = plan(team, c, true, &req)) != COLLIE_OK)
            return st;
        req->algo_generation = collie_select_generation;
        unsigned slot = team->cache_next++ % (sizeof team->cache / sizeof team->cache[0]);
        collie_request_free(team->cache[slot]);
        team->cache[slot] = req;
    }
    st = collie_start_owned(req);
    return st ? st : collie_blocking_wait(req);
}

static int blocking(collie_team_t *team, call *c) {
    int st = enter(team, c->fn);
    if (st)
        return st;
    st = blocking_owned(team, c);
    collie_team_leave(team);
    return st;
}

static int nonblocking(collie_team_t *team, const call *c, collie_request_t **req) {
    int st = enter(team, c->fn);
    if (st) {
        if (req)
            *req = NULL;
        return st;
    }
    st = nonblocking_owned(team, c, req);
    collie_team_leave(team);
    return st;
}

static int wait_here(collie_request_t *req) { return collie_request_test(req, COLLIE_BLOCK); }

int (*collie_blocking_wait)(collie_request_t *req) = wait_here;

int collie_api_blocking(collie_team_t *team, collie_call *c) { return blocking(team, c); }

int collie_api_nonblocking(collie_team_t *team, const collie_call *c, collie_request_t **req) {
    return nonblocking(team, c, req);
}

int collie_api_persistent(collie_team_t *team, const collie_call *c, collie_request_t **req) {
    return plan(team, c, COLLIE_REQ_BY_INIT, req);
}

int collie_api_persistent_ordered(collie_team_t *team, const collie_call *c, collie_request_t **req) {
    return plan(team, c, true, req);
}

int collie_allreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_op_t op) {
    call c = { "collie_allreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return blocking(team, &c);
}

int collie_reduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, collie_op_t op, int root) {
    call c = { "collie_reduce", COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root };
    return blocking(team, &c);
}

int collie_bcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root) {
    call c = { "collie_bcast", COLL_BCAST, buf, buf, count, NULL, dtype, NULL, root };
    return blocking(team, &c);
}

int collie_barrier(collie_team_t *team) {
    call c = { "collie_barrier", COLL_BARRIER, NULL, NULL, 0, NULL, COLLIE_UINT8, NULL, 0 };
    return blocking(team, &c);
}

int collie_iallreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                      collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    call c = { "collie_iallreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return nonblocking(team, &c, req);
}

int collie_ireduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req) {
    call c = { "collie_ireduce", COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root };
    return nonblocking(team, &c, req);
}

int collie_ibcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root,
                  collie_request_t **req) {
    call c = { "collie_ibcast", COLL_BCAST, buf, buf, count, NULL, dtype, NULL, root };
    return nonblocking(team, &c, req);
}

int collie_ibarrier(collie_team_t *team, collie_request_t **req) {
    call c = { "collie_ibarrier", COLL_BARRIER, NULL, NULL, 0, NULL, COLLIE_UINT8, NULL, 0 };
    return nonblocking(team, &c, req);
}

int collie_allreduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                          collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    call c = { "collie_allreduce_init", COLL_ALLREDUCE, sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_reduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                       collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req) {
    call c = { "collie_reduce_init", COLL_REDUCE, sendbuf, recvbuf, count, NULL, dtype, op, root };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_bcast_init(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype,
                      int root, collie_request_t **req) {
    call c = { "collie_bcast_init", COLL_BCAST, buf, buf, count, NULL, dtype, NULL, root };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_barrier_init(collie_team_t *team, collie_request_t **req) {
    call c = { "collie_barrier_init", COLL_BARRIER, NULL, NULL, 0, NULL, COLLIE_UINT8, NULL, 0 };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}
