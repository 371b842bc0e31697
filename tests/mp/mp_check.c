/*
 * mp_check.c — running one test case of a sweep: buffers with guard zones, inputs,
 * the call, and the comparison with the reference; failure reporting.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mp_common.h"

#define GUARD 64
#define GUARD_BYTE 0x5a
#define POISON_BYTE 0xa5
#define MAX_PRINTS 40
#define MAX_ELEMENT_REPORTS 3

void mp_fail(mp_ctx *c, const char *fmt, ...)
{
    c->failures++;
    if (c->prints++ >= MAX_PRINTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[rank %d] FAIL algo=%s P=%d: ", c->rank, c->algo, c->size);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void mp_die(mp_ctx *c, int status, const char *what)
{
    fprintf(stderr, "[rank %d] ERROR algo=%s P=%d: %s returned %d (%s): %s\n", c->rank,
            c->algo, c->size, what, status, collie_strerror(status), collie_last_error());
    fflush(stderr);
    exit(2);
}

static const char *coll_name(int coll)
{
    static const char *const names[] = { "allreduce", "reduce", "bcast", "barrier" };
    return names[coll];
}

void mp_describe(const mp_case *k, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s type=%s op=%s count=%zu in_place=%d root=%d seed=%llu",
             coll_name(k->coll), k->t->name, mp_op_name(k->opid), k->count, (int)k->in_place,
             k->root, (unsigned long long)k->seed);
}

void *mp_guarded_alloc(size_t bytes)
{
    size_t total = (bytes + 2 * GUARD + 63) / 64 * 64;
    char *base = aligned_alloc(64, total);
    if (!base) {
        fprintf(stderr, "mp: out of memory (%zu bytes)\n", bytes);
        exit(3);
    }
    memset(base, GUARD_BYTE, total);
    return base + GUARD;
}

void *mp_guarded_collie_alloc(collie_team_t *team, size_t bytes)
{
    size_t total = (bytes + 2 * GUARD + 63) / 64 * 64;
    char *base = collie_alloc(team, total);
    if (!base) {
        fprintf(stderr, "mp: collie_alloc(%zu) failed: %s\n", total, collie_last_error());
        exit(3);
    }
    memset(base, GUARD_BYTE, total);
    return base + GUARD;
}

void mp_guarded_free(void *p)
{
    if (p)
        free((char *)p - GUARD);
}

bool mp_guards_ok(const void *p, size_t bytes)
{
    const unsigned char *q = p;
    for (size_t j = 1; j <= GUARD; j++)
        if (q[-(ptrdiff_t)j] != GUARD_BYTE || q[bytes + j - 1] != GUARD_BYTE)
            return false;
    return true;
}

void mp_poison(void *buf, size_t bytes)
{
    memset(buf, POISON_BYTE, bytes);
}

void mp_verify_reduction(mp_ctx *c, const mp_case *k, const void *buf)
{
    size_t bad = 0, first = 0;
    char got_s[64], exp_s[64], desc[200];
    mp_describe(k, desc, sizeof desc);
    c->checks++;
    for (size_t i = 0; i < k->count; i++) {
        mp_val got = mp_load(k->t, buf, i);
        mp_val exp = mp_expected(k->t, k->opid, i, c->size, k->seed);
        if (mp_equal(k->t, got, exp))
            continue;
        if (bad++ == 0)
            first = i;
        if (bad > MAX_ELEMENT_REPORTS)
            continue;
        mp_format(k->t, got, got_s, sizeof got_s);
        mp_format(k->t, exp, exp_s, sizeof exp_s);
        mp_fail(c, "%s: element %zu is %s, expected %s", desc, i, got_s, exp_s);
    }
    if (bad > MAX_ELEMENT_REPORTS)
        mp_fail(c, "%s: %zu wrong elements in all (first at %zu)", desc, bad, first);
}

/* Root's bytes: a hash of (seed, root, byte index). */
static unsigned char bcast_byte(const mp_case *k, size_t j)
{
    return (unsigned char)(mp_hash(k->seed, k->root, j / 8, 7) >> (8 * (j % 8)));
}

static void verify_bcast(mp_ctx *c, const mp_case *k, const char *buf, size_t bytes)
{
    char desc[200];
    c->checks++;
    for (size_t j = 0; j < bytes; j++) {
        if ((unsigned char)buf[j] != bcast_byte(k, j)) {
            mp_describe(k, desc, sizeof desc);
            mp_fail(c, "%s: byte %zu is 0x%02x, expected 0x%02x", desc, j,
                    (unsigned char)buf[j], bcast_byte(k, j));
            return;
        }
    }
}

