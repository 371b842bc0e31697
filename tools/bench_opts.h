/*
 * bench_opts.h — command-line options of collie-bench: defaults, usage text (which also
 * documents the timing method), parsing and validation against the library's registry and
 * type rules.  Static inline, header only; included by tools/bench.h.
 */
#ifndef COLLIE_BENCH_OPTS_H
#define COLLIE_BENCH_OPTS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"
#include "core/core.h"
#include "types/types.h"
#include "bench_check.h"

enum { PARSE_OK = 0, PARSE_HELP = 1, PARSE_ERROR = 2 };
enum { MODE_PERSISTENT, MODE_BLOCKING, MODE_NONBLOCKING, MODE_POLL };
static const char *const mode_names[] = { "persistent", "blocking", "nonblocking", "poll" };
static const char *const thread_level_names[] = { "single", "funneled", "serialized", "multiple" };

typedef struct bench_opts {
    int coll, mode, root;
    int thread_level;             /* --thread-level: COLLIE_THREAD_* for collie_init_thread */
    const char *algo;             /* "auto", "all", "all,auto", NAME[:params]; NULL:
                                     $COLLIE_<COLL>_ALGO */
    uint64_t min_bytes, max_bytes, step;
    collie_dtype_t dtype;
    collie_op_t op;
    int opid;                     /* COLLIE_OPID_* of op */
    long iters, warmup;           /* iters 0 = adaptive */
    long repeat;                  /* --algo all[,auto]: measurements of every (size, algorithm) */
    bool in_place, check, per_rank, csv_append, collie_alloc, sync_start;
    bool barrier_each;            /* a barrier (not timed) before every timed call */
    bool fresh_data;              /* new input values before every call (implies barrier_each) */
    bool release_each;            /* --release-each: rank 0 releases the ranks instead of the
                                     barrier (implies barrier_each) */
    bool use_result;              /* --use-result: read the result after every call, timed
                                     with it (implies barrier_each) */
    const char *csv;
} bench_opts;

