/*
 * binary_blocks.c — reduce by binary blocks: power-of-two blocks each run recursive
 * halving, smaller blocks feed the next larger one, a binary tree gathers to the root.
 *
 * Source: Rabenseifner 2004, §3.6 (Binary Blocks, "Reduce") and Fig. 3, on top of §3.5.
 *   P = 2^e0 + 2^e1 + …, e0 > e1 > …; block b is 2^eb consecutive ranks, block 0 the
 *   largest with the lowest ranks (pat_bb_*); 2^e0 segments (pat_seg_*).
 *   1. Every block: reduce-scatter by recursive halving + distance doubling over its local
 *      ranks (pat_hd_* with 2^e0 segments).
 *   2. Starting with the smallest block, block b feeds block b-1 (pat_bb_feed_*): local
 *      rank i sends its pieces to local ranks i + t·2^eb of block b-1, which combine them
 *      as own ∘ in.  Block 0 ends with the result, one segment per rank.
 *   3. Gather inside block 0 by distance halving (pat_hd_gather_role, the binomial tree
 *      of §3.5) to the root's local rank.  If the root is outside block 0, rank 0 sends
 *      its segment to the root and the root plays the role of local rank 0 in the gather
 *      (§3.6); rank 0 is then done.
 *   Non-commutative ops: every combination is lower ∘ higher of adjacent rank ranges
 *   (inside a block by the halving, across blocks own ∘ feed), so the root gets
 *   x_0 ∘ … ∘ x_{P-1}.
 * Rounds: block 0: e0 (halving) + 1 (feed) + up to e0 (gather), +1 on rank 0 and the
 *   root when the root is outside block 0; block b >= 1: eb + 2 (+ the root's gather).
 * Bytes sent per rank of block b: n - n/2^eb (halving) + n/2^eb if b >= 1 (feed);
 *   block 0 ranks at most n/2 more in the gather (local rank 2^k sends 2^k segments).
 * Restrictions: none — any P, any root, any op, any count (empty segments skipped).
 *   Non-root ranks work in TMP and never touch RECV.  For P = 2^k identical to
 *   reduce/rabenseifner.c.
 * Scratch: n bytes on non-root ranks.
 * Cost (m blocks, d_b = e(b-1) - eb <= δ = δ_expo,max):
 *   T ≈ e0(1+f_α)α + (1+f_β)nβ + nγ - (n(β+β_uni) + nγ)/2^e0
 *       + Σ_{b>=1} [2^{d_b}α_uni + nβ_uni/2^{eb} + nγ/2^{e(b-1)}]
 *       (+ α_uni + nβ_uni/2^e0 when the root is outside block 0)
 *     <= e0(1+f_α)α + (1+f_β)nβ + nγ + (m-1)·2^δ·α_uni + 2·2^δ·nβ_uni/2^e0 + 2nγ/2^e0.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"
#include "algorithms/blocks_sched.h"

/* Step 1: halving inside the block; returns where the partial result is. */
static int block_reduce_scatter(collie_schedule *s, const bb *g) {
    int acc = SBUF_SEND;
    for (int k = 0; k < g->e; k++) {
        int first, nseg;
        pat_hd_block(g->local, k, 1 << g->e0, &first, &nseg);
        bool upper = (g->local & (1 << k)) != 0;
        block lo = bb_seg_range(g, first, nseg / 2), hi = bb_seg_range(g, first + nseg / 2, nseg / 2);
        int partner = g->first + pat_hd_partner(g->local, k);
        sched_round_begin(s);
        bb_put(s, partner, acc, upper ? lo : hi);
        bb_reduce(s, partner, g, acc, upper ? hi : lo, upper);
        acc = g->dst;
    }
    return acc;
}

/* Step 2: take the feed of block b+1, then feed block b-1.  Returns where the partial
 * result is. */
static int feed(collie_schedule *s, const bb *g, int acc) {
    const collie_coll_args *a = g->a;
    if (g->b + 1 < g->nblocks) {
        sched_round_begin(s);
        bb_reduce(s, pat_bb_feeder(g->local, g->b + 1, a->size), g, acc,
                  bb_held(g, g->local, g->e), false);
        acc = g->dst;
    }
    if (g->b == 0)
        return acc;
    sched_round_begin(s);
    int eup = pat_bb_exp(g->b - 1, a->size);
    for (int t = 0; t < pat_bb_feed_count(g->b, a->size); t++) {
        int target = pat_bb_feed_target(g->local, t, g->b, a->size);
        bb_put(s, target, acc, bb_held(g, target - pat_bb_first(g->b - 1, a->size), eup));
    }
    return acc;
}

/* The rank playing local rank `local` of block 0 in the gather. */
static int gather_rank(const collie_coll_args *a, int local, bool root_outside) {
    return local == 0 && root_outside ? a->root : local;
}

/* Step 3: distance halving to the root's local rank in block 0, `me` being my local rank
 * there (the root outside block 0 plays 0). */
static void gather(collie_schedule *s, const bb *g, int me, bool root_outside) {
    const collie_coll_args *a = g->a;
    int nroot = root_outside ? 0 : a->root;
    for (int k = g->e0 - 1; k >= 0; k--) {
        int role = pat_hd_gather_role(me, nroot, k), pnew = pat_hd_partner(me, k);
        if (role == 0)
            return;
        sched_round_begin(s);
        int peer = gather_rank(a, pnew, root_outside);
        if (role > 0)
            bb_recv(s, peer, g->dst, bb_held(g, pnew, k + 1));
        else
            bb_put(s, peer, g->dst, bb_held(g, me, k + 1));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    bb g = bb_of(a);
    if (g.dst == SBUF_TMP)
        sched_need_tmp(s, a->bytes);
    feed(s, &g, block_reduce_scatter(s, &g));
    bool root_outside = pat_bb_block_of(a->root, a->size) != 0;
    if (root_outside && (a->rank == 0 || a->rank == a->root)) {
        sched_round_begin(s);
        if (a->rank == 0)
            bb_put(s, a->root, g.dst, bb_held(&g, 0, g.e0));
        else
            bb_recv(s, 0, g.dst, bb_held(&g, 0, g.e0));
    }
    if (a->rank == a->root && root_outside)
        gather(s, &g, 0, true);
    else if (g.b == 0 && !(root_outside && a->rank == 0))
        gather(s, &g, g.local, root_outside);
}

const collie_algorithm collie_algo_reduce_binary_blocks = {
    .name = "binary_blocks",
    .coll = COLL_REDUCE,
    .needs = 0,
    .summary = "power-of-two blocks run recursive halving, smaller blocks feed the next "
               "larger, binary-tree gather to the root (Rabenseifner §3.6); long vectors",
    .accepts = NULL,
    .build = build,
};
