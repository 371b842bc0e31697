/*
 * api_colls.c — the public entry points of allgather(v), reduce_scatter(_block),
 * alltoall(v), gather(v), scatter(v), scan and exscan: blocking, split-phase (collie_i…)
 * and persistent (…_init) forms.  Each fills a collie_call (api.h); the checks, planning
 * and the plan cache are api.c's and api_check.c's.
 */
#include "core/api.h"

int collie_allgather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype) {
    collie_call c = { "collie_allgather", COLL_ALLGATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_blocking(team, &c);
}

int collie_iallgather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                      collie_dtype_t dtype, collie_request_t **req) {
    collie_call c = { "collie_iallgather", COLL_ALLGATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_allgather_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                          size_t count, collie_dtype_t dtype, collie_request_t **req) {
    collie_call c = { "collie_allgather_init", COLL_ALLGATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_allgatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                      void *recvbuf, const size_t *recvcounts, const size_t *displs,
                      collie_dtype_t dtype) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_allgatherv", COLL_ALLGATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, 0 };
    return collie_api_blocking(team, &c);
}

int collie_iallgatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                       void *recvbuf, const size_t *recvcounts, const size_t *displs,
                       collie_dtype_t dtype, collie_request_t **req) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_iallgatherv", COLL_ALLGATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_allgatherv_init(collie_team_t *team, const void *sendbuf, size_t sendcount,
                           void *recvbuf, const size_t *recvcounts, const size_t *displs,
                           collie_dtype_t dtype, collie_request_t **req) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_allgatherv_init", COLL_ALLGATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_reduce_scatter_block(collie_team_t *team, const void *sendbuf, void *recvbuf,
                                size_t recvcount, collie_dtype_t dtype, collie_op_t op) {
    collie_call c = { "collie_reduce_scatter_block", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, recvcount, NULL, dtype, op, 0 };
    return collie_api_blocking(team, &c);
}

