/*
 * mpi_xcoll_calls.c — the MPI entry points of allgather(v), reduce_scatter(_block),
 * alltoall(v), gather(v), scatter(v), scan and exscan: blocking, MPI_I* and persistent
 * (MPI-4 MPI_*_init in MPICH 4, Open MPI's MPIX_*_init).  Each describes its arguments
 * (cm_xargs) for mpi_xcoll.c, which serves the call on collie or says why not; a call
 * collie does not serve goes to the PMPI_ function unchanged — the blocking ones between
 * cm_help_begin and cm_help_end, so that collie's active requests keep moving while this
 * rank blocks in MPI (mpi_progress_help.c).
 */
#include "mpi/mpi_layer.h"

/* ---- blocking ------------------------------------------------------------------------------ */

int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Allgather", .coll = COLL_ALLGATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Allgather(sb, sc, st, rb, rc, rt, comm));
}

int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Allgatherv", .coll = COLL_ALLGATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Allgatherv(sb, sc, st, rb, rcs, rds, rt, comm));
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype t, MPI_Op op,
    MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Reduce_scatter_block", .coll = COLL_REDUCE_SCATTER, .v = false,
        .sendbuf = sb, .recvbuf = rb, .rcount = rc, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Reduce_scatter_block(sb, rb, rc, t, op, comm));
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype t, MPI_Op op,
    MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Reduce_scatter", .coll = COLL_REDUCE_SCATTER, .v = true,
        .sendbuf = sb, .recvbuf = rb, .rcounts = rcs, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Reduce_scatter(sb, rb, rcs, t, op, comm));
}

int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Alltoall", .coll = COLL_ALLTOALL, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm));
}

int MPI_Alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
    const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Alltoallv", .coll = COLL_ALLTOALL, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcounts = rcs,
        .rdispls = rds, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm));
}

int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    int root, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Gather", .coll = COLL_GATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm));
}

int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, int root, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Gatherv", .coll = COLL_GATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Gatherv(sb, sc, st, rb, rcs, rds, rt, root, comm));
}

int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    int root, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Scatter", .coll = COLL_SCATTER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm));
}

int MPI_Scatterv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
    int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Scatterv", .coll = COLL_SCATTER, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Scatterv(sb, scs, sds, st, rb, rc, rt, root, comm));
}

int MPI_Scan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Scan", .coll = COLL_SCAN, .v = false, .sendbuf = sb, .recvbuf = rb,
        .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Scan(sb, rb, n, t, op, comm));
}

int MPI_Exscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    cm_xargs a = { .fn = "MPI_Exscan", .coll = COLL_EXSCAN, .v = false, .sendbuf = sb,
        .recvbuf = rb, .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_blocking(&a, &rc_mpi))
        return rc_mpi;
    bool helped = cm_help_begin();
    return cm_help_end(helped, PMPI_Exscan(sb, rb, n, t, op, comm));
}

/* ---- split-phase --------------------------------------------------------------------------- */

int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iallgather", .coll = COLL_ALLGATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, request);
}

int MPI_Iallgatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iallgatherv", .coll = COLL_ALLGATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iallgatherv(sb, sc, st, rb, rcs, rds, rt, comm, request);
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype t, MPI_Op op,
    MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Ireduce_scatter_block", .coll = COLL_REDUCE_SCATTER, .v = false,
        .sendbuf = sb, .recvbuf = rb, .rcount = rc, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Ireduce_scatter_block(sb, rb, rc, t, op, comm, request);
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype t, MPI_Op op,
    MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Ireduce_scatter", .coll = COLL_REDUCE_SCATTER, .v = true,
        .sendbuf = sb, .recvbuf = rb, .rcounts = rcs, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Ireduce_scatter(sb, rb, rcs, t, op, comm, request);
}

int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Ialltoall", .coll = COLL_ALLTOALL, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, request);
}

int MPI_Ialltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
    const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Ialltoallv", .coll = COLL_ALLTOALL, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcounts = rcs,
        .rdispls = rds, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, request);
}

int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    int root, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Igather", .coll = COLL_GATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Igather(sb, sc, st, rb, rc, rt, root, comm, request);
}

int MPI_Igatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Igatherv", .coll = COLL_GATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Igatherv(sb, sc, st, rb, rcs, rds, rt, root, comm, request);
}

int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    int root, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iscatter", .coll = COLL_SCATTER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, request);
}

int MPI_Iscatterv(const void *sb, const int scs[], const int sds[], MPI_Datatype st, void *rb,
    int rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iscatterv", .coll = COLL_SCATTER, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iscatterv(sb, scs, sds, st, rb, rc, rt, root, comm, request);
}

