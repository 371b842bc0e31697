/*
 * ring.c — allreduce as a reduce-scatter by pairwise exchange followed by a ring
 * allgather.
 *
 * Source: Rabenseifner 2004, §3.7 (Ring), with the two halves as §3.2 "Ring algorithms"
 *   describes them (Thakur & Gropp's pairwise-exchange reduce_scatter): the vector is cut
 *   into P segments (pat_seg_*: lengths differ by at most one element, count < P leaves
 *   empty segments whose messages are skipped).  Rank j owns segment j.
 *   Reduce-scatter, step i = 1 … P-1: send my input's segment (rank+i) to rank+i, receive
 *   rank-i's input segment and combine it into mine.  Allgather, step j = 0 … P-2: send
 *   segment (rank-j) to rank+1, receive segment (rank-j-1) from rank-1.
 * Rounds: 2(P-1).
 * Bytes sent per rank: 2(n - n/P) (rounded to whole elements).
 * Restrictions: none — any P, any op, any count.  Non-commutative ops work: segment r
 *   arrives in the order r-1, r-2, …, 0, P-1, …, r+1, so it is built as
 *   low = x_0 ∘ (… ∘ (x_{r-1} ∘ x_r)) and high = x_{r+1} ∘ (… ∘ x_{P-1}) (in TMP), and
 *   the last step forms low ∘ x_{r+1} ∘ high in one 3-source node.  Each element is
 *   reduced once, on its owner, and copied to the others: bitwise identical everywhere.
 * Scratch: one segment (⌈n/P⌉ bytes) for `high`.
 * Cost: T = 2(P-1)α + 2nβ + nγ - (2nβ + nγ)/P   (§3.7).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

static uint64_t seg_off(const collie_coll_args *a, int j) {
    return pat_seg_start(a->count, a->size, j) * a->elem_size;
}

static uint64_t seg_bytes(const collie_coll_args *a, int j) {
    return pat_seg_len(a->count, a->size, j) * a->elem_size;
}

/* The state of my own segment during the reduce-scatter. */
typedef struct own_seg {
    sched_ref low;      /* x_from … x_r for the ranks received so far below me */
    sched_ref high;     /* x_from … x_{P-1} for those above me (valid when has_high) */
    bool has_high;
} own_seg;

/* Combines the segment arriving from `from` in step `step` into my own segment. */
static void combine(collie_schedule *s, const collie_coll_args *a, own_seg *o, int from,
                    int step) {
    uint64_t bytes = seg_bytes(a, a->rank);
    sched_ref res = sched_at(SBUF_RECV, seg_off(a, a->rank));
    if (from < a->rank) {                       /* a lower rank: in ∘ low */
        sched_recv_reduce(s, from, res, o->low, true, bytes);
        o->low = res;
    } else if (step == a->size - 1) {           /* the last one, rank + 1: low ∘ in ∘ high */
        sched_ref srcs[3] = { o->low, sched_in(from), o->high };
        sched_reduce(s, res, srcs, o->has_high ? 3 : 2, bytes);
    } else if (!o->has_high) {                  /* rank P-1 opens `high` */
        sched_need_tmp(s, bytes);
        sched_recv(s, from, o->high, bytes);
        o->has_high = true;
    } else {                                    /* in ∘ high */
        sched_recv_reduce(s, from, o->high, o->high, true, bytes);
    }
}

static void reduce_scatter(collie_schedule *s, const collie_coll_args *a) {
    own_seg o = { sched_at(SBUF_SEND, seg_off(a, a->rank)), sched_at(SBUF_TMP, 0), false };
    for (int i = 1; i < a->size; i++) {
        int to = pat_pairwise_to(a->rank, i, a->size);
        int from = pat_pairwise_from(a->rank, i, a->size);
        sched_round_begin(s);
        if (seg_bytes(a, to) > 0)
            sched_put(s, to, sched_at(SBUF_SEND, seg_off(a, to)), seg_bytes(a, to));
        if (seg_bytes(a, a->rank) > 0)
            combine(s, a, &o, from, i);
    }
}

static void allgather(collie_schedule *s, const collie_coll_args *a) {
    int next = pat_ring_next(a->rank, a->size), prev = pat_ring_prev(a->rank, a->size);
    for (int j = 0; j < a->size - 1; j++) {
        int out = (a->rank - j + a->size) % a->size;
        int in = (out - 1 + a->size) % a->size;
        sched_round_begin(s);
        if (seg_bytes(a, out) > 0)
            sched_put(s, next, sched_at(SBUF_RECV, seg_off(a, out)), seg_bytes(a, out));
        if (seg_bytes(a, in) > 0)
            sched_recv(s, prev, sched_at(SBUF_RECV, seg_off(a, in)), seg_bytes(a, in));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    reduce_scatter(s, a);
    allgather(s, a);
}

const collie_algorithm collie_algo_allreduce_ring = {
    .name = "ring",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "pairwise-exchange reduce-scatter + ring allgather (Rabenseifner §3.7); "
               "long vectors, small non-power-of-two P",
    .accepts = NULL,
    .build = build,
};
