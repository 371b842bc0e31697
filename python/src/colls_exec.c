/*
 * colls_exec.c — the C calls behind colls.c and colls_v.c: a prepared pyc_call run
 * blocking (pyc_colls_run) or started split-phase (pyc_colls_start).  Called with the
 * library lock held and the GIL released (call.c, request.c).
 */
#include "call.h"

int pyc_colls_run(pyc_team *t, const pyc_call *c) {
    collie_team_t *tm = t->team;
    switch (c->coll) {
    case PYC_ALLGATHER:
        return capi.allgather(tm, c->send, c->recv, c->count, c->dtype);
    case PYC_ALLGATHERV:
        return capi.allgatherv(tm, c->send, c->own, c->recv, c->counts, c->displs, c->dtype);
    case PYC_REDUCE_SCATTER_BLOCK:
        return capi.reduce_scatter_block(tm, c->send, c->recv, c->count, c->dtype, c->op);
    case PYC_REDUCE_SCATTER:
        return capi.reduce_scatter(tm, c->send, c->recv, c->counts, c->dtype, c->op);
    case PYC_ALLTOALL:
        return capi.alltoall(tm, c->send, c->recv, c->count, c->dtype);
    case PYC_ALLTOALLV:
        return capi.alltoallv(tm, c->send, c->counts, c->displs, c->recv, c->rcounts,
                              c->rdispls, c->dtype);
    case PYC_GATHER:
        return capi.gather(tm, c->send, c->recv, c->count, c->dtype, c->root);
    case PYC_GATHERV:
        return capi.gatherv(tm, c->send, c->own, c->recv, c->counts, c->displs, c->dtype,
                            c->root);
    case PYC_SCATTER:
        return capi.scatter(tm, c->send, c->recv, c->count, c->dtype, c->root);
    case PYC_SCATTERV:
        return capi.scatterv(tm, c->send, c->counts, c->displs, c->recv, c->own, c->dtype,
                             c->root);
    case PYC_SCAN:
        return capi.scan(tm, c->send, c->recv, c->count, c->dtype, c->op);
    case PYC_EXSCAN:
        return capi.exscan(tm, c->send, c->recv, c->count, c->dtype, c->op);
    default:
        return COLLIE_ERR_INTERNAL;
    }
}

int pyc_colls_start(pyc_team *t, const pyc_call *c, collie_request_t **req) {
    collie_team_t *tm = t->team;
    switch (c->coll) {
    case PYC_ALLGATHER:
        return capi.iallgather(tm, c->send, c->recv, c->count, c->dtype, req);
    case PYC_ALLGATHERV:
        return capi.iallgatherv(tm, c->send, c->own, c->recv, c->counts, c->displs, c->dtype,
                                req);
    case PYC_REDUCE_SCATTER_BLOCK:
        return capi.ireduce_scatter_block(tm, c->send, c->recv, c->count, c->dtype, c->op,
                                          req);
    case PYC_REDUCE_SCATTER:
        return capi.ireduce_scatter(tm, c->send, c->recv, c->counts, c->dtype, c->op, req);
    case PYC_ALLTOALL:
        return capi.ialltoall(tm, c->send, c->recv, c->count, c->dtype, req);
    case PYC_ALLTOALLV:
        return capi.ialltoallv(tm, c->send, c->counts, c->displs, c->recv, c->rcounts,
                               c->rdispls, c->dtype, req);
    case PYC_GATHER:
        return capi.igather(tm, c->send, c->recv, c->count, c->dtype, c->root, req);
    case PYC_GATHERV:
        return capi.igatherv(tm, c->send, c->own, c->recv, c->counts, c->displs, c->dtype,
                             c->root, req);
    case PYC_SCATTER:
        return capi.iscatter(tm, c->send, c->recv, c->count, c->dtype, c->root, req);
    case PYC_SCATTERV:
        return capi.iscatterv(tm, c->send, c->counts, c->displs, c->recv, c->own, c->dtype,
                              c->root, req);
    case PYC_SCAN:
        return capi.iscan(tm, c->send, c->recv, c->count, c->dtype, c->op, req);
    case PYC_EXSCAN:
        return capi.iexscan(tm, c->send, c->recv, c->count, c->dtype, c->op, req);
    default:
        return COLLIE_ERR_INTERNAL;
    }
}
