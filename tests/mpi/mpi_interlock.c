/*
 * mpi_interlock.c — programs that need progress shared between collie and the MPI
 * underneath (issue 22), and persistent collectives started in different orders on
 * different ranks.  Run plain and with LD_PRELOAD=libcollie_mpi.so; every result is
 * checked against values computed here.
 *
 *   alltoall   every rank starts MPI_Ialltoall (served by MPI) and MPI_Iallreduce (served
 *              by collie); even ranks wait for the alltoall first, odd ranks for the
 *              allreduce first
 *   recv       rank 0 starts MPI_Iallreduce and blocks in MPI_Recv for a message rank 1
 *              sends only after its MPI_Wait on the allreduce returned
 *   blocking   MPI_Iallreduce on one communicator; rank 0 then calls a blocking
 *              MPI_Allreduce on another before its MPI_Wait, the others wait first
 *   pmpi       like blocking, with collectives collie passes to MPI (MPI_Alltoallw, a
 *              long double MPI_Scan) and ones it serves (MPI_Alltoall, MPI_Allgather, a
 *              long MPI_Scan): rank 0 calls them on another communicator before its
 *              MPI_Wait, the others after theirs
 *   porder     MPI_Bcast_init, MPI_Barrier_init, MPI_Allreduce_init; rank 0 starts them
 *              in init order, the others in reverse order, then MPI_Waitall (5 times)
 *   pwaitall   MPI_Waitall over an MPI_Iallreduce and a persistent long double allreduce
 *              (passed to MPI), and over the persistent one alone while an MPI_Iallreduce
 *              is pending
 *   pfree      persistent requests made and freed, then a persistent long double
 *              allreduce (passed to MPI) started and waited for 3 times
 *   ctor       communicator and window constructors and MPI_Win_fence (ctors: more of
 *              them; mpi_interlock_ctor.c): for each call a fresh MPI_Iallreduce of 1 MiB;
 *              rank 0 makes the call before its MPI_Wait, the others after theirs
 *
 * Usage: mpi_interlock PATTERN[,PATTERN...] BYTES[,BYTES...]  (allreduce sizes in bytes;
 * the alltoall sends min(BYTES, 1 MiB) per peer).  Prints "passed: 0 failures".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_pcoll.h"
#include "mpi_interlock.h"
#include "mpi_test_finish.h"

int rank, size, failures;

void fail(const char *what, size_t bytes, long i, double got, double want) {
    failures++;
    fprintf(stderr, "FAIL: rank %d: %s, %zu bytes: element %ld is %g, expected %g\n", rank, what,
            bytes, i, got, want);
}

/* allreduce input: (rank + 1) * (i % 1000 + 1); its sum over ranks, exact in doubles */
void fill(double *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(rank + 1) * (double)(i % 1000 + 1);
}

void check_sum(const double *v, size_t n, size_t bytes, const char *what) {
    double ranks = (double)size * (size + 1) / 2;
    for (size_t i = 0; i < n; i++)
        if (v[i] != ranks * (double)(i % 1000 + 1)) {
            fail(what, bytes, (long)i, v[i], ranks * (double)(i % 1000 + 1));
            return;
        }
}

static void pattern_alltoall(size_t bytes) {
    size_t n = bytes / sizeof(double), per = bytes < (1u << 20) ? bytes : (1u << 20);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    unsigned char *sa = malloc(per * size), *ra = malloc(per * size);
    fill(in, n);
    for (int q = 0; q < size; q++)
        memset(sa + per * q, (rank * 31 + q) & 0xff, per);
    MPI_Request r[2];
    MPI_Ialltoall(sa, (int)per, MPI_BYTE, ra, (int)per, MPI_BYTE, MPI_COMM_WORLD, &r[0]);
    MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    int first = rank % 2 == 0 ? 0 : 1;
    MPI_Wait(&r[first], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1 - first], MPI_STATUS_IGNORE);
    check_sum(out, n, bytes, "alltoall pattern, allreduce");
    for (int q = 0; q < size; q++)
        for (size_t k = 0; k < per; k++)
            if (ra[per * q + k] != ((q * 31 + rank) & 0xff)) {
                fail("alltoall pattern, alltoall", per, (long)(per * q + k), ra[per * q + k],
                     (q * 31 + rank) & 0xff);
                q = size;
                break;
            }
    free(in), free(out), free(sa), free(ra);
}

