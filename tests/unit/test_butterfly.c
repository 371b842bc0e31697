/*
 * test_butterfly.c — the butterfly-like allreduce algorithms of End et al. 2016
 * (pairwise_exchange, bruck, dissemination, binomial): their index math
 * (patterns_butterfly.c) against brute-force definitions for P = 1…64, and their
 * schedules through the symbolic verifier (symbolic.h) for every parameter n = 1…8 and
 * P = 1…64 (1…1024 for a few n with COLLIE_LONG_TESTS=1); and that bruck, dissemination
 * and nway_dissemination send short vectors as one message per peer and round.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns_butterfly.h"
#include "schedule/schedule.h"
#include "symbolic.h"

extern const collie_algorithm collie_algo_allreduce_pairwise_exchange;
extern const collie_algorithm collie_algo_allreduce_bruck;
extern const collie_algorithm collie_algo_allreduce_dissemination;
extern const collie_algorithm collie_algo_allreduce_binomial;
extern const collie_algorithm collie_algo_allreduce_nway_dissemination;

#define MAXP 64

#include "check.h"

/* ---- pairwise exchange: pairs listed by walking the ranks ---------------------------- */
static void test_pe(void) {
    for (int p = 1; p <= MAXP; p++) {
        int p2 = 1;
        while (2 * p2 <= p)
            p2 *= 2;
        check(pbf_pe_leftover(p) == p - p2, "pe_leftover(%d)", p);
        for (int r = 0; r < p; r++) {
            int want = r + p2 < p ? r + p2 : r >= p2 ? r - p2 : -1;
            check(pbf_pe_fold_partner(r, p) == want, "pe_fold_partner(%d, %d)", r, p);
            for (int j = 0; r < p2 && (1 << j) <= p2; j++) {
                bool any = false;       /* does the block hold a rank with a leftover? */
                for (int x = 0; x < p2; x++)
                    any = any || (x / (1 << j) == r / (1 << j) && x + p2 < p);
                check(pbf_pe_block_has_leftover(r, j, p) == any, "pe_block(%d, %d, %d)", r, j,
                      p);
            }
        }
    }
}

/* ---- canonical nodes: all clipped aligned blocks, by enumeration --------------------- */
static bool is_node(int a, int e, int p) {
    for (int l = 0; (1 << l) < 2 * p; l++)
        if (a % (1 << l) == 0 && e == (a + (1 << l) < p ? a + (1 << l) : p) && a < p)
            return true;
    return false;
}

static void test_decomposition(int p, int a, int b) {
    int x = a;
    while (x < b) {
        int e = pbf_node_end(x, b, p);
        check(e > x && e <= b && is_node(x, e, p), "node_end(%d, %d, %d) = %d", x, b, p, e);
        for (int f = e + 1; f <= b; f++)
            check(!is_node(x, f, p), "node_end(%d, %d, %d) not maximal (%d)", x, b, p, f);
        if (e <= x)
            return;
        x = e;
    }
}

static void test_parent(int p, int a, int e) {
    int pa, mid, pe;
    pbf_node_parent(a, e, p, &pa, &mid, &pe);
    int best_len = 1 << 30;             /* the smallest node strictly containing [a, e) */
    int ba = -1, be = -1;
    for (int x = 0; x <= a; x++)
        for (int y = e; y <= p; y++)
            if ((x < a || y > e) && is_node(x, y, p) && y - x < best_len) {
                best_len = y - x;
                ba = x;
                be = y;
            }
    check(pa == ba && pe == be, "node_parent(%d, %d, %d) = [%d, %d), want [%d, %d)", a, e, p,
          pa, pe, ba, be);
    check(ba < 0 || (is_node(pa, mid, p) && is_node(mid, pe, p) && (mid == a || mid == e)),
          "node_parent(%d, %d, %d): children [%d, %d) [%d, %d)", a, e, p, pa, mid, mid, pe);
}

static void test_nodes(void) {
    for (int p = 1; p <= MAXP; p++)
        for (int a = 0; a < p; a++)
            for (int b = a + 1; b <= p; b++) {
                test_decomposition(p, a, b);
                if (is_node(a, b, p) && !(a == 0 && b == p))
                    test_parent(p, a, b);
            }
    for (int p = 1; p <= MAXP; p++)                 /* cyclic pieces tile the range */
        for (int f = 0; f < p; f++)
            for (int len = 1; len <= p; len++) {
                pbf_walk w = pbf_walk_begin(f, len, p);
                int a, e, pos = f, covered = 0;
                while (covered < len && pbf_walk_next(&w, &a, &e)) {
                    check(a == pos && is_node(a, e, p), "walk (%d, %d) in %d: [%d, %d) at %d", f,
                          len, p, a, e, pos);
                    covered += e - a;
                    pos = e == p ? 0 : e;
                }
                check(covered == len && !pbf_walk_next(&w, &a, &e), "the walk of (%d, %d) in "
                      "%d covers %d", f, len, p, covered);
            }
}

