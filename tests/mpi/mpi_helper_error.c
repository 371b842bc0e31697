/*
 * mpi_helper_error.c — a collie error found by libcollie_mpi's helper thread
 * (src/mpi/mpi_progress_help.c) reaches the program: 2 ranks, linked with libcollie_mpi.
 *
 * Both ranks start an MPI_Iallreduce on MPI_COMM_WORLD (served by collie) with different
 * counts — rank 0 at once, rank 1 only 200 ms later —, then block in
 * MPI_Sendrecv_replace with each other (passed to PMPI; rank 1 enters it another 200 ms
 * later).  Rank 0 is inside PMPI_Sendrecv_replace when rank 1's chunk arrives, so only its
 * helper thread can find the mismatch.  Checked: rank 0's error handler (set on
 * MPI_COMM_WORLD) ran once by the time MPI_Sendrecv_replace returned, with an error code
 * and collie's message (collie_last_error() names the mismatched peer); the exchanged
 * value is right; MPI_Wait on the failed request returns an error, as does rank 1's
 * MPI_Iallreduce or MPI_Wait.  Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collie.h"

static int rank, failures, handler_calls, handler_code;
static char handler_msg[1024];

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    handler_calls++;
    handler_code = *code;
    snprintf(handler_msg, sizeof handler_msg, "%s", collie_last_error());
}

static void check(int ok, const char *what) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: %s (handler calls %d, code %d, message \"%s\")\n", rank,
                what, handler_calls, handler_code, handler_msg);
    }
}

static void nap_ms(long ms) {
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_helper_error: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    double one = 1, two = 0;
    MPI_Allreduce(&one, &two, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);   /* makes the team */
    check(two == 2 && handler_calls == 0, "the first MPI_Allreduce");

    double in[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[8];
    MPI_Request r = MPI_REQUEST_NULL;
    int peer = 1 - rank, value = 10 + rank;
    if (rank == 1)
        nap_ms(200);
    int rc_start = MPI_Iallreduce(in, out, rank == 0 ? 4 : 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    if (rank == 1)
        nap_ms(200);
    int rc_pmpi = MPI_Sendrecv_replace(&value, 1, MPI_INT, peer, 3, peer, 3, MPI_COMM_WORLD,
                                       MPI_STATUS_IGNORE);
    int calls_after = handler_calls;
    char msg[sizeof handler_msg];
    memcpy(msg, handler_msg, sizeof msg);
    int rc_wait = r == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_Wait(&r, MPI_STATUS_IGNORE);

    check(rc_pmpi == MPI_SUCCESS && value == 10 + peer, "MPI_Sendrecv_replace's exchange");
    if (rank == 0) {
        check(rc_start == MPI_SUCCESS, "rank 0's MPI_Iallreduce started");
        check(calls_after == 1, "the error handler ran once by the end of MPI_Sendrecv_replace");
        check(handler_code != MPI_SUCCESS, "the error handler got an error code");
        check(strstr(msg, "but rank 1") != NULL, "collie's message in the handler names rank 1");
        check(rc_wait != MPI_SUCCESS, "MPI_Wait on the failed request returns an error");
    } else {
        check(rc_start != MPI_SUCCESS || rc_wait != MPI_SUCCESS,
              "rank 1's MPI_Iallreduce or MPI_Wait returns an error");
        check(handler_calls >= 1 && strstr(handler_msg, "but rank 0") != NULL,
              "rank 1's handler got collie's message naming rank 0");
    }
    /* the result by point-to-point (collie's team on MPI_COMM_WORLD has failed) */
    int total = 0, sendf = failures;
    MPI_Sendrecv(&sendf, 1, MPI_INT, peer, 4, &total, 1, MPI_INT, peer, 4, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    total += failures;
    if (rank == 0)
        printf("passed: %d failures\n", total);
    MPI_Errhandler_free(&eh);
    MPI_Finalize();
    return total != 0;
}