static inline void bench_usage(FILE *f) {
    fputs("usage: collie-run -n P collie-bench [options]\n"
          "  --coll C          allreduce (default), reduce, bcast, barrier, allgather,\n"
          "                    reduce_scatter (block form), alltoall, gather, scatter, scan,\n"
          "                    exscan (sizes are per block: one rank's part)\n"
          "  --algo A          auto (default; or $COLLIE_<COLL>_ALGO), NAME[:key=value,...],\n"
          "                    or all (every registered algorithm; declining ones are reported)\n"
          "                    or all,auto (the same and auto, interleaved: every size is\n"
          "                    measured for each in turn, --repeat N times)\n"
          "  --repeat N        with all / all,auto: N turns over the algorithms per size (1)\n"
          "  --min-bytes N     smallest message (default 8); suffixes K, M, G (KiB, MiB, GiB)\n"
          "  --max-bytes N     largest message (default 1M)\n"
          "  --step-factor K   size multiplier between rows (default 2)\n"
          "  --dtype T         int8..uint64, float16, bfloat16, float32, float64 (default)\n"
          "  --op O            sum (default), prod, min, max, land, lor, lxor, band, bor, bxor\n"
          "  --root R          root of reduce/bcast (default 0)\n"
          "  --in-place        COLLIE_IN_PLACE (allreduce and the other collectives: as MPI\n"
          "                    allows it; reduce, gather, scatter: the root)\n"
          "  --iters N         timed calls per size (default: adaptive, ~100 ms, 10..10000)\n"
          "  --warmup N        untimed calls before each size (default 10)\n"
          "  --mode M          blocking (default: collie_allreduce ..., the plan cached),\n"
          "                    persistent (init once, start+wait; matched by initialization\n"
          "                    order, so the single-copy, cells and mcast drivers decline),\n"
          "                    nonblocking (i-call + wait + free), poll (i-call, then\n"
          "                    collie_test(req, 0) in a loop until done, + free)\n"
          "  --check           after timing each size, verify one call with integer inputs\n"
          "                    against the exact expected result (every collective)\n"
          "  --per-rank        print each rank's time per call (skew) under each row\n"
          "  --sync-start      latency from a common start instead (see below)\n"
          "  --csv FILE        rank 0 writes CSV rows (--csv-append: append to FILE)\n"
          "  --collie-alloc    buffers from collie_alloc (registered memory), not malloc\n"
          "  --barrier-each    a barrier before every timed call; only the calls are timed\n"
          "                    (latency of one call, no overlap between successive calls;\n"
          "                    the barrier's algorithm: $COLLIE_BARRIER_ALGO, else auto —\n"
          "                    the harness's other calls are always auto)\n"
          "  --fresh-data      rewrite the input with new values before every call (untimed,\n"
          "                    ordinary stores, then the barrier of --barrier-each, which it\n"
          "                    implies): programs pass new data each call, and reused\n"
          "                    unchanged buffers flatter some libraries; with --check, the\n"
          "                    last timed call's result is verified too\n"
          "  --use-result      after every call each rank reads its result (a load per 64-byte\n"
          "                    line of its output), timed with the call: a program uses what\n"
          "                    it gets, and a result left in another core's cache costs it\n"
          "                    there (implies --barrier-each)\n"
          "  --release-each    as --barrier-each, but instead of the barrier every rank\n"
          "                    reports to rank 0, which then releases them (a gather and a\n"
          "                    scatter of one value; a reduce and a bcast when the measured\n"
          "                    call is gather or scatter): rank 0 leaves first, the others\n"
          "                    one hand-over later, whatever the barrier algorithm\n"
          "  --thread-level L  single (default: one thread, what MPI_Init gives an MPI\n"
          "                    benchmark), funneled, serialized or multiple: the level asked\n"
          "                    of collie_init_thread\n"
          "  --version         print the version and exit (as the first argument)\n"
          "  --format F        collie (default) or osu: OSU's columns (# Size, Avg Latency(us))\n"
          "OSU micro-benchmark flags work too: -m [MIN:]MAX (--message-size), -i N\n"
          "(--iterations), -x N (--warmup), -c (--validation = --check), -f (--full: min, max\n"
          "and iterations columns with --format osu), -T mpi_char|mpi_int|mpi_float (--type).\n"
          "The first row gets 200 extra warm-up calls; a line on stderr every 10 s tells the\n"
          "progress; a warning on stderr says when the ranks outnumber the cores.\n"
          "Timing: per size, warm-up calls, then (adaptive) rank 0 times a few calls and\n"
          "broadcasts the iteration count; a barrier; then each rank times `iters` back-to-back\n"
          "calls (--barrier-each: each call timed alone after a barrier, the times summed).\n"
          "A rank's time = elapsed / iters.  avg/min/max are over ranks (max, the\n"
          "slowest rank, is what MPI benchmarks report); GB/s = bytes / avg.  The algorithm\n"
          "column is collie_request_algorithm() of a request planned for the same call.\n"
          "With --sync-start (the method of Hoefler et al. 2007, Fig. 5-7): every call starts\n"
          "at an instant agreed on the machine's monotonic clock (all ranks share it), the\n"
          "calls spaced by 3x the slowest back-to-back call + 300 us, ranks sleeping until the\n"
          "start; a rank's time is the median over iters calls (at most 500) of its completion\n"
          "time since the start, so --per-rank shows each rank's latency and the skew.\n", f);
}

/* ---- option parsing ------------------------------------------------------------------- */

static inline bool parse_u64(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return false;
    static const char *const sfx[] = { "", "K", "M", "G", "KB", "MB", "GB", "KiB", "MiB", "GiB" };
    for (int i = 0; i < 10; i++) {
        int shift = i == 0 ? 0 : 10 * ((i - 1) % 3 + 1);
        if (strcmp(end, sfx[i]) == 0 && v <= (UINT64_MAX >> shift)) {
            *out = (uint64_t)v << shift;
            return true;
        }
    }
    return false;
}

static inline bool parse_long(const char *s, long lo, long hi, long *out) {
    uint64_t v;
    if (!parse_u64(s, &v) || v < (uint64_t)lo || v > (uint64_t)hi)
        return false;
    *out = (long)v;
    return true;
}

static inline int find_coll(const char *s) {
    for (int c = 0; c < COLL_COUNT; c++)
        if (strcmp(s, collie_coll_name(c)) == 0)
            return c;
    return -1;
}

static inline collie_dtype_t find_dtype(const char *s) {
    for (collie_dtype_t t = 1; t < COLLIE_DTYPE_BUILTIN_COUNT; t++)
        if (strcmp(s, collie_dtype_name(t)) == 0)
            return t;
    return COLLIE_DTYPE_INVALID;
}

/* Index (COLLIE_OPID_*) of the builtin op named s, stored in *op; -1 if none. */
static inline int find_op(const char *s, collie_op_t *op) {
    const collie_op_t ops[COLLIE_OPID_BUILTIN_COUNT] = { COLLIE_SUM, COLLIE_PROD, COLLIE_MIN,
        COLLIE_MAX, COLLIE_LAND, COLLIE_LOR, COLLIE_LXOR, COLLIE_BAND, COLLIE_BOR, COLLIE_BXOR,
        COLLIE_MAXLOC, COLLIE_MINLOC };
    for (int i = 0; i < COLLIE_OPID_BUILTIN_COUNT; i++)
        if (strcmp(s, collie_op_name(ops[i])) == 0) {
            *op = ops[i];
            return i;
        }
    return -1;
}

