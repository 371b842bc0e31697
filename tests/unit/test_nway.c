/*
 * test_nway.c — the n-way dissemination (End 2016 §III-B): patterns_nway.c against brute
 * force, and both nway_dissemination algorithms through the symbolic verifier for
 * n = 1…8 × P = 1…64 (COLLIE_LONG_TESTS=1: also P up to 1024 for n = 1, 2, 3, 7).
 *   test_nway --table   prints docs/nway_table.md's table (P <= 100, n <= 6).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns_nway.h"
#include "symbolic.h"

#define MAXP 1024
#include "check.h"

/* ==== brute force: the paper's partial results as multisets of ranks ================== */

typedef struct sets {
    int P, n, k;
    unsigned char *win;      /* win[l][q][r]: count of x_r in S_l^q */
    unsigned char *pre;      /* pre[i][r]: the i-th partial result rank 0 ever forms */
    long long *pre_size;
    int npre;
} sets;

static unsigned char *W(sets *S, int l, int q) {
    return S->win + ((size_t)l * S->P + (size_t)q) * S->P;
}

/* Eq. (2): S_l^q = S_{l-1}^q ∘ S_{l-1}^{q-b^(l-1)} ∘ … ; rank 0's prefixes recorded. */
static void sets_build(sets *S, int n, int P) {
    S->P = P, S->n = n, S->k = nway_rounds(n, P);
    S->win = calloc((size_t)(S->k + 1) * P * P, 1);
    S->pre = calloc((size_t)(n * S->k + 2) * P, 1);
    S->pre_size = calloc((size_t)(n * S->k + 2), sizeof *S->pre_size);
    S->npre = 0;
    for (int q = 0; q < P; q++)
        W(S, 0, q)[q] = 1;
    S->pre[0] = 1, S->pre_size[S->npre++] = 1;
    long long d = 1;
    for (int l = 1; l < S->k; l++, d *= n + 1)
        for (int q = 0; q < P; q++) {
            memcpy(W(S, l, q), W(S, l - 1, q), (size_t)P);
            for (int j = 1; j <= n; j++) {
                const unsigned char *src = W(S, l - 1, (int)(((q - j * d) % P + P) % P));
                for (int r = 0; r < P; r++)
                    W(S, l, q)[r] += src[r];
                if (q == 0) {
                    memcpy(S->pre + (size_t)S->npre * P, W(S, l, 0), (size_t)P);
                    S->pre_size[S->npre++] = (long long)(j + 1) * d;
                }
            }
        }
}

static void sets_free(sets *S) {
    free(S->win), free(S->pre), free(S->pre_size);
}

/* The prefix set of rank q (rank 0's, rotated) of size c; NULL = none; c = 0: empty. */
static bool prefix(const sets *S, long long c, int q, unsigned char *out) {
    memset(out, 0, (size_t)S->P);
    if (c == 0)
        return true;
    for (int i = 0; i < S->npre; i++)
        if (S->pre_size[i] == c) {
            for (int r = 0; r < S->P; r++)
                out[(r + q) % S->P] = S->pre[(size_t)i * S->P + r];
            return true;
        }
    return false;
}

/* Does the last round (full, A, B) give rank p every input exactly once? */
static bool last_round_ok(const sets *S, int p, int full, long long A, long long B) {
    int P = S->P, k = S->k;
    long long M = 1;
    for (int l = 1; l < k; l++)
        M *= S->n + 1;
    unsigned char cnt[MAXP], part[MAXP];
    memcpy(cnt, W((sets *)S, k - 1, p), (size_t)P);
    if (!prefix(S, B, p, part))
        return false;
    for (int r = 0; r < P; r++)
        cnt[r] -= part[r];
    for (int i = 1; i <= full; i++) {
        const unsigned char *w = W((sets *)S, k - 1, (int)(((p - i * M) % P + P) % P));
        for (int r = 0; r < P; r++)
            cnt[r] += w[r];
    }
    int q = (int)(((p - (full + 1) * M) % P + P) % P);
    if (A > 0 && !prefix(S, A, q, part))
        return false;
    for (int r = 0; r < P && A > 0; r++)
        cnt[r] += part[r];
    for (int r = 0; r < P; r++)
        if (cnt[r] != 1)
            return false;
    return true;
}

/* Adaptable by brute force: any number of whole senders, any prefix sent, any dropped. */
static bool brute_adaptable(const sets *S) {
    if (S->P == 1)
        return true;
    for (int full = 0; full <= S->n; full++)
        for (int a = -1; a < S->npre; a++)
            for (int bb = -1; bb < S->npre; bb++) {
                long long A = a < 0 ? 0 : S->pre_size[a], B = bb < 0 ? 0 : S->pre_size[bb];
                if ((A > 0 && full == S->n) || !last_round_ok(S, 0, full, A, B))
                    continue;
                return true;
            }
    return false;
}

