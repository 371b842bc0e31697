/*
 * mp_misuse.c — API misuse that must be answered with COLLIE_ERR_ARG, never a crash
 * (mode "misuse" of mp_errors; section 3 of the fault-and-misuse trials, the crash cases):
 * COLLIE_IN_PLACE as the bcast buffer (blocking, ibcast, bcast_init), collie_test with a
 * timeout below -1, a request freed twice / tested / waited / started after its free, a wild
 * op pointer and a freed user op, a count far larger than the buffer (this rank's own
 * COLLIE_ERR_ARG, not a peer blamed), then, after collie_finalize, the stale team and a
 * request planned before it.  Every rank runs the same calls, so no bad call reaches a peer;
 * a checked allreduce in between shows the team is still usable.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mp_errors.h"

static void expect(err_ctx *e, int got, int want, const char *needle, const char *what)
{
    const char *msg = collie_last_error();
    if (got != want)
        err_fail(e, "%s: returned %d (%s), expected %d (%s); message: %s", what, got,
                 collie_strerror(got), want, collie_strerror(want), msg);
    else if (needle && !err_contains(msg, needle))
        err_fail(e, "%s: message \"%s\" does not name '%s'", what, msg, needle);
}

static void usable(err_ctx *e, const char *after)
{
    int64_t s[4], r[4];
    for (int i = 0; i < 4; i++)
        s[i] = (int64_t)(e->rank + 1) * (i + 1);
    int st = collie_allreduce(e->team, s, r, 4, COLLIE_INT64, COLLIE_SUM);
    int64_t ranks = (int64_t)e->size * (e->size + 1) / 2;
    if (st != COLLIE_OK)
        err_fail(e, "allreduce after %s: %s", after, collie_last_error());
    for (int i = 0; st == COLLIE_OK && i < 4; i++)
        if (r[i] != ranks * (i + 1))
            err_fail(e, "allreduce after %s: element %d is %lld, expected %lld", after, i,
                     (long long)r[i], (long long)(ranks * (i + 1)));
}

static void in_place_bcast(err_ctx *e)
{
    collie_request_t *q = NULL;
    expect(e, collie_bcast(e->team, COLLIE_IN_PLACE, 4, COLLIE_INT32, 0), COLLIE_ERR_ARG,
           "COLLIE_IN_PLACE", "bcast(COLLIE_IN_PLACE)");
    expect(e, collie_ibcast(e->team, COLLIE_IN_PLACE, 4, COLLIE_INT32, 0, &q), COLLIE_ERR_ARG,
           "COLLIE_IN_PLACE", "ibcast(COLLIE_IN_PLACE)");
    expect(e, collie_bcast_init(e->team, COLLIE_IN_PLACE, 4, COLLIE_INT32, 0, &q),
           COLLIE_ERR_ARG, "COLLIE_IN_PLACE", "bcast_init(COLLIE_IN_PLACE)");
}

static void stale_requests(err_ctx *e)
{
    int64_t s[4] = { 1, 2, 3, 4 }, r[4];
    collie_request_t *q = NULL;
    if (collie_allreduce_init(e->team, s, r, 4, COLLIE_INT64, COLLIE_SUM, &q) != COLLIE_OK) {
        err_fail(e, "allreduce_init: %s", collie_last_error());
        return;
    }
    expect(e, collie_test(q, -5), COLLIE_ERR_ARG, "timeout", "collie_test(req, -5)");
    expect(e, collie_test(q, -2), COLLIE_ERR_ARG, "timeout", "collie_test(req, -2)");
    collie_request_free(q);
    collie_request_free(q);          /* twice: an error message, no crash */
    expect(e, COLLIE_ERR_ARG, COLLIE_ERR_ARG, "not a live request", "request_free twice");
    expect(e, collie_test(q, 0), COLLIE_ERR_ARG, "not a live request", "test on a freed request");
    expect(e, collie_wait(q), COLLIE_ERR_ARG, "not a live request", "wait on a freed request");
    expect(e, collie_start(q), COLLIE_ERR_ARG, "not a live request", "start on a freed request");
    if (collie_request_algorithm(q) != NULL)
        err_fail(e, "collie_request_algorithm on a freed request is not NULL");
}

static void noop(const void *in, void *inout, size_t n, collie_dtype_t d, void *ctx)
{
    (void)in, (void)inout, (void)n, (void)d, (void)ctx;
}

static void wild_ops(err_ctx *e)
{
    static uint64_t garbage[32];
    int64_t s[4] = { 0 }, r[4];
    memset(garbage, 0xA5, sizeof garbage);
    expect(e, collie_allreduce(e->team, s, r, 4, COLLIE_INT64, (collie_op_t)0x10),
           COLLIE_ERR_ARG, "op", "op (collie_op_t)0x10");
    expect(e, collie_allreduce(e->team, s, r, 4, COLLIE_INT64, (collie_op_t)(void *)garbage),
           COLLIE_ERR_ARG, "op", "op pointing at garbage");
    collie_op_t op = NULL;
    if (collie_op_create(noop, NULL, COLLIE_OP_COMMUTATIVE, &op))
        err_fail(e, "op_create: %s", collie_last_error());
    collie_op_free(op);
    collie_op_free(op);              /* twice: no crash */
    expect(e, collie_allreduce(e->team, s, r, 4, COLLIE_INT64, op), COLLIE_ERR_ARG, "op",
           "a freed user op");
}

