/*
 * mpi_freed_comm_error.c — a collie error on a request whose communicator the program has
 * already freed (2 ranks, linked with libcollie_mpi: the handlers read collie_last_error()).
 *
 * MPI lets a program free a communicator with requests pending on it; an error those
 * requests meet later belongs to that communicator's error handler.  The drop-in called
 * PMPI_Comm_call_errhandler on the freed handle: MPICH then raised "invalid communicator"
 * on MPI_COMM_WORLD (fatal by default: the job aborted where the program had asked for
 * MPI_ERRORS_RETURN), or — the handle reused by a newer communicator, as MPICH does at once
 * — called the newer communicator's handler; Open MPI read freed memory.  Checked:
 *  1. persistent: an allreduce made on dup A (user handler HA), A freed, dup B made with
 *     handler HB (MPICH hands B A's old handle), the request started twice (the second
 *     MPI_Start is an error collie reports): HA runs once with MPI_ERR_ARG and collie's
 *     message, HB never; the second MPI_Start returns the error; the first start's sums
 *     are right after MPI_Wait;
 *  2. split-phase: an MPI_Iallreduce on dup C (MPI_ERRORS_RETURN) with counts 4 and 5 —
 *     rank 1 starts 200 ms late, so rank 0 finds the mismatch inside MPI_Wait, after
 *     freeing C: MPI_Wait returns an error code (at rank 1, MPI_Iallreduce or MPI_Wait),
 *     and nothing aborts.
 * Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collie.h"
#include "mpi_pcoll.h"
#include "mpi_test_finish.h"

static int rank, failures;
static int calls_a, calls_b, code_a;
static char msg_a[1024];

static void handler_a(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    calls_a++;
    code_a = *code;
    snprintf(msg_a, sizeof msg_a, "%s", collie_last_error());
}

static void handler_b(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    (void)code;
    calls_b++;
}

static void check(int ok, const char *what) {
    if (!ok) {
        failures++;
        fprintf(stderr, "FAIL: rank %d: %s (handler A: %d calls, code %d, \"%s\"; handler B: "
                "%d calls)\n", rank, what, calls_a, code_a, msg_a, calls_b);
    }
}

static void nap_ms(long ms) {
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static void persistent_case(void) {
#if HAVE_PCOLL
    MPI_Errhandler ea, eb;
    MPI_Comm_create_errhandler(handler_a, &ea);
    MPI_Comm_create_errhandler(handler_b, &eb);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, ea);
    double in[4] = { 1, 2, 3, 4 }, out[4] = { 0 };
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PINIT(Allreduce_init)(in, out, 4, MPI_DOUBLE, MPI_SUM, a, MPI_INFO_NULL, &r);
    check(rc == MPI_SUCCESS, "MPI_Allreduce_init");
    MPI_Comm_free(&a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, eb);
    rc = MPI_Start(&r);
    check(rc == MPI_SUCCESS && calls_a == 0, "the first MPI_Start");
    int rc2 = MPI_Start(&r);   /* erroneous: the request is active */
    check(rc2 != MPI_SUCCESS, "the second MPI_Start returns an error");
    check(calls_a == 1, "the freed communicator's handler ran once");
    int cls = MPI_SUCCESS;
    MPI_Error_class(code_a, &cls);
    check(cls == MPI_ERR_ARG, "its code is of class MPI_ERR_ARG");
    check(strstr(msg_a, "already active") != NULL, "collie's message reached the handler");
    check(calls_b == 0, "the newer communicator's handler did not run");
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    check(rc == MPI_SUCCESS, "MPI_Wait on the first start");
    for (int i = 0; i < 4; i++)
        if (out[i] != 2 * in[i]) {
            check(0, "the sums of the first start");
            break;
        }
    MPI_Request_free(&r);
    /* b still works, and its handler stayed quiet */
    double one = 1, two = 0;
    MPI_Allreduce(&one, &two, 1, MPI_DOUBLE, MPI_SUM, b);
    check(two == 2 && calls_b == 0, "an allreduce on the newer communicator");
    MPI_Comm_free(&b);
    MPI_Errhandler_free(&ea);
    MPI_Errhandler_free(&eb);
#endif
}

static void split_phase_case(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    double in[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[8];
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 1)
        nap_ms(200);
    int rc_start = MPI_Iallreduce(in, out, rank == 0 ? 4 : 5, MPI_DOUBLE, MPI_SUM, c, &r);
    MPI_Comm_free(&c);
    int rc_wait = r == MPI_REQUEST_NULL ? MPI_SUCCESS : MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == 0) {
        check(rc_start == MPI_SUCCESS, "rank 0's MPI_Iallreduce started");
        check(rc_wait != MPI_SUCCESS, "MPI_Wait returns the error (MPI_ERRORS_RETURN)");
    } else {
        check(rc_start != MPI_SUCCESS || rc_wait != MPI_SUCCESS,
              "rank 1's MPI_Iallreduce or MPI_Wait returns an error");
    }
}

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_freed_comm_error: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    persistent_case();
    split_phase_case();
    return mpi_test_finish(failures);
}
