/*
 * scatter_allgather.c — van de Geijn's long-message broadcast: binomial scatter of P
 *   segments, then a ring allgather.
 *
 * Source: not from the papers (design/algorithms.md: the standard large-message
 *   broadcast, Open MPI's bcast algorithm 9 and MPICH's scatter + ring allgather); the
 *   scatter walks the binomial tree of binomial.c (Hoefler 2007 §4.1, Abuelsoud–Paznikov
 *   Alg. 2–3, pat_binomial_*), the allgather is Rabenseifner 2004 §3.2's ring.
 *   Segments: the vector is cut into P segments (pat_seg_*, lengths differ by at most one
 *   element; count < P leaves empty segments, whose messages are skipped on both sides);
 *   segment k belongs to relative rank k, so the subtree of relative rank v, the relative
 *   ranks v … v+size-1 (pat_binomial_subtree_size), owns one contiguous range.
 *   Scatter: a rank receives its subtree's range from its parent, then writes to every
 *   child that child's subtree range (farthest child first).  Allgather, step j = 0 …
 *   P-2: relative rank v sends segment (v-j) mod P to v+1 and receives segment
 *   (v-j-1) mod P from v-1 (pat_ring_ag_*), except segments already in the receiver's
 *   subtree, which it has from the scatter (so the root receives nothing, and no message
 *   ever overwrites the source of a scatter PUT still in flight).
 *   Versus binomial.c: binomial sends the whole vector down each tree edge (the root
 *   sends ⌈lg P⌉·n); here every rank sends and receives about 2n(P-1)/P in all, trading
 *   P-1+⌈lg P⌉ latencies for bandwidth — for long messages.
 * Rounds: up to 2 (scatter) + P-1 (allgather).
 * Bytes sent per rank: at most n(P-1)/P in the allgather + its children's ranges in the
 *   scatter (the root n(P-1)/P); received at most about n (P-1 segments), the root 0.
 * Restrictions: none — any P, any root, any count (count < P included).  Uses SBUF_RECV
 *   only.
 * Cost: T = (⌈lg P⌉ + P - 1)α_uni + 2((P-1)/P)nβ_uni  (scatter ⌈lg P⌉α + ((P-1)/P)nβ,
 *   ring allgather (P-1)(α + nβ/P)).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_bcast.h"

/* Byte range of the segments of relative ranks first … first+n-1. */
static sched_ref range_at(const collie_coll_args *a, int first) {
    return sched_at(SBUF_RECV, pat_seg_start(a->count, a->size, first) * a->elem_size);
}

static uint64_t range_bytes(const collie_coll_args *a, int first, int n) {
    size_t lo = pat_seg_start(a->count, a->size, first);
    return (pat_seg_start(a->count, a->size, first + n) - lo) * a->elem_size;
}

/* The subtree range of rank (a real rank). */
static uint64_t subtree_bytes(const collie_coll_args *a, int rank) {
    int v = pat_rel_rank(rank, a->root, a->size);
    return range_bytes(a, v, pat_binomial_subtree_size(rank, a->root, a->size));
}

static void scatter(collie_schedule *s, const collie_coll_args *a) {
    int parent = pat_binomial_parent(a->rank, a->root, a->size);
    int v = pat_rel_rank(a->rank, a->root, a->size);
    uint64_t mine = subtree_bytes(a, a->rank);
    if (parent >= 0 && mine > 0) {
        sched_round_begin(s);
        sched_recv(s, parent, range_at(a, v), mine);
    }
    sched_round_begin(s);
    for (int i = pat_binomial_nchildren(a->rank, a->root, a->size) - 1; i >= 0; i--) {
        int child = pat_binomial_child(a->rank, a->root, a->size, i);
        uint64_t bytes = subtree_bytes(a, child);
        if (bytes > 0)
            sched_put(s, child, range_at(a, pat_rel_rank(child, a->root, a->size)), bytes);
    }
}

/* true when relative rank w must receive segment k in the allgather. */
static bool needs_segment(const collie_coll_args *a, int w, int k) {
    int rank = pat_abs_rank(w, a->root, a->size);
    return range_bytes(a, k, 1) > 0 && !pat_binomial_in_subtree(rank, a->root, a->size, k);
}

static void allgather(collie_schedule *s, const collie_coll_args *a) {
    int P = a->size, v = pat_rel_rank(a->rank, a->root, P);
    int next = pat_ring_next(a->rank, P), prev = pat_ring_prev(a->rank, P);
    for (int j = 0; j < P - 1; j++) {
        int out = pat_ring_ag_send_block(v, j, P), in = pat_ring_ag_recv_block(v, j, P);
        sched_round_begin(s);
        if (needs_segment(a, (v + 1) % P, out))
            sched_put(s, next, range_at(a, out), range_bytes(a, out, 1));
        if (needs_segment(a, v, in))
            sched_recv(s, prev, range_at(a, in), range_bytes(a, in, 1));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0 || a->size == 1)
        return;
    scatter(s, a);
    allgather(s, a);
}

const collie_algorithm collie_algo_bcast_scatter_allgather = {
    .name = "scatter_allgather",
    .coll = COLL_BCAST,
    .needs = 0,
    .summary = "binomial scatter of P segments + ring allgather (van de Geijn); long messages",
    .accepts = NULL,
    .build = build,
};
