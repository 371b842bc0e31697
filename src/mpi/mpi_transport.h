/*
 * mpi_transport.h — the channels to peers on other nodes (p2p: mpi_transport.c, RMA:
 * mpi_transport_rma.c), as parts of the shm+mpi transport (mpi_transport_mixed.c).
 */
#ifndef COLLIE_MPI_TRANSPORT_H
#define COLLIE_MPI_TRANSPORT_H

#include <mpi.h>
#include <stdbool.h>
#include "transport/transport.h"

typedef struct mpi_peer {
    char *outbox;                 /* consumed counter, then nslots slots (channel me -> q) */
    uint64_t flushed;             /* chunks handed to MPI_Isend */
    MPI_Request *send;            /* [nslots]: the send of each outbox slot */
    char *stage;                  /* nslots staging buffers for receives from this peer */
    MPI_Request *recv;            /* [nslots] */
    uint32_t recv_next;           /* the oldest posted receive */
    uint64_t credit_in;           /* receive buffer of the credit message */
    MPI_Request credit_recv;
    uint64_t credit_out;          /* send buffer of the credit message */
    MPI_Request credit_send;
    uint64_t credits_sent;        /* credit messages sent to this peer */
    uint64_t credits_received;    /* credit messages received from it */
} mpi_peer;

struct cm_retiring;

/* The transport's state; the mixed transport embeds it as its first member. */
typedef struct mpi_impl {
    MPI_Comm comm;                /* private duplicate */
    char *inbox;
    mpi_peer *peers;
    const int *local_of;          /* mixed: >= 0 for peers reached over shm; NULL: none */
    struct cm_retiring *retire;   /* its release, made with the channels (cannot fail) */
    bool failed;                  /* the set-up failed (at every rank: agreed): nothing was
                                     sent, so the release needs no count exchange */
} mpi_impl;


/* The RMA variant's state (mpi_transport_rma.c). */
typedef struct rma_impl {
    MPI_Comm comm;                /* private duplicate */
    const int *local_of;          /* as in mpi_impl */
    MPI_Win win;                  /* the window the memory is in (mpi_rma_window.c) */
    char *base;                   /* my memory: credits[size], then the inbox */
    MPI_Aint *disp;               /* [size]: each peer's memory in win */
    int *world_of;                /* [size]: each peer's rank in win's group */
    char **outbox;                /* [size]: shadow of channel me -> q */
    uint64_t *flushed;            /* [size]: chunks written to q */
    uint64_t *credit_out;         /* [size]: consumed count last written to p */
    size_t credits_bytes;
    struct cm_rma_retiring *retire;   /* its release, made with the channels (cannot fail) */
    bool failed;                  /* the set-up failed (agreed): nobody wrote to the memory */
} rma_impl;

static inline bool cm_mpi_remote(const mpi_impl *im, int peer) {
    return !im->local_of || im->local_of[peer] < 0;
}

/* For the mixed transport (tp->impl starts with an mpi_impl, comm and local_of set):
 * channels of remote peers, their wake/progress, and the release of the MPI parts. */
int cm_mpi_wire(collie_transport *tp);
void cm_mpi_wake(collie_transport *tp, int peer);
void cm_mpi_progress(collie_transport *tp);
void cm_mpi_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns);
/* Starts the release of the MPI channels (collective, but blocks nowhere); the layer's
 * progress passes finish it (cm_mpi_retire_poll, mpi_layer.h), MPI_Finalize at the latest
 * (cm_mpi_retire_all). */
void cm_mpi_release(collie_transport *tp);
/* The same for the RMA variant (tp->impl starts with an rma_impl). */
int cm_rma_wire(collie_transport *tp);
void cm_rma_wake(collie_transport *tp, int peer);
void cm_rma_progress(collie_transport *tp);
void cm_rma_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns);
void cm_rma_release(collie_transport *tp);
/* collie_outside_progress (core/internal.h): MPI's progress while this process has a
 * window (peers' flushes to it need it under MPICH) or data sends of the p2p channels in
 * flight (their transfer needs the sender under MPICH); false when it has neither. */
bool cm_rma_outside_progress(void);

/* The RMA variant's memory (mpi_rma_window.c).  get: im->win, base (zeroed), world_of;
 * share: the peers' disp (collective over im->comm, after every rank's get succeeded);
 * put: the release, blocking nowhere; retire_poll: a step of the releases still waiting
 * for their peers (true while some are); live: memory peers may write to exists. */
int cm_rma_window_get(rma_impl *im, int size, size_t bytes);
int cm_rma_window_share(rma_impl *im);
void cm_rma_window_put(rma_impl *im);
bool cm_rma_retire_poll(void);
bool cm_rma_windows_live(void);
bool cm_outside_progress(void);

#endif
