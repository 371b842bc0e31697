/*
 * mpi_layer.h — internals of libcollie_mpi, the PMPI interposition layer (src/mpi/).
 *
 * mpi_team.c      a collie team per communicator (cached as an MPI attribute), logging
 * mpi_log.c       COLLIE_MPI_LOG: a line per call, or a summary table at MPI_Finalize
 * mpi_types.c     MPI datatypes and ops → collie datatypes and ops (or a reason not to)
 * mpi_coll.c      the intercepted collectives: blocking, MPI_I*, persistent
 * mpi_requests.c  the requests collie serves and the intercepted MPI_Wait/Test/Start/...
 * mpi_progress.c  progress shared with MPI: the wait loop, the blocking point-to-point calls
 * mpi_transport_mixed.c  the shm+mpi transport of communicators spanning several nodes
 * mpi_transport.c      its channels between nodes: non-blocking two-sided MPI (p2p)
 * mpi_transport_rma.c  or MPI-3 RMA (MPI_Put + notification; COLLIE_MPI_TRANSPORT=rma)
 *
 * Everything here calls MPI through PMPI_ only (never through the interposed names).
 */
#ifndef COLLIE_MPI_LAYER_H
#define COLLIE_MPI_LAYER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "collie.h"
#include "transport/transport.h"

/* One intercepted call, as the application made it, and what collie would run instead. */
typedef struct cm_call {
    const char *fn;            /* "MPI_Allreduce", ... */
    int coll;                  /* COLL_ALLREDUCE, ... */
    const void *sendbuf;
    void *recvbuf;             /* the buffer of MPI_Bcast */
    int count;
    MPI_Datatype dtype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    /* filled by cm_prepare */
    collie_team_t *team;       /* the communicator's team */
    collie_dtype_t cdtype;
    size_t ccount;
    collie_op_t cop;
    const void *csend;
    void *crecv;
} cm_call;

/* Teams (mpi_team.c). */
void cm_setup(void);                  /* once: collie's logging and selection from the env */
bool cm_logging(void);                /* COLLIE_MPI_LOG=1: a line per call */
/* The team of comm (shm on one node, shm+mpi across nodes), created collectively on first
 * use; NULL with *why when collie cannot serve the communicator. */
collie_team_t *cm_team(MPI_Comm comm, const char **why);
/* A shm transport over comm, whose ranks share a node (collective). */
int cm_shm_transport(MPI_Comm comm, collie_transport **tp, const char **why);
void cm_log(const cm_call *c, const char *where, const char *why);
/* COLLIE_MPI_LOG (mpi_log.c): off, a line per call, or a table at MPI_Finalize. */
enum { CM_LOG_OFF = 0, CM_LOG_CALLS = 1, CM_LOG_SUMMARY = 2 };
int cm_log_mode(void);
void cm_log_count(const char *fn, const char *route);   /* for the summary */
void cm_log_summary(void);            /* at MPI_Finalize, collective over MPI_COMM_WORLD */
void cm_free_all_teams(void);         /* at MPI_Finalize */

/* Types and ops (mpi_types.c): true when collie computes exactly what MPI would. */
bool cm_map_reduction(cm_call *c, const char **why);
bool cm_map_bcast(cm_call *c, const char **why);
void cm_free_user_ops(void);          /* at MPI_Finalize */

/* Decides and fills c for collie (true) or gives the reason for PMPI (false). */
bool cm_prepare(cm_call *c, const char **why);
/* Maps a collie status to an MPI error, reported through comm's error handler. */
int cm_error(const cm_call *c, int status);

/* shm for the peers in `node` (my node), MPI (p2p or rma) for the others (collective). */
int cm_mixed_transport_create(MPI_Comm comm, MPI_Comm node, collie_transport **out);

/* Requests (mpi_requests.c). */
int cm_request_add(collie_request_t *req, const cm_call *c, bool persistent, MPI_Request *handle);
int cm_start_request(collie_request_t *req, const cm_call *c);
int cm_requests_active(void);         /* collie requests started and not finished */
void cm_progress_all(void);           /* one step of every active collie request */

/* Shared progress (mpi_progress.c). */
void cm_poke_mpi(void);               /* runs MPI's progress engine once */
/* Runs cm_progress_all and done(arg) in turn until done is true (true) or no collie
 * request is active any more (false: the caller may block in PMPI). */
bool cm_wait_until(bool (*done)(void *), void *arg);
int cm_wait_mpi(MPI_Request *req, MPI_Status *status);             /* PMPI_Wait, shared */
int cm_waitall_mpi(int n, MPI_Request reqs[], MPI_Status statuses[]);
int cm_wait_collie(collie_request_t *req);  /* collie_wait that keeps MPI and the rest moving */
int cm_blocking_wait(collie_request_t *req);   /* the same while collie requests are active */
void cm_progress_finalize(void);      /* at MPI_Finalize */

#endif
