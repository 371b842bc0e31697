/*
 * mp_colls_porder.c — persistent requests of the new collectives matched by
 * initialization order: every rank makes the same requests (allgather, alltoallv, scan,
 * reduce_scatter_block in place, gatherv) in the same order, then starts them in a
 * rank-dependent order for several rounds (rotated by the rank, reversed on odd ranks),
 * with a blocking allgatherv between the starts, and waits in yet another order.  Every
 * result is checked against values computed here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_colls.h"

enum { NREQ = 5, ROUNDS = 3, N = 300 };

static int fails, rank, P;

static int64_t val(int q, size_t i, int round) { return (int64_t)q * 100000 + (int64_t)i * 3 + round; }

static void expect_ok(int st, const char *what) {
    if (st == COLLIE_OK)
        return;
    fails++;
    fprintf(stderr, "FAIL: rank %d: porder %s: %s\n", rank, what, collie_last_error());
}

static void expect_eq(int64_t got, int64_t want, const char *what, size_t i, int round) {
    if (got == want || fails > 10)
        return;
    fails++;
    fprintf(stderr, "FAIL: rank %d: porder %s round %d element %zu: %lld, not %lld\n", rank, what,
            round, i, (long long)got, (long long)want);
}

typedef struct bufs {
    int64_t *ag_in, *ag_out, *a2a_in, *a2a_out, *scan_in, *scan_out, *rs, *gv_in, *gv_out, *agv;
    size_t counts[64], displs[64];
} bufs;

static void fill(bufs *b, int round) {
    for (size_t i = 0; i < N; i++)
        b->ag_in[i] = b->scan_in[i] = b->gv_in[i] = val(rank, i, round);
    for (size_t i = 0; i < (size_t)P * N; i++) {
        b->a2a_in[i] = val(rank, i, round);
        b->rs[i] = val(rank, i, round);
        b->ag_out[i] = b->a2a_out[i] = b->gv_out[i] = -1;
    }
}

static void check(const bufs *b, int round) {
    for (size_t i = 0; i < (size_t)P * N; i++) {
        int j = (int)(i / N);
        size_t e = i % N;
        expect_eq(b->ag_out[i], val(j, e, round), "allgather", i, round);
        expect_eq(b->a2a_out[i], val(j, (size_t)rank * N + e, round), "alltoallv", i, round);
        if (rank == 0)
            expect_eq(b->gv_out[i], val(j, e, round), "gatherv", i, round);
    }
    for (size_t i = 0; i < N; i++) {
        int64_t s = 0, all = 0;
        for (int q = 0; q < P; q++) {
            s += q <= rank ? val(q, i, round) : 0;
            all += val(q, (size_t)rank * N + i, round);
        }
        expect_eq(b->scan_out[i], s, "scan", i, round);
        expect_eq(b->rs[i], all, "reduce_scatter_block in place", i, round);
    }
}

static void make(collie_team_t *team, bufs *b, collie_request_t **q) {
    collie_dtype_t t = COLLIE_INT64;
    expect_ok(collie_allgather_init(team, b->ag_in, b->ag_out, N, t, &q[0]), "allgather_init");
    expect_ok(collie_alltoallv_init(team, b->a2a_in, b->counts, b->displs, b->a2a_out, b->counts,
                                    b->displs, t, &q[1]), "alltoallv_init");
    expect_ok(collie_scan_init(team, b->scan_in, b->scan_out, N, t, COLLIE_SUM, &q[2]), "scan_init");
    expect_ok(collie_reduce_scatter_block_init(team, COLLIE_IN_PLACE, b->rs, N, t, COLLIE_SUM,
                                               &q[3]), "reduce_scatter_block_init");
    expect_ok(collie_gatherv_init(team, b->gv_in, N, b->gv_out, b->counts, b->displs, t, 0,
                                  &q[4]), "gatherv_init");
}

/* A blocking allgatherv between the starts (same place on every rank), checked. */
static void between(collie_team_t *team, bufs *b, int round) {
    int64_t mine = val(rank, 7, round);
    size_t ones[64], at[64];
    for (int j = 0; j < P; j++) {
        ones[j] = 1;
        at[j] = (size_t)(P - 1 - j);   /* reversed */
    }
    expect_ok(collie_allgatherv(team, &mine, 1, b->agv, ones, at, COLLIE_INT64), "allgatherv");
    for (int j = 0; j < P; j++)
        expect_eq(b->agv[P - 1 - j], val(j, 7, round), "allgatherv between", (size_t)j, round);
}

int mp_colls_porder(collie_team_t *team, int my_rank, int size) {
    rank = my_rank;
    P = size;
    fails = 0;
    size_t big = (size_t)P * N;
    bufs b;
    int64_t **all[] = { &b.ag_in, &b.ag_out, &b.a2a_in, &b.a2a_out, &b.scan_in, &b.scan_out,
                        &b.rs, &b.gv_in, &b.gv_out, &b.agv };
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        *all[k] = calloc(big, sizeof(int64_t));
    for (int j = 0; j < P; j++) {
        b.counts[j] = N;
        b.displs[j] = (size_t)j * N;
    }
    collie_request_t *q[NREQ] = { 0 };
    make(team, &b, q);
    for (int round = 0; round < ROUNDS && !fails; round++) {
        fill(&b, round);
        for (int k = 0; k < NREQ; k++) {
            int j = ((rank % 2 ? NREQ - 1 - k : k) + rank + round) % NREQ;
            expect_ok(collie_start(q[j]), "collie_start");
            if (k == 2)
                between(team, &b, round);
        }
        for (int k = 0; k < NREQ; k++)
            expect_ok(collie_wait(q[(k * 2 + rank) % NREQ]), "collie_wait");
        check(&b, round);
    }
    for (int k = 0; k < NREQ; k++)
        collie_request_free(q[k]);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        free(*all[k]);
    return fails;
}
