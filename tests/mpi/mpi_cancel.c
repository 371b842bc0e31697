/*
 * mpi_cancel.c — MPI_Cancel on requests libcollie_mpi serves (linked with it; 2 or more
 * ranks; MPI_ERRORS_RETURN on MPI_COMM_WORLD, so an error code is seen, not an abort).
 *
 * MPI makes cancelling a collective erroneous; plain Open MPI 4.1.4 returns
 * MPI_ERR_REQUEST and plain MPICH 4.0.2 an internal error for MPI_Iallreduce, and MPICH
 * aborts for a persistent collective.  The drop-in leaves the collective to complete:
 * checked for an 8 MiB MPI_Iallreduce and a started 8 MiB persistent allreduce (still
 * running when cancelled): MPI_Cancel returns MPI_SUCCESS, MPI_Wait too, the status says
 * not cancelled, the sums are right, and the persistent request starts again.  MPI_Cancel
 * on an MPI-served request (an MPI_Irecv nobody matches) still cancels it.  The run's
 * stderr must hold collie's `info` line once per rank (tests/mpi/CMakeLists.txt).
 * Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

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

static void fill(double *v, int round) {
    for (size_t i = 0; i < N; i++)
        v[i] = (double)(rank + 1 + round) * (double)(i % 1000 + 1);
}

/* The sum over ranks of fill(round), exact in doubles. */
static void check_sum(const double *v, int round, const char *what) {
    double ranks = (double)size * (size + 1) / 2 + (double)size * round;
    for (size_t i = 0; i < N; i++)
        if (v[i] != ranks * (double)(i % 1000 + 1)) {
            failures++;
            fprintf(stderr, "FAIL: rank %d: %s: element %zu is %g, expected %g\n", rank, what, i,
                    v[i], ranks * (double)(i % 1000 + 1));
            return;
        }
}

/* Cancels *r (a started collective), waits, checks it completed and was not cancelled. */
static void cancel_and_wait(MPI_Request *r, const char *what) {
    int rc = MPI_Cancel(r);
    check(rc == MPI_SUCCESS, what, rc);
    MPI_Status st;
    rc = MPI_Wait(r, &st);
    check(rc == MPI_SUCCESS, "MPI_Wait after MPI_Cancel", rc);
    int cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    check(cancelled == 0, "MPI_Test_cancelled is false for a collective", cancelled);
}

static void split_phase(double *in, double *out) {
    fill(in, 0);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    cancel_and_wait(&r, "MPI_Cancel of an MPI_Iallreduce returns MPI_SUCCESS");
    check(r == MPI_REQUEST_NULL, "the MPI_Iallreduce request is freed by MPI_Wait", 0);
    check_sum(out, 0, "MPI_Iallreduce after MPI_Cancel");
}

static void persistent(double *in, double *out) {
#if HAVE_PCOLL
    MPI_Request r;
    PINIT(Allreduce_init)(in, out, (int)N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int round = 1; round <= 2; round++) {
        fill(in, round);
        MPI_Start(&r);
        if (round == 1)
            cancel_and_wait(&r, "MPI_Cancel of a started persistent allreduce returns MPI_SUCCESS");
        else
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        check_sum(out, round, "persistent allreduce");
    }
    MPI_Request_free(&r);
#else
    (void)in, (void)out;
    if (rank == 0)
        printf("persistent: skipped (this MPI has no MPI-4 persistent collectives)\n");
#endif
}

/* An MPI-served request is still cancelled by MPI. */
static void mpi_served(void) {
    int x = 0;
    MPI_Request r;
    MPI_Irecv(&x, 1, MPI_INT, rank, 999, MPI_COMM_WORLD, &r);
    int rc = MPI_Cancel(&r);
    check(rc == MPI_SUCCESS, "MPI_Cancel of an MPI_Irecv", rc);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    check(cancelled == 1, "an MPI_Irecv nobody matches is cancelled", cancelled);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    split_phase(in, out);
    persistent(in, out);
    mpi_served();
    free(in), free(out);
    return mpi_test_finish(failures);
}
