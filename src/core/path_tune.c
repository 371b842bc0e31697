/*
 * path_tune.c — the choice between the user-space path (slots or copy cells) and the
 * kernel single copy for buffers that are not mapped (and, for buffers that are, between
 * the mapped buffers and the copy cells), per collective and size class, at two levels:
 *   - the direct-access driver (allreduce and reduce `direct_segments`, bcast
 *     `direct_copy`): the rank that decides a call (path_tune_decider) picks the way for
 *     every rank and posts it on the board;
 *   - the schedules' messages (every other algorithm, through the executor): each rank
 *     picks the way of the messages it sends (core/executor_prepare.c), and the receiver
 *     follows the chunking of what arrives, so no agreement is needed for the results;
 *     once rank 0 chose, every rank takes its way all the same (team_way).  Only for
 *     collectives without a reduction operation: a reduction's receiver combines several
 *     senders' chunks in step, so there every rank keeps the fixed thresholds.
 *
 * Why timed calls: which way is faster depends on the machine (how fast process_vm_readv
 * runs against a copy between cores), on the collective, on the number of ranks per core
 * and on whether the program writes new data before each call; measured on one 2-core
 * machine (docs/measurements.md) the kernel copy took 0.55-0.79 of the user-space path's
 * time for allreduce at P = 2 from 128 KiB to 512 KiB, but 1.3-1.6 for reduce with fresh
 * data and 1.3-2.4 for anything from 512 KiB at P = 4.  A copy of one process's own memory
 * at start-up (what collie measured before) does not see the copy between cores and chose
 * wrongly there.
 *
 * A third way, at the driver's level only: calls small enough for the slots (up to
 * COLLIE_SHM_SLOTS_MAX, at least CELLS_TRIAL_MIN) also try the copy cells.  Which of the
 * two is faster changes with the machine's state, not only with the machine: on the
 * 2-core AMD VM of 2026-11-27 a line written by one core and read by the other was cheap
 * in some hours and slow in others (the host's doing): at P = 2 a 512 KiB bcast took
 * 11.3 us through the slots and 9.3 through the cells in the first state (the decider's
 * best timings), 30 and 18.5 in the second; allreduce 512 KiB 25.6 and 21.2, then 44.5
 * and 35.6.  On the Intel Xeon VM of earlier sessions the cells lost there, up to 2x with
 * reused data.
 *
 * A fourth way, for calls whose buffers are all mapped (collie_alloc or the shared heap)
 * from PATH_MAPPED_TRIAL_MIN bytes: the mapped buffers themselves (zero copy) against the
 * copy cells, in their own table (the same buffers may be mapped in one call and not in
 * the next).  Zero copy is not always faster: with new data before every call, the
 * peer's input is in the other core's cache or in memory and the outputs are written
 * across, while the cells move the data in small steps that stay in cache (allreduce at
 * P = 2, 32 MiB with fresh data, on the AMD EPYC VM of 2026-11-27: 3.9 ms mapped against
 * 3.0 through the cells); on the VM of 2026-11-28 (1 MiB of L2 per core) the mapped
 * buffers won by 1.5-3x, and the trial kept them after 2 calls through the cells.  Only
 * where every rank has a core: with more ranks than cores one call per block timed by one
 * rank was too noisy to choose by (bcast at P = 4 and 8, 2-32 MiB, on the second VM: the
 * trial chose the cells at some sizes where they were 1.2-2x slower).
 *
 * How: the deciding rank keeps, per collective and size class
 * (the power of two at or below the call's bytes), a time for each way from the class's
 * first calls that had the choice (the trial plan below: blocks of calls per way; a
 * block's time is the median of its counted calls, with more ranks than cores the best
 * of them, and a way's time the best of its blocks'), then takes the faster for good and
 * logs it (COLLIE_LOG=info).  A call's time is from posting it to its end on that rank;
 * the median and the best of two blocks leave out calls that waited for a late peer or
 * were descheduled, and calls that found their way's buffers colder than they are once
 * one way is taken (path_tune_block_time).  Every rank reads the decider's choice from
 * its board entry, so all take the same way; every way reduces in rank order, so the
 * results are the same bits whichever is taken.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/path_tune.h"
#include "core/path_tune_impl.h"
#include "base/base.h"

/* The trial calls of a size class.  Below LARGE_CLASS (a power of two of bytes) the first
 * 64 calls go the user way untimed (a process's first calls pay page faults and cold
 * caches: 25-110 us for 32 KiB calls that settle at 4 after some 15 calls; on the Intel
 * Xeon VM of 2026-11-28 a 32 KiB bcast at P = 2 took 84, 71, 43 ... 9 ... 5.3 us over its
 * first 20 calls, and kernel copies timed from the 17th took 7-20 us against 3.4-3.9 from
 * the 65th, so 16 untimed calls chose the slots where the kernel copy was 1.3x faster);
 * then four blocks of 4 calls, user, kernel, kernel, user (a trend that is still settling
 * favours neither); the first call of a block is not counted (caches cold from the other
 * way).  Every call of a class before its choice (the untimed ones too) ends only once
 * its peers took what it moved, whichever way (collie_exec_sends_consumed,
 * cells_all_freed), so that both ways are timed to the same end.
 * From LARGE_CLASS a call is long and its first touches every page, and programs make
 * few calls of such sizes (a benchmark's 100 ms is 10-20 calls of 32 MiB at P = 3-8):
 * 2 untimed calls and blocks of 2; and once the counted calls of both ways differ by
 * more than CLEAR_LOSS the faster is taken at once, so a way that loses costs about 2
 * calls instead of 8.  Measured (P = 4, bcast of 32 MiB as collie-bench's second size, so
 * after 10 warm-up calls, not the first size's 200; --barrier-each; 10-17 timed calls):
 * 8.9-9.1 ms per call (slowest rank) with the small sizes' plan, 6.2-6.8 with this one;
 * the trials took 15.7 ms by the kernel copy, 9.1 by shared memory. */
