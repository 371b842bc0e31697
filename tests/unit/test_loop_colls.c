/*
 * test_loop_colls.c — every registered algorithm (forced; one that declines a call lets
 * another run, whose result is checked the same) of allgather, reduce_scatter, alltoall,
 * gather, scatter, scan and exscan, run for real (real executor, real reduction kernels) on
 * P virtual ranks of the in-process transport, block forms, in place or not, roots 0 and
 * P-1, against a reference computed here (int64 values that name their origin; exact int64
 * sums).  Small slots (COLLIE_SHM_SLOT_BYTES=256) so that messages span many chunks.  Runs
 * under ASan/UBSan in CI (label unit); the v forms, user ops and the public API are
 * checked on processes by tests/mp/mp_colls.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/internal.h"
#include "types/types.h"

#define MAXP 8
static int failures, cases;

static int64_t dval(int q, size_t i) { return (int64_t)q * 1000003 + (int64_t)i + 1; }
static int64_t sval(int q, size_t i) { return (int64_t)((q * 7 + (int)i * 3) % 11) - 5; }

typedef struct tcase {
    int coll, P, root;
    size_t n;
    bool in_place;
    const collie_algorithm *alg;
} tcase;

static void fail(const tcase *t, int rank, size_t i, const char *what) {
    if (failures++ < 20)
        printf("FAIL %s/%s P=%d n=%zu root=%d in_place=%d rank %d element %zu: %s\n",
               collie_coll_name(t->coll), t->alg->name, t->P, t->n, t->root, t->in_place, rank, i,
               what);
}

/* Whether this rank is in place (gather, scatter: the root only). */
static bool ip_of(const tcase *t, int r) {
    return t->in_place && ((t->coll != COLL_GATHER && t->coll != COLL_SCATTER) || r == t->root);
}

/* Inputs of rank r: its send buffer, or in place its receive buffer. */
static void fill(const tcase *t, int r, int64_t *send, int64_t *recv) {
    size_t n = t->n, P = (size_t)t->P;
    bool ip = ip_of(t, r);
    for (size_t i = 0; i < P * n; i++)
        recv[i] = -7;
    switch (t->coll) {
    case COLL_ALLGATHER: case COLL_GATHER:
        for (size_t e = 0; e < n; e++)
            (ip ? recv + (size_t)r * n : send)[e] = dval(r, e);
        break;
    case COLL_ALLTOALL: case COLL_SCATTER:
        for (size_t i = 0; i < P * n; i++)
            (ip && t->coll == COLL_ALLTOALL ? recv : send)[i] = dval(r, i);
        break;
    case COLL_REDUCE_SCATTER:
        for (size_t i = 0; i < P * n; i++)
            (ip ? recv : send)[i] = sval(r, i);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            (ip ? recv : send)[i] = sval(r, i);
    }
}

static int64_t sum(int lo, int hi, size_t i) {
    int64_t s = 0;
    for (int q = lo; q < hi; q++)
        s += sval(q, i);
    return s;
}

/* Expected element i of rank r's receive buffer; false where nothing is expected. */
static bool expect(const tcase *t, int r, size_t i, int64_t *want) {
    size_t n = t->n, j = n ? i / n : 0, e = n ? i % n : 0;
    bool root = r == t->root;
    switch (t->coll) {
    case COLL_ALLGATHER: *want = dval((int)j, e); return i < (size_t)t->P * n;
    case COLL_GATHER: *want = dval((int)j, e); return root && i < (size_t)t->P * n;
    case COLL_ALLTOALL: *want = dval((int)j, (size_t)r * n + e); return i < (size_t)t->P * n;
    case COLL_SCATTER: *want = dval(t->root, (size_t)r * n + i); return i < n && !ip_of(t, r);
    case COLL_REDUCE_SCATTER: *want = sum(0, t->P, (size_t)r * n + i); return i < n;
    case COLL_SCAN: *want = sum(0, r + 1, i); return i < n;
    default: *want = sum(0, r, i); return i < n && r > 0;
    }
}

