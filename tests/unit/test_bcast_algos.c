/*
 * test_bcast_algos.c — the broadcasts linear, binary_tree, scatter_allgather and chain:
 * their index math (src/algorithms/patterns_bcast.c) against brute-force definitions for
 * team sizes 1…64, and every algorithm through the symbolic verifier (symbolic.h) for
 * P = 1…64 × roots {0, P/2, P-1} × counts, chain also × segment sizes of 1, 2, 3 and 8
 * elements (and sizes that are not whole elements), plus chain's parameter checks and
 * the bytes each rank sends.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_bcast.h"
#include "symbolic.h"

extern const collie_algorithm collie_algo_bcast_linear;
extern const collie_algorithm collie_algo_bcast_binary_tree;
extern const collie_algorithm collie_algo_bcast_scatter_allgather;
extern const collie_algorithm collie_algo_bcast_chain;

#define MAXP 64
#define MAXSEG 64

#include "check.h"

/* ---- binary tree: filled level by level, each node takes the next two ranks --------- */
static void brute_bintree(int p, int *parent) {
    int next = 1;
    parent[0] = -1;
    for (int v = 0; v < p; v++)
        for (int c = 0; c < 2 && next < p; c++)
            parent[next++] = v;
}

static void test_bintree(void) {
    int parent[MAXP];
    for (int p = 1; p <= MAXP; p++) {
        brute_bintree(p, parent);
        for (int root = 0; root < p; root++)
            for (int v = 0; v < p; v++) {
                int rank = (v + root) % p, n = pat_bintree_nchildren(rank, root, p), seen = 0;
                int want = parent[v] < 0 ? -1 : (parent[v] + root) % p;
                check(pat_bintree_parent(rank, root, p) == want, "bintree parent(%d,%d,%d)",
                      rank, root, p);
                for (int i = 0; i < n; i++) {
                    int c = pat_bintree_child(rank, root, p, i);
                    check(pat_bintree_parent(c, root, p) == rank && c == (2 * v + 1 + i + root) % p,
                          "bintree child %d of %d", i, v);
                }
                for (int w = 1; w < p; w++)
                    seen += parent[w] == v;
                check(seen == n && n <= 2, "bintree nchildren(%d,%d,%d) = %d, want %d", rank,
                      root, p, n, seen);
            }
    }
}

/* ---- binomial subtrees: w is in v's subtree when v is an ancestor of w (or w) ------- */
static bool is_ancestor(int v, int w, int root, int p) {
    int rank = (w + root) % p, target = (v + root) % p;
    for (int guard = 0; rank >= 0 && guard <= p; guard++) {
        if (rank == target)
            return true;
        rank = pat_binomial_parent(rank, root, p);
    }
    return false;
}

static void test_subtrees(void) {
    for (int p = 1; p <= MAXP; p++)
        for (int root = 0; root < p; root += (p > 8 ? 7 : 1))
            for (int v = 0; v < p; v++) {
                int rank = (v + root) % p, size = 0;
                for (int w = 0; w < p; w++) {
                    bool in = is_ancestor(v, w, root, p);
                    size += in;
                    check(pat_binomial_in_subtree(rank, root, p, w) == in,
                          "binomial subtree of %d holds %d (root %d, p %d): %d", v, w, root, p,
                          in);
                }
                check(pat_binomial_subtree_size(rank, root, p) == size,
                      "binomial subtree size of %d (p %d) = %d, want %d", v, p,
                      pat_binomial_subtree_size(rank, root, p), size);
            }
}

/* ---- ring allgather: simulated; every block is sent by a holder, all end with all --- */
static void test_ring_allgather(void) {
    for (int p = 1; p <= MAXP; p++) {
        uint64_t have[MAXP], full = p == 64 ? ~0ull : (1ull << p) - 1;
        for (int v = 0; v < p; v++)
            have[v] = 1ull << v;
        for (int j = 0; j < p - 1; j++) {
            uint64_t got[MAXP] = { 0 };
            for (int v = 0; v < p; v++) {
                int b = pat_ring_ag_send_block(v, j, p), to = (v + 1) % p;
                check(have[v] >> b & 1, "ring allgather p=%d: %d sends block %d it lacks", p, v,
                      b);
                check(pat_ring_ag_recv_block(to, j, p) == b, "ring allgather recv p=%d", p);
                check(!(have[to] >> b & 1), "ring allgather p=%d: block %d sent twice", p, b);
                got[to] |= 1ull << b;
            }
            for (int v = 0; v < p; v++)
                have[v] |= got[v];
        }
        for (int v = 0; v < p; v++)
            check(have[v] == full, "ring allgather p=%d: rank %d incomplete", p, v);
    }
}

