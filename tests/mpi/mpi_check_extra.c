/*
 * mpi_check_extra.c — cases of mpi_check beyond single calls: several requests completed
 * together (Waitall with point-to-point requests, Waitany, Testall), persistent requests
 * started with Startall, barriers, sub-communicators (split, dup), derived datatypes
 * (flattenable contiguous, and ones collie hands to PMPI), an MPI_Ibcast whose root uses
 * another layout of the same signature.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

/* An Iallreduce, an Ibcast and a ring exchange, all completed by one call of `how`. */
static void mixed_requests(const char *how) {
    const ttype *ti = type_int();
    size_t n = 1023;
    int *a = xmalloc(n * sizeof *a), *want = xmalloc(n * sizeof *want), *b = xmalloc(n * sizeof *b);
    int token_out = world_rank * 10, token_in = -1;
    input_fill(ti, T_SUM, world_rank, 3, n, a);
    for (size_t i = 0; i < n; i++)
        b[i] = world_rank == 0 ? (int)(i * 5 + 1) : 0;
    MPI_Request reqs[5];
    MPI_Iallreduce(MPI_IN_PLACE, a, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&token_in, 1, MPI_INT, (world_rank + world_size - 1) % world_size, 7, MPI_COMM_WORLD, &reqs[1]);
    MPI_Ibcast(b, (int)n, MPI_INT, 0, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(&token_out, 1, MPI_INT, (world_rank + 1) % world_size, 7, MPI_COMM_WORLD, &reqs[3]);
    MPI_Ibarrier(MPI_COMM_WORLD, &reqs[4]);
    if (strcmp(how, "waitall") == 0) {
        MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE);
    } else if (strcmp(how, "testall") == 0) {
        int flag = 0;
        while (!flag)
            MPI_Testall(5, reqs, &flag, MPI_STATUSES_IGNORE);
    } else {
        for (int left = 5; left > 0; left--) {
            int idx = MPI_UNDEFINED;
            MPI_Waitany(5, reqs, &idx, MPI_STATUS_IGNORE);
            if (idx == MPI_UNDEFINED || reqs[idx] != MPI_REQUEST_NULL) {
                failures++;
                fprintf(stderr, "FAIL rank %d: waitany returned %d\n", world_rank, idx);
                break;
            }
        }
    }
    char label[64];
    snprintf(label, sizeof label, "mixed %s allreduce", how);
    reference(ti, T_SUM, world_size, 3, n, want);
    check(label, ti, n, a, want);
    report(label, a, n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        want[i] = (int)(i * 5 + 1);
    snprintf(label, sizeof label, "mixed %s bcast", how);
    check(label, ti, n, b, want);
    if (token_in != ((world_rank + world_size - 1) % world_size) * 10) {
        failures++;
        fprintf(stderr, "FAIL rank %d: %s: ring token %d\n", world_rank, how, token_in);
    }
    for (int i = 0; i < 5; i++)
        if (reqs[i] != MPI_REQUEST_NULL) {
            failures++;
            fprintf(stderr, "FAIL rank %d: %s left request %d active\n", world_rank, how, i);
        }
    free(a);
    free(b);
    free(want);
}

#if HAVE_PERSISTENT
/* Persistent allreduce, reduce, bcast and barrier, started together three times. */
static void persistent_startall(void) {
    const ttype *ta = type_affine(), *ti = type_int();
    size_t n = 257;
    int root = world_size - 1;
    int *s = xmalloc(n * sizeof *s), *r = xmalloc(n * sizeof *r), *want = xmalloc(n * sizeof *want);
    int *b = xmalloc(n * sizeof *b);
    char *as = xmalloc(n * ta->size), *ar = xmalloc(n * ta->size), *awant = xmalloc(n * ta->size);
    MPI_Request reqs[4];
    PCOLL(Allreduce_init)(s, r, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]);
    PCOLL(Reduce_init)(as, ar, (int)n, MPI_2INT, mpi_op(T_USER_AFFINE), root, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &reqs[1]);
    PCOLL(Bcast_init)(b, (int)n, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[2]);
    PCOLL(Barrier_init)(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[3]);
    for (int salt = 0; salt < 3; salt++) {
        input_fill(ti, T_MAX, world_rank, salt, n, s);
        input_fill(ta, T_USER_AFFINE, world_rank, salt, n, as);
        for (size_t i = 0; i < n; i++)
            b[i] = world_rank == 0 ? (int)i * salt : -1;
        MPI_Startall(4, reqs);
        MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        char label[64];
        snprintf(label, sizeof label, "startall salt=%d allreduce", salt);
        reference(ti, T_MAX, world_size, salt, n, want);
        check(label, ti, n, r, want);
        report(label, r, n * sizeof *r);
        snprintf(label, sizeof label, "startall salt=%d reduce", salt);
        if (world_rank == root) {
            reference(ta, T_USER_AFFINE, world_size, salt, n, awant);
            check(label, ta, n, ar, awant);
        }
        report(label, ar, world_rank == root ? n * ta->size : 0);
        for (size_t i = 0; i < n; i++)
            want[i] = (int)i * salt;
        snprintf(label, sizeof label, "startall salt=%d bcast", salt);
        check(label, ti, n, b, want);
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&reqs[i]);
    free(s); free(r); free(want); free(b); free(as); free(ar); free(awant);
}
#endif

