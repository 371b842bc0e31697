/*
 * mp_assoc.c — floating-point sums whose value depends on the association: per element one
 * rank holds BIG, another -BIG, some others TINY (BIG + TINY == BIG).  Every valid
 * association gives k * TINY with 0 <= k <= (number of TINYs); all ranks must get the
 * bitwise identical result.  Each rank writes its allreduce result to
 * DIR/assoc_<type>_<count>_r<rank>.bin; run_matrix.sh compares the files after the run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mp_common.h"

typedef struct assoc_case {
    collie_dtype_t dtype;
    const char *name;
    double big;           /* a power of two with BIG + 1 == BIG in the type */
    size_t count;
} assoc_case;

/* Rank r's input at element i (TINY == 1). */
static double assoc_input(int rank, size_t i, int nranks, double big, int *tiny)
{
    int a = (int)(mp_hash(51, -1, i, 1) % (uint64_t)nranks);
    int b = (int)(mp_hash(51, -1, i, 2) % (uint64_t)nranks);
    if (nranks > 1 && b == a)
        b = (a + 1) % nranks;
    *tiny = 0;
    if (rank == a)
        return big;
    if (rank == b)
        return -big;
    *tiny = (int)(mp_hash(51, rank, i, 3) & 1);
    return *tiny;
}

static void fill(const assoc_case *ac, void *buf, int rank, int nranks)
{
    int tiny;
    for (size_t i = 0; i < ac->count; i++) {
        double v = assoc_input(rank, i, nranks, ac->big, &tiny);
        if (ac->dtype == COLLIE_FLOAT64)
            ((double *)buf)[i] = v;
        else
            ((float *)buf)[i] = (float)v;
    }
}

static double element(const assoc_case *ac, const void *buf, size_t i)
{
    return ac->dtype == COLLIE_FLOAT64 ? ((const double *)buf)[i] : ((const float *)buf)[i];
}

/* The result must be k * TINY with 0 <= k <= number of TINYs (P == 1: the input). */
static void check_range(mp_ctx *c, const assoc_case *ac, const void *buf, const char *what)
{
    c->checks++;
    for (size_t i = 0; i < ac->count; i++) {
        int ntiny = 0, t;
        double only = 0.0;
        for (int r = 0; r < c->size; r++) {
            only = assoc_input(r, i, c->size, ac->big, &t);
            ntiny += t;
        }
        double v = element(ac, buf, i);
        bool ok = c->size == 1 ? v == only : (v == floor(v) && v >= 0 && v <= ntiny);
        if (!ok) {
            mp_fail(c, "%s %s count=%zu: element %zu is %.17g, not an association of "
                    "BIG, -BIG and %d TINYs", what, ac->name, ac->count, i, v, ntiny);
            return;
        }
    }
}

static void write_result(mp_ctx *c, const assoc_case *ac, const void *buf, size_t bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/assoc_%s_%zu_r%d.bin", c->dir, ac->name, ac->count,
             c->rank);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, bytes, f) != bytes)
        mp_fail(c, "cannot write %s", path);
    if (f)
        fclose(f);
}

static void assoc_one(mp_ctx *c, int coll, const assoc_case *ac)
{
    size_t bytes = ac->count * collie_dtype_size(ac->dtype);
    void *send = malloc(bytes + 1), *recv = malloc(bytes + 1);
    int root = c->size / 2, st;
    fill(ac, send, c->rank, c->size);
    memset(recv, 0, bytes);
    if (coll == MPC_ALLREDUCE)
        st = collie_allreduce(c->team, send, recv, ac->count, ac->dtype, COLLIE_SUM);
    else
        st = collie_reduce(c->team, send, recv, ac->count, ac->dtype, COLLIE_SUM, root);
    if (st != COLLIE_OK)
        mp_die(c, st, "association sum");
    if (coll == MPC_ALLREDUCE || c->rank == root)
        check_range(c, ac, recv, coll == MPC_ALLREDUCE ? "allreduce" : "reduce");
    if (coll == MPC_ALLREDUCE)
        write_result(c, ac, recv, bytes);
    free(send);
    free(recv);
}

void mp_test_association(mp_ctx *c, int coll)
{
    assoc_case cases[] = {
        { COLLIE_FLOAT64, "float64", 1152921504606846976.0 /* 2^60 */, 1023 },
        { COLLIE_FLOAT32, "float32", 1073741824.0 /* 2^30 */, 1023 },
        { COLLIE_FLOAT64, "float64", 1152921504606846976.0, 100003 },
        { COLLIE_FLOAT32, "float32", 1073741824.0, (size_t)c->size * 3 + 1 },
    };
    size_t n = c->level == MP_QUICK ? 2 : sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++)
        assoc_one(c, coll, &cases[i]);
}