int MPI_Iscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
    MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iscan", .coll = COLL_SCAN, .v = false, .sendbuf = sb, .recvbuf = rb,
        .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iscan(sb, rb, n, t, op, comm, request);
}

int MPI_Iexscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
    MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Iexscan", .coll = COLL_EXSCAN, .v = false, .sendbuf = sb,
        .recvbuf = rb, .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, false, request, &rc_mpi))
        return rc_mpi;
    return PMPI_Iexscan(sb, rb, n, t, op, comm, request);
}

/* ---- persistent ---------------------------------------------------------------------------- */

#if CM_PERSISTENT

int PCOLL(Allgather_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
    MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Allgather_init", .coll = COLL_ALLGATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Allgather_init)(sb, sc, st, rb, rc, rt, comm, info, request);
}

int PCOLL(Allgatherv_init)(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Allgatherv_init", .coll = COLL_ALLGATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Allgatherv_init)(sb, sc, st, rb, rcs, rds, rt, comm, info, request);
}

int PCOLL(Reduce_scatter_block_init)(const void *sb, void *rb, int rc, MPI_Datatype t, MPI_Op op,
    MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Reduce_scatter_block_init", .coll = COLL_REDUCE_SCATTER, .v = false,
        .sendbuf = sb, .recvbuf = rb, .rcount = rc, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Reduce_scatter_block_init)(sb, rb, rc, t, op, comm, info, request);
}

int PCOLL(Reduce_scatter_init)(const void *sb, void *rb, const int rcs[], MPI_Datatype t,
    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Reduce_scatter_init", .coll = COLL_REDUCE_SCATTER, .v = true,
        .sendbuf = sb, .recvbuf = rb, .rcounts = rcs, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Reduce_scatter_init)(sb, rb, rcs, t, op, comm, info, request);
}

int PCOLL(Alltoall_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
    MPI_Datatype rt, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Alltoall_init", .coll = COLL_ALLTOALL, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Alltoall_init)(sb, sc, st, rb, rc, rt, comm, info, request);
}

int PCOLL(Alltoallv_init)(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
    void *rb, const int rcs[], const int rds[], MPI_Datatype rt, MPI_Comm comm, MPI_Info info,
    MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Alltoallv_init", .coll = COLL_ALLTOALL, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcounts = rcs,
        .rdispls = rds, .rtype = rt, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Alltoallv_init)(sb, scs, sds, st, rb, rcs, rds, rt, comm, info, request);
}

int PCOLL(Gather_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc, MPI_Datatype rt,
    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Gather_init", .coll = COLL_GATHER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Gather_init)(sb, sc, st, rb, rc, rt, root, comm, info, request);
}

int PCOLL(Gatherv_init)(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
    const int rds[], MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info,
    MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Gatherv_init", .coll = COLL_GATHER, .v = true, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcounts = rcs, .rdispls = rds, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Gatherv_init)(sb, sc, st, rb, rcs, rds, rt, root, comm, info, request);
}

int PCOLL(Scatter_init)(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
    MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Scatter_init", .coll = COLL_SCATTER, .v = false, .sendbuf = sb,
        .scount = sc, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt, .root = root,
        .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Scatter_init)(sb, sc, st, rb, rc, rt, root, comm, info, request);
}

int PCOLL(Scatterv_init)(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
    void *rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm, MPI_Info info,
    MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Scatterv_init", .coll = COLL_SCATTER, .v = true, .sendbuf = sb,
        .scounts = scs, .sdispls = sds, .stype = st, .recvbuf = rb, .rcount = rc, .rtype = rt,
        .root = root, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Scatterv_init)(sb, scs, sds, st, rb, rc, rt, root, comm, info, request);
}

int PCOLL(Scan_init)(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
    MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Scan_init", .coll = COLL_SCAN, .v = false, .sendbuf = sb,
        .recvbuf = rb, .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Scan_init)(sb, rb, n, t, op, comm, info, request);
}

int PCOLL(Exscan_init)(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
    MPI_Info info, MPI_Request *request) {
    cm_xargs a = { .fn = "MPI_Exscan_init", .coll = COLL_EXSCAN, .v = false, .sendbuf = sb,
        .recvbuf = rb, .rcount = n, .rtype = t, .op = op, .comm = comm };
    int rc_mpi;
    if (cm_x_request(&a, true, request, &rc_mpi))
        return rc_mpi;
    return PPCOLL(Exscan_init)(sb, rb, n, t, op, comm, info, request);
}

#endif
