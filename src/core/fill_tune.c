/*
 * fill_tune.c — whether this rank's copies into the copy cells bypass the cache
 * (collie_stream_copy, streaming stores) or not (memcpy), per collective and size class,
 * from its own timed calls, and tried again from time to time (a gap of 128 calls of a
 * class, doubling while the way holds).
 *
 * Why not once at start-up: which way is faster changes with where the host runs the VM's
 * CPUs, within minutes (docs/performance.md, "The machine's state").  On the 2-core AMD
 * EPYC VM of 2026-11-27 a 2 MiB bcast through the cells at P = 2 with fresh data took
 * 40-44 us with memcpy and 83-101 us with streaming stores while a cache line crossed
 * between the cores in ~40 ns, and 64-72 us either way while it took ~220 ns; on
 * 2026-11-26, in another slow state, 917 us with memcpy and 83 streaming (a line written
 * into a cell by one core and read by the other cost more than a trip through memory).
 * The start-up measurement (transport/shm_copy_probe.c) gives the first calls' way; it
 * sees only the state of its few milliseconds.
 *
 * How: every rank that fills cells in a call decides for itself (the readers copy out
 * whatever way the cells were filled, so no agreement is needed).  Per
 * collective and size class (the power of two at or below the call's bytes, from
 * FILL_TUNE_MIN), after FILL_SKIP untimed calls (from 1 MiB, with path tuning on, after
 * the first 6: the way trial's calls through the cells, path_tune_cells_calls_in_trial;
 * its counted call through the cells was one of this trial's slower tries before), a
 * trial of six calls: current, other,
 * other, current, other, current (a trend that is still settling favours neither), each
 * timed from the start of its steps through the cells to the end of the call on this rank
 * (a bcast root's end includes its readers' copies).  The other way is taken when its
 * best of 3 took less than FILL_SWITCH of the current's; then the chosen way runs until
 * the next trial, FILL_TRIAL_FIRST calls after this one began.  The gap doubles after
 * every trial that kept the way by a clear margin (the slower way's best at least 1 /
 * FILL_CLEAR of the faster's), up to FILL_TRIAL_MAX; after a switch or a close call it
 * stays FILL_TRIAL_FIRST (with best of 2 per way, session 37's VM kept the slower way for
 * whole benchmarks: a noisy minute decided, and the gap then grew).  Every rank counts the
 * same calls, so trials fall on the same calls on every rank.  Cost: three calls per gap
 * go the other way (measured with two and a fixed gap of 128: allreduce 2 MiB at P = 2
 * 83.4-87.4 us against 81.9-83.4 with the way fixed, COLLIE_SHM_STREAM=0), so the gap
 * grows while the machine stays in one state.  When the trial's first call the other way
 * took more than FILL_EARLY_STOP times its first call the current way, the trial ends
 * there, the current way kept and the gap left at FILL_TRIAL_FIRST (one call is no clear
 * margin): the other two would cost as much again for nothing.  Measured (2026-12-05,
 * Intel Xeon VM, bcast 64 MiB at P = 8 with fresh data through the cells): the readers'
 * copies out took 21.3-22.0 ms streaming against 46.0-47.0 with memcpy, and the trial's
 * three memcpy calls were in the benchmark's 10 timed calls (32.4 ms a call against 21.5
 * after the trial).
 * COLLIE_SHM_STREAM=0 or 1 fixes the way instead (no trials).
 *
 * The other direction: a bcast reader's copies out of the root's cells into its own
 * buffer (and every rank's copies out of the other ranks' cells in allgather and alltoall,
 * whose fill trial is the same calls 2-7 before it; the rule's size there is the bytes a
 * rank copies out, P - 1 blocks), from OUT_TUNE_MIN bytes per block, tried the same way by
 * every reader for itself (its call
 * timed from its first step to its end; the root's fill does not change within a reader's
 * trial, whose window lies FILL_TRIAL_CALLS calls after the fill's: calls 8-13 of a
 * class (from 1 MiB with path tuning on 12-17), then 128 or more later, where the
 * fill's are calls 2-7 (6-11)).  The first calls' way is the
 * fixed rule of COLLIE_SHM_STREAM_OUT_MIN (default 3/4 of the last-level cache: 24 MiB on
 * the VMs below, all with 32 MiB of L3).  bcast 8 MiB at P = 2 with fresh data through
 * the cells, streaming out against memcpy: 520-620 against 1,015-1,030 us on session 36's
 * VM (2026-12-02); medians 2,565 against 3,247 us on session 37's, the trial 2,107; on
 * the VM of 2026-11-27 streaming lost 1.21-1.62x.  What the trial cannot see: a streaming
 * store leaves the result in memory, not in the cache, so a program that reads the
 * broadcast data at once pays for that read; from 1 MiB (the size of an L2 or twice it on
 * these VMs) much of it would have left the core's caches anyway.
 * Before its first trial, the way trial (path_tune.c) times the cells against the kernel
 * copy, and it takes its choice for good: in allgather and alltoall its last block through
 * the cells (calls 4-5 of the class from 1 MiB blocks: path_tune_cells_last_block) copies
 * out the other way, so that the cells are timed with the better of the two (not in the
 * three-way trial of a bcast or reduce at P = 2, where a kernel-copy block follows).
 * Measured (2026-12-04, Intel Xeon VM, which reports a 480 MiB L3, so the rule says
 * memcpy): allgather of 16 MiB blocks at P = 4, the
 * cells 15.6-15.9 ms with memcpy out against the kernel copy's 15.5-17.1, so the trial
 * took either (11.7-12.3 ms a call after the cells with streaming out, 15.1-15.9 with the
 * kernel copy); with the last block streaming, the cells 13.0-14.1 in the trial against
 * the kernel copy's 16.1-19.5, taken in 7 launches of 7 (so did the old code in those
 * minutes, with the kernel copy that slow).
 * allgather and alltoall `direct` copying blocks straight out of the peers' mapped buffers
 * (collie_alloc, the shared heap) try both ways the same, in a third table (FILL_MAPPED): a
 * class's calls may go that way or through the cells (path_tune.c), and the two kinds of
 * copy differ.  Measured (2026-12-03, collie_alloc, bench/ab_builds.sh against memcpy
 * only): reused 2-8 MiB blocks at P = 3, 4 took 0.53-0.92 of the time, fresh mostly
 * 0.8-1.0.
 * COLLIE_SHM_STREAM_OUT_MIN set fixes the rule instead (no trials).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/fill_tune.h"
#include "core/path_tune.h"
#include "base/base.h"

#define FILL_TUNE_MIN (256u * 1024u)
#define OUT_TUNE_MIN (1024u * 1024u)
#define FILL_SKIP 2
#define FILL_TRIAL_CALLS 6
#define FILL_TRIAL_FIRST 128
#define FILL_TRIAL_MAX 2048
#define FILL_SWITCH 0.9
#define FILL_CLEAR 0.8          /* a clear margin: the faster way's best under 0.8 of the slower's */
#define FILL_EARLY_STOP 1.5     /* the trial's first call the other way this much slower: done */
#define FILL_CLASSES 64

