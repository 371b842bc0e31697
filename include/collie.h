/*
 * collie.h — public API of collie, a library of collective communication routines
 * (allreduce, reduce, broadcast, barrier) on a one-sided notified-write model.
 *
 * Every call returns a status: COLLIE_OK (0), COLLIE_TIMEOUT (> 0, "still in progress",
 * only from collie_test), or a negative error.  collie_last_error() gives a detailed
 * message (naming the rank, the peer and the argument at fault) for this thread's last
 * error.
 */
#ifndef COLLIE_H
#define COLLIE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version (the build reads it from here; collie_version() gives the version
 * of the library actually linked, which may differ from the header a program was built
 * against). */
#define COLLIE_VERSION_MAJOR 0
#define COLLIE_VERSION_MINOR 1
#define COLLIE_VERSION_PATCH 0
#define COLLIE_VERSION_STRING "0.1.0"

/* ---- status codes ---------------------------------------------------------------- */
enum {
    COLLIE_OK = 0,
    COLLIE_TIMEOUT = 1,              /* not an error: the operation is still in progress */
    COLLIE_ERR_ARG = -1,             /* a bad argument (null buffer, bad root, ...) */
    COLLIE_ERR_NOMEM = -2,           /* out of memory */
    COLLIE_ERR_PEER = -3,            /* a peer died or stayed silent past the timeout */
    COLLIE_ERR_MISMATCH = -4,        /* ranks called different collectives / counts / types */
    COLLIE_ERR_UNSUPPORTED = -5,     /* valid but not supported (e.g. op not defined for type) */
    COLLIE_ERR_TRANSPORT = -6,       /* the transport failed (shm, system call) */
    COLLIE_ERR_INTERNAL = -7         /* a bug in collie */
};

const char *collie_strerror(int status);
const char *collie_last_error(void);
/* The linked library's version, "MAJOR.MINOR.PATCH" (COLLIE_VERSION_STRING of its build). */
const char *collie_version(void);

/* ---- teams ------------------------------------------------------------------------- */
typedef struct collie_team collie_team_t;
typedef struct collie_request collie_request_t;
typedef struct collie_op_s *collie_op_t;

int collie_init(void);
int collie_finalize(void);

/* Thread support, MPI's four levels.  collie_init() is collie_init_thread(SERIALIZED).
 * Every level: collie_init/collie_finalize from one thread; calls on different teams may
 * run from different threads at once (MULTIPLE); calls on one team must not overlap — a
 * call (collective, collie_start, collie_test/wait, collie_request_free) entered while
 * another thread is inside a call on the same team returns COLLIE_ERR_ARG naming the
 * collision, at every level, and leaves the team usable.  *provided is the level granted:
 * the required one, but over MPI (libcollie_mpi under mpirun) at most MPI's — collie_init
 * then initialises MPI with MPI_Init_thread at the required level, or, if the program did,
 * provides no more than MPI_Query_thread says.  Check it as MPI programs do. */
enum {
    COLLIE_THREAD_SINGLE = 0,        /* one thread in the process */
    COLLIE_THREAD_FUNNELED = 1,      /* only the thread that called collie_init_thread */
    COLLIE_THREAD_SERIALIZED = 2,    /* any thread, one at a time */
    COLLIE_THREAD_MULTIPLE = 3       /* any threads at once, on different teams */
};
int collie_init_thread(int required, int *provided);
int collie_query_thread(int *provided);
collie_team_t *collie_world(void);
int collie_rank(const collie_team_t *team);
int collie_size(const collie_team_t *team);

