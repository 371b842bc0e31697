/*
 * bench_sync.h — collie-bench --sync-start: each rank's latency from a common start (the
 * per-process measurement of Hoefler et al. 2007, §4.3, Figures 5-7).  All ranks run on one
 * machine and share CLOCK_MONOTONIC, so rank 0 can name absolute start instants: call i
 * starts at t0 + i * period on every rank (each sleeps until then), and the rank's latency
 * of call i is its completion time minus that instant.  The period is 3x the slowest rank's
 * back-to-back time per call + 300 us, so a call normally starts after the previous one
 * finished everywhere; ranks sleep until 50 µs before the start and spin from there; a
 * late start counts against the call, as a late process would in an application.  A
 * rank's result is its median over the calls.  Included by bench_time.c.
 */
#ifndef COLLIE_BENCH_SYNC_H
#define COLLIE_BENCH_SYNC_H

#include <time.h>

#define SYNC_MAX_CALLS 500

#define SYNC_SPIN_NS 50000ull

/* Sleeps until SYNC_SPIN_NS before t (wake-ups are late by tens of µs), then spins to t. */
static void sleep_until_ns(uint64_t t) {
    uint64_t early = t - SYNC_SPIN_NS;
    struct timespec ts = { (time_t)(early / 1000000000ull), (long)(early % 1000000000ull) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    while (collie_now_ns() < t)
        ;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The spacing of the calls: from 5 back-to-back calls, the slowest rank's. */
static uint64_t sync_period(const bench *b, collie_request_t *req, size_t count) {
    aux_barrier(b);
    uint64_t t0 = collie_now_ns();
    run_loop(b, req, count, 5);
    double mine = (double)(collie_now_ns() - t0) / 5.0, slowest = 0;
    aux_allreduce(b, &mine, &slowest, 1, COLLIE_FLOAT64, COLLIE_MAX);
    return (uint64_t)(3.0 * slowest) + 300000ull;
}

/* Fills b->tout with every rank's median latency (µs) from the common start. */
static void measure_sync(const bench *b, collie_request_t *req, size_t count, long iters) {
    long n = iters < SYNC_MAX_CALLS ? iters : SYNC_MAX_CALLS;
    uint64_t period = sync_period(b, req, count);
    uint64_t *lat = malloc(sizeof *lat * (size_t)n);
    if (!lat) {
        fprintf(stderr, "collie-bench: out of memory\n");
        exit(1);
    }
    uint64_t t0 = (uint64_t)aux_bcast0(b, (int64_t)(collie_now_ns() + 5000000ull));
    for (long i = 0; i < n; i++) {
        uint64_t start = t0 + (uint64_t)i * period;
        sleep_until_ns(start);
        must(b, run_once(b, req, count));
        lat[i] = collie_now_ns() - start;
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_u64);
    memset(b->tin, 0, sizeof(double) * (size_t)b->P);
    b->tin[b->rank] = (double)lat[n / 2] / 1e3;
    free(lat);
    aux_allreduce(b, b->tin, b->tout, (size_t)b->P, COLLIE_FLOAT64, COLLIE_SUM);
}

#endif