typedef struct fill_class {
    uint64_t best[2];       /* this trial's best per way (0 memcpy, 1 streaming), ns */
    uint64_t calls;         /* calls begun in this class */
    uint64_t trial_at;      /* the call number at which the current or next trial begins */
    uint32_t period;        /* calls from one trial's start to the next one's */
    bool way;               /* the current way (from the class's first call: period > 0) */
    bool decided;           /* a trial has ended (its answer was logged) */
} fill_class;


struct collie_fill_tune {
    bool on[FILL_DIRS];     /* per direction: its variable (COLLIE_SHM_STREAM,
                               COLLIE_SHM_STREAM_OUT_MIN) unset and streaming stores native */
    fill_class cls[FILL_DIRS][COLL_COUNT][FILL_CLASSES];
};

/* req's class in direction dir (NULL: not tuned — a small call, a fixed way, or no
 * memory). */
static fill_class *class_for(collie_request_t *req, int dir) {
    collie_team_t *t = req->team;
    if (req->args.bytes < (dir == FILL_INTO ? FILL_TUNE_MIN : OUT_TUNE_MIN))
        return NULL;
    if (!t->fill_tune) {
        if (!(t->fill_tune = calloc(1, sizeof *t->fill_tune)))
            return NULL;
        bool native = collie_stream_copy_native();
        t->fill_tune->on[FILL_INTO] = native && collie_env_int("COLLIE_SHM_STREAM", -1) == -1;
        t->fill_tune->on[FILL_OUT] = native && collie_env_int("COLLIE_SHM_STREAM_OUT_MIN", -1) == -1;
        t->fill_tune->on[FILL_MAPPED] = t->fill_tune->on[FILL_OUT];
    }
    int k = collie_size_class(req->args.bytes);
    return t->fill_tune->on[dir] ? &t->fill_tune->cls[dir][req->args.coll][k] : NULL;
}