/* Sub-teams, collective over the parent team (every rank of `team` calls the same one, in
 * the same order as its other collectives on `team`), with MPI_Comm_split's rules:
 *  - collie_team_split: the ranks that give the same color form one new team, ordered by
 *    key, then by their rank in `team`; a negative color (COLLIE_UNDEFINED) joins no team
 *    and gets *newteam = NULL.
 *  - collie_team_dup: a new team of the same ranks in the same order (its collectives
 *    never match those of `team`).
 *  - collie_team_free: frees a team made by split or dup and sets *team = NULL; collective
 *    over that team.  COLLIE_ERR_ARG for the world, for a team of an MPI communicator
 *    (MPI_Comm_free frees it), for a freed or unknown handle, and while requests made on
 *    the team are not freed yet (collie_request_free them first).
 * A sub-team has its own transport (collie-run: a shared-memory segment of its own; under
 * libcollie_mpi: the communicator of PMPI_Comm_split/dup) and runs every call a world
 * does, collie_alloc included.  Sub-teams still live at collie_finalize are freed by it. */
#define COLLIE_UNDEFINED (-1)
int collie_team_split(collie_team_t *team, int color, int key, collie_team_t **newteam);
int collie_team_dup(collie_team_t *team, collie_team_t **newteam);
int collie_team_free(collie_team_t **team);

/* ---- datatypes ----------------------------------------------------------------------
 * A datatype is an integer handle.  Built-in types are the constants below; an opaque
 * element of n bytes (for user-defined operations only) is collie_dtype_bytes(n). */
typedef uint64_t collie_dtype_t;
enum {
    COLLIE_DTYPE_INVALID = 0,
    COLLIE_INT8, COLLIE_INT16, COLLIE_INT32, COLLIE_INT64,
    COLLIE_UINT8, COLLIE_UINT16, COLLIE_UINT32, COLLIE_UINT64,
    COLLIE_FLOAT16, COLLIE_BFLOAT16, COLLIE_FLOAT32, COLLIE_FLOAT64,
    COLLIE_FLOAT32_INT32,            /* struct { float v; int32_t i; } for MAXLOC/MINLOC */
    COLLIE_FLOAT64_INT32,            /* struct { double v; int32_t i; } (16 bytes, padded) */
    COLLIE_INT32_INT32,              /* struct { int32_t v; int32_t i; } */
    COLLIE_DTYPE_BUILTIN_COUNT
};
collie_dtype_t collie_dtype_bytes(size_t element_size);
size_t collie_dtype_size(collie_dtype_t dtype);  /* 0 for an invalid type */
const char *collie_dtype_name(collie_dtype_t dtype);

/* ---- reduction operations ------------------------------------------------------------ */
struct collie_op_s;
enum {
    COLLIE_OPID_SUM = 0, COLLIE_OPID_PROD, COLLIE_OPID_MIN, COLLIE_OPID_MAX,
    COLLIE_OPID_LAND, COLLIE_OPID_LOR, COLLIE_OPID_LXOR,
    COLLIE_OPID_BAND, COLLIE_OPID_BOR, COLLIE_OPID_BXOR,
    COLLIE_OPID_MAXLOC, COLLIE_OPID_MINLOC,
    COLLIE_OPID_BUILTIN_COUNT
};
/* The built-in operations are objects of the library; the handles are their addresses. */
extern struct collie_op_s collie_op_sum_, collie_op_prod_, collie_op_min_, collie_op_max_,
    collie_op_land_, collie_op_lor_, collie_op_lxor_, collie_op_band_, collie_op_bor_,
    collie_op_bxor_, collie_op_maxloc_, collie_op_minloc_;
#define COLLIE_SUM    (&collie_op_sum_)
#define COLLIE_PROD   (&collie_op_prod_)
#define COLLIE_MIN    (&collie_op_min_)
#define COLLIE_MAX    (&collie_op_max_)
#define COLLIE_LAND   (&collie_op_land_)
#define COLLIE_LOR    (&collie_op_lor_)
#define COLLIE_LXOR   (&collie_op_lxor_)
#define COLLIE_BAND   (&collie_op_band_)
#define COLLIE_BOR    (&collie_op_bor_)
#define COLLIE_BXOR   (&collie_op_bxor_)
#define COLLIE_MAXLOC (&collie_op_maxloc_)
#define COLLIE_MINLOC (&collie_op_minloc_)