/* ---- chain neighbours: the walk from the root visits root, root+1, … once each ------ */
static void test_chain_neighbours(void) {
    for (int p = 1; p <= MAXP; p++)
        for (int root = 0; root < p; root++) {
            int r = root, steps = 0;
            check(pat_chain_prev(root, root, p) == -1, "chain: the root has a predecessor");
            while (pat_chain_next(r, root, p) >= 0 && steps <= p) {
                int n = pat_chain_next(r, root, p);
                check(n == (r + 1) % p && pat_chain_prev(n, root, p) == r,
                      "chain next/prev of %d (root %d, p %d)", r, root, p);
                r = n;
                steps++;
            }
            check(steps == p - 1 && r == (root + p - 1) % p,
                  "chain of %d from %d: %d hops ending at %d", p, root, steps, r);
        }
}

/* ---- fixed segments: dealt element by element --------------------------------------- */
static void test_fseg(void) {
    for (size_t seg = 1; seg <= 20; seg++)
        for (size_t count = 0; count <= 200; count++) {
            size_t n = pat_fseg_count(count, seg), start = 0;
            size_t want_n = 0, len[201] = { 0 };
            for (size_t e = 0; e < count; e++) {
                len[e / seg]++;
                want_n = e / seg + 1;
            }
            check(n == want_n, "fseg_count(%zu, %zu) = %zu, want %zu", count, seg, n, want_n);
            for (size_t j = 0; j < n; j++) {
                check(pat_fseg_start(count, seg, j) == start &&
                          pat_fseg_len(count, seg, j) == len[j],
                      "fseg %zu of %zu by %zu", j, count, seg);
                start += len[j];
            }
            check(pat_fseg_start(count, seg, n) == count, "fseg end of %zu by %zu", count, seg);
        }
}

/* The smallest segment >= max(seg_bytes / es, 1) with at most max_segs segments. */
static size_t brute_fseg_elems(size_t count, size_t es, long long bytes, size_t max_segs) {
    size_t seg = (size_t)bytes / es ? (size_t)bytes / es : 1;
    while ((count + seg - 1) / seg > max_segs)
        seg++;
    return seg;
}

static void test_fseg_elems(void) {
    for (size_t es = 1; es <= 8; es *= 2)
        for (long long bytes = 1; bytes <= 40; bytes++)
            for (size_t max = 1; max <= 9; max++)
                for (size_t count = 0; count <= 90; count += 7) {
                    size_t got = pat_fseg_elems(count, es, bytes, max);
                    size_t want = brute_fseg_elems(count, es, bytes, max);
                    check(got == want, "fseg_elems(%zu, %zu, %lld, %zu) = %zu, want %zu", count,
                          es, bytes, max, got, want);
                }
}

/* ---- the pipelined chain: simulated step by step ------------------------------------ */
typedef struct chain_sim {
    int p, root;
    size_t nseg;
    bool have[MAXP][MAXSEG];
    long next_in[MAXP];      /* the next segment each rank expects (in order) */
} chain_sim;

/* One step: sends use only what was held before the step; returns whether anyone acted. */
static bool chain_step(chain_sim *c, size_t t) {
    bool acted = false, got[MAXP][MAXSEG] = { { false } };
    for (int r = 0; r < c->p; r++) {
        long out = pat_chain_send_seg(r, c->root, c->p, c->nseg, t);
        long in = pat_chain_recv_seg(r, c->root, c->p, c->nseg, t);
        int prev = pat_chain_prev(r, c->root, c->p);
        acted = acted || out >= 0 || in >= 0;
        check(out < 0 || c->have[r][out], "chain p=%d step %zu: %d forwards %ld it lacks", c->p,
              t, r, out);
        check(in < 0 || pat_chain_send_seg(prev, c->root, c->p, c->nseg, t) == in,
              "chain p=%d step %zu: %d receives %ld its predecessor does not send", c->p, t, r,
              in);
        check(in < 0 || in == c->next_in[r]++, "chain p=%d: %d receives %ld out of order", c->p,
              r, in);
        if (in >= 0)
            got[r][in] = true;
    }
    for (int r = 0; r < c->p; r++)
        for (size_t s = 0; s < c->nseg; s++)
            c->have[r][s] = c->have[r][s] || got[r][s];
    return acted;
}

