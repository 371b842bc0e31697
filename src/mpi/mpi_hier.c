/*
 * mpi_hier.c — `hierarchical` collectives for communicators that span several nodes.
 *
 * Two collie teams per communicator: the node team (the ranks of one node, shm transport)
 * and the leader team (node rank 0 of every node, `mpi` transport: mpi_transport.c, or
 * with COLLIE_MPI_TRANSPORT=rma mpi_transport_rma.c).
 *   allreduce: reduce on the node team to the leader; allreduce among the leaders (the
 *              algorithm collie selects for the leader team: ring, rabenseifner, ...);
 *              broadcast on the node team.
 *   reduce:    reduce on the node team to the leader; reduce among the leaders to the
 *              leader of the root's node; that leader hands the result to the root.
 *   bcast:     the root hands its data to its node's leader; broadcast among the leaders;
 *              broadcast on the node team.
 *   barrier:   barrier on the node team, among the leaders, on the node team again.
 * The hand-over between a root and its leader is one PMPI_Send/PMPI_Recv on the node
 * communicator.  Cost: the node steps are shm copies; the leader step is the chosen
 * algorithm with P = number of nodes.  Non-commutative ops keep rank order only when the
 * ranks of each node are consecutive in the communicator (checked at creation; otherwise
 * such calls go to PMPI).  Only the blocking forms run here; the split-phase and
 * persistent forms on such communicators go to PMPI.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

enum { TAG_HANDOVER = 7 };

static int node_tables(cm_hier *h, MPI_Comm comm) {
    int size, leader_rank = -1;
    PMPI_Comm_size(comm, &size);
    if (h->leader_comm != MPI_COMM_NULL)
        PMPI_Comm_rank(h->leader_comm, &leader_rank);
    PMPI_Bcast(&leader_rank, 1, MPI_INT, 0, h->node_comm);
    int mine[2] = { leader_rank, h->node_rank };
    int *all = malloc(2 * (size_t)size * sizeof *all);
    h->node_of = malloc((size_t)size * sizeof *h->node_of);
    h->node_rank_of = malloc((size_t)size * sizeof *h->node_rank_of);
    if (!all || !h->node_of || !h->node_rank_of) {
        free(all);
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the node tables");
    }
    PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    h->blocked = true;
    for (int r = 0; r < size; r++) {
        h->node_of[r] = all[2 * r];
        h->node_rank_of[r] = all[2 * r + 1];
        if (r > 0 && h->node_of[r] < h->node_of[r - 1])
            h->blocked = false;
    }
    free(all);
    return COLLIE_OK;
}

static int leader_team(cm_hier *h, const char **why) {
    if (h->leader_comm == MPI_COMM_NULL)
        return COLLIE_OK;
    const char *kind = collie_env_str("COLLIE_MPI_TRANSPORT", "p2p");
    bool rma = strcmp(kind, "rma") == 0;
    if (!rma && strcmp(kind, "p2p") != 0) {
        *why = "COLLIE_MPI_TRANSPORT must be p2p or rma";
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_MPI_TRANSPORT=%s: use p2p or rma", kind);
    }
    collie_transport *tp = NULL;
    int st = rma ? cm_rma_transport_create(h->leader_comm, &tp)
                 : cm_mpi_transport_create(h->leader_comm, &tp);
    if (!st && (st = collie_team_create(tp, &h->leader_team)) != COLLIE_OK)
        tp->ops->destroy(tp);
    if (st && !*why)
        *why = rma ? "the rma transport failed (see COLLIE_LOG=error)"
                   : "the mpi transport failed (see COLLIE_LOG=error)";
    return st;
}

int cm_hier_create(MPI_Comm comm, MPI_Comm node, cm_hier **out, const char **why) {
    cm_hier *h = calloc(1, sizeof *h);
    int st = h ? COLLIE_OK : COLLIE_ERR_NOMEM, rank, all;
    PMPI_Comm_rank(comm, &rank);
    if (h) {
        h->node_comm = node;
        PMPI_Comm_rank(node, &h->node_rank);
    }
    /* Every rank takes part in every step (collective), then all agree on the outcome. */
    MPI_Comm leaders = MPI_COMM_NULL;
    PMPI_Comm_split(comm, h && h->node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    if (h) {
        h->leader_comm = leaders;
        st = node_tables(h, comm);
        int st2 = cm_shm_team(node, &h->node_team, why);
        int st3 = leader_team(h, why);
        st = st ? st : st2 ? st2 : st3;
    }
    all = st;
    PMPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all) {
        if (!*why)
            *why = "another rank could not set up the hierarchical teams";
        cm_hier_destroy(h);
        return all;
    }
    *out = h;
    return COLLIE_OK;
}

