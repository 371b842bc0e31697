/*
 * mp_colls_calls.c — one call of mp_colls through the public API, in any of its three
 * forms: blocking, split-phase (collie_i… + collie_wait) and persistent (…_init +
 * collie_start + collie_wait).
 */
#include <string.h>
#include "mp_colls.h"
#include "algorithms/algorithm.h"

/* The index of c's function in the tables below. */
static int which(const mp_call *c) {
    static const int base[] = { [COLL_ALLGATHER] = 0, [COLL_REDUCE_SCATTER] = 2,
                                [COLL_ALLTOALL] = 4, [COLL_GATHER] = 6, [COLL_SCATTER] = 8,
                                [COLL_SCAN] = 10, [COLL_EXSCAN] = 11 };
    if (c->coll == COLL_ALLREDUCE || c->coll == COLL_REDUCE)
        return 12 + (c->coll == COLL_REDUCE);
    return base[c->coll] + (c->v ? 1 : 0);
}

const char *mp_colls_fn(const mp_call *c) {
    static const char *const names[] = {        "collie_allgather",
        "collie_allgatherv",
        "collie_reduce_scatter_block",
        "collie_reduce_scatter",
        "collie_alltoall",
        "collie_alltoallv",
        "collie_gather",
        "collie_gatherv",
        "collie_scatter",
        "collie_scatterv",
        "collie_scan",
        "collie_exscan",
        "collie_allreduce",
        "collie_reduce" };
    return names[which(c)];
}

static int blocking(collie_team_t *t, const mp_call *c) {
    switch (which(c)) {
    case 0: return collie_allgather(t, c->send, c->recv, c->count, c->dt);
    case 1: return collie_allgatherv(t, c->send, c->own, c->recv, c->c, c->d, c->dt);
    case 2: return collie_reduce_scatter_block(t, c->send, c->recv, c->count, c->dt, c->op);
    case 3: return collie_reduce_scatter(t, c->send, c->recv, c->c, c->dt, c->op);
    case 4: return collie_alltoall(t, c->send, c->recv, c->count, c->dt);
    case 5: return collie_alltoallv(t, c->send, c->c, c->d, c->recv, c->rc, c->rd, c->dt);
    case 6: return collie_gather(t, c->send, c->recv, c->count, c->dt, c->root);
    case 7: return collie_gatherv(t, c->send, c->own, c->recv, c->c, c->d, c->dt, c->root);
    case 8: return collie_scatter(t, c->send, c->recv, c->count, c->dt, c->root);
    case 9: return collie_scatterv(t, c->send, c->c, c->d, c->recv, c->own, c->dt, c->root);
    case 10: return collie_scan(t, c->send, c->recv, c->count, c->dt, c->op);
    case 11: return collie_exscan(t, c->send, c->recv, c->count, c->dt, c->op);
    case 12: return collie_allreduce(t, c->send, c->recv, c->count, c->dt, c->op);
    case 13: return collie_reduce(t, c->send, c->recv, c->count, c->dt, c->op, c->root);
    default: return COLLIE_ERR_ARG;
    }
}

static int split(collie_team_t *t, const mp_call *c, collie_request_t **r) {
    switch (which(c)) {
    case 0: return collie_iallgather(t, c->send, c->recv, c->count, c->dt, r);
    case 1: return collie_iallgatherv(t, c->send, c->own, c->recv, c->c, c->d, c->dt, r);
    case 2: return collie_ireduce_scatter_block(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 3: return collie_ireduce_scatter(t, c->send, c->recv, c->c, c->dt, c->op, r);
    case 4: return collie_ialltoall(t, c->send, c->recv, c->count, c->dt, r);
    case 5: return collie_ialltoallv(t, c->send, c->c, c->d, c->recv, c->rc, c->rd, c->dt, r);
    case 6: return collie_igather(t, c->send, c->recv, c->count, c->dt, c->root, r);
    case 7: return collie_igatherv(t, c->send, c->own, c->recv, c->c, c->d, c->dt, c->root, r);
    case 8: return collie_iscatter(t, c->send, c->recv, c->count, c->dt, c->root, r);
    case 9: return collie_iscatterv(t, c->send, c->c, c->d, c->recv, c->own, c->dt, c->root, r);
    case 10: return collie_iscan(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 11: return collie_iexscan(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 12: return collie_iallreduce(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 13: return collie_ireduce(t, c->send, c->recv, c->count, c->dt, c->op, c->root, r);
    default: return COLLIE_ERR_ARG;
    }
}

static int persistent(collie_team_t *t, const mp_call *c, collie_request_t **r) {
    switch (which(c)) {
    case 0: return collie_allgather_init(t, c->send, c->recv, c->count, c->dt, r);
    case 1: return collie_allgatherv_init(t, c->send, c->own, c->recv, c->c, c->d, c->dt, r);
    case 2: return collie_reduce_scatter_block_init(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 3: return collie_reduce_scatter_init(t, c->send, c->recv, c->c, c->dt, c->op, r);
    case 4: return collie_alltoall_init(t, c->send, c->recv, c->count, c->dt, r);
    case 5: return collie_alltoallv_init(t, c->send, c->c, c->d, c->recv, c->rc, c->rd, c->dt, r);
    case 6: return collie_gather_init(t, c->send, c->recv, c->count, c->dt, c->root, r);
    case 7: return collie_gatherv_init(t, c->send, c->own, c->recv, c->c, c->d, c->dt, c->root, r);
    case 8: return collie_scatter_init(t, c->send, c->recv, c->count, c->dt, c->root, r);
    case 9: return collie_scatterv_init(t, c->send, c->c, c->d, c->recv, c->own, c->dt, c->root, r);
    case 10: return collie_scan_init(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 11: return collie_exscan_init(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 12: return collie_allreduce_init(t, c->send, c->recv, c->count, c->dt, c->op, r);
    case 13: return collie_reduce_init(t, c->send, c->recv, c->count, c->dt, c->op, c->root, r);
    default: return COLLIE_ERR_ARG;
    }
}

int mp_colls_call(collie_team_t *team, const mp_call *c, int form, const char **algo) {
    collie_request_t *req = NULL;
    *algo = NULL;
    if (form == FORM_BLOCKING)
        return blocking(team, c);
    int st = form == FORM_SPLIT ? split(team, c, &req) : persistent(team, c, &req);
    if (!st && form == FORM_PERSISTENT)
        st = collie_start(req);
    if (!st)
        st = collie_wait(req);
    if (req)
        *algo = collie_request_algorithm(req);
    collie_request_free(req);
    return st;
}
