/*
 * request.c — requests: plan (select an algorithm, build its schedule), start, progress
 * the team's queue, free.  Testing and waiting (spin, yield, sleep) are in wait.c.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "types/types.h"

static uint32_t call_hash(const collie_request_t *req);

static const collie_algorithm *choose(collie_coll_args *a) {
    collie_algo_params params;
    const char *name = collie_forced_algorithm(a->coll, &params);
    if (name) {
        const collie_algorithm *alg = collie_algorithm_find(a->coll, name);
        const char *why = "unknown";
        a->params = params;
        if (alg && collie_algorithm_accepts(alg, a, &why))
            return alg;
        collie_log(COLLIE_LOG_INFO, "forced %s algorithm %s declines this call (%s); selecting another",
                   collie_coll_name(a->coll), name, why ? why : "");
        memset(&a->params, 0, sizeof a->params);
    }
    return collie_select(a);
}

int collie_request_build(collie_team_t *team, int coll, const void *sendbuf, void *recvbuf,
                         size_t count, collie_dtype_t dtype, collie_op_t op, int root,
                         int persistent, collie_request_t **out) {
    return collie_request_build_with(team, NULL, coll, sendbuf, recvbuf, count, dtype, op, root,
                                     persistent, out);
}

int collie_request_build_with(collie_team_t *team, const collie_algorithm *alg, int coll,
                              const void *sendbuf, void *recvbuf, size_t count,
                              collie_dtype_t dtype, collie_op_t op, int root, int persistent,
                              collie_request_t **out) {
    return collie_request_build_v(team, alg, coll, sendbuf, recvbuf, count, NULL, dtype, op,
                                  root, persistent, out);
}

/* A send buffer that overlaps the receive buffer without COLLIE_IN_PLACE (MPI calls it
 * erroneous; MPI-1 programs passed, say, an allgather's own block of recvbuf as sendbuf):
 * every algorithm may overwrite such input before it has read or sent all of it (wrong
 * results, found by mp_alias), so the call reads a private copy, made at each start. */
static int set_aside_if_aliased(collie_request_t *req) {
    uint64_t send, recv;
    collie_coll_buffer_bytes(&req->args, req->args.rank, &send, &recv);
    const char *s = req->buf[SBUF_SEND], *r = req->buf[SBUF_RECV];
    req->aliased_send = NULL;
    if (!send || !recv || !s || !r || !(s < r + recv && r < s + send))
        return COLLIE_OK;
    if (req->send_copy_cap < send) {
        void *p = realloc(req->send_copy, send);
        if (!p)
            return collie_fail(COLLIE_ERR_NOMEM, "no memory for a copy of the %llu-byte send "
                               "buffer that overlaps the receive buffer",
                               (unsigned long long)send);
        req->send_copy = p;
        req->send_copy_cap = send;
    }
    static _Atomic bool logged;   /* once per process */
    if (!atomic_exchange(&logged, true))
        collie_log(COLLIE_LOG_WARN, "rank %d: collie_%s: sendbuf overlaps recvbuf (MPI calls that "
                   "erroneous; COLLIE_IN_PLACE says it): the send data are copied aside at the "
                   "start of every such call", req->args.rank, collie_coll_name(req->args.coll));
    req->aliased_send = s;
    req->send_copy_bytes = send;
    req->buf[SBUF_SEND] = req->send_copy;
    return COLLIE_OK;
}

int collie_request_set_buffers(collie_request_t *req, const void *sendbuf, void *recvbuf) {
    if (req->args.coll == COLL_SCATTER && recvbuf == COLLIE_IN_PLACE)
        recvbuf = (void *)sendbuf;
    req->buf[SBUF_SEND] = req->args.in_place ? recvbuf : (void *)sendbuf;
    req->buf[SBUF_RECV] = recvbuf;
    return req->args.in_place ? COLLIE_OK : set_aside_if_aliased(req);
}