static void check_active(const chain_sim *c, int r, const bool *acts, size_t nsteps) {
    size_t first = 0, last = 0, want_first = SIZE_MAX, want_last = 0;
    bool any = pat_chain_active_steps(r, c->root, c->p, c->nseg, &first, &last);
    for (size_t t = 0; t < nsteps; t++)
        if (acts[t]) {
            want_first = want_first < t ? want_first : t;
            want_last = t;
        }
    check(any == (want_first != SIZE_MAX) && (!any || (first == want_first && last == want_last)),
          "chain active steps of %d (p %d, nseg %zu): %zu…%zu", r, c->p, c->nseg, first, last);
}

static void chain_case(int p, int root, size_t nseg) {
    chain_sim c = { .p = p, .root = root, .nseg = nseg };
    size_t steps = pat_chain_steps(p, nseg), extra = (size_t)p + 3;
    static bool acts[MAXP][MAXSEG + 3 * MAXP];
    memset(acts, 0, sizeof acts);
    for (size_t s = 0; s < nseg; s++)
        c.have[root][s] = true;
    for (size_t t = 0; t < steps + extra; t++) {
        bool acted = chain_step(&c, t);
        check(t < steps || !acted, "chain p=%d nseg=%zu acts in step %zu >= %zu", p, nseg, t,
              steps);
        for (int r = 0; r < p; r++)
            acts[r][t] = pat_chain_send_seg(r, root, p, nseg, t) >= 0 ||
                         pat_chain_recv_seg(r, root, p, nseg, t) >= 0;
    }
    for (int r = 0; r < p; r++) {
        check(c.next_in[r] == (r == root ? 0 : (long)nseg), "chain p=%d: %d got %ld segments",
              p, r, c.next_in[r]);
        for (size_t s = 0; s < nseg; s++)
            check(c.have[r][s], "chain p=%d nseg=%zu: %d lacks segment %zu", p, nseg, r, s);
        check_active(&c, r, acts[r], steps + extra);
    }
}

static void test_chain_pipeline(void) {
    size_t nsegs[] = { 0, 1, 2, 3, 7, MAXSEG };
    for (int p = 1; p <= MAXP; p++)
        for (size_t k = 0; k < sizeof nsegs / sizeof nsegs[0]; k++) {
            chain_case(p, 0, nsegs[k]);
            if (p > 1)
                chain_case(p, p / 2 + 1 < p ? p / 2 + 1 : p - 1, nsegs[k]);
        }
}

/* ---- the algorithms through the verifier -------------------------------------------- */
static collie_coll_args bcast_call(int P, int root, size_t count, size_t es) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = COLL_BCAST;
    a.size = P;
    a.root = root;
    a.count = count;
    a.elem_size = es;
    a.bytes = count * es;
    a.commutative = true;
    return a;
}

static void with_segment(collie_coll_args *a, long long bytes) {
    a->params.count = 1;
    strcpy(a->params.key[0], "segment");
    a->params.value[0] = bytes;
}

static void verify(const collie_algorithm *alg, const collie_coll_args *a) {
    char err[1024];
    const char *why = NULL;
    check(collie_algorithm_accepts(alg, a, &why), "%s declines P=%d: %s", alg->name, a->size,
          why ? why : "?");
    if (sym_verify(alg, a, err, sizeof err) != 0)
        check(false, "%s", err);
}

static void test_verify_all(void) {
    const collie_algorithm *algs[] = { &collie_algo_bcast_linear, &collie_algo_bcast_binary_tree,
                                       &collie_algo_bcast_scatter_allgather,
                                       &collie_algo_bcast_chain };
    long long segs[] = { 4, 8, 12, 32, 1, 6 };     /* elements of 4 bytes: 1, 2, 3, 8, ¼, 1½ */
    for (int P = 1; P <= MAXP; P++) {
        int roots[3] = { 0, P / 2, P - 1 };
        size_t counts[] = { 0, 1, (size_t)P - 1, (size_t)P + 1, 2 * (size_t)P + 3, 37 };
        for (int ri = 0; ri < 3; ri++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                collie_coll_args a = bcast_call(P, roots[ri], counts[ci], 4);
                for (size_t k = 0; k < sizeof algs / sizeof algs[0]; k++)
                    verify(algs[k], &a);
                for (size_t k = 0; k < sizeof segs / sizeof segs[0]; k++) {
                    with_segment(&a, segs[k]);
                    verify(&collie_algo_bcast_chain, &a);
                }
            }
    }
}

