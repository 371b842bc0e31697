/*
 * dissemination.c — barrier by dissemination.
 *
 * Source: Hensgen, Finkel & Manber 1988, via End 2016 §III-B (the n = 1 case of the
 *   n-way dissemination) and design/algorithms.md.  In round k < ⌈lg P⌉ every rank
 *   notifies rank + 2^k and waits for rank - 2^k (mod P) (pat_dissemination_*).  After
 *   round k a rank has heard, directly or not, from the 2^(k+1) ranks before it, so after
 *   ⌈lg P⌉ rounds from everyone: no rank leaves before all have entered.
 * Rounds: ⌈lg P⌉ (0 for P = 1).
 * Bytes sent per rank: 0 (⌈lg P⌉ bare notifications).
 * Restrictions: none — any P.
 * Cost: T = ⌈lg P⌉·α.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int rounds = pat_dissemination_rounds(a->size);
    for (int k = 0; k < rounds; k++) {
        sched_round_begin(s);
        sched_notify(s, pat_dissemination_to(a->rank, k, a->size));
        sched_wait_notify(s, pat_dissemination_from(a->rank, k, a->size));
    }
}

const collie_algorithm collie_algo_barrier_dissemination = {
    .name = "dissemination",
    .coll = COLL_BARRIER,
    .needs = 0,
    .summary = "ceil(lg P) rounds of notifications to rank + 2^k (Hensgen 1988)",
    .accepts = NULL,
    .build = build,
};
