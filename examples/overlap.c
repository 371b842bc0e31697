/*
 * overlap.c — split-phase collectives: start an allreduce, compute while it runs, then
 * use its result.
 *
 * Each step of a toy time loop needs the global sum of a vector v (say, a gradient) and
 * also has independent local work (here: smoothing another array).  The allreduce of step
 * k is started with collie_iallreduce, the local work runs in slices with a
 * collie_test(req, 0) between them (a poll: it moves the collective on and never waits),
 * and collie_wait takes what is left.  The program checks every sum against the exact
 * value (integers) and prints how many slices of work ran while the collective was in
 * flight.
 *
 *   build/collie-run -n 4 ./overlap [ELEMENTS] [STEPS]    (1 Mi int64 and 20 steps by default)
 */
#include <collie.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define SLICES 64

static void fail(const char *what) {
    fprintf(stderr, "overlap: %s failed: %s\n", what, collie_last_error());
    exit(1);
}

/* One slice of the independent local work: a 3-point smoothing of part of w. */
static void smooth_slice(double *w, size_t n, int slice) {
    size_t lo = n * (size_t)slice / SLICES, hi = n * (size_t)(slice + 1) / SLICES;
    for (size_t i = lo > 0 ? lo : 1; i < hi && i + 1 < n; i++)
        w[i] = 0.25 * w[i - 1] + 0.5 * w[i] + 0.25 * w[i + 1];
}

int main(int argc, char **argv) {
    if (collie_init() != COLLIE_OK)
        fail("collie_init");
    collie_team_t *world = collie_world();
    int rank = collie_rank(world), size = collie_size(world);
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1u << 20);
    int steps = argc > 2 ? atoi(argv[2]) : 20;
    int64_t *v = malloc(n * sizeof *v), *sum = malloc(n * sizeof *sum);
    double *w = calloc(n, sizeof *w);
    long overlapped = 0, bad = 0;
    for (int k = 0; k < steps; k++) {
        for (size_t i = 0; i < n; i++)       /* new data every step, as a real program has */
            v[i] = (int64_t)(rank + 1) * (int64_t)(i + (size_t)k);
        collie_request_t *req;
        if (collie_iallreduce(world, v, sum, n, COLLIE_INT64, COLLIE_SUM, &req) != COLLIE_OK)
            fail("collie_iallreduce");
        int done = 0;
        for (int s = 0; s < SLICES; s++) {
            smooth_slice(w, n, s);
            if (!done) {
                int st = collie_test(req, 0);
                if (st < 0)
                    fail("collie_test");
                done = st == COLLIE_OK;
                overlapped += !done;
            }
        }
        if (!done && collie_wait(req) != COLLIE_OK)
            fail("collie_wait");
        collie_request_free(req);
        int64_t ranks = (int64_t)size * (size + 1) / 2;   /* sum of rank + 1 */
        for (size_t i = 0; i < n; i++)
            bad += sum[i] != ranks * (int64_t)(i + (size_t)k);
    }
    long total_bad = 0;
    if (collie_allreduce(world, &bad, &total_bad, 1, COLLIE_INT64, COLLIE_SUM) != COLLIE_OK)
        fail("collie_allreduce");
    if (rank == 0)
        printf("overlap: %d steps of %zu int64 on %d ranks: %s; rank 0 ran %ld of %d work slices "
               "while the allreduce was in flight\n", steps, n, size,
               total_bad ? "WRONG SUMS" : "all sums exact", overlapped, steps * SLICES);
    free(v); free(sum); free(w);
    collie_finalize();
    return total_bad ? 1 : 0;
}
