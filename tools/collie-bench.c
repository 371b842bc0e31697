/*
 * collie-bench.c — OSU-style latency benchmark of collie's collectives (allreduce, reduce,
 * bcast, barrier): the automatic choice, one forced algorithm, or every registered
 * algorithm, over a range of message sizes.  Run it under `collie-run -n P` (or mpirun);
 * rank 0 prints the table (and optionally a CSV file and per-rank times).  The timing
 * method is documented in bench_usage() (bench_opts.h); --check verifies results with exact inputs
 * (bench_check.h).  Auxiliary communication (agreeing, gathering times) runs with every
 * collective set to "auto", so it works whatever algorithm is being measured.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"
#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "bench_check.h"
#include "bench_opts.h"
#include "bench_osu.h"
#include "tool_version.h"

#define TARGET_NS 100e6        /* adaptive iterations: about 100 ms per size */
#define MIN_ITERS 10
#define MAX_ITERS 10000
#define CALIBRATION_CALLS 5
#define PAGE 4096

typedef struct bench {
    bench_opts o;
    collie_team_t *team;
    int rank, P;
    size_t esz;                   /* element size */
    void *sbuf, *rbuf;
    size_t buf_bytes;
    double *tin, *tout;           /* P per-rank times (µs) */
    FILE *csv;
    const char *spec;             /* algorithm spec being measured */
    char why[1024], last_why[1024];
    int turn;                     /* --repeat: which turn over the algorithms (0 …) */
    uint64_t calls;               /* --fresh-data: number of the next call (the salt) */
    bool check_failed;
    bool osu_format, osu_full;    /* --format osu, -f (bench_osu.h) */
    bool warmed;                  /* the first row's extra warm-up is done */
    osu_progress progress;
} bench;

/* Untimed calls before the first row of a run, on top of --warmup: the first calls of a
 * process pay for page faults, planning and cold caches (a first 8 B row read 14 us where
 * the next ones read 0.1 us). */
#define FIRST_ROW_WARMUP 200

/* ---- helpers -------------------------------------------------------------------------- */

static void die_collie(const bench *b, int st) {
    fprintf(stderr, "collie-bench: rank %d: %s: %s\n", b->rank, collie_strerror(st),
            collie_last_error());
    exit(1);
}

static void must(const bench *b, int st) {
    if (st != COLLIE_OK)
        die_collie(b, st);
}

/* The benchmark's own communication (agreeing, synchronising, gathering times) never uses
 * the collective being measured, so it runs whatever algorithm is forced for that one, and
 * no collie_force_algorithm() call (which invalidates cached blocking plans) happens while
 * a size is measured.  The other collectives are set to "auto" once, at the start. */
static void aux_allreduce(const bench *b, const void *in, void *out, size_t n, collie_dtype_t t,
                          collie_op_t op) {
    if (b->o.coll != COLL_ALLREDUCE) {
        must(b, collie_allreduce(b->team, in, out, n, t, op));
        return;
    }
    must(b, collie_reduce(b->team, in, out, n, t, op, 0));
    must(b, collie_bcast(b->team, out, n, t, 0));
}

static int agree_min(const bench *b, int v) {
    int32_t in = v, out = 0;
    aux_allreduce(b, &in, &out, 1, COLLIE_INT32, COLLIE_MIN);
    return out;
}

static int64_t aux_bcast0(const bench *b, int64_t v) {
    int64_t in = b->rank == 0 ? v : 0, out = v;
    if (b->o.coll != COLL_BCAST)
        must(b, collie_bcast(b->team, &out, 1, COLLIE_INT64, 0));
    else
        aux_allreduce(b, &in, &out, 1, COLLIE_INT64, COLLIE_SUM);
    return out;
}

static void aux_barrier(const bench *b) {
    if (b->o.coll != COLL_BARRIER)
        must(b, collie_barrier(b->team));
    else
        agree_min(b, 0);
}

static void set_auto_except_measured(const bench *b) {
    for (int c = 0; c < COLL_COUNT; c++)
        if (c != b->o.coll)
            must(b, collie_force_algorithm(c, "auto"));
}

static const void *send_ptr(const bench *b) {
    bool in_place = b->o.in_place && (b->o.coll == COLL_ALLREDUCE || b->rank == b->o.root);
    return in_place ? COLLIE_IN_PLACE : b->sbuf;
}