#define LARGE_CLASS 20          /* 1 MiB */
#define CLEAR_LOSS 1.5
/* A rank that chooses for the messages it sends alone (the schedules' level) takes the
 * kernel copy only when it was at least this much faster: its time includes the waits for
 * its peers, and a rank whose peers ran late during the trials saw both ways take about
 * the same (measured: alltoall 32 KiB at P = 2, one rank 257 and 266 us, the other 4.1 and
 * 2.2 us); shared memory, the way of the first calls, stays then. */
#define SCHED_KERNEL_MARGIN 0.9
#define CLASSES 64
_Static_assert(COLL_COUNT <= COLLIE_WAY_CHOICES / COLLIE_WAY_CLASSES, "the shared table holds every collective");
/* The smallest call for which the cells are tried against the slots: below, a call's
 * steps through the cells are few and short, and every trial costs calls that go the
 * slower way.  At 32 KiB, allreduce P = 2: both took the same, 3.8 us (2026-11-27); the
 * cells 1.57 us against the slots' 1.89 (2026-11-29, once the trial warmed the cells). */
#define CELLS_TRIAL_MIN (32u * 1024u)

/* The ways of the trial blocks, in order: each way's blocks mirror around the middle, so
 * that a trend that is still settling favours none.  One order per kind of choice. */
enum { TRIAL_USER_KERNEL, TRIAL_USER_KERNEL_CELLS, TRIAL_MAPPED_CELLS, TRIALS };
static const uint8_t trial_order[TRIALS][6] = {
    [TRIAL_USER_KERNEL] = { PATH_USER, PATH_KERNEL, PATH_KERNEL, PATH_USER },
    [TRIAL_USER_KERNEL_CELLS] = { PATH_USER, PATH_KERNEL, PATH_CELLS, PATH_CELLS, PATH_KERNEL,
                                  PATH_USER },
    [TRIAL_MAPPED_CELLS] = { PATH_MAPPED, PATH_CELLS, PATH_CELLS, PATH_MAPPED },
};
static const uint8_t trial_blocks[TRIALS] = { 4, 6, 4 };

