/*
 * mp_cells_alias.c — alltoall and reduce_scatter_block through the copy cells with
 * sendbuf == recvbuf (not COLLIE_IN_PLACE; MPI calls that aliasing erroneous) in
 * collie_alloc memory: a rank must not lend such an input to its peers
 * (cells_in_place.c), which would read it while it is overwritten.  Checked against a
 * reference computed here, several sizes, every rank's result.
 * Usage: COLLIE_ALLTOALL_ALGO=cells COLLIE_REDUCE_SCATTER_ALGO=cells collie-run -n P mp_cells_alias
 * Prints "mp_cells_alias, P ranks: exact" on rank 0.
 */
#include <stdint.h>
#include <stdio.h>

#include "collie.h"

static int64_t value(int from, int block, size_t i) { return (int64_t)from * 1000003 + block * 1009 + (int64_t)i; }

static int check(collie_team_t *w, int me, int P, size_t n, int coll) {
    int64_t *buf = collie_alloc(w, (size_t)P * n * sizeof *buf);
    if (!buf)
        return 1;
    for (int b = 0; b < P; b++)
        for (size_t i = 0; i < n; i++)
            buf[(size_t)b * n + i] = value(me, b, i);
    int st = coll ? collie_reduce_scatter_block(w, buf, buf, n, COLLIE_INT64, COLLIE_SUM)
                  : collie_alltoall(w, buf, buf, n, COLLIE_INT64);
    int bad = st != COLLIE_OK;
    for (int q = 0; q < P && !bad && !coll; q++)
        for (size_t i = 0; i < n && !bad; i++)
            bad = buf[(size_t)q * n + i] != value(q, me, i);
    for (size_t i = 0; i < n && !bad && coll; i++) {
        int64_t want = 0;
        for (int q = 0; q < P; q++)
            want += value(q, me, i);
        bad = buf[i] != want;
    }
    if (bad)
        fprintf(stderr, "rank %d: %s of %zu int64 per block, sendbuf == recvbuf: %s\n", me,
                coll ? "reduce_scatter_block" : "alltoall", n,
                st ? collie_last_error() : "wrong result");
    collie_free(w, buf);
    return bad;
}

int main(void) {
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *w = collie_world();
    int me = collie_rank(w), P = collie_size(w), bad = 0;
    const size_t counts[] = { 4096, 65536, 262144 };
    for (int coll = 0; coll < 2; coll++)
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
            for (int rep = 0; rep < 3; rep++)
                bad |= check(w, me, P, counts[k], coll);
    collie_finalize();
    if (me == 0 && !bad)
        printf("mp_cells_alias, %d ranks: exact\n", P);
    return bad;
}