void cm_hier_destroy(cm_hier *h) {
    if (!h)
        return;
    collie_team_destroy(h->node_team);
    collie_team_destroy(h->leader_team);
    if (h->leader_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&h->leader_comm);
    if (h->node_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&h->node_comm);
    free(h->node_of);
    free(h->node_rank_of);
    free(h);
}

/* ---- the collectives ---------------------------------------------------------------------- */

static bool is_leader(const cm_hier *h) { return h->node_rank == 0; }

static int hier_allreduce(const cm_call *c, const cm_hier *h) {
    /* node step: the leader gets the node's result in recv */
    const void *send = c->csend == COLLIE_IN_PLACE && !is_leader(h) ? c->crecv : c->csend;
    int st = collie_reduce(h->node_team, send, c->crecv, c->ccount, c->cdtype, c->cop, 0);
    if (!st && is_leader(h))
        st = collie_allreduce(h->leader_team, COLLIE_IN_PLACE, c->crecv, c->ccount, c->cdtype, c->cop);
    return st ? st : collie_bcast(h->node_team, c->crecv, c->ccount, c->cdtype, 0);
}

static int hier_reduce(const cm_call *c, const cm_hier *h, int rank) {
    size_t bytes = c->ccount * collie_dtype_size(c->cdtype);
    int root_node = h->node_of[c->root], root_node_rank = h->node_rank_of[c->root];
    bool root = rank == c->root;
    void *acc = NULL;
    if (is_leader(h) || root)
        acc = root && root_node_rank == 0 ? c->crecv : malloc(bytes ? bytes : 1);
    if ((is_leader(h) || root) && !acc)
        return collie_fail(COLLIE_ERR_NOMEM, "hierarchical reduce: cannot allocate %zu bytes", bytes);
    const void *send = c->csend == COLLIE_IN_PLACE ? c->crecv : c->csend;
    if (c->csend == COLLIE_IN_PLACE && acc == c->crecv)
        send = COLLIE_IN_PLACE;
    int st = collie_reduce(h->node_team, send, acc, c->ccount, c->cdtype, c->cop, 0);
    if (!st && is_leader(h)) {
        bool at_root = h->node_of[rank] == root_node;
        st = collie_reduce(h->leader_team, at_root ? COLLIE_IN_PLACE : acc, at_root ? acc : NULL,
                           c->ccount, c->cdtype, c->cop, root_node);
    }
    if (!st && root_node_rank != 0 && h->node_of[rank] == root_node && bytes) {
        if (is_leader(h))
            PMPI_Send(acc, (int)bytes, MPI_BYTE, root_node_rank, TAG_HANDOVER, h->node_comm);
        else if (root)
            PMPI_Recv(c->crecv, (int)bytes, MPI_BYTE, 0, TAG_HANDOVER, h->node_comm, MPI_STATUS_IGNORE);
    }
    if (acc != c->crecv)
        free(acc);
    return st;
}

static int hier_bcast(const cm_call *c, const cm_hier *h, int rank) {
    size_t bytes = c->ccount * collie_dtype_size(c->cdtype);
    int root_node = h->node_of[c->root], root_node_rank = h->node_rank_of[c->root];
    if (root_node_rank != 0 && h->node_of[rank] == root_node && bytes) {
        if (rank == c->root)
            PMPI_Send(c->crecv, (int)bytes, MPI_BYTE, 0, TAG_HANDOVER, h->node_comm);
        else if (is_leader(h))
            PMPI_Recv(c->crecv, (int)bytes, MPI_BYTE, root_node_rank, TAG_HANDOVER, h->node_comm,
                      MPI_STATUS_IGNORE);
    }
    int st = COLLIE_OK;
    if (is_leader(h))
        st = collie_bcast(h->leader_team, c->crecv, c->ccount, c->cdtype, root_node);
    return st ? st : collie_bcast(h->node_team, c->crecv, c->ccount, c->cdtype, 0);
}

static int hier_barrier(const cm_hier *h) {
    int st = collie_barrier(h->node_team);
    if (!st && is_leader(h))
        st = collie_barrier(h->leader_team);
    return st ? st : collie_barrier(h->node_team);
}

int cm_hier_run(const cm_call *c, const cm_hier *h) {
    int rank;
    PMPI_Comm_rank(c->comm, &rank);
    if (c->coll == COLL_ALLREDUCE)
        return hier_allreduce(c, h);
    if (c->coll == COLL_REDUCE)
        return hier_reduce(c, h, rank);
    if (c->coll == COLL_BCAST)
        return hier_bcast(c, h, rank);
    return hier_barrier(h);
}
