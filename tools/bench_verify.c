/*
 * bench_verify.c — collie-bench --check and --fresh-data: the exact inputs of a size's
 * checked call and the comparison of its result (allreduce, reduce, bcast here; the other
 * collectives in bench_colls_check.h), and with --fresh-data new inputs before every timed
 * call and the last call's result checked; --use-result's read of the result.  Values:
 * bench_check.h.
 */
#include <string.h>

#include "bench.h"

/* The buffer a call reads its input from on this rank; NULL when it has none (bcast
 * off the root). */
static void *input_buf(const bench *b) {
    if (b->o.coll == COLL_BCAST)
        return b->rank == b->o.root ? b->rbuf : NULL;
    return send_ptr(b) == COLLIE_IN_PLACE ? b->rbuf : b->sbuf;
}

/* --fresh-data: new input values for the next call (numbered b->calls), untimed; the
 * caller's barrier follows, so no rank's timing sees the rewrite. */
void fresh_input(bench *b, size_t count) {
    void *in = input_buf(b);
    if (more_coll(b->o.coll))
        more_fill_fresh(b, count, b->calls);   /* bench_colls_check.h */
    else if (in)
        bench_fill_fresh(in, count, more_opid(b), b->o.dtype, b->P, b->rank, b->calls);
    b->calls++;
}

/* Declared in bench.h. */
void use_result(const bench *b, size_t count) {
    size_t n = count;
    const char *out = more_coll(b->o.coll) ? more_result(b, count, &n) : b->rbuf;
    if (b->o.coll == COLL_REDUCE && b->rank != b->o.root)
        n = 0;
    size_t bytes = n * b->esz;
    uint64_t acc = 0;
    for (size_t at = 0; at + sizeof acc <= bytes; at += 64) {
        uint64_t v;
        memcpy(&v, out + at, sizeof v);
        acc += v;
    }
    static volatile uint64_t sink;
    sink += acc;
}

static void fill_check_inputs(const bench *b, size_t count) {
    int opid = more_opid(b);
    bool own_input = b->o.coll != COLL_BCAST || b->rank == b->o.root;
    void *in = send_ptr(b) == COLLIE_IN_PLACE || b->o.coll == COLL_BCAST ? b->rbuf : b->sbuf;
    if (in != b->rbuf || !own_input)
        memset(b->rbuf, 0xA5, count * b->esz);
    for (size_t i = 0; own_input && i < count; i++)
        bench_put(in, i, b->o.dtype, bench_input(opid, b->o.dtype, b->P, b->rank, i));
}

/* Index of the first wrong result element on this rank, or -1. */
static long first_mismatch(const bench *b, size_t count) {
    if (b->o.coll == COLL_REDUCE && b->rank != b->o.root)
        return -1;
    for (size_t i = 0; i < count; i++) {
        double want = (double)bench_expected(more_opid(b), b->o.dtype, b->P, b->o.root, i);
        if (bench_get(b->rbuf, i, b->o.dtype) != want)
            return (long)i;
    }
    return -1;
}

/* --fresh-data --check: the result of the last timed call (numbered b->calls - 1) against
 * its expected values; called right after timing, before anything rewrites the buffers. */
void check_fresh(bench *b, size_t count, const char *used) {
    if (more_coll(b->o.coll))
        more_verify(b, count, true, used);
    if (more_coll(b->o.coll) || (b->o.coll == COLL_REDUCE && b->rank != b->o.root))
        return;
    uint64_t salt = b->calls - 1;
    for (size_t i = 0; i < count; i++) {
        double want = (double)bench_fresh_expected(more_opid(b), b->o.dtype, b->P, b->o.root,
                                                   i, salt);
        double got = bench_get(b->rbuf, i, b->o.dtype);
        if (got == want)
            continue;
        fprintf(stderr, "collie-bench: rank %d: fresh-data check failed (%s, %zu elements, %s,"
                " call %llu): index %zu: got %g, expected %g\n", b->rank,
                collie_coll_name(b->o.coll), count, used, (unsigned long long)salt, i, got, want);
        b->check_failed = true;
        return;
    }
}

void check_size(bench *b, collie_request_t *req, size_t count, const char *used) {
    bool more = more_coll(b->o.coll);
    if (more)
        more_fill_check_inputs(b, count);
    else
        fill_check_inputs(b, count);
    must(b, run_once(b, req, count));
    if (more)
        more_verify(b, count, false, used);
    long bad = more ? -1 : first_mismatch(b, count);
    if (bad >= 0) {
        double want = (double)bench_expected(more_opid(b), b->o.dtype, b->P, b->o.root,
                                             (size_t)bad);
        fprintf(stderr, "collie-bench: rank %d: check failed (%s, %zu elements, %s): index %ld:"
                " got %g, expected %g\n", b->rank, collie_coll_name(b->o.coll), count, used,
                bad, bench_get(b->rbuf, (size_t)bad, b->o.dtype), want);
        b->check_failed = true;
    }
    memset(b->sbuf, 0, b->buf_bytes);   /* keep later in-place timing free of growth */
    memset(b->rbuf, 0, b->buf_bytes);
}