static void fill_args(collie_request_t *req, collie_team_t *team, int coll, bool in_place,
                      size_t count, collie_dtype_t dtype, collie_op_t op, int root) {
    collie_coll_args *a = &req->args;
    a->coll = coll;
    a->rank = team->rank;
    a->size = team->size;
    a->root = root;
    a->count = count;
    a->elem_size = coll == COLL_BARRIER ? 1 : collie_dtype_size(dtype);
    a->bytes = (uint64_t)count * a->elem_size;
    a->commutative = op ? collie_op_commutative(op) : true;
    a->idempotent = op ? collie_op_idempotent(op) : false;
    a->in_place = in_place;
    a->shared_memory = team->tp->shared_memory;
    a->multicast = team->mcast != NULL;
    a->single_copy = collie_team_single_copy(team);
    a->cell_bytes = collie_team_cell_bytes(team);
    a->shared_cores = team->tp->shared_cores;
    a->node_of = team->tp->node_of;
    a->nnodes = team->tp->nnodes;
}

int collie_request_build_v(collie_team_t *team, const collie_algorithm *alg, int coll,
                           const void *sendbuf, void *recvbuf, size_t count,
                           const collie_coll_v *v, collie_dtype_t dtype, collie_op_t op,
                           int root, int persistent, collie_request_t **out) {
    collie_request_t *req = calloc(1, sizeof *req);
    if (!req)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate a request");
    int st = collie_handle_add(req, COLLIE_HANDLE_REQUEST);
    if (st) {
        free(req);
        return st;
    }
    team->nrequests++;   /* collie_team_free refuses while any is not freed */
    collie_coll_args *a = &req->args;
    bool in_place = sendbuf == COLLIE_IN_PLACE || coll == COLL_BCAST ||
                    (coll == COLL_SCATTER && recvbuf == COLLIE_IN_PLACE);
    fill_args(req, team, coll, in_place, count, dtype, op, root);
    a->any_order = persistent == COLLIE_REQ_BY_INIT;
    if (v) {
        req->vstore = *v;
        a->v = &req->vstore;
    }
    req->team = team;
    req->dtype = dtype;
    req->op = op;
    req->persistent = persistent != 0;
    if (a->any_order)
        req->pers_id = team->pers_seq++ & ~COLLIE_PERSISTENT_SEQ;
    st = collie_request_set_buffers(req, sendbuf, recvbuf);
    if (st) {
        collie_handle_remove(req, COLLIE_HANDLE_REQUEST);
        team->nrequests--;
        free(req);
        return st;
    }
    req->algo = alg ? alg : choose(a);
    if (!req->algo) {
        bool commutative = a->commutative;
        collie_handle_remove(req, COLLIE_HANDLE_REQUEST);
        team->nrequests--;
        free(req);
        return collie_fail(COLLIE_ERR_UNSUPPORTED, "no %s algorithm accepts this call (%zu elements, "
                           "%s op)", collie_coll_name(coll), count,
                           commutative ? "commutative" : "non-commutative");
    }
    sched_init(&req->sched, a->rank, a->size, a->elem_size);
    req->algo->build(&req->sched, a);
    sched_finish(&req->sched);
    collie_call_id_init(req);
    req->check_base = call_hash(req);
    st = req->sched.error ? collie_fail(req->sched.error, "building the %s schedule failed",
                                            req->algo->name)
                              : collie_exec_prepare(req);
    if (!st && req->algo->driver)
        st = req->algo->driver->prepare(req);
    if (!st && team->check_calls)
        st = collie_check_plan(req);
    if (st) {
        collie_request_free(req);
        return st;
    }
    *out = req;
    return COLLIE_OK;
}

