/*
 * bench_colls.h — collie-bench's calls of allgather, reduce_scatter (block form),
 * alltoall, gather, scatter, scan and exscan: their buffers (blocks of `count` elements,
 * P of them where the collective has one per rank) and the three call forms.  Static
 * inline; included by bench.h (it uses its `bench`).
 */
#ifndef COLLIE_BENCH_COLLS_H
#define COLLIE_BENCH_COLLS_H

static inline bool more_coll(int coll) { return coll > COLL_BARRIER; }

/* The buffers of the call on this rank: in place as MPI allows it (--in-place), NULL where
 * a rank has none (scatter's sendbuf and gather's recvbuf off the root). */
static inline const void *more_send(const bench *b) {
    bool root = b->rank == b->o.root;
    if (b->o.coll == COLL_SCATTER)
        return root ? b->sbuf : NULL;
    bool in_place = b->o.in_place && (b->o.coll != COLL_GATHER || root);
    return in_place ? COLLIE_IN_PLACE : b->sbuf;
}

static inline void *more_recv(const bench *b) {
    bool root = b->rank == b->o.root;
    if (b->o.coll == COLL_SCATTER && b->o.in_place && root)
        return COLLIE_IN_PLACE;
    return b->o.coll == COLL_GATHER && !root ? NULL : b->rbuf;
}

/* Blocking (form 0), split-phase (1) or persistent (2) call of n elements per block. */
static inline int more_call(const bench *b, size_t n, int form, collie_request_t **req) {
    const bench_opts *o = &b->o;
    const void *s = more_send(b);
    void *r = more_recv(b);
    collie_dtype_t t = o->dtype;
    collie_op_t op = o->op;
    int root = o->root;
    switch (o->coll * 3 + form) {
    case COLL_ALLGATHER * 3: return collie_allgather(b->team, s, r, n, t);
    case COLL_ALLGATHER * 3 + 1: return collie_iallgather(b->team, s, r, n, t, req);
    case COLL_ALLGATHER * 3 + 2: return collie_allgather_init(b->team, s, r, n, t, req);
    case COLL_REDUCE_SCATTER * 3: return collie_reduce_scatter_block(b->team, s, r, n, t, op);
    case COLL_REDUCE_SCATTER * 3 + 1: return collie_ireduce_scatter_block(b->team, s, r, n, t, op, req);
    case COLL_REDUCE_SCATTER * 3 + 2: return collie_reduce_scatter_block_init(b->team, s, r, n, t, op, req);
    case COLL_ALLTOALL * 3: return collie_alltoall(b->team, s, r, n, t);
    case COLL_ALLTOALL * 3 + 1: return collie_ialltoall(b->team, s, r, n, t, req);
    case COLL_ALLTOALL * 3 + 2: return collie_alltoall_init(b->team, s, r, n, t, req);
    case COLL_GATHER * 3: return collie_gather(b->team, s, r, n, t, root);
    case COLL_GATHER * 3 + 1: return collie_igather(b->team, s, r, n, t, root, req);
    case COLL_GATHER * 3 + 2: return collie_gather_init(b->team, s, r, n, t, root, req);
    case COLL_SCATTER * 3: return collie_scatter(b->team, s, r, n, t, root);
    case COLL_SCATTER * 3 + 1: return collie_iscatter(b->team, s, r, n, t, root, req);
    case COLL_SCATTER * 3 + 2: return collie_scatter_init(b->team, s, r, n, t, root, req);
    case COLL_SCAN * 3: return collie_scan(b->team, s, r, n, t, op);
    case COLL_SCAN * 3 + 1: return collie_iscan(b->team, s, r, n, t, op, req);
    case COLL_SCAN * 3 + 2: return collie_scan_init(b->team, s, r, n, t, op, req);
    case COLL_EXSCAN * 3: return collie_exscan(b->team, s, r, n, t, op);
    case COLL_EXSCAN * 3 + 1: return collie_iexscan(b->team, s, r, n, t, op, req);
    case COLL_EXSCAN * 3 + 2: return collie_exscan_init(b->team, s, r, n, t, op, req);
    default: return COLLIE_ERR_ARG;
    }
}

/* The plan the blocking calls would run (matched by start order), never started. */
static inline int more_request(const bench *b, size_t n, collie_request_t **req) {
    const bench_opts *o = &b->o;
    return collie_request_build_v(b->team, NULL, o->coll, more_send(b), more_recv(b), n, NULL,
                                  o->dtype, collie_coll_has_op(o->coll) ? o->op : NULL,
                                  collie_coll_rooted(o->coll) ? o->root : 0, true, req);
}

#endif
