/*
 * test_patterns.c — the index math of src/algorithms/patterns.c against brute-force
 * definitions, for team sizes 1…64 (and chains up to 1100 sources).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "algorithms/patterns.h"

#define MAXP 64

#include "check.h"

/* ---- powers of two: by search ------------------------------------------------------- */
static void test_pow2(void) {
    for (int p = 1; p <= 4096; p++) {
        int best = 1, lf = 0, lc = 0;
        for (int k = 0; k < 14; k++) {
            if ((1 << k) <= p) {
                best = 1 << k;
                lf = k;
            }
        }
        while ((1 << lc) < p)
            lc++;
        check(pat_pow2_floor(p) == best, "pow2_floor(%d) = %d, want %d", p, pat_pow2_floor(p),
              best);
        check(pat_log2_floor(p) == lf, "log2_floor(%d)", p);
        check(pat_log2_ceil(p) == lc, "log2_ceil(%d)", p);
    }
}

/* ---- folding: survivors listed by walking the ranks --------------------------------- */
static void test_fold(void) {
    for (int p = 1; p <= MAXP; p++) {
        int p2 = 1, surv[MAXP], ns = 0;
        while (p2 * 2 <= p)
            p2 *= 2;
        int r = p - p2;
        for (int q = 0; q < p; q++) {
            bool removed = q < 2 * r && q % 2 == 1;
            check(pat_fold_newrank(q, p) == (removed ? -1 : ns), "fold_newrank(%d, %d)", q, p);
            check(pat_fold_partner(q, p) == (q < 2 * r ? (q ^ 1) : -1), "fold_partner(%d, %d)", q,
                  p);
            if (!removed)
                surv[ns++] = q;
        }
        check(ns == p2 && pat_fold_removed(p) == r, "fold of %d: %d survivors", p, ns);
        for (int i = 0; i < ns; i++) {
            int group = (surv[i] + 1 < p && pat_fold_newrank(surv[i] + 1, p) < 0) ? 2 : 1;
            check(pat_fold_oldrank(i, p) == surv[i], "fold_oldrank(%d, %d)", i, p);
            check(pat_fold_first(i, p) == surv[i], "fold_first(%d, %d)", i, p);
            check(pat_fold_first(i + 1, p) == surv[i] + group, "fold groups contiguous at %d, %d",
                  i, p);
        }
    }
}

/* ---- binomial tree: built by doubling B_{k+1} = B_k + (B_k shifted, root under 0) ---- */
static void brute_binomial(int p, int *parent, int *size) {
    parent[0] = -1;
    for (int half = 1; half < p; half *= 2)
        for (int v = half; v < 2 * half && v < p; v++)
            parent[v] = v == half ? 0 : parent[v - half] + half;
    for (int v = 0; v < p; v++)
        size[v] = 1;
    for (int v = p - 1; v > 0; v--)
        size[parent[v]] += size[v];
}

static void check_children(int p, int root, int v, const int *parent, const int *size) {
    int rank = (v + root) % p, n = pat_binomial_nchildren(rank, root, p), seen = 0;
    int prev = v;
    for (int i = 0; i < n; i++) {
        int c = (pat_binomial_child(rank, root, p, i) - root + p) % p;
        check(c > prev && c < p && parent[c] == v, "binomial child %d of %d (root %d, p %d)",
              i, rank, root, p);
        check(i + 1 == n || (c > 0 && c < p && size[c] == c - v),
              "binomial child %d of %d: a full subtree right after the previous ones", i, v);
        prev = c;
    }
    for (int w = 1; w < p; w++)
        seen += parent[w] == v;
    check(seen == n, "binomial nchildren(%d, root %d, p %d) = %d, want %d", rank, root, p, n,
          seen);
}

static void test_binomial(void) {
    int parent[MAXP], size[MAXP];
    for (int p = 1; p <= MAXP; p++) {
        brute_binomial(p, parent, size);
        for (int root = 0; root < p; root++)
            for (int v = 0; v < p; v++) {
                int rank = (v + root) % p;
                int want = parent[v] < 0 ? -1 : (parent[v] + root) % p;
                check(pat_binomial_parent(rank, root, p) == want, "binomial parent(%d, %d, %d)",
                      rank, root, p);
                check_children(p, root, v, parent, size);
            }
        for (int v = 1; v < p; v++) {             /* subtree of v is v … v+size-1 */
            int depth = 0, u = v;
            while (u > 0 && depth <= 64) {
                u = parent[u];
                depth++;
            }
            check(depth <= pat_log2_ceil(p), "binomial depth %d at p %d", depth, p);
            check(parent[v] < v && v + size[v] <= p, "binomial subtree of %d contiguous", v);
        }
    }
}