static int blocks_of(const tune_class *c) { return trial_blocks[c->trial - 1]; }

static int way_of_block(const tune_class *c, int block) { return trial_order[c->trial - 1][block]; }

enum table { TABLE_DRIVER, TABLE_MAPPED, TABLE_SCHED };

struct collie_path_tune {
    tune_class driver[COLL_COUNT][CLASSES];     /* direct_segments, direct_copy, `direct` */
    tune_class mapped[COLL_COUNT][CLASSES];     /* ... when every buffer is mapped */
    tune_class sched[COLL_COUNT][CLASSES];      /* the schedules' messages, as this rank sends */
};

bool path_tune_on(const collie_request_t *req) {
    const collie_cells *c = req->team->tp->cells;
    return c && c->kernel_min == 0;
}

int path_tune_decider(const collie_request_t *req) {
    int c = req->args.coll;
    return c == COLL_REDUCE || c == COLL_BCAST ? req->args.root : 0;
}

/* This team's entry for req's call in one of its tables (NULL: no memory; then the first
 * way of the trial). */
static tune_class *class_for(collie_request_t *req, enum table table) {
    collie_team_t *t = req->team;
    if (!t->path_tune && !(t->path_tune = calloc(1, sizeof *t->path_tune)))
        return NULL;
    int k = collie_size_class(req->args.bytes);
    struct collie_path_tune *p = t->path_tune;
    return table == TABLE_SCHED ? &p->sched[req->args.coll][k]
         : table == TABLE_MAPPED ? &p->mapped[req->args.coll][k]
                                 : &p->driver[req->args.coll][k];
}

typedef struct trial_plan {
    int skip, block;            /* untimed calls, then 4 blocks of this many */
} trial_plan;

static trial_plan plan_of(int k) {
    return k >= LARGE_CLASS ? (trial_plan){ 2, 2 } : (trial_plan){ 64, 4 };
}

/* Below LARGE_CLASS, a call that moves at least 1 MiB through its rank all the same (its
 * input or its output: allgather, alltoall and reduce_scatter of P blocks) ends its untimed
 * calls once they took WARM_NS together (at least WARM_MIN_CALLS of them, at most the 64):
 * its first calls touch its pages as a large call's do, and each takes long.  An alltoall
 * of 512 KiB blocks at P = 8 takes 1.3-2.5 ms a call on 2 cores, so with 64 untimed calls
 * a benchmark's 100 ms of them never reached the trial, and its schedule sent through the
 * slots where the kernel copy took 0.6 of the time (2026-12-03, Intel Xeon VM).  16 ms,
 * a sixth of such a benchmark's calls, rather than a fixed few calls: the untimed calls
 * keep the first calls' page faults and cold caches out of the trial, and the more of
 * them the better where they cost little.  (With more ranks than cores each rank of a
 * schedule chooses the way of its own messages, and at P = 4, 512 KiB, 0.4 ms a call, the
 * ranks chose differently in 2 launches of 3 after 8 untimed calls and in 3 of 4 after 64:
 * the noise of shared cores, not the warm-up.)  At least 8: after the copy trial's calls
 * (fill_tune.c: FILL_SKIP, then 6). */
#define WARM_NS (16u * 1000u * 1000u)
#define WARM_MIN_CALLS 8

static bool moves_large(const collie_request_t *req) {
    uint64_t send, recv;
    collie_coll_buffer_bytes(&req->args, req->args.rank, &send, &recv);
    return (send > recv ? send : recv) >= (1ull << LARGE_CLASS);
}

/* The class's untimed calls: the plan's, or as many as it took to warm up (above). */
static int skip_of(const tune_class *c, trial_plan t) { return c->skip ? c->skip : t.skip; }

