/*
 * mpi_coll_bench.c — the MPI side of bench/compare: times MPI_Allreduce / MPI_Reduce /
 * MPI_Bcast / MPI_Allgather / MPI_Reduce_scatter_block / MPI_Alltoall exactly the way
 * collie-bench times collie (warm-up, rank 0 picks an iteration
 * count for ~100 ms and broadcasts it, a barrier, then `iters` back-to-back calls timed
 * on each rank; a rank's time = elapsed / iters; avg/min/max over ranks), float64 sum,
 * root 0, and prints the same columns (max_us, the slowest rank, is what bench/compare
 * uses).  The header names the MPI library (MPI_Get_library_version), so a run shows
 * which libmpi it really loaded (bench/compare runs an MPICH-built binary on Intel MPI).
 *
 *   mpirun -np P mpi_coll_bench [--coll allreduce|reduce|bcast|allgather|
 *                                      reduce_scatter_block|alltoall] [--min-bytes N]
 *                               [--max-bytes N] [--step-factor K] [--iters N]
 *                               [--barrier-each 0|1] [--fresh-data 0|1] [--check 0|1]
 *                               [--release-each 0|1] [--use-result 0|1]
 *
 * Sizes are per block, as in collie-bench: allgather sends `bytes` and receives P blocks
 * of `bytes`; reduce_scatter_block reduces P blocks and keeps one; alltoall sends and
 * receives P blocks of `bytes` (one per rank).
 * --barrier-each 1 (collie-bench --barrier-each): a barrier before every timed call, and
 * only the calls are timed, so successive calls cannot overlap (a rooted collective's
 * root may otherwise start the next call while the others still finish this one).
 * --fresh-data 1 (collie-bench --fresh-data; implies --barrier-each 1): before every call
 * the input gets new values, (g + call number + 3 rank) & 1023 at element g of the input
 * (all P blocks of it where there are P) with ordinary stores, untimed and before the
 * barrier; otherwise the input is rank + g % 7, set once.  --check 1: after the timed calls
 * of a size, every rank checks the last call's result against the exact expected values,
 * computed here from the definition of the collective (expected()), and the run fails
 * (exit 1, the rank and index on stderr) on a mismatch.  --release-each 1 (collie-bench
 * --release-each; implies --barrier-each 1): instead of MPI_Barrier, rank 0 gathers a
 * token from every rank and scatters the release (sync_each()).  --use-result 1
 * (collie-bench --use-result; implies --barrier-each 1): after every call each rank reads
 * its result, a load per 64-byte line (bcast: the buffer; reduce: the root), timed with
 * the call.
 *
 * Built with -DCOLLIE_BENCH_ONECCL and bench/oneccl_glue.cpp, the same harness times
 * oneCCL's calls instead (MPI still launches, times and carries the barriers).
 */
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef COLLIE_BENCH_ONECCL
#include "oneccl_glue.h"
#endif

/* The collectives, in the order of GLUE_* (oneccl_glue.h). */
enum { C_ALLREDUCE, C_REDUCE, C_BCAST, C_ALLGATHER, C_REDUCE_SCATTER_BLOCK, C_ALLTOALL, C_COUNT };
static const char *const coll_names[C_COUNT] = { "allreduce", "reduce", "bcast", "allgather",
                                                 "reduce_scatter_block", "alltoall" };

typedef struct opts {
    int coll;
    long min_bytes, max_bytes, factor, iters, barrier_each, fresh_data, check, release_each;
    long use_result;
} opts;

static unsigned long calls;   /* --fresh-data: number of the next call */
static int rank_, size_;

