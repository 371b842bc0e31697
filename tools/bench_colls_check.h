/*
 * bench_colls_check.h — collie-bench --check and --fresh-data for allgather,
 * reduce_scatter (block form), alltoall, gather, scatter, scan and exscan: where a rank's
 * input and its result live (in place as MPI allows it), the input values, and the
 * expected result, computed here from each collective's definition (an independent
 * reference: none of the library's layout helpers is used).  Static inline; included
 * by bench.h after bench_colls.h (it uses `bench`, more_send and more_recv).
 *
 * A rank's input is a vector over its send extent: `count` elements, or P·count where the
 * collective sends a block to every rank (reduce_scatter, alltoall, scatter's root).
 * Element g of rank q's input is v(q, g) = bench_input(op, q, g) (bench_check.h), or with
 * --fresh-data bench_fresh_value(op, q, g, call number).  Element k of the result on rank
 * r (block j = k / count, index i = k % count; ∘ the op, in rank order):
 *   allgather, gather (root)   v(j, i)
 *   alltoall                   v(j, r·count + i)
 *   scatter                    v(root, r·count + k)
 *   reduce_scatter             ∘ over q = 0 … P−1 of v(q, r·count + k)
 *   scan / exscan              ∘ over q = 0 … r (exscan: … r−1) of v(q, k); exscan's rank 0
 *                              has no result (MPI leaves it undefined) and is not checked
 * The collectives without an op use the broadcast inputs (op −1).
 */
#ifndef COLLIE_BENCH_COLLS_CHECK_H
#define COLLIE_BENCH_COLLS_CHECK_H

/* The op of the inputs: the measured op, or -1 (no op: broadcast-style payloads). */
static inline int more_opid(const bench *b) {
    return collie_coll_has_op(b->o.coll) ? b->o.opid : -1;
}

static inline char *more_block(void *buf, size_t block, size_t count, size_t esz) {
    return (char *)buf + block * count * esz;
}

/* This rank's input: the buffer and its element count in *n (NULL, 0: it has none). */
static inline void *more_input(const bench *b, size_t count, size_t *n) {
    bool in_place = more_send(b) == COLLIE_IN_PLACE, root = b->rank == b->o.root;
    size_t all = (size_t)b->P * count;
    *n = count;
    switch (b->o.coll) {
    case COLL_ALLGATHER:   /* in place: its own block of the result */
        return in_place ? more_block(b->rbuf, (size_t)b->rank, count, b->esz) : b->sbuf;
    case COLL_GATHER:      /* in place (root only): the root's block of the result */
        return in_place ? more_block(b->rbuf, (size_t)b->o.root, count, b->esz) : b->sbuf;
    case COLL_REDUCE_SCATTER:
    case COLL_ALLTOALL:
        *n = all;
        return in_place ? b->rbuf : b->sbuf;
    case COLL_SCATTER:
        *n = root ? all : 0;
        return root ? b->sbuf : NULL;
    default:               /* scan, exscan */
        return in_place ? b->rbuf : b->sbuf;
    }
}

/* Where this rank's result lands: the buffer and its element count in *n (0: none). */
static inline const void *more_result(const bench *b, size_t count, size_t *n) {
    bool root = b->rank == b->o.root;
    size_t all = (size_t)b->P * count;
    *n = count;
    switch (b->o.coll) {
    case COLL_ALLGATHER:
    case COLL_ALLTOALL:
        *n = all;
        return b->rbuf;
    case COLL_GATHER:
        *n = root ? all : 0;
        return b->rbuf;
    case COLL_SCATTER:     /* in place: the root keeps its block in the send buffer */
        return more_recv(b) == COLLIE_IN_PLACE ? more_block(b->sbuf, (size_t)b->rank, count, b->esz)
                                               : b->rbuf;
    case COLL_EXSCAN:
        *n = b->rank > 0 ? count : 0;
        return b->rbuf;
    default:               /* reduce_scatter (block 0 of the buffer in place), scan */
        return b->rbuf;
    }
}

/* v(q, g) of the call numbered salt (fresh data) or of the check inputs. */
static inline uint64_t more_value(const bench *b, int q, size_t g, bool fresh, uint64_t salt) {
    int opid = more_opid(b);
    return fresh ? bench_fresh_value(opid, b->o.dtype, b->P, q, g, salt)
                 : bench_input(opid, b->o.dtype, b->P, q, g);
}

/* v(from, g) ∘ … ∘ v(to - 1, g), in rank order; from < to. */
static inline uint64_t more_fold(const bench *b, int from, int to, size_t g, bool fresh,
                                 uint64_t salt) {
    uint64_t acc = more_value(b, from, g, fresh, salt);
    for (int q = from + 1; q < to; q++)
        acc = bench_combine(more_opid(b), acc, more_value(b, q, g, fresh, salt));
    return acc;
}

/* The expected element k of this rank's result (see the table at the top). */
static inline uint64_t more_expected(const bench *b, size_t count, size_t k, bool fresh,
                                     uint64_t salt) {
    size_t j = k / count, i = k % count, mine = (size_t)b->rank * count;
    switch (b->o.coll) {
    case COLL_ALLGATHER:
    case COLL_GATHER: return more_value(b, (int)j, i, fresh, salt);
    case COLL_ALLTOALL: return more_value(b, (int)j, mine + i, fresh, salt);
    case COLL_SCATTER: return more_value(b, b->o.root, mine + k, fresh, salt);
    case COLL_REDUCE_SCATTER: return more_fold(b, 0, b->P, mine + k, fresh, salt);
    case COLL_SCAN: return more_fold(b, 0, b->rank + 1, k, fresh, salt);
    default: return more_fold(b, 0, b->rank, k, fresh, salt);   /* exscan, rank > 0 */
    }
}

/* --fresh-data: this rank's input of the call numbered salt (untimed, ordinary stores). */
static inline void more_fill_fresh(const bench *b, size_t count, uint64_t salt) {
    size_t n;
    void *in = more_input(b, count, &n);
    if (in)
        bench_fill_fresh(in, n, more_opid(b), b->o.dtype, b->P, b->rank, salt);
}

/* --check: the receive buffer filled with a pattern no result has (0xA5 bytes), then the
 * check inputs (which in place lie in the receive buffer). */
static inline void more_fill_check_inputs(const bench *b, size_t count) {
    size_t n;
    memset(b->rbuf, 0xA5, (size_t)b->P * count * b->esz);
    void *in = more_input(b, count, &n);
    for (size_t g = 0; in && g < n; g++)
        bench_put(in, g, b->o.dtype, more_value(b, b->rank, g, false, 0));
}

/* Compares this rank's result with the expected values (fresh: of the last timed call,
 * numbered b->calls - 1); on the first mismatch prints it and marks the run failed. */
static inline void more_verify(bench *b, size_t count, bool fresh, const char *used) {
    size_t n;
    const void *res = more_result(b, count, &n);
    uint64_t salt = fresh ? b->calls - 1 : 0;
    for (size_t k = 0; k < n; k++) {
        double want = (double)more_expected(b, count, k, fresh, salt);
        double got = bench_get(res, k, b->o.dtype);
        if (got == want)
            continue;
        fprintf(stderr, "collie-bench: rank %d: %scheck failed (%s, %zu elements per block, %s%s):"
                " result element %zu (block %zu, index %zu): got %g, expected %g\n", b->rank,
                fresh ? "fresh-data " : "", collie_coll_name(b->o.coll), count, used,
                b->o.in_place ? ", in place" : "", k, k / count, k % count, got, want);
        b->check_failed = true;
        return;
    }
}

#endif