/* An untimed call of ns into the class's warm-up (from LARGE_CLASS the plan's 2 untimed
 * calls end before WARM_MIN_CALLS). */
static void warm_up(const collie_request_t *req, tune_class *c, trial_plan t, uint64_t ns) {
    if (c->skip || c->calls >= t.skip)
        return;
    c->warm_ns += ns;
    if (c->calls + 1 >= WARM_MIN_CALLS && c->warm_ns >= WARM_NS && moves_large(req))
        c->skip = (uint8_t)(c->calls + 1);
}

/* When the cells are tried, the last of the untimed calls go through them, as many as the
 * ring has cells (a call takes at least one, so they go once round it): a call uses a few
 * cells of the ring and the next call the following ones (cells_impl.h), so without this
 * the trial's cells blocks wrote cells that no call had used since set-up, cold in memory,
 * while the slots were warm from the untimed calls.  Measured (P = 2, AMD EPYC VM,
 * 2026-11-29): allreduce 128 KiB in its slow state, the trial timed the cells at
 * 13.2-13.6 us, the slots 13.0-13.6, and took the slots, which then ran at 13.9 against
 * the cells' 10.8; 32 KiB with 16 warm calls (half the ring), the cells 3.2 against the
 * slots' 2.0, then 1.57 against 1.89. */
static bool cells_warm_up(const collie_request_t *req, const tune_class *c, trial_plan t) {
    const collie_cells *cl = req->team->tp->cells;
    return c->trial - 1 == TRIAL_USER_KERNEL_CELLS && cl && c->calls + (int)cl->ncells >= t.skip;
}

/* The schedules' level: rank 0's choice for req's collective and size class, shared by the
 * team (collie_transport.way_choices): the word's address, or NULL where there is none.
 * Each rank chooses the way of the messages it sends, and with more ranks than cores the
 * ranks' trials disagree: at P = 4, alltoall of 512 KiB blocks, in 3 launches of 4 some
 * ranks took the kernel copy and some the slots, 429-506 us a call, against 366-373 where
 * all took the kernel copy (2026-12-03, Intel Xeon VM).  So once rank 0 chose, every rank
 * takes its way; until then each follows its own trial. */
static _Atomic uint8_t *team_way(const collie_request_t *req) {
    _Atomic uint8_t *w = req->team->tp->way_choices;
    int i = req->args.coll * COLLIE_WAY_CLASSES + collie_size_class(req->args.bytes);
    return w && collie_size_class(req->args.bytes) < COLLIE_WAY_CLASSES && i < COLLIE_WAY_CHOICES
               ? &w[i] : NULL;
}

/* A rank other than 0 takes rank 0's choice once there is one, whatever its own trial
 * chose or is still timing (its trial then ends). */
static void follow_rank0(collie_request_t *req, tune_class *c) {
    _Atomic uint8_t *w = team_way(req);
    uint8_t way = w ? atomic_load_explicit(w, memory_order_relaxed) : 0;
    if (way && way != c->chosen) {
        c->chosen = way;
        collie_log(COLLIE_LOG_INFO, "rank %d: the messages it sends in %s of %llu B: taking %s, "
                   "rank 0's choice", req->args.rank, collie_coll_name(req->args.coll),
                   (unsigned long long)req->args.bytes, way == 1 + PATH_KERNEL ? "the kernel copy"
                                                                              : "shared memory");
    }
}

static int pick(collie_request_t *req, enum table table, int trial) {
    tune_class *c = class_for(req, table);
    if (!c)
        return trial_order[trial][0];
    if (!c->trial)
        c->trial = (uint8_t)(1 + trial);
    if (table == TABLE_SCHED && req->args.rank != 0)
        follow_rank0(req, c);
    if (c->chosen)
        return path_tune_revisit_way(c);
    trial_plan t = plan_of(collie_size_class(req->args.bytes));
    t.skip = skip_of(c, t);
    int block = c->calls < t.skip ? -1 : (c->calls - t.skip) / t.block;
    if (block < 0 && cells_warm_up(req, c, t))
        return PATH_CELLS;
    return block < 0 || block >= blocks_of(c) ? way_of_block(c, 0) : way_of_block(c, block);
}

