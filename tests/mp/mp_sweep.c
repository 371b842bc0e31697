/*
 * mp_sweep.c — the main sweep: counts × every datatype × every op defined for it (built-in
 * and the two user-defined ops) × in place or not × roots, for one collective.
 * MP_QUICK (many ranks on few cores) runs one (in_place, root) variant per case instead
 * of all, MP_NORMAL does so for the large count only; MP_LONG runs every variant, more
 * counts, and the large count for every (type, op).
 */
#include <stdio.h>
#include <string.h>
#include "mp_common.h"

#define MAX_COUNTS 24
#define BIG_COUNT 100003

typedef struct count_list {
    size_t v[MAX_COUNTS];
    int n;
} count_list;

static void add_count(count_list *l, size_t n)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == n)
            return;
    if (l->n < MAX_COUNTS)
        l->v[l->n++] = n;
}

static count_list small_counts(const mp_ctx *c)
{
    static const size_t extra[] = { 2, 3, 7, 8, 9, 63, 64, 65, 255, 1000, 1024, 4095, 4097 };
    count_list l = { { 0 }, 0 };
    add_count(&l, 0);
    add_count(&l, 1);
    add_count(&l, (size_t)c->size - 1);
    add_count(&l, (size_t)c->size);
    add_count(&l, 1023);
    if (c->level == MP_LONG)
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            add_count(&l, extra[i]);
    return l;
}

/* (type, op) pairs that also run with BIG_COUNT elements outside MP_LONG. */
static bool big_pair(const mp_ctx *c, const mp_type *t, int opid)
{
    if (c->level == MP_LONG)
        return true;
    if (t->kind == MK_F64 && opid == COLLIE_OPID_SUM)
        return true;
    if (c->level == MP_QUICK)
        return false;
    return (t->kind == MK_F16 && opid == COLLIE_OPID_SUM) ||
           (t->id == COLLIE_INT32 && opid == COLLIE_OPID_BXOR) ||
           (t->id == COLLIE_UINT64 && opid == COLLIE_OPID_PROD) ||
           (t->kind == MK_PAIR_F32 && opid == COLLIE_OPID_MINLOC) ||
           (t->kind == MK_USER_MAT);
}

static int roots(const mp_ctx *c, int coll, int out[3])
{
    if (coll == MPC_ALLREDUCE) {
        out[0] = 0;
        return 1;
    }
    int n = 0, cand[3] = { 0, c->size - 1, c->size / 2 };
    for (int i = 0; i < 3; i++) {
        bool dup = false;
        for (int j = 0; j < n; j++)
            dup = dup || out[j] == cand[i];
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

static const char *describe(const mp_case *k)
{
    static char desc[200];
    mp_describe(k, desc, sizeof desc);
    return desc;
}

/* Runs the variants (in place or not × roots) of one (type, op, count). */
static void run_variants(mp_ctx *c, mp_case *k, uint64_t *seq)
{
    int r[3], nr = roots(c, k->coll, r);
    int nvar = (k->coll == MPC_BCAST ? 1 : 2) * nr;
    uint64_t pick = *seq % (uint64_t)nvar;
    bool one = c->level == MP_QUICK || (c->level == MP_NORMAL && k->count == BIG_COUNT);
    for (int v = 0; v < nvar; v++) {
        if (one && (uint64_t)v != pick)
            continue;
        (*seq)++;
        k->root = r[v % nr];
        k->in_place = v >= nr;
        k->seed = 1000u + *seq;
        if (!c->filter || strstr(describe(k), c->filter))
            mp_run_case(c, k);
    }
}

static void sweep_type_op(mp_ctx *c, int coll, const mp_type *t, int opid, uint64_t *seq)
{
    count_list l = small_counts(c);
    mp_case k = { coll, t, opid, 0, false, 0, 0 };
    if (big_pair(c, t, opid))
        add_count(&l, BIG_COUNT);
    for (int i = 0; i < l.n; i++) {
        k.count = l.v[i];
        run_variants(c, &k, seq);
    }
}

void mp_sweep(mp_ctx *c, int coll)
{
    uint64_t seq = 0;
    for (size_t ti = 0; ti < mp_ntypes; ti++) {
        const mp_type *t = &mp_types[ti];
        bool user = t->kind == MK_USER_MAT || t->kind == MK_USER_COMM;
        if (coll == MPC_BCAST) {
            if (!user)
                sweep_type_op(c, coll, t, COLLIE_OPID_SUM, &seq);
            continue;
        }
        for (int opid = 0; opid <= MP_OP_USER; opid++)
            if (mp_op_defined(t, opid))
                sweep_type_op(c, coll, t, opid, &seq);
    }
    if (mp_user_op_misuse() != 0)
        mp_fail(c, "user ops were called %ld times with a wrong dtype or ctx",
                mp_user_op_misuse());
}