static inline int find_mode(const char *s) {
    for (int m = 0; m < 4; m++)
        if (strcmp(s, mode_names[m]) == 0)
            return m;
    return -1;
}

/* COLLIE_THREAD_SINGLE .. MULTIPLE are 0 .. 3, in thread_level_names' order. */
static inline int find_thread_level(const char *s) {
    for (int l = 0; l < 4; l++)
        if (strcmp(s, thread_level_names[l]) == 0)
            return l;
    return -1;
}

/* Sets option `name` from `val`; false for a bad value. */
static inline bool set_value(bench_opts *o, const char *name, const char *val) {
    long v = 0;
    bool ok = true;
    if (!strcmp(name, "--coll")) ok = (o->coll = find_coll(val)) >= 0;
    else if (!strcmp(name, "--algo")) o->algo = val;
    else if (!strcmp(name, "--min-bytes")) ok = parse_u64(val, &o->min_bytes);
    else if (!strcmp(name, "--max-bytes")) ok = parse_u64(val, &o->max_bytes);
    else if (!strcmp(name, "--dtype")) ok = (o->dtype = find_dtype(val)) != COLLIE_DTYPE_INVALID;
    else if (!strcmp(name, "--op")) ok = (o->opid = find_op(val, &o->op)) >= 0;
    else if (!strcmp(name, "--iters")) ok = parse_long(val, 1, 1L << 30, &o->iters);
    else if (!strcmp(name, "--warmup")) ok = parse_long(val, 0, 1L << 30, &o->warmup);
    else if (!strcmp(name, "--repeat")) ok = parse_long(val, 1, 1000, &o->repeat);
    else if (!strcmp(name, "--mode")) ok = (o->mode = find_mode(val)) >= 0;
    else if (!strcmp(name, "--csv")) o->csv = val;
    else if (!strcmp(name, "--thread-level")) ok = (o->thread_level = find_thread_level(val)) >= 0;
    else if (!strcmp(name, "--root")) {
        ok = parse_long(val, 0, 1L << 30, &v);
        o->root = (int)v;
    } else if (!strcmp(name, "--step-factor")) {
        ok = parse_long(val, 2, 1L << 20, &v);
        o->step = (uint64_t)v;
    }
    return ok;
}

static inline bool set_flag(bench_opts *o, const char *arg) {
    bool *flag = !strcmp(arg, "--in-place") ? &o->in_place
               : !strcmp(arg, "--check") ? &o->check
               : !strcmp(arg, "--per-rank") ? &o->per_rank
               : !strcmp(arg, "--csv-append") ? &o->csv_append
               : !strcmp(arg, "--collie-alloc") ? &o->collie_alloc
               : !strcmp(arg, "--barrier-each") ? &o->barrier_each
               : !strcmp(arg, "--fresh-data") ? &o->fresh_data
               : !strcmp(arg, "--release-each") ? &o->release_each
               : !strcmp(arg, "--use-result") ? &o->use_result
               : !strcmp(arg, "--sync-start") ? &o->sync_start : NULL;
    if (flag)
        *flag = true;
    return flag != NULL;
}

