/*
 * layer_cost.c — what the MPI drop-in's layer adds to a small collective: the same
 * allreduce (P ranks, count doubles, sum) called as MPI_Allreduce through
 * LD_PRELOAD=libcollie_mpi.so and as collie_allreduce on the communicator's team
 * (collie_team_from_mpi), interleaved in one process, same harness for both:
 * MPI_Barrier, then one timed call on fresh values, `iters` times per block, blocks
 * alternating between the two sides `rounds` times.  The program is a plain MPI program;
 * collie's API is looked up with dlsym in the preloaded library (so the run fails
 * clearly without the preload).  Every result is checked.
 *
 *   LD_PRELOAD=build/lib/mpich/libcollie_mpi.so mpirun -np 2 layer_cost [count] [iters] [rounds]
 *
 * Prints per side the median over blocks of each block's median call time (or the
 * LAYER_COST_QUANTILE quantile; averaged over the ranks), and the ratio MPI_Allreduce / collie_allreduce.  bench/layer_cost.sh builds
 * and runs it for each MPI flavour.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collie.h"

typedef int (*team_from_mpi_fn)(MPI_Comm, collie_team_t **);
typedef int (*allreduce_fn)(collie_team_t *, const void *, void *, size_t, collie_dtype_t,
                            collie_op_t);

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct api {
    collie_team_t *team;
    allreduce_fn allreduce;
    collie_op_t sum;              /* COLLIE_SUM, from the preloaded library */
} api;

static int load_api(api *a) {
    team_from_mpi_fn from_mpi = (team_from_mpi_fn)dlsym(RTLD_DEFAULT, "collie_team_from_mpi");
    a->allreduce = (allreduce_fn)dlsym(RTLD_DEFAULT, "collie_allreduce");
    a->sum = (collie_op_t)dlsym(RTLD_DEFAULT, "collie_op_sum_");   /* what COLLIE_SUM names */
    if (!from_mpi || !a->allreduce || !a->sum)
        return -1;
    return from_mpi(MPI_COMM_WORLD, &a->team);
}

/* Which quantile of a block's call times stands for the block: 0.5 (median) by default;
 * LAYER_COST_QUANTILE=0.1 on a loaded machine, where most calls wait for a descheduled
 * peer and only the fastest tenth show the software path. */
static double quantile = 0.5;

/* One block: iters × (barrier, one timed call); returns the quantile of the call times
 * (robust against the calls during which a rank lost its core); counts wrong results. */
static double block(const api *a, int use_api, size_t count, int iters, int rank, int size,
                    int *salt, double *in, double *out, double *samples, int *bad) {
    for (int i = 0; i < iters; i++) {
        int s = (*salt)++;
        for (size_t k = 0; k < count; k++)
            in[k] = (double)(rank + s + (int)k);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_ns();
        if (use_api)
            a->allreduce(a->team, in, out, count, COLLIE_FLOAT64, a->sum);
        else
            MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        samples[i] = now_ns() - t0;
        for (size_t k = 0; k < count; k++)
            *bad += out[k] != (double)size * (s + (int)k) + (double)size * (size - 1) / 2;
    }
    qsort(samples, (size_t)iters, sizeof *samples, cmp_double);
    return samples[(size_t)((double)iters * quantile)];
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t count = argc > 1 ? (size_t)atol(argv[1]) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 2000, rounds = argc > 3 ? atoi(argv[3]) : 21;
    const char *q = getenv("LAYER_COST_QUANTILE");
    if (q && atof(q) >= 0 && atof(q) < 1)
        quantile = atof(q);
    api a;
    memset(&a, 0, sizeof a);
    if (count < 1 || count > 4096 || iters < 1 || rounds < 1 || load_api(&a) != 0) {
        if (rank == 0)
            fprintf(stderr, "layer_cost: needs LD_PRELOAD=libcollie_mpi.so (collie_team_from_mpi "
                            "on MPI_COMM_WORLD) and count 1..4096, iters >= 1, rounds >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *in = calloc(count, sizeof *in), *out = calloc(count, sizeof *out);
    double *t[2] = { calloc((size_t)rounds, sizeof(double)), calloc((size_t)rounds, sizeof(double)) };
    double *samples = calloc((size_t)iters, sizeof *samples);
    int salt = 0, bad = 0;
    block(&a, 0, count, iters, rank, size, &salt, in, out, samples, &bad);   /* warm-up */
    block(&a, 1, count, iters, rank, size, &salt, in, out, samples, &bad);
    for (int r = 0; r < rounds; r++)
        for (int side = 0; side < 2; side++) {
            int use_api = (r + side) % 2;   /* alternate which side goes first */
            double mine = block(&a, use_api, count, iters, rank, size, &salt, in, out, samples, &bad), sum = 0;
            PMPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t[use_api][r] = sum / size;
        }
    int all_bad = 0;
    PMPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    qsort(t[0], (size_t)rounds, sizeof(double), cmp_double);
    qsort(t[1], (size_t)rounds, sizeof(double), cmp_double);
    if (rank == 0)
        printf("P=%d %zu B: MPI_Allreduce (drop-in) %.1f ns, collie_allreduce %.1f ns, ratio %.3f "
               "(per side: median over %d blocks of the q=%.2f quantile of %d calls, mean of the ranks; %d wrong results)\n",
               size, count * sizeof(double), t[0][rounds / 2], t[1][rounds / 2],
               t[0][rounds / 2] / t[1][rounds / 2], rounds, quantile, iters, all_bad);
    free(in);
    free(out);
    free(t[0]);
    free(t[1]);
    free(samples);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
