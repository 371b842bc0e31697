/*
 * mpi_check.h — the MPI collectives test program (mpi_check.c) and its independent
 * reference (mpi_check_ref.c).  The program only uses MPI: run without LD_PRELOAD it
 * tests the MPI, with LD_PRELOAD=libcollie_mpi.so it tests collie; both runs print the
 * same digest lines when collie computes what MPI computes.
 */
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The persistent collectives: MPI-4 (MPICH 4) or Open MPI's MPIX_ extension. */
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define HAVE_PERSISTENT 1
#define PCOLL(name) MPIX_##name
#elif MPI_VERSION >= 4
#define HAVE_PERSISTENT 1
#define PCOLL(name) MPI_##name
#else
#define HAVE_PERSISTENT 0
#endif

/* K_COMPLEX: a (real, imaginary) pair of floats (size 8) or doubles (size 16). */
enum kind { K_SIGNED, K_UNSIGNED, K_FLOAT, K_BOOL, K_PAIR_FLOAT, K_PAIR_DOUBLE, K_PAIR_INT, K_AFFINE,
            K_COMPLEX };

typedef struct ttype {
    const char *name;
    MPI_Datatype dt;
    enum kind kind;
    size_t size;        /* bytes of one element in memory (extent) */
} ttype;

/* Which op a case uses: the built-ins plus two user ops. */
enum top { T_SUM, T_PROD, T_MIN, T_MAX, T_LAND, T_LOR, T_LXOR, T_BAND, T_BOR, T_BXOR,
           T_MAXLOC, T_MINLOC, T_USER_SUM_MOD, T_USER_AFFINE, T_NOPS };

extern const char *const top_names[T_NOPS];

/* Input element i of `rank` for (type, op); `salt` varies repeated runs. */
void input_fill(const ttype *t, enum top op, int rank, int salt, size_t count, void *buf);
/* The reduction of all P ranks' inputs, computed element by element in rank order. */
void reference(const ttype *t, enum top op, int P, int salt, size_t count, void *out);
/* Index of the first element where a and b differ (count if none). */
size_t first_diff(const ttype *t, size_t count, const void *a, const void *b);
/* Zeroes the bytes of a result that MPI leaves undefined (the padding of MPI_DOUBLE_INT). */
void clear_padding(const ttype *t, size_t count, void *buf);
uint64_t digest(const void *buf, size_t bytes, uint64_t h);
/* The user ops' MPI functions. */
void user_sum_mod(void *in, void *inout, int *len, MPI_Datatype *dt);
void user_affine(void *in, void *inout, int *len, MPI_Datatype *dt);

#define AFFINE_PRIME 65521

/* The harness (mpi_check.c). */
enum form { F_BLOCKING, F_WAIT, F_TEST, F_PERSISTENT };
extern int world_rank, world_size, failures, quick, colls_quick;
MPI_Op mpi_op(enum top op);
void *xmalloc(size_t n);
void report(const char *label, const void *buf, size_t bytes);
/* The same, printed (with one MPI_Gather for all) at report_flush(); every rank must call
 * both in the same order. */
void report_later(const char *label, const void *buf, size_t bytes);
void report_flush(void);
void check(const char *label, const ttype *t, size_t count, const void *got, const void *want);
void test_allreduce(const ttype *t, enum top op, size_t count, enum form form, int in_place,
                    MPI_Comm comm, const char *comm_name);
void test_reduce(const ttype *t, enum top op, size_t count, int root, enum form form,
                 int in_place, MPI_Comm comm, const char *comm_name);
void test_bcast(const char *tname, MPI_Datatype dt, size_t elem_bytes, size_t data_bytes, size_t count,
                int root, enum form form, MPI_Comm comm, const char *comm_name);
void bcast_matrix(MPI_Comm comm, const char *name);
/* Types used by several cases (MPI handles are not constants in Open MPI). */
const ttype *type_int(void);
const ttype *type_double(void);
const ttype *type_double_int(void);
const ttype *type_affine(void);

/* More cases (mpi_check_extra.c): completions, persistent, sub-communicators, derived types. */
void run_extra_cases(void);
/* Whether this run has libcollie_mpi preloaded (cases MPI itself gets wrong run only then,
 * checked against the reference without a digest line). */
bool collie_preloaded(void);
/* Prints "mpi_check: rank R: N MPI libraries mapped: PATH..." (from /proc/self/maps: files
 * named libmpi*.so*, which takes in libmpich and libmpi_abi) on stderr. */
void list_mpi_libraries(void);

/* allgather(v) … exscan (mpi_check_xpost.c): one call described, issued in a form. */
enum xcoll { X_ALLGATHER, X_ALLGATHERV, X_RS_BLOCK, X_RS, X_ALLTOALL, X_ALLTOALLV, X_GATHER,
             X_GATHERV, X_SCATTER, X_SCATTERV, X_SCAN, X_EXSCAN, X_NCOLLS };
extern const char *const xcoll_names[X_NCOLLS];
typedef struct xcall {
    enum xcoll coll;
    const void *sb;
    int sc;
    const int *scs, *sds;
    MPI_Datatype st;
    void *rb;
    int rc;                     /* reduce_scatter_block, scan, exscan: the count */
    const int *rcs, *rds;
    MPI_Datatype rt;            /* the reductions' datatype */
    MPI_Op op;
    int root;
    MPI_Comm comm;
} xcall;
/* fill(ctx, salt), the call in `form`, verify(ctx, salt); persistent: init, then fill,
 * start, wait, verify for salts 0 and 1. */
void xrun(const xcall *x, enum form form, void (*fill)(void *ctx, int salt),
          void (*verify)(void *ctx, int salt), void *ctx);
extern const char *const form_names[4];
/* The data-moving calls (mpi_check_move.c) and the reductions (mpi_check_scan.c). */
void run_move_cases(void);
void run_scan_cases(void);

#endif
