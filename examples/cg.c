/*
 * cg.c — a distributed conjugate-gradient solver with collie's C API.
 *
 * Solves A u = f for the 1-D Laplacian A = tridiag(-1, 2, -1) on N unknowns, the rows split
 * into contiguous blocks over the ranks.  Each iteration needs
 *   - the neighbours' boundary values of the search direction for the matrix-vector
 *     product: every rank writes its first and last value into its two slots of a 2P-long
 *     array of zeros, and one allreduce (sum) gives every rank all boundary values;
 *   - two dot products: one allreduce each.
 * The right-hand side is made from a known solution, so the program checks its own answer
 * (max error against the known solution) and exits non-zero if CG did not converge.
 *
 *   build/collie-run -n 4 ./cg [N]          (N = 20000 by default)
 */
#include <collie.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    collie_team_t *team;
    int rank, size;
    long n, lo, len;      /* global size; this rank's rows [lo, lo + len) */
    double *edges;        /* 2P boundary values, exchanged by allreduce */
} grid;

static int check(int st, const char *what) {
    if (st != COLLIE_OK) {
        fprintf(stderr, "cg: %s failed: %s\n", what, collie_last_error());
        exit(1);
    }
    return st;
}

static double dot(const grid *g, const double *x, const double *y) {
    double local = 0, sum;
    for (long i = 0; i < g->len; i++)
        local += x[i] * y[i];
    check(collie_allreduce(g->team, &local, &sum, 1, COLLIE_FLOAT64, COLLIE_SUM), "dot product");
    return sum;
}

/* y = A x, with the values left and right of this rank's block from the other ranks. */
static void matvec(const grid *g, const double *x, double *y) {
    for (int i = 0; i < 2 * g->size; i++)
        g->edges[i] = 0;
    if (g->len > 0) {
        g->edges[2 * g->rank] = x[0];
        g->edges[2 * g->rank + 1] = x[g->len - 1];
    }
    check(collie_allreduce(g->team, COLLIE_IN_PLACE, g->edges, 2 * (size_t)g->size,
                           COLLIE_FLOAT64, COLLIE_SUM), "boundary exchange");
    /* The nearest non-empty blocks to the left and right (blocks are empty when N < P). */
    double left = 0, right = 0;
    for (int r = g->rank - 1; r >= 0 && g->lo > 0; r--)
        if (g->n * (r + 1) / g->size > g->n * r / g->size) { left = g->edges[2 * r + 1]; break; }
    for (int r = g->rank + 1; r < g->size && g->lo + g->len < g->n; r++)
        if (g->n * (r + 1) / g->size > g->n * r / g->size) { right = g->edges[2 * r]; break; }
    for (long i = 0; i < g->len; i++) {
        double l = i > 0 ? x[i - 1] : left, r = i + 1 < g->len ? x[i + 1] : right;
        y[i] = 2 * x[i] - l - r;
    }
}

static double exact(long i, long n) { return sin(3.0 * M_PI * (double)(i + 1) / (double)(n + 1)) + 0.5; }

int main(int argc, char **argv) {
    check(collie_init(), "collie_init");
    grid g = { .team = collie_world() };
    g.rank = collie_rank(g.team);
    g.size = collie_size(g.team);
    g.n = argc > 1 ? atol(argv[1]) : 20000;
    g.lo = g.n * g.rank / g.size;
    g.len = g.n * (g.rank + 1) / g.size - g.lo;
    g.edges = malloc(2 * (size_t)g.size * sizeof(double));
    double *u = calloc((size_t)g.len + 1, sizeof(double)), *f = malloc(((size_t)g.len + 1) * sizeof(double));
    double *r = malloc(((size_t)g.len + 1) * sizeof(double)), *p = malloc(((size_t)g.len + 1) * sizeof(double));
    double *q = malloc(((size_t)g.len + 1) * sizeof(double));
    for (long i = 0; i < g.len; i++)    /* f = A u_exact, computed locally from the formula */
        f[i] = 2 * exact(g.lo + i, g.n) - (g.lo + i > 0 ? exact(g.lo + i - 1, g.n) : 0) -
               (g.lo + i + 1 < g.n ? exact(g.lo + i + 1, g.n) : 0);
    for (long i = 0; i < g.len; i++)
        r[i] = p[i] = f[i];             /* u = 0, so r = f */
    double rr = dot(&g, r, r), tol = 1e-20 * dot(&g, f, f);
    int it = 0, max_it = (int)(2 * g.n + 10);
    while (rr > tol && it < max_it) {
        matvec(&g, p, q);
        double alpha = rr / dot(&g, p, q);
        for (long i = 0; i < g.len; i++) {
            u[i] += alpha * p[i];
            r[i] -= alpha * q[i];
        }
        double rr_new = dot(&g, r, r);
        for (long i = 0; i < g.len; i++)
            p[i] = r[i] + rr_new / rr * p[i];
        rr = rr_new;
        it++;
    }
    double err = 0, max_err;
    for (long i = 0; i < g.len; i++)
        err = fmax(err, fabs(u[i] - exact(g.lo + i, g.n)));
    check(collie_allreduce(g.team, &err, &max_err, 1, COLLIE_FLOAT64, COLLIE_MAX), "error norm");
    int ok = rr <= tol && max_err < 1e-6;
    if (g.rank == 0)
        printf("cg: N = %ld on %d ranks: %s after %d iterations, max error %.3g\n", g.n, g.size,
               ok ? "converged" : "NOT converged", it, max_err);
    free(u); free(f); free(r); free(p); free(q); free(g.edges);
    collie_finalize();
    return ok ? 0 : 1;
}