static void pattern_recv(size_t bytes) {
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    fill(in, n);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    int token = -1;
    if (rank == 0) {
        MPI_Status st;
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &st);
        if (token != 4711 || st.MPI_SOURCE != 1)
            fail("recv pattern, token", bytes, 0, token, 4711);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (rank == 1) {
            token = 4711;
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        }
    }
    check_sum(out, n, bytes, "recv pattern, allreduce");
    free(in), free(out);
}

static void pattern_blocking(size_t bytes, MPI_Comm other) {
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    fill(in, n);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    long mine = rank + 1, sum = 0;
    if (rank == 0) {
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, other);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, other);
    }
    if (sum != (long)size * (size + 1) / 2)
        fail("blocking pattern, MPI_Allreduce", sizeof(long), 0, (double)sum, (double)size * (size + 1) / 2);
    check_sum(out, n, bytes, "blocking pattern, allreduce");
    free(in), free(out);
}

/* The collectives of pattern pmpi on comm, checked. */
static void pmpi_calls(MPI_Comm comm) {
    int *sa = malloc(sizeof(int) * size), *ra = malloc(sizeof(int) * size);
    for (int q = 0; q < size; q++)
        sa[q] = rank * 1000 + q;
    MPI_Alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, comm);
    for (int q = 0; q < size; q++)
        if (ra[q] != q * 1000 + rank)
            fail("pmpi pattern, MPI_Alltoall", sizeof(int), q, ra[q], q * 1000 + rank);
    int mine = rank * 7 + 1;
    MPI_Allgather(&mine, 1, MPI_INT, ra, 1, MPI_INT, comm);
    for (int q = 0; q < size; q++)
        if (ra[q] != q * 7 + 1)
            fail("pmpi pattern, MPI_Allgather", sizeof(int), q, ra[q], q * 7 + 1);
    long one = rank + 1, prefix = 0;
    MPI_Scan(&one, &prefix, 1, MPI_LONG, MPI_SUM, comm);
    if (prefix != (long)(rank + 1) * (rank + 2) / 2)
        fail("pmpi pattern, MPI_Scan", sizeof(long), 0, (double)prefix, (double)(rank + 1) * (rank + 2) / 2);
    long double ld = rank + 1, ldprefix = 0;   /* long double: collie passes it to MPI */
    MPI_Scan(&ld, &ldprefix, 1, MPI_LONG_DOUBLE, MPI_SUM, comm);
    if (ldprefix != (long double)(rank + 1) * (rank + 2) / 2)
        fail("pmpi pattern, long double MPI_Scan", sizeof(long double), 0, (double)ldprefix,
             (double)(rank + 1) * (rank + 2) / 2);
    int *cnt = malloc(sizeof(int) * size * 2), *dsp = cnt + size;
    MPI_Datatype *types = malloc(sizeof *types * size);
    for (int q = 0; q < size; q++)
        cnt[q] = 1, dsp[q] = q * (int)sizeof(int), types[q] = MPI_INT;
    MPI_Alltoallw(sa, cnt, dsp, types, ra, cnt, dsp, types, comm);   /* never collie's */
    for (int q = 0; q < size; q++)
        if (ra[q] != q * 1000 + rank)
            fail("pmpi pattern, MPI_Alltoallw", sizeof(int), q, ra[q], q * 1000 + rank);
    free(cnt), free(types);
    free(sa), free(ra);
}

static void pattern_pmpi(size_t bytes, MPI_Comm other) {
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    fill(in, n);
    MPI_Request r;
    MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    if (rank == 0) {
        pmpi_calls(other);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        pmpi_calls(other);
    }
    check_sum(out, n, bytes, "pmpi pattern, allreduce");
    free(in), free(out);
}

