/*
 * tune_rules.h — `collie-tune --rules` (tools/collie-tune.c): measures every algorithm of
 * the chosen collectives (--coll; allreduce by default, and allgather, reduce_scatter
 * (block form), alltoall, gather, scatter, scan, exscan) through the library at a list of
 * sizes on this team and turns the fastest per size into first-match rules of the tuning
 * file (p_min = p_max = the team size).  Sizes are a call's `bytes` as the rules see
 * them: the vector (allreduce, scan, exscan), one rank's block (the others).  The calls
 * are not in place, float64 sums, root 0, on collie_alloc buffers (--malloc: malloc).
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
    void *sbuf, *rbuf;              /* P × the largest size each (rules_alloc) */
    bool malloced;                  /* --malloc: the buffers are not registered */
    int nsizes;
    uint64_t sizes[RULES_MAX_SIZES];
    int ncolls;
    int colls[COLL_COUNT];          /* the collectives measured */
    const char *winner[COLL_COUNT][RULES_MAX_SIZES];
    bool commutative_only[COLL_COUNT][RULES_MAX_SIZES];
} rules_run;

/* Is coll one that --rules measures (collectives with data; not barrier, reduce, bcast)? */
static bool rules_coll_ok(int coll) {
    return coll == COLL_ALLREDUCE || coll > COLL_BARRIER;
}

static bool rules_measured(const rules_run *r, int coll) {
    for (int i = 0; i < r->ncolls; i++)
        if (r->colls[i] == coll)
            return true;
    return false;
}

/* --coll LIST (comma-separated names, or "all"): false on an unknown or unmeasurable name. */
static bool rules_parse_colls(rules_run *r, const char *list) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list ? list : "allreduce");
    r->ncolls = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int c = 0; c < COLL_COUNT; c++)
            if ((!strcmp(tok, "all") || !strcmp(tok, collie_coll_name(c))) && rules_coll_ok(c) &&
                !rules_measured(r, c))
                r->colls[r->ncolls++] = found = c;
        if (found < 0 && strcmp(tok, "all") != 0) {
            fprintf(stderr, "collie-tune: --coll: '%s' is not one of allreduce, allgather, "
                    "reduce_scatter, alltoall, gather, scatter, scan, exscan, all\n", tok);
            return false;
        }
    }
    return r->ncolls > 0;
}

/* Send and receive buffers of P × the largest size each; false when out of memory. */
static bool rules_alloc(rules_run *r, size_t largest) {
    size_t n = (size_t)r->P * largest;
    r->sbuf = r->malloced ? malloc(n) : collie_alloc(r->team, n);
    r->rbuf = r->malloced ? malloc(n) : collie_alloc(r->team, n);
    if (r->sbuf)
        memset(r->sbuf, 0, n);
    return r->sbuf && r->rbuf;
}

static void rules_free(rules_run *r) {
    if (r->malloced) {
        free(r->sbuf);
        free(r->rbuf);
    } else {
        collie_free(r->team, r->sbuf);
        collie_free(r->team, r->rbuf);
    }
}

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

/* A restartable call of coll on `bytes` forced to algorithm k (start-order matched, as the
 * blocking calls' plans: the direct-access algorithms serve it); NULL when it declines
 * (the request would run another algorithm).  Every rank decides alike. */
static collie_request_t *rules_request(const rules_run *r, int coll, size_t k, uint64_t bytes) {
    const collie_algorithm *alg = collie_algorithm_at(coll, k);
    collie_request_t *req = NULL;
    rules_must(r, collie_force_algorithm(coll, alg->name), "forcing an algorithm");
    bool op = collie_coll_has_op(coll);
    int st = collie_request_build_v(r->team, NULL, coll, r->sbuf, r->rbuf, bytes / 8, NULL,
                                    COLLIE_FLOAT64, op ? COLLIE_SUM : NULL, 0, 1, &req);
    if (st != COLLIE_OK || strcmp(collie_request_algorithm(req), alg->name) != 0) {
        collie_request_free(req);
        return NULL;
    }
    return req;
}

/* Measures size index s of collective index ci: every accepting algorithm, --repeat
 * turns; sets the winner. */
