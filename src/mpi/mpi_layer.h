/*
 * mpi_layer.h — internals of libcollie_mpi, the PMPI interposition layer (src/mpi/).
 *
 * mpi_team.c      a collie team per communicator (cached as an MPI attribute), logging
 * mpi_types.c     MPI datatypes and ops → collie datatypes and ops (or a reason not to)
 * mpi_coll.c      the intercepted collectives: blocking, MPI_I*, persistent
 * mpi_requests.c  the requests collie serves and the intercepted MPI_Wait/Test/Start/...
 * mpi_transport.c the `mpi` transport (non-blocking two-sided MPI between nodes)
 * mpi_transport_rma.c  its RMA variant (MPI_Put + notification; COLLIE_MPI_TRANSPORT=rma)
 * mpi_hier.c      hierarchical collectives for communicators spanning several nodes
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

/* The teams of a communicator that spans several nodes (mpi_hier.c). */
typedef struct cm_hier {
    MPI_Comm node_comm;           /* the ranks of my node, in communicator order */
    MPI_Comm leader_comm;         /* node rank 0 of every node; MPI_COMM_NULL elsewhere */
    collie_team_t *node_team;     /* shm */
    collie_team_t *leader_team;   /* mpi transport; NULL on non-leaders */
    int node_rank;
    int *node_of;                 /* [comm size]: node (= leader rank) of every rank */
    int *node_rank_of;            /* [comm size]: its rank within the node */
    bool blocked;                 /* every node's ranks are consecutive (rank order kept) */
} cm_hier;

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
    bool split_phase;          /* an MPI_I* or persistent call */
    /* filled by cm_prepare */
    collie_team_t *team;       /* the communicator's team (one node) ... */
    cm_hier *hier;             /* ... or its hierarchical teams (several nodes) */
    collie_dtype_t cdtype;
    size_t ccount;
    collie_op_t cop;
    const void *csend;
    void *crecv;
} cm_call;

/* Teams (mpi_team.c). */
void cm_setup(void);                  /* once: collie's logging and selection from the env */
bool cm_logging(void);                /* COLLIE_MPI_LOG=1 */
/* The team of comm (one node) or its hierarchical teams (several nodes), created
 * collectively on first use; false with *why when collie cannot serve the communicator. */
bool cm_teams(MPI_Comm comm, collie_team_t **team, cm_hier **hier, const char **why);
/* A shm transport / team over comm, whose ranks share a node (collective). */
int cm_shm_transport(MPI_Comm comm, collie_transport **tp, const char **why);
int cm_shm_team(MPI_Comm comm, collie_team_t **team, const char **why);
void cm_log(const cm_call *c, const char *where, const char *why);
void cm_free_all_teams(void);         /* at MPI_Finalize */

/* Types and ops (mpi_types.c): true when collie computes exactly what MPI would. */
bool cm_map_reduction(cm_call *c, const char **why);
bool cm_map_bcast(cm_call *c, const char **why);
void cm_free_user_ops(void);          /* at MPI_Finalize */

/* Decides and fills c for collie (true) or gives the reason for PMPI (false). */
bool cm_prepare(cm_call *c, const char **why);
/* Maps a collie status to an MPI error, reported through comm's error handler. */
int cm_error(const cm_call *c, int status);

/* Transports and hierarchy (mpi_transport.c, mpi_hier.c); all collective over comm. */
int cm_mpi_transport_create(MPI_Comm comm, collie_transport **out);   /* p2p */
int cm_rma_transport_create(MPI_Comm comm, collie_transport **out);   /* MPI-3 RMA */
/* shm for the peers in `node` (my node), p2p MPI for the others. */
int cm_mixed_transport_create(MPI_Comm comm, MPI_Comm node, collie_transport **out);
int cm_hier_create(MPI_Comm comm, MPI_Comm node, cm_hier **out, const char **why);
void cm_hier_destroy(cm_hier *h);
int cm_hier_run(const cm_call *c, const cm_hier *h);   /* blocking calls only */

/* Requests (mpi_requests.c). */
int cm_request_add(collie_request_t *req, const cm_call *c, bool persistent, MPI_Request *handle);
int cm_start_request(collie_request_t *req, const cm_call *c);

#endif