int path_tune_pick(collie_request_t *req, bool cells_trial) {
    bool cells = cells_trial && req->args.bytes >= CELLS_TRIAL_MIN;
    return pick(req, TABLE_DRIVER, cells ? TRIAL_USER_KERNEL_CELLS : TRIAL_USER_KERNEL);
}

bool path_tune_mapped_trial(const collie_request_t *req) {
    return path_tune_on(req) && req->args.bytes >= PATH_MAPPED_TRIAL_MIN &&
           !req->team->tp->oversubscribed;
}

int path_tune_pick_mapped(collie_request_t *req) {
    return path_tune_mapped_trial(req) ? pick(req, TABLE_MAPPED, TRIAL_MAPPED_CELLS) : PATH_MAPPED;
}

int path_tune_sched_pick(collie_request_t *req) { return pick(req, TABLE_SCHED, TRIAL_USER_KERNEL); }

static bool timed(collie_request_t *req, enum table table) {
    const tune_class *c = class_for(req, table);
    return c && c->trial && !c->chosen;
}

bool path_tune_timed(collie_request_t *req, bool all_mapped) {
    return req->args.rank == path_tune_decider(req) && timed(req, all_mapped ? TABLE_MAPPED : TABLE_DRIVER);
}

bool path_tune_sched_timed(collie_request_t *req) { return timed(req, TABLE_SCHED); }

const char *path_way_name(int way) {
    return way == PATH_KERNEL ? "the kernel copy" : way == PATH_CELLS ? "the copy cells"
         : way == PATH_MAPPED ? "the mapped buffers" : "shared memory";
}

static void log_choice(collie_request_t *req, const tune_class *c, int counted, enum table table,
                       int way) {
    int k = collie_size_class(req->args.bytes);
    char times[160], cells[64] = "";
    if (c->trial == 1 + TRIAL_USER_KERNEL_CELLS)
        snprintf(cells, sizeof cells, " (the slots), the copy cells %.1f us", c->best[PATH_CELLS] / 1e3);
    if (table == TABLE_MAPPED)
        snprintf(times, sizeof times, "with every buffer mapped: the mapped buffers took %.1f us, "
                 "the copy cells %.1f us", c->best[PATH_MAPPED] / 1e3, c->best[PATH_CELLS] / 1e3);
    else
        snprintf(times, sizeof times, "with buffers that are not mapped: the kernel copy took "
                 "%.1f us, shared memory %.1f us%s", c->best[PATH_KERNEL] / 1e3,
                 c->best[PATH_USER] / 1e3, cells);
    collie_log(COLLIE_LOG_INFO, "rank %d: %s%s of %llu B up to %llu B on %d ranks %s (%d counted "
               "calls each; the best block's %s): taking %s", req->args.rank,
               table == TABLE_SCHED ? "the messages it sends in " : "",
               collie_coll_name(req->args.coll), 1ull << k, (2ull << k) - 1, req->args.size,
               times, counted, req->team->tp->oversubscribed ? "fastest call" : "median",
               path_way_name(way));
}

static void choose(collie_request_t *req, tune_class *c, int counted, enum table table) {
    int way;
    if (table == TABLE_MAPPED) {
        way = c->best[PATH_CELLS] && c->best[PATH_CELLS] < c->best[PATH_MAPPED] ? PATH_CELLS
                                                                               : PATH_MAPPED;
    } else {
        double margin = table == TABLE_SCHED ? SCHED_KERNEL_MARGIN : 1.0;
        way = (double)c->best[PATH_KERNEL] < margin * (double)c->best[PATH_USER] ? PATH_KERNEL
                                                                                 : PATH_USER;
        if (c->trial == 1 + TRIAL_USER_KERNEL_CELLS && c->best[PATH_CELLS] &&
            c->best[PATH_CELLS] < c->best[way])
            way = PATH_CELLS;
    }
    c->chosen = (uint8_t)(1 + way);
    log_choice(req, c, counted, table, way);
    _Atomic uint8_t *w = table == TABLE_SCHED && req->args.rank == 0 ? team_way(req) : NULL;
    if (w)
        atomic_store_explicit(w, c->chosen, memory_order_relaxed);
}

