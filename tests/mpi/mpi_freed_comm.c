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
 *  4. after all that, a new duplicate's allreduce (the handle MPI may reuse): the sums.
 * Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_pcoll.h"

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
    free(in), free(out);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("passed: %d failures\n", total);
    MPI_Finalize();
    return total != 0;
}