/* ==== plans ============================================================================ */

static void check_case(const nway_plan *pl) {
    int k = pl->k;
    long long M = pl->M;
    switch (pl->kase) {
    case NWAY_CASE1:
        check(pl->lrcv > 0 && pl->lsnd > 0, "case 1 tuple n=%d P=%d", pl->n, pl->P);
        break;
    case NWAY_CASE2:
        check(pl->lrcv > 0 && pl->lsnd == 0 && pl->send_part == 1, "case 2 n=%d P=%d", pl->n,
              pl->P);
        break;
    case NWAY_CASE3:
        check(pl->P == pl->s * M && pl->send_part == 0, "case 3 n=%d P=%d", pl->n, pl->P);
        break;
    case NWAY_CASE4:   /* eq. (12) */
        check(pl->lsnd == 1 && pl->P == pl->s * M + pl->jsnd, "case 4 n=%d P=%d", pl->n, pl->P);
        break;
    case NWAY_CASE5:   /* eq. (14) minus the receiver's own data */
        check(pl->lsnd > 1 && pl->drop_part == 1, "case 5 n=%d P=%d", pl->n, pl->P);
        break;
    default:
        break;
    }
    if (pl->kase == NWAY_CASE1 || pl->kase == NWAY_CASE2 || pl->kase == NWAY_CASE5 ||
        pl->kase == NWAY_BASE) {
        /* eq. (8) with the boundary distances of eqs. (5), (6) (base border: -1). */
        long long gs = 0, gr = pl->kase == NWAY_BASE ? -1 : 0, b = pl->n + 1, pw = 1;
        for (int i = 0; i + 2 <= pl->lsnd; i++, pw *= b)
            gs += pl->n * pw;
        gs += pl->lsnd ? pl->jsnd * pw : 0;
        pw = 1;
        for (int i = 0; i + 2 <= pl->lrcv; i++, pw *= b)
            gr += pl->n * pw;
        gr += pl->lrcv ? pl->jrcv * pw : 0;
        check(pl->P == pl->s * M + gs - gr, "eq. (8) n=%d P=%d %s", pl->n, pl->P,
              nway_case_name(pl->kase));
    }
    check(pl->lsnd < k && pl->lrcv < k && pl->s >= 1 && pl->s <= pl->n, "tuple range n=%d P=%d",
          pl->n, pl->P);
}

static void test_plans(int maxn, int maxp) {
    for (int n = 1; n <= maxn; n++)
        for (int P = 1; P <= maxp; P++) {
            sets S;
            sets_build(&S, n, P);
            nway_plan pl;
            bool ok = nway_plan_make(n, P, &pl), want = brute_adaptable(&S);
            check(ok == want, "n=%d P=%d: plan %d, brute force %d", n, P, ok, want);
            for (int p = 0; ok && P > 1 && p < P; p++)
                check(last_round_ok(&S, p, pl.full, pl.send_part, pl.drop_part),
                      "n=%d P=%d rank %d: plan's last round not exactly once", n, P, p);
            if (ok && P > 1)
                check_case(&pl);
            sets_free(&S);
        }
    nway_plan pl;                           /* bad n or P: refused, at once (n = 0 hung) */
    int bad[][2] = { { 0, 5 }, { -1, 5 }, { NWAY_MAX_N + 1, 300 }, { 2, 0 } };
    for (int i = 0; i < 4; i++)
        check(!nway_plan_make(bad[i][0], bad[i][1], &pl) && pl.kase == NWAY_NONE,
              "n=%d P=%d: a plan", bad[i][0], bad[i][1]);
}

/* ==== peers and the tree ================================================================ */

static void test_peers(void) {
    for (int n = 1; n <= 8; n++)
        for (int P = 1; P <= 64; P++)
            for (int l = 1; l <= nway_rounds(n, P); l++)
                for (int r = 0; r < P; r++)
                    for (int i = 1; i <= n; i++) {
                        long long d = 1;
                        for (int t = 1; t < l; t++)
                            d *= n + 1;
                        check(nway_to(r, l, i, n, P) == (int)((r + i * d) % P), "to");
                        check(nway_from(nway_to(r, l, i, n, P), l, i, n, P) == r, "from∘to");
                    }
}

/* All T-nodes by definition: blocks [i·b^h, min((i+1)·b^h, P)). */
static bool brute_node(int n, int P, int lo, int len) {
    for (long long bh = 1;; bh *= n + 1) {
        for (long long x = 0; x < P; x += bh)
            if (x == lo && len == (bh < P - x ? bh : P - x))
                return true;
        if (bh >= P)
            return false;
    }
}

