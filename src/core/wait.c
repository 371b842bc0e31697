/*
 * wait.c — collie_test / collie_wait: progress the team's queue (request.c) until the
 * request is done, the timeout passes or a peer fails — spinning briefly (watching the
 * word the head request waits for), then yielding, then sleeping on the transport, each
 * counted from the last progress; a pure poll (timeout 0) yields and naps after
 * unproductive polls.  Dead and silent peers and the opt-in watchdog are checked here.
 * Once its own request stops moving, a wait also moves the calls pending on the process's
 * other teams (progress_others.c).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "types/types.h"

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
    st = collie_progress_queue(team, req);
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

bool (*collie_outside_progress)(void);

/* Runs the progress outside collie (internal.h) if the team's transport does not already:
 * true while this rank must come back to it soon. */
static bool outside_progress(const collie_team_t *team) {
    return collie_outside_progress && !team->tp->ops->progress && collie_outside_progress();
}

/* One sleep on the transport (or the head request's driver) of at most ns. */
static void nap(collie_team_t *team, uint32_t token, uint64_t ns) {
    collie_request_t *h = team->head;
    if (h && h->algo->driver && h->algo->driver->sleep)
        h->algo->driver->sleep(h, token, ns);
    else
        team->tp->ops->sleep(team->tp, token, ns);
}

/* Sleeps on the transport until woken, at most until `until` (ns); at most
 * COLLIE_OUTSIDE_SLICE_NS if `outside` (progress outside collie wants this rank back). */
static int sleep_once(collie_team_t *team, collie_request_t *req, uint64_t until, bool outside) {
    collie_transport *tp = team->tp;
    uint32_t token = tp->ops->sleep_prepare(tp);
    int st = collie_progress_queue(team, req);
    collie_wake_flush(tp);
    if (st == COLLIE_TIMEOUT) {
        uint64_t now = collie_now_ns(), slice = outside ? COLLIE_OUTSIDE_SLICE_NS : 20000000ull;
        if (until > now && until - now < slice)
            slice = until - now;
        /* Still announced as sleeping: a writer from now on sees it and wakes this rank;
         * one that raced with the announcement wrote before the first nap ends. */
        uint64_t first = tp->ops->peer_sleeps && slice > COLLIE_SLEEP_RECHECK_NS ? COLLIE_SLEEP_RECHECK_NS : slice;
        nap(team, token, first);
        if (first < slice && (st = collie_progress_queue(team, req)) == COLLIE_TIMEOUT) {
            collie_wake_flush(tp);
            nap(team, token, slice - first);
        }
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

/* The longest sleep while other teams have split-phase calls pending (progress_others.c). */
#define OTHERS_SLICE_NS 200000ull

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
    int st = collie_progress_queue(team, req);
    if (st != COLLIE_TIMEOUT || team->head != head || (head && head->moves != moves)) {
        team->idle_polls = 0;
        return st;
    }
    uint32_t limit = team->tp->oversubscribed ? IDLE_POLLS_OVERSUBSCRIBED : IDLE_POLLS;
    if (++team->idle_polls < limit)
        return st;
    collie_wake_flush(team->tp);
    collie_progress_others(team);   /* what the peers may wait for (progress_others.c) */
    uint64_t now = collie_now_ns();
    bool tight = now - team->poll_end_ns < POLL_TIGHT_NS;
    if (team->idle_polls < limit + POLL_NAP_AFTER || !tight)
        sched_yield();
    else
        st = sleep_once(team, req, now + POLL_NAP_NS, false);
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

/* Watch-and-progress passes a wait makes before its first clock read, where it may spin.
 * A clock read costs 60 ns on a VM (clock_gettime through a virtualized TSC; 28 ns for
 * rdtsc alone), and the loop below reads it twice before its next poll: the data of a
 * small call, arriving a cache-line trip after the wait began, waited for them. */
#define POLLS_BEFORE_CLOCK 4

static int poll_before_clock(collie_team_t *team, collie_request_t *req) {
    if (team->spin_ns == 0)
        return COLLIE_TIMEOUT;
    for (int i = 0; i < POLLS_BEFORE_CLOCK; i++) {
        watch_word(team);
        int st = collie_progress_queue(team, req);
        if (st != COLLIE_TIMEOUT)
            return st;
    }
    return COLLIE_TIMEOUT;
}

/* Waits for req as collie_test does; returns with wakes still to flush. */
static int test_unflushed(collie_request_t *req, int timeout_ms) {
    collie_team_t *team = req->team;
    int st = timeout_ms == 0 ? poll_once(team, req) : collie_progress_queue(team, req);
    if (st != COLLIE_TIMEOUT)
        return st;
    /* A pure poll checks for stalls and dead peers only every 64th time (clock reads). */
    if (timeout_ms == 0 && (++team->polls & 63) != 0)
        return st;
    if (timeout_ms != 0 && (st = poll_before_clock(team, req)) != COLLIE_TIMEOUT)
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
        /* Not in a pure poll (timeout 0): mpi_progress_help.c's thread polls from outside MPI. */
        bool outside = outside_progress(team);
        if (now - start < team->spin_ns) {
            for (int i = 0; i < POLLS_PER_CLOCK; i++) {
                watch_word(team);
                if ((st = collie_progress_queue(team, req)) != COLLIE_TIMEOUT)
                    return st;
            }
            /* Not at once: the fence would wait for the notifications just stored. */
            collie_wake_flush(team->tp);
            continue;
        }
        /* Stopped: move the other teams' pending calls, which may be what the peers wait
         * for; while some remain, sleep in short slices (their writes do not wake us). */
        uint64_t nap = collie_progress_others(team) ? now + OTHERS_SLICE_NS : until;
        if (yields < team->max_yields) {
            yields++;
            collie_wake_flush(team->tp);
            sched_yield();
        } else if ((st = sleep_once(team, req, nap < until ? nap : until, outside)) != COLLIE_TIMEOUT) {
            return st;
        }
        if ((st = collie_progress_queue(team, req)) != COLLIE_TIMEOUT)
            return st;
    }
}

int collie_request_test(collie_request_t *req, int timeout_ms) {
    int st = collie_team_enter(req->team, "collie_test");
    if (st)
        return st;
    st = test_unflushed(req, timeout_ms);
    collie_wake_flush(req->team->tp);
    /* A barrier is left only once this rank's own last stores (its arrival) have reached
     * the others, as it was before collie_wake_flush stopped fencing at every return: the
     * rank that arrived last then leaves with the others instead of a cache-line trip
     * (~0.15 us) ahead of them, which the call after the barrier would pay for. */
    if (st == COLLIE_OK && req->args.coll == COLL_BARRIER)
        atomic_thread_fence(memory_order_seq_cst);
    collie_team_leave(req->team);
    return st;
}

int collie_test(collie_request_t *req, int timeout_ms) {
    int st = collie_request_check(req, "collie_test");
    if (st)
        return st;
    if (timeout_ms < COLLIE_BLOCK)
        return collie_fail(COLLIE_ERR_ARG, "collie_test: timeout %d ms is negative (use 0 to "
                           "poll, a positive number of ms, or COLLIE_BLOCK)", timeout_ms);
    return collie_request_test(req, timeout_ms);
}

int collie_wait(collie_request_t *req) {
    int st = collie_request_check(req, "collie_wait");
    return st ? st : collie_request_test(req, COLLIE_BLOCK);
}

