/*
 * mpi_freed_comm.c — collectives still pending, or persistent requests still alive, when
 * the program frees their communicator (linked with libcollie_mpi; 2 or more ranks).
 *
 * MPI allows it: MPI_Comm_free only marks the communicator for deallocation, "any pending
 * operations that use this communicator will complete normally", and a persistent
 * request keeps working until it is freed.  The drop-in's team for the communicator must
 * live that long.  Checked, on a duplicate of MPI_COMM_WORLD freed right after the call:
 *  1. an 8 MiB MPI_Iallreduce (still running when freed), then MPI_Wait: the sums;
 *  2. an MPI_Ibcast of 8 MiB from the last rank, freed, then MPI_Wait: the data;
 *  3. a persistent 8 MiB allreduce made on the communicator, which is then freed; started
 *     and waited for twice, then MPI_Request_free: the sums of both rounds;
 *  4. after all that, a new duplicate's allreduce (the handle MPI may reuse): the sums;
 *  5. datatypes with gaps, which the drop-in packs and unpacks (MPI_Pack/MPI_Unpack) after
 *     the program freed the communicator: an MPI_Iallgather and an MPI_Ibcast of a vector
 *     type, and a persistent allgather of it started twice: the data, and the holes
 *     untouched.  (The unpacking took the freed communicator: "MPI_Unpack ... gave 0 bytes"
 *     on MPICH, found by mpi_soak.)
 *  6. an MPI_Ireduce of 8 MiB to rank 0 on MPI_COMM_WORLD and an MPI_Ibarrier on a dup
 *     freed right after it; rank 0 waits for the reduce first, the others for the barrier
 *     first: the barrier's last request releases the dup's team at those ranks while rank 0
 *     still needs their chunks.  Run with COLLIE_MPI_NODE_SPLIT too (ctest
 *     freed_comm_nodes_np3): the release of the shm+mpi transport was a blocking
 *     MPI_Alltoall there, and the ranks hung (found by mpi_soak).
 * Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_pcoll.h"
#include "mpi_test_finish.h"

#define N ((size_t)1 << 20)   /* doubles: 8 MiB */

static int rank, size, failures;

static void check(int ok, const char *what, int code) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: %s (code %d)\n", rank, what, code);
    }
}

static double value(int r, int round, size_t i) { return (double)(r + 1 + round) * (double)(i % 997 + 1); }

static void fill(double *v, int round) {
    for (size_t i = 0; i < N; i++)
        v[i] = value(rank, round, i);
}

/* v must hold the sum over ranks of fill(round) (exact in doubles). */
static void check_sum(const double *v, int round, const char *what) {
    double ranks = (double)size * (size + 1) / 2 + (double)size * round;
    for (size_t i = 0; i < N; i++)
        if (v[i] != ranks * (double)(i % 997 + 1)) {
            failures++;
            fprintf(stderr, "FAIL: rank %d: %s: element %zu is %g, expected %g\n", rank, what, i,
                    v[i], ranks * (double)(i % 997 + 1));
            return;
        }
}

static void iallreduce_then_free(double *in, double *out) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    fill(in, 0);
    memset(out, 0, N * sizeof *out);
    MPI_Request r;
    check(MPI_Iallreduce(in, out, (int)N, MPI_DOUBLE, MPI_SUM, c, &r) == MPI_SUCCESS, "MPI_Iallreduce", 0);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with an MPI_Iallreduce pending", 0);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(rc == MPI_SUCCESS, "MPI_Wait on an MPI_Iallreduce of a freed communicator", rc);
    check_sum(out, 0, "MPI_Iallreduce on a communicator freed while it ran");
}

static void ibcast_then_free(double *buf) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int root = size - 1;
    for (size_t i = 0; i < N; i++)
        buf[i] = rank == root ? value(root, 7, i) : -1.0;
    MPI_Request r;
    check(MPI_Ibcast(buf, (int)N, MPI_DOUBLE, root, c, &r) == MPI_SUCCESS, "MPI_Ibcast", 0);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with an MPI_Ibcast pending", 0);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(rc == MPI_SUCCESS, "MPI_Wait on an MPI_Ibcast of a freed communicator", rc);
    for (size_t i = 0; i < N; i++)
        if (buf[i] != value(root, 7, i)) {
            check(0, "MPI_Ibcast on a communicator freed while it ran: wrong data", (int)i);
            break;
        }
}

static void persistent_then_free(double *in, double *out) {
#if HAVE_PCOLL
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Request r;
    PINIT(Allreduce_init)(in, out, (int)N, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &r);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with a persistent allreduce made", 0);
    for (int round = 1; round <= 2; round++) {
        fill(in, round);
        memset(out, 0, N * sizeof *out);
        MPI_Start(&r);
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(rc == MPI_SUCCESS, "MPI_Wait on a persistent allreduce of a freed communicator", rc);
        check_sum(out, round, "persistent allreduce on a freed communicator");
    }
    MPI_Request_free(&r);
#else
    (void)in, (void)out;
    if (rank == 0)
        printf("persistent: skipped (this MPI has no MPI-4 persistent collectives)\n");
#endif
}