/* User-defined operation: fn computes inout[i] = in[i] ∘ inout[i], where `in` holds the
 * contributions of lower ranks (MPI's convention).  For a non-commutative operation the
 * result is x0 ∘ x1 ∘ … ∘ x(P-1). */
typedef void (*collie_user_fn)(const void *in, void *inout, size_t count,
                               collie_dtype_t dtype, void *ctx);
enum { COLLIE_OP_COMMUTATIVE = 1, COLLIE_OP_IDEMPOTENT = 2 };
int collie_op_create(collie_user_fn fn, void *ctx, unsigned flags, collie_op_t *op);
void collie_op_free(collie_op_t op);
const char *collie_op_name(collie_op_t op);

#define COLLIE_IN_PLACE ((void *)1)
#define COLLIE_BLOCK (-1)

/* ---- blocking collectives -------------------------------------------------------------- */
int collie_allreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_op_t op);
int collie_reduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, collie_op_t op, int root);
int collie_bcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root);
int collie_barrier(collie_team_t *team);

/* ---- split-phase: start, then test until COLLIE_OK (timeout_ms 0 = one bounded step,
 * COLLIE_BLOCK = until done or a peer fails; below -1: COLLIE_ERR_ARG) ------------------ */
int collie_iallreduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                      collie_dtype_t dtype, collie_op_t op, collie_request_t **req);
int collie_ireduce(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req);
int collie_ibcast(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype, int root,
                  collie_request_t **req);
int collie_ibarrier(collie_team_t *team, collie_request_t **req);
int collie_test(collie_request_t *req, int timeout_ms);
int collie_wait(collie_request_t *req);
void collie_request_free(collie_request_t *req);

/* ---- persistent: plan once, start many times ------------------------------------------- */
int collie_allreduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                          collie_dtype_t dtype, collie_op_t op, collie_request_t **req);
int collie_reduce_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                       collie_dtype_t dtype, collie_op_t op, int root, collie_request_t **req);
int collie_bcast_init(collie_team_t *team, void *buf, size_t count, collie_dtype_t dtype,
                      int root, collie_request_t **req);
int collie_barrier_init(collie_team_t *team, collie_request_t **req);
int collie_start(collie_request_t *req);

/* ---- allgather, reduce_scatter, alltoall, gather, scatter, scan, exscan ------------------
 * As MPI's calls of the same names, with counts in elements (size_t) and one datatype.
 * The v forms' arrays (counts and displacements in elements, one entry per rank) stay the
 * caller's: for collie_i… and …_init they must stay valid (and unchanged) until the request
 * is freed.  COLLIE_IN_PLACE: sendbuf for allgather(v) (the rank's block is already in
 * its place in recvbuf), reduce_scatter(_block) (the input is recvbuf), alltoall(v) (the
 * data is recvbuf, laid out by the recv arrays), scan, exscan, and at the root of
 * gather(v); recvbuf at the root of scatter(v) (the root keeps its block in sendbuf).
 * gatherv: recvcounts and displs are read at the root only; scatterv: sendcounts and
 * displs at the root only; exscan leaves rank 0's recvbuf untouched (it may be NULL).
 * Counts that differ between ranks give COLLIE_ERR_MISMATCH. */
int collie_allgather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype);
int collie_allgatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                      void *recvbuf, const size_t *recvcounts, const size_t *displs,
                      collie_dtype_t dtype);
int collie_reduce_scatter_block(collie_team_t *team, const void *sendbuf, void *recvbuf,
                                size_t recvcount, collie_dtype_t dtype, collie_op_t op);
int collie_reduce_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf,
                          const size_t *recvcounts, collie_dtype_t dtype, collie_op_t op);
int collie_alltoall(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                    collie_dtype_t dtype);
int collie_alltoallv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                     const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                     const size_t *rdispls, collie_dtype_t dtype);
int collie_gather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, int root);
int collie_gatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                   void *recvbuf, const size_t *recvcounts, const size_t *displs,
                   collie_dtype_t dtype, int root);
