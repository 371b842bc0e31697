/*
 * mp_mixed_in_place.c — COLLIE_IN_PLACE on some ranks only ("sendbuf on any rank", as
 * MPI's allgather, reduce_scatter and alltoall allow it): odd ranks in place, even ranks
 * not, at sizes from one element to 256 KiB per block, with malloc'd buffers.
 *
 * Regression: reduce_scatter's v form declined the copy cells only on the ranks in place,
 * so at P = 2 from 20 KiB per block the ranks picked different algorithms (cells and
 * flat: COLLIE_ERR_MISMATCH), and above 32 KiB `direct` took the cells on some ranks and
 * the slots on others (a hang until COLLIE_TIMEOUT_MS).  Found by python/tests/soak.py.
 *
 * Usage: collie-run -n P mp_mixed_in_place.  Prints "mp_mixed_in_place, P ranks: passed
 * (0 failures)" on rank 0.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "collie.h"

enum { RS_V, RS_BLOCK, ALLGATHERV, ALLTOALL, NCOLLS };
static const char *const names[NCOLLS] = { "reduce_scatter", "reduce_scatter_block",
                                           "allgatherv", "alltoall" };
static int rank, P, failures;

static int32_t input(int r, size_t i) { return (int32_t)((i * 7 + (size_t)r * 13) % 1000); }

/* Block j's count: uneven for the v forms. */
static size_t count_of(int coll, size_t n, int j) {
    return coll == RS_V || coll == ALLGATHERV ? n + (size_t)j * (n / 3 + 1) : n;
}

/* One call with this rank in place or not; returns the status, the result in out. */
static int call(int coll, size_t n, bool in_place, int32_t *x, int32_t *out,
                const size_t *counts, const size_t *displs) {
    collie_team_t *w = collie_world();
    const void *send = in_place ? COLLIE_IN_PLACE : x;
    switch (coll) {
    case RS_V:
        return collie_reduce_scatter(w, send, in_place ? x : out, counts, COLLIE_INT32,
                                     COLLIE_SUM);
    case RS_BLOCK:
        return collie_reduce_scatter_block(w, send, in_place ? x : out, n, COLLIE_INT32,
                                           COLLIE_SUM);
    case ALLGATHERV:
        return collie_allgatherv(w, send, counts[rank], out, counts, displs, COLLIE_INT32);
    default:
        return collie_alltoall(w, send, in_place ? x : out, n, COLLIE_INT32);
    }
}

/* Element i of this rank's expected result. */
static int32_t expected(int coll, size_t n, size_t i, const size_t *displs) {
    int32_t v = 0;
    switch (coll) {
    case RS_V: case RS_BLOCK:
        for (int q = 0; q < P; q++)
            v += input(q, displs[rank] + i);
        return v;
    case ALLGATHERV: {
        int q = 0;
        while (q + 1 < P && displs[q + 1] <= i)
            q++;
        return input(q, i - displs[q]);
    }
    default:
        return input((int)(i / n), (size_t)rank * n + i % n);
    }
}

static void run(int coll, size_t n) {
    size_t counts[64], displs[64], total = 0;
    for (int j = 0; j < P; j++) {
        counts[j] = count_of(coll, n, j);
        displs[j] = total;
        total += counts[j];
    }
    bool in_place = rank % 2 == 1;
    int32_t *x = malloc((total + 1) * sizeof *x), *out = malloc((total + 1) * sizeof *out);
    if (!x || !out)
        abort();
    /* the input (allgatherv: its first counts[rank], also at their place in out in place) */
    for (size_t i = 0; i < total; i++)
        x[i] = input(rank, i);
    if (coll == ALLGATHERV && in_place)
        for (size_t i = 0; i < counts[rank]; i++)
            out[displs[rank] + i] = input(rank, i);
    int st = call(coll, n, in_place, x, out, counts, displs);
    const int32_t *res = in_place && coll != ALLGATHERV ? x : out;
    size_t len = coll == RS_V || coll == RS_BLOCK ? counts[rank] : total;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < len && st == COLLIE_OK; i++)
        if (res[i] != expected(coll, n, i, displs) && bad++ == 0)
            first = i;
    if (st != COLLIE_OK || bad) {
        failures++;
        printf("rank %d: %s n=%zu %s: status %d (%s), %zu wrong from element %zu\n", rank,
               names[coll], n, in_place ? "in place" : "not in place", st,
               st ? collie_last_error() : "", bad, first);
    }
    free(x);
    free(out);
}

int main(void) {
    if (collie_init() != COLLIE_OK)
        return 1;
    rank = collie_rank(collie_world());
    P = collie_size(collie_world());
    static const size_t sizes[] = { 1, 100, 5000, 8000, 12000, 65536 };
    for (int coll = 0; coll < NCOLLS && P <= 64; coll++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            run(coll, sizes[s]);
    int64_t all = failures;
    collie_allreduce(collie_world(), COLLIE_IN_PLACE, &all, 1, COLLIE_INT64, COLLIE_SUM);
    if (rank == 0)
        printf("mp_mixed_in_place, %d ranks: %s (%lld failures)\n", P,
               all ? "FAILED" : "passed", (long long)all);
    collie_finalize();
    return all != 0;
}
