/*
 * request.c — requests: plan (select an algorithm, build its schedule), start, test with
 * a timeout (spin briefly, then sleep on the transport), wait, free.
 */
#include <sched.h>
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
    a->coll = coll;
    a->rank = team->rank;
    a->size = team->size;
    a->root = root;
    a->count = count;
    a->elem_size = coll == COLL_BARRIER ? 1 : collie_dtype_size(dtype);
    a->bytes = (uint64_t)count * a->elem_size;
    a->commutative = op ? collie_op_commutative(op) : true;
    a->idempotent = op ? collie_op_idempotent(op) : false;
    a->in_place = sendbuf == COLLIE_IN_PLACE || coll == COLL_BCAST;
    a->shared_memory = team->tp->shared_memory;
    a->multicast = team->mcast != NULL;
    a->single_copy = collie_team_single_copy(team);
    a->any_order = persistent == COLLIE_REQ_BY_INIT;
    a->cell_bytes = collie_team_cell_bytes(team);
    a->node_of = team->tp->node_of;
    a->nnodes = team->tp->nnodes;
    req->team = team;
    req->dtype = dtype;
    req->op = op;
    req->persistent = persistent != 0;
    if (a->any_order)
        req->pers_id = team->pers_seq++ & ~COLLIE_PERSISTENT_SEQ;
    req->buf[SBUF_SEND] = a->in_place ? recvbuf : (void *)sendbuf;
    req->buf[SBUF_RECV] = recvbuf;
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
    uint32_t h = mix(0x5EED, (uint64_t)req->args.coll);
    h = mix(h, req->args.bytes);
    h = mix(h, (uint64_t)req->args.root);
    h = mix(h, name_hash(req->algo->name));
    h = mix(h, req->id.op);
    return mix(h, req->dtype);
}

/* COLLIE_ERR_ARG unless req is a live request whose team is live. */
static int check_request(const collie_request_t *req, const char *fn) {
    if (!req)
        return collie_fail(COLLIE_ERR_ARG, "%s: request is NULL", fn);
    if (!collie_handle_valid(req, COLLIE_HANDLE_REQUEST))
        return collie_fail(COLLIE_ERR_ARG, "%s: %p is not a live request (freed already?)", fn,
                           (const void *)req);
    if (!collie_handle_valid(req->team, COLLIE_HANDLE_TEAM))
        return collie_fail(COLLIE_ERR_ARG, "%s: the request's team was finalized", fn);
    return COLLIE_OK;
}

