/*
 * mpi_check.c — calls MPI_Allreduce, MPI_Reduce, MPI_Bcast, MPI_Barrier, their MPI_I*
 * forms and the persistent forms with many types, ops (built-in, MAXLOC/MINLOC, a
 * commutative and a non-commutative user op), counts (0, 1, P-1, 1023, 100003), roots,
 * MPI_IN_PLACE, derived datatypes, completions (Wait, Test, Waitall, Waitany, Testall,
 * Startall) and sub-communicators (MPI_Comm_split, MPI_Comm_dup); then allgather(v),
 * alltoall(v), gather(v), scatter(v) (mpi_check_move.c), reduce_scatter(_block), scan and
 * exscan (mpi_check_scan.c) in every form.
 *
 * Every result is checked against the independent reference (mpi_check_ref.c); rank 0
 * prints one digest line per case (a hash over all ranks' results), so a run under
 * LD_PRELOAD=libcollie_mpi.so and a plain run can be compared with diff.  Exit status 1
 * on any wrong result.  Usage: mpi_check [--quick] [--colls-only] [--colls-quick] (--quick:
 * fewer large counts, and --colls-quick; --colls-only: only the cases of allgather …
 * exscan; --colls-quick: about half of those; --no-colls: none of those; --list-mpi-libs:
 * each rank lists the MPI libraries mapped into it on stderr before MPI_Finalize).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

const char *const form_names[4] = { "blocking", "wait", "test", "persistent" };
const char *const xcoll_names[X_NCOLLS] = { "allgather", "allgatherv", "reduce_scatter_block",
                                            "reduce_scatter", "alltoall", "alltoallv", "gather",
                                            "gatherv", "scatter", "scatterv", "scan", "exscan" };

int world_rank, world_size, failures, quick, colls_quick;
static MPI_Op user_ops[2];   /* user_sum_mod (commutative), user_affine (not) */

MPI_Op mpi_op(enum top op) {
    const MPI_Op ops[] = { MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR,
                           MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC };
    return op == T_USER_SUM_MOD ? user_ops[0] : op == T_USER_AFFINE ? user_ops[1] : ops[op];
}

void *xmalloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* Gathers every world rank's digest of `bytes` of buf; rank 0 prints the case line. */
void report(const char *label, const void *buf, size_t bytes) {
    uint64_t h = digest(buf, bytes, 0xcbf29ce484222325ull), all = 0;
    uint64_t *hs = world_rank == 0 ? xmalloc((size_t)world_size * sizeof *hs) : NULL;
    MPI_Gather(&h, 1, MPI_UINT64_T, hs, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        for (int r = 0; r < world_size; r++)
            all = digest(&hs[r], sizeof hs[r], all);
        printf("%s %016llx\n", label, (unsigned long long)all);
        free(hs);
    }
}

/* report() for many cases with one MPI_Gather: the digests are kept (with rank 0's labels)
 * until report_flush() gathers them all and prints the lines in order. */
#define MAX_LATER 64
static uint64_t later_hash[MAX_LATER];
static char later_label[MAX_LATER][200];
static int nlater;

