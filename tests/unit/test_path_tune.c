/*
 * test_path_tune.c — the path trial's estimator (core/path_tune.c): a block's time is the
 * median of its counted calls where every rank has a core, else the fastest (both checked
 * against a sort of every order of 1-3 times), and a whole trial, driven through
 * path_tune_pick / path_tune_record with made-up times, takes the way that is fastest once
 * taken:
 *   - the slots fast only on the first counted call of each block (their ring left cold by
 *     the other ways' blocks) and slower than the copy cells on every later call: the
 *     cells (the best of the counted calls would take the slots);
 *   - one call of the fastest way 50x slower (a descheduled peer): still that way;
 *   - a large size class whose kernel copy loses by more than 1.5x in its first block:
 *     decided early, the user way;
 *   - a call that moves at least 1 MiB through its rank in blocks of less (alltoall of
 *     512 KiB blocks on 8 ranks) ends its untimed calls once they took 16 ms (8 ... 64
 *     of them); one that moves less keeps the 64;
 *   - with more ranks than cores (the transport says so) the fastest call of a block
 *     counts: the slots of the first case are taken;
 *   - the schedules' level (each rank chooses the way of the messages it sends): a rank
 *     other than 0 whose own trial chose shared memory takes rank 0's kernel copy once
 *     rank 0 chose (the team's shared table), and keeps its own without the table;
 *   - an allgather of 4 MiB blocks whose copies out of the cells take 1.8 ms with memcpy
 *     (the rule's first way) and 1.0 with streaming stores, the kernel copy 1.5: the trial's
 *     last block through the cells copies out with streaming stores (core/fill_tune.c),
 *     so the trial takes the cells (timed with memcpy out only, it took the kernel copy);
 *     in the three-way trial (slots, kernel copy, cells) every call keeps memcpy out;
 *   - the choice revisited after the trial (revisits below).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/base.h"
#include "core/fill_tune.h"
#include "core/internal.h"
#include "core/path_tune.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The reference: sort, then the middle (of two, the larger), or the first. */
static uint64_t reference(const uint64_t *ns, int n, bool median) {
    uint64_t v[3];
    memcpy(v, ns, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return median ? v[n / 2] : v[0];
}

static void block_times(void) {
    check(path_tune_block_time(NULL, 0, true) == 0, "no counted call: time 0");
    const uint64_t vals[3] = { 7, 3, 11 };
    for (int median = 0; median < 2; median++)
        for (int n = 1; n <= 3; n++)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    for (int c = 0; c < 3; c++) {
                        uint64_t ns[3] = { vals[a], vals[b], vals[c] };
                        uint64_t got = path_tune_block_time(ns, n, median);
                        uint64_t want = reference(ns, n, median);
                        check(got == want, "block of %d (%llu %llu %llu), %s: %llu, want %llu", n,
                              (unsigned long long)ns[0], (unsigned long long)ns[1],
                              (unsigned long long)ns[2], median ? "median" : "fastest",
                              (unsigned long long)got, (unsigned long long)want);
                    }
}

/* A decider's request for `bytes` of allreduce on 2 ranks, on a team of its own. */
typedef struct fake_call {
    collie_transport tp;
    collie_team_t team;
    collie_request_t req;
} fake_call;

static void fake_init(fake_call *f, uint64_t bytes) {
    memset(f, 0, sizeof *f);
    f->tp.size = 2;
    f->team.size = 2;
    f->team.tp = &f->tp;
    f->req.team = &f->team;
    f->req.args.coll = COLL_ALLREDUCE;
    f->req.args.bytes = bytes;
    f->req.args.size = 2;
}

/* The time of a call's way: cost[way], but the first counted call of each block
 * (position 1 in a block of 4, after the 64 untimed calls) takes cold[way] when set,
 * and call number `slow_call` takes 50x. */
typedef struct model {
    uint64_t cost[PATH_WAYS], cold[PATH_WAYS];
    int slow_call;
} model;

/* Runs calls until the class decided (at most 200), returns the way it took. */
static int run_trial(fake_call *f, const model *m, bool cells_trial, int *calls_out) {
    int prev = -1, in_block = 0;
    for (int call = 0; call < 200; call++) {
        int way = path_tune_pick(&f->req, cells_trial);
        if (!path_tune_timed(&f->req, false)) {
            *calls_out = call;
            return way;
        }
        in_block = way == prev ? in_block + 1 : 0;
        prev = way;
        uint64_t ns = m->cost[way];
        if (in_block == 1 && m->cold[way])
            ns = m->cold[way];
        if (call == m->slow_call)
            ns *= 50;
        path_tune_record(&f->req, way, ns);
    }
    *calls_out = 200;
    return -1;
}

static void trials(void) {
    fake_call *f = malloc(sizeof *f);
    int calls;
    /* the slots cold-fast on each block's first counted call (13.3 against 21 us) */
    fake_init(f, 128 << 10);
    model m = { .cost = { [PATH_USER] = 21000, [PATH_KERNEL] = 17500, [PATH_CELLS] = 15600 },
                .cold = { [PATH_USER] = 13300 }, .slow_call = -1 };
    int way = run_trial(f, &m, true, &calls);
    check(way == PATH_CELLS, "slots fast only when cold: took way %d, want the copy cells (%d)",
          way, PATH_CELLS);
    check(calls > 64 && calls < 200, "the 128 KiB trial decided after %d calls", calls);
    free(f->team.path_tune);

    /* a descheduled call of the fastest way (the kernel copy, 4 us) */
    fake_init(f, 32 << 10);
    model d = { .cost = { [PATH_USER] = 6000, [PATH_KERNEL] = 4000 }, .slow_call = 64 + 4 + 1 };
    way = run_trial(f, &d, false, &calls);
    check(way == PATH_KERNEL, "one descheduled kernel-copy call: took way %d, want the kernel copy",
          way);
    free(f->team.path_tune);

    /* the same call later in the block, and the user way fastest */
    fake_init(f, 32 << 10);
    model e = { .cost = { [PATH_USER] = 3000, [PATH_KERNEL] = 4000 }, .slow_call = 64 + 2 };
    way = run_trial(f, &e, false, &calls);
    check(way == PATH_USER, "one descheduled user-way call: took way %d, want shared memory", way);
    free(f->team.path_tune);

    /* a large class: the kernel copy 2x slower in its first block, decided at once */
    fake_init(f, 4 << 20);
    model g = { .cost = { [PATH_USER] = 1000000, [PATH_KERNEL] = 2000000 }, .slow_call = -1 };
    way = run_trial(f, &g, false, &calls);
    check(way == PATH_USER, "large class, kernel copy 2x slower: took way %d", way);
    check(calls == 6, "large class, clear loss: decided after %d calls, want 6 (2 untimed, 2 "
          "blocks of 2)", calls);
    free(f->team.path_tune);

    /* an alltoall of 512 KiB blocks on 8 ranks (4 MiB through each rank, below the large
     * class by its blocks): its untimed calls end once they took 16 ms together, at
     * least 8 of them, at most 64; an alltoall of 64 KiB blocks (512 KiB through each
     * rank) keeps the 64 untimed calls however long they take */
    static const struct { uint64_t block, call_ns; int want; } warm[] = {
        { 512 << 10, 2000000, 8 + 16 },     /* 8 calls of 2 ms */
        { 512 << 10, 400000, 40 + 16 },     /* 40 calls of 0.4 ms */
        { 512 << 10, 100000, 64 + 16 },     /* 64 calls of 0.1 ms: 6.4 ms */
        { 64 << 10, 2000000, 64 + 16 },     /* too little moved per call */
    };
    for (size_t i = 0; i < sizeof warm / sizeof warm[0]; i++) {
        fake_init(f, warm[i].block);
        f->req.args.coll = COLL_ALLTOALL;
        f->req.args.size = f->team.size = f->tp.size = 8;
        model w = { .cost = { [PATH_USER] = warm[i].call_ns, [PATH_KERNEL] = warm[i].call_ns / 2 },
                    .slow_call = -1 };
        way = run_trial(f, &w, false, &calls);
        check(way == PATH_KERNEL && calls == warm[i].want, "alltoall of %llu KiB blocks on 8 "
              "ranks, %.1f ms a call: took way %d after %d calls, want the kernel copy after %d",
              (unsigned long long)warm[i].block >> 10, warm[i].call_ns / 1e6, way, calls,
              warm[i].want);
        free(f->team.path_tune);
    }

    /* more ranks than cores: the first case's slots, by their fastest calls */
    fake_init(f, 128 << 10);
    f->tp.oversubscribed = 1;
    way = run_trial(f, &m, true, &calls);
    check(way == PATH_USER, "more ranks than cores, slots fast when cold: took way %d, want "
          "shared memory (%d)", way, PATH_USER);
    free(f->team.path_tune);
    free(f);
}

/* Runs the schedules' trial of f (alltoall of 512 KiB blocks) until it chose, with the
 * user way taking user_ns and the kernel copy kernel_ns; the way it then takes. */
static int run_sched_trial(fake_call *f, uint64_t user_ns, uint64_t kernel_ns) {
    for (int call = 0; call < 200 && path_tune_sched_timed(&f->req) | (call == 0); call++) {
        int way = path_tune_sched_pick(&f->req);
        if (path_tune_sched_timed(&f->req))
            path_tune_sched_record(&f->req, way, way == PATH_KERNEL ? kernel_ns : user_ns);
    }
    return path_tune_sched_pick(&f->req);
}

static void team_way(void) {
    _Atomic uint8_t table[COLLIE_WAY_CHOICES];
    for (int shared = 0; shared < 2; shared++) {
        memset(table, 0, sizeof table);
        fake_call *r0 = malloc(sizeof *r0), *r1 = malloc(sizeof *r1);
        fake_call *ranks[2] = { r0, r1 };
        for (int r = 0; r < 2; r++) {
            fake_init(ranks[r], 512 << 10);
            ranks[r]->req.args.coll = COLL_ALLTOALL;
            ranks[r]->req.args.size = ranks[r]->team.size = ranks[r]->tp.size = 4;
            ranks[r]->req.args.rank = ranks[r]->team.rank = ranks[r]->tp.rank = r;
            ranks[r]->tp.way_choices = shared ? table : NULL;
        }
        int own1 = run_sched_trial(r1, 300000, 400000);      /* rank 1 first: the slots */
        int way0 = run_sched_trial(r0, 500000, 300000);      /* rank 0: the kernel copy */
        int then1 = path_tune_sched_pick(&r1->req);
        check(own1 == PATH_USER && way0 == PATH_KERNEL, "the two trials: rank 1 took %d, rank 0 "
              "%d, want %d and %d", own1, way0, PATH_USER, PATH_KERNEL);
        check(then1 == (shared ? PATH_KERNEL : PATH_USER), "%s: rank 1 then takes way %d, want %d",
              shared ? "with the team's table" : "without it", then1,
              shared ? PATH_KERNEL : PATH_USER);
        check(!path_tune_sched_timed(&r1->req), "rank 1 times no more calls");
        free(r0->team.path_tune);
        free(r1->team.path_tune);
        free(r0);
        free(r1);
    }
}

/* The cells' way out tried within the way trial (path_tune_cells_last_block). */
static void cells_out_way(void) {
    if (!collie_stream_copy_native() || getenv("COLLIE_SHM_STREAM_OUT_MIN")) {
        printf("cells' way out in the trial: skipped (no native streaming stores, or "
               "COLLIE_SHM_STREAM_OUT_MIN set)\n");
        return;
    }
    fake_call *f = malloc(sizeof *f);
    collie_cells *cells = calloc(1, sizeof *cells);
    fake_init(f, 4 << 20);
    f->req.args.coll = COLL_ALLGATHER;
    f->tp.cells = cells;                    /* kernel_min 0: the way is timed */
    f->tp.stream_out_min = UINT64_MAX;      /* the rule's first way out: memcpy */
    f->tp.stream_team_min = UINT64_MAX;
    int way = -1, streamed = 0, calls;
    for (calls = 0; calls < 40 && (calls == 0 || path_tune_timed(&f->req, false)); calls++) {
        way = path_tune_pick(&f->req, false);
        uint64_t ns = 1500000;              /* the kernel copy */
        if (way != PATH_KERNEL) {
            fill_way out = out_tune_begin(&f->req);
            streamed += out.stream;
            ns = out.stream ? 1000000 : 1800000;
        }
        path_tune_record(&f->req, way, ns);
    }
    way = path_tune_pick(&f->req, false);
    check(streamed == 2, "the trial's calls through the cells copied out with streaming "
          "stores %d times, want 2 (its last block)", streamed);
    check(way == PATH_USER, "cells faster with streaming stores out: took way %d after %d "
          "calls, want the cells (%d)", way, calls, PATH_USER);
    free(f->team.path_tune);
    free(f->team.fill_tune);

    /* the three-way trial (slots, kernel copy, cells): the kernel copy's last block follows
     * the cells' second, so every call through the cells keeps the rule's way out */
    fake_init(f, 4 << 20);
    f->req.args.coll = COLL_BCAST;
    cells->ncells = 32;                     /* the untimed calls go through the cells */
    f->tp.cells = cells;
    f->tp.stream_out_min = UINT64_MAX;
    f->tp.stream_team_min = UINT64_MAX;
    streamed = 0;
    for (calls = 0; calls < 40 && (calls == 0 || path_tune_timed(&f->req, false)); calls++) {
        way = path_tune_pick(&f->req, true);
        if (way == PATH_CELLS)
            streamed += out_tune_begin(&f->req).stream;
        path_tune_record(&f->req, way, way == PATH_KERNEL ? 1500000 : 1800000);
    }
    check(streamed == 0, "three-way trial: %d calls through the cells copied out with "
          "streaming stores, want 0", streamed);
    free(f->team.path_tune);
    free(f->team.fill_tune);
    free(cells);
    free(f);
}

/* The trial's calls of each way take trial[way], the calls after its choice steady[way],
 * or degraded[way] (when set) once that way has gone more than 20 calls in a row. */
typedef struct after_choice {
    uint64_t trial[PATH_WAYS], steady[PATH_WAYS], degraded[PATH_WAYS];
    int slow_call;              /* this call (from the first) takes 500x, 0: none */
} after_choice;

typedef struct after_run {
    int way;                    /* of the last call */
    int calls[PATH_WAYS];       /* after the trial, by way */
} after_run;

/* A reduce (or `coll`) of 128 KiB on a fresh team through `n` calls of model a. */
static after_run revisit_case(const after_choice *a, int coll, bool oversubscribed, int n) {
    fake_call *f = malloc(sizeof *f);
    fake_init(f, 128 << 10);
    f->req.args.coll = coll;
    f->tp.oversubscribed = oversubscribed;
    after_run r = { -1, { 0 } };
    int run = 0;
    for (int call = 0; call < n; call++) {
        int way = path_tune_pick(&f->req, false);
        bool trial = path_tune_timed(&f->req, false);
        run = way == r.way ? run + 1 : 1;
        r.way = way;
        uint64_t ns = trial ? a->trial[way]
                    : run > 20 && a->degraded[way] ? a->degraded[way] : a->steady[way];
        if (call == a->slow_call)
            ns *= 500;
        r.calls[way] += !trial;
        path_tune_record(&f->req, way, ns);
    }
    free(f->team.path_tune);
    free(f);
    return r;
}

/* The choice revisited (path_revisit.c): a reduce of 128 KiB whose trial took the slots
 * (9.0 against the kernel copy's 9.3 us) and whose slots then run at 13 us probes the
 * kernel copy after 64 + 256 calls (18 calls) and takes it; a kernel copy that probes at
 * 9.3 but then runs at 15 us is left again after its window; slots at 10 us (within 1.1x
 * of 9.3) stay, after the probe, and so do slots at 9.3 against a kernel copy at 9.0
 * whose window had one descheduled call; with more ranks than cores, and for bcast,
 * nothing is revisited or probed. */
static void revisits(void) {
    int trial_calls = 64 + 4 * 4, probe = 2 + 16, window = 64 + 256;
    after_choice a = { .trial = { [PATH_USER] = 9000, [PATH_KERNEL] = 9300 },
                       .steady = { [PATH_USER] = 13000, [PATH_KERNEL] = 9300 } };
    after_run r = revisit_case(&a, COLL_REDUCE, false, trial_calls + window);
    check(r.way == PATH_USER && r.calls[PATH_KERNEL] == 0, "slots at 13 us: no probe before "
          "64 + 256 calls (way %d, %d kernel copies)", r.way, r.calls[PATH_KERNEL]);
    r = revisit_case(&a, COLL_REDUCE, false, trial_calls + 4000);
    check(r.way == PATH_KERNEL && r.calls[PATH_USER] == window,
          "slots at 13 us, kernel copy at 9.3: way %d, %d calls by the slots after the trial, "
          "want the kernel copy after %d", r.way, r.calls[PATH_USER], window);
    for (int k = 0; k < 2; k++) {
        r = revisit_case(&a, k == 0 ? COLL_REDUCE : COLL_BCAST, k == 0, trial_calls + 4000);
        check(r.way == PATH_USER && r.calls[PATH_KERNEL] == 0, "%s: way %d, %d kernel copies, "
              "want none", k == 0 ? "more ranks than cores" : "bcast", r.way, r.calls[PATH_KERNEL]);
    }
    a.degraded[PATH_KERNEL] = 15000;
    r = revisit_case(&a, COLL_REDUCE, false, trial_calls + 4000);
    check(r.way == PATH_USER && r.calls[PATH_KERNEL] == probe + window,
          "kernel copy at 15 us once taken: way %d, %d kernel copies, want the slots again after "
          "%d", r.way, r.calls[PATH_KERNEL], probe + window);
    a.degraded[PATH_KERNEL] = 0;
    a.steady[PATH_USER] = 9300;       /* one descheduled call in the window: no switch */
    a.steady[PATH_KERNEL] = 9000;
    a.slow_call = trial_calls + 100;
    r = revisit_case(&a, COLL_REDUCE, false, trial_calls + 4000);
    check(r.way == PATH_USER && r.calls[PATH_KERNEL] == probe,
          "one call of 4.6 ms in the slots' window: way %d, %d kernel copies, want the probe's %d",
          r.way, r.calls[PATH_KERNEL], probe);
    a.slow_call = 0;
    a.steady[PATH_KERNEL] = 9300;
    a.steady[PATH_USER] = 10000;
    r = revisit_case(&a, COLL_REDUCE, false, trial_calls + 4000);
    check(r.way == PATH_USER && r.calls[PATH_KERNEL] == probe,
          "slots at 10 us (within 1.1x): way %d, %d kernel copies, want the probe's %d", r.way,
          r.calls[PATH_KERNEL], probe);
}

int main(void) {
    block_times();
    trials();
    revisits();
    team_way();
    cells_out_way();
    if (failures)
        printf("%d check(s) failed\n", failures);
    else
        printf("path trial estimator: ok\n");
    return failures != 0;
}