int collie_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, int root);
int collie_scatterv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                    const size_t *displs, void *recvbuf, size_t recvcount,
                    collie_dtype_t dtype, int root);
int collie_scan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                collie_dtype_t dtype, collie_op_t op);
int collie_exscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, collie_op_t op);

/* split-phase forms */
int collie_iallgather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                      collie_dtype_t dtype, collie_request_t **req);
int collie_iallgatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                       void *recvbuf, const size_t *recvcounts, const size_t *displs,
                       collie_dtype_t dtype, collie_request_t **req);
int collie_ireduce_scatter_block(collie_team_t *team, const void *sendbuf, void *recvbuf,
                                 size_t recvcount, collie_dtype_t dtype, collie_op_t op,
                                 collie_request_t **req);
int collie_ireduce_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf,
                           const size_t *recvcounts, collie_dtype_t dtype, collie_op_t op,
                           collie_request_t **req);
int collie_ialltoall(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_request_t **req);
int collie_ialltoallv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                      const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                      const size_t *rdispls, collie_dtype_t dtype, collie_request_t **req);
int collie_igather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, int root, collie_request_t **req);
int collie_igatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                    void *recvbuf, const size_t *recvcounts, const size_t *displs,
                    collie_dtype_t dtype, int root, collie_request_t **req);
int collie_iscatter(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                    collie_dtype_t dtype, int root, collie_request_t **req);
int collie_iscatterv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                     const size_t *displs, void *recvbuf, size_t recvcount,
                     collie_dtype_t dtype, int root, collie_request_t **req);
int collie_iscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                 collie_dtype_t dtype, collie_op_t op, collie_request_t **req);
int collie_iexscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, collie_op_t op, collie_request_t **req);

/* persistent forms (started with collie_start) */
int collie_allgather_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                          size_t count, collie_dtype_t dtype, collie_request_t **req);
int collie_allgatherv_init(collie_team_t *team, const void *sendbuf, size_t sendcount,
                           void *recvbuf, const size_t *recvcounts, const size_t *displs,
                           collie_dtype_t dtype, collie_request_t **req);
int collie_reduce_scatter_block_init(collie_team_t *team, const void *sendbuf,
                                     void *recvbuf, size_t recvcount, collie_dtype_t dtype,
                                     collie_op_t op, collie_request_t **req);
int collie_reduce_scatter_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                               const size_t *recvcounts, collie_dtype_t dtype,
                               collie_op_t op, collie_request_t **req);
int collie_alltoall_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                         size_t count, collie_dtype_t dtype, collie_request_t **req);
int collie_alltoallv_init(collie_team_t *team, const void *sendbuf,
                          const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                          const size_t *recvcounts, const size_t *rdispls,
                          collie_dtype_t dtype, collie_request_t **req);
int collie_gather_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                       size_t count, collie_dtype_t dtype, int root, collie_request_t **req);
int collie_gatherv_init(collie_team_t *team, const void *sendbuf, size_t sendcount,
                        void *recvbuf, const size_t *recvcounts, const size_t *displs,
                        collie_dtype_t dtype, int root, collie_request_t **req);
int collie_scatter_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                        size_t count, collie_dtype_t dtype, int root,
                        collie_request_t **req);
int collie_scatterv_init(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                         const size_t *displs, void *recvbuf, size_t recvcount,
                         collie_dtype_t dtype, int root, collie_request_t **req);
int collie_scan_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_op_t op, collie_request_t **req);
int collie_exscan_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                       size_t count, collie_dtype_t dtype, collie_op_t op,
                       collie_request_t **req);

/* Name of the algorithm the request runs (after init/start), e.g. "ring". */
const char *collie_request_algorithm(const collie_request_t *req);

/* ---- memory in the team's registered segment ------------------------------------------- */
void *collie_alloc(collie_team_t *team, size_t bytes);
void collie_free(collie_team_t *team, void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* COLLIE_H */