static int drive(collie_request_t **reqs, int P) {
    for (int iter = 0; iter < 1000000; iter++) {
        int pending = 0;
        for (int r = 0; r < P; r++) {
            int st = collie_test(reqs[r], 0);
            if (st < 0) {
                printf("rank %d failed: %s\n", r, collie_last_error());
                return -1;
            }
            pending += st != COLLIE_OK;
        }
        if (!pending)
            return 0;
    }
    return -1;
}

static void check(const tcase *t, int64_t **recv) {
    for (int r = 0; r < t->P; r++)
        for (size_t i = 0; i < (size_t)t->P * t->n; i++) {
            int64_t want;
            if (expect(t, r, i, &want) && recv[r][i] != want) {
                fail(t, r, i, "wrong value");
                return;
            }
        }
}

static void run_case(collie_team_t **teams, const tcase *t) {
    size_t room = (size_t)t->P * t->n + 1;
    int64_t *send[MAXP], *recv[MAXP];
    collie_request_t *reqs[MAXP] = { 0 };
    cases++;
    collie_force_algorithm(t->coll, t->alg->name);
    bool ok = true;
    for (int r = 0; r < t->P; r++) {
        send[r] = calloc(room, sizeof(int64_t));
        recv[r] = calloc(room, sizeof(int64_t));
        fill(t, r, send[r], recv[r]);
        bool ip = ip_of(t, r);
        const void *s = ip && t->coll != COLL_SCATTER ? COLLIE_IN_PLACE : send[r];
        void *d = ip && t->coll == COLL_SCATTER ? COLLIE_IN_PLACE : recv[r];
        collie_op_t op = collie_coll_has_op(t->coll) ? COLLIE_SUM : NULL;
        int st = ok ? collie_request_build_v(teams[r], NULL, t->coll, s, d, t->n, NULL,
                                             COLLIE_INT64, op, t->root, false,
                                             &reqs[r]) : COLLIE_ERR_ARG;
        if (st == COLLIE_OK)
            st = collie_start(reqs[r]);
        if (ok && st != COLLIE_OK)
            fail(t, r, 0, collie_last_error());
        ok = ok && st == COLLIE_OK;
    }
    if (ok && drive(reqs, t->P) != 0)
        fail(t, -1, 0, "did not complete");
    else if (ok)
        check(t, recv);
    for (int r = 0; r < t->P; r++) {
        collie_request_free(reqs[r]);
        free(send[r]);
        free(recv[r]);
    }
}

static void sweep(int P) {
    collie_transport *tps[MAXP];
    collie_team_t *teams[MAXP];
    if (collie_loop_create(P, tps) != COLLIE_OK) {
        printf("FAIL cannot make a world of %d: %s\n", P, collie_last_error());
        failures++;
        return;
    }
    for (int r = 0; r < P; r++)
        collie_team_create(tps[r], &teams[r]);
    size_t counts[] = { 0, 1, (size_t)P, 37 };
    for (int coll = COLL_ALLGATHER; coll < COLL_COUNT && !failures; coll++)
        for (size_t a = 0; a < collie_algorithm_count(coll) && !failures; a++)
            for (size_t c = 0; c < 4; c++)
                for (int ip = 0; ip < 2; ip++)
                    for (int root = 0; root < (collie_coll_rooted(coll) ? 2 : 1); root++) {
                        tcase t = { coll, P, root ? P - 1 : 0, counts[c], ip,
                                    collie_algorithm_at(coll, a) };
                        if (!failures)
                            run_case(teams, &t);
                    }
    for (int r = 0; r < P; r++)
        collie_team_destroy(teams[r]);
}

int main(void) {
    setenv("COLLIE_SHM_SLOT_BYTES", "256", 1);
    int sizes[] = { 1, 2, 3, 4, 7, 8 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        sweep(sizes[k]);
    printf("test_loop_colls: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
