/*
 * test_blocks.c — the index math of src/algorithms/patterns_blocks.c against brute-force
 * definitions for team sizes 1…64, and the symbolic verifier (symbolic.h) over the
 * algorithms that use it: allreduce binary_blocks and ring_pipelined (segment = 1, 2, 3, 8
 * elements and the default), reduce rabenseifner, binary_blocks, ring and binary_tree
 * (every root for P <= 32, roots {0, 1, P/2, P-2, P-1} above).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"
#include "symbolic.h"

#define MAXP 64

extern const collie_algorithm collie_algo_allreduce_binary_blocks;
extern const collie_algorithm collie_algo_allreduce_ring_pipelined;
extern const collie_algorithm collie_algo_reduce_rabenseifner;
extern const collie_algorithm collie_algo_reduce_binary_blocks;
extern const collie_algorithm collie_algo_reduce_ring;
extern const collie_algorithm collie_algo_reduce_binary_tree;

#include "check.h"

/* ---- binary blocks: the blocks listed by walking the bits of p from the top ---------- */
static void test_bb_blocks(int p) {
    int nb = 0, first = 0, dmax = 0, prev = -1;
    for (int e = 7; e >= 0; e--) {
        if (!((p >> e) & 1))
            continue;
        check(pat_bb_exp(nb, p) == e, "bb_exp(%d, %d)", nb, p);
        check(pat_bb_first(nb, p) == first, "bb_first(%d, %d)", nb, p);
        for (int r = first; r < first + (1 << e); r++)
            check(pat_bb_block_of(r, p) == nb, "bb_block_of(%d, %d)", r, p);
        if (prev >= 0 && prev - e > dmax)
            dmax = prev - e;
        prev = e;
        first += 1 << e;
        nb++;
    }
    check(pat_bb_nblocks(p) == nb, "bb_nblocks(%d)", p);
    check(pat_bb_delta_max(p) == dmax, "bb_delta_max(%d) = %d, want %d", p,
          pat_bb_delta_max(p), dmax);
}

/* Segments held by local rank i of a block with exponent e, as a bit mask over 2^e0. */
static uint64_t held_mask(int i, int e, int e0) {
    int first, nseg;
    pat_hd_block(i, e, 1 << e0, &first, &nseg);
    uint64_t m = 0;
    for (int s = first; s < first + nseg; s++)
        m |= 1ULL << s;
    return m;
}

/* Feeding: targets are the ranks of block b-1 congruent to i mod 2^eb, their segments
 * tile the feeder's, and pat_bb_feeder inverts pat_bb_feed_target. */
static void test_bb_feed(int p) {
    int e0 = pat_bb_exp(0, p);
    for (int b = 1; b < pat_bb_nblocks(p); b++) {
        int eb = pat_bb_exp(b, p), eu = pat_bb_exp(b - 1, p), fu = pat_bb_first(b - 1, p);
        check(pat_bb_feed_count(b, p) == 1 << (eu - eb), "bb_feed_count(%d, %d)", b, p);
        for (int i = 0; i < 1 << eb; i++) {
            uint64_t got = 0, overlap = 0;
            int n = 0;
            for (int t = 0; t < pat_bb_feed_count(b, p); t++) {
                int j = pat_bb_feed_target(i, t, b, p) - fu;
                uint64_t m = held_mask(j, eu, e0);
                overlap |= got & m;
                got |= m;
                n += j >= 0 && j < (1 << eu) && j % (1 << eb) == i;
                check(pat_bb_feeder(j, b, p) == pat_bb_first(b, p) + i, "bb_feeder(%d,%d,%d)",
                      j, b, p);
            }
            check(n == 1 << (eu - eb), "bb_feed_target(%d, *, %d, %d): wrong ranks", i, b, p);
            check(!overlap && got == held_mask(i, eb, e0), "bb feed tiling (%d, %d, %d)", i,
                  b, p);
        }
    }
}

/* ---- rooted fold: survivors listed by walking the pairs ------------------------------ */
static void test_rfold(int p) {
    int r = pat_fold_removed(p);
    for (int root = 0; root < p; root++) {
        int ns = 0;
        for (int q = 0; q < p; q++) {
            bool removed = q < 2 * r && (q % 2 == 1 ? q != root : q + 1 == root);
            int want = removed ? -1 : ns++;
            check(pat_rfold_newrank(q, p, root) == want, "rfold_newrank(%d, %d, %d)", q, p,
                  root);
            if (want >= 0)
                check(pat_rfold_oldrank(want, p, root) == q, "rfold_oldrank(%d, %d, %d)", want,
                      p, root);
        }
        check(ns == pat_pow2_floor(p), "rfold survivors (%d, %d)", p, root);
        check(pat_rfold_newrank(root, p, root) >= 0, "rfold: root %d of %d removed", root, p);
    }
}