/* ---- chain's parameter and the bytes each rank sends -------------------------------- */
static uint64_t bytes_sent(const collie_algorithm *alg, const collie_coll_args *a, int rank,
                           uint32_t *nrounds) {
    collie_schedule s;
    collie_coll_args b = *a;
    b.rank = rank;
    sched_init(&s, rank, a->size, a->elem_size);
    alg->build(&s, &b);
    sched_finish(&s);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < s.nops; i++)
        sum += s.ops[i].kind == SCHED_PUT ? s.ops[i].bytes : 0;
    *nrounds = s.nrounds;
    sched_free(&s);
    return sum;
}

static void test_chain_params(void) {
    collie_coll_args a = bcast_call(5, 3, 1000, 8);
    const char *why = NULL;
    with_segment(&a, 0);
    check(!collie_algorithm_accepts(&collie_algo_bcast_chain, &a, &why) && why &&
              strstr(why, "segment"),
          "chain accepts segment=0");
    with_segment(&a, -5);
    check(!collie_algorithm_accepts(&collie_algo_bcast_chain, &a, &why), "chain: segment=-5");
    with_segment(&a, 80);                     /* 10 elements: 100 segments */
    for (int r = 0; r < a.size; r++) {
        uint32_t rounds;
        uint64_t sent = bytes_sent(&collie_algo_bcast_chain, &a, r, &rounds);
        int v = (r - a.root + a.size) % a.size;
        check(sent == (v == a.size - 1 ? 0 : a.bytes), "chain: rank %d sends %llu", r,
              (unsigned long long)sent);
        check(rounds == (v == 0 || v == a.size - 1 ? 100u : 101u), "chain: rank %d has %u rounds",
              r, rounds);
    }
    a = bcast_call(3, 0, 200000, 1);          /* segment 1 byte: raised to 65536 segments */
    with_segment(&a, 1);
    uint32_t rounds;
    bytes_sent(&collie_algo_bcast_chain, &a, 1, &rounds);
    check(rounds == 50001, "chain: %u rounds for 200000 segments of 1 byte (want 50000 of 4 "
          "and one more)", rounds);
}

static void test_sent_bytes(void) {
    collie_coll_args a = bcast_call(13, 4, 1300, 4);
    uint64_t total = 0;
    for (int r = 0; r < a.size; r++) {
        uint32_t rounds;
        int v = (r - a.root + a.size) % a.size;
        uint64_t lin = bytes_sent(&collie_algo_bcast_linear, &a, r, &rounds);
        check(lin == (v == 0 ? 12 * a.bytes : 0) && rounds == (v == 0 ? 12u : 1u),
              "linear: rank %d sends %llu in %u rounds", r, (unsigned long long)lin, rounds);
        uint64_t bin = bytes_sent(&collie_algo_bcast_binary_tree, &a, r, &rounds);
        int kids = (2 * v + 1 < a.size) + (2 * v + 2 < a.size);
        check(bin == (uint64_t)kids * a.bytes, "binary_tree: rank %d sends %llu", r,
              (unsigned long long)bin);
        total += bytes_sent(&collie_algo_bcast_scatter_allgather, &a, r, &rounds);
    }
    /* Every non-root rank receives its subtree's range in the scatter and every other
     * segment once in the allgather: the whole vector exactly once; the root nothing. */
    check(total == (uint64_t)(a.size - 1) * a.bytes, "scatter_allgather sends %llu in all",
          (unsigned long long)total);
}

int main(void) {
    test_bintree();
    test_subtrees();
    test_ring_allgather();
    test_chain_neighbours();
    test_fseg();
    test_fseg_elems();
    test_chain_pipeline();
    test_chain_params();
    test_sent_bytes();
    test_verify_all();
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("test_bcast_algos: all passed\n");
    return 0;
}