static int start_owned(collie_request_t *req) {
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
    int st = check_request(req, "collie_start");
    if (st)
        return st;
    st = collie_team_enter(req->team, "collie_start");
    if (st)
        return st;
    st = start_owned(req);
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
static int progress_queue(collie_team_t *team, collie_request_t *req) {
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

static int silent_peer(collie_team_t *team) {
    collie_request_t *h = team->head;
    collie_transport_blame(team->tp, h->blocked_peer);
    collie_fail(COLLIE_ERR_PEER, "timed out: no progress for %llu ms (COLLIE_TIMEOUT_MS) waiting for rank %d (%s in %s #%u, "
                "round %u of %u, algorithm %s)",
                (unsigned long long)(team->timeout_ns / 1000000ull), h->blocked_peer,
                h->blocked_on_credit ? "to take a message" : "to send a message",
                collie_coll_name(h->args.coll), h->call_seq, h->round + 1, h->sched.nrounds,
                h->algo->name);
    return collie_team_fail(team, COLLIE_ERR_PEER);
}

/* A call that waits for a peer whose call of the same number is another one (different
 * roots of a reduce: both roots wait to receive) can never finish: the board's history
 * shows it (shm), and the error names both calls; so does a peer whose team failed.
 * The error status (message set), or COLLIE_OK. */
static int stalled_on_other_call(collie_team_t *team, const collie_request_t *h) {
    collie_call_id theirs;
    if (collie_board_call(team->tp, h->blocked_peer, h->call_seq, &theirs) && theirs.check != h->check)
        return collie_call_mismatch_req(h, h->blocked_peer, "called", &theirs, NULL);
    int failed = team->tp->board ? atomic_load_explicit(&team->tp->board[h->blocked_peer].failed,
                                                        memory_order_acquire) : 0;
    if (!failed)
        return COLLIE_OK;
    /* It most likely stopped because a rank died: name that rank, as it does. */
    for (int q = 0; q < team->size; q++) {
        int st = q == team->rank ? COLLIE_OK : team->tp->ops->check_peer(team->tp, q);
        if (st)
            return st;
    }
    return collie_fail(failed, "%s #%u waits for rank %d, which stopped after an error (%s; its "
                       "message names the cause)", collie_coll_name(h->args.coll), h->call_seq,
                       h->blocked_peer, collie_strerror(failed));
}

/* Checks that the peer the head request waits for still lives: COLLIE_TIMEOUT to go on
 * waiting, else req's final status.  A peer that left (finalized or died) right after
 * writing its last message to this rank is not an error: progress once more first, since
 * the message may have arrived after this rank last looked. */
static int check_blocked_peer(collie_team_t *team, collie_request_t *req) {
    collie_request_t *h = team->head;
    int st = h && h->blocked_peer >= 0 ? stalled_on_other_call(team, h) : COLLIE_OK;
    if (st)
        return collie_team_fail(team, st);
    if (!h || h->blocked_peer < 0 || team->tp->ops->check_peer(team->tp, h->blocked_peer) == COLLIE_OK)
        return COLLIE_TIMEOUT;
    st = progress_queue(team, req);
    if (st != COLLIE_TIMEOUT)
        return st;
    h = team->head;
    if (!h || h->blocked_peer < 0)
        return COLLIE_TIMEOUT;
    st = team->tp->ops->check_peer(team->tp, h->blocked_peer);
    return st ? collie_team_fail(team, st) : COLLIE_TIMEOUT;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Sleeps on the transport until woken, at most until `until` (ns). */
static int sleep_once(collie_team_t *team, collie_request_t *req, uint64_t until) {
    collie_transport *tp = team->tp;
    uint32_t token = tp->ops->sleep_prepare(tp);
    int st = progress_queue(team, req);
    collie_wake_flush(tp);
    if (st == COLLIE_TIMEOUT) {
        uint64_t now = collie_now_ns(), slice = 20000000ull;
        if (until > now && until - now < slice)
            slice = until - now;
        collie_request_t *h = team->head;
        if (h && h->algo->driver && h->algo->driver->sleep)
            h->algo->driver->sleep(h, token, slice);
        else
            tp->ops->sleep(tp, token, slice);
    }
    tp->ops->sleep_done(tp);
    return st;
}

/* Notes when the head request last moved; COLLIE_ERR_PEER once it has been still for the
 * team's timeout. */
static int watch_stall(collie_team_t *team, uint64_t now) {
    collie_request_t *h = team->head;
    if (!h)
        return COLLIE_OK;
    if (h->last_progress_ns == 0 || h->moves != h->seen_moves) {
        h->last_progress_ns = now;
        h->seen_moves = h->moves;
        return COLLIE_OK;
    }
    if (team->timeout_ns && now - h->last_progress_ns > team->timeout_ns)
        return silent_peer(team);
    return COLLIE_OK;
}

/* Polls the word the head request waits for (team->wait_word) until it changes, a few
 * hundred loads at most, pausing every 8th: reacts within a load of the change instead of
 * a pause plus a pass of the executor.  Without a word, one pause. */
static void watch_word(const collie_team_t *team) {
    const _Atomic uint64_t *w = team->wait_word;
    if (!w || team->tp->ops->progress) {   /* words behind MPI change only in progress() */
        cpu_relax();
        return;
    }
    for (int j = 0; j < 256 && atomic_load_explicit(w, memory_order_acquire) < team->wait_value; j++)
        if ((j & 7) == 7)
            cpu_relax();
}

/* Spins of the polling phase between two clock reads (a poll reacts within ~one pause). */
#define POLLS_PER_CLOCK 32

/* Unproductive polls (collie_test(req, 0) that moved nothing) after which every further
 * one gives the core away: soon when ranks outnumber cores (the peers being waited for
 * need this core), later otherwise (a peer may be descheduled by other load).  After
 * POLL_NAP_AFTER more, a poll that follows the previous one at once (a tight polling loop,
 * not computation between polls) naps on the transport until a peer writes to this rank,
 * at most POLL_NAP_NS: on a loaded machine a rank that only yields still competes for the
 * cores its peers need. */
#define IDLE_POLLS_OVERSUBSCRIBED 2
#define IDLE_POLLS 32
#define POLL_NAP_AFTER 64
#define POLL_NAP_NS 100000ull
#define POLL_TIGHT_NS 20000ull

/* One pure poll: progress; after a few that moved nothing, sched_yield, then short naps. */
static int poll_once(collie_team_t *team, collie_request_t *req) {
    collie_request_t *head = team->head;
    uint64_t moves = head ? head->moves : 0;
    int st = progress_queue(team, req);
    if (st != COLLIE_TIMEOUT || team->head != head || (head && head->moves != moves)) {
        team->idle_polls = 0;
        return st;
    }
    uint32_t limit = team->tp->oversubscribed ? IDLE_POLLS_OVERSUBSCRIBED : IDLE_POLLS;
    if (++team->idle_polls < limit)
        return st;
    collie_wake_flush(team->tp);
    uint64_t now = collie_now_ns();
    bool tight = now - team->poll_end_ns < POLL_TIGHT_NS;
    if (team->idle_polls < limit + POLL_NAP_AFTER || !tight)
        sched_yield();
    else
        st = sleep_once(team, req, now + POLL_NAP_NS);
    team->poll_end_ns = collie_now_ns();
    return st;
}

/* Did the team's head request move since *mark (then *mark is updated)?  A wait spins
 * for spin_ns and yields max_yields times after the last progress, not after its start:
 * a long call (a large message in steps) would otherwise sleep at every step once its
 * first spin_ns had passed, and pay a futex wake-up per step. */
typedef struct progress_mark {
    const collie_request_t *head;
    uint64_t moves;
} progress_mark;

static bool moved_since(const collie_team_t *team, progress_mark *mark) {
    const collie_request_t *h = team->head;
    uint64_t moves = h ? h->moves : 0;
    if (h == mark->head && moves == mark->moves)
        return false;
    mark->head = h;
    mark->moves = moves;
    return true;
}

/* Waits for req as collie_test does; returns with wakes still to flush. */
static int test_unflushed(collie_request_t *req, int timeout_ms) {
    collie_team_t *team = req->team;
    int st = timeout_ms == 0 ? poll_once(team, req) : progress_queue(team, req);
    if (st != COLLIE_TIMEOUT)
        return st;
    /* A pure poll checks for stalls and dead peers only every 64th time (clock reads). */
    if (timeout_ms == 0 && (++team->polls & 63) != 0)
        return st;
    uint64_t start = collie_now_ns(), last_check = start;
    uint64_t until = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms * 1000000ull;
    int yields = 0;
    progress_mark mark = { team->head, team->head ? team->head->moves : 0 };
    for (;;) {
        uint64_t now = collie_now_ns();
        if (moved_since(team, &mark)) {
            start = now;
            yields = 0;
        }
        if ((st = watch_stall(team, now)) != COLLIE_OK)
            return st;
        if (now - last_check > 100000000ull) {
            last_check = now;
            if ((st = check_blocked_peer(team, req)) != COLLIE_TIMEOUT)
                return st;
        }
        if (now >= until)
            return COLLIE_TIMEOUT;
        if (now - start < team->spin_ns) {
            for (int i = 0; i < POLLS_PER_CLOCK; i++) {
                watch_word(team);
                if ((st = progress_queue(team, req)) != COLLIE_TIMEOUT)
                    return st;
            }
            /* Not at once: the fence would wait for the notifications just stored. */
            collie_wake_flush(team->tp);
            continue;
        }
        if (yields < team->max_yields) {
            yields++;
            collie_wake_flush(team->tp);
            sched_yield();
        } else if ((st = sleep_once(team, req, until)) != COLLIE_TIMEOUT) {
            return st;
        }
        if ((st = progress_queue(team, req)) != COLLIE_TIMEOUT)
            return st;
    }
}

int collie_request_test(collie_request_t *req, int timeout_ms) {
    int st = collie_team_enter(req->team, "collie_test");
    if (st)
        return st;
    st = test_unflushed(req, timeout_ms);
    collie_wake_flush(req->team->tp);
    collie_team_leave(req->team);
    return st;
}

int collie_test(collie_request_t *req, int timeout_ms) {
    int st = check_request(req, "collie_test");
    if (st)
        return st;
    if (timeout_ms < COLLIE_BLOCK)
        return collie_fail(COLLIE_ERR_ARG, "collie_test: timeout %d ms is negative (use 0 to "
                           "poll, a positive number of ms, or COLLIE_BLOCK)", timeout_ms);
    return collie_request_test(req, timeout_ms);
}

int collie_wait(collie_request_t *req) {
    int st = check_request(req, "collie_wait");
    return st ? st : collie_request_test(req, COLLIE_BLOCK);
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
    if (req->staged)
        for (uint32_t i = 0; i < req->progress_cap; i++)
            free(req->staged[i]);
    free(req->staged);
    free(req->deadline);
    free(req->trailing);
    free(req->busy);
    free(req->tmp_alloc);
    free(req);
    if (team)
        collie_team_leave(team);
}

const char *collie_request_algorithm(const collie_request_t *req) {
    return collie_handle_valid(req, COLLIE_HANDLE_REQUEST) && req->algo ? req->algo->name : NULL;
}