#include "bench_colls.h"
#include "bench_colls_check.h"

/* The request of one size: in persistent mode the collie_*_init request that is timed;
 * in the other modes one planned like the blocking calls' cached plans (matched by start
 * order), never started, which names the algorithm those calls run (a persistent request,
 * matched by initialization order, may take another: drivers decline it). */
static int init_request(const bench *b, size_t count, collie_request_t **req) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return o->mode == MODE_PERSISTENT ? more_call(b, count, 2, req) : more_request(b, count, req);
    if (o->mode != MODE_PERSISTENT) {
        bool reduces = o->coll == COLL_ALLREDUCE || o->coll == COLL_REDUCE;
        bool barrier = o->coll == COLL_BARRIER;
        int st = collie_request_build(b->team, o->coll, reduces ? send_ptr(b) : NULL,
                                      barrier ? NULL : b->rbuf, barrier ? 0 : count,
                                      barrier ? COLLIE_UINT8 : o->dtype, reduces ? o->op : NULL,
                                      o->coll == COLL_ALLREDUCE || barrier ? 0 : o->root, true, req);
        return st;
    }
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_allreduce_init(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, req);
    case COLL_REDUCE:
        return collie_reduce_init(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op,
                                  o->root, req);
    case COLL_BCAST: return collie_bcast_init(b->team, b->rbuf, count, o->dtype, o->root, req);
    default: return collie_barrier_init(b->team, req);
    }
}

static int call_blocking(const bench *b, size_t count) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return more_call(b, count, 0, NULL);
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_allreduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op);
    case COLL_REDUCE:
        return collie_reduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, o->root);
    case COLL_BCAST: return collie_bcast(b->team, b->rbuf, count, o->dtype, o->root);
    default: return collie_barrier(b->team);
    }
}

static int call_nonblocking(const bench *b, size_t count, collie_request_t **r) {
    const bench_opts *o = &b->o;
    if (more_coll(o->coll))
        return more_call(b, count, 1, r);
    switch (o->coll) {
    case COLL_ALLREDUCE:
        return collie_iallreduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, r);
    case COLL_REDUCE:
        return collie_ireduce(b->team, send_ptr(b), b->rbuf, count, o->dtype, o->op, o->root, r);
    case COLL_BCAST: return collie_ibcast(b->team, b->rbuf, count, o->dtype, o->root, r);
    default: return collie_ibarrier(b->team, r);
    }
}

static int run_once(const bench *b, collie_request_t *req, size_t count) {
    collie_request_t *r = NULL;
    int st;
    if (b->o.mode == MODE_PERSISTENT) {
        st = collie_start(req);
        return st != COLLIE_OK ? st : collie_wait(req);
    }
    if (b->o.mode == MODE_BLOCKING)
        return call_blocking(b, count);
    st = call_nonblocking(b, count, &r);
    if (st == COLLIE_OK && b->o.mode == MODE_POLL)
        do
            st = collie_test(r, 0);
        while (st == COLLIE_TIMEOUT);
    if (st == COLLIE_OK)
        st = collie_wait(r);
    collie_request_free(r);
    return st;
}

static void run_loop(const bench *b, collie_request_t *req, size_t count, long n) {
    for (long i = 0; i < n; i++)
        must(b, run_once(b, req, count));
}

/* The buffer a call reads its input from on this rank; NULL when it has none (bcast
 * off the root). */
static void *input_buf(const bench *b) {
    if (b->o.coll == COLL_BCAST)
        return b->rank == b->o.root ? b->rbuf : NULL;
    return send_ptr(b) == COLLIE_IN_PLACE ? b->rbuf : b->sbuf;
}

/* --fresh-data: new input values for the next call (numbered b->calls), untimed; the
 * caller's barrier follows, so no rank's timing sees the rewrite. */
static void fresh_input(bench *b, size_t count) {
    void *in = input_buf(b);
    if (more_coll(b->o.coll))
        more_fill_fresh(b, count, b->calls);   /* bench_colls_check.h */
    else if (in)
        bench_fill_fresh(in, count, more_opid(b), b->o.dtype, b->P, b->rank, b->calls);
    b->calls++;
}

/* ---- one size ------------------------------------------------------------------------- */

enum { PREP_FAILED = 0, PREP_FELL_BACK = 1, PREP_OK = 2 };

static bool is_forced(const bench *b) { return strcmp(b->spec, "auto") != 0; }