static void rules_measure_size(rules_run *r, int ci, int s) {
    int coll = r->colls[ci];
    size_t nalg = collie_algorithm_count(coll);
    nalg = nalg > RULES_MAX_ALGOS ? RULES_MAX_ALGOS : nalg;
    collie_request_t *req[RULES_MAX_ALGOS];
    int iters[RULES_MAX_ALGOS];
    double t[RULES_MAX_ALGOS][16];
    for (size_t k = 0; k < nalg; k++)
        if ((req[k] = rules_request(r, coll, k, r->sizes[s])))
            iters[k] = rules_batch_iters(r, req[k]);
    for (int turn = 0; turn < r->repeat; turn++)
        for (size_t k = 0; k < nalg; k++)
            if (req[k])
                t[k][turn] = rules_time_batch(r, req[k], iters[k]);
    double best = INFINITY;
    r->winner[coll][s] = NULL;
    for (size_t k = 0; k < nalg; k++) {
        if (!req[k])
            continue;
        double m = rules_median(t[k], r->repeat);
        if (m < best) {
            best = m;
            r->winner[coll][s] = collie_algorithm_at(coll, k)->name;
            r->commutative_only[coll][s] =
                (collie_algorithm_at(coll, k)->needs & ALGO_NEEDS_COMMUTATIVE) != 0;
        }
        collie_request_free(req[k]);
    }
    rules_must(r, collie_force_algorithm(coll, "auto"), "resetting the algorithm");
    if (r->rank == 0)
        printf("collie-tune: %s P=%d %llu bytes: %s %.2f us\n", collie_coll_name(coll), r->P,
               (unsigned long long)r->sizes[s], r->winner[coll][s] ? r->winner[coll][s] : "-",
               best * 1e6);
}

static void rules_measure(rules_run *r) {
    for (int ci = 0; ci < r->ncolls; ci++)
        for (int s = 0; s < r->nsizes; s++)
            rules_measure_size(r, ci, s);
}

/* The border between sizes a < b: their geometric mean. */
static uint64_t rules_border(uint64_t a, uint64_t b) {
    return (uint64_t)sqrt((double)a * (double)b);
}

static void rules_write_one(FILE *f, bool *first, int coll, int P, uint64_t lo, uint64_t hi,
                            bool last, const char *alg, bool commutative) {
    fprintf(f, "%s    {\"coll\": \"%s\", \"p_min\": %d, \"p_max\": %d, \"bytes_min\": %llu",
            *first ? "" : ",\n", collie_coll_name(coll), P, P, (unsigned long long)lo);
    if (!last)
        fprintf(f, ", \"bytes_max\": %llu", (unsigned long long)hi);
    fprintf(f, ",%s \"algorithm\": \"%s\"}", commutative ? " \"op_class\": \"commutative\"," : "",
            alg);
    *first = false;
}

/* This run's rules of coll: runs of sizes with the same winner. */
static void rules_write_new(FILE *f, const rules_run *r, int coll, bool *first) {
    int s = 0;
    uint64_t lo = 0;
    const char *const *w = r->winner[coll];
    while (s < r->nsizes) {
        int e = s;
        while (e + 1 < r->nsizes && w[e + 1] && w[s] && !strcmp(w[e + 1], w[s]))
            e++;
        bool last = e + 1 == r->nsizes;
        uint64_t hi = last ? UINT64_MAX : rules_border(r->sizes[e], r->sizes[e + 1]) - 1;
        if (w[s])
            rules_write_one(f, first, coll, r->P, lo, hi, last, w[s], r->commutative_only[coll][s]);
        lo = hi + 1;
        s = e + 1;
    }
}

/* Rules already in `old` that this run does not replace (other collectives, other team
 * sizes), written back. */
static void rules_write_kept(FILE *f, const rules_run *r, const collie_tuning *old, bool *first) {
    for (int i = 0; old && i < old->nrules; i++) {
        const tuning_rule *x = &old->rules[i];
        if (rules_measured(r, x->coll) && x->p_min <= r->P && r->P <= x->p_max)
            continue;
        fprintf(f, "%s    {\"coll\": \"%s\", \"p_min\": %d, \"p_max\": %d, "
                "\"bytes_min\": %llu", *first ? "" : ",\n", collie_coll_name(x->coll), x->p_min,
                x->p_max, (unsigned long long)x->bytes_min);
        if (x->bytes_max != UINT64_MAX)
            fprintf(f, ", \"bytes_max\": %llu", (unsigned long long)x->bytes_max);
        fprintf(f, ",%s \"algorithm\": \"%s\"}",
                x->op_class == OPC_COMMUTATIVE ? " \"op_class\": \"commutative\"," : "",
                x->alg->name);
        *first = false;
    }
}

/* The "rules" member: kept rules of smaller team sizes (and of collectives not measured
 * now), this run's, then those of larger team sizes. */
static void rules_write(FILE *f, const rules_run *r, const collie_tuning *old) {
    bool first = true;
    static collie_tuning below, above;
    if (old) {
        below = above = *old;
        below.nrules = above.nrules = 0;
        for (int i = 0; i < old->nrules; i++) {
            if (old->rules[i].p_max < r->P || (old->rules[i].p_min <= r->P &&
                                               !rules_measured(r, old->rules[i].coll)))
                below.rules[below.nrules++] = old->rules[i];
            else if (old->rules[i].p_min > r->P)
                above.rules[above.nrules++] = old->rules[i];
        }
    }
    fprintf(f, "  \"rules\": [\n");
    rules_write_kept(f, r, old ? &below : NULL, &first);
    for (int ci = 0; ci < r->ncolls; ci++)
        rules_write_new(f, r, r->colls[ci], &first);
    rules_write_kept(f, r, old ? &above : NULL, &first);
    fprintf(f, "\n  ]\n");
}

#endif