static long parse_size(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

static int find_coll(const char *name) {
    for (int c = 0; c < C_COUNT; c++)
        if (!strcmp(name, coll_names[c]))
            return c;
    return -1;
}

static int parse(int argc, char **argv, opts *o) {
    *o = (opts){ C_ALLREDUCE, 8, 1 << 20, 2, 0, 0, 0, 0, 0 };
    if ((argc - 1) % 2 != 0)
        return -1;   /* every option takes a value */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--coll"))
            o->coll = find_coll(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-bytes"))
            o->min_bytes = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-bytes"))
            o->max_bytes = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--step-factor"))
            o->factor = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            o->iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--barrier-each"))
            o->barrier_each = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--fresh-data"))
            o->fresh_data = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--check"))
            o->check = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--release-each"))
            o->release_each = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--use-result"))
            o->use_result = atol(argv[i + 1]);
        else
            return -1;
    }
    bool bools_ok = (o->fresh_data == 0 || o->fresh_data == 1) && (o->check == 0 || o->check == 1) &&
                    (o->release_each == 0 || o->release_each == 1) &&
                    (o->use_result == 0 || o->use_result == 1);
    o->barrier_each = o->barrier_each || o->fresh_data || o->release_each || o->use_result;
    if (o->coll < 0)
        return -1;
    /* sizes in whole float64 elements; P blocks of the largest fit an int count */
    bool sizes_ok = o->min_bytes >= 8 && o->max_bytes >= o->min_bytes &&
                    o->max_bytes / 8 <= INT_MAX / size_;
    bool flags_ok = o->iters >= 0 && (o->barrier_each == 0 || o->barrier_each == 1);
    return sizes_ok && o->factor >= 2 && flags_ok && bools_ok ? 0 : -1;
}

/* Elements of this rank's input and of its result in a call of `count` per block. */
static long in_elems(const opts *o, long count) {
    return o->coll == C_REDUCE_SCATTER_BLOCK || o->coll == C_ALLTOALL ? count * size_ : count;
}

static long out_elems(const opts *o, long count) {
    return o->coll == C_ALLGATHER || o->coll == C_ALLTOALL ? count * size_ : count;
}

#ifdef COLLIE_BENCH_ONECCL
static void one_call(const opts *o, double *in, double *out, int count) {
    char err[512];
    if (ccl_glue_call(o->coll, in, out, (size_t)count, err, sizeof err) != 0) {
        fprintf(stderr, "mpi_coll_bench: rank %d: %s\n", rank_, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}
#else
static void one_call(const opts *o, double *in, double *out, int count) {
    MPI_Comm w = MPI_COMM_WORLD;
    switch (o->coll) {
    case C_ALLREDUCE: MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, w); break;
    case C_REDUCE: MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, w); break;
    case C_BCAST: MPI_Bcast(in, count, MPI_DOUBLE, 0, w); break;
    case C_ALLGATHER: MPI_Allgather(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, w); break;
    case C_REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(in, out, count, MPI_DOUBLE, MPI_SUM, w);
        break;
    default: MPI_Alltoall(in, count, MPI_DOUBLE, out, count, MPI_DOUBLE, w); break;
    }
}
#endif

static bool is_bcast(const opts *o) { return o->coll == C_BCAST; }

/* --fresh-data: element g of rank's input in the call numbered salt (bcast: the root's only). */
static double fresh_value(long g, unsigned long salt, int rank) {
    return (double)(((unsigned long)g + salt + 3ul * (unsigned long)rank) & 1023ul);
}

static void fresh_input(const opts *o, double *in, int count) {
    if (!is_bcast(o) || rank_ == 0)
        for (long g = 0; g < in_elems(o, count); g++)
            in[g] = fresh_value(g, calls, rank_);
    calls++;
}

/* --use-result: this rank reads its result, a load per 64-byte line. */
static void use_result(const opts *o, const double *in, const double *out, int count) {
    const double *res = is_bcast(o) ? in : out;
    long n = o->coll == C_REDUCE && rank_ != 0 ? 0 : out_elems(o, count);
    double acc = 0;
    for (long g = 0; g < n; g += 8)
        acc += res[g];
    static volatile double sink;
    sink += acc;
}

/* Input without --fresh-data: in[g] = rank + g % 7, set once (main). */
static double reused_value(long g, int rank) { return (double)(rank + g % 7); }

/* Element g of rank r's input in the last call. */
static double input_of(const opts *o, long g, int r) {
    return o->fresh_data ? fresh_value(g, calls - 1, r) : reused_value(g, r);
}

static double sum_over_ranks(const opts *o, long g) {
    double sum = 0;
    for (int r = 0; r < size_; r++)
        sum += input_of(o, g, r);
    return sum;
}

/* The expected result at element k of the last call (block j = k / count, index i):
 * allreduce, reduce (root): the sum over ranks of element k; bcast: rank 0's; allgather:
 * rank j's element i; alltoall: element rank·count + i of rank j (block `rank` of its
 * input); reduce_scatter_block: the sum over ranks of element rank·count + k. */
static double expected(const opts *o, long count, long k) {
    long j = k / count, i = k % count, mine = (long)rank_ * count;
    switch (o->coll) {
    case C_BCAST: return input_of(o, k, 0);
    case C_ALLGATHER: return input_of(o, i, (int)j);
    case C_ALLTOALL: return input_of(o, mine + i, (int)j);
    case C_REDUCE_SCATTER_BLOCK: return sum_over_ranks(o, mine + k);
    default: return sum_over_ranks(o, k);
    }
}

/* --check 1: every rank with a result compares it; false (after printing) on a mismatch. */
static bool check_result(const opts *o, const double *in, const double *out, int count) {
    const double *got = is_bcast(o) ? in : out;
    if (o->coll == C_REDUCE && rank_ != 0)
        return true;
    for (long k = 0; k < out_elems(o, count); k++)
        if (got[k] != expected(o, count, k)) {
            fprintf(stderr, "mpi_coll_bench: rank %d: check failed (%s, %d elements per block%s):"
                    " result element %ld: got %g, expected %g\n", rank_, coll_names[o->coll],
                    count, o->fresh_data ? ", fresh data" : "", k, got[k], expected(o, count, k));
            return false;
        }
    return true;
}

/* The synchronisation before each timed call: MPI_Barrier, or with --release-each 1 rank 0's
 * release (every rank reports to rank 0 by MPI_Gather, rank 0 releases them by
 * MPI_Scatter): rank 0 leaves first and the others one hand-over later, whatever the order
 * in which the library's barrier lets ranks go (the same in collie-bench --release-each). */
static void sync_each(const opts *o) {
    static int *all;
    if (!o->release_each) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    if (!all && !(all = calloc((size_t)size_, sizeof *all)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    int one = 1, back = 0;
    MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(all, 1, MPI_INT, &back, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

/* Rank 0 times 5 calls (every rank makes them, so the calls match; with --barrier-each 1
 * each after a barrier) and picks an iteration count of about 100 ms, 10 … 10000;
 * everyone gets it by broadcast. */
static long decide_iters(const opts *o, double *in, double *out, int count) {
    long iters = o->iters;
    if (!iters) {
        double t0 = MPI_Wtime();
        for (int n = 0; n < 5; n++) {
            if (o->fresh_data)
                fresh_input(o, in, count);   /* counted: ~100 ms of wall time per size */
            if (o->barrier_each)
                sync_each(o);   /* part of each iteration's cost */
            one_call(o, in, out, count);
            if (o->use_result)
                use_result(o, in, out, count);
        }
        double per = (MPI_Wtime() - t0) / 5;
        iters = (long)(0.1 / (per > 1e-9 ? per : 1e-9));
        iters = iters < 10 ? 10 : iters > 10000 ? 10000 : iters;
    }
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return iters;
}

/* A barrier, then iters back-to-back calls: seconds elapsed. */
static double time_back_to_back(const opts *o, double *in, double *out, int count, long iters) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++)
        one_call(o, in, out, count);
    return MPI_Wtime() - t0;
}

/* --barrier-each 1: every call timed alone after a barrier; the sum of the call times
 * (--fresh-data 1: new input written before the barrier; --use-result 1: the result read
 * after the call, in its time). */
static double time_each_after_barrier(const opts *o, double *in, double *out, int count,
                                      long iters) {
    double total = 0;
    for (long i = 0; i < iters; i++) {
        if (o->fresh_data)
            fresh_input(o, in, count);
        sync_each(o);
        double t0 = MPI_Wtime();
        one_call(o, in, out, count);
        if (o->use_result)
            use_result(o, in, out, count);
        total += MPI_Wtime() - t0;
    }
    return total;
}

/* Returns false when --check found a wrong result on some rank. */
static bool bench_size(const opts *o, long bytes, int rank, int size, double *in, double *out) {
    int count = (int)(bytes / 8);
    for (int i = 0; i < 10; i++)
        one_call(o, in, out, count);
    long iters = decide_iters(o, in, out, count);
    double seconds = o->barrier_each ? time_each_after_barrier(o, in, out, count, iters)
                                     : time_back_to_back(o, in, out, count, iters);
    int bad = o->check && !check_result(o, in, out, count), any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    double us = seconds / (double)iters * 1e6, sum, mn, mx;
    MPI_Reduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%9ld %7d %8ld %8.2f %8.2f %8.2f %6.2f  mpi\n", (long)count * 8, count, iters,
               sum / size, mn, mx, (double)count * 8 / (sum / size) / 1e3);
    if (rank == 0)
        fflush(stdout);   /* rows reach bench/compare even if a later size times out */
    return !any_bad;
}

/* First line of MPI_Get_library_version, e.g. "Open MPI v4.1.4, ..." or "MPICH Version: 4.0.2". */
static void print_library(void) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n")] = '\0';
    for (char *c = version; *c; c++)
        *c = *c == '\t' ? ' ' : *c;
#ifdef COLLIE_BENCH_ONECCL
    char ccl[256];
    ccl_glue_version(ccl, sizeof ccl);
    printf("# library: %s over %s\n", ccl, version);
#else
    printf("# library: %s\n", version);
#endif
}

/* MPI (oneCCL: with MPI_THREAD_MULTIPLE, which its MPI transport needs, and its
 * communicator); false after printing when it cannot start. */
static bool start(int *argc, char ***argv) {
#ifdef COLLIE_BENCH_ONECCL
    int provided = 0;
    char err[512];
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (ccl_glue_init(err, sizeof err) != 0) {
        fprintf(stderr, "mpi_coll_bench: %s\n", err);
        return false;
    }
#else
    MPI_Init(argc, argv);
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    return true;
}

static void stop(void) {
#ifdef COLLIE_BENCH_ONECCL
    ccl_glue_finalize();
#endif
    MPI_Finalize();
}

int main(int argc, char **argv) {
    if (!start(&argc, &argv))
        return 1;
    int rank = rank_, size = size_;
    opts o;
    if (parse(argc, argv, &o) != 0) {
        if (rank == 0)
            fputs("usage: mpi_coll_bench [--coll allreduce|reduce|bcast|allgather|"
                  "reduce_scatter_block|alltoall]\n"
                  "         [--min-bytes N] [--max-bytes N] [--step-factor K] [--iters N]\n"
                  "         [--barrier-each 0|1] [--fresh-data 0|1] [--check 0|1]\n"
                  "         [--release-each 0|1] [--use-result 0|1]\n"
                  "  (sizes per block: 8 <= min <= max bytes, K >= 2; suffixes K and M)\n",
                  stderr);
        stop();
        return 2;
    }
    long elems = o.max_bytes / 8 * (o.coll > C_BCAST ? size : 1);   /* P blocks where needed */
    double *in = malloc((size_t)elems * 8 + 64), *out = malloc((size_t)elems * 8 + 64);
    if (!in || !out) {
        fprintf(stderr, "mpi_coll_bench: rank %d: cannot allocate 2 x %ld bytes\n", rank,
                elems * 8);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long g = 0; g < elems; g++)
        in[g] = out[g] = reused_value(g, rank);
    if (rank == 0) {
        printf("# mpi_coll_bench %s P=%d dtype=float64 op=sum root=0%s%s%s\n", coll_names[o.coll],
               size, o.release_each ? " release-each" : o.barrier_each ? " barrier-each" : "",
               o.fresh_data ? " fresh-data" : "", o.use_result ? " use-result" : "");
        print_library();
    }
    bool ok = true;
    for (long b = o.min_bytes; ok && b <= o.max_bytes; b *= o.factor)
        ok = bench_size(&o, b, rank, size, in, out);
    free(in);
    free(out);
    stop();
    return ok ? 0 : 1;
}