/* ---- gather: simulate holdings, the root ends with everything, others send once ------ */
static void test_gather(int L) {
    int p2 = 1 << L;
    for (int nroot = 0; nroot < p2; nroot++) {
        uint64_t hold[MAXP];
        int sent[MAXP] = { 0 };
        for (int i = 0; i < p2; i++)
            hold[i] = held_mask(i, L, L);
        for (int k = L - 1; k >= 0; k--)
            for (int i = 0; i < p2; i++) {
                int role = pat_hd_gather_role(i, nroot, k), j = i ^ (1 << k);
                bool active = ((i ^ nroot) >> (k + 1)) == 0;
                check(role == (!active ? 0 : ((i ^ nroot) >> k) & 1 ? -1 : 1),
                      "gather_role(%d, %d, %d)", i, nroot, k);
                check(role == 0 || pat_hd_gather_role(j, nroot, k) == -role,
                      "gather roles of a pair (%d, %d, %d)", i, nroot, k);
                if (role > 0) {
                    check(hold[j] == held_mask(j, k + 1, L), "gather block (%d, %d)", j, k);
                    hold[i] |= hold[j];
                    sent[j]++;
                }
            }
        check(hold[nroot] == (p2 == 64 ? ~0ULL : (1ULL << p2) - 1), "gather to %d of %d",
              nroot, p2);
        for (int i = 0; i < p2; i++)
            check(sent[i] == (i != nroot), "gather: %d sends %d times", i, sent[i]);
    }
}

/* ---- chunks: cut by a loop ----------------------------------------------------------- */
static void test_chunks(void) {
    for (size_t len = 0; len < 40; len++)
        for (size_t cs = 1; cs < 12; cs++) {
            size_t n = 0, total = 0;
            for (size_t off = 0; off < len; off += cs) {
                size_t want = len - off < cs ? len - off : cs;
                check(pat_chunk_len(len, cs, n) == want, "chunk_len(%zu, %zu, %zu)", len, cs, n);
                total += want;
                n++;
            }
            check(pat_chunk_count(len, cs) == n && total == len, "chunk_count(%zu, %zu)", len,
                  cs);
        }
}

/* ---- pipelined ring: part q is sent in step g by rank q+1+g; the reduce stage visits
 * every rank but the chain's start once and ends on the owner. ------------------------ */
static void test_pring(int p) {
    check(pat_pring_steps(p) == 2 * (p - 1), "pring_steps(%d)", p);
    for (int q = 0; q < p; q++) {
        int reduced[MAXP] = { 0 };
        for (int g = 0; g < pat_pring_steps(p); g++) {
            int from = (q + 1 + g) % p, to = (from + 1) % p;
            check(pat_pring_send_part(from, g, p) == q, "pring_send_part(%d, %d, %d)", from, g,
                  p);
            check(pat_pring_recv_part(to, g, p) == q, "pring_recv_part(%d, %d, %d)", to, g, p);
            if (g < p - 1)
                reduced[to]++;
            if (g == p - 2)
                check(to == q, "pring: part %d ends on %d (p %d)", q, to, p);
        }
        for (int r = 0; r < p; r++)
            check(reduced[r] == (r != (q + 1) % p), "pring: rank %d reduces part %d %d times",
                  r, q, reduced[r]);
    }
}

/* ---- binary tree: heap order rotated by the root ------------------------------------- */
static void test_btree(int p) {
    for (int root = 0; root < p; root++) {
        int seen[MAXP] = { 0 }, maxdepth = 0;
        for (int r = 0; r < p; r++) {
            int v = (r - root + p) % p, depth = 0;
            for (int x = v; x > 0; x = (x - 1) / 2)
                depth++;
            maxdepth = depth > maxdepth ? depth : maxdepth;
            check(pat_btree_parent(r, root, p) == (v ? ((v - 1) / 2 + root) % p : -1),
                  "btree_parent(%d, %d, %d)", r, root, p);
            int nc = (2 * v + 1 < p) + (2 * v + 2 < p);
            check(pat_btree_nchildren(r, root, p) == nc, "btree_nchildren(%d, %d, %d)", r, root,
                  p);
            for (int i = 0; i < nc; i++) {
                int c = pat_btree_child(r, root, p, i);
                check(c == (2 * v + 1 + i + root) % p && pat_btree_parent(c, root, p) == r,
                      "btree_child(%d, %d, %d, %d)", r, root, p, i);
                seen[c]++;
            }
        }
        for (int r = 0; r < p; r++)
            check(seen[r] == (r != root), "btree: rank %d has %d parents", r, seen[r]);
        check(pat_btree_depth(p) == maxdepth, "btree_depth(%d)", p);
    }
}