static uint32_t mix(uint32_t h, uint64_t v) {
    h ^= (uint32_t)v ^ (uint32_t)(v >> 32);
    h *= 0x9E3779B1u;
    return h ^ (h >> 15);
}

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/* Everything of a call that all ranks must agree on, except its sequence number. */
static uint32_t call_hash(const collie_request_t *req) {
    uint32_t h = mix(0x5EED, (uint64_t)req->args.coll | (uint64_t)req->id.vform << 8);
    h = mix(h, req->id.bytes);
    h = mix(h, (uint64_t)req->args.root);
    h = mix(h, name_hash(req->algo->name));
    h = mix(h, req->id.op);
    return mix(h, req->dtype);
}

/* COLLIE_ERR_ARG unless req is a live request whose team is live. */
int collie_request_check(const collie_request_t *req, const char *fn) {
    if (!req)
        return collie_fail(COLLIE_ERR_ARG, "%s: request is NULL", fn);
    if (!collie_handle_valid(req, COLLIE_HANDLE_REQUEST))
        return collie_fail(COLLIE_ERR_ARG, "%s: %p is not a live request (freed already?)", fn,
                           (const void *)req);
    if (!collie_handle_valid(req->team, COLLIE_HANDLE_TEAM))
        return collie_fail(COLLIE_ERR_ARG, "%s: the request's team was finalized", fn);
    return COLLIE_OK;
}

int collie_start_owned(collie_request_t *req) {
    collie_team_t *team = req->team;
    if (req->active)
        return collie_fail(COLLIE_ERR_ARG, "collie_start: the %s request is already active",
                           collie_coll_name(req->args.coll));
    if (team->failed)
        return collie_fail(team->failed, "team failed earlier: %s", team->fail_msg);
    if (!req->persistent && req->started)
        return collie_fail(COLLIE_ERR_ARG, "collie_start: the %s request is not persistent (make it "
                           "with collie_%s_init to start it again)", collie_coll_name(req->args.coll),
                           collie_coll_name(req->args.coll));
    req->started = true;
    if (req->aliased_send)
        memcpy(req->send_copy, req->aliased_send, req->send_copy_bytes);
    if (req->check_step)
        collie_check_start(req);
    if (req->args.any_order) {
        /* Matched by initialization order: the same identity on every rank whatever the
         * order of starts, the start's number making each start's messages its own. */
        req->call_seq = COLLIE_PERSISTENT_SEQ | req->pers_id;
        req->check = mix(mix(req->check_base, req->call_seq), req->nstarts++);
        team->any_order_active++;
    } else {
        req->call_seq = team->coll_seq++;
        req->check = mix(req->check_base, req->call_seq);
        collie_board_publish(req);   /* in-order calls only: the history is by number */
    }
    collie_exec_restart(req);
    if (req->algo->driver)
        req->algo->driver->start(req);
    req->active = true;
    req->status = COLLIE_TIMEOUT;
    req->last_progress_ns = 0;
    req->next = NULL;
    if (team->tail)
        team->tail->next = req;
    else
        team->head = req;
    team->tail = req;
    return COLLIE_OK;
}

int collie_start(collie_request_t *req) {
    int st = collie_request_check(req, "collie_start");
    if (st)
        return st;
    st = collie_team_enter(req->team, "collie_start");
    if (st)
        return st;
    st = collie_start_owned(req);
    collie_team_leave(req->team);
    return st;
}

static int run_once(collie_request_t *r) {
    return r->algo->driver ? r->algo->driver->progress(r) : collie_exec_progress(r);
}

/* r finished: off the queue (prev is the request before it, or NULL). */
static void finish(collie_team_t *team, collie_request_t *prev, collie_request_t *r) {
    r->active = false;
    r->status = COLLIE_OK;
    if (r->args.any_order)
        team->any_order_active--;
    if (prev)
        prev->next = r->next;
    else
        team->head = r->next;
    if (team->tail == r)
        team->tail = prev;
}

/* With persistent requests (matched by initialization order) in the queue: one pass over
 * it, progressing every persistent request and the non-persistent ones in start order (up
 * to the first that must wait).  A request takes only chunks of its own call from a
 * channel (executor.c), so requests started in different orders on different ranks meet. */
