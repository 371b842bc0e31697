/*
 * mpi_transport_mixed.c — one transport for a team that spans several nodes: the channels
 * to and from peers on this node are those of the node's shm segment (shm.c), the others
 * are those of the p2p mpi transport (mpi_transport.c).  This is what collie_init() under
 * mpirun and collie_team_from_mpi() use for such a world; any algorithm then runs on it
 * (flat ones excepted: not every peer can read this rank's memory).
 *
 * Both kinds of channel share one slot geometry (the shm segment's nslots and slot size,
 * agreed by all ranks), since the executor computes slot addresses from the team's.
 * wake(peer) rings the shm doorbell or sends over MPI; waiting polls MPI and sleeps 20 µs
 * at a time (a futex cannot wake on an MPI message).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"
#include "mpi/mpi_transport.h"
#include "transport/channels.h"

typedef struct mixed_impl {
    union {                       /* first: the remote part's functions use it */
        mpi_impl p2p;
        rma_impl rma;
    } remote;
    bool rma;                     /* COLLIE_MPI_TRANSPORT=rma */
    collie_transport *shm;        /* the node's shm transport (node ranks) */
    int *local_of;                /* [size]: node rank of a peer on this node, else -1 */
    int *node_of;                 /* [size]: node of every rank (tp->node_of) */
} mixed_impl;

static mixed_impl *mixed_of(collie_transport *tp) { return tp->impl; }

static void mixed_wake(collie_transport *tp, int peer) {
    mixed_impl *im = mixed_of(tp);
    if (im->local_of[peer] >= 0)
        im->shm->ops->wake(im->shm, im->local_of[peer]);
    else if (im->rma)
        cm_rma_wake(tp, peer);
    else
        cm_mpi_wake(tp, peer);
}

static uint32_t mixed_sleep_prepare(collie_transport *tp) { return 0; }
static void mixed_sleep_done(collie_transport *tp) {}

static int mixed_check_peer(collie_transport *tp, int peer) {
    mixed_impl *im = mixed_of(tp);
    return im->local_of[peer] >= 0 ? im->shm->ops->check_peer(im->shm, im->local_of[peer]) : COLLIE_OK;
}

static void *mixed_mem_alloc(collie_transport *tp, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        collie_fail(COLLIE_ERR_NOMEM, "collie_alloc: cannot allocate %zu bytes", bytes);
    return p;
}

static void mixed_mem_free(collie_transport *tp, void *ptr) { free(ptr); }

static void mixed_destroy(collie_transport *tp) {
    mixed_impl *im = tp->impl;
    if (im && im->rma)
        cm_rma_release(tp);
    else if (im)
        cm_mpi_release(tp);
    if (im) {
        if (im->shm)
            im->shm->ops->destroy(im->shm);
        free(im->local_of);
        free(im->node_of);
    }
    free(im);
    collie_channels_free(tp);
    free(tp);
}

static const collie_transport_ops mixed_ops = {
    "shm+mpi", mixed_wake, mixed_sleep_prepare, cm_mpi_sleep, mixed_sleep_done, mixed_check_peer,
    mixed_mem_alloc, mixed_mem_free, mixed_destroy, cm_mpi_progress, NULL, NULL, NULL,
};
static const collie_transport_ops mixed_rma_ops = {
    "shm+mpi-rma", mixed_wake, mixed_sleep_prepare, cm_rma_sleep, mixed_sleep_done, mixed_check_peer,
    mixed_mem_alloc, mixed_mem_free, mixed_destroy, cm_rma_progress, NULL, NULL, NULL,
};

