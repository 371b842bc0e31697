/*
 * overhead_bench.c — collie's software cost per call, without any communication cost:
 * P virtual ranks in one process (the in-process `loop` transport), persistent requests,
 * every rank started and then polled with collie_test(req, 0) in turn until all are done.
 * What it measures is the executor, request queue and kernel path per call and rank —
 * the part of a small collective's latency that is not the cache-line transfer.
 *
 *   build/bench/overhead_bench [P] [count] [iterations]     (float64 sum allreduce)
 *   COLLIE_ALLREDUCE_ALGO=flat build/bench/overhead_bench 4
 *   COLLIE_BENCH_START_ORDER=1 build/bench/overhead_bench 2   (the blocking calls' requests)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collie.h"
#include "core/internal.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Starts every rank's request, then polls all in turn until every one is done. */
static int run_once(int P, collie_request_t **reqs) {
    for (int r = 0; r < P; r++)
        if (collie_start(reqs[r]))
            return -1;
    for (int left = P; left;) {
        left = 0;
        for (int r = 0; r < P; r++) {
            int st = collie_test(reqs[r], 0);
            if (st < 0)
                return -1;
            left += st > 0;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    int P = argc > 1 ? atoi(argv[1]) : 2;
    size_t count = argc > 2 ? (size_t)atol(argv[2]) : 1;
    long iters = argc > 3 ? atol(argv[3]) : 1000000;
    if (P < 1 || P > 64 || count < 1 || iters < 1) {
        fprintf(stderr, "usage: overhead_bench [P 1..64] [count >= 1] [iterations >= 1]\n");
        return 2;
    }
    collie_transport *tps[64];
    collie_team_t *teams[64];
    collie_request_t *reqs[64];
    /* The blocking calls' restartable requests (matched by start order) instead of
     * collie_allreduce_init's (matched by initialization order). */
    bool start_order = getenv("COLLIE_BENCH_START_ORDER") != NULL;
    double *in = calloc((size_t)P * count, sizeof *in), *out = calloc((size_t)P * count, sizeof *out);
    if (!in || !out || collie_loop_create(P, tps)) {
        fprintf(stderr, "overhead_bench: %s\n", collie_last_error());
        return 1;
    }
    for (int r = 0; r < P; r++)
        if (collie_team_create(tps[r], &teams[r]) ||
            (start_order ? collie_request_build(teams[r], COLL_ALLREDUCE, in + (size_t)r * count,
                                                out + (size_t)r * count, count, COLLIE_FLOAT64,
                                                COLLIE_SUM, 0, true, &reqs[r])
                         : collie_allreduce_init(teams[r], in + (size_t)r * count,
                                                 out + (size_t)r * count, count, COLLIE_FLOAT64,
                                                 COLLIE_SUM, &reqs[r]))) {
            fprintf(stderr, "overhead_bench: %s\n", collie_last_error());
            return 1;
        }
    for (long i = 0; i < iters / 10 + 1; i++)   /* warm-up */
        if (run_once(P, reqs))
            break;
    double t0 = now_s();
    for (long i = 0; i < iters; i++)
        if (run_once(P, reqs)) {
            fprintf(stderr, "overhead_bench: %s\n", collie_last_error());
            return 1;
        }
    double t = now_s() - t0;
    printf("allreduce P=%d count=%zu float64 sum, %s: %.1f ns per call per rank\n", P, count,
           collie_request_algorithm(reqs[0]), t / (double)iters / P * 1e9);
    for (int r = 0; r < P; r++) {
        collie_request_free(reqs[r]);
        collie_team_destroy(teams[r]);
    }
    free(in);
    free(out);
    return 0;
}
