/*
 * bench_time.c — collie-bench's timing of one size: the warm-up and the iteration count
 * (about 100 ms of calls, rank 0's calibration), then the timed calls back to back after a
 * barrier, each after its own barrier (--barrier-each), or from common start instants
 * (--sync-start, bench_sync.h); every rank's time per call lands in b->tout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define TARGET_NS 100e6        /* adaptive iterations: about 100 ms per size */
#define MIN_ITERS 10
#define MAX_ITERS 10000
#define CALIBRATION_CALLS 5

/* n untimed calls, made as the timed ones are (new input and a barrier before each with
 * --fresh-data, --barrier-each): what collie learns from a size's first calls (which way
 * buffers that are not mapped move, core/path_tune.c) is then what the timed calls
 * see. */
static void call_as_timed(bench *b, collie_request_t *req, size_t count) {
    if (b->o.fresh_data)
        fresh_input(b, count);
    if (b->o.barrier_each)
        aux_sync_each(b);
    must(b, run_once(b, req, count));
    if (b->o.use_result)
        use_result(b, count);
}

void warm_up(bench *b, collie_request_t *req, size_t count, long n) {
    for (long i = 0; i < n; i++)
        call_as_timed(b, req, count);
}

/* Warm-up, then the iteration count (rank 0's calibration, broadcast). */
long decide_iters(bench *b, collie_request_t *req, size_t count) {
    warm_up(b, req, count, b->o.warmup);
    if (b->o.iters > 0)
        return b->o.iters;
    uint64_t t0 = collie_now_ns();
    for (int i = 0; i < CALIBRATION_CALLS; i++)   /* the rewrite and the barrier counted, */
        call_as_timed(b, req, count);             /* so ~100 ms of wall time per size holds */
    double per_call = (double)(collie_now_ns() - t0) / CALIBRATION_CALLS;
    double want = TARGET_NS / (per_call > 1 ? per_call : 1);
    int64_t n = want < MIN_ITERS ? MIN_ITERS : want > MAX_ITERS ? MAX_ITERS : (int64_t)want;
    return (long)aux_bcast0(b, n);
}

/* --barrier-each: the sum of iters calls' times, each call alone after a barrier
 * (--fresh-data: new input written before the barrier; --use-result: the result read
 * after the call, in its time). */
static uint64_t time_each_after_barrier(bench *b, collie_request_t *req, size_t count,
                                        long iters) {
    uint64_t total = 0;
    for (long i = 0; i < iters; i++) {
        if (b->o.fresh_data)
            fresh_input(b, count);
        aux_sync_each(b);
        uint64_t t0 = collie_now_ns();
        must(b, run_once(b, req, count));
        if (b->o.use_result)
            use_result(b, count);
        total += collie_now_ns() - t0;
    }
    return total;
}

/* Times iters calls after a barrier; fills b->tout with every rank's µs per call. */
static void measure(bench *b, collie_request_t *req, size_t count, long iters) {
    aux_barrier(b);
    uint64_t t0 = collie_now_ns(), ns;
    if (b->o.barrier_each) {
        ns = time_each_after_barrier(b, req, count, iters);
    } else {
        run_loop(b, req, count, iters);
        ns = collie_now_ns() - t0;
    }
    double us = (double)ns / 1e3 / (double)iters;
    memset(b->tin, 0, sizeof(double) * (size_t)b->P);
    b->tin[b->rank] = us;
    aux_allreduce(b, b->tin, b->tout, (size_t)b->P, COLLIE_FLOAT64, COLLIE_SUM);
}

#include "bench_sync.h"

/* Times iters calls of one size; fills b->tout with every rank's µs per call. */
void measure_size(bench *b, collie_request_t *req, size_t count, long iters) {
    if (b->o.sync_start)
        measure_sync(b, req, count, iters);
    else
        measure(b, req, count, iters);
}