/* Two ways, both counted, and one took more than CLEAR_LOSS times the other (large
 * classes). */
static bool clear_loss(const tune_class *c) {
    if (c->trial == 1 + TRIAL_USER_KERNEL_CELLS)
        return false;
    int a = way_of_block(c, 0), b = way_of_block(c, 1);
    uint64_t x = c->best[a], y = c->best[b];
    return x && y && (x > CLEAR_LOSS * y || y > CLEAR_LOSS * x);
}

/* Declared in path_tune.h.  Where every rank has a core, the median of a block's counted
 * calls (of two, the slower), so that neither a call that waited for a descheduled peer
 * nor one whose buffers were still cold from the other ways' blocks decides: on the AMD
 * EPYC VM of 2026-11-29 overwriting 64 KiB whose lines the other core had just read took
 * 7.4-8.9 us, reading them 1.9, and 2.2 once they had rested for 32 turns
 * (bench/overwrite_floor.c), so a block's first call through the slots, whose ring the other
 * ways' blocks had left alone, ran faster than the ones after it: the best of the counted
 * calls said 9.8-15.6 us for allreduce 128 KiB at P = 2 and the slots were taken at
 * 22.7-24.7 us per call, where the median said 17.8-24.3 and the kernel copy or the cells
 * were taken at 15.0-17.6 (3 launches each).  With more ranks than cores the best call:
 * there a call's time is mostly which rank the scheduler ran when, calls of one way vary
 * 2-3x within a block, and the median chose ways that then took 1.1-2.3x the time
 * (reduce at P = 4, 512 KiB and 2 MiB).  A way's time is the best of its blocks'. */