static void pattern_porder(size_t bytes) {
#if HAVE_PCOLL
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    int b = -1;
    MPI_Request r[3];
    PINIT(Bcast_init)(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    PINIT(Barrier_init)(MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    PINIT(Allreduce_init)(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    for (int round = 0; round < 5; round++) {
        fill(in, n);
        memset(out, 0, n * sizeof *out);
        b = rank == 0 ? 42 + round : -1;
        for (int k = 0; k < 3; k++)
            MPI_Start(&r[rank == 0 ? k : 2 - k]);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        if (b != 42 + round)
            fail("porder pattern, bcast", sizeof b, 0, b, 42 + round);
        check_sum(out, n, bytes, "porder pattern, allreduce");
    }
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&r[k]);
    free(in), free(out);
#else
    (void)bytes;
    if (rank == 0)
        printf("porder: skipped (this MPI has no MPI-4 persistent collectives)\n");
#endif
}

/* MPI_Waitall over an MPI_Iallreduce (collie's) and a started persistent long double
 * allreduce (which collie passes to MPI); then over the persistent one alone while another
 * MPI_Iallreduce is pending, and MPI_Wait on that.  The drop-in's waits poll MPI meanwhile:
 * MPICH 4.0.2's MPI_Testall returns MPI_ERR_IN_STATUS (fatal by default) when it completes
 * a persistent collective, where its MPI_Waitall returns MPI_SUCCESS (found by mpi_soak). */
static void pattern_pwaitall(size_t bytes) {
#if HAVE_PCOLL
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    long double ld = 0, ldsum = 0;
    MPI_Request r[2];
    PINIT(Allreduce_init)(&ld, &ldsum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    for (int round = 0; round < 4; round++) {
        fill(in, n);
        memset(out, 0, n * sizeof *out);
        ld = rank + 1 + round;
        ldsum = 0;
        MPI_Iallreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[0]);
        MPI_Start(&r[1]);
        if (round % 2 == 0) {
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        } else {
            MPI_Waitall(1, &r[1], MPI_STATUSES_IGNORE);
            MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        }
        long double want = (long double)size * (size + 1) / 2 + (long double)size * round;
        if (ldsum != want)
            fail("pwaitall pattern, long double persistent allreduce", sizeof ld, 0, (double)ldsum, (double)want);
        check_sum(out, n, bytes, "pwaitall pattern, allreduce");
    }
    MPI_Request_free(&r[1]);
    free(in), free(out);
#else
    (void)bytes;
    if (rank == 0)
        printf("pwaitall: skipped (this MPI has no MPI-4 persistent collectives)\n");
#endif
}

/* Persistent requests collie serves, made and freed, then a persistent long double
 * allreduce (which collie passes to MPI), started and waited for 3 times.  The drop-in's
 * persistent requests were MPI_Send_init requests freed back to MPI, and MPICH 4.0.2 hangs
 * in any persistent collective whose request object was a freed persistent
 * point-to-point request's (found by mpi_soak). */
static void pattern_pfree(size_t bytes) {
#if HAVE_PCOLL
    size_t n = bytes / sizeof(double);
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    int b = 0;
    long double ld = 0, ldsum = 0;
    MPI_Request r[2];
    PINIT(Allreduce_init)(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    PINIT(Bcast_init)(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    PINIT(Allreduce_init)(&ld, &ldsum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    for (int round = 0; round < 3; round++) {
        ld = rank + 1 + round;
        ldsum = 0;
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        long double want = (long double)size * (size + 1) / 2 + (long double)size * round;
        if (ldsum != want)
            fail("pfree pattern, long double persistent allreduce", sizeof ld, 0, (double)ldsum, (double)want);
    }
    MPI_Request_free(&r[0]);
    free(in), free(out);
#else
    (void)bytes;
    if (rank == 0)
        printf("pfree: skipped (this MPI has no MPI-4 persistent collectives)\n");
#endif
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_interlock PATTERN[,...] BYTES[,...] (at least 2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm other;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    char *patterns = strdup(argv[1]);
    for (char *p = strtok(patterns, ","); p; p = strtok(NULL, ",")) {
        char *sizes = strdup(argv[2]), *save = NULL;
        for (char *s = strtok_r(sizes, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
            size_t bytes = strtoull(s, NULL, 0);
            double t0 = MPI_Wtime();
            if (strcmp(p, "alltoall") == 0)
                pattern_alltoall(bytes);
            else if (strcmp(p, "recv") == 0)
                pattern_recv(bytes);
            else if (strcmp(p, "blocking") == 0)
                pattern_blocking(bytes, other);
            else if (strcmp(p, "pmpi") == 0)
                pattern_pmpi(bytes, other);
            else if (strcmp(p, "porder") == 0)
                pattern_porder(bytes);
            else if (strcmp(p, "pwaitall") == 0)
                pattern_pwaitall(bytes);
            else if (strcmp(p, "pfree") == 0)
                pattern_pfree(bytes);
            else if (strcmp(p, "ctor") == 0 || strcmp(p, "ctors") == 0)
                pattern_ctor(bytes, strcmp(p, "ctors") == 0);
            else {
                fprintf(stderr, "mpi_interlock: unknown pattern %s\n", p);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (rank == 0)
                printf("%s %zu bytes, %d ranks: %.3f s\n", p, bytes, size, MPI_Wtime() - t0);
        }
        free(sizes);
    }
    free(patterns);
    MPI_Comm_free(&other);
    return mpi_test_finish(failures);
}