__attribute__((noinline)) static int progress_any_order(collie_team_t *team, collie_request_t *req) {
    collie_request_t *prev = NULL, *r = team->head;
    bool in_order_waits = false;
    while (r) {
        collie_request_t *next = r->next;
        /* COLLIE_CHECK: a request ends after its agreement step (an in-order call started
         * just before it), else its next start would find the step still active and skip
         * it on this rank only, and the ranks' call numbers would part. */
        bool step_first = r->check_step && r->check_step->active;
        if (!step_first && (r->args.any_order || !in_order_waits)) {
            int st = run_once(r);
            if (st < 0)
                return collie_team_fail(team, st);
            if (st == COLLIE_OK) {
                finish(team, prev, r);
                if (r->checks && (st = collie_check_verify(r)) != COLLIE_OK)
                    return collie_team_fail(team, st);
                r = next;
                continue;
            }
            in_order_waits = in_order_waits || !r->args.any_order;
        }
        prev = r;
        r = next;
    }
    return req->active ? COLLIE_TIMEOUT : req->status;
}

/* Progresses the team's queue in order until req is done or the head must wait. */
int collie_progress_queue(collie_team_t *team, collie_request_t *req) {
    team->wait_word = NULL;
    if (team->tp->discard_total)
        collie_discard_all(team->tp);
    if (team->any_order_active)
        return progress_any_order(team, req);
    while (req->active && team->head) {
        collie_request_t *head = team->head;
        int st = run_once(head);
        if (st < 0)
            return collie_team_fail(team, st);
        if (st != COLLIE_OK)
            return COLLIE_TIMEOUT;
        head->active = false;   /* finish(), without the persistent requests' cases */
        head->status = COLLIE_OK;
        team->head = head->next;
        if (!team->head)
            team->tail = NULL;
        if (head->checks && (st = collie_check_verify(head)) != COLLIE_OK)
            return collie_team_fail(team, st);
    }
    return req->status;
}

void collie_request_free(collie_request_t *req) {
    if (!req)
        return;
    if (!collie_handle_valid(req, COLLIE_HANDLE_REQUEST)) {
        collie_fail(COLLIE_ERR_ARG, "collie_request_free: %p is not a live request (freed "
                    "twice?)", (void *)req);
        return;
    }
    bool team_live = collie_handle_valid(req->team, COLLIE_HANDLE_TEAM);
    collie_team_t *team = team_live ? req->team : NULL;
    if (team && collie_team_enter(team, "collie_request_free") != COLLIE_OK) {
        collie_log(COLLIE_LOG_ERROR, "%s; the request was not freed", collie_last_error());
        return;
    }
    if (req->active && team_live) {
        collie_log(COLLIE_LOG_WARN, "collie_request_free: %s request still active; waiting for it",
                   collie_coll_name(req->args.coll));
        collie_request_test(req, COLLIE_BLOCK);
    }
    collie_handle_remove(req, COLLIE_HANDLE_REQUEST);
    if (team && team->nrequests)
        team->nrequests--;
    if (req->algo && req->algo->driver && team_live)
        req->algo->driver->release(req);
    collie_check_free(req);
    sched_free(&req->sched);
    free(req->progress);
    free(req->last_seq);
    free(req->nchunks);
    free(req->chunk_len);
    if (req->staged)
        for (uint32_t i = 0; i < req->progress_cap; i++)
            free(req->staged[i]);
    free(req->staged);
    free(req->deadline);
    free(req->trailing);
    free(req->busy);
    free(req->tmp_alloc);
    free(req->send_copy);
    free(req);
    if (team)
        collie_team_leave(team);
}

const char *collie_request_algorithm(const collie_request_t *req) {
    return collie_handle_valid(req, COLLIE_HANDLE_REQUEST) && req->algo ? req->algo->name : NULL;
}