/* ---- dissemination: knowledge spreads to everyone in exactly ⌈lg p⌉ rounds --------- */
static void test_dissemination(void) {
    for (int p = 1; p <= MAXP; p++) {
        uint64_t know[MAXP], full = p == 64 ? ~0ull : (1ull << p) - 1;
        int rounds = pat_dissemination_rounds(p), done_at = p == 1 ? 0 : -1;
        for (int r = 0; r < p; r++)
            know[r] = 1ull << r;
        for (int k = 0; k < rounds; k++) {
            uint64_t next[MAXP];
            for (int r = 0; r < p; r++)
                next[r] = know[r];
            for (int r = 0; r < p; r++) {
                int to = pat_dissemination_to(r, k, p);
                check(pat_dissemination_from(to, k, p) == r, "dissemination from/to %d %d", p, k);
                next[to] |= know[r];
            }
            bool all = true;
            for (int r = 0; r < p; r++) {
                know[r] = next[r];
                all = all && know[r] == full;
            }
            if (all && done_at < 0)
                done_at = k + 1;
        }
        check(done_at == rounds, "dissemination p=%d: everyone knows after %d rounds, not %d", p,
              done_at, rounds);
    }
}

/* ---- ring and pairwise exchange ---------------------------------------------------- */
static void test_ring(void) {
    for (int p = 1; p <= MAXP; p++) {
        int r = 0;
        for (int i = 0; i < p; i++) {
            check(pat_ring_prev(pat_ring_next(i, p), p) == i, "ring prev/next %d %d", i, p);
            r = pat_ring_next(r, p);
            check(i == p - 1 || r != 0, "ring of %d closes early", p);
        }
        check(r == 0, "ring of %d does not close", p);
        for (int q = 0; q < p; q++) {
            uint64_t to_set = 0;
            for (int i = 1; i < p; i++) {
                int to = pat_pairwise_to(q, i, p);
                check(pat_pairwise_from(to, i, p) == q, "pairwise from(to) %d %d %d", q, i, p);
                to_set |= 1ull << to;
            }
            uint64_t others = (p == 64 ? ~0ull : (1ull << p) - 1) & ~(1ull << q);
            check(to_set == others, "pairwise steps of %d in %d reach everyone else", q, p);
        }
    }
}

/* ---- segments: dealt element by element ------------------------------------------- */
static void test_segments(void) {
    for (int p = 1; p <= MAXP; p++)
        for (size_t count = 0; count <= (size_t)(3 * p + 5); count++) {
            size_t len[MAXP] = { 0 }, start = 0;
            for (size_t e = 0; e < count; e++)
                len[e % (size_t)p]++;
            for (int j = 0; j < p; j++) {
                check(pat_seg_start(count, p, j) == start && pat_seg_len(count, p, j) == len[j],
                      "segment %d of %zu in %d", j, count, p);
                start += len[j];
            }
            check(pat_seg_start(count, p, p) == count, "segments of %zu in %d end", count, p);
        }
}

/* ---- halving and doubling: blocks tracked by simulation ---------------------------- */
static void test_hd(void) {
    for (int p2 = 1; p2 <= MAXP; p2 *= 2) {
        int first[MAXP], nseg[MAXP], steps = pat_log2_floor(p2);
        for (int i = 0; i < p2; i++) {
            first[i] = 0;
            nseg[i] = p2;
        }
        for (int k = 0; k <= steps; k++) {
            for (int i = 0; i < p2; i++) {
                int f, n;
                pat_hd_block(i, k, p2, &f, &n);
                check(f == first[i] && n == nseg[i], "hd block of %d before step %d (p2 %d)", i, k,
                      p2);
            }
            for (int i = 0; i < p2 && k < steps; i++) {
                int partner = pat_hd_partner(i, k);
                check(partner == (i ^ (1 << k)), "hd partner");
                check(first[partner] == first[i] && nseg[partner] == nseg[i], "hd pairs share");
            }
            for (int i = 0; i < p2 && k < steps; i++) {
                nseg[i] /= 2;
                first[i] += (i & (1 << k)) ? nseg[i] : 0;
            }
        }
        uint64_t owned = 0;
        for (int i = 0; i < p2; i++)
            owned |= 1ull << first[i];
        check(owned == (p2 == 64 ? ~0ull : (1ull << p2) - 1), "hd final segments, p2 %d", p2);
    }
}

/* ---- chains: the links cover the sources in order, none too wide ------------------ */
static void test_chain(void) {
    int maxs[] = { 2, 3, 255 };
    for (int m = 0; m < 3; m++)
        for (int nsrc = 1; nsrc <= 1100; nsrc++) {
            int links = pat_chain_links(nsrc, maxs[m]), next = 0, want = 1, cap = maxs[m];
            while (cap < nsrc) {
                cap += maxs[m] - 1;
                want++;
            }
            check(links == want, "chain links(%d, %d) = %d, want %d", nsrc, maxs[m], links, want);
            for (int l = 0; l < links; l++) {
                int f, n;
                pat_chain_link(nsrc, maxs[m], l, &f, &n);
                check(f == next && n >= 1 && n + (l > 0) <= maxs[m], "chain link %d of %d/%d", l,
                      nsrc, maxs[m]);
                next = f + n;
            }
            check(next == nsrc, "chain of %d/%d covers %d", nsrc, maxs[m], next);
        }
}

int main(void) {
    test_pow2();
    test_fold();
    test_binomial();
    test_dissemination();
    test_ring();
    test_segments();
    test_hd();
    test_chain();
    if (failures)
        fprintf(stderr, "test_patterns: %d failures\n", failures);
    else
        printf("test_patterns: ok\n");
    return failures ? 1 : 0;
}
