/*
 * build_all.c — every rank's schedule before the first event (all ranks start at time 0),
 * built on one thread per CPU, and then every PUT's receiving REDUCE looked up once, on
 * the same threads: the lookups touch other ranks' schedules at random, which costs the
 * engine a cache miss per message when done one arrival at a time, and far less in a
 * loop whose lookups are independent (the CPU overlaps them).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "sim/sim_impl.h"

typedef void (*range_fn)(void *ctx, int thread, int first, int end);

typedef struct range_job {
    range_fn fn;
    void *ctx;
    int thread, first, end;
} range_job;

static void *run_job(void *arg) {
    range_job *j = arg;
    j->fn(j->ctx, j->thread, j->first, j->end);
    return NULL;
}

static int thread_count(int n) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1024 || cpus < 2)
        return 1;
    return cpus < SIM_MAX_THREADS ? (int)cpus : SIM_MAX_THREADS;
}

/* fn over [0, n) split into one contiguous range per thread (thread t: the t-th range);
 * a range whose thread cannot be started runs on this one. */
static void parallel_ranges(int n, range_fn fn, void *ctx) {
    int nt = thread_count(n);
    range_job jobs[SIM_MAX_THREADS];
    pthread_t tid[SIM_MAX_THREADS];
    bool threaded[SIM_MAX_THREADS] = { false };
    for (int t = 0; t < nt; t++) {
        jobs[t] = (range_job){ fn, ctx, t, (int)((long)n * t / nt), (int)((long)n * (t + 1) / nt) };
        threaded[t] = t > 0 && pthread_create(&tid[t], NULL, run_job, &jobs[t]) == 0;
    }
    for (int t = 0; t < nt; t++)
        if (!threaded[t])
            run_job(&jobs[t]);
    for (int t = 1; t < nt; t++)
        if (threaded[t])
            pthread_join(tid[t], NULL);
}

/* ---- building ----------------------------------------------------------------------------- */

typedef struct build_ctx {
    const collie_algorithm *alg;
    const collie_coll_args *args;
    sim_csched **out;
    sim_arena *arenas;
    int failed[SIM_MAX_THREADS];        /* per thread: its first failing rank, or -1 */
    char err[SIM_MAX_THREADS][256];
} build_ctx;

static void build_range(void *arg, int t, int first, int end) {
    build_ctx *x = arg;
    sim_builder b;
    if (!sim_builder_init(&b, x->args)) {
        x->failed[t] = first;
        snprintf(x->err[t], sizeof x->err[t], "out of memory");
    }
    for (int r = first; x->failed[t] < 0 && r < end; r++) {
        x->out[r] = sim_csched_build(&b, &x->arenas[t], x->alg, x->args, r, x->err[t],
                                     sizeof x->err[t]);
        if (!x->out[r])
            x->failed[t] = r;
    }
    sim_builder_free(&b);
}

bool sim_csched_build_all(const collie_algorithm *alg, const collie_coll_args *args,
                          int nranks, sim_csched **out, sim_arena *arenas, char *err,
                          size_t errsz) {
    build_ctx x = { .alg = alg, .args = args, .out = out, .arenas = arenas };
    for (int t = 0; t < SIM_MAX_THREADS; t++)
        x.failed[t] = -1;
    parallel_ranges(nranks, build_range, &x);
    for (int t = 0; t < SIM_MAX_THREADS; t++)           /* the lowest failing rank */
        if (x.failed[t] >= 0) {
            snprintf(err, errsz, "%s", x.err[t]);
            return false;
        }
    return true;
}

/* ---- the REDUCE of every PUT ------------------------------------------------------------- */

typedef struct resolve_ctx {
    sim_csched **all;
    int P;
    bool sym;
} resolve_ctx;

/* The REDUCE that message #seq from rank `from` feeds in s (UINT32_MAX: none). */
static uint32_t reduce_of(const sim_csched *s, int from, uint32_t seq) {
    uint32_t at, end;
    if (!sim_csched_sender(s, from, &at, &end) || at + seq >= end)
        return UINT32_MAX;
    return s->in_op[at + seq];
}

static void resolve_range(void *arg, int t, int first, int end) {
    (void)t;
    resolve_ctx *x = arg;
    for (int r = first; r < end; r++) {
        sim_csched *s = x->all[r];
        for (uint32_t i = 0; i < s->nops; i++) {
            sim_cop *op = &s->ops[i];
            if (op->kind != SCHED_PUT)
                continue;
            if (x->sym)     /* rank 0 receives the mirror image of its own message */
                op->u.put.rop = reduce_of(s, (int)(((long)x->P - op->peer) % x->P), op->u.put.seq);
            else
                op->u.put.rop = reduce_of(x->all[op->peer], r, op->u.put.seq);
        }
    }
}

void sim_resolve_puts(sim_csched **all, int nranks, int P, bool sym) {
    resolve_ctx x = { all, P, sym };
    parallel_ranges(nranks, resolve_range, &x);
}