static void subcommunicators(void) {
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_size - world_rank, &half);
    const char *name = world_rank % 2 ? "odd" : "even";
    test_allreduce(type_int(), T_SUM, 1023, F_BLOCKING, 0, half, name);
    test_allreduce(type_affine(), T_USER_AFFINE, 5, F_BLOCKING, 1, half, name);
    test_allreduce(type_double_int(), T_MAXLOC, 1000, F_WAIT, 0, half, name);
    test_reduce(type_affine(), T_USER_AFFINE, 77, 0, F_BLOCKING, 0, half, name);
    bcast_matrix(half, name);
    MPI_Barrier(half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    test_allreduce(type_int(), T_SUM, 1023, F_BLOCKING, 1, dup, "dup");
    test_allreduce(type_double(), T_MIN, 3, F_TEST, 0, dup, "dup");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
}

/* A predefined type collie does not reduce (long double): goes to PMPI, same result. */
static void long_double_sum(void) {
    const ttype *ti = type_int();
    size_t n = 100;
    int *v = xmalloc(n * sizeof *v), *want = xmalloc(n * sizeof *want);
    long double *s = xmalloc(n * sizeof *s), *r = xmalloc(n * sizeof *r);
    double *out = xmalloc(n * sizeof *out);
    input_fill(ti, T_SUM, world_rank, 0, n, v);
    for (size_t i = 0; i < n; i++)
        s[i] = v[i];
    MPI_Allreduce(s, r, (int)n, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    reference(ti, T_SUM, world_size, 0, n, want);
    for (size_t i = 0; i < n; i++) {
        out[i] = (double)r[i];   /* without the padding bytes of long double */
        v[i] = (int)r[i];
    }
    check("long double sum", ti, n, v, want);
    report("long double sum", out, n * sizeof *out);
    free(v); free(want); free(s); free(r); free(out);
}

/* Reductions over derived types.  Open MPI 4.1 and MPICH 4.0 both reject built-in ops on
 * derived types (MPI_ERR_OP); collie flattens contiguous ones (and MPI_Type_dup of them)
 * to their base type, so those cases run only under libcollie_mpi, checked against the
 * reference without a digest line.  A user op over a derived type goes to PMPI in both
 * runs. */
bool collie_preloaded(void) {
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "libcollie_mpi");
}

void list_mpi_libraries(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096], found[8][1024], list[8 * 1024 + 16] = "";
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *path = strchr(line, '/'), *end = path ? strchr(path, '\n') : NULL;
        if (end)
            *end = '\0';
        const char *base = path ? strrchr(path, '/') + 1 : NULL;
        if (!base || strncmp(base, "libmpi", 6) != 0 || !strstr(base, ".so"))
            continue;
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen = seen || strcmp(found[i], path) == 0;
        if (!seen && n < 8) {
            snprintf(found[n], sizeof found[0], "%s", path);
            strcat(strcat(list, " "), found[n++]);
        }
    }
    if (f)
        fclose(f);
    fprintf(stderr, "mpi_check: rank %d: %d MPI libraries mapped:%s\n", world_rank, n, list);
}