void report_flush(void) {
    uint64_t *hs = world_rank == 0 ? xmalloc((size_t)world_size * MAX_LATER * sizeof *hs) : NULL;
    MPI_Gather(later_hash, nlater, MPI_UINT64_T, hs, nlater, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    for (int i = 0; world_rank == 0 && i < nlater; i++) {
        uint64_t all = 0;
        for (int r = 0; r < world_size; r++)
            all = digest(&hs[(size_t)r * nlater + i], sizeof *hs, all);
        printf("%s %016llx\n", later_label[i], (unsigned long long)all);
    }
    free(hs);
    nlater = 0;
}

void report_later(const char *label, const void *buf, size_t bytes) {
    if (nlater == MAX_LATER)
        report_flush();
    later_hash[nlater] = digest(buf, bytes, 0xcbf29ce484222325ull);
    snprintf(later_label[nlater++], sizeof later_label[0], "%s", label);
}

void check(const char *label, const ttype *t, size_t count, const void *got, const void *want) {
    size_t i = first_diff(t, count, got, want);
    if (i == count)
        return;
    failures++;
    fprintf(stderr, "FAIL rank %d: %s: element %zu of %zu differs (%s)\n", world_rank, label, i,
            count, t->name);
}

/* Completes req the way `form` says. */
static void complete(MPI_Request *req, enum form form) {
    int flag = 0;
    if (form == F_TEST) {
        while (!flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

/* ---- allreduce ------------------------------------------------------------------------- */

static void allreduce_once(const ttype *t, enum top op, size_t count, enum form form, int in_place,
                           MPI_Comm comm, int salt, void *send, void *recv, MPI_Request *preq) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    input_fill(t, op, rank, salt, count, send);
    if (in_place)
        memcpy(recv, send, count * t->size);
    const void *sb = in_place ? MPI_IN_PLACE : send;
    MPI_Request req;
    if (form == F_BLOCKING) {
        MPI_Allreduce(sb, recv, (int)count, t->dt, mpi_op(op), comm);
    } else if (form == F_PERSISTENT) {
        MPI_Start(preq);
        MPI_Wait(preq, MPI_STATUS_IGNORE);
    } else {
        MPI_Iallreduce(sb, recv, (int)count, t->dt, mpi_op(op), comm, &req);
        complete(&req, form);
    }
}

void test_allreduce(const ttype *t, enum top op, size_t count, enum form form, int in_place,
                           MPI_Comm comm, const char *comm_name) {
    int size;
    MPI_Comm_size(comm, &size);
    char label[160];
    snprintf(label, sizeof label, "allreduce %s %s %s n=%zu %s%s", comm_name, t->name, top_names[op],
             count, form_names[form], in_place ? " in_place" : "");
    char *send = xmalloc(count * t->size), *recv = xmalloc(count * t->size), *want = xmalloc(count * t->size);
    MPI_Request preq = MPI_REQUEST_NULL;
#if HAVE_PERSISTENT
    if (form == F_PERSISTENT)
        PCOLL(Allreduce_init)(in_place ? MPI_IN_PLACE : send, recv, (int)count, t->dt, mpi_op(op),
                              comm, MPI_INFO_NULL, &preq);
#endif
    int runs = form == F_PERSISTENT ? 2 : 1;
    for (int salt = 0; salt < runs; salt++) {
        allreduce_once(t, op, count, form, in_place, comm, salt, send, recv, &preq);
        reference(t, op, size, salt, count, want);
        check(label, t, count, recv, want);
    }
    if (preq != MPI_REQUEST_NULL)
        MPI_Request_free(&preq);
    clear_padding(t, count, recv);
    report(label, recv, count * t->size);
    free(send);
    free(recv);
    free(want);
}

/* ---- reduce ------------------------------------------------------------------------------- */

void test_reduce(const ttype *t, enum top op, size_t count, int root, enum form form,
                        int in_place, MPI_Comm comm, const char *comm_name) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char label[160];
    snprintf(label, sizeof label, "reduce %s %s %s n=%zu root=%d %s%s", comm_name, t->name,
             top_names[op], count, root, form_names[form], in_place ? " in_place" : "");
    char *send = xmalloc(count * t->size), *recv = xmalloc(count * t->size), *want = xmalloc(count * t->size);
    input_fill(t, op, rank, 0, count, send);
#if defined(MPICH)
    /* MPICH 4.0.2 crashes in MPI_Reduce(MPI_IN_PLACE) at a root other than 0 for more than
     * about 1 KiB (it reads MPI_IN_PLACE as a buffer): not in place there. */
    if (root != 0 && count * t->size > 1024)
        in_place = 0;
#endif
    int ip = in_place && rank == root;
    if (ip)
        memcpy(recv, send, count * t->size);
    const void *sb = ip ? MPI_IN_PLACE : send;
    MPI_Request req;
    if (form == F_BLOCKING) {
        MPI_Reduce(sb, recv, (int)count, t->dt, mpi_op(op), root, comm);
    } else {
        MPI_Ireduce(sb, recv, (int)count, t->dt, mpi_op(op), root, comm, &req);
        complete(&req, form);
    }
    if (rank == root) {
        reference(t, op, size, 0, count, want);
        check(label, t, count, recv, want);
    }
    clear_padding(t, count, recv);
    report(label, recv, rank == root ? count * t->size : 0);
    free(send);
    free(recv);
    free(want);
}

/* ---- bcast -------------------------------------------------------------------------------- */

/* Broadcasts count elements of dt: elem_bytes (the extent) each, of which the first
 * data_bytes are data (the rest a gap that MPI leaves alone). */
void test_bcast(const char *tname, MPI_Datatype dt, size_t elem_bytes, size_t data_bytes, size_t count,
                int root, enum form form, MPI_Comm comm, const char *comm_name) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    char label[160];
    snprintf(label, sizeof label, "bcast %s %s n=%zu root=%d %s", comm_name, tname, count, root,
             form_names[form]);
    size_t bytes = count * elem_bytes;
    unsigned char *buf = xmalloc(bytes), *want = xmalloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        want[i] = (unsigned char)(i * 7 + (size_t)root * 3 + 1);
    memcpy(buf, want, bytes);
    for (size_t i = 0; i < count && rank != root; i++)
        memset(buf + i * elem_bytes, 0, data_bytes);
    MPI_Request req;
    if (form == F_BLOCKING) {
        MPI_Bcast(buf, (int)count, dt, root, comm);
    } else {
        MPI_Ibcast(buf, (int)count, dt, root, comm, &req);
        complete(&req, form);
    }
    ttype bytes_type = { tname, MPI_BYTE, K_UNSIGNED, 1 };
    check(label, &bytes_type, bytes, buf, want);
    report(label, buf, bytes);
    free(buf);
    free(want);
}

/* ---- the matrix ------------------------------------------------------------------------- */

/* Every predefined type an MPI reduces with the built-in ops (Fortran ones included): the
 * ones collie serves and the ones it passes to PMPI (long double: mpi_check_extra.c). */
static const ttype *types(size_t *n) {
    static ttype t[32];
    const enum kind char_kind = CHAR_MIN < 0 ? K_SIGNED : K_UNSIGNED;   /* the platform's char */
    ttype all[] = {
        { "int8", MPI_SIGNED_CHAR, K_SIGNED, 1 }, { "uint8", MPI_UNSIGNED_CHAR, K_UNSIGNED, 1 },
        { "char", MPI_CHAR, char_kind, 1 }, { "int8_t", MPI_INT8_T, K_SIGNED, 1 },
        { "short", MPI_SHORT, K_SIGNED, sizeof(short) }, { "uint16_t", MPI_UINT16_T, K_UNSIGNED, 2 },
        { "int", MPI_INT, K_SIGNED, sizeof(int) }, { "uint32_t", MPI_UINT32_T, K_UNSIGNED, 4 },
        { "long", MPI_LONG, K_SIGNED, sizeof(long) }, { "int64_t", MPI_INT64_T, K_SIGNED, 8 },
        { "ull", MPI_UNSIGNED_LONG_LONG, K_UNSIGNED, sizeof(unsigned long long) },
        { "aint", MPI_AINT, K_SIGNED, sizeof(MPI_Aint) }, { "count", MPI_COUNT, K_SIGNED, sizeof(MPI_Count) },
        { "float", MPI_FLOAT, K_FLOAT, 4 }, { "double", MPI_DOUBLE, K_FLOAT, 8 },
        { "byte", MPI_BYTE, K_UNSIGNED, 1 }, { "bool", MPI_C_BOOL, K_BOOL, 1 },
        { "cxx_bool", MPI_CXX_BOOL, K_BOOL, 1 },
        { "float_complex", MPI_C_FLOAT_COMPLEX, K_COMPLEX, 8 },
        { "double_complex", MPI_C_DOUBLE_COMPLEX, K_COMPLEX, 16 },
        { "float_int", MPI_FLOAT_INT, K_PAIR_FLOAT, 8 }, { "double_int", MPI_DOUBLE_INT, K_PAIR_DOUBLE, 16 },
        { "2int", MPI_2INT, K_PAIR_INT, 8 },
        /* Fortran types through the C interface (both MPIs here are built with Fortran) */
        { "f_integer", MPI_INTEGER, K_SIGNED, 4 }, { "f_real", MPI_REAL, K_FLOAT, 4 },
        { "f_double", MPI_DOUBLE_PRECISION, K_FLOAT, 8 }, { "f_complex", MPI_COMPLEX, K_COMPLEX, 8 },
        { "f_2integer", MPI_2INTEGER, K_PAIR_INT, 8 },
        { "f_logical", MPI_LOGICAL, K_BOOL, 4 }, { "f_character", MPI_CHARACTER, K_UNSIGNED, 1 },
    };
    memcpy(t, all, sizeof all);
    *n = sizeof all / sizeof all[0];
    return t;
}

static int op_allowed(const ttype *t, enum top op) {
    if (op == T_USER_SUM_MOD || op == T_USER_AFFINE)
        return 0;   /* tested separately on their own types */
    switch (t->kind) {
    case K_SIGNED: case K_UNSIGNED:
#if !defined(OPEN_MPI)   /* Open MPI reduces MPI_BYTE with every integer op */
        if (t->dt == MPI_BYTE)
            return op == T_BAND || op == T_BOR || op == T_BXOR;
#endif
        if (t->dt == MPI_CHARACTER)   /* MPICH reduces it signed, Open MPI unsigned */
            return op == T_SUM || op == T_PROD || op == T_BAND || op == T_BOR || op == T_BXOR;
        if (t->dt == MPI_INTEGER)     /* Open MPI: no logical ops on Fortran INTEGER */
            return op <= T_MAX || op == T_BAND || op == T_BOR || op == T_BXOR;
        return op <= T_BXOR;
    case K_FLOAT: return op <= T_MAX;
    case K_COMPLEX: return op == T_SUM || op == T_PROD;
    case K_BOOL: return op == T_LAND || op == T_LOR || op == T_LXOR;
    default: return op == T_MAXLOC || op == T_MINLOC;
    }
}

/* Whether the MPI underneath reduces (t, op): asked of PMPI itself on MPI_COMM_SELF with
 * errors returned (MPICH 5 rejects MPI_SUM on MPI_CHARACTER, MPICH 4 accepts it), so both
 * runs ask the same library the same question. */
static int mpi_accepts(const ttype *t, enum top op) {
    unsigned char in[32] = { 0 }, out[32];
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rc = PMPI_Allreduce(in, out, 1, t->dt, mpi_op(op), MPI_COMM_SELF);
    PMPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return rc == MPI_SUCCESS;
}

static void allreduce_matrix(void) {
    size_t nt;
    const ttype *t = types(&nt);
    size_t counts[] = { 1, (size_t)world_size - 1, 1023 };
    int k = 0, pair = 0;
    for (size_t i = 0; i < nt; i++)
        for (int op = 0; op < T_NOPS; op++) {
            if (!op_allowed(&t[i], op) || !mpi_accepts(&t[i], op))
                continue;
            pair++;
            for (size_t c = 0; c < 3; c++)
                if (!quick || c == (size_t)pair % 3)   /* --quick: one count per (type, op) */
                    test_allreduce(&t[i], op, counts[c], F_BLOCKING, (k++ % 2) == 1, MPI_COMM_WORLD, "world");
        }
}

static const ttype *one_type(ttype *slot, ttype value) {
    *slot = value;
    return slot;
}
const ttype *type_int(void) { static ttype t; return one_type(&t, (ttype){ "int", MPI_INT, K_SIGNED, sizeof(int) }); }
const ttype *type_double(void) { static ttype t; return one_type(&t, (ttype){ "double", MPI_DOUBLE, K_FLOAT, 8 }); }
const ttype *type_double_int(void) {
    static ttype t;
    return one_type(&t, (ttype){ "double_int", MPI_DOUBLE_INT, K_PAIR_DOUBLE, 16 });
}
const ttype *type_affine(void) { static ttype t; return one_type(&t, (ttype){ "affine", MPI_2INT, K_AFFINE, 8 }); }
static const ttype *type_uint8(void) {
    static ttype t;
    return one_type(&t, (ttype){ "uint8", MPI_UNSIGNED_CHAR, K_UNSIGNED, 1 });
}

static void special_counts(void) {
    size_t big = quick ? 10007 : 100003;
    test_allreduce(type_int(), T_SUM, 0, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
    test_allreduce(type_int(), T_SUM, big, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
    test_allreduce(type_double(), T_SUM, big, F_BLOCKING, 1, MPI_COMM_WORLD, "world");
    test_allreduce(type_double_int(), T_MAXLOC, big, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
    test_allreduce(type_int(), T_USER_SUM_MOD, 1023, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
    size_t counts[] = { 1, 5, 1023, big };
    for (int c = 0; c < 4; c++)
        test_allreduce(type_affine(), T_USER_AFFINE, counts[c], F_BLOCKING, c % 2, MPI_COMM_WORLD, "world");
}

static void reduce_matrix(void) {
    int roots[] = { 0, world_size - 1, world_size / 2 };
    size_t big = quick ? 10007 : 100003;
    for (int r = 0; r < 3; r++) {
        test_reduce(type_int(), T_SUM, 1023, roots[r], F_BLOCKING, r % 2, MPI_COMM_WORLD, "world");
        test_reduce(type_double(), T_MAX, (size_t)world_size - 1, roots[r], F_BLOCKING, 1, MPI_COMM_WORLD, "world");
        test_reduce(type_affine(), T_USER_AFFINE, 1023, roots[r], F_BLOCKING, r % 2, MPI_COMM_WORLD, "world");
        test_reduce(type_double_int(), T_MINLOC, 1, roots[r], F_BLOCKING, 0, MPI_COMM_WORLD, "world");
        test_reduce(type_uint8(), T_BXOR, 1023, roots[r], F_BLOCKING, 1, MPI_COMM_WORLD, "world");
    }
    test_reduce(type_int(), T_SUM, 0, 0, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
    test_reduce(type_int(), T_SUM, big, world_size - 1, F_BLOCKING, 0, MPI_COMM_WORLD, "world");
}

void bcast_matrix(MPI_Comm comm, const char *name) {
    int size;
    MPI_Comm_size(comm, &size);
    MPI_Datatype contig, vec, gapped;
    MPI_Type_contiguous(3, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    MPI_Type_vector(4, 1, 1, MPI_DOUBLE, &vec);   /* contiguous in fact, though a vector */
    MPI_Type_commit(&vec);
    MPI_Type_create_resized(MPI_INT, 0, 8, &gapped);   /* an int, then a 4-byte gap */
    MPI_Type_commit(&gapped);
    size_t big = quick ? 10007 : 100003;
    size_t counts[] = { 0, 1, (size_t)size - 1, 1023, big };
    int roots[] = { 0, size - 1, size / 2 };
    for (int c = 0; c < 5; c++)
        for (int r = 0; r < 3; r++)
            test_bcast("int", MPI_INT, sizeof(int), sizeof(int), counts[c], roots[r], F_BLOCKING, comm, name);
    test_bcast("double", MPI_DOUBLE, 8, 8, 1023, size - 1, F_BLOCKING, comm, name);
    test_bcast("contig3int", contig, 3 * sizeof(int), 3 * sizeof(int), 1023, 0, F_BLOCKING, comm, name);
    test_bcast("vector4double", vec, 32, 32, 77, size / 2, F_BLOCKING, comm, name);
    test_bcast("gapped_int", gapped, 8, 4, 1000, size - 1, F_BLOCKING, comm, name);
    test_bcast("int", MPI_INT, sizeof(int), sizeof(int), 1023, size / 2, F_WAIT, comm, name);
    test_bcast("gapped_int", gapped, 8, 4, 999, 0, F_WAIT, comm, name);
    MPI_Type_free(&contig);
    MPI_Type_free(&vec);
    MPI_Type_free(&gapped);
}

static void nonblocking_cases(void) {
    test_allreduce(type_int(), T_SUM, 1023, F_WAIT, 0, MPI_COMM_WORLD, "world");
    test_allreduce(type_double(), T_SUM, quick ? 10007 : 100003, F_TEST, 1, MPI_COMM_WORLD, "world");
    test_allreduce(type_affine(), T_USER_AFFINE, 33, F_WAIT, 0, MPI_COMM_WORLD, "world");
    test_reduce(type_affine(), T_USER_AFFINE, 1023, world_size - 1, F_TEST, 0, MPI_COMM_WORLD, "world");
    test_reduce(type_int(), T_MAX, 7, 0, F_WAIT, 1, MPI_COMM_WORLD, "world");
    test_bcast("double", MPI_DOUBLE, 8, 8, 1023, 1 % world_size, F_TEST, MPI_COMM_WORLD, "world");
}

#if HAVE_PERSISTENT
static void persistent_cases(void) {
    test_allreduce(type_int(), T_SUM, 1023, F_PERSISTENT, 0, MPI_COMM_WORLD, "world");
    test_allreduce(type_affine(), T_USER_AFFINE, 100, F_PERSISTENT, 1, MPI_COMM_WORLD, "world");
    test_allreduce(type_double_int(), T_MINLOC, 17, F_PERSISTENT, 0, MPI_COMM_WORLD, "world");
}
#endif


int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    setvbuf(stdout, NULL, _IOLBF, 0);
    int colls_only = 0, no_colls = 0, list_libs = 0;
    for (int i = 1; i < argc; i++) {
        list_libs = list_libs || strcmp(argv[i], "--list-mpi-libs") == 0;
        quick = quick || strcmp(argv[i], "--quick") == 0;
        colls_only = colls_only || strcmp(argv[i], "--colls-only") == 0;
        colls_quick = colls_quick || strcmp(argv[i], "--colls-quick") == 0;
        no_colls = no_colls || strcmp(argv[i], "--no-colls") == 0;
    }
    colls_quick = colls_quick || quick;
    MPI_Op_create(user_sum_mod, 1, &user_ops[0]);
    MPI_Op_create(user_affine, 0, &user_ops[1]);
    if (!colls_only) {
        allreduce_matrix();
        special_counts();
        reduce_matrix();
        bcast_matrix(MPI_COMM_WORLD, "world");
        nonblocking_cases();
#if HAVE_PERSISTENT
        persistent_cases();
#endif
        run_extra_cases();
    }
    if (!no_colls) {
        run_move_cases();
        run_scan_cases();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("%s: %d wrong results\n", total ? "FAILED" : "passed", total);
    MPI_Op_free(&user_ops[0]);
    MPI_Op_free(&user_ops[1]);
    if (list_libs)
        list_mpi_libraries();
    MPI_Finalize();
    return total ? 1 : 0;
}
