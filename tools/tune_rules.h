/*
 * tune_rules.h — `collie-tune --rules` (tools/collie-tune.c): measures every allreduce
 * algorithm through the library at a list of sizes on this team and turns the fastest
 * per size into first-match rules of the tuning file (p_min = p_max = the team size).
 *
 * For each size, every algorithm that accepts the call (its persistent request runs it)
 * is timed in turn, and the turn is repeated (--repeat, 3 by default): slow drifts of a
 * shared machine hit all algorithms alike.  An algorithm's time is the median of its
 * turns, each the mean of a batch of start+wait calls (rank 0's clock after a barrier;
 * the calls synchronise).  Consecutive sizes with the same winner become one rule; the
 * border between two rules lies at the geometric mean of the sizes on either side.
 * Rules of other team sizes already in the output file are kept, so running the tool
 * once per P builds the P × size grid in one file.
 */
#ifndef COLLIE_TUNE_RULES_H
#define COLLIE_TUNE_RULES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collie.h"
#include "base/base.h"
#include "select/tuning.h"

#define RULES_MAX_SIZES 32
#define RULES_MAX_ALGOS 32

typedef struct rules_run {
    collie_team_t *team;
    int rank, P, repeat;
    bool quick;
    void *buf;                      /* at least the largest size, registered */
    int nsizes;
    uint64_t sizes[RULES_MAX_SIZES];
    const char *winner[RULES_MAX_SIZES];
    bool commutative_only[RULES_MAX_SIZES];
} rules_run;

static void rules_must(const rules_run *r, int st, const char *what) {
    if (st == COLLIE_OK)
        return;
    fprintf(stderr, "collie-tune: rank %d: %s: %s: %s\n", r->rank, what, collie_strerror(st),
            collie_last_error());
    exit(1);
}

/* Mean seconds per call of iters start+wait calls of req. */
static double rules_time_batch(const rules_run *r, collie_request_t *req, int iters) {
    rules_must(r, collie_barrier(r->team), "barrier");
    uint64_t t0 = collie_now_ns();
    for (int i = 0; i < iters; i++) {
        rules_must(r, collie_start(req), "start");
        rules_must(r, collie_wait(req), "wait");
    }
    return (double)(collie_now_ns() - t0) * 1e-9 / iters;
}

/* Calls per batch: about 2 ms (--quick) or 10 ms of them, 2 … 5000; rank 0 decides. */
static int rules_batch_iters(const rules_run *r, collie_request_t *req) {
    double per = rules_time_batch(r, req, 2);
    double want = (r->quick ? 2e-3 : 10e-3) / (per > 1e-9 ? per : 1e-9);
    int64_t iters = want < 2 ? 2 : want > 5000 ? 5000 : (int64_t)want;
    rules_must(r, collie_bcast(r->team, &iters, 1, COLLIE_INT64, 0), "bcast");
    return (int)iters;
}

static double rules_median(double *v, int n) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A persistent allreduce of `bytes` forced to algorithm k; NULL when it declines (the
 * request would run another algorithm).  Every rank decides alike. */
static collie_request_t *rules_request(const rules_run *r, size_t k, uint64_t bytes) {
    const collie_algorithm *alg = collie_algorithm_at(COLL_ALLREDUCE, k);
    collie_request_t *req = NULL;
    rules_must(r, collie_force_algorithm(COLL_ALLREDUCE, alg->name), "forcing an algorithm");
    int st = collie_allreduce_init(r->team, COLLIE_IN_PLACE, r->buf, bytes / 8, COLLIE_FLOAT64,
                                   COLLIE_SUM, &req);
    if (st != COLLIE_OK || strcmp(collie_request_algorithm(req), alg->name) != 0) {
        collie_request_free(req);
        return NULL;
    }
    return req;
}

