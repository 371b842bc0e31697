/*
 * test_algorithms.c — every registered algorithm through the symbolic verifier
 * (symbolic.h): P = 1…64 × counts {0, 1, P-1, P, P+1, 2P+3, 37} × in place or not ×
 * commutative or not × roots {0, P/2, P-1}; with COLLIE_LONG_TESTS=1 also larger P up to
 * 1024 for a few counts.  Also: the registry, the restriction check and the algorithm spec
 * parser.  That the verifier catches broken schedules: test_verifier.c.
 *
 * Built with AddressSanitizer (COLLIE_SANITIZE=1, CI's second pass) the sweep is thinner:
 * every P up to 24, then P = 31, 32, 33, 47, 48, 63, 64, all with the thin variant set above
 * P = 16.  The sanitizer slows the verifier 4-20x (7.6 min of CPU for the full sweep against
 * 1.8 min); the full sweep runs in the plain build (CI's first pass).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "algorithms/algorithm.h"
#include "core/core.h"
#include "symbolic.h"
#include "vcall.h"

#include "check.h"
#include "coll_call.h"

/* ==== 1. registry, restrictions, specs =============================================== */

static void test_registry(void) {
    for (int coll = 0; coll < COLL_COUNT; coll++) {
        size_t n = collie_algorithm_count(coll);
        check(n >= 1 && collie_algorithm_at(coll, n) == NULL,
              "%s: %zu algorithms", collie_coll_name(coll), n);
        check(strcmp(collie_coll_name(coll), "unknown") != 0, "collective %d has no name", coll);
        for (size_t i = 0; i < n; i++) {
            const collie_algorithm *alg = collie_algorithm_at(coll, i);
            check(alg && alg->coll == coll && alg->build && alg->summary && alg->name,
                  "%s algorithm %zu malformed", collie_coll_name(coll), i);
            check(collie_algorithm_find(coll, alg->name) == alg, "find %s", alg->name);
        }
        check(collie_algorithm_find(coll, "no_such_algorithm") == NULL, "find unknown");
    }
    check(collie_algorithm_count(COLL_COUNT) == 0 && collie_algorithm_at(-1, 0) == NULL,
          "out-of-range collective");
    check(strcmp(collie_coll_name(COLL_ALLREDUCE), "allreduce") == 0 &&
          strcmp(collie_coll_name(COLL_BARRIER), "barrier") == 0 &&
          strcmp(collie_coll_name(COLL_REDUCE_SCATTER), "reduce_scatter") == 0 &&
          strcmp(collie_coll_name(COLL_EXSCAN), "exscan") == 0 &&
          strcmp(collie_coll_name(99), "unknown") == 0, "collie_coll_name");
}

static bool needs_allow(unsigned needs, const collie_coll_args *a) {
    return !((needs & ALGO_NEEDS_COMMUTATIVE) && !a->commutative) &&
           !((needs & ALGO_NEEDS_IDEMPOTENT) && !a->idempotent) &&
           !((needs & ALGO_NEEDS_SHM) && !a->shared_memory) &&
           !((needs & ALGO_NEEDS_MULTICAST) && !a->multicast) &&
           !((needs & ALGO_NEEDS_SINGLE_COPY) && !a->single_copy);
}

static bool reject_big(const collie_coll_args *a, const char **why) {
    *why = "too big";
    return a->size < 4;
}

static void test_accepts(void) {
    for (int coll = 0; coll < COLL_COUNT; coll++)
        for (size_t i = 0; i < collie_algorithm_count(coll); i++)
            for (int bits = 0; bits < 8; bits++) {
                const collie_algorithm *alg = collie_algorithm_at(coll, i);
                collie_coll_args a = call(coll, 4, 8, 8);
                a.commutative = bits & 1;
                a.idempotent = (bits & 2) != 0;
                a.shared_memory = (bits & 4) != 0;
                const char *why = NULL;
                bool ok = collie_algorithm_accepts(alg, &a, &why);
                bool want = needs_allow(alg->needs, &a);
                check(alg->accepts ? (!want ? !ok : true) : ok == want,
                      "%s %s accepts=%d with comm=%d idem=%d shm=%d", collie_coll_name(coll),
                      alg->name, ok, a.commutative, a.idempotent, a.shared_memory);
                check(ok || (why && *why), "%s declines without a reason", alg->name);
            }
    collie_algorithm fake = { "fake", COLL_BCAST, ALGO_NEEDS_COMMUTATIVE, "x", reject_big, NULL, NULL, false };
    collie_coll_args a = call(COLL_BCAST, 8, 1, 8);
    const char *why = NULL;
    check(!collie_algorithm_accepts(&fake, &a, &why) && why && strcmp(why, "too big") == 0,
          "optional accepts() consulted");
    a.commutative = false;
    check(!collie_algorithm_accepts(&fake, &a, &why) && strstr(why, "commutative"),
          "needs checked first");
    a = call(COLL_ALLREDUCE, 2, 1, 8);
    check(!collie_algorithm_accepts(&fake, &a, &why) && strstr(why, "collective"),
          "other collective declined");
}

