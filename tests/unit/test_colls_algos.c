/*
 * test_colls_algos.c — the symbolic verifier (symbolic.h) over the classic algorithms of
 * allgather, reduce_scatter, alltoall, gather, scatter, scan and exscan: P = 1…16 with
 * counts 0, 1, P-1, P, P+1 and 37, every root, in place or not, commutative or not, and
 * P = 31, 32, 33 with counts P+1 and 37, roots {0, 1, P/2, P-1} (test_algorithms.c sweeps
 * every registered algorithm for P = 1…64, 256, 300 as well); the v forms with unequal
 * counts (zeros among them) and displacements that differ between ranks where served, and
 * the declines (with a reason) where not.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "algorithms/algorithm.h"
#include "symbolic.h"
#include "check.h"

#define MAXP 64

static long runs;

typedef struct algo_ref {
    int coll;
    const char *name;
} algo_ref;

static const algo_ref algos[] = {
    { COLL_ALLGATHER, "ring" },           { COLL_ALLGATHER, "recursive_doubling" },
    { COLL_ALLGATHER, "bruck" },          { COLL_REDUCE_SCATTER, "recursive_halving" },
    { COLL_REDUCE_SCATTER, "ring" },      { COLL_ALLTOALL, "pairwise" },
    { COLL_ALLTOALL, "bruck" },           { COLL_GATHER, "binomial" },
    { COLL_SCATTER, "binomial" },         { COLL_SCAN, "recursive_doubling" },
    { COLL_EXSCAN, "recursive_doubling" },
};
#define NALGOS (sizeof algos / sizeof algos[0])

static void verify(const collie_algorithm *alg, collie_coll_args a) {
    const char *why;
    if (!collie_algorithm_accepts(alg, &a, &why)) {
        check(!a.commutative && (alg->needs & ALGO_NEEDS_COMMUTATIVE), "%s %s declined P=%d: %s",
              collie_coll_name(alg->coll), alg->name, a.size, why);
        return;
    }
    char err[1024];
    runs++;
    if (sym_verify(alg, &a, err, sizeof err) != 0)
        check(false, "%s", err);
}

static collie_coll_args call(const collie_algorithm *alg, int P, size_t count, int root) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = alg->coll;
    a.size = P;
    a.count = count;
    a.elem_size = (P + count) % 2 ? 4 : 8;
    a.bytes = count * a.elem_size;
    a.root = root;
    return a;
}

static void variants(const collie_algorithm *alg, collie_coll_args a) {
    for (int ip = 0; ip < 2; ip++)
        for (int comm = 0; comm < 2; comm++) {
            a.in_place = ip;
            a.commutative = comm;
            verify(alg, a);
        }
}

static bool rooted(int coll) { return coll == COLL_GATHER || coll == COLL_SCATTER; }

/* P = 1 … 16 with every count and root; 31, 32, 33 with a few (test_algorithms.c sweeps
 * every registered algorithm for P = 1 … 64 too, with fewer counts above 16). */
static void sweep(const collie_algorithm *alg) {
    for (int P = 1; P <= 33; P = P < 16 ? P + 1 : P == 16 ? 31 : P + 1) {
        size_t counts[] = { 0, 1, (size_t)P - 1, (size_t)P, (size_t)P + 1, 37 };
        int first = P <= 16 ? 0 : 2, ncounts = P <= 16 ? 6 : 2;
        int few[4] = { 0, 1, P / 2, P - 1 };
        int nroots = !rooted(alg->coll) ? 1 : P <= 16 ? P : 4;
        for (int ri = 0; ri < nroots; ri++) {
            int root = P <= 16 || !rooted(alg->coll) ? ri : few[ri];
            for (int c = first; c < first + ncounts; c++)
                variants(alg, call(alg, P, counts[c], root));
        }
    }
}

/* ==== v forms ========================================================================= */

/* Arrays of all ranks (sym_verify takes `size` entries, entry r for rank r). */
typedef struct vcall {
    collie_coll_v v[MAXP];
    size_t counts[MAXP][MAXP], displs[MAXP][MAXP], rcounts[MAXP][MAXP], rdispls[MAXP][MAXP];
} vcall;

static vcall vc;

/* Rank r's layout of blocks with counts c: in the order j = r, r+1, … (cyclic), each
 * followed by a gap of (r % 2) elements, so that displacements differ between ranks. */