/* ---- Bruck: simulate the sets every rank holds -------------------------------------- */
static uint64_t cyc(int first, int len, int p) {
    uint64_t m = 0;
    for (int i = 0; i < len; i++)
        m |= 1ull << ((first + i) % p);
    return m;
}

static void test_bruck_np(int n, int p) {
    int k = 0;
    for (long long x = 1; x < p; x *= n + 1)
        k++;
    check(pbf_bruck_rounds(n, p) == k, "bruck_rounds(%d, %d) = %d, want %d", n, p,
          pbf_bruck_rounds(n, p), k);
    uint64_t s1[MAXP], s0[MAXP], n1[MAXP];
    for (int r = 0; r < p; r++)
        s1[r] = 1ull << r, s0[r] = 0;
    for (int t = 0; t < k; t++) {
        int alpha = pbf_bruck_digit(n, p, t), c = pbf_bruck_count(n, p, t);
        for (int r = 0; r < p; r++) {
            check(s1[r] == cyc(r, c + 1, p) && s0[r] == cyc(r + 1, c, p),
                  "bruck n=%d P=%d round %d rank %d holds the wrong sets", n, p, t, r);
            n1[r] = s1[r];
            for (int m = 0; m < n; m++) {
                int len, d = pbf_bruck_peer(n, p, t, m, &len), from = (r + d) % p;
                uint64_t got = m < alpha ? s1[from] : s0[from];
                check(len == __builtin_popcountll(got), "bruck peer len n=%d P=%d", n, p);
                check(!(n1[r] & got), "bruck n=%d P=%d round %d rank %d: overlap", n, p, t, r);
                n1[r] |= got;
            }
        }
        for (int r = 0; r < p; r++)
            s0[r] = n1[r] & ~(1ull << r), s1[r] = n1[r];
    }
    for (int r = 0; r < p; r++)
        check(s1[r] == cyc(0, p, p), "bruck n=%d P=%d: rank %d misses data", n, p, r);
}

static void test_bruck(void) {
    for (int n = 1; n <= 8; n++)
        for (int p = 1; p <= MAXP; p++)
            test_bruck_np(n, p);
    /* The example of End 2016, eqs. (15)–(23): P = 8, n = 2, rank 0. */
    int len;
    check(pbf_bruck_digit(2, 8, 0) == 2 && pbf_bruck_digit(2, 8, 1) == 1, "eq. (15)");
    check(pbf_bruck_peer(2, 8, 0, 0, &len) == 1 && len == 1, "eq. (16)");
    check(pbf_bruck_peer(2, 8, 0, 1, &len) == 2 && len == 1, "eq. (17)");
    check(pbf_bruck_peer(2, 8, 1, 0, &len) == 3 && len == 3, "eqs. (20), (22)");
    check(pbf_bruck_peer(2, 8, 1, 1, &len) == 5 && len == 2, "eqs. (21), (23)");
}

/* ---- the schedules through the verifier --------------------------------------------- */
static long runs;

/* An allreduce of count elements of elem_size bytes on p ranks; parameter n when n > 0. */
static collie_coll_args allreduce_args(int p, int n, size_t count, size_t elem_size) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = COLL_ALLREDUCE;
    a.size = p;
    a.count = count;
    a.elem_size = elem_size;
    a.bytes = count * elem_size;
    a.params.count = n > 0;
    strcpy(a.params.key[0], "n");
    a.params.value[0] = n;
    return a;
}

static void verify(const collie_algorithm *alg, int p, int n, size_t count) {
    for (int bits = 0; bits < 4; bits++) {
        collie_coll_args a = allreduce_args(p, n, count, (p + count) % 2 ? 4 : 8);
        a.in_place = bits & 1;
        a.commutative = (bits & 2) != 0;
        const char *why = NULL;
        check(collie_algorithm_accepts(alg, &a, &why), "%s n=%d P=%d declined: %s", alg->name, n,
              p, why ? why : "");
        char err[1024];
        runs++;
        if (sym_verify(alg, &a, err, sizeof err) != 0)
            check(false, "n=%d: %s", n, err);
    }
}