static void fresh_communicator(double *in, double *out) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    fill(in, 3);
    MPI_Allreduce(in, out, (int)N, MPI_DOUBLE, MPI_SUM, c);
    check_sum(out, 3, "MPI_Allreduce on a new communicator after the frees");
    MPI_Comm_free(&c);
}

/* ---- 5. datatypes with gaps ------------------------------------------------------------ */

#define GN 1000       /* vector elements per rank */
#define HOLE (-5.0)   /* what the holes hold */

/* rank r's element i (of GN) in round `round`, at 2*i of a vector buffer */
static double gval(int r, int round, int i) { return (double)(r * 10000 + round * 1000 + i % 997); }

/* Every block of a gathered vector buffer (blocks ranks' data, holes between elements). */
static void check_gapped(const double *v, int blocks, int round, int root, const char *what) {
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < GN; i++) {
            double want = gval(root >= 0 ? root : b, round, i), got = v[2 * ((size_t)b * GN + (size_t)i)];
            double hole = v[2 * ((size_t)b * GN + (size_t)i) + 1];
            if (got != want || hole != HOLE) {
                failures++;
                fprintf(stderr, "FAIL: rank %d: %s: block %d element %d is %g (hole %g), expected %g (hole %g)\n",
                        rank, what, b, i, got, hole, want, HOLE);
                return;
            }
        }
}

static void gapped_fill(double *v, size_t n, int round, int r) {
    for (size_t i = 0; i < n; i++)
        v[2 * i] = r >= 0 ? gval(r, round, (int)i % GN) : -1.0, v[2 * i + 1] = HOLE;
}

static void gapped_then_free(void) {
    MPI_Datatype vec, t;   /* one double and a hole of one double, per element */
    MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_create_resized(vec, 0, 2 * sizeof(double), &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&vec);
    double *mine = malloc(2 * GN * sizeof *mine), *all = malloc(2 * (size_t)size * GN * sizeof *all);
    MPI_Comm c;
    MPI_Request r;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    gapped_fill(mine, GN, 0, rank);
    gapped_fill(all, (size_t)size * GN, 0, -1);
    check(MPI_Iallgather(mine, GN, t, all, GN, t, c, &r) == MPI_SUCCESS, "MPI_Iallgather (gaps)", 0);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with an MPI_Iallgather pending", 0);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(rc == MPI_SUCCESS, "MPI_Wait on an MPI_Iallgather (gaps) of a freed communicator", rc);
    check_gapped(all, size, 0, -1, "MPI_Iallgather (gaps) on a communicator freed while it ran");
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    gapped_fill(mine, GN, 1, rank == 0 ? 0 : -1);
    check(MPI_Ibcast(mine, GN, t, 0, c, &r) == MPI_SUCCESS, "MPI_Ibcast (gaps)", 0);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with an MPI_Ibcast pending", 0);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(rc == MPI_SUCCESS, "MPI_Wait on an MPI_Ibcast (gaps) of a freed communicator", rc);
    check_gapped(mine, 1, 1, 0, "MPI_Ibcast (gaps) on a communicator freed while it ran");
#if HAVE_PCOLL
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    PINIT(Allgather_init)(mine, GN, t, all, GN, t, c, MPI_INFO_NULL, &r);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with a persistent allgather made", 0);
    for (int round = 2; round <= 3; round++) {
        gapped_fill(mine, GN, round, rank);
        gapped_fill(all, (size_t)size * GN, round, -1);
        MPI_Start(&r);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(rc == MPI_SUCCESS, "MPI_Wait on a persistent allgather (gaps) of a freed communicator", rc);
        check_gapped(all, size, round, -1, "persistent allgather (gaps) on a freed communicator");
    }
    MPI_Request_free(&r);
#endif
    MPI_Type_free(&t);
    free(mine), free(all);
}

/* ---- 6. a team released inside a wait, other requests pending ---------------------------- */

static void release_inside_wait(double *in, double *out) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    fill(in, 4);
    memset(out, 0, N * sizeof *out);
    MPI_Request r[2];
    check(MPI_Ireduce(in, out, (int)N, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &r[0]) == MPI_SUCCESS,
          "MPI_Ireduce", 0);
    check(MPI_Ibarrier(c, &r[1]) == MPI_SUCCESS, "MPI_Ibarrier", 0);
    check(MPI_Comm_free(&c) == MPI_SUCCESS, "MPI_Comm_free with an MPI_Ibarrier pending", 0);
    for (int k = 0; k < 2; k++) {
        int rc = MPI_Wait(&r[rank == 0 ? k : 1 - k], MPI_STATUS_IGNORE);
        check(rc == MPI_SUCCESS, "MPI_Wait (reduce and barrier of a freed communicator)", rc);
    }
    if (rank == 0)
        check_sum(out, 4, "MPI_Ireduce while a freed communicator's team was released");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    iallreduce_then_free(in, out);
    ibcast_then_free(out);
    persistent_then_free(in, out);
    fresh_communicator(in, out);
    gapped_then_free();
    release_inside_wait(in, out);
    free(in), free(out);
    return mpi_test_finish(failures);
}
