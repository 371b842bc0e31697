/*
 * ring.c — reduce as a reduce-scatter by pairwise exchange, then every rank sends its
 * result segment straight to the root.
 *
 * Source: Rabenseifner 2004, §3.7 (Ring: "for reduce, all processes send their result
 *   segment directly to root"), the reduce-scatter as in §3.2 "Ring algorithms": the
 *   vector is cut into P segments (pat_seg_*), rank j owns segment j; in step
 *   i = 1 … P-1 rank r sends its input's segment r+i to rank r+i and combines the
 *   segment arriving from r-i into its own.  Then, in one round, every rank but the root
 *   PUTs its finished segment to the root, which receives them all straight into RECV.
 *   Non-commutative ops (as allreduce/ring.c): segment r arrives from r-1, r-2, …, 0,
 *   P-1, …, r+1, so it is built as low = x_0 ∘ (… ∘ x_r) in the result buffer and
 *   high = x_{r+1} ∘ (… ∘ x_{P-1}) in TMP, and the last step forms low ∘ x_{r+1} ∘ high.
 * Rounds: P (P-1 exchange steps, one gather round).
 * Bytes sent per rank: (n - n/P) + n/P = n for non-root ranks, n - n/P for the root.
 * Restrictions: none — any P, any root, any op, any count (empty segments skipped).
 *   Non-root ranks keep their segment in TMP and never touch RECV.
 * Scratch: one segment (⌈n/P⌉) for `high`, two on non-root ranks (high and the result).
 * Cost: T = (P-1)(α + α_uni) + n(β + β_uni) + nγ - (n(β + β_uni) + nγ)/P   (§3.7).
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
    sched_ref res;      /* where the finished segment goes */
    sched_ref low;      /* x_from … x_r for the ranks received so far below me */
    sched_ref high;     /* x_from … x_{P-1} for those above me (valid when has_high) */
    bool has_high;
} own_seg;

static own_seg own_init(collie_schedule *s, const collie_coll_args *a) {
    uint64_t bytes = seg_bytes(a, 0);           /* the longest segment */
    bool root = a->rank == a->root;
    own_seg o;
    o.res = root ? sched_at(SBUF_RECV, seg_off(a, a->rank)) : sched_at(SBUF_TMP, bytes);
    o.low = sched_at(SBUF_SEND, seg_off(a, a->rank));
    o.high = sched_at(SBUF_TMP, 0);
    o.has_high = false;
    sched_need_tmp(s, root ? bytes : 2 * bytes);
    return o;
}

/* Combines the segment arriving from `from` in step `step` into my own segment. */
static void combine(collie_schedule *s, const collie_coll_args *a, own_seg *o, int from,
                    int step) {
    uint64_t bytes = seg_bytes(a, a->rank);
    if (from < a->rank) {                       /* a lower rank: in ∘ low */
        sched_recv_reduce(s, from, o->res, o->low, true, bytes);
        o->low = o->res;
    } else if (step == a->size - 1) {           /* the last one, rank + 1: low ∘ in ∘ high */
        sched_ref srcs[3] = { o->low, sched_in(from), o->high };
        sched_reduce(s, o->res, srcs, o->has_high ? 3 : 2, bytes);
    } else if (!o->has_high) {                  /* rank P-1 opens `high` */
        sched_recv(s, from, o->high, bytes);
        o->has_high = true;
    } else {                                    /* in ∘ high */
        sched_recv_reduce(s, from, o->high, o->high, true, bytes);
    }
}

/* A rank whose own segment is empty (count < P: ranks count … P-1) only sends: one PUT
 * to each rank j < count, in step order (step (j - rank) mod P), so that building does not
 * walk all P steps. */
static void send_only(collie_schedule *s, const collie_coll_args *a) {
    for (int to = 0; (size_t)to < a->count; to++) {     /* count <= rank < P */
        sched_round_begin(s);
        sched_put(s, to, sched_at(SBUF_SEND, seg_off(a, to)), seg_bytes(a, to));
    }
}

static sched_ref reduce_scatter(collie_schedule *s, const collie_coll_args *a) {
    own_seg o = own_init(s, a);
    if ((size_t)a->rank >= a->count) {             /* count < P and my segment is empty */
        send_only(s, a);
        return o.res;
    }
    for (int i = 1; i < a->size; i++) {
        int to = pat_pairwise_to(a->rank, i, a->size);
        int from = pat_pairwise_from(a->rank, i, a->size);
        sched_round_begin(s);
        if (seg_bytes(a, to) > 0)
            sched_put(s, to, sched_at(SBUF_SEND, seg_off(a, to)), seg_bytes(a, to));
        if (seg_bytes(a, a->rank) > 0)
            combine(s, a, &o, from, i);
    }
    return o.res;
}

/* Every segment to the root. */
static void gather(collie_schedule *s, const collie_coll_args *a, sched_ref res) {
    sched_round_begin(s);
    if (a->rank != a->root) {
        if (seg_bytes(a, a->rank) > 0)
            sched_put(s, a->root, res, seg_bytes(a, a->rank));
        return;
    }
    for (int j = 0; j < a->size; j++)
        if (j != a->root && seg_bytes(a, j) > 0)
            sched_recv(s, j, sched_at(SBUF_RECV, seg_off(a, j)), seg_bytes(a, j));
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    gather(s, a, reduce_scatter(s, a));
}

const collie_algorithm collie_algo_reduce_ring = {
    .name = "ring",
    .coll = COLL_REDUCE,
    .needs = 0,
    .summary = "pairwise-exchange reduce-scatter, result segments straight to the root "
               "(Rabenseifner §3.7); long vectors, small P",
    .accepts = NULL,
    .build = build,
};