uint64_t path_tune_block_time(const uint64_t *ns, int n, bool median) {
    uint64_t v[BLOCK_COUNTED];
    if (n < 1)
        return 0;
    if (n > BLOCK_COUNTED)
        n = BLOCK_COUNTED;
    for (int i = 0; i < n; i++) {      /* insertion sort: n <= 3 */
        uint64_t x = ns[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return median ? v[n / 2] : v[0];
}

/* The block's time into its way's best; the next block starts empty. */
static void close_block(tune_class *c, bool median) {
    uint64_t t = path_tune_block_time(c->block_ns, c->in_block, median);
    if (t && (c->best[c->block_way] == 0 || t < c->best[c->block_way]))
        c->best[c->block_way] = t;
    c->in_block = 0;
}

static void record(collie_request_t *req, int path, uint64_t ns, enum table table) {
    tune_class *c = class_for(req, table);
    if (c && c->chosen)
        path_tune_revisit(req, c, path, ns, table == TABLE_DRIVER);
    if (!c || c->chosen || !c->trial)
        return;
    collie_log(COLLIE_LOG_DEBUG, "rank %d: %s of %llu B took %.1f us by %s", req->args.rank,
               collie_coll_name(req->args.coll), (unsigned long long)req->args.bytes, ns / 1e3,
               path_way_name(path));
    int k = collie_size_class(req->args.bytes);
    trial_plan t = plan_of(k);
    warm_up(req, c, t, ns);
    t.skip = skip_of(c, t);
    bool counted = c->calls >= t.skip && (c->calls - t.skip) % t.block != 0;
    bool median = !req->team->tp->oversubscribed;
    if (counted && c->in_block && c->block_way != path)
        close_block(c, median);   /* a call that could not go its block's way ends the block */
    if (counted && c->in_block < BLOCK_COUNTED) {
        c->block_way = (uint8_t)path;
        c->block_ns[c->in_block++] = ns;
    }
    int done = ++c->calls - t.skip;   /* trial calls so far */
    if (done > 0 && done % t.block == 0)
        close_block(c, median);
    int per_block = t.block - 1;      /* counted calls per block */
    if (done >= blocks_of(c) * t.block)
        choose(req, c, 2 * per_block, table);
    else if (k >= LARGE_CLASS && counted && clear_loss(c))
        choose(req, c, (done + t.block - 1) / t.block * per_block, table);
}

void path_tune_record(collie_request_t *req, int path, uint64_t ns) {
    record(req, path, ns, TABLE_DRIVER);
}

void path_tune_record_mapped(collie_request_t *req, int path, uint64_t ns) {
    record(req, path, ns, TABLE_MAPPED);
}

void path_tune_sched_record(collie_request_t *req, int path, uint64_t ns) {
    record(req, path, ns, TABLE_SCHED);
}

/* Declared in path_tune.h.  From LARGE_CLASS a trial's calls through the cells are its
 * untimed calls and two blocks (the user way's, or the cells' against the mapped buffers:
 * fewer); below, the trial's blocks start after 8-64 untimed calls (warm_up), within which
 * the copy trials have run.  Measured before this rule (2026-12-03, Intel Xeon VM, P = 2,
 * bcast 1 MiB with fresh data, COLLIE_LOG=debug): the copy trial's streaming-store call
 * (235 us) was the way trial's one counted call through the cells (the others 77-83 us
 * with memcpy), so the kernel copy (109-234 us) was taken at once, and the call ran at
 * 110-125 us against 64-72 for binary_tree.  The same mix-up had alltoall with more ranks
 * than cores take the kernel copy where the cells were faster on the AMD EPYC VM of
 * session 40 (P = 3 fresh 1 / 4 MiB blocks 643 / 3840-4114 us against 536 / 3082-3333), so
 * that driver took the cells untimed until session 44; on its Intel Xeon VM the kernel
 * copy was the faster way there (bench/ab_builds.sh, P = 3 and 4, alltoall 512 KiB-4 MiB,
 * 2 rounds, untimed cells against the trial: P = 3 2 MiB 1824-1963 / 1976-2092 us reused /
 * fresh against 1235-1269 / 1551-1579, P = 4 2 MiB 2604-2629 / 3217-3355 against 1713-1885
 * / 2338-2573), and it times both ways again. */
int path_tune_cells_calls_in_trial(const collie_request_t *req) {
    int k = collie_size_class(req->args.bytes);
    trial_plan t = plan_of(k);
    return path_tune_on(req) && k >= LARGE_CLASS ? t.skip + 2 * t.block : 0;
}

/* Declared in path_tune.h.  allgather and alltoall only: from 1 MiB blocks their trial
 * is the two-way one (user, kernel, kernel, user; direct_colls.c tries the slots as a third
 * way only below 1 MiB), where the cells are the user way and their second block is the
 * trial's last.  A bcast or reduce at P = 2 runs the three-way trial, where the kernel
 * copy's last block follows the cells' second, and a call after streaming stores out finds
 * its destination out of the cache (bcast 1 MiB, Intel Xeon VM, 2026-12-04: the kernel copy
 * timed at 66-80 us there against 55.5-55.9 after memcpy out, so the trial took the slots,
 * 56-60 us a call, where the kernel copy ran at 46-51).  Decided from the call alone, so
 * that every rank flips the same calls (only the decider keeps the trial's table). */
bool path_tune_cells_last_block(const collie_request_t *req, uint64_t n) {
    int k = collie_size_class(req->args.bytes);
    trial_plan t = plan_of(k);
    bool two_way = req->args.coll == COLL_ALLGATHER || req->args.coll == COLL_ALLTOALL;
    return two_way && path_tune_on(req) && k >= LARGE_CLASS && n >= (uint64_t)(t.skip + t.block) &&
           n < (uint64_t)(t.skip + 2 * t.block);
}