/* Whether the request runs another algorithm than the forced one. */
static bool fell_back(const bench *b, const char *used) {
    size_t n = strcspn(b->spec, ":");
    return is_forced(b) && (strlen(used) != n || strncmp(b->spec, used, n) != 0);
}

/* Why the forced algorithm declines the call req plans: the library falls back to another
 * algorithm silently, so ask the registry with the request's own arguments. */
static void decline_reason(bench *b, const collie_request_t *req) {
    char name[64];
    const char *why = NULL;
    collie_coll_args a = req->args;
    const collie_algorithm *alg = NULL;
    if (collie_parse_algo_spec(b->spec, name, sizeof name, &a.params) == COLLIE_OK)
        alg = collie_algorithm_find(b->o.coll, name);
    if (alg && !collie_algorithm_accepts(alg, &a, &why))
        snprintf(b->why, sizeof b->why, "%s", why ? why : "no reason given");
    else
        snprintf(b->why, sizeof b->why, "reason unknown");
}

/* Plans the request of one size (init_request); the least state over ranks: PREP_OK,
 * PREP_FELL_BACK (reason in b->why), PREP_FAILED (forced algorithm only; under auto a
 * failure is an error).  used receives the algorithm the request runs. */
static int prepare(bench *b, size_t count, collie_request_t **req, char *used, size_t n) {
    *req = NULL;
    int st = init_request(b, count, req), state = st != COLLIE_OK ? PREP_FAILED : PREP_OK;
    snprintf(b->why, sizeof b->why, "%s", st != COLLIE_OK ? collie_last_error() : "");
    snprintf(used, n, "%s", *req && collie_request_algorithm(*req) ? collie_request_algorithm(*req)
                                                                    : "?");
    if (st == COLLIE_OK && fell_back(b, used)) {
        state = PREP_FELL_BACK;
        decline_reason(b, *req);
    }
    int all = agree_min(b, state);
    if (all == PREP_FAILED && !is_forced(b) && st != COLLIE_OK)
        die_collie(b, st);
    if (all == PREP_FAILED && !is_forced(b))
        exit(1);
    if (all < state)
        snprintf(b->why, sizeof b->why, "declined on another rank");
    if (all == PREP_FAILED) {
        collie_request_free(*req);
        *req = NULL;
    }
    return all;
}

/* Warm-up, then the iteration count (rank 0's calibration, broadcast). */
static long decide_iters(bench *b, collie_request_t *req, size_t count) {
    run_loop(b, req, count, b->o.warmup);
    if (b->o.iters > 0)
        return b->o.iters;
    uint64_t t0 = collie_now_ns();
    for (int i = 0; i < CALIBRATION_CALLS; i++) {
        if (b->o.fresh_data)
            fresh_input(b, count);   /* counted: ~100 ms of wall time per size */
        if (b->o.barrier_each)
            aux_barrier(b);   /* part of each iteration's cost, so the ~100 ms holds */
        must(b, run_once(b, req, count));
    }
    double per_call = (double)(collie_now_ns() - t0) / CALIBRATION_CALLS;
    double want = TARGET_NS / (per_call > 1 ? per_call : 1);
    int64_t n = want < MIN_ITERS ? MIN_ITERS : want > MAX_ITERS ? MAX_ITERS : (int64_t)want;
    return (long)aux_bcast0(b, n);
}

/* --barrier-each: the sum of iters calls' times, each call alone after a barrier
 * (--fresh-data: new input written before the barrier). */
static uint64_t time_each_after_barrier(bench *b, collie_request_t *req, size_t count,
                                        long iters) {
    uint64_t total = 0;
    for (long i = 0; i < iters; i++) {
        if (b->o.fresh_data)
            fresh_input(b, count);
        aux_barrier(b);
        uint64_t t0 = collie_now_ns();
        must(b, run_once(b, req, count));
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

static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"")) {
        fprintf(f, "%s,", s);
        return;
    }
    fputc('"', f);
    for (; *s; s++)
        fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
    fputs("\",", f);
}

static const char *op_label(const bench *b) {
    return collie_coll_has_op(b->o.coll) ? collie_op_name(b->o.op) : "none";
}