static void derived_reductions(void) {
    const ttype *ti = type_int();
    size_t n = 341;   /* elements of 3 ints */
    MPI_Datatype contig, dup;
    MPI_Type_contiguous(3, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    MPI_Type_dup(contig, &dup);
    int *s = xmalloc(3 * n * sizeof *s), *r = xmalloc(3 * n * sizeof *r), *want = xmalloc(3 * n * sizeof *want);
    MPI_Datatype types[2] = { contig, dup };
    const char *names[2] = { "derived contig3int sum", "derived dup_contig3int sum" };
    for (int k = 0; k < 2 && collie_preloaded(); k++) {
        input_fill(ti, T_SUM, world_rank, k, 3 * n, s);
        MPI_Allreduce(k ? MPI_IN_PLACE : s, k ? s : r, (int)n, types[k], MPI_SUM, MPI_COMM_WORLD);
        reference(ti, T_SUM, world_size, k, 3 * n, want);
        check(names[k], ti, 3 * n, k ? s : r, want);
    }
    input_fill(ti, T_USER_SUM_MOD, world_rank, 0, 3 * n, s);
    MPI_Allreduce(s, r, (int)n, contig, mpi_op(T_USER_SUM_MOD), MPI_COMM_WORLD);
    reference(ti, T_USER_SUM_MOD, world_size, 0, 3 * n, want);
    check("derived contig3int user_sum_mod", ti, 3 * n, r, want);
    report("derived contig3int user_sum_mod", r, 3 * n * sizeof *r);
    MPI_Type_free(&contig);
    MPI_Type_free(&dup);
    free(s); free(r); free(want);
}

/* MPI reuses the handles of freed datatypes (MPICH at once): a contiguous type and a
 * vector with gaps created and freed in turn, each broadcast once.  A layer that kept what
 * it learnt about a freed handle would send the vector as one block and overwrite its gaps. */
static void reused_type_handles(void) {
    enum { N = 5, SPAN = 25 };   /* 5 elements; the vector's extent is 5 ints */
    int buf[3 * SPAN];
    for (int round = 0; round < 6; round++) {
        MPI_Datatype t;
        bool vector = round % 2 == 1;
        if (vector)
            MPI_Type_vector(3, 1, 2, MPI_INT, &t);   /* ints 0, 2, 4 of every 5 */
        else
            MPI_Type_contiguous(3, MPI_INT, &t);
        MPI_Type_commit(&t);
        MPI_Aint lb, extent;
        MPI_Type_get_extent(t, &lb, &extent);
        int stride = (int)(extent / (MPI_Aint)sizeof(int)), used = N * stride;
        for (int i = 0; i < used; i++)
            buf[i] = world_rank == 0 ? i + 1 + 100 * round : -1;
        MPI_Bcast(buf, N, t, 0, MPI_COMM_WORLD);
        int bad = 0;
        for (int i = 0; i < used; i++) {
            bool data = !vector || (i % stride) % 2 == 0;
            int want = data || world_rank == 0 ? i + 1 + 100 * round : -1;
            bad += buf[i] != want;
        }
        if (bad) {
            failures++;
            fprintf(stderr, "FAIL rank %d: reused handle round %d (%s): %d wrong ints\n", world_rank,
                    round, vector ? "vector" : "contiguous", bad);
        }
        char label[64];
        snprintf(label, sizeof label, "reused handle round %d", round);
        report(label, buf, (size_t)used * sizeof(int));
        MPI_Type_free(&t);
    }
}

/* MPI_Ibcast with a different layout on the root (ints with gaps) than on the others (plain
 * ints), one signature: every rank must take the same path (a root on PMPI and the others
 * on collie would hang). */
static void ibcast_mixed_layouts(void) {
    int n = 300, root = world_size - 1, bad = 0;
    int *buf = xmalloc(2 * (size_t)n * sizeof *buf);
    MPI_Datatype gapped;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &gapped);
    MPI_Type_commit(&gapped);
    for (int i = 0; i < 2 * n; i++)
        buf[i] = world_rank == root ? (i % 2 ? -7 : i / 2 * 3 + 1) : -1;
    MPI_Request r;
    MPI_Ibcast(buf, n, world_rank == root ? gapped : MPI_INT, root, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * n; i++) {
        int want = world_rank == root ? (i % 2 ? -7 : i / 2 * 3 + 1) : i < n ? i * 3 + 1 : -1;
        bad += buf[i] != want;
    }
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL rank %d: ibcast with mixed layouts: %d wrong ints\n", world_rank, bad);
    }
    report("ibcast mixed layouts", buf, 2 * (size_t)n * sizeof *buf);
    MPI_Type_free(&gapped);
    free(buf);
}

void run_extra_cases(void) {
    ibcast_mixed_layouts();
    reused_type_handles();
    mixed_requests("waitall");
    mixed_requests("testall");
    mixed_requests("waitany");
#if HAVE_PERSISTENT
    persistent_startall();
#endif
    subcommunicators();
    derived_reductions();
    long_double_sum();
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}