/* The trial position of the class's call number n: 0 .. FILL_TRIAL_CALLS - 1, or -1. */
static int trial_position(const fill_class *c, uint64_t n) {
    return n >= c->trial_at && n - c->trial_at < FILL_TRIAL_CALLS ? (int)(n - c->trial_at) : -1;
}

/* The call number of a class's first trial: the fills' after FILL_SKIP calls and after
 * the way trial's calls through the cells (path_tune_cells_calls_in_trial); the copies out
 * of the cells in the window after the fills'; the copies out of mapped buffers (calls
 * that go no way through the cells, after the way trial's first counted ones) as the
 * copies out were before. */
static uint64_t first_trial(const collie_request_t *req, int dir) {
    if (dir == FILL_MAPPED)
        return FILL_SKIP + FILL_TRIAL_CALLS;
    int into = path_tune_cells_calls_in_trial(req);
    if (into < FILL_SKIP)
        into = FILL_SKIP;
    return (uint64_t)into + (dir == FILL_OUT ? FILL_TRIAL_CALLS : 0);
}

static fill_way begin(collie_request_t *req, int dir, bool start_way) {
    fill_class *c = class_for(req, dir);
    if (!c)
        return (fill_way){ start_way, false, (uint8_t)dir, 0 };
    if (!c->period) {   /* the class's first call */
        c->way = start_way;
        c->trial_at = first_trial(req, dir);
        c->period = FILL_TRIAL_FIRST;
    }
    uint64_t n = c->calls++;
    if (dir == FILL_OUT && path_tune_cells_last_block(req, n))
        return (fill_way){ !c->way, false, (uint8_t)dir, 0 };
    while (n >= c->trial_at + FILL_TRIAL_CALLS)   /* a trial's window has passed */
        c->trial_at += c->period;
    int p = trial_position(c, n);
    if (p < 0)
        return (fill_way){ c->way, false, (uint8_t)dir, 0 };
    if (p == 0)
        c->best[0] = c->best[1] = 0;
    bool other = p == 1 || p == 2 || p == 4;     /* current, other ×2, current, other, current */
    return (fill_way){ other ? !c->way : c->way, true, (uint8_t)dir, collie_now_ns() };
}

fill_way fill_tune_begin(collie_request_t *req) {
    return begin(req, FILL_INTO, req->team->tp->cells->stream);
}

/* The first calls' way out: a bcast's as collie_outputs_stream (its readers' outputs
 * together), allgather's and alltoall's from stream_out_min of what this rank copies out (a
 * block per peer).  Measured for bcast (2026-12-05, Intel Xeon VM, whose 480 MiB of L3 are
 * the host's: stream_out_min 360 MiB; collie-bench --coll bcast --barrier-each
 * [--fresh-data] [--collie-alloc], COLLIE_SHM_STREAM_OUT_MIN=1 / 0, 2 rounds, µs): through
 * the cells P = 2 32 MiB 3155-3310 / 4533-4553, P = 4 16 MiB 2249-3665 / 3525-3813 (fresh
 * 3066-3436 / 7745-8492), P = 8 8 MiB 4160-4302 / 9821-11163; mapped at P = 2 (the split
 * copy) 32 MiB fresh 1862-2309 / 2869-3326, 64 MiB 3116-3397 / 6987-7208; at 32 MiB of
 * outputs mixed (P = 2 16 MiB 1455-1527 / 1318-1363 reused, P = 4 8 MiB 1107-1756 /
 * 1305-1959) but P = 8 4 MiB 2033-2088 / 2999-3551.  Before, on this VM the first calls
 * copied with memcpy at twice the time until the trial (calls 9-14) switched.  allgather
 * the same once its team's outputs (P x P blocks) reach 64 MiB: P = 4 blocks of 4 / 8 MiB
 * 4291 / 9993 against 6940 / 15012 reused, 7049 / 11537 against 7513 / 15857 fresh (2 MiB,
 * 32 MiB of outputs: equal); P = 8 1 MiB 2971 / 3187 against 7197 / 5000, 8 MiB 34419 /
 * 36258 against 51102 / 56362.  Not alltoall: at P = 4 with fresh data streaming took
 * 1.04-1.07x (4 and 8 MiB blocks; 2 MiB 1.7x), at P = 8 0.9-0.95x. */