static void sweep(int maxp_long) {
    const collie_algorithm *plain[] = { &collie_algo_allreduce_pairwise_exchange,
                                        &collie_algo_allreduce_dissemination,
                                        &collie_algo_allreduce_binomial };
    for (int p = 1; p <= MAXP; p++) {
        for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
            verify(plain[i], p, 0, 0);
            verify(plain[i], p, 0, 1);
            verify(plain[i], p, 0, (size_t)p + 1);
            verify(plain[i], p, 0, 37);
        }
        for (int n = 1; n <= 8; n++) {
            verify(&collie_algo_allreduce_bruck, p, n, 1);
            verify(&collie_algo_allreduce_bruck, p, n, 3);
        }
        /* above CP_PACK_MAX_BYTES: one PUT per piece instead of one per peer and round
         * (long vectors verify slowly: a sample of P) */
        if (p <= 9 || p % 16 == 0 || p % 16 == 1 || p % 16 == 15) {
            verify(&collie_algo_allreduce_dissemination, p, 0, CP_PACK_MAX_BYTES / 4 + 1);
            verify(&collie_algo_allreduce_bruck, p, 5, CP_PACK_MAX_BYTES / 4 + 1);
        }
    }
    int ns[] = { 1, 2, 5 };
    for (int p = MAXP + 1; p <= maxp_long; p += p < 100 ? 1 : 53) {
        for (int i = 0; i < 3; i++)
            verify(&collie_algo_allreduce_bruck, p, ns[i], 1);
        verify(&collie_algo_allreduce_dissemination, p, 0, 1);
        verify(&collie_algo_allreduce_pairwise_exchange, p, 0, 1);
    }
}

/* The PUTs of one round: how many go to the busiest peer, and how many in all. */
static void round_puts(const collie_schedule *s, uint32_t r, int *most, int *total) {
    *most = *total = 0;
    const sched_round *rd = &s->rounds[r];
    for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++) {
        if (s->ops[i].kind != SCHED_PUT)
            continue;
        int same = 0;
        for (uint32_t j = rd->first_op; j < rd->first_op + rd->nops; j++)
            same += s->ops[j].kind == SCHED_PUT && s->ops[j].peer == s->ops[i].peer;
        *most = same > *most ? same : *most;
        ++*total;
    }
}

/* Short vectors: one message per peer and round (the papers' pattern) carrying all its
 * pieces; long vectors: one PUT per piece.  Checked on every rank of P = 100. */
static void test_packing(const collie_algorithm *alg, int n) {
    const int p = 100;
    for (int elems = 1; elems <= 2; elems++) {
        size_t count = elems == 1 ? 1 : CP_PACK_MAX_BYTES / 8 + 1;
        bool packed = count * 8 <= CP_PACK_MAX_BYTES;
        int worst = 0;
        long puts = 0, bytes_put = 0;
        for (int r = 0; r < p; r++) {
            collie_coll_args a = allreduce_args(p, n, count, 8);
            a.rank = r;
            collie_schedule s;
            sched_init(&s, r, p, 8);
            alg->build(&s, &a);
            sched_finish(&s);
            check(s.error == 0, "%s P=%d rank %d: build error %d", alg->name, p, r, s.error);
            for (uint32_t t = 0; t < s.nrounds; t++) {
                int most, total;
                round_puts(&s, t, &most, &total);
                worst = most > worst ? most : worst;
                puts += total;
            }
            for (uint32_t i = 0; i < s.nops; i++)
                bytes_put += s.ops[i].kind == SCHED_PUT ? (long)s.ops[i].bytes : 0;
            sched_free(&s);
        }
        long pieces = bytes_put / (long)(count * 8);
        if (packed)
            check(worst == 1 && pieces > puts, "%s P=%d %zu B: %d PUTs to one peer in a round "
                  "(want 1), %ld pieces in %ld PUTs", alg->name, p, count * 8, worst, pieces, puts);
        else
            check(worst > 1 && pieces == puts, "%s P=%d %zu B: want one PUT per piece, %ld "
                  "pieces in %ld PUTs", alg->name, p, count * 8, pieces, puts);
    }
}

static void test_declines(void) {
    collie_coll_args a = allreduce_args(4, 0, 1, 8);
    a.params.count = 1;                             /* n = 0 given explicitly */
    const char *why = NULL;
    check(!collie_algorithm_accepts(&collie_algo_allreduce_bruck, &a, &why) && why,
          "bruck declines n = 0");
    a.params.value[0] = 2;
    a.bytes = 1ull << 30;
    check(!collie_algorithm_accepts(&collie_algo_allreduce_bruck, &a, &why) && why,
          "bruck declines 1 GiB");
}

int main(void) {
    test_pe();
    test_nodes();
    test_bruck();
    test_declines();
    test_packing(&collie_algo_allreduce_dissemination, 0);
    test_packing(&collie_algo_allreduce_bruck, 5);
    test_packing(&collie_algo_allreduce_nway_dissemination, 0);
    const char *lt = getenv("COLLIE_LONG_TESTS");
    sweep(lt && atoi(lt) ? 1024 : MAXP);
    printf("test_butterfly: %ld schedules verified\n", runs);
    if (failures) {
        printf("test_butterfly: %d failures\n", failures);
        return 1;
    }
    printf("test_butterfly: ok\n");
    return 0;
}