static void test_tree(void) {
    for (int n = 1; n <= 8; n++)
        for (int P = 1; P <= 64; P++)
            for (int lo = 0; lo < P; lo++)
                for (int len = 1; lo + len <= P; len++) {
                    bool is = nway_is_node(n, P, lo, len);
                    check(is == brute_node(n, P, lo, len), "is_node n=%d P=%d [%d,+%d)", n, P, lo,
                          len);
                    if (!is || len == 1)
                        continue;
                    nway_range node = { lo, len }, kids[NWAY_MAX_N + 1];
                    int nk = nway_children(n, P, node, kids), at = lo;
                    check(nk >= 2 && nk <= n + 1, "children count n=%d P=%d", n, P);
                    for (int i = 0; i < nk; i++) {
                        check(kids[i].lo == at && nway_is_node(n, P, kids[i].lo, kids[i].len),
                              "children partition n=%d P=%d [%d,+%d)", n, P, lo, len);
                        at += kids[i].len;
                    }
                    check(at == lo + len, "children cover n=%d P=%d", n, P);
                }
}

/* ==== pieces ============================================================================ */

static long long offset_in(int x, int start, int P) {
    return ((long long)x - start + P) % P;
}

/* The smallest T-node strictly containing r (len 0 if r is the root). */
static nway_range parent_of(int n, int P, nway_range r) {
    nway_range best = { 0, 0 };
    for (int lo = 0; lo <= r.lo; lo++)
        for (int len = r.lo + r.len - lo; lo + len <= P; len++)
            if (len > r.len && (best.len == 0 || len < best.len) && nway_is_node(n, P, lo, len)) {
                best.lo = lo, best.len = len;
                break;
            }
    return best;
}

/* Could the parent of a piece have been held instead (inside the window, no split)? */
static bool parent_fits(const nway_plan *pl, nway_range par, int start, long long w) {
    long long o0 = offset_in(par.lo, start, pl->P), o1 = offset_in(par.lo + par.len - 1, start,
                                                                   pl->P);
    if (par.len == 0 || o1 >= w || o1 - o0 != par.len - 1)
        return false;
    long long cuts[2] = { w - pl->send_part, w - pl->drop_part };
    for (int i = 0; i < 2; i++)
        if (cuts[i] > o0 && cuts[i] <= o1)
            return false;
    return true;
}

static void check_pieces(const nway_plan *pl, int r, int l, nway_range *pc) {
    long long w = 1;
    for (int i = 0; i < l; i++)
        w *= pl->n + 1;
    int np = nway_pieces(pl, r, l, pc), P = pl->P, start = (int)(((r - w + 1) % P + P) % P);
    long long at = 0;
    for (int i = 0; i < np; i++) {
        check(nway_is_node(pl->n, P, pc[i].lo, pc[i].len) && offset_in(pc[i].lo, start, P) == at,
              "pieces n=%d P=%d rank %d l=%d: piece %d not the next node", pl->n, P, r, l, i);
        at += pc[i].len;
        check(!parent_fits(pl, parent_of(pl->n, P, pc[i]), start, w),
              "pieces n=%d P=%d rank %d l=%d: piece %d not maximal", pl->n, P, r, l, i);
    }
    check(at == w, "pieces n=%d P=%d rank %d l=%d cover %lld of %lld", pl->n, P, r, l, at, w);
    check(np <= nway_max_pieces(pl), "pieces n=%d P=%d rank %d l=%d: %d > nway_max_pieces",
          pl->n, P, r, l, np);
    if (l == pl->k - 1)
        check(nway_newest_pieces(pl, r, l, pl->send_part) >= 0 &&
              nway_newest_pieces(pl, r, l, pl->drop_part) >= 0,
              "pieces n=%d P=%d rank %d: no boundary at the last round's parts", pl->n, P, r);
}

static void test_pieces(void) {
    nway_range pc[MAXP + 1];
    for (int n = 1; n <= 8; n++)
        for (int P = 1; P <= 64; P++) {
            nway_plan pl;
            if (!nway_plan_make(n, P, &pl))
                continue;
            for (int r = 0; r < P; r++)
                for (int l = 0; l < pl.k; l++)
                    check_pieces(&pl, r, l, pc);
        }
}

