/*
 * nway_dissemination.c — barrier by the n-way dissemination.
 *
 * Source: End et al. 2016 §III-B, eq. (1) (Hoefler et al. 2006's n-way dissemination;
 *   n = 1 is Hensgen et al. 1988, barrier/dissemination.c).  b = n + 1,
 *   k = ⌈log_b P⌉, M = b^(k-1).  In round l = 1…k rank p notifies p + i·b^(l-1) and waits
 *   for p - j·b^(l-1) (mod P), i, j = 1…n (pattern: nway_to / nway_from in
 *   patterns_nway.c).  After round l a rank has heard, directly or not, from the b^l ranks
 *   ending at it (eq. (4)).
 * Last round for P ≠ b^k (a case the paper leaves to the barrier's tolerance of duplicate
 *   flags): only the peers at distance i·M < P are used, i = 1…⌈P/M⌉-1 — enough, since
 *   M + (⌈P/M⌉-1)·M >= P, and it keeps peers distinct (i·M mod P would repeat or hit p
 *   itself for i·M >= P).  No exactly-once adaptation is needed: a barrier needs only
 *   causality, which the symbolic verifier checks.
 * Rounds: k = ⌈log_{n+1} P⌉ (0 for P = 1).
 * Bytes sent per rank: 0 (at most n·k bare notifications).
 * Restrictions: none — any P; parameter n = 1…254 (default 2).
 * Cost: T = k·α (n notifications in flight per round; ≈ k·(α + (n-1)·α_overlap)).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns_nway.h"

static int param_n(const collie_coll_args *a) {
    return (int)collie_param(&a->params, "n", 2);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int n = param_n(a), P = a->size, k = nway_rounds(n, P);
    long long dist = 1;
    for (int l = 1; l <= k; l++, dist *= n + 1) {
        sched_round_begin(s);
        for (int i = 1; i <= n && i * dist < P; i++)
            sched_notify(s, nway_to(a->rank, l, i, n, P));
        for (int j = 1; j <= n && j * dist < P; j++)
            sched_wait_notify(s, nway_from(a->rank, l, j, n, P));
    }
}

static bool accepts(const collie_coll_args *a, const char **why) {
    long long n = collie_param(&a->params, "n", 2);
    if (n < 1 || n > NWAY_MAX_N) {
        *why = "parameter n must be 1…254";
        return false;
    }
    return true;
}

const collie_algorithm collie_algo_barrier_nway_dissemination = {
    .name = "nway_dissemination",
    .coll = COLL_BARRIER,
    .needs = 0,
    .summary = "ceil(log_{n+1} P) rounds of n notifications to rank + i(n+1)^l "
               "(End 2016 §III-B); parameter n",
    .accepts = accepts,
    .build = build,
};
