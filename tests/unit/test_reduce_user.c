/*
 * test_reduce_user.c — collie_reduce_n with user-defined operations: operand order,
 * right-to-left association and aliasing (dst one of the sources), checked against
 * references computed here: 2×2 matrix products mod 65521 (associative, not commutative)
 * and subtraction (neither), for 1..11 sources, many counts and element sizes.  The
 * built-in operations: test_reduce.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/base.h"
#include "types/types.h"

#include "check.h"
#include "rng.h"

#define MAX_SRC 11

static const size_t counts[] = { 0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 63, 64, 65, 1000, 4099 };
#define NCOUNTS (sizeof counts / sizeof counts[0])

#define MOD 65521u
static int user_aliased_calls;

/* out = a · b for 2×2 matrices (4 × uint32, row-major) mod 65521; out may be a or b. */
static void mat2_mul(const uint32_t *a, const uint32_t *b, uint32_t *out) {
    uint32_t r[4];
    for (int e = 0; e < 4; e++)
        r[e] = (uint32_t)(((uint64_t)a[e & 2] * b[e & 1] +
                           (uint64_t)a[(e & 2) + 1] * b[2 + (e & 1)]) % MOD);
    memcpy(out, r, sizeof r);
}

/* inout = in · inout for every matrix in the elements. */
static void matmul_fn(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    (void)ctx;
    user_aliased_calls += in == inout;
    uint32_t *b = inout;
    for (size_t m = 0; m < count * collie_dtype_size(dt) / 16; m++)
        mat2_mul((const uint32_t *)in + 4 * m, b + 4 * m, b + 4 * m);
}

static void sub_fn(const void *in, void *inout, size_t count, collie_dtype_t dt, void *ctx) {
    (void)ctx, (void)dt;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (size_t i = 0; i < count; i++)
        b[i] = a[i] - b[i];
}

static void user_case(collie_op_t op, collie_dtype_t dt, int nsrc, size_t count, int alias_at,
                      int is_matmul) {
    size_t w = collie_dtype_size(dt), words = count * w / 4;
    uint32_t *buf[MAX_SRC], *want = malloc(words * 4 + 4), *dbuf = malloc(words * 4 + 4);
    for (int k = 0; k < nsrc; k++) {
        buf[k] = malloc(words * 4 + 4);
        for (size_t i = 0; i < words; i++)
            buf[k][i] = (uint32_t)(test_rnd() % MOD);
    }
    /* references: subtraction right to left, s0 - (s1 - (…)); matrices left to right */
    memcpy(want, buf[nsrc - 1], words * 4);
    for (int k = nsrc - 2; k >= 0 && !is_matmul; k--)
        for (size_t i = 0; i < words; i++)
            want[i] = buf[k][i] - want[i];
    if (is_matmul) {
        memcpy(want, buf[0], words * 4);
        for (size_t i = 0; i + 4 <= words; i += 4)
            for (int k = 1; k < nsrc; k++)
                mat2_mul(want + i, buf[k] + i, want + i);
    }
    void *dst = alias_at >= 0 ? (void *)buf[alias_at] : (void *)dbuf;
    user_aliased_calls = 0;
    collie_reduce_n(dst, (const void *const *)buf, nsrc, count, dt, op);
    check(memcmp(dst, want, words * 4) == 0, "user op %s nsrc=%d count=%zu size=%zu alias=%d",
          is_matmul ? "matmul" : "subtract", nsrc, count, w, alias_at);
    check(user_aliased_calls == 0, "user fn called with in == inout");
    for (int k = 0; k < nsrc; k++)
        free(buf[k]);
    free(want), free(dbuf);
}

static void user_ops(void) {
    collie_op_t mat, sub;
    check(collie_op_create(matmul_fn, NULL, 0, &mat) == COLLIE_OK, "create matmul op");
    check(collie_op_create(sub_fn, NULL, 0, &sub) == COLLIE_OK, "create subtract op");
    for (int nsrc = 1; nsrc <= 11; nsrc++) {
        const int aliases[] = { -1, 0, nsrc - 1, nsrc / 2 };
        for (size_t ci = 0; ci < NCOUNTS; ci++)
            for (int a = 0; a < 4; a++)
                user_case(mat, collie_dtype_bytes(16), nsrc, counts[ci], aliases[a], 1);
        for (int a = 0; a < 4; a++) {
            user_case(mat, collie_dtype_bytes(16 * 2500), nsrc, 3, aliases[a], 1);
            user_case(sub, collie_dtype_bytes(4), nsrc, 5000, aliases[a], 0);
        }
    }
    collie_op_free(mat);
    collie_op_free(sub);
}


int main(void) {
    collie_log_level_ = -1;
    user_ops();
    if (failures) {
        fprintf(stderr, "test_reduce_user: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce_user: ok\n");
    return 0;
}
