/*
 * mp_porder.c — persistent collectives matched by initialization order (issue 22), with
 * collie's own API under collie-run.  Every rank makes the same persistent requests in
 * the same order (allreduce, bcast, barrier, reduce, allreduce in place), then, for several
 * rounds, starts them in a rank-dependent order (rank r rotates the list by r and reverses
 * it on odd ranks), with a split-phase allreduce started in the middle, and waits for them
 * in yet another order; then rank 0 starts a bcast and a barrier while the others start
 * and finish the barrier before they start the bcast (the bcast's chunks wait in the
 * stash).  Every result is checked against values computed here.
 *
 * Usage: collie-run -n P mp_porder [ELEMENTS...]   (default 1 1000 300000 doubles)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"

enum { NREQ = 5, ROUNDS = 4 };

static int rank, size, failures;

static void expect_ok(int st, const char *what) {
    if (st == COLLIE_OK)
        return;
    failures++;
    fprintf(stderr, "FAIL: rank %d: %s: %s\n", rank, what, collie_last_error());
}

static double input(int r, size_t i, int round) { return (double)(r + 1) * (double)(i % 997 + round); }

static double sum_of(size_t i, int round) {
    double s = 0;
    for (int r = 0; r < size; r++)
        s += input(r, i, round);
    return s;
}

static void check(const double *v, size_t n, int round, const char *what, size_t elements) {
    for (size_t i = 0; i < n; i++)
        if (v[i] != sum_of(i, round)) {
            failures++;
            fprintf(stderr, "FAIL: rank %d: %s (%zu elements, round %d): element %zu is %g, not %g\n",
                    rank, what, elements, round, i, v[i], sum_of(i, round));
            return;
        }
}

static void run(collie_team_t *team, size_t n) {
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    double *red = malloc(n * sizeof *red), *inplace = malloc(n * sizeof *inplace);
    double *bc = malloc(n * sizeof *bc), *split_in = malloc(n * sizeof *split_in);
    double *split_out = malloc(n * sizeof *split_out);
    int root = size - 1;
    collie_request_t *q[NREQ];
    expect_ok(collie_allreduce_init(team, in, out, n, COLLIE_FLOAT64, COLLIE_SUM, &q[0]), "allreduce_init");
    expect_ok(collie_bcast_init(team, bc, n, COLLIE_FLOAT64, 0, &q[1]), "bcast_init");
    expect_ok(collie_barrier_init(team, &q[2]), "barrier_init");
    expect_ok(collie_reduce_init(team, in, red, n, COLLIE_FLOAT64, COLLIE_SUM, root, &q[3]), "reduce_init");
    expect_ok(collie_allreduce_init(team, COLLIE_IN_PLACE, inplace, n, COLLIE_FLOAT64, COLLIE_SUM, &q[4]),
              "allreduce_init (in place)");
    for (int round = 0; round < ROUNDS && !failures; round++) {
        for (size_t i = 0; i < n; i++) {
            in[i] = inplace[i] = split_in[i] = input(rank, i, round);
            bc[i] = rank == 0 ? (double)i * 3 + round : -1;
            out[i] = red[i] = split_out[i] = -1;
        }
        collie_request_t *split = NULL;
        for (int k = 0; k < NREQ; k++) {
            int j = (rank % 2 ? NREQ - 1 - k : k);
            j = (j + rank + round) % NREQ;
            expect_ok(collie_start(q[j]), "collie_start");
            if (k == 2)   /* a non-persistent call among them: same place on every rank */
                expect_ok(collie_iallreduce(team, split_in, split_out, n, COLLIE_FLOAT64, COLLIE_SUM,
                                            &split), "iallreduce");
        }
        for (int k = 0; k < NREQ; k++)
            expect_ok(collie_wait(q[(k * 2 + rank) % NREQ]), "collie_wait");
        expect_ok(collie_wait(split), "collie_wait (split-phase)");
        collie_request_free(split);
        check(out, n, round, "allreduce", n);
        check(inplace, n, round, "allreduce in place", n);
        check(split_out, n, round, "split-phase allreduce", n);
        if (rank == root)
            check(red, n, round, "reduce", n);
        for (size_t i = 0; i < n; i++)
            if (bc[i] != (double)i * 3 + round) {
                failures++;
                fprintf(stderr, "FAIL: rank %d: bcast (%zu elements, round %d): element %zu is %g\n",
                        rank, n, round, i, bc[i]);
                break;
            }
    }
    /* Bcast then barrier on rank 0; barrier, wait, then bcast on the others. */
    for (size_t i = 0; i < n; i++)
        bc[i] = rank == 0 ? (double)i + 7 : -1;
    if (rank == 0) {
        expect_ok(collie_start(q[1]), "collie_start (bcast)");
        expect_ok(collie_start(q[2]), "collie_start (barrier)");
    } else {
        expect_ok(collie_start(q[2]), "collie_start (barrier)");
        expect_ok(collie_wait(q[2]), "collie_wait (barrier)");
        expect_ok(collie_start(q[1]), "collie_start (bcast)");
    }
    expect_ok(collie_wait(q[1]), "collie_wait (bcast)");
    expect_ok(collie_wait(q[2]), "collie_wait (barrier)");
    for (size_t i = 0; i < n; i++)
        if (bc[i] != (double)i + 7) {
            failures++;
            fprintf(stderr, "FAIL: rank %d: bcast started after the barrier (%zu elements): "
                    "element %zu is %g\n", rank, n, i, bc[i]);
            break;
        }
    for (int k = 0; k < NREQ; k++)
        collie_request_free(q[k]);
    free(in), free(out), free(red), free(inplace), free(bc), free(split_in), free(split_out);
}

int main(int argc, char **argv) {
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *team = collie_world();
    rank = collie_rank(team);
    size = collie_size(team);
    size_t defaults[] = { 1, 1000, 300000 };
    int nsizes = argc > 1 ? argc - 1 : 3;
    for (int s = 0; s < nsizes && !failures; s++)
        run(team, argc > 1 ? strtoull(argv[s + 1], NULL, 0) : defaults[s]);
    int total = failures;
    expect_ok(collie_allreduce(team, COLLIE_IN_PLACE, &total, 1, COLLIE_INT32, COLLIE_SUM), "final allreduce");
    if (rank == 0)
        printf("mp_porder, %d ranks: %s (%d failures)\n", size, total ? "FAILED" : "passed", total);
    collie_finalize();
    return total != 0;
}