static inline bool is_value_option(const char *name) {
    static const char *const names[] = { "--coll", "--algo", "--min-bytes", "--max-bytes", "--repeat",
        "--step-factor", "--dtype", "--op", "--iters", "--warmup", "--root", "--mode", "--csv", "--thread-level" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

/* Checks that need the library's type rules (algorithm names are checked after init). */
static inline int bench_validate(const bench_opts *o, char *err, size_t n) {
    if (o->min_bytes > o->max_bytes)
        return snprintf(err, n, "--min-bytes is larger than --max-bytes"), PARSE_ERROR;
    if (o->in_place && (o->coll == COLL_BCAST || o->coll == COLL_BARRIER))
        return snprintf(err, n, "--in-place does not apply to %s", collie_coll_name(o->coll)),
               PARSE_ERROR;
    if (o->fresh_data && o->coll == COLL_BARRIER)
        return snprintf(err, n, "--fresh-data: barrier has no data"), PARSE_ERROR;
    if (o->fresh_data && o->sync_start)
        return snprintf(err, n, "--fresh-data and --sync-start cannot be combined"), PARSE_ERROR;
    if (o->use_result && (o->sync_start || o->coll == COLL_BARRIER))
        return snprintf(err, n, "--use-result: not with --sync-start or --coll barrier"), PARSE_ERROR;
    if (o->release_each && (o->sync_start || o->coll == COLL_BARRIER))
        return snprintf(err, n, "--release-each: not with --sync-start or --coll barrier"), PARSE_ERROR;
    if (o->fresh_data && bench_max_exact(o->dtype) == 0)
        return snprintf(err, n, "--fresh-data: dtype %s is not supported",
                        collie_dtype_name(o->dtype)), PARSE_ERROR;
    if (o->fresh_data && collie_coll_has_op(o->coll) && o->opid >= COLLIE_OPID_MAXLOC)
        return snprintf(err, n, "--fresh-data: op %s is not supported (pairs)",
                        collie_op_name(o->op)), PARSE_ERROR;
    bool reduces = collie_coll_has_op(o->coll);
    if (reduces && collie_op_check(o->op, o->dtype) != COLLIE_OK)
        return snprintf(err, n, "--op %s --dtype %s: %s", collie_op_name(o->op),
                        collie_dtype_name(o->dtype), collie_last_error()), PARSE_ERROR;
    return PARSE_OK;
}

/* What option `name` accepts, for error messages. */
static inline const char *value_hint(const char *name) {
    static const char *const hints[][2] = {
        { "--coll", "allreduce, reduce, bcast, barrier, allgather, reduce_scatter, alltoall, "
                    "gather, scatter, scan or exscan" },
        { "--dtype", "int8, int16, int32, int64, uint8..uint64, float16, bfloat16, float32, "
                     "float64" },
        { "--op", "sum, prod, min, max, land, lor, lxor, band, bor, bxor, maxloc, minloc" },
        { "--mode", "persistent, blocking, nonblocking or poll" },
        { "--thread-level", "single, funneled, serialized or multiple" },
        { "--step-factor", "an integer >= 2" },
        { "--min-bytes", "bytes, optionally with a suffix K, M, G, KiB, MiB, GiB" },
        { "--max-bytes", "bytes, optionally with a suffix K, M, G, KiB, MiB, GiB" },
        { "--warmup", "an integer >= 0" },
        { "--root", "a rank, >= 0" },
    };
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (!strcmp(name, hints[i][0]))
            return hints[i][1];
    return "a positive integer";
}

static inline int bench_parse_args(int argc, char **argv, bench_opts *o, char *err, size_t n) {
    *o = (bench_opts){ .coll = COLL_ALLREDUCE, .min_bytes = 8, .max_bytes = 1 << 20, .step = 2,
                       .dtype = COLLIE_FLOAT64, .op = COLLIE_SUM, .opid = COLLIE_OPID_SUM,
                       .warmup = 10, .repeat = 1, .mode = MODE_BLOCKING,
                       .thread_level = COLLIE_THREAD_SINGLE };
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *eq = strchr(argv[i], '='), *val = eq ? eq + 1 : NULL;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return PARSE_HELP;
        if (set_flag(o, argv[i]))
            continue;
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - argv[i]) : 63, argv[i]);
        if (!is_value_option(name))
            return snprintf(err, n, "unknown option '%s'", argv[i]), PARSE_ERROR;
        if (!val && i + 1 >= argc)
            return snprintf(err, n, "option %s needs a value", name), PARSE_ERROR;
        val = val ? val : argv[++i];
        if (!set_value(o, name, val))
            return snprintf(err, n, "invalid value '%s' for %s (expected %s)", val, name,
                            value_hint(name)), PARSE_ERROR;
    }
    o->barrier_each = o->barrier_each || o->fresh_data || o->release_each || o->use_result;
    return bench_validate(o, err, n);
}

/* $COLLIE_<COLL>_ALGO, or "auto" when unset. */
static inline const char *bench_default_spec(int coll) {
    char var[64];
    const char *name = collie_coll_name(coll), *v;
    int n = snprintf(var, sizeof var, "COLLIE_");
    for (; *name && n < 40; name++)
        var[n++] = (char)(*name >= 'a' && *name <= 'z' ? *name - 32 : *name);
    snprintf(var + n, sizeof var - (size_t)n, "_ALGO");
    v = getenv(var);
    return v && *v ? v : "auto";
}

static inline void bench_list_algorithms(FILE *f) {
    fputs("Algorithms (--algo NAME):\n", f);
    for (int c = 0; c < COLL_COUNT; c++) {
        fprintf(f, "  %s:", collie_coll_name(c));
        for (size_t i = 0; i < collie_algorithm_count(c); i++)
            fprintf(f, " %s", collie_algorithm_at(c, i)->name);
        fputc('\n', f);
    }
}

#endif