void mp_bufs_alloc(mp_ctx *c, const mp_case *k, mp_bufs *b)
{
    b->bytes = k->count * k->t->size;
    bool reg = c->alloc == MP_ALLOC_COLLIE ||
               (c->alloc == MP_ALLOC_MIXED && mp_hash(k->seed, c->rank, k->count, 11) % 4 != 0);
    b->team = reg ? c->team : NULL;
    b->send = reg ? mp_guarded_collie_alloc(c->team, b->bytes) : mp_guarded_alloc(b->bytes);
    b->recv = reg ? mp_guarded_collie_alloc(c->team, b->bytes) : mp_guarded_alloc(b->bytes);
    b->copy = malloc(b->bytes + 1);
    /* MPI convention: only the root of a reduce passes IN_PLACE. */
    b->in_place = k->in_place && k->coll != MPC_BCAST &&
                  (k->coll == MPC_ALLREDUCE || c->rank == k->root);
}

void mp_bufs_fill(mp_ctx *c, const mp_case *k, mp_bufs *b)
{
    if (k->coll == MPC_BCAST) {
        for (size_t j = 0; j < b->bytes; j++)
            b->recv[j] = (char)(c->rank == k->root ? bcast_byte(k, j) : POISON_BYTE);
        return;
    }
    char *in = b->in_place ? b->recv : b->send;
    for (size_t i = 0; i < k->count; i++)
        mp_store(k->t, in, i, mp_gen(k->t, k->opid, c->rank, i, c->size, k->seed));
    if (!b->in_place)
        mp_poison(b->recv, b->bytes);
    memcpy(b->copy, b->send, b->bytes);
}

void mp_bufs_check(mp_ctx *c, const mp_case *k, mp_bufs *b)
{
    char desc[200];
    mp_describe(k, desc, sizeof desc);
    if (k->coll == MPC_BCAST)
        verify_bcast(c, k, b->recv, b->bytes);
    else if (k->coll == MPC_ALLREDUCE || c->rank == k->root)
        mp_verify_reduction(c, k, b->recv);
    if (k->coll != MPC_BCAST && !b->in_place && memcmp(b->copy, b->send, b->bytes) != 0)
        mp_fail(c, "%s: the send buffer was modified", desc);
    if (!mp_guards_ok(b->send, b->bytes) || !mp_guards_ok(b->recv, b->bytes))
        mp_fail(c, "%s: memory written outside the buffers", desc);
}

void mp_bufs_free(mp_bufs *b)
{
    if (b->team) {
        collie_free(b->team, b->send - GUARD);
        collie_free(b->team, b->recv - GUARD);
    } else {
        mp_guarded_free(b->send);
        mp_guarded_free(b->recv);
    }
    b->team = NULL;
    free(b->copy);
    b->send = b->recv = b->copy = NULL;
}

static const void *send_arg(const mp_bufs *b)
{
    return b->in_place ? COLLIE_IN_PLACE : b->send;
}

int mp_call(mp_ctx *c, const mp_case *k, mp_bufs *b)
{
    collie_op_t op = k->coll == MPC_BCAST ? NULL : mp_op_handle(k->t, k->opid);
    switch (k->coll) {
    case MPC_ALLREDUCE:
        return collie_allreduce(c->team, send_arg(b), b->recv, k->count, k->t->id, op);
    case MPC_REDUCE:
        return collie_reduce(c->team, send_arg(b), b->recv, k->count, k->t->id, op, k->root);
    default:
        return collie_bcast(c->team, b->recv, k->count, k->t->id, k->root);
    }
}

int mp_call_start(mp_ctx *c, const mp_case *k, mp_bufs *b, collie_request_t **req)
{
    collie_op_t op = k->coll == MPC_BCAST ? NULL : mp_op_handle(k->t, k->opid);
    switch (k->coll) {
    case MPC_ALLREDUCE:
        return collie_iallreduce(c->team, send_arg(b), b->recv, k->count, k->t->id, op, req);
    case MPC_REDUCE:
        return collie_ireduce(c->team, send_arg(b), b->recv, k->count, k->t->id, op, k->root,
                              req);
    default:
        return collie_ibcast(c->team, b->recv, k->count, k->t->id, k->root, req);
    }
}

int mp_call_init(mp_ctx *c, const mp_case *k, mp_bufs *b, collie_request_t **req)
{
    collie_op_t op = k->coll == MPC_BCAST ? NULL : mp_op_handle(k->t, k->opid);
    switch (k->coll) {
    case MPC_ALLREDUCE:
        return collie_allreduce_init(c->team, send_arg(b), b->recv, k->count, k->t->id, op,
                                     req);
    case MPC_REDUCE:
        return collie_reduce_init(c->team, send_arg(b), b->recv, k->count, k->t->id, op,
                                  k->root, req);
    default:
        return collie_bcast_init(c->team, b->recv, k->count, k->t->id, k->root, req);
    }
}

void mp_run_case(mp_ctx *c, const mp_case *k)
{
    mp_bufs b;
    char desc[200];
    mp_bufs_alloc(c, k, &b);
    mp_bufs_fill(c, k, &b);
    int st = mp_call(c, k, &b);
    if (st != COLLIE_OK) {
        mp_describe(k, desc, sizeof desc);
        mp_die(c, st, desc);
    }
    mp_bufs_check(c, k, &b);
    mp_bufs_free(&b);
}