static void report(const bench *b, size_t count, long iters, const char *label, const char *used) {
    double avg = 0, mn = b->tout[0], mx = b->tout[0];
    uint64_t bytes = (uint64_t)count * b->esz;
    for (int r = 0; r < b->P; r++) {
        avg += b->tout[r] / b->P;
        mn = b->tout[r] < mn ? b->tout[r] : mn;
        mx = b->tout[r] > mx ? b->tout[r] : mx;
    }
    /* same widths as the header; a space before every field keeps columns apart when a
     * value outgrows its width (a call of 100 ms or more, a count of 8 digits) */
    if (b->osu_format)
        osu_row((unsigned long long)bytes, avg, mn, mx, iters, b->osu_full);
    else
        printf("%9llu %7zu %8ld %8.2f %8.2f %8.2f", (unsigned long long)bytes, count, iters, avg,
           mn, mx);
    if (b->osu_format)
        ;
    else if (b->o.coll == COLL_BARRIER)
        printf("%7s  %s\n", "-", label);
    else
        printf(" %6.2f  %s\n", avg > 0 ? (double)bytes / (avg * 1e3) : 0.0, label);
    for (int r = 0; b->o.per_rank && r < b->P; r++)
        printf("#   rank %4d %9.2f us\n", r, b->tout[r]);
    if (!b->csv)
        return;
    fprintf(b->csv, "%s,", collie_coll_name(b->o.coll));
    csv_field(b->csv, b->spec);
    csv_field(b->csv, used);
    fprintf(b->csv, "%d,%llu,%zu,%s,%s,%ld,%.3f,%.3f,%.3f\n", b->P, (unsigned long long)bytes,
            count, b->o.coll == COLL_BARRIER ? "none" : collie_dtype_name(b->o.dtype),
            op_label(b), iters, avg, mn, mx);
}

/* ---- --check -------------------------------------------------------------------------- */

static void fill_check_inputs(const bench *b, size_t count) {
    int opid = more_opid(b);
    bool own_input = b->o.coll != COLL_BCAST || b->rank == b->o.root;
    void *in = send_ptr(b) == COLLIE_IN_PLACE || b->o.coll == COLL_BCAST ? b->rbuf : b->sbuf;
    if (in != b->rbuf || !own_input)
        memset(b->rbuf, 0xA5, count * b->esz);
    for (size_t i = 0; own_input && i < count; i++)
        bench_put(in, i, b->o.dtype, bench_input(opid, b->o.dtype, b->P, b->rank, i));
}

/* Index of the first wrong result element on this rank, or -1. */
static long first_mismatch(const bench *b, size_t count) {
    if (b->o.coll == COLL_REDUCE && b->rank != b->o.root)
        return -1;
    for (size_t i = 0; i < count; i++) {
        double want = (double)bench_expected(more_opid(b), b->o.dtype, b->P, b->o.root, i);
        if (bench_get(b->rbuf, i, b->o.dtype) != want)
            return (long)i;
    }
    return -1;
}

/* --fresh-data --check: the result of the last timed call (numbered b->calls - 1) against
 * its expected values; called right after timing, before anything rewrites the buffers. */
static void check_fresh(bench *b, size_t count, const char *used) {
    if (more_coll(b->o.coll))
        more_verify(b, count, true, used);
    if (more_coll(b->o.coll) || (b->o.coll == COLL_REDUCE && b->rank != b->o.root))
        return;
    uint64_t salt = b->calls - 1;
    for (size_t i = 0; i < count; i++) {
        double want = (double)bench_fresh_expected(more_opid(b), b->o.dtype, b->P, b->o.root,
                                                   i, salt);
        double got = bench_get(b->rbuf, i, b->o.dtype);
        if (got == want)
            continue;
        fprintf(stderr, "collie-bench: rank %d: fresh-data check failed (%s, %zu elements, %s,"
                " call %llu): index %zu: got %g, expected %g\n", b->rank,
                collie_coll_name(b->o.coll), count, used, (unsigned long long)salt, i, got, want);
        b->check_failed = true;
        return;
    }
}

