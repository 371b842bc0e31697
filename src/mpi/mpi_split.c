/*
 * mpi_split.c — sub-teams of teams that stand for an MPI communicator (the world of
 * collie_init under mpirun, the team of collie_team_from_mpi or of an intercepted
 * collective's communicator).
 *
 * collie_team_split/dup (src/core/team_split.c) first checks over the parent team that
 * every rank made the same call, then asks the parent's maker, here: PMPI_Comm_split (a
 * negative color as MPI_UNDEFINED) or PMPI_Comm_dup of the parent's communicator, and the
 * new communicator's transport exactly as for any communicator (cm_transport_of: shm when
 * its ranks share a node, else shm+mpi).  The new team owns its communicator: its maker
 * context frees it when the team is freed (collie_team_free, collie_finalize, or the
 * intercepted MPI_Finalize).  The program never sees these communicators.
 */
#include <stdlib.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

static int new_comm(MPI_Comm parent, int color, int key, bool dup, MPI_Comm *comm) {
    int rc = dup ? PMPI_Comm_dup(parent, comm)
                 : PMPI_Comm_split(parent, color < 0 ? MPI_UNDEFINED : color, key, comm);
    if (rc == MPI_SUCCESS)
        return COLLIE_OK;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    PMPI_Error_string(rc, msg, &len);
    *comm = MPI_COMM_NULL;
    return collie_fail(COLLIE_ERR_TRANSPORT, "%s failed: %s", dup ? "MPI_Comm_dup" : "MPI_Comm_split",
                       msg);
}

static int mpi_split(void *ctx, int color, int key, bool dup, collie_transport **tp,
                     void **newctx) {
    const cm_split_ctx *parent = ctx;
    MPI_Comm comm = MPI_COMM_NULL;
    *tp = NULL;
    *newctx = NULL;
    int st = new_comm(parent->comm, color, key, dup, &comm);
    if (st || comm == MPI_COMM_NULL)
        return st;
    const char *why = NULL;
    st = cm_transport_of(comm, tp, &why);   /* collective over comm: agreed on its ranks */
    cm_split_ctx *c = st ? NULL : malloc(sizeof *c);
    if (!st && !c) {
        (*tp)->ops->destroy(*tp);
        *tp = NULL;
        st = collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the new team's context");
    } else if (st) {
        st = collie_fail(st, "the new team's transport: %s", why ? why : "failed");
    }
    if (st) {
        PMPI_Comm_free(&comm);
        return st;
    }
    c->comm = comm;
    c->owned = true;
    *newctx = c;
    collie_log(COLLIE_LOG_DEBUG, "a sub-team through %s: %d ranks over %s",
               dup ? "MPI_Comm_dup" : "MPI_Comm_split", (*tp)->size, (*tp)->ops->name);
    return COLLIE_OK;
}

static void mpi_free_ctx(void *ctx) {
    cm_split_ctx *c = ctx;
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (c->owned && !finalized)
        PMPI_Comm_free(&c->comm);
    if (c->owned)
        free(c);
}

const collie_team_maker cm_team_maker = { mpi_split, mpi_free_ctx };

void cm_team_set_maker(collie_team_t *team, cm_split_ctx *ctx, MPI_Comm comm, bool of_comm) {
    ctx->comm = comm;
    ctx->owned = false;
    team->maker = &cm_team_maker;
    team->maker_ctx = ctx;
    if (of_comm)
        team->origin = COLLIE_TEAM_OF_COMM;
}
