/*
 * test_verifier.c — the symbolic verifier (symbolic.h) that test_algorithms.c sweeps every
 * algorithm through fails on broken schedules: a correct 2-rank allreduce and mutations of
 * it (a dropped, extra or short PUT, swapped sources, a write hazard, a double reduction),
 * wrong association and access orders, broken schedules of every collective, and every
 * registered algorithm's schedule with one operation dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "core/core.h"
#include "symbolic.h"

#include "check.h"
#include "coll_call.h"

#define TEAM_MAX 4
typedef struct team {
    int P;
    collie_schedule s[TEAM_MAX];
} team;

static team *team_new(int P, size_t es) {
    static team t;
    t.P = P;
    for (int r = 0; r < P; r++)
        sched_init(&t.s[r], r, P, es);
    return &t;
}

/* Runs the team's schedules; expects success (want == NULL) or a failure whose message
 * contains want. */
static void expect(const char *what, const collie_coll_args *a, team *t, const char *want) {
    char err[1024];
    int rc = sym_run(what, a, t->s, err, sizeof err);
    if (want)
        check(rc != 0 && strstr(err, want), "verifier self-test '%s': want '%s', got '%s'",
              what, want, rc ? err : "success");
    else
        check(rc == 0, "verifier self-test '%s' should pass: %s", what, err);
    for (int r = 0; r < t->P; r++)
        sched_free(&t->s[r]);
}

static const sched_ref SEND0 = { SBUF_SEND, -1, 0 }, RECV0 = { SBUF_RECV, -1, 0 };

/* A correct 2-rank allreduce: exchange, both compute x0 ∘ x1.  Variants break it. */
enum { OK2, DROP_PUT, EXTRA_PUT, SHORT_PUT, SWAPPED, HAZARD, DOUBLE };
static team *allreduce2(int variant, uint64_t n) {
    team *t = team_new(2, 8);
    for (int r = 0; r < 2; r++) {
        collie_schedule *s = &t->s[r];
        bool lower_first = variant != SWAPPED;
        if (!(variant == DROP_PUT && r == 1))
            sched_put(s, 1 - r, SEND0, variant == SHORT_PUT && r == 1 ? n / 2 : n);
        if (variant == DOUBLE && r == 1)
            sched_put(s, 0, SEND0, n);
        if (variant == HAZARD && r == 0)
            sched_put(s, 1, RECV0, n);
        if (variant == EXTRA_PUT && r == 0)
            sched_notify(s, 1);
        sched_ref srcs[3] = { r == 0 ? SEND0 : sched_in(0), r == 0 ? sched_in(1) : SEND0,
                              sched_in(1) };
        if (!lower_first) {
            sched_ref x = srcs[0];
            srcs[0] = srcs[1];
            srcs[1] = x;
        }
        sched_reduce(s, RECV0, srcs, variant == DOUBLE && r == 0 ? 3 : 2, n);
    }
    return t;
}

static void self_test_allreduce(void) {
    collie_coll_args a = call(COLL_ALLREDUCE, 2, 2, 8);
    expect("correct", &a, allreduce2(OK2, 16), NULL);
    expect("dropped message", &a, allreduce2(DROP_PUT, 16), "deadlock");
    expect("extra message", &a, allreduce2(EXTRA_PUT, 16), "never consumed");
    expect("short message", &a, allreduce2(SHORT_PUT, 16), "size mismatch");
    expect("same-round hazard", &a, allreduce2(HAZARD, 16), "hazard");
    expect("input twice", &a, allreduce2(DOUBLE, 16), "more than once");
    expect("swapped, commutative", &a, allreduce2(SWAPPED, 16), NULL);
    a.commutative = false;
    expect("correct, non-commutative", &a, allreduce2(OK2, 16), NULL);
    expect("swapped, non-commutative", &a, allreduce2(SWAPPED, 16), "out of rank order");
    a.in_place = true;                          /* the PUT reads SEND = RECV */
    expect("hazard in place", &a, allreduce2(OK2, 16), "hazard");
}