/* local_of[r] for every rank r of comm: its rank in `node`, or -1. */
static int map_local(MPI_Comm comm, MPI_Comm node, int size, int *local_of) {
    MPI_Group g_comm, g_node;
    int nsize;
    PMPI_Comm_group(comm, &g_comm);
    PMPI_Comm_group(node, &g_node);
    PMPI_Comm_size(node, &nsize);
    int *in_node = malloc((size_t)nsize * sizeof *in_node), *in_comm = malloc((size_t)nsize * sizeof *in_comm);
    if (!in_node || !in_comm) {
        free(in_node);
        free(in_comm);
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the node map");
    }
    for (int i = 0; i < nsize; i++)
        in_node[i] = i;
    PMPI_Group_translate_ranks(g_node, nsize, in_node, g_comm, in_comm);
    for (int r = 0; r < size; r++)
        local_of[r] = -1;
    for (int i = 0; i < nsize; i++)
        local_of[in_comm[i]] = i;
    free(in_node);
    free(in_comm);
    PMPI_Group_free(&g_comm);
    PMPI_Group_free(&g_node);
    return COLLIE_OK;
}

/* Channels of peers on this node: the shm transport's. */
static void wire_local(collie_transport *tp) {
    mixed_impl *im = mixed_of(tp);
    for (int p = 0; p < tp->size; p++) {
        int l = im->local_of[p];
        if (l < 0 || p == tp->rank)
            continue;
        tp->to[p] = im->shm->to[l];
        tp->from[p] = im->shm->from[l];
    }
}

/* Every rank must use the same slot geometry: that of the shm segments (a rank alone on
 * its node has none of its own and takes the others'; the default if all are alone). */
static int same_geometry(MPI_Comm comm, collie_transport *tp, bool alone) {
    int lo[2], hi[2];
    int mine_lo[2] = { alone ? INT_MAX : (int)tp->nslots, alone ? INT_MAX : (int)tp->slot_bytes };
    int mine_hi[2] = { alone ? 0 : (int)tp->nslots, alone ? 0 : (int)tp->slot_bytes };
    PMPI_Allreduce(mine_lo, lo, 2, MPI_INT, MPI_MIN, comm);
    PMPI_Allreduce(mine_hi, hi, 2, MPI_INT, MPI_MAX, comm);
    if (hi[0] == 0) {   /* every rank alone on its node */
        lo[0] = hi[0] = (int)collie_env_int("COLLIE_SHM_SLOTS", 8);
        lo[1] = hi[1] = (int)collie_env_int("COLLIE_SHM_SLOT_BYTES", 16384);
    }
    tp->nslots = (uint32_t)lo[0];
    tp->slot_bytes = (uint32_t)lo[1];
    if (lo[0] != hi[0] || lo[1] != hi[1])
        return collie_fail(COLLIE_ERR_ARG, "nodes use different slot sizes (%d..%d slots of %d..%d "
                           "bytes): set COLLIE_SHM_SLOTS / COLLIE_SHM_SLOT_BYTES alike everywhere",
                           lo[0], hi[0], lo[1], hi[1]);
    return COLLIE_OK;
}

/* node_of[r] for every rank: nodes numbered in the order of their first ranks. */
static int number_nodes(collie_transport *tp, MPI_Comm comm) {
    mixed_impl *im = mixed_of(tp);
    int first = tp->rank, *firsts = malloc((size_t)tp->size * sizeof *firsts);
    im->node_of = malloc((size_t)tp->size * sizeof *im->node_of);
    int ok = firsts && im->node_of, all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);   /* no rank skips the Allgather alone */
    if (!all) {
        free(firsts);
        return ok ? collie_fail(COLLIE_ERR_NOMEM, "another rank could not allocate its node table")
                  : collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the node table");
    }
    for (int r = 0; r < tp->size; r++)
        if (im->local_of[r] == 0)
            first = r;
    PMPI_Allgather(&first, 1, MPI_INT, firsts, 1, MPI_INT, comm);
    int nnodes = 0;
    for (int r = 0; r < tp->size; r++) {
        if (firsts[r] == r)      /* r starts a node: number it */
            im->node_of[r] = nnodes++;
        else
            im->node_of[r] = im->node_of[firsts[r]];
    }
    free(firsts);
    tp->node_of = im->node_of;
    tp->nnodes = nnodes;
    return COLLIE_OK;
}