/* Measures size index s: every accepting algorithm, --repeat turns; sets the winner. */
static void rules_measure_size(rules_run *r, int s) {
    size_t nalg = collie_algorithm_count(COLL_ALLREDUCE);
    nalg = nalg > RULES_MAX_ALGOS ? RULES_MAX_ALGOS : nalg;
    collie_request_t *req[RULES_MAX_ALGOS];
    int iters[RULES_MAX_ALGOS];
    double t[RULES_MAX_ALGOS][16];
    for (size_t k = 0; k < nalg; k++)
        if ((req[k] = rules_request(r, k, r->sizes[s])))
            iters[k] = rules_batch_iters(r, req[k]);
    for (int turn = 0; turn < r->repeat; turn++)
        for (size_t k = 0; k < nalg; k++)
            if (req[k])
                t[k][turn] = rules_time_batch(r, req[k], iters[k]);
    double best = INFINITY;
    r->winner[s] = NULL;
    for (size_t k = 0; k < nalg; k++) {
        if (!req[k])
            continue;
        double m = rules_median(t[k], r->repeat);
        if (m < best) {
            best = m;
            r->winner[s] = collie_algorithm_at(COLL_ALLREDUCE, k)->name;
            r->commutative_only[s] =
                (collie_algorithm_at(COLL_ALLREDUCE, k)->needs & ALGO_NEEDS_COMMUTATIVE) != 0;
        }
        collie_request_free(req[k]);
    }
    rules_must(r, collie_force_algorithm(COLL_ALLREDUCE, "auto"), "resetting the algorithm");
    if (r->rank == 0)
        printf("collie-tune: P=%d %llu bytes: %s %.2f us\n", r->P,
               (unsigned long long)r->sizes[s], r->winner[s] ? r->winner[s] : "-", best * 1e6);
}

static void rules_measure(rules_run *r) {
    for (int s = 0; s < r->nsizes; s++)
        rules_measure_size(r, s);
}

/* The border between sizes a < b: their geometric mean. */
static uint64_t rules_border(uint64_t a, uint64_t b) {
    return (uint64_t)sqrt((double)a * (double)b);
}

static void rules_write_one(FILE *f, bool *first, int P, uint64_t lo, uint64_t hi, bool last,
                            const char *alg, bool commutative) {
    fprintf(f, "%s    {\"coll\": \"allreduce\", \"p_min\": %d, \"p_max\": %d, \"bytes_min\": %llu",
            *first ? "" : ",\n", P, P, (unsigned long long)lo);
    if (!last)
        fprintf(f, ", \"bytes_max\": %llu", (unsigned long long)hi);
    fprintf(f, ",%s \"algorithm\": \"%s\"}", commutative ? " \"op_class\": \"commutative\"," : "",
            alg);
    *first = false;
}

/* This run's rules: runs of sizes with the same winner. */
static void rules_write_new(FILE *f, const rules_run *r, bool *first) {
    int s = 0;
    uint64_t lo = 0;
    while (s < r->nsizes) {
        int e = s;
        while (e + 1 < r->nsizes && r->winner[e + 1] && r->winner[s] &&
               !strcmp(r->winner[e + 1], r->winner[s]))
            e++;
        bool last = e + 1 == r->nsizes;
        uint64_t hi = last ? UINT64_MAX : rules_border(r->sizes[e], r->sizes[e + 1]) - 1;
        if (r->winner[s])
            rules_write_one(f, first, r->P, lo, hi, last, r->winner[s], r->commutative_only[s]);
        lo = hi + 1;
        s = e + 1;
    }
}

/* Rules already in `old` for other team sizes (kept), written back. */
static void rules_write_kept(FILE *f, const collie_tuning *old, int P, bool *first) {
    for (int i = 0; old && i < old->nrules; i++) {
        const tuning_rule *x = &old->rules[i];
        if (x->coll != COLL_ALLREDUCE || (x->p_min <= P && P <= x->p_max))
            continue;
        fprintf(f, "%s    {\"coll\": \"allreduce\", \"p_min\": %d, \"p_max\": %d, "
                "\"bytes_min\": %llu", *first ? "" : ",\n", x->p_min, x->p_max,
                (unsigned long long)x->bytes_min);
        if (x->bytes_max != UINT64_MAX)
            fprintf(f, ", \"bytes_max\": %llu", (unsigned long long)x->bytes_max);
        fprintf(f, ",%s \"algorithm\": \"%s\"}",
                x->op_class == OPC_COMMUTATIVE ? " \"op_class\": \"commutative\"," : "",
                x->alg->name);
        *first = false;
    }
}

/* The "rules" member: kept rules of smaller team sizes, this run's, then larger ones. */
static void rules_write(FILE *f, const rules_run *r, const collie_tuning *old) {
    bool first = true;
    static collie_tuning below, above;
    if (old) {
        below = above = *old;
        below.nrules = above.nrules = 0;
        for (int i = 0; i < old->nrules; i++) {
            if (old->rules[i].p_max < r->P)
                below.rules[below.nrules++] = old->rules[i];
            else if (old->rules[i].p_min > r->P)
                above.rules[above.nrules++] = old->rules[i];
        }
    }
    fprintf(f, "  \"rules\": [\n");
    rules_write_kept(f, old ? &below : NULL, r->P, &first);
    rules_write_new(f, r, &first);
    rules_write_kept(f, old ? &above : NULL, r->P, &first);
    fprintf(f, "\n  ]\n");
}

#endif
