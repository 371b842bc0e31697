/*
 * collie-bench.c — OSU-style latency benchmark of collie's collectives (allreduce, reduce,
 * bcast, barrier): the automatic choice, one forced algorithm, or every registered
 * algorithm, over a range of message sizes.  Run it under `collie-run -n P` (or mpirun);
 * rank 0 prints the table (and optionally a CSV file and per-rank times).  The timing
 * method is documented in bench_usage() (bench_opts.h); --check verifies results with
 * exact inputs (bench_check.h).  Auxiliary communication (agreeing, gathering times) runs
 * with every collective set to "auto", so it works whatever algorithm is being measured.
 *
 * This file: main, set-up and the loops over algorithms and sizes.  The calls are in
 * bench_calls.c, the timing in bench_time.c, the output in bench_report.c, the checked
 * mode in bench_verify.c (their shared declarations: bench.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "tool_version.h"

#define PAGE 4096

/* Untimed calls before the first row of a run, on top of --warmup: the first calls of a
 * process pay for page faults, planning and cold caches (a first 8 B row read 14 us where
 * the next ones read 0.1 us). */
#define FIRST_ROW_WARMUP 200

/* ---- driver --------------------------------------------------------------------------- */

static bool all_mode(const bench *b) {
    return b->o.algo && (!strcmp(b->o.algo, "all") || !strcmp(b->o.algo, "all,auto"));
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
        warm_up(b, req, count, b->o.iters > 0 && b->o.iters < FIRST_ROW_WARMUP ? b->o.iters
                                                                             : FIRST_ROW_WARMUP);
        b->warmed = true;
    }
    long iters = decide_iters(b, req, count);
    measure_size(b, req, count, iters);
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
    int provided = 0;
    int st = collie_init_thread(pr == PARSE_OK ? b.o.thread_level : COLLIE_THREAD_SINGLE, &provided);
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