static void check_size(bench *b, collie_request_t *req, size_t count, const char *used) {
    bool more = more_coll(b->o.coll);
    if (more)
        more_fill_check_inputs(b, count);
    else
        fill_check_inputs(b, count);
    must(b, run_once(b, req, count));
    if (more)
        more_verify(b, count, false, used);
    long bad = more ? -1 : first_mismatch(b, count);
    if (bad >= 0) {
        double want = (double)bench_expected(more_opid(b), b->o.dtype, b->P, b->o.root,
                                             (size_t)bad);
        fprintf(stderr, "collie-bench: rank %d: check failed (%s, %zu elements, %s): index %ld:"
                " got %g, expected %g\n", b->rank, collie_coll_name(b->o.coll), count, used,
                bad, bench_get(b->rbuf, (size_t)bad, b->o.dtype), want);
        b->check_failed = true;
    }
    memset(b->sbuf, 0, b->buf_bytes);   /* keep later in-place timing free of growth */
    memset(b->rbuf, 0, b->buf_bytes);
}

/* ---- driver --------------------------------------------------------------------------- */

static bool all_mode(const bench *b) {
    return b->o.algo && (!strcmp(b->o.algo, "all") || !strcmp(b->o.algo, "all,auto"));
}

/* Rank 0 reports a declined size, once per algorithm and reason. */
static void note_decline(bench *b, size_t count, int state, const char *used) {
    if (b->rank == 0 && b->turn == 0 && strcmp(b->why, b->last_why) != 0) {
        printf("%9llu%8zu  declined: %s", (unsigned long long)(count * b->esz), count, b->why);
        printf(state == PREP_FELL_BACK ? " (fell back to %s)\n" : "\n", used);
    }
    snprintf(b->last_why, sizeof b->last_why, "%s", b->why);
}

static void bench_size(bench *b, size_t count) {
    collie_request_t *req;
    char used[64], label[128];
    int state = prepare(b, count, &req, used, sizeof used);
    if (state != PREP_OK)
        note_decline(b, count, state, used);
    if (state == PREP_FAILED || (state == PREP_FELL_BACK && all_mode(b))) {
        collie_request_free(req);
        return;
    }
    snprintf(label, sizeof label, state == PREP_FELL_BACK ? "(fell back to %s)" : "%s", used);
    if (!b->warmed) {
        run_loop(b, req, count, b->o.iters > 0 && b->o.iters < FIRST_ROW_WARMUP ? b->o.iters
                                                                              : FIRST_ROW_WARMUP);
        b->warmed = true;
    }
    long iters = decide_iters(b, req, count);
    if (b->o.sync_start)
        measure_sync(b, req, count, iters);
    else
        measure(b, req, count, iters);
    if (b->o.check && b->o.fresh_data)
        check_fresh(b, count, used);
    if (b->rank == 0)
        report(b, count, iters, label, used);
    if (b->o.check && b->o.coll != COLL_BARRIER)
        check_size(b, req, count, used);
    collie_request_free(req);
    fflush(stdout);
    if (b->rank == 0)
        osu_progress_row(&b->progress);
}

static void bench_algorithm(bench *b, const char *spec) {
    b->spec = spec;
    b->last_why[0] = '\0';
    must(b, collie_force_algorithm(b->o.coll, spec));
    if (b->rank == 0 && all_mode(b))
        printf("# algo=%s: %s\n", spec, collie_algorithm_find(b->o.coll, spec)->summary);
    if (b->o.coll == COLL_BARRIER) {
        bench_size(b, 0);
        return;
    }
    size_t prev = SIZE_MAX;
    for (uint64_t bytes = b->o.min_bytes; bytes <= b->o.max_bytes;) {
        size_t count = (size_t)(bytes / b->esz);
        count = count == 0 && bytes > 0 ? 1 : count;
        if (count != prev)
            bench_size(b, count);
        prev = count;
        if (bytes > b->o.max_bytes / b->o.step)
            break;
        bytes = bytes ? bytes * b->o.step : 1;
    }
}

/* One size measured for every algorithm (and auto) in turn, the turn repeated --repeat
 * times: drifts of a shared machine and launch effects hit all of them alike. */
static void bench_turns(bench *b, const char *const *specs, int nspecs, size_t count) {
    for (b->turn = 0; b->turn < b->o.repeat; b->turn++)
        for (int i = 0; i < nspecs; i++) {
            b->spec = specs[i];
            must(b, collie_force_algorithm(b->o.coll, specs[i]));
            bench_size(b, count);
        }
    b->turn = 0;
}