static void test_patterns(void) {
    for (int p = 1; p <= MAXP; p++) {
        test_bb_blocks(p);
        test_bb_feed(p);
        test_rfold(p);
        test_pring(p);
        test_btree(p);
    }
    for (int L = 0; L <= 6; L++)
        test_gather(L);
    test_chunks();
}

/* ==== the verifier over the algorithms ================================================ */

static long runs;

static void verify(const collie_algorithm *alg, collie_coll_args a) {
    const char *why;
    if (!collie_algorithm_accepts(alg, &a, &why)) {
        check(!a.commutative && (alg->needs & ALGO_NEEDS_COMMUTATIVE),
              "%s declined P=%d: %s", alg->name, a.size, why);
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

/* In place or not × commutative or not. */
static void variants(const collie_algorithm *alg, collie_coll_args a) {
    for (int ip = 0; ip < 2; ip++)
        for (int comm = 0; comm < 2; comm++) {
            a.in_place = ip;
            a.commutative = comm;
            verify(alg, a);
        }
}

static size_t counts_for(int P, size_t *out) {
    size_t c[] = { 0, 1, (size_t)P - 1, (size_t)P, (size_t)P + 1, 2 * (size_t)P + 3, 37,
                   9 * (size_t)P + 5 };
    memcpy(out, c, sizeof c);
    return sizeof c / sizeof c[0];
}

/* ring_pipelined with segment = k elements (0: the default). */
static void sweep_ring_pipelined(void) {
    const collie_algorithm *alg = &collie_algo_allreduce_ring_pipelined;
    int segs[] = { 0, 1, 2, 3, 8 };
    for (int P = 1; P <= MAXP; P++) {
        size_t counts[8];
        size_t n = counts_for(P, counts);
        for (size_t c = 0; c < n; c++)
            for (int k = 0; k < 5; k++) {
                collie_coll_args a = call(alg, P, counts[c], 0);
                if (segs[k]) {
                    a.params.count = 1;
                    strcpy(a.params.key[0], "segment");
                    a.params.value[0] = (long long)segs[k] * (long long)a.elem_size;
                }
                variants(alg, a);
            }
    }
    collie_coll_args a = call(alg, 3, 10, 0);
    a.params.count = 1;
    strcpy(a.params.key[0], "segment");
    a.params.value[0] = 0;
    a.commutative = true;
    const char *why = NULL;
    check(!collie_algorithm_accepts(alg, &a, &why) && why, "ring_pipelined accepts segment=0");
    a.params.value[0] = 3;                      /* less than an element: one element */
    verify(alg, a);
}

static void sweep_allreduce_blocks(void) {
    const collie_algorithm *alg = &collie_algo_allreduce_binary_blocks;
    for (int P = 1; P <= MAXP; P++) {
        size_t counts[8];
        size_t n = counts_for(P, counts);
        for (size_t c = 0; c < n; c++)
            variants(alg, call(alg, P, counts[c], 0));
    }
}

/* Reduce algorithms: every root for small P, a few roots above. */
static void sweep_reduce(const collie_algorithm *alg) {
    for (int P = 1; P <= MAXP; P++) {
        size_t counts[3] = { (size_t)P + 1, 37, 1 };
        int few[5] = { 0, 1, P / 2, P - 2, P - 1 };
        int nroots = P <= 32 ? P : 5;
        for (int ri = 0; ri < nroots; ri++) {
            int root = P <= 32 ? ri : few[ri];
            if (root < 0 || (ri > 0 && P > 32 && root == few[ri - 1]))
                continue;
            for (int c = 0; c < 3; c++)
                variants(alg, call(alg, P, counts[c], root));
        }
    }
}

static void test_registered(void) {
    const char *ar[] = { "binary_blocks", "ring_pipelined" };
    const char *rd[] = { "rabenseifner", "binary_blocks", "ring", "binary_tree" };
    for (int i = 0; i < 2; i++)
        check(collie_algorithm_find(COLL_ALLREDUCE, ar[i]) != NULL, "allreduce %s not registered",
              ar[i]);
    for (int i = 0; i < 4; i++)
        check(collie_algorithm_find(COLL_REDUCE, rd[i]) != NULL, "reduce %s not registered",
              rd[i]);
}

int main(void) {
    clock_t t0 = clock();
    test_patterns();
    sweep_ring_pipelined();
    sweep_allreduce_blocks();
    sweep_reduce(&collie_algo_reduce_rabenseifner);
    sweep_reduce(&collie_algo_reduce_binary_blocks);
    sweep_reduce(&collie_algo_reduce_ring);
    sweep_reduce(&collie_algo_reduce_binary_tree);
    test_registered();
    printf("test_blocks: %ld schedules verified, %.1f s\n", runs,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    if (failures)
        fprintf(stderr, "test_blocks: %d failures\n", failures);
    else
        printf("test_blocks: ok\n");
    return failures ? 1 : 0;
}
