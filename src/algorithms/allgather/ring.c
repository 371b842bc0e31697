/*
 * ring.c — allgather by the ring.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005, "Optimization of collective communication
 *   operations in MPICH" (IJHPCA 19(1)), the ring allgather of the allgather section (the
 *   long-message allgather of MPICH); the same pass is Rabenseifner 2004 §3.7's second half.
 *   Step i = 0 … P-2: send block (rank - i) to rank + 1, receive block (rank - i - 1) from
 *   rank - 1 (cyclic); after P-1 steps every rank holds every block.
 * Rounds: P - 1 (the copy of the own block shares the first).
 * Bytes sent per rank: n·(P-1)/P, n = P·B the gathered bytes (v form: Σ of the other
 *   blocks but the one of rank + 1).
 * Restrictions: none — any P, any count; the v form (allgatherv) is served: each step
 *   moves one block of its own size, empty blocks send nothing.  Neighbour-only: suits
 *   long messages and networks where only neighbours are cheap.
 * Scratch: none.
 * Cost: T = (P-1)α + ((P-1)/P)nβ.
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    int next = pat_ring_next(r, p), prev = pat_ring_prev(r, p);
    uint64_t own = cs_recv_len(a, r);
    sched_round_begin(s);
    if (!a->in_place)
        sched_copy(s, sched_at(SBUF_RECV, cs_recv_off(a, r)), sched_at(SBUF_SEND, 0), own);
    for (int i = 0; i < p - 1; i++) {
        int out = (r - i + p) % p, in = (r - i - 1 + p) % p;
        if (i > 0)
            sched_round_begin(s);
        /* step 0 sends the own block from SEND: RECV's copy is written in this round */
        sched_ref src = (i == 0 && !a->in_place) ? sched_at(SBUF_SEND, 0)
                                                 : sched_at(SBUF_RECV, cs_recv_off(a, out));
        cs_put(s, next, src, cs_recv_len(a, out));
        cs_recv(s, prev, sched_at(SBUF_RECV, cs_recv_off(a, in)), cs_recv_len(a, in));
    }
}

const collie_algorithm collie_algo_allgather_ring = {
    .name = "ring",
    .coll = COLL_ALLGATHER,
    .needs = 0,
    .summary = "ring allgather, P-1 steps of one block to the next rank (Thakur et al. "
               "2005); long messages; allgatherv too",
    .accepts = NULL,
    .build = build,
};