/* 3 ranks: ranks 0, 1 form x0∘x1∘x2 in one node, rank 2 as (x0∘x1)∘x2. */
static void self_test_association(void) {
    collie_coll_args a = call(COLL_ALLREDUCE, 3, 1, 8);
    team *t = team_new(3, 8);
    for (int r = 0; r < 3; r++) {
        collie_schedule *s = &t->s[r];
        for (int q = 0; q < 3; q++)
            if (q != r)
                sched_put(s, q, SEND0, 8);
        sched_ref all[3];
        for (int q = 0; q < 3; q++)
            all[q] = q == r ? SEND0 : sched_in(q);
        if (r < 2) {
            sched_reduce(s, RECV0, all, 3, 8);
            continue;
        }
        sched_need_tmp(s, 8);
        sched_reduce(s, sched_at(SBUF_TMP, 0), all, 2, 8);
        sched_round_begin(s);
        sched_ref two[2] = { sched_at(SBUF_TMP, 0), SEND0 };
        sched_reduce(s, RECV0, two, 2, 8);
    }
    expect("other association on one rank", &a, t, "differs from rank 0");
}

static void self_test_access(void) {
    collie_coll_args a = call(COLL_ALLREDUCE, 1, 4, 8);
    team *t = team_new(1, 8);
    sched_reduce(&t->s[0], sched_at(SBUF_TMP, 0), &SEND0, 1, 32);
    expect("TMP beyond tmp_bytes", &a, t, "beyond");
    t = team_new(1, 8);
    sched_copy(&t->s[0], SEND0, RECV0, 32);
    expect("writes SEND", &a, t, "read-only input");
    t = team_new(1, 8);
    sched_need_tmp(&t->s[0], 32);
    sched_copy(&t->s[0], RECV0, sched_at(SBUF_TMP, 0), 32);
    expect("reads undefined TMP", &a, t, "undefined");
    t = team_new(1, 8);
    sched_copy(&t->s[0], RECV0, SEND0, 32);
    sched_round_begin(&t->s[0]);
    sched_copy(&t->s[0], sched_at(SBUF_RECV, 8), RECV0, 16);
    expect("partial self-overlap", &a, t, "partially overlaps");
    t = team_new(1, 8);
    sched_copy(&t->s[0], RECV0, sched_at(SBUF_SEND, 4), 16);
    expect("misaligned", &a, t, "multiples");
    t = team_new(1, 8);
    expect("no result", &a, t, "is missing");
}

static void self_test_reduce_bcast_barrier(void) {
    collie_coll_args a = call(COLL_REDUCE, 3, 1, 8);
    team *t = team_new(3, 8);                   /* rank 2 is left out */
    sched_put(&t->s[1], 0, SEND0, 8);
    sched_recv_reduce(&t->s[0], 1, RECV0, SEND0, false, 8);
    expect("reduce skipping a rank", &a, t, "misses a rank's input");
    t = team_new(3, 8);                         /* non-root writes RECV */
    sched_copy(&t->s[2], RECV0, SEND0, 8);
    sched_round_begin(&t->s[2]);
    sched_put(&t->s[2], 0, RECV0, 8);
    sched_put(&t->s[1], 0, SEND0, 8);
    sched_ref all[3] = { SEND0, sched_in(1), sched_in(2) };
    sched_reduce(&t->s[0], RECV0, all, 3, 8);
    expect("non-root writes RECV", &a, t, "may be NULL");
    a = call(COLL_BCAST, 2, 1, 8);
    expect("bcast without messages", &a, team_new(2, 8), "does not hold");
    a = call(COLL_BARRIER, 3, 0, 8);
    t = team_new(3, 8);                         /* a chain 0 → 1 → 2: rank 0 hears nobody */
    sched_notify(&t->s[0], 1);
    sched_wait_notify(&t->s[1], 0);
    sched_round_begin(&t->s[1]);
    sched_notify(&t->s[1], 2);
    sched_wait_notify(&t->s[2], 1);
    expect("barrier without causality", &a, t, "causality");
}

