/*
 * mp_fill_tune.c — the per-call choice of how a rank copies into the copy cells, memcpy
 * or streaming stores (core/fill_tune.c): while the trials time both ways and after a
 * choice, every call must give the exact result on every rank, whichever way each rank
 * filled its cells.
 *
 *   collie-run -n P mp_fill_tune [CALLS [mapped]]   (default 16 calls per collective and size)
 *
 * allreduce, reduce (root P - 1), bcast (root P - 1), allgather and alltoall with malloc
 * buffers (the cells' path), new input before every call (the call number mixed in),
 * float64 integers (sums exact), 1 and 2 MiB per vector or block.  run_fill_tune.sh runs it
 * with the kernel copy off and checks the log for both ways timed on the ranks that fill.
 * `mapped`: bcast, allgather and alltoall only, with collie_alloc buffers on every rank
 * (run with `direct_copy` and `direct` forced: every bcast reader copies the root's buffer,
 * every allgather and alltoall rank its blocks, straight out of the peers' mapped
 * buffers, timing memcpy against streaming stores for those copies).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"

enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, ALLTOALL, NCOLLS };
static const char *names[] = { "allreduce", "reduce", "bcast", "allgather", "alltoall" };

/* Element i of the block rank `from` sends to rank `to` (the vector collectives: to = 0). */
static double input(int from, int to, size_t i, int call) {
    return (double)((from + 1) * 1000 + to * 7 + (int)(i % 977) + call);
}

/* What element i of block q of the output should hold on rank `me`. */
static double expected(int coll, int P, int me, int q, size_t i, int call) {
    if (coll == ALLGATHER)
        return input(q, 0, i, call);
    if (coll == ALLTOALL)
        return input(q, me, i, call);
    if (coll == BCAST)
        return input(P - 1, 0, i, call);
    double s = 0;
    for (int r = 0; r < P; r++)
        s += input(r, 0, i, call);
    return s;
}

static int start(collie_team_t *w, int coll, double *in, double *out, size_t n) {
    int root = collie_size(w) - 1, me = collie_rank(w);
    switch (coll) {
    case ALLREDUCE:
        return collie_allreduce(w, in, out, n, COLLIE_FLOAT64, COLLIE_SUM);
    case REDUCE:
        return collie_reduce(w, in, out, n, COLLIE_FLOAT64, COLLIE_SUM, root);
    case BCAST:
        return collie_bcast(w, me == root ? in : out, n, COLLIE_FLOAT64, root);
    case ALLGATHER:
        return collie_allgather(w, in, out, n, COLLIE_FLOAT64);
    default:
        return collie_alltoall(w, in, out, n, COLLIE_FLOAT64);
    }
}

static int one_call(collie_team_t *w, int coll, double *in, double *out, size_t n, int call) {
    int me = collie_rank(w), P = collie_size(w);
    bool blocks = coll == ALLGATHER || coll == ALLTOALL;
    int nin = coll == ALLTOALL ? P : 1, nout = blocks ? P : 1;
    for (int q = 0; q < nin; q++)
        for (size_t i = 0; i < n; i++)
            in[(size_t)q * n + i] = input(me, coll == ALLTOALL ? q : 0, i, call);
    for (size_t i = 0; i < (size_t)nout * n; i++)
        out[i] = -1;
    if (start(w, coll, in, out, n) != COLLIE_OK) {
        fprintf(stderr, "rank %d: %s call %d: %s\n", me, names[coll], call, collie_last_error());
        return 1;
    }
    if ((coll == REDUCE && me != P - 1) || (coll == BCAST && me == P - 1))
        return 0;
    for (int q = 0; q < nout; q++)
        for (size_t i = 0; i < n; i++) {
            double got = out[(size_t)q * n + i], want = expected(coll, P, me, q, i, call);
            if (got != want) {
                fprintf(stderr, "rank %d: %s call %d of %zu doubles: block %d element %zu is "
                        "%.17g, want %.17g\n", me, names[coll], call, n, q, i, got, want);
                return 1;
            }
        }
    return 0;
}

int main(int argc, char **argv) {
    /* both trials: calls 2-7 and 8-13 (after a way trial, 6-11 and 12-17) */
    int calls = argc > 1 ? atoi(argv[1]) : 16;
    bool mapped = argc > 2 && strcmp(argv[2], "mapped") == 0;
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *w = collie_world();
    int me = collie_rank(w), P = collie_size(w), bad = 0;
    static const size_t sizes[] = { 1 << 20, 2 << 20 };
    for (size_t s = 0; s < 2 && !bad; s++) {
        size_t n = sizes[s] / sizeof(double);
        size_t bytes = (size_t)P * sizes[s];
        double *in = mapped ? collie_alloc(w, bytes) : malloc(bytes);
        double *out = mapped ? collie_alloc(w, bytes) : malloc(bytes);
        if (!in || !out) {
            fprintf(stderr, "rank %d: no memory for %zu bytes\n", me, 2 * (size_t)P * sizes[s]);
            return 1;
        }
        for (int coll = mapped ? BCAST : 0; coll < NCOLLS && !bad; coll++)
            for (int call = 0; call < calls && !bad; call++)
                bad = one_call(w, coll, in, out, n, call);
        if (mapped) {
            collie_free(w, in);
            collie_free(w, out);
        } else {
            free(in);
            free(out);
        }
    }
    collie_finalize();
    if (!bad)
        printf("rank %d: %d calls of each collective at 2 sizes exact\n", me, calls);
    return bad;
}
