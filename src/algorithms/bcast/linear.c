/*
 * linear.c — broadcast by the root writing to every other rank, one after another.
 *
 * Source: Abuelsoud–Paznikov §II–III (the "linear" baseline of their measurements, the
 *   only pattern the MPI RMA standard offers: the root loops over the ranks doing
 *   lock / MPI_Put into the target's window / unlock); Hoefler 2007 §4.1 (Open MPI's
 *   "tuned" broadcast uses it for at most 4 ranks).  Here a PUT is a notified write, so
 *   the lock/unlock epoch is not needed: the notification tells the target its data is
 *   complete.  The root PUTs to relative ranks 1, 2, …, P-1 (rank root+1 first), one PUT
 *   per round; every other rank receives once.  Index math: pat_abs_rank.
 *   Versus flat.c: the same fan-out, but flat.c is registered for shared memory only (a
 *   single round of P-1 memcpy's into the inboxes, the single-node latency floor) while
 *   linear is the transport-independent baseline (no ALGO_NEEDS_SHM); its PUTs are
 *   issued in relative-rank order in separate rounds, so the executor, which progresses
 *   trailing PUTs oldest first, serves rank root+1 first.
 *   Versus binomial.c (Abuelsoud–Paznikov Alg. 2–3, the put loop over a binomial tree):
 *   binomial lets every rank that has the data forward it, ⌈lg P⌉ levels instead of P-1
 *   sends by the root.
 * Rounds: root P-1 (one PUT each), others 1 (receive).
 * Bytes sent per rank: root (P-1)·n, others 0.
 * Restrictions: none — any P, any root, any transport.  Uses SBUF_RECV only.
 * Cost: T = (P-1)(α_uni + nβ_uni) for the last rank (root+P-1); rank root+i finishes
 *   after about i(α_uni + nβ_uni) when the root's link serialises the sends.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns_bcast.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    sched_ref buf = sched_at(SBUF_RECV, 0);
    if (a->rank != a->root) {
        sched_recv(s, a->root, buf, a->bytes);
        return;
    }
    for (int v = 1; v < a->size; v++) {
        sched_round_begin(s);
        sched_put(s, pat_abs_rank(v, a->root, a->size), buf, a->bytes);
    }
}

const collie_algorithm collie_algo_bcast_linear = {
    .name = "linear",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "the root puts the buffer to every rank in turn (Abuelsoud-Paznikov linear "
               "baseline); any transport, very small teams",
    .accepts = NULL,
    .build = build,
};