/* The checks of allgather … exscan: each broken schedule is caught with its reason. */
static void self_test_colls(void) {
    collie_coll_args a = call(COLL_ALLGATHER, 2, 1, 8);
    team *t = team_new(2, 8);                   /* rank 1 forgets its own block */
    for (int r = 0; r < 2; r++) {
        sched_put(&t->s[r], 1 - r, SEND0, 8);
        sched_recv(&t->s[r], 1 - r, sched_at(SBUF_RECV, 8 * (uint64_t)(1 - r)), 8);
    }
    sched_copy(&t->s[0], RECV0, SEND0, 8);
    expect("allgather without the own block", &a, t, "is missing");
    t = team_new(2, 8);                         /* blocks swapped on arrival */
    for (int r = 0; r < 2; r++) {
        sched_put(&t->s[r], 1 - r, SEND0, 8);
        sched_recv(&t->s[r], 1 - r, sched_at(SBUF_RECV, 8 * (uint64_t)r), 8);
    }
    expect("allgather blocks swapped", &a, t, "does not hold element");
    a = call(COLL_GATHER, 2, 1, 8);
    t = team_new(2, 8);                         /* the non-root writes its RECV */
    sched_copy(&t->s[1], RECV0, SEND0, 8);
    expect("gather non-root writes RECV", &a, t, "may be NULL");
    a = call(COLL_SCAN, 2, 1, 8);
    t = team_new(2, 8);                         /* rank 0 gets x0 ∘ x1 */
    for (int r = 0; r < 2; r++) {
        sched_put(&t->s[r], 1 - r, SEND0, 8);
        sched_ref two[2] = { r == 0 ? SEND0 : sched_in(0), r == 0 ? sched_in(1) : SEND0 };
        sched_reduce(&t->s[r], RECV0, two, 2, 8);
    }
    expect("scan beyond the prefix", &a, t, "beyond the result's ranks");
    a = call(COLL_EXSCAN, 2, 1, 8);
    t = team_new(2, 8);
    sched_copy(&t->s[0], RECV0, SEND0, 8);
    sched_put(&t->s[0], 1, SEND0, 8);
    sched_recv(&t->s[1], 0, RECV0, 8);
    expect("exscan writes rank 0", &a, t, "untouched");
    a = call(COLL_ALLGATHER, 2, 1, 8);
    size_t c0[2] = { 1, 1 }, c1[2] = { 1, 2 }, d[2] = { 0, 1 };
    collie_coll_v v[2] = { { c0, d, NULL, NULL, 1 }, { c1, d, NULL, NULL, 2 } };
    a.v = v;
    expect("allgatherv counts differ", &a, team_new(2, 8), "bad call arguments");
}

/* Removes the last operation (rounds may end empty: sched_round_begin keeps a trailing
 * empty round). */
static bool drop_last_op(collie_schedule *s) {
    uint32_t k = s->nrounds;
    while (k > 0 && s->rounds[k - 1].nops == 0)
        k--;
    if (k == 0)
        return false;
    s->rounds[k - 1].nops--;
    s->nops--;
    return true;
}

/* Mutation: dropping the last operation of rank `victim` of a real schedule is detected. */
static void mutate_one(const collie_algorithm *alg, const collie_coll_args *a, int victim) {
    collie_schedule s[8];
    for (int r = 0; r < a->size; r++) {
        collie_coll_args ar = *a;
        ar.rank = r;
        sched_init(&s[r], r, a->size, a->elem_size);
        alg->build(&s[r], &ar);
    }
    bool mutated = drop_last_op(&s[victim]);
    char err[1024];
    int rc = sym_run(alg->name, a, s, err, sizeof err);
    check(!mutated || rc != 0, "%s %s P=%d: dropping rank %d's last op went unnoticed",
          collie_coll_name(a->coll), alg->name, a->size, victim);
    for (int r = 0; r < a->size; r++)
        sched_free(&s[r]);
}

static void self_test_mutations(void) {
    int sizes[] = { 2, 5, 8 };
    for (int coll = 0; coll < COLL_COUNT; coll++)
        for (size_t i = 0; i < collie_algorithm_count(coll); i++)
            for (int k = 0; k < 3; k++) {
                const collie_algorithm *alg = collie_algorithm_at(coll, i);
                collie_coll_args a = call(coll, sizes[k], coll == COLL_BARRIER ? 0 : 7, 8);
                a.idempotent = (alg->needs & ALGO_NEEDS_IDEMPOTENT) != 0;
                a.root = sizes[k] - 1;
                for (int victim = 0; victim < sizes[k]; victim++)
                    mutate_one(alg, &a, victim);
            }
}

int main(void) {
    self_test_allreduce();
    self_test_association();
    self_test_access();
    self_test_reduce_bcast_barrier();
    self_test_colls();
    self_test_mutations();
    if (failures)
        fprintf(stderr, "test_verifier: %d failures\n", failures);
    else
        printf("test_verifier: ok\n");
    return failures ? 1 : 0;
}
