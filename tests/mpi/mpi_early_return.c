/*
 * mpi_early_return.c — rooted collectives whose ranks return before the others arrive,
 * which programs come to rely on: MPICH and Open MPI send small messages eagerly, so a
 * non-root MPI_Reduce or MPI_Gather(v), and a root MPI_Bcast or MPI_Scatter(v), returns
 * without waiting.  MPI calls a program that depends on this erroneous, but both MPIs run
 * it, so the drop-in must too (run_early_return.sh runs each case plain first and through
 * libcollie_mpi only where plain MPI passes).
 *
 *   mpi_early_return COLL
 *
 * COLL is reduce, gather, gatherv, bcast, scatter or scatterv.  The root is the last rank.
 * For reduce and gather(v) every other rank makes the call, then MPI_Send's a token to the
 * root, which MPI_Recv's every token first, in rank order, and makes the call last; for
 * bcast and scatter(v) the root makes the call, then sends every other rank a token, which
 * each receives before making its call.  Cases, in this order, each with 1 and 64 doubles:
 *   1. MPI_COMM_WORLD, the first collective of the program (no barrier before: with
 *      libcollie_mpi, MPI_Init set up the team);
 *   2. a fresh MPI_Comm_dup of it, then MPI_Comm_split with the ranks in reverse order
 *      (key = -rank), each case's first collective on its communicator;
 *   3. MPI_COMM_WORLD again, after an MPI_Barrier (the steady state).
 * Results are checked against values computed here (sums of (rank + 1) * (i + 1); each
 * rank's block; the root's data).  Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static double value(int rank, int i) { return (double)(rank + 1) * (i + 1); }

static void fail(MPI_Comm comm, const char *coll, const char *where, int n, int i, double got,
                 double want) {
    int r;
    MPI_Comm_rank(comm, &r);
    fprintf(stderr, "FAIL: %s on %s, %d doubles, rank %d: element %d is %g, expected %g\n",
            coll, where, n, r, i, got, want);
    failures++;
}

/* The other ranks first (call, then a token to the root); the root takes every token, in
 * rank order, then makes its call: reduce, gather, gatherv. */
static void to_root(const char *coll, MPI_Comm comm, const char *where, int n) {
    int rank, size, token = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = size - 1;
    double *in = malloc(sizeof(double) * (size_t)n);
    double *out = calloc((size_t)n * (size_t)size, sizeof(double));
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < n; i++)
        in[i] = value(rank, i);
    for (int r = 0; r < size; r++) {
        counts[r] = n;
        displs[r] = (size - 1 - r) * n;   /* blocks in reverse order */
    }
    if (rank == root)
        for (int r = 0; r < root; r++)
            MPI_Recv(&token, 1, MPI_INT, r, 7, comm, MPI_STATUS_IGNORE);
    if (strcmp(coll, "reduce") == 0)
        MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
    else if (strcmp(coll, "gather") == 0)
        MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, comm);
    else
        MPI_Gatherv(in, n, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, root, comm);
    if (rank != root)
        MPI_Send(&token, 1, MPI_INT, root, 7, comm);
    for (int i = 0; rank == root && i < n; i++) {
        if (strcmp(coll, "reduce") == 0) {
            double want = (double)size * (size + 1) / 2 * (i + 1);
            if (out[i] != want)
                fail(comm, coll, where, n, i, out[i], want);
            continue;
        }
        for (int r = 0; r < size; r++) {
            size_t at = (size_t)(strcmp(coll, "gather") == 0 ? r * n : displs[r]) + (size_t)i;
            if (out[at] != value(r, i))
                fail(comm, coll, where, n, (int)at, out[at], value(r, i));
        }
    }
    free(in), free(out), free(counts), free(displs);
}

/* The root first (call, then a token to every other rank); the others take their token,
 * then make their call: bcast, scatter, scatterv. */
static void from_root(const char *coll, MPI_Comm comm, const char *where, int n) {
    int rank, size, token = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = size - 1;
    double *all = malloc(sizeof(double) * (size_t)n * (size_t)size);
    double *mine = calloc((size_t)n, sizeof(double));
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        counts[r] = n;
        displs[r] = (size - 1 - r) * n;
    }
    for (int r = 0; r < size; r++)   /* rank r's block, in the layout of the call */
        for (int i = 0; i < n; i++) {
            size_t at = (size_t)(strcmp(coll, "scatterv") == 0 ? displs[r] : r * n) + (size_t)i;
            all[at] = rank == root ? value(r, i) : -1.0;
        }
    if (strcmp(coll, "bcast") == 0)
        memcpy(mine, all, sizeof(double) * (size_t)n);   /* the root's block 0 */
    if (rank != root)
        MPI_Recv(&token, 1, MPI_INT, root, 7, comm, MPI_STATUS_IGNORE);
    if (strcmp(coll, "bcast") == 0)
        MPI_Bcast(mine, n, MPI_DOUBLE, root, comm);
    else if (strcmp(coll, "scatter") == 0)
        MPI_Scatter(all, n, MPI_DOUBLE, mine, n, MPI_DOUBLE, root, comm);
    else
        MPI_Scatterv(all, counts, displs, MPI_DOUBLE, mine, n, MPI_DOUBLE, root, comm);
    if (rank == root)
        for (int r = 0; r < root; r++)
            MPI_Send(&token, 1, MPI_INT, r, 7, comm);
    for (int i = 0; i < n; i++) {
        double want = value(strcmp(coll, "bcast") == 0 ? 0 : rank, i);
        if (mine[i] != want)
            fail(comm, coll, where, n, i, mine[i], want);
    }
    free(all), free(mine), free(counts), free(displs);
}

static void one_case(const char *coll, MPI_Comm comm, const char *where, int n) {
    if (strcmp(coll, "reduce") == 0 || strncmp(coll, "gather", 6) == 0)
        to_root(coll, comm, where, n);
    else
        from_root(coll, comm, where, n);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *colls[] = { "reduce", "gather", "gatherv", "bcast", "scatter", "scatterv" };
    const char *coll = argc > 1 ? argv[1] : "";
    int known = 0;
    for (size_t k = 0; k < sizeof colls / sizeof *colls; k++)
        known |= strcmp(coll, colls[k]) == 0;
    if (!known) {
        fprintf(stderr, "usage: mpi_early_return reduce|gather|gatherv|bcast|scatter|scatterv\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int counts[] = { 1, 64 };
    one_case(coll, MPI_COMM_WORLD, "MPI_COMM_WORLD (first collective)", 1);
    one_case(coll, MPI_COMM_WORLD, "MPI_COMM_WORLD (second collective)", 64);
    for (int k = 0; k < 2; k++) {
        MPI_Comm dup, split;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        one_case(coll, dup, "a new MPI_Comm_dup", counts[k]);
        MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &split);
        one_case(coll, split, "a new MPI_Comm_split (ranks reversed)", counts[k]);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&split);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++)
        one_case(coll, MPI_COMM_WORLD, "MPI_COMM_WORLD (after a barrier)", counts[k]);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_early_return %s: passed: %d failures\n", coll, all);
    MPI_Finalize();
    return all != 0;
}