/* 2^40 elements of a 256-byte buffer: this rank's argument error, before any peer is asked. */
static void count_beyond_buffer(err_ctx *e)
{
    static char small[256];
    size_t huge = (size_t)1 << 40;
    expect(e, collie_allreduce(e->team, small, small + 128, huge, COLLIE_UINT8, COLLIE_SUM),
           COLLIE_ERR_ARG, "not mapped", "allreduce count 2^40, 256 B buffers");
    expect(e, collie_bcast(e->team, small, huge, COLLIE_UINT8, 0), COLLIE_ERR_ARG,
           "not mapped", "bcast count 2^40, 256 B buffer");
    expect(e, collie_reduce(e->team, small, small + 128, huge / 8, COLLIE_INT64, COLLIE_SUM, 0),
           COLLIE_ERR_ARG, "not mapped", "reduce count 2^37 int64, 256 B buffers");
}

/* One buffer of two runs past the end of its mapping (the other is whole): the error names
 * that one, whether the two lie side by side (api_check.c first checks such a pair in one
 * go) or apart.  Two valid buffers with a hole between them are no error. */
static void one_buffer_short(err_ctx *e)
{
    size_t n = 256 * 1024, half = n / 2;
    int64_t *whole = malloc(n);
    char *left = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!whole || left == MAP_FAILED)
        err_fail(e, "cannot allocate the buffers of one_buffer_short");
    /* left: half, then a hole of half, then `right`: half, then a hole */
    munmap(left + half, n + half);
    char *right = mmap(left + n, half, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (right == MAP_FAILED)
        err_fail(e, "cannot map the second half of one_buffer_short");
    memset(whole, 0, n);
    expect(e, collie_allreduce(e->team, whole, left, n / 8, COLLIE_INT64, COLLIE_SUM),
           COLLIE_ERR_ARG, "recvbuf", "allreduce, recvbuf mapped for half the count");
    expect(e, collie_allreduce(e->team, left, whole, n / 8, COLLIE_INT64, COLLIE_SUM),
           COLLIE_ERR_ARG, "sendbuf", "allreduce, sendbuf mapped for half the count");
    expect(e, collie_allreduce(e->team, left, right, n / 8, COLLIE_INT64, COLLIE_SUM),
           COLLIE_ERR_ARG, "sendbuf", "allreduce, both mapped for half, side by side");
    size_t block = half / (size_t)e->size / 8 * 8;   /* every rank's block fits in `right` */
    if (block >= 64 * 1024) {
        int64_t *mine = (int64_t *)left, *all = (int64_t *)right;
        for (size_t i = 0; i < block / 8; i++)
            mine[i] = (int64_t)(e->rank * 1000003 + (int)i);
        expect(e, collie_allgather(e->team, mine, all, block / 8, COLLIE_INT64), COLLIE_OK,
               NULL, "allgather between two valid buffers with a hole between them");
        for (int q = 0; q < e->size; q++)
            for (size_t i = 0; i < block / 8; i++)
                if (all[(size_t)q * (block / 8) + i] != (int64_t)(q * 1000003 + (int)i)) {
                    err_fail(e, "allgather around a hole: block %d element %zu wrong", q, i);
                    q = e->size;
                    break;
                }
    }
    munmap(right, half);
    munmap(left, half);
    free(whole);
}

/* A buffer found mapped for one count (api_check.c remembers the range) is checked again
 * for a larger count that runs past its mapping. */
static void mapped_then_longer(err_ctx *e)
{
    size_t n = 1 << 20;
    char *p = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        err_fail(e, "cannot map the buffer of mapped_then_longer");
        return;
    }
    munmap(p + n, n);
    memset(p, 1, n);
    for (int rep = 0; rep < 2; rep++)
        expect(e, collie_bcast(e->team, p, n, COLLIE_UINT8, 0), COLLIE_OK, NULL,
               "bcast of a whole 1 MiB mapping");
    expect(e, collie_bcast(e->team, p, 2 * n, COLLIE_UINT8, 0), COLLIE_ERR_ARG, "not mapped",
           "bcast of 2 MiB from a 1 MiB mapping that a 1 MiB bcast found mapped");
    munmap(p, n);
}

static void after_finalize(err_ctx *e)
{
    int64_t s[4] = { 0 }, r[4];
    collie_request_t *q = NULL;
    if (collie_barrier_init(e->team, &q) != COLLIE_OK)
        err_fail(e, "barrier_init: %s", collie_last_error());
    collie_team_t *stale = e->team;
    if (collie_finalize() != COLLIE_OK)
        err_fail(e, "finalize: %s", collie_last_error());
    expect(e, collie_allreduce(stale, s, r, 4, COLLIE_INT64, COLLIE_SUM), COLLIE_ERR_ARG,
           "not a live team", "allreduce on the team after finalize");
    expect(e, collie_barrier(stale), COLLIE_ERR_ARG, "not a live team", "barrier after finalize");
    expect(e, collie_rank(stale), COLLIE_ERR_ARG, "not a live team", "collie_rank after finalize");
    if (collie_alloc(stale, 64) != NULL)
        err_fail(e, "collie_alloc on a finalized team returned memory");
    expect(e, collie_start(q), COLLIE_ERR_ARG, "finalized", "start a request after finalize");
    collie_request_free(q);          /* frees it without touching the team */
    expect(e, collie_test(q, 0), COLLIE_ERR_ARG, "not a live request", "test after its free");
    e->team = NULL;
}

int err_test_misuse(err_ctx *e)
{
    in_place_bcast(e);
    usable(e, "IN_PLACE bcast");
    stale_requests(e);
    usable(e, "stale requests");
    wild_ops(e);
    count_beyond_buffer(e);
    one_buffer_short(e);
    mapped_then_longer(e);
    usable(e, "wild ops and huge counts");
    after_finalize(e);
    return e->failures ? 1 : 0;
}