static bool out_rule(const collie_request_t *req) {
    const collie_transport *tp = req->team->tp;
    uint64_t P = (uint64_t)req->args.size, block = req->args.bytes;
    if (req->args.coll == COLL_BCAST)
        return collie_outputs_stream(tp, req->args.size, block);
    if (req->args.coll == COLL_ALLGATHER && P * block >= tp->stream_team_min / P)
        return true;   /* the team's outputs, P x P blocks, from 64 MiB (below) */
    return block * (P - 1) >= tp->stream_out_min;
}

fill_way out_tune_begin(collie_request_t *req) { return begin(req, FILL_OUT, out_rule(req)); }

fill_way mapped_out_tune_begin(collie_request_t *req) { return begin(req, FILL_MAPPED, out_rule(req)); }

static const char *way_name(int way) { return way ? "streaming stores" : "memcpy"; }

/* The copies of direction dir, as the logs name them ("into the cells" is "through the
 * cells" in a call's timing). */
static const char *copies_name(int dir, bool call_timing) {
    return dir == FILL_OUT ? "out of the cells"
         : dir == FILL_MAPPED ? "out of the peers' mapped buffers"
         : call_timing ? "through the cells" : "into the cells";
}

/* Logs a trial's verdict: both ways' times (how they were taken) and the way taken. */
static void log_choice(const collie_request_t *req, const fill_class *c, int dir, const char *how,
                       int taking) {
    int cur = c->way, other = !cur, k = collie_size_class(req->args.bytes);
    collie_log(COLLIE_LOG_INFO, "rank %d: copies %s in %s of %llu B up to %llu B on %d ranks: "
               "%s %.1f us, %s %.1f us (%s): taking %s", req->args.rank, copies_name(dir, false),
               collie_coll_name(req->args.coll), 1ull << k, (2ull << k) - 1, req->args.size,
               way_name(cur), c->best[cur] / 1e3, way_name(other), c->best[other] / 1e3, how,
               way_name(taking));
}

/* The trial's last call is over: keep the current way or take the other. */
static void decide(collie_request_t *req, fill_class *c, int dir) {
    int cur = c->way, other = !cur;
    bool take_other = (double)c->best[other] < FILL_SWITCH * (double)c->best[cur];
    if (take_other || !c->decided)
        log_choice(req, c, dir, "best of 3 calls each", take_other ? other : cur);
    c->decided = true;
    if (take_other)
        c->way = other;
    uint64_t fast = c->best[cur] < c->best[other] ? c->best[cur] : c->best[other];
    uint64_t slow = c->best[cur] < c->best[other] ? c->best[other] : c->best[cur];
    bool clear = (double)fast < FILL_CLEAR * (double)slow;
    c->period = take_other || !clear
                    ? FILL_TRIAL_FIRST
                    : (c->period * 2 < FILL_TRIAL_MAX ? c->period * 2 : FILL_TRIAL_MAX);
}

/* The trial's first call each way is over, and the other way's took more than
 * FILL_EARLY_STOP times the current's: the current way is kept, the rest of the window
 * goes that way too, and the next trial comes FILL_TRIAL_FIRST calls after this one
 * began. */
static void stop_early(collie_request_t *req, fill_class *c, int dir) {
    if (!c->decided) {
        char how[64];
        snprintf(how, sizeof how, "one call each, the other more than %.1fx", FILL_EARLY_STOP);
        log_choice(req, c, dir, how, c->way);
    }
    c->decided = true;
    c->period = FILL_TRIAL_FIRST;
    c->trial_at += c->period;
}

void fill_tune_end(collie_request_t *req, fill_way *w) {
    if (!w->timed)
        return;
    w->timed = false;
    int dir = w->dir;
    fill_class *c = class_for(req, dir);
    if (!c || !c->calls)
        return;
    uint64_t ns = collie_now_ns() - w->begun_ns;
    collie_log(COLLIE_LOG_DEBUG, "rank %d: %s of %llu B %s took %.1f us with %s",
               req->args.rank, collie_coll_name(req->args.coll),
               (unsigned long long)req->args.bytes, copies_name(dir, true), ns / 1e3,
               way_name(w->stream));
    if (c->best[w->stream] == 0 || ns < c->best[w->stream])
        c->best[w->stream] = ns;
    int pos = trial_position(c, c->calls - 1);
    bool clear_loser = c->best[c->way] &&
                       (double)c->best[!c->way] > FILL_EARLY_STOP * (double)c->best[c->way];
    if (pos == 1 && clear_loser)
        stop_early(req, c, dir);
    else if (pos == FILL_TRIAL_CALLS - 1 && c->best[0] && c->best[1])
        decide(req, c, dir);
}