static void spec_ok(const char *spec, const char *name, int count, const char *key,
                    long long value) {
    char got[32];
    collie_algo_params p;
    int rc = collie_parse_algo_spec(spec, got, sizeof got, &p);
    check(rc == COLLIE_OK && strcmp(got, name) == 0 && p.count == count &&
          (!key || collie_param(&p, key, -12345) == value),
          "spec '%s' -> rc %d name '%s' count %d", spec, rc, got, p.count);
}

static void spec_bad(const char *spec, size_t namesz) {
    char got[64];
    collie_algo_params p;
    int rc = collie_parse_algo_spec(spec, got, namesz, &p);
    check(rc == COLLIE_ERR_ARG && collie_last_error()[0], "spec '%s' should fail (rc %d)", spec,
          rc);
}

static void test_specs(void) {
    spec_ok("ring", "ring", 0, NULL, 0);
    spec_ok("  auto ", "auto", 0, NULL, 0);
    spec_ok("nway_dissemination:n=3", "nway_dissemination", 1, "n", 3);
    spec_ok("ring_pipelined:segment=64k,depth=-2", "ring_pipelined", 2, "segment", 65536);
    spec_ok("ring_pipelined:segment=64k,depth=-2", "ring_pipelined", 2, "depth", -2);
    spec_ok("x:a=1,b=2,c=3,d=1M", "x", 4, "d", 1 << 20);
    spec_ok("x:a=1", "x", 1, "nope", -12345);
    const char *bad[] = { "", "   ", ":n=3", "ring:", "ring:n", "ring:n=", "ring:=3",
                          "ring:n=abc", "ring:n=3x", "ring:n=1,n=2", "ring:n=1,", "ring:,n=1",
                          "ring:a=1,b=2,c=3,d=4,e=5", "bad name", "ring:n=99999999999999999999",
                          "ring:a_very_long_parameter_name_here=1", "ring:n=1:m=2" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        spec_bad(bad[i], 64);
    spec_bad("recursive_doubling", 8);
    check(collie_param(NULL, "n", 7) == 7, "collie_param(NULL)");
}

/* ==== 2. the sweep ==================================================================== */

typedef struct sweep_stats {
    long runs, declined;
} sweep_stats;

/* Verifies one call if the algorithm accepts it; checks that it declines exactly when its
 * needs say so (or at least then, if it has its own accepts()). */
static void one(const collie_algorithm *alg, collie_coll_args a, sweep_stats *st) {
    const char *why = NULL;
    bool ok = collie_algorithm_accepts(alg, &a, &why);
    bool want = needs_allow(alg->needs, &a);
    check(alg->accepts ? (want || !ok) : ok == want, "%s %s P=%d: accepts=%d, needs say %d",
          collie_coll_name(a.coll), alg->name, a.size, ok, want);
    if (!ok) {
        st->declined++;
        return;
    }
    char err[1024];
    st->runs++;
    if (sym_verify(alg, &a, err, sizeof err) != 0)
        check(false, "%s", err);
}

static size_t dedupe_counts(int P, size_t *out) {
    size_t cand[] = { 0, 1, (size_t)P - 1, (size_t)P, (size_t)P + 1, 2 * (size_t)P + 3, 37 };
    size_t n = 0;
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        bool dup = false;
        for (size_t j = 0; j < n; j++)
            dup = dup || out[j] == cand[i];
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

/* The collectives of issue 16 beyond P = 16 get a thinner sweep (COLLIE_LONG_TESTS=1:
 * the full one up to P = 64): counts 1 and P+1, the v form only at P = 31 and 64, one
 * commutativity (non-commutative unless the algorithm needs a commutative op). */
static bool long_tests;

#if defined(__SANITIZE_ADDRESS__)
static const bool sanitized = true;
#else
static const bool sanitized = false;
#endif

static bool thin(int coll, int P) {
    return (coll > COLL_BARRIER || sanitized) && P > 16 && !(long_tests && P <= 64);
}

/* All variants of (P, count) for one algorithm: in place, commutativity, roots, v form. */
static void variants(const collie_algorithm *alg, int P, size_t count, sweep_stats *st) {
    static vcall vc;
    size_t es = (P + count) % 2 ? 4 : 8;
    int roots[3] = { 0, P / 2, P - 1 };
    bool rooted = collie_coll_rooted(alg->coll);
    bool has_op = collie_coll_has_op(alg->coll), sparse = thin(alg->coll, P);
    bool ip_ok = has_op || alg->coll > COLL_BARRIER;
    bool vform = has_v(alg->coll) && P <= VMAX && (!sparse || P == 31 || P == 64);
    int comm_from = !has_op ? 1 : sparse ? (alg->needs & ALGO_NEEDS_COMMUTATIVE) != 0 : 0;
    int comm_to = sparse && has_op ? comm_from + 1 : 2;
    for (int ip = 0; ip < (ip_ok ? 2 : 1); ip++)
        for (int comm = comm_from; comm < comm_to; comm++)
            for (int ri = 0; ri < (rooted ? 3 : 1); ri++)
                for (int v = 0; v < (vform ? 2 : 1); v++) {
                    if (ri > 0 && roots[ri] == roots[ri - 1])
                        continue;
                    collie_coll_args a = call(alg->coll, P, count, es);
                    a.in_place = ip;
                    a.commutative = comm;
                    a.idempotent = (alg->needs & ALGO_NEEDS_IDEMPOTENT) != 0;
                    a.root = roots[ri];
                    a.shared_cores = count % 2;   /* reduce direct_segments: flat's schedule */
                    if (v) {
                        vcall_make(&vc, &a);
                        a.v = vc.v;
                    }
                    one(alg, a, st);
                    a.shared_memory = false;             /* decline check only */
                    a.idempotent = !a.idempotent;
                    const char *why;
                    bool ok = collie_algorithm_accepts(alg, &a, &why);
                    check(alg->accepts ? (needs_allow(alg->needs, &a) || !ok)
                                       : ok == needs_allow(alg->needs, &a),
                          "%s %s: accepts=%d without shm", collie_coll_name(a.coll), alg->name, ok);
                }
}

/* Which counts to try for P: the full list, or a few for large P. */
enum { COUNTS_ALL, COUNTS_FEW, COUNTS_TINY };
static size_t counts_for(int P, int which, size_t *out) {
    if (which == COUNTS_ALL)
        return dedupe_counts(P, out);
    out[0] = 1;
    out[1] = which == COUNTS_TINY ? 3 : 37;
    out[2] = 0;
    out[3] = (size_t)P + 1;                 /* P+1 only up to 257: flat is P^2 messages */
    return which == COUNTS_TINY ? 2 : P <= 257 ? 4 : 3;
}

static void sweep_sizes(const int *sizes, int nsizes, int which, sweep_stats *st) {
    for (int coll = 0; coll < COLL_COUNT; coll++) {
        clock_t t0 = clock();
        for (size_t i = 0; i < collie_algorithm_count(coll); i++)
            for (int k = 0; k < nsizes && !(coll > COLL_BARRIER && sizes[k] > 300); k++) {
                size_t counts[7];
                size_t n = coll == COLL_BARRIER ? 1 : counts_for(sizes[k], which, counts);
                if (thin(coll, sizes[k]) && which == COUNTS_ALL) {
                    counts[0] = 1;
                    counts[1] = (size_t)sizes[k] + 1;
                    n = 2;
                }
                if (coll > COLL_BARRIER && which == COUNTS_TINY)
                    n = 1;                      /* P = 256, 300: one element per block */
                for (size_t c = 0; c < n; c++)
                    variants(collie_algorithm_at(coll, i), sizes[k],
                             coll == COLL_BARRIER ? 0 : counts[c], st);
            }
        printf("  %s: %.1f s\n", collie_coll_name(coll), (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
}

static void sweep(void) {
    const char *env = getenv("COLLIE_LONG_TESTS");
    long_tests = env && strcmp(env, "1") == 0;
    sweep_stats st = { 0, 0 };
    int sizes[64], chains[] = { 256, 300 };    /* P > SCHED_MAX_SOURCES: flat chains */
    int nsizes = 0, beyond[] = { 31, 32, 33, 47, 48, 63, 64 };
    bool all = !sanitized || long_tests;
    for (int P = 1; P <= (all ? 64 : 24); P++)
        sizes[nsizes++] = P;
    for (int i = 0; !all && i < (int)(sizeof beyond / sizeof beyond[0]); i++)
        sizes[nsizes++] = beyond[i];
    clock_t t0 = clock();
    sweep_sizes(sizes, nsizes, COUNTS_ALL, &st);
    sweep_sizes(chains, 2, COUNTS_TINY, &st);
    printf("sweep P=1..%d%s, 256, 300: %ld schedules verified, %ld declined, %.1f s\n",
           all ? 64 : 24, all ? "" : " and 31-33, 47, 48, 63, 64", st.runs,
           st.declined, (double)(clock() - t0) / CLOCKS_PER_SEC);
    if (!long_tests)
        return;
    int big[] = { 65, 96, 127, 128, 129, 200, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024 };
    st.runs = st.declined = 0;
    t0 = clock();
    sweep_sizes(big, (int)(sizeof big / sizeof big[0]), COUNTS_FEW, &st);
    printf("long sweep P up to 1024: %ld schedules verified, %.1f s\n", st.runs,
           (double)(clock() - t0) / CLOCKS_PER_SEC);
}

int main(void) {
    test_registry();
    test_accepts();
    test_specs();
    sweep();
    if (failures)
        fprintf(stderr, "test_algorithms: %d failures\n", failures);
    else
        printf("test_algorithms: ok\n");
    return failures ? 1 : 0;
}
