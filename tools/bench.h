/*
 * bench.h — what collie-bench's files share: the state of a run (`bench`) and the functions
 * one file calls in another.  collie-bench.c: main, set-up and the loops over algorithms and
 * sizes; bench_calls.c: the benchmark's own communication and the calls being measured;
 * bench_time.c: the timing loop; bench_report.c: the output; bench_verify.c: --check and
 * --fresh-data.  Options: bench_opts.h; exact inputs and results: bench_check.h.
 */
#ifndef COLLIE_BENCH_H
#define COLLIE_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "collie.h"
#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "bench_check.h"
#include "bench_opts.h"
#include "bench_osu.h"

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

/* The states of a size's request, least over ranks (prepare). */
enum { PREP_FAILED = 0, PREP_FELL_BACK = 1, PREP_OK = 2 };

/* bench_calls.c */
void die_collie(const bench *b, int st);   /* prints the error, exits 1 */
void must(const bench *b, int st);         /* die_collie unless st is COLLIE_OK */
void aux_allreduce(const bench *b, const void *in, void *out, size_t n, collie_dtype_t t,
                   collie_op_t op);
int agree_min(const bench *b, int v);
int64_t aux_bcast0(const bench *b, int64_t v);
void aux_barrier(const bench *b);
/* The synchronisation before each timed call: the barrier, or rank 0's release. */
void aux_sync_each(const bench *b);
void set_auto_except_measured(const bench *b);
const void *send_ptr(const bench *b);
int run_once(const bench *b, collie_request_t *req, size_t count);
void run_loop(const bench *b, collie_request_t *req, size_t count, long n);
int prepare(bench *b, size_t count, collie_request_t **req, char *used, size_t n);

/* bench_time.c */
/* n untimed calls, made as the timed ones are (fresh input, a barrier before each). */
void warm_up(bench *b, collie_request_t *req, size_t count, long n);
long decide_iters(bench *b, collie_request_t *req, size_t count);
void measure_size(bench *b, collie_request_t *req, size_t count, long iters);

/* bench_report.c */
void print_header(const bench *b);
const char *op_label(const bench *b);
void report(const bench *b, size_t count, long iters, const char *label, const char *used);
void note_decline(bench *b, size_t count, int state, const char *used);

/* bench_verify.c */
void fresh_input(bench *b, size_t count);
/* --use-result: this rank reads its result, a load per 64-byte line (none: no result). */
void use_result(const bench *b, size_t count);
void check_fresh(bench *b, size_t count, const char *used);
void check_size(bench *b, collie_request_t *req, size_t count, const char *used);

#include "bench_colls.h"
#include "bench_colls_check.h"

#endif
