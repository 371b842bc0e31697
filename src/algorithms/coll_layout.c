/*
 * coll_layout.c — the buffer layout of every collective, block and v forms (the table of
 * COLLS_SPEC.md): which bytes of SBUF_SEND and SBUF_RECV a rank uses, and where block j
 * lies.  The verifier, the API's checks and the builders use these functions; no other
 * place hard-codes the extents.
 */
#include "algorithms/algorithm.h"

bool collie_coll_has_op(int coll) {
    return coll == COLL_ALLREDUCE || coll == COLL_REDUCE || coll == COLL_REDUCE_SCATTER ||
           coll == COLL_SCAN || coll == COLL_EXSCAN;
}

bool collie_coll_rooted(int coll) {
    return coll == COLL_REDUCE || coll == COLL_BCAST || coll == COLL_GATHER ||
           coll == COLL_SCATTER;
}

static uint64_t es_of(const collie_coll_args *a) {
    return a->elem_size ? a->elem_size : 1;
}

/* The end (in bytes) of the furthest block of counts/displs; 0 without arrays. */
static uint64_t extent(const collie_coll_args *a, const size_t *counts, const size_t *displs) {
    uint64_t end = 0;
    for (int j = 0; counts && displs && j < a->size; j++)
        if (counts[j] && (uint64_t)(displs[j] + counts[j]) > end)
            end = (uint64_t)(displs[j] + counts[j]);
    return end * es_of(a);
}

static uint64_t sum(const collie_coll_args *a, const size_t *counts, int upto) {
    uint64_t n = 0;
    for (int j = 0; counts && j < upto; j++)
        n += counts[j];
    return n * es_of(a);
}

/* Bytes of the multi-block buffer of the block form, or of the v form. */
static uint64_t blocks_bytes(const collie_coll_args *a) {
    if (!a->v)
        return (uint64_t)a->size * a->bytes;
    if (a->coll == COLL_REDUCE_SCATTER)
        return sum(a, a->v->counts, a->size);
    return extent(a, a->v->counts, a->v->displs);
}

static uint64_t own_bytes(const collie_coll_args *a) {
    return a->v ? (uint64_t)a->v->own * es_of(a) : a->bytes;
}

static void alltoall_bytes(const collie_coll_args *a, uint64_t *send, uint64_t *recv) {
    if (!a->v) {
        *send = *recv = (uint64_t)a->size * a->bytes;
        return;
    }
    *recv = extent(a, a->v->rcounts, a->v->rdispls);
    *send = a->in_place ? *recv : extent(a, a->v->counts, a->v->displs);
}

void collie_coll_buffer_bytes(const collie_coll_args *a, int rank, uint64_t *send,
                              uint64_t *recv) {
    bool root = rank == a->root;
    uint64_t B = a->bytes;
    *send = *recv = 0;
    switch (a->coll) {
    case COLL_ALLREDUCE: case COLL_SCAN: case COLL_EXSCAN:
        *send = *recv = B;
        break;
    case COLL_REDUCE:
        *send = B;
        *recv = root || a->in_place ? B : 0;
        break;
    case COLL_BCAST:
        *recv = B;
        break;
    case COLL_ALLGATHER:
        *send = a->in_place ? 0 : own_bytes(a);
        *recv = blocks_bytes(a);
        break;
    case COLL_GATHER:
        *send = a->in_place && root ? 0 : own_bytes(a);
        *recv = root ? blocks_bytes(a) : 0;
        break;
    case COLL_SCATTER:
        *send = root ? blocks_bytes(a) : 0;
        *recv = a->in_place && root ? 0 : own_bytes(a);
        break;
    case COLL_REDUCE_SCATTER:
        *send = blocks_bytes(a);
        *recv = a->in_place ? *send : own_bytes(a);
        break;
    case COLL_ALLTOALL:
        alltoall_bytes(a, send, recv);
        break;
    default:
        break;
    }
}

static bool at(uint64_t o, uint64_t l, uint64_t *off, uint64_t *len) {
    *off = o;
    *len = l;
    return true;
}

static bool none(uint64_t *off, uint64_t *len) {
    *off = *len = 0;
    return false;
}

/* Block j of a multi-block buffer with arrays counts/displs (v form) or of a->bytes. */
static bool block_of(const collie_coll_args *a, const size_t *counts, const size_t *displs,
                     int j, uint64_t *off, uint64_t *len) {
    if (j < 0 || j >= a->size)
        return none(off, len);
    if (!a->v)
        return at((uint64_t)j * a->bytes, a->bytes, off, len);
    if (!counts)
        return none(off, len);
    uint64_t es = es_of(a);
    uint64_t o = displs ? (uint64_t)displs[j] * es : sum(a, counts, j);
    return at(o, (uint64_t)counts[j] * es, off, len);
}

static bool single(const collie_coll_args *a, uint64_t *off, uint64_t *len) {
    return at(0, own_bytes(a), off, len);
}

bool collie_coll_block(const collie_coll_args *a, int buf, int j, uint64_t *off,
                       uint64_t *len) {
    const collie_coll_v *v = a->v;
    const size_t *c = v ? v->counts : NULL, *d = v ? v->displs : NULL;
    bool recv = buf == SBUF_RECV;
    switch (a->coll) {
    case COLL_ALLGATHER: case COLL_GATHER:
        return recv ? block_of(a, c, d, j, off, len) : single(a, off, len);
    case COLL_SCATTER:
        return recv ? single(a, off, len) : block_of(a, c, d, j, off, len);
    case COLL_REDUCE_SCATTER:
        return recv ? single(a, off, len) : block_of(a, c, NULL, j, off, len);
    case COLL_ALLTOALL:
        if (recv || a->in_place)
            return block_of(a, v ? v->rcounts : NULL, v ? v->rdispls : NULL, j, off, len);
        return block_of(a, c, d, j, off, len);
    default:
        return at(0, a->bytes, off, len);
    }
}

sched_ref collie_coll_own_block(const collie_coll_args *a, uint64_t *len) {
    uint64_t off = 0;
    *len = own_bytes(a);
    if (!a->in_place)
        return sched_at(SBUF_SEND, 0);
    collie_coll_block(a, SBUF_RECV, a->rank, &off, len);
    return sched_at(SBUF_RECV, off);
}