/* --algo all,auto, or all with --repeat: sizes outermost, algorithms interleaved. */
static void bench_interleaved(bench *b) {
    const char *specs[65];
    int n = 0;
    for (size_t i = 0; i < collie_algorithm_count(b->o.coll) && n < 64; i++)
        specs[n++] = collie_algorithm_at(b->o.coll, i)->name;
    if (!strcmp(b->o.algo, "all,auto"))
        specs[n++] = "auto";
    size_t prev = SIZE_MAX;
    for (uint64_t bytes = b->o.min_bytes; bytes <= b->o.max_bytes;) {
        size_t count = (size_t)(bytes / b->esz);
        count = count == 0 && bytes > 0 ? 1 : count;
        if (count != prev)
            bench_turns(b, specs, n, count);
        prev = count;
        if (bytes > b->o.max_bytes / b->o.step)
            break;
        bytes = bytes ? bytes * b->o.step : 1;
    }
}

static void print_header(const bench *b) {
    if (b->osu_format)
        osu_header(collie_coll_name(b->o.coll), b->osu_full);
    printf("# collie-bench %s P=%d", collie_coll_name(b->o.coll), b->P);
    if (b->o.coll != COLL_BARRIER)
        printf(" dtype=%s", collie_dtype_name(b->o.dtype));
    if (collie_coll_has_op(b->o.coll))
        printf(" op=%s", collie_op_name(b->o.op));
    if (collie_coll_rooted(b->o.coll))
        printf(" root=%d", b->o.root);
    printf(" algo=%s mode=%s%s%s%s\n", b->o.algo ? b->o.algo : bench_default_spec(b->o.coll),
           mode_names[b->o.mode], b->o.in_place ? " in-place" : "",
           b->o.barrier_each ? " barrier-each" : "", b->o.fresh_data ? " fresh-data" : "");
    if (!b->osu_format)
        printf("#   bytes   count    iters   avg_us   min_us   max_us   GB/s  algorithm\n");
}

static void *alloc_buf(const bench *b, size_t bytes) {
    void *p = NULL;
    if (b->o.collie_alloc)
        p = collie_alloc(b->team, bytes);
    else if (posix_memalign(&p, PAGE, bytes) != 0)
        p = NULL;
    if (!p) {
        fprintf(stderr, "collie-bench: rank %d: cannot allocate %zu bytes%s%s\n", b->rank,
                bytes, b->o.collie_alloc ? ": " : "", b->o.collie_alloc ? collie_last_error() : "");
        exit(1);
    }
    memset(p, 0, bytes);   /* touch every page before timing */
    return p;
}

static void free_buf(const bench *b, void *p) {
    if (b->o.collie_alloc)
        collie_free(b->team, p);
    else
        free(p);
}

/* Buffers, times, CSV file; exits (all ranks) when rank 0 cannot open the CSV file. */
static void setup(bench *b) {
    set_auto_except_measured(b);
    b->esz = collie_dtype_size(b->o.dtype);
    size_t bytes = b->o.max_bytes > b->esz ? (size_t)b->o.max_bytes : b->esz;
    if (more_coll(b->o.coll))   /* up to one block per rank */
        bytes *= (size_t)b->P;
    b->buf_bytes = (bytes + PAGE - 1) / PAGE * PAGE;
    b->sbuf = alloc_buf(b, b->buf_bytes);
    b->rbuf = alloc_buf(b, b->buf_bytes);
    b->tin = calloc((size_t)b->P, sizeof(double));
    b->tout = calloc((size_t)b->P, sizeof(double));
    if (b->rank == 0 && b->o.csv) {
        b->csv = fopen(b->o.csv, b->o.csv_append ? "a" : "w");
        if (!b->csv)
            fprintf(stderr, "collie-bench: cannot open --csv %s: %s\n", b->o.csv, strerror(errno));
        if (b->csv && fseek(b->csv, 0, SEEK_END) == 0 && ftell(b->csv) == 0)
            fputs("coll,algo,algo_used,P,bytes,count,dtype,op,iters,avg_us,min_us,max_us\n",
                  b->csv);
    }
    if (!b->tin || !b->tout || agree_min(b, !(b->rank == 0 && b->o.csv && !b->csv)) == 0)
        exit(1);
}

