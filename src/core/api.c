/*
 * api.c — the public collective calls: argument checks with clear messages, then
 * blocking (plan, start, wait — plans of repeated calls are cached per team),
 * split-phase (collie_i*) and persistent (collie_*_init + collie_start) forms.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "base/base.h"
#include "core/internal.h"
#include "types/types.h"

typedef struct call {
    const char *fn;
    int coll;
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    collie_dtype_t dtype;
    collie_op_t op;
    int root;
} call;

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

/* Calls from this size on check that their buffers are mapped for the whole count (one
 * msync(MS_ASYNC), which walks the mappings and writes nothing), so a count larger than
 * the buffer is this rank's COLLIE_ERR_ARG, not a peer's failed read. */
#define MAPPED_CHECK_BYTES (64u * 1024u)

static int check_mapped(const call *c, const char *which, const void *buf, uint64_t bytes) {
    if (bytes < MAPPED_CHECK_BYTES || !buf || buf == COLLIE_IN_PLACE)
        return COLLIE_OK;
    uintptr_t start = (uintptr_t)buf, end = start + bytes, lo = start & ~(uintptr_t)4095;
    if (end < start)
        return collie_fail(COLLIE_ERR_ARG, "%s: %s %p + %llu bytes wraps around the address "
                           "space", c->fn, which, buf, (unsigned long long)bytes);
    if (msync((void *)lo, end - lo, MS_ASYNC) == 0)
        return COLLIE_OK;
    return collie_fail(COLLIE_ERR_ARG, "%s: %s %p is not mapped for %llu bytes (count %zu of "
                       "%s; a count larger than the buffer?)", c->fn, which, buf,
                       (unsigned long long)bytes, c->count, collie_dtype_name(c->dtype));
}

static int check_extent(const call *c, int rank) {
    uint64_t bytes = (uint64_t)c->count * collie_dtype_size(c->dtype);
    bool at_root = c->coll == COLL_ALLREDUCE || c->coll == COLL_BCAST || rank == c->root;
    int st = c->coll == COLL_BCAST ? COLLIE_OK : check_mapped(c, "sendbuf", c->sendbuf, bytes);
    if (!st && at_root)
        st = check_mapped(c, c->coll == COLL_BCAST ? "buf" : "recvbuf", c->recvbuf, bytes);
    return st;
}