int collie_ireduce_scatter_block(collie_team_t *team, const void *sendbuf, void *recvbuf,
                                 size_t recvcount, collie_dtype_t dtype, collie_op_t op,
                                 collie_request_t **req) {
    collie_call c = { "collie_ireduce_scatter_block", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, recvcount, NULL, dtype, op, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_reduce_scatter_block_init(collie_team_t *team, const void *sendbuf,
                                     void *recvbuf, size_t recvcount, collie_dtype_t dtype,
                                     collie_op_t op, collie_request_t **req) {
    collie_call c = { "collie_reduce_scatter_block_init", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, recvcount, NULL, dtype, op, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_reduce_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf,
                          const size_t *recvcounts, collie_dtype_t dtype, collie_op_t op) {
    collie_coll_v v = { recvcounts, NULL, NULL, NULL, 0 };
    collie_call c = { "collie_reduce_scatter", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, 0, &v, dtype, op, 0 };
    return collie_api_blocking(team, &c);
}

int collie_ireduce_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf,
                           const size_t *recvcounts, collie_dtype_t dtype, collie_op_t op,
                           collie_request_t **req) {
    collie_coll_v v = { recvcounts, NULL, NULL, NULL, 0 };
    collie_call c = { "collie_ireduce_scatter", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, 0, &v, dtype, op, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_reduce_scatter_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                               const size_t *recvcounts, collie_dtype_t dtype,
                               collie_op_t op, collie_request_t **req) {
    collie_coll_v v = { recvcounts, NULL, NULL, NULL, 0 };
    collie_call c = { "collie_reduce_scatter_init", COLL_REDUCE_SCATTER,
                      sendbuf, recvbuf, 0, &v, dtype, op, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_alltoall(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                    collie_dtype_t dtype) {
    collie_call c = { "collie_alltoall", COLL_ALLTOALL,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_blocking(team, &c);
}

int collie_ialltoall(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_request_t **req) {
    collie_call c = { "collie_ialltoall", COLL_ALLTOALL,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_alltoall_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                         size_t count, collie_dtype_t dtype, collie_request_t **req) {
    collie_call c = { "collie_alltoall_init", COLL_ALLTOALL,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_alltoallv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                     const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                     const size_t *rdispls, collie_dtype_t dtype) {
    collie_coll_v v = { sendcounts, sdispls, recvcounts, rdispls, 0 };
    collie_call c = { "collie_alltoallv", COLL_ALLTOALL,
                      sendbuf, recvbuf, 0, &v, dtype, NULL, 0 };
    return collie_api_blocking(team, &c);
}

int collie_ialltoallv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                      const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
                      const size_t *rdispls, collie_dtype_t dtype, collie_request_t **req) {
    collie_coll_v v = { sendcounts, sdispls, recvcounts, rdispls, 0 };
    collie_call c = { "collie_ialltoallv", COLL_ALLTOALL,
                      sendbuf, recvbuf, 0, &v, dtype, NULL, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_alltoallv_init(collie_team_t *team, const void *sendbuf,
                          const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
                          const size_t *recvcounts, const size_t *rdispls,
                          collie_dtype_t dtype, collie_request_t **req) {
    collie_coll_v v = { sendcounts, sdispls, recvcounts, rdispls, 0 };
    collie_call c = { "collie_alltoallv_init", COLL_ALLTOALL,
                      sendbuf, recvbuf, 0, &v, dtype, NULL, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_gather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, int root) {
    collie_call c = { "collie_gather", COLL_GATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_blocking(team, &c);
}

int collie_igather(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_call c = { "collie_igather", COLL_GATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_nonblocking(team, &c, req);
}

int collie_gather_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                       size_t count, collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_call c = { "collie_gather_init", COLL_GATHER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_persistent(team, &c, req);
}

int collie_gatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                   void *recvbuf, const size_t *recvcounts, const size_t *displs,
                   collie_dtype_t dtype, int root) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_gatherv", COLL_GATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, root };
    return collie_api_blocking(team, &c);
}

int collie_igatherv(collie_team_t *team, const void *sendbuf, size_t sendcount,
                    void *recvbuf, const size_t *recvcounts, const size_t *displs,
                    collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_igatherv", COLL_GATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, root };
    return collie_api_nonblocking(team, &c, req);
}

int collie_gatherv_init(collie_team_t *team, const void *sendbuf, size_t sendcount,
                        void *recvbuf, const size_t *recvcounts, const size_t *displs,
                        collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_coll_v v = { recvcounts, displs, NULL, NULL, sendcount };
    collie_call c = { "collie_gatherv_init", COLL_GATHER,
                      sendbuf, recvbuf, sendcount, &v, dtype, NULL, root };
    return collie_api_persistent(team, &c, req);
}

int collie_scatter(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, int root) {
    collie_call c = { "collie_scatter", COLL_SCATTER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_blocking(team, &c);
}

int collie_iscatter(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                    collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_call c = { "collie_iscatter", COLL_SCATTER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_nonblocking(team, &c, req);
}

int collie_scatter_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                        size_t count, collie_dtype_t dtype, int root,
                        collie_request_t **req) {
    collie_call c = { "collie_scatter_init", COLL_SCATTER,
                      sendbuf, recvbuf, count, NULL, dtype, NULL, root };
    return collie_api_persistent(team, &c, req);
}

int collie_scatterv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                    const size_t *displs, void *recvbuf, size_t recvcount,
                    collie_dtype_t dtype, int root) {
    collie_coll_v v = { sendcounts, displs, NULL, NULL, recvcount };
    collie_call c = { "collie_scatterv", COLL_SCATTER,
                      sendbuf, recvbuf, recvcount, &v, dtype, NULL, root };
    return collie_api_blocking(team, &c);
}

int collie_iscatterv(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                     const size_t *displs, void *recvbuf, size_t recvcount,
                     collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_coll_v v = { sendcounts, displs, NULL, NULL, recvcount };
    collie_call c = { "collie_iscatterv", COLL_SCATTER,
                      sendbuf, recvbuf, recvcount, &v, dtype, NULL, root };
    return collie_api_nonblocking(team, &c, req);
}

int collie_scatterv_init(collie_team_t *team, const void *sendbuf, const size_t *sendcounts,
                         const size_t *displs, void *recvbuf, size_t recvcount,
                         collie_dtype_t dtype, int root, collie_request_t **req) {
    collie_coll_v v = { sendcounts, displs, NULL, NULL, recvcount };
    collie_call c = { "collie_scatterv_init", COLL_SCATTER,
                      sendbuf, recvbuf, recvcount, &v, dtype, NULL, root };
    return collie_api_persistent(team, &c, req);
}

int collie_scan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                collie_dtype_t dtype, collie_op_t op) {
    collie_call c = { "collie_scan", COLL_SCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_blocking(team, &c);
}

int collie_iscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                 collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    collie_call c = { "collie_iscan", COLL_SCAN, sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_scan_init(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                     collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    collie_call c = { "collie_scan_init", COLL_SCAN,
                      sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_persistent(team, &c, req);
}

int collie_exscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                  collie_dtype_t dtype, collie_op_t op) {
    collie_call c = { "collie_exscan", COLL_EXSCAN,
                      sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_blocking(team, &c);
}

int collie_iexscan(collie_team_t *team, const void *sendbuf, void *recvbuf, size_t count,
                   collie_dtype_t dtype, collie_op_t op, collie_request_t **req) {
    collie_call c = { "collie_iexscan", COLL_EXSCAN,
                      sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_nonblocking(team, &c, req);
}

int collie_exscan_init(collie_team_t *team, const void *sendbuf, void *recvbuf,
                       size_t count, collie_dtype_t dtype, collie_op_t op,
                       collie_request_t **req) {
    collie_call c = { "collie_exscan_init", COLL_EXSCAN,
                      sendbuf, recvbuf, count, NULL, dtype, op, 0 };
    return collie_api_persistent(team, &c, req);
}