static void layout(int P, int r, const size_t *c, size_t *d) {
    size_t at = 0;
    for (int t = 0; t < P; t++) {
        int j = (r + t) % P;
        d[j] = at;
        at += c[j] + (size_t)(r % 2);
    }
}

static size_t vcount(int seed, int j) { return (size_t)((j * 7 + seed) % 4); }   /* 0 … 3 */

static void verify_v(const collie_algorithm *alg, collie_coll_args a, bool served) {
    const char *why;
    a.v = vc.v;
    a.count = vc.v[0].own;
    a.bytes = a.count * a.elem_size;
    bool ok = collie_algorithm_accepts(alg, &a, &why);
    if (!served || (!a.commutative && (alg->needs & ALGO_NEEDS_COMMUTATIVE))) {
        check(!ok && why && why[0], "%s %s: v form accepted (P=%d)", collie_coll_name(alg->coll),
              alg->name, a.size);
        return;
    }
    check(ok, "%s %s: v form declined (P=%d): %s", collie_coll_name(alg->coll), alg->name,
          a.size, ok ? "" : why);
    char err[1024];
    runs++;
    if (ok && sym_verify(alg, &a, err, sizeof err) != 0)
        check(false, "v form: %s", err);
}

static void fill_v(int coll, int P, int seed, bool symmetric) {
    memset(vc.v, 0, sizeof vc.v);
    for (int r = 0; r < P; r++) {
        collie_coll_v *v = &vc.v[r];
        for (int j = 0; j < P; j++) {
            vc.counts[r][j] = vcount(seed, j);
            /* alltoallv: r sends f(r, j) to j, receives f(j, r) from j */
            if (coll == COLL_ALLTOALL) {
                vc.counts[r][j] = vcount(seed, symmetric ? r + j : r + 2 * j);
                vc.rcounts[r][j] = vcount(seed, symmetric ? j + r : j + 2 * r);
            }
        }
        layout(P, r, vc.counts[r], vc.displs[r]);
        layout(P, P - 1 - r, vc.rcounts[r], vc.rdispls[r]);
        v->counts = vc.counts[r];
        v->displs = coll == COLL_REDUCE_SCATTER ? NULL : vc.displs[r];
        if (coll == COLL_ALLTOALL) {
            v->rcounts = vc.rcounts[r];
            v->rdispls = vc.rdispls[r];
        }
        v->own = coll == COLL_ALLTOALL ? 0 : vc.counts[r][r];
    }
}

static void sweep_v(const collie_algorithm *alg) {
    bool served = alg->coll != COLL_GATHER && alg->coll != COLL_SCATTER &&
                  strcmp(alg->name, "bruck") != 0;
    if (alg->coll == COLL_SCAN || alg->coll == COLL_EXSCAN)
        return;
    for (int P = 1; P <= MAXP; P += P < 12 ? 1 : 13)
        for (int seed = 0; seed < 3; seed++)
            for (int ip = 0; ip < 2; ip++)
                for (int comm = 0; comm < 2; comm++) {
                    collie_coll_args a = call(alg, P, 1, 0);
                    a.elem_size = 4;
                    a.in_place = ip;
                    a.commutative = comm;
                    fill_v(alg->coll, P, seed, ip);
                    verify_v(alg, a, served);
                }
}

int main(void) {
    clock_t t0 = clock();
    for (size_t i = 0; i < NALGOS; i++) {
        const collie_algorithm *alg = collie_algorithm_find(algos[i].coll, algos[i].name);
        check(alg != NULL, "%s %s not registered", collie_coll_name(algos[i].coll),
              algos[i].name);
        if (alg) {
            clock_t t1 = clock();
            sweep(alg);
            clock_t t2 = clock();
            sweep_v(alg);
            printf("  %s %s: %.1f s, v forms %.1f s\n", collie_coll_name(alg->coll), alg->name,
                   (double)(t2 - t1) / CLOCKS_PER_SEC, (double)(clock() - t2) / CLOCKS_PER_SEC);
        }
    }
    printf("test_colls_algos: %ld schedules verified, %.1f s\n", runs,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    if (failures)
        fprintf(stderr, "test_colls_algos: %d failures\n", failures);
    else
        printf("test_colls_algos: ok\n");
    return failures ? 1 : 0;
}
