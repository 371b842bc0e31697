/*
 * mpi_check_xpost.c — issuing allgather(v), reduce_scatter(_block), alltoall(v), gather(v),
 * scatter(v), scan and exscan in each form (blocking, MPI_I* completed by MPI_Wait or by
 * MPI_Test, persistent started twice) for mpi_check_move.c and mpi_check_scan.c.
 */
#include <stdio.h>

#include "mpi_check.h"

static void post_blocking(const xcall *x) {
    switch (x->coll) {
    case X_ALLGATHER: MPI_Allgather(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm); break;
    case X_ALLGATHERV: MPI_Allgatherv(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm); break;
    case X_RS_BLOCK: MPI_Reduce_scatter_block(x->sb, x->rb, x->rc, x->rt, x->op, x->comm); break;
    case X_RS: MPI_Reduce_scatter(x->sb, x->rb, x->rcs, x->rt, x->op, x->comm); break;
    case X_ALLTOALL: MPI_Alltoall(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm); break;
    case X_ALLTOALLV:
        MPI_Alltoallv(x->sb, x->scs, x->sds, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm);
        break;
    case X_GATHER: MPI_Gather(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm); break;
    case X_GATHERV:
        MPI_Gatherv(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->root, x->comm);
        break;
    case X_SCATTER: MPI_Scatter(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm); break;
    case X_SCATTERV:
        MPI_Scatterv(x->sb, x->scs, x->sds, x->st, x->rb, x->rc, x->rt, x->root, x->comm);
        break;
    case X_SCAN: MPI_Scan(x->sb, x->rb, x->rc, x->rt, x->op, x->comm); break;
    case X_EXSCAN: MPI_Exscan(x->sb, x->rb, x->rc, x->rt, x->op, x->comm); break;
    case X_NCOLLS: break;
    }
}

static void post_nonblocking(const xcall *x, MPI_Request *r) {
    switch (x->coll) {
    case X_ALLGATHER: MPI_Iallgather(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm, r); break;
    case X_ALLGATHERV:
        MPI_Iallgatherv(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm, r);
        break;
    case X_RS_BLOCK: MPI_Ireduce_scatter_block(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, r); break;
    case X_RS: MPI_Ireduce_scatter(x->sb, x->rb, x->rcs, x->rt, x->op, x->comm, r); break;
    case X_ALLTOALL: MPI_Ialltoall(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm, r); break;
    case X_ALLTOALLV:
        MPI_Ialltoallv(x->sb, x->scs, x->sds, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm, r);
        break;
    case X_GATHER: MPI_Igather(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm, r); break;
    case X_GATHERV:
        MPI_Igatherv(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->root, x->comm, r);
        break;
    case X_SCATTER: MPI_Iscatter(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm, r); break;
    case X_SCATTERV:
        MPI_Iscatterv(x->sb, x->scs, x->sds, x->st, x->rb, x->rc, x->rt, x->root, x->comm, r);
        break;
    case X_SCAN: MPI_Iscan(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, r); break;
    case X_EXSCAN: MPI_Iexscan(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, r); break;
    case X_NCOLLS: break;
    }
}

#if HAVE_PERSISTENT
static void post_persistent(const xcall *x, MPI_Request *r) {
    MPI_Info i = MPI_INFO_NULL;
    switch (x->coll) {
    case X_ALLGATHER:
        PCOLL(Allgather_init)(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm, i, r);
        break;
    case X_ALLGATHERV:
        PCOLL(Allgatherv_init)(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm, i, r);
        break;
    case X_RS_BLOCK:
        PCOLL(Reduce_scatter_block_init)(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, i, r);
        break;
    case X_RS: PCOLL(Reduce_scatter_init)(x->sb, x->rb, x->rcs, x->rt, x->op, x->comm, i, r); break;
    case X_ALLTOALL:
        PCOLL(Alltoall_init)(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->comm, i, r);
        break;
    case X_ALLTOALLV:
        PCOLL(Alltoallv_init)(x->sb, x->scs, x->sds, x->st, x->rb, x->rcs, x->rds, x->rt, x->comm,
                              i, r);
        break;
    case X_GATHER:
        PCOLL(Gather_init)(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm, i, r);
        break;
    case X_GATHERV:
        PCOLL(Gatherv_init)(x->sb, x->sc, x->st, x->rb, x->rcs, x->rds, x->rt, x->root, x->comm,
                            i, r);
        break;
    case X_SCATTER:
        PCOLL(Scatter_init)(x->sb, x->sc, x->st, x->rb, x->rc, x->rt, x->root, x->comm, i, r);
        break;
    case X_SCATTERV:
        PCOLL(Scatterv_init)(x->sb, x->scs, x->sds, x->st, x->rb, x->rc, x->rt, x->root, x->comm,
                             i, r);
        break;
    case X_SCAN: PCOLL(Scan_init)(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, i, r); break;
    case X_EXSCAN: PCOLL(Exscan_init)(x->sb, x->rb, x->rc, x->rt, x->op, x->comm, i, r); break;
    case X_NCOLLS: break;
    }
}
#endif

static void complete_req(MPI_Request *req, enum form form) {
    int flag = 0;
    if (form == F_TEST) {
        while (!flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
}

void xrun(const xcall *x, enum form form, void (*fill)(void *ctx, int salt),
          void (*verify)(void *ctx, int salt), void *ctx) {
    MPI_Request req = MPI_REQUEST_NULL;
#if HAVE_PERSISTENT
    if (form == F_PERSISTENT) {
        post_persistent(x, &req);
        for (int salt = 0; salt < 2; salt++) {
            fill(ctx, salt);
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            verify(ctx, salt);
        }
        MPI_Request_free(&req);
        return;
    }
#endif
    if (form == F_PERSISTENT)
        form = F_WAIT;   /* no persistent collectives in this MPI */
    fill(ctx, 0);
    if (form == F_BLOCKING) {
        post_blocking(x);
    } else {
        post_nonblocking(x, &req);
        complete_req(&req, form);
    }
    verify(ctx, 0);
}
