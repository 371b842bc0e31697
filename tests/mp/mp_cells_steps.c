/*
 * mp_cells_steps.c — calls of different collectives and sizes interleaved on one team, so
 * that the copy cells' steps of one call follow another's of a different width: an
 * allreduce or reduce step may span 2 or 4 adjacent cells (src/algorithms/cells.c), a
 * bcast, allgather, alltoall or reduce_scatter step one, and a wide call's first step
 * number is aligned (numbers skipped).  Every result is checked exactly on every rank.
 *
 *   collie-run -n P mp_cells_steps [CALLS] [SEED]     (default 60 calls, seed 1)
 *
 * The sequence (collective, size, root) comes from SEED, the same on every rank; inputs
 * are int64 values from (call, rank, block, index), sums exact; malloc buffers.  Run with
 * COLLIE_SHM_KERNEL_MIN=0 and COLLIE_SHM_SLOTS_MAX=0 so that every large call goes
 * through the cells (CMakeLists.txt), with the default cells and with small ones.
 * Prints "mp_cells_steps: rank R: N calls exact" on every rank.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "collie.h"

enum { ALLREDUCE, REDUCE, BCAST, ALLGATHER, ALLTOALL, REDUCE_SCATTER, NCOLLS };
static const char *names[] = { "allreduce", "reduce", "bcast", "allgather", "alltoall",
                               "reduce_scatter_block" };

/* Elements per vector (allreduce, reduce, bcast) or per block (the others, divided by P):
 * with the default 128 KiB cells the vectors take steps of one, two and four cells; count
 * 0 calls need no other rank, so a rank that need not wait may run ahead through them. */
static const size_t counts[] = { 0, 1, 513, 12500, 37501, 65536, 131075, 262144, 400003 };
#define NCOUNTS (sizeof counts / sizeof counts[0])

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Element i of the block rank `from` sends to rank `to` in call `call` (vectors: to = 0). */
static int64_t input(int call, int from, int to, size_t i) {
    return (int64_t)(mix(((uint64_t)call << 40) ^ ((uint64_t)from << 28) ^ ((uint64_t)to << 20) ^ i) >> 24);
}

typedef struct call_spec {
    int coll, root;
    size_t n;       /* elements per vector or block */
} call_spec;

static call_spec spec_of(uint64_t seed, int call, int P) {
    uint64_t h = mix(seed * 1000003u + (uint64_t)call);
    call_spec s;
    s.coll = (int)(h % NCOLLS);
    s.root = (int)((h >> 8) % (uint64_t)P);
    s.n = counts[(h >> 16) % NCOUNTS];
    bool blocks = s.coll == ALLGATHER || s.coll == ALLTOALL || s.coll == REDUCE_SCATTER;
    if (blocks)
        s.n = s.n / (size_t)P + 1;
    return s;
}

/* The expected element i of output block q on rank me. */
static int64_t expected(const call_spec *s, int call, int P, int me, int q, size_t i) {
    switch (s->coll) {
    case BCAST:
        return input(call, s->root, 0, i);
    case ALLGATHER:
        return input(call, q, 0, i);
    case ALLTOALL:
        return input(call, q, me, i);
    case REDUCE_SCATTER: {
        uint64_t sum = 0;
        for (int r = 0; r < P; r++)
            sum += (uint64_t)input(call, r, me, i);
        return (int64_t)sum;
    }
    default: {
        uint64_t sum = 0;
        for (int r = 0; r < P; r++)
            sum += (uint64_t)input(call, r, 0, i);
        return (int64_t)sum;
    }
    }
}

static int run(collie_team_t *w, const call_spec *s, int64_t *in, int64_t *out) {
    int me = collie_rank(w);
    switch (s->coll) {
    case ALLREDUCE:
        return collie_allreduce(w, in, out, s->n, COLLIE_INT64, COLLIE_SUM);
    case REDUCE:
        return collie_reduce(w, in, out, s->n, COLLIE_INT64, COLLIE_SUM, s->root);
    case BCAST:
        return collie_bcast(w, me == s->root ? in : out, s->n, COLLIE_INT64, s->root);
    case ALLGATHER:
        return collie_allgather(w, in, out, s->n, COLLIE_INT64);
    case ALLTOALL:
        return collie_alltoall(w, in, out, s->n, COLLIE_INT64);
    default:
        return collie_reduce_scatter_block(w, in, out, s->n, COLLIE_INT64, COLLIE_SUM);
    }
}

static int one_call(collie_team_t *w, const call_spec *s, int call, int64_t *in, int64_t *out) {
    int me = collie_rank(w), P = collie_size(w);
    bool blocks_in = s->coll == ALLTOALL || s->coll == REDUCE_SCATTER;
    int nin = blocks_in ? P : 1, nout = s->coll == ALLGATHER || s->coll == ALLTOALL ? P : 1;
    for (int q = 0; q < nin; q++)
        for (size_t i = 0; i < s->n; i++)
            in[(size_t)q * s->n + i] = input(call, me, blocks_in ? q : 0, i);
    for (size_t i = 0; i < (size_t)nout * s->n; i++)
        out[i] = -1;
    if (run(w, s, in, out) != COLLIE_OK) {
        fprintf(stderr, "rank %d: call %d (%s of %zu): %s\n", me, call, names[s->coll], s->n,
                collie_last_error());
        return 1;
    }
    if ((s->coll == REDUCE && me != s->root) || (s->coll == BCAST && me == s->root))
        return 0;
    for (int q = 0; q < nout; q++)
        for (size_t i = 0; i < s->n; i++) {
            int64_t got = out[(size_t)q * s->n + i], want = expected(s, call, P, me, q, i);
            if (got != want) {
                fprintf(stderr, "rank %d: call %d (%s of %zu, root %d): block %d element %zu is "
                        "%" PRId64 ", want %" PRId64 "\n", me, call, names[s->coll], s->n,
                        s->root, q, i, got, want);
                return 1;
            }
        }
    return 0;
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 60;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *w = collie_world();
    int me = collie_rank(w), P = collie_size(w), bad = 0;
    size_t most = counts[NCOUNTS - 1] + (size_t)P;   /* elements per buffer, at most */
    int64_t *in = malloc(most * sizeof *in), *out = malloc(most * sizeof *out);
    if (!in || !out) {
        fprintf(stderr, "rank %d: no memory\n", me);
        return 1;
    }
    for (int call = 0; call < calls && !bad; call++) {
        call_spec s = spec_of(seed, call, P);
        bad = one_call(w, &s, call, in, out);
    }
    free(in);
    free(out);
    collie_finalize();
    if (!bad)
        printf("mp_cells_steps: rank %d: %d calls exact\n", me, calls);
    return bad;
}