/* Rows the run will print (for the progress line). */
static int planned_rows(const bench *b) {
    int sizes = 0;
    for (uint64_t bytes = b->o.min_bytes; b->o.coll != COLL_BARRIER && bytes <= b->o.max_bytes;) {
        sizes++;
        if (bytes > b->o.max_bytes / b->o.step)
            break;
        bytes = bytes ? bytes * b->o.step : 1;
    }
    int algos = all_mode(b) ? (int)collie_algorithm_count(b->o.coll) +
                              (strcmp(b->o.algo, "all,auto") == 0) : 1;
    return (sizes ? sizes : 1) * algos * (int)(all_mode(b) ? b->o.repeat : 1);
}

static void run(bench *b) {
    b->progress.start_ns = b->progress.last_ns = collie_now_ns();
    b->progress.total = planned_rows(b);
    if (b->rank == 0)
        osu_warn_oversubscribed(b->P);
    if (b->rank == 0)
        print_header(b);
    if (b->o.check && b->rank == 0 && !bench_check_possible(b->o.dtype, more_opid(b), b->P))
        printf("# --check skipped: results of %s at P=%d are not exact in %s\n", op_label(b),
               b->P, collie_dtype_name(b->o.dtype));
    if (b->o.check && !bench_check_possible(b->o.dtype, more_opid(b), b->P))
        b->o.check = false;
    if (!all_mode(b)) {
        bench_algorithm(b, b->o.algo ? b->o.algo : bench_default_spec(b->o.coll));
        return;
    }
    if (b->o.coll == COLL_BARRIER || (!strcmp(b->o.algo, "all") && b->o.repeat == 1)) {
        for (size_t i = 0; i < collie_algorithm_count(b->o.coll); i++)
            bench_algorithm(b, collie_algorithm_at(b->o.coll, i)->name);
        return;
    }
    bench_interleaved(b);
}

/* After collie_init: checks needing the team (root, forcing the algorithm spec). */
static int validate_team(const bench *b, char *err, size_t n) {
    const char *spec = b->o.algo ? b->o.algo : bench_default_spec(b->o.coll);
    if (b->o.root >= b->P)
        return snprintf(err, n, "--root %d: team has %d ranks", b->o.root, b->P), PARSE_ERROR;
    if (!all_mode(b) && collie_force_algorithm(b->o.coll, spec) != COLLIE_OK)
        return snprintf(err, n, "algorithm '%s': %s", spec, collie_last_error()), PARSE_ERROR;
    return PARSE_OK;
}

static int finish_parse(int pr, const char *err, bool print) {
    if (print && pr == PARSE_HELP)
        bench_usage(stdout);
    if (print && pr == PARSE_HELP)
        bench_list_algorithms(stdout);
    if (print && pr == PARSE_ERROR)
        fprintf(stderr, "collie-bench: %s\n(collie-bench --help lists the options)\n", err);
    return pr == PARSE_HELP ? 0 : 2;
}

int main(int argc, char **argv) {
    bench b;
    if (tool_version_requested(argc, argv, "collie-bench"))
        return 0;
    char err[1200] = "";
    memset(&b, 0, sizeof b);
    osu_args oa;
    int pr = osu_translate(argc, argv, &oa, err, sizeof err) ? PARSE_OK : PARSE_ERROR;
    if (pr == PARSE_OK)
        pr = bench_parse_args(oa.argc, oa.argv, &b.o, err, sizeof err);
    b.osu_format = oa.osu_format;
    b.osu_full = oa.full;
    int st = collie_init();
    if (st != COLLIE_OK && pr != PARSE_OK)
        return finish_parse(pr, err, true);
    if (st != COLLIE_OK)
        die_collie(&b, st);
    b.team = collie_world();
    b.rank = collie_rank(b.team);
    b.P = collie_size(b.team);
    if (pr == PARSE_OK)
        pr = validate_team(&b, err, sizeof err);
    if (pr != PARSE_OK) {
        int code = finish_parse(pr, err, b.rank == 0);
        fflush(NULL);   /* others exit after rank 0 printed: the launcher kills on exit != 0 */
        if (collie_force_algorithm(COLL_BARRIER, "auto") == COLLIE_OK)
            collie_barrier(b.team);
        collie_finalize();
        return code;
    }
    setup(&b);
    run(&b);
    int failed = agree_min(&b, b.check_failed ? 0 : 1) == 0;
    if (b.csv)
        fclose(b.csv);
    free_buf(&b, b.sbuf);
    free_buf(&b, b.rbuf);
    free(b.tin);
    free(b.tout);
    osu_args_free(&oa);
    must(&b, collie_finalize());
    return failed ? 1 : 0;
}