static int check_buffers(const call *c, int rank) {
    if (c->count == 0)
        return COLLIE_OK;
    if (c->coll == COLL_BCAST && c->recvbuf == COLLIE_IN_PLACE)
        return collie_fail(COLLIE_ERR_ARG, "%s: buf cannot be COLLIE_IN_PLACE (a broadcast "
                           "is always in place)", c->fn);
    if (c->coll == COLL_BCAST)
        return c->recvbuf ? check_extent(c, rank) : collie_fail(COLLIE_ERR_ARG, "%s: buf is NULL", c->fn);
    bool at_root = c->coll == COLL_ALLREDUCE || rank == c->root;
    if (!c->sendbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: sendbuf is NULL (use COLLIE_IN_PLACE to reduce "
                           "in recvbuf)", c->fn);
    if (c->sendbuf == COLLIE_IN_PLACE && !at_root)
        return collie_fail(COLLIE_ERR_ARG, "%s: COLLIE_IN_PLACE is only valid at the root (%d)",
                           c->fn, c->root);
    if (at_root && !c->recvbuf)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf is NULL", c->fn);
    if (c->recvbuf == COLLIE_IN_PLACE)
        return collie_fail(COLLIE_ERR_ARG, "%s: recvbuf cannot be COLLIE_IN_PLACE", c->fn);
    return check_extent(c, rank);
}

static int check_call(collie_team_t *team, const call *c) {
    int bad = collie_team_check(team, c->fn);
    if (bad)
        return bad;
    if (team->failed)
        return collie_fail(team->failed, "%s: the team failed earlier: %s", c->fn, team->fail_msg);
    if (c->coll == COLL_BARRIER)
        return COLLIE_OK;
    if (!collie_dtype_valid(c->dtype))
        return collie_fail(COLLIE_ERR_ARG, "%s: invalid datatype handle %llu", c->fn,
                           (unsigned long long)c->dtype);
    size_t elem = collie_dtype_size(c->dtype);
    if (c->count > (SIZE_MAX >> 2) / elem)
        return collie_fail(COLLIE_ERR_ARG, "%s: count %zu of %s (%zu bytes each) overflows", c->fn,
                           c->count, collie_dtype_name(c->dtype), elem);
    if (c->coll != COLL_BCAST) {
        if (!collie_op_valid(c->op))
            return collie_fail(COLLIE_ERR_ARG, "%s: op is NULL or not a valid operation", c->fn);
        int st = collie_op_check(c->op, c->dtype);
        if (st)
            return rewrap(st, c->fn);
    }
    if (c->coll == COLL_REDUCE || c->coll == COLL_BCAST)
        if (c->root < 0 || c->root >= team->size)
            return collie_fail(COLLIE_ERR_ARG, "%s: root %d is out of range for a team of %d ranks",
                               c->fn, c->root, team->size);
    return check_buffers(c, team->rank);
}

static int plan(collie_team_t *team, const call *c, int persistent, collie_request_t **req) {
    if (!req)
        return collie_fail(COLLIE_ERR_ARG, "%s: request pointer is NULL", c->fn);
    *req = NULL;
    int st = check_call(team, c);
    if (st)
        return st;
    collie_op_t op = c->coll == COLL_ALLREDUCE || c->coll == COLL_REDUCE ? c->op : NULL;
    st = collie_request_build(team, c->coll, c->sendbuf, c->recvbuf, c->count, c->dtype, op,
                              c->root, persistent, req);
    return st ? rewrap(st, c->fn) : COLLIE_OK;
}

/* Starts req and makes the first progress at once (messages leave eagerly). */
static int start_now(collie_request_t *req) {
    int st = collie_start(req);
    if (st)
        return st;
    st = collie_request_test(req, 0);
    return st < 0 ? st : COLLIE_OK;
}

static int nonblocking(collie_team_t *team, const call *c, collie_request_t **req) {
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
           r->args.root == c->root && r->op == (c->coll == COLL_BCAST ? NULL : c->op) &&
           (!r->op || r->args.commutative == collie_op_commutative(c->op)) &&
           r->args.in_place == (c->sendbuf == COLLIE_IN_PLACE || c->coll == COLL_BCAST) &&
           r->algo_generation == generation;
}

static collie_request_t *cached(collie_team_t *team, const call *c) {
    for (unsigned i = 0; i < sizeof team->cache / sizeof team->cache[0]; i++) {
        collie_request_t *r = team->cache[i];
        if (same_call(r, c, collie_select_generation)) {
            r->buf[SBUF_SEND] = r->args.in_place ? c->recvbuf : (void *)c->sendbuf;
            r->buf[SBUF_RECV] = c->recvbuf;
            return r;
        }
    }
    return NULL;
}

static int blocking(collie_team_t *team, call *c) {
    if (c->coll == COLL_BARRIER || c->coll == COLL_BCAST)
        c->op = NULL;
    int st = check_call(team, c);
    if (st)
        return st;
    collie_request_t *req = cached(team, c);
    if (!req) {
        if ((st = plan(team, c, true, &req)) != COLLIE_OK)
            return st;
        req->algo_generation = collie_select_generation;
        unsigned slot = team->cache_next++ % (sizeof team->cache / sizeof team->cache[0]);
        collie_request_free(team->cache[slot]);
        team->cache[slot] = req;
    }
    st = collie_start(req);
    return st ? st : collie_blocking_wait(req);
}

static int wait_here(collie_request_t *req) { return collie_request_test(req, COLLIE_BLOCK); }

int (*collie_blocking_wait)(collie_request_t *req) = wait_here;

int collie_allreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_op_t op) {
    call c = { "collie_allreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0 };
    return blocking(team, &c);
}

int collie_reduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, collie_op_t op, int root) {
    call c = { "collie_reduce", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root };
    return blocking(team, &c);
}

int collie_bcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root) {
    call c = { "collie_bcast", COLL_BCAST, buf, buf, count, dtype, NULL, root };
    return blocking(team, &c);
}

int collie_barrier(collie_team_t *team) {
    call c = { "collie_barrier", COLL_BARRIER, NULL, NULL, 0, COLLIE_UINT8, NULL, 0 };
    return blocking(team, &c);
}

int collie_iallreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                      collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    call c = { "collie_iallreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0 };
    return nonblocking(team, &c, req);
}

int collie_ireduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req) {
    call c = { "collie_ireduce", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root };
    return nonblocking(team, &c, req);
}

int collie_ibcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root,
                  collie_request_t **req) {
    call c = { "collie_ibcast", COLL_BCAST, buf, buf, count, dtype, NULL, root };
    return nonblocking(team, &c, req);
}

int collie_ibarrier(collie_team_t *team, collie_request_t **req) {
    call c = { "collie_ibarrier", COLL_BARRIER, NULL, NULL, 0, COLLIE_UINT8, NULL, 0 };
    return nonblocking(team, &c, req);
}

int collie_allreduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                          collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    call c = { "collie_allreduce_init", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0 };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_reduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                       collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req) {
    call c = { "collie_reduce_init", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_bcast_init(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype,
                      int root, collie_request_t **req) {
    call c = { "collie_bcast_init", COLL_BCAST, buf, buf, count, dtype, NULL, root };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}

int collie_barrier_init(collie_team_t *team, collie_request_t **req) {
    call c = { "collie_barrier_init", COLL_BARRIER, NULL, NULL, 0, COLLIE_UINT8, NULL, 0 };
    return plan(team, &c, COLLIE_REQ_BY_INIT, req);
}