/* nway_max_pieces where it is below P (n = 1, 2: from P = 60 on). */
static void test_piece_bound(void) {
    nway_range pc[MAXP + 1];
    for (int n = 1; n <= 2; n++)
        for (int P = 60; P <= MAXP; P += P < 200 ? 1 : 41) {
            nway_plan pl;
            if (!nway_plan_make(n, P, &pl))
                continue;
            for (int r = 0; r < P; r++)
                for (int l = 0; l < pl.k; l++)
                    check(nway_pieces(&pl, r, l, pc) <= nway_max_pieces(&pl),
                          "pieces n=%d P=%d rank %d l=%d: more than nway_max_pieces", n, P, r, l);
        }
}

/* ==== the algorithms through the symbolic verifier ======================================= */

static const collie_algorithm *find_alg(int coll) {
    const collie_algorithm *alg = collie_algorithm_find(coll, "nway_dissemination");
    check(alg != NULL, "%s nway_dissemination not registered", collie_coll_name(coll));
    return alg;
}

static long sym_runs;

static void verify(const collie_algorithm *alg, int coll, int P, int n, size_t count,
                   bool in_place, bool commutative) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = coll, a.size = P, a.count = count, a.elem_size = 4, a.bytes = count * 4;
    a.commutative = commutative, a.in_place = in_place, a.shared_memory = true;
    if (n > 0) {
        a.params.count = 1;
        strcpy(a.params.key[0], "n");
        a.params.value[0] = n;
    }
    const char *why = NULL;
    nway_plan pl;
    bool want = coll == COLL_BARRIER || nway_plan_make(n > 0 ? n : nway_default_n(P), P, &pl);
    bool ok = collie_algorithm_accepts(alg, &a, &why);
    check(ok == want, "%s n=%d P=%d: accepts %d, adaptable %d", collie_coll_name(coll), n, P, ok,
          want);
    if (!ok)
        return;
    char err[512];
    sym_runs++;
    if (sym_verify(alg, &a, err, sizeof err) != 0)
        check(false, "n=%d: %s", n, err);
}

static void test_algorithms(int maxp, const int *ns, int nn, int step) {
    const collie_algorithm *ar = find_alg(COLL_ALLREDUCE), *br = find_alg(COLL_BARRIER);
    if (!ar || !br)
        return;
    for (int t = 0; t < nn; t++)
        for (int P = 1; P <= maxp; P += P < 64 ? 1 : step) {
            verify(br, COLL_BARRIER, P, ns[t], 0, false, true);
            verify(ar, COLL_ALLREDUCE, P, ns[t], 3, P % 2 == 0, false);
            if (P <= 64)
                verify(ar, COLL_ALLREDUCE, P, ns[t], 1, P % 2 == 1, true);
            /* above CP_PACK_MAX_BYTES one PUT per piece (long vectors: a sample of P) */
            if (P <= 9 || (P <= 64 && P % 16 <= 1))
                verify(ar, COLL_ALLREDUCE, P, ns[t], CP_PACK_MAX_BYTES / 4 + 1, false, false);
        }
}

/* ==== the table ========================================================================== */

static int max_pieces(const nway_plan *pl) {
    nway_range pc[MAXP + 1];
    int most = 1;
    for (int r = 0; r < pl->P; r++)
        for (int l = 0; l < pl->k; l++) {
            int np = nway_pieces(pl, r, l, pc);
            most = np > most ? np : most;
        }
    return most;
}

static void print_table(void) {
    printf("| P | n=1 | n=2 | n=3 | n=4 | n=5 | n=6 | default n |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int P = 1; P <= 100; P++) {
        printf("| %d |", P);
        for (int n = 1; n <= 6; n++) {
            nway_plan pl;
            if (!nway_plan_make(n, P, &pl)) {
                printf(" — |");
                continue;
            }
            printf(" %s", nway_case_name(pl.kase));
            if (pl.kase != NWAY_EXACT && pl.kase != NWAY_CASE3)
                printf(" (%d,%d,%d,%d,%d)", pl.s, pl.lsnd, pl.lrcv, pl.jsnd, pl.jrcv);
            printf(" k=%d p≤%d |", pl.k, max_pieces(&pl));
        }
        printf(" %d |\n", nway_default_n(P));
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--table") == 0) {
        print_table();
        return 0;
    }
    test_plans(8, 64);
    test_plans(6, 100);
    test_peers();
    test_tree();
    test_pieces();
    test_piece_bound();
    int all[] = { -1, 1, 2, 3, 4, 5, 6, 7, 8 };
    test_algorithms(64, all, 9, 1);
    const char *lt = getenv("COLLIE_LONG_TESTS");
    if (lt && strcmp(lt, "1") == 0) {
        int some[] = { 1, 2, 3, 7 };
        test_algorithms(1024, some, 4, 37);
    }
    printf("test_nway: %ld schedules verified, %d failure(s)\n", sym_runs, failures);
    return failures ? 1 : 0;
}