static int build(collie_transport *tp, MPI_Comm comm, MPI_Comm node) {
    mixed_impl *im = mixed_of(tp);
    const char *why = NULL;
    int st = map_local(comm, node, tp->size, im->local_of);
    int st2 = cm_shm_transport(node, true, &im->shm, &why);   /* collective over the node */
    st = st ? st : st2;
    int all = st;
    PMPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all)
        return st ? st : collie_fail(all, "another rank could not set up its node's shared memory");
    int node_size = 0;
    PMPI_Comm_size(node, &node_size);
    tp->nslots = im->shm->nslots;
    tp->slot_bytes = im->shm->slot_bytes;
    if ((st = same_geometry(comm, tp, node_size == 1)) != COLLIE_OK)
        return st;
    if (tp->nslots < 2 || tp->slot_bytes < 64 || tp->slot_bytes % 64)
        return collie_fail(COLLIE_ERR_ARG, "bad slot geometry: %u slots of %u bytes", tp->nslots,
                           tp->slot_bytes);
    if (im->rma) {
        im->remote.rma.local_of = im->local_of;
        PMPI_Comm_dup(comm, &im->remote.rma.comm);
        st = cm_rma_wire(tp);
    } else {
        im->remote.p2p.local_of = im->local_of;
        PMPI_Comm_dup(comm, &im->remote.p2p.comm);
        st = cm_mpi_wire(tp);
    }
    if (!st)
        wire_local(tp);
    int st3 = number_nodes(tp, comm);   /* collective: also after a failure */
    return st ? st : st3;
}

int cm_mixed_transport_create(MPI_Comm comm, MPI_Comm node, collie_transport **out) {
    collie_transport *tp = calloc(1, sizeof *tp);
    mixed_impl *im = calloc(1, sizeof *im);
    int size = 0;
    PMPI_Comm_size(comm, &size);
    int *local_of = malloc((size_t)size * sizeof *local_of);
    int ok = tp && im && local_of, all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);   /* the set-up is collective */
    if (!all_ok) {
        free(tp);
        free(im);
        free(local_of);
        return ok ? collie_fail(COLLIE_ERR_NOMEM, "another rank could not allocate its mixed transport")
                  : collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the mixed transport");
    }
    const char *kind = collie_env_str("COLLIE_MPI_TRANSPORT", "p2p");
    im->rma = strcmp(kind, "rma") == 0;
    if (!im->rma && strcmp(kind, "p2p") != 0) {
        free(tp);
        free(im);
        free(local_of);
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_MPI_TRANSPORT=%s: use p2p or rma", kind);
    }
    if (im->rma) {
        im->remote.rma.comm = MPI_COMM_NULL;
    } else {
        im->remote.p2p.comm = MPI_COMM_NULL;
    }
    im->local_of = local_of;
    tp->ops = im->rma ? &mixed_rma_ops : &mixed_ops;
    tp->impl = im;
    tp->size = size;
    PMPI_Comm_rank(comm, &tp->rank);
    tp->oversubscribed = 1;   /* poll MPI, never spin long */
    tp->stream_out_min = UINT64_MAX;   /* no copy cells here */
    tp->stream_own_min = UINT64_MAX;
    tp->stream_team_min = UINT64_MAX;
    tp->wake_at_once = true;  /* wake() sends the new slots over MPI */
    int st = build(tp, comm, node);
    int all = st;
    PMPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all) {
        if (!st)
            st = collie_fail(all, "another rank failed to set up the shm+mpi transport");
        if (!im->rma)
            im->remote.p2p.failed = true;   /* every rank's release: no count exchange */
        mixed_destroy(tp);
        return st;
    }
    *out = tp;
    return COLLIE_OK;
}
