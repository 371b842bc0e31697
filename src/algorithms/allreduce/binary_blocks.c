/*
 * binary_blocks.c — allreduce by binary blocks: power-of-two blocks each run halving and
 * doubling, smaller blocks feed the next larger one.
 *
 * Source: Rabenseifner 2004, §3.6 (Binary Blocks) and Fig. 3, on top of §3.5.
 *   P = 2^e0 + 2^e1 + … + 2^e(m-1), e0 > e1 > …; block b is 2^eb consecutive ranks,
 *   block 0 the largest with the lowest ranks (pat_bb_*).  The vector is cut into 2^e0
 *   segments (pat_seg_*), the finest granularity, for every block.
 *   1. Every block runs its own reduce-scatter by recursive halving + distance doubling
 *      over its 2^eb local ranks (pat_hd_* with 2^e0 segments): local rank i ends with
 *      the segments pat_hd_block(i, eb, 2^e0) of its block's partial result (a block of
 *      one rank keeps its input).
 *   2. Starting with the smallest block, block b sends each of its pieces to the next
 *      larger block b-1: local rank i of b splits its segments into the 2^d blocks of
 *      local ranks i + t·2^eb of b-1 (d = e(b-1) - eb, pat_bb_feed_*), which combine it
 *      into their own: own ∘ in.  Block b waits for its own feed first, so what it sends
 *      stands for all ranks of blocks b, b+1, …  Block 0 then holds, one segment per
 *      rank, the whole result.
 *   3. Allgather, mirrored (§3.6: "the input must be provided in the processes of the
 *      smaller blocks always with pairs of messages from processes of the next larger
 *      block", pairs when d = 1, 2^d messages in general): local rank j of block b-1
 *      sends its piece to local rank j mod 2^eb of block b, which (after receiving all
 *      2^d pieces) forwards its range to block b+1; every block then runs its allgather
 *      by vector doubling + distance halving.
 *   Non-commutative ops: inside a block new ranks are ranks and each combination is
 *   lower ∘ higher of adjacent ranges; a feed combines block b's range with the range of
 *   blocks b+1 … (higher ranks) as own ∘ in.  Every element is reduced once, on its owner
 *   in block 0, and copied everywhere else: bitwise identical.
 * Rounds: block 0: 2·e0 + 1 (the feed) + 1 (down to block 1); block b: 2·eb + 4.
 *   The critical path runs through the chain of feeds m-1 long, then back down.
 * Bytes sent per rank of block b: 2(n - n/2^eb) (halving, doubling in the block)
 *   + n/2^eb if b >= 1 (feed up) + n/2^eb if b < m-1 (pieces down).
 * Restrictions: none — any P, any op, any count (empty segments skipped).  For P = 2^k
 *   one block: identical to halving&doubling.
 * Scratch: none.
 * Cost (m blocks, d_b = e(b-1) - eb <= δ = δ_expo,max):
 *   T ≈ 2e0α + 2nβ + nγ - (2nβ + nγ)/2^e0
 *       + Σ_{b>=1} [2·2^{d_b}α_uni + 2nβ_uni/2^{eb} + nγ/2^{e(b-1)}]
 *     <= 2e0α + 2nβ + nγ + 2(m-1)·2^δ·α_uni + 4·2^δ·nβ_uni/2^e0 + 2nγ/2^e0;
 *   the load imbalance grows with 2^δ (§3.6), which is why the selector prefers binary
 *   blocks only for small δ_expo,max (§4: δ < lg(n)/2 - 2.5 on the T3E).
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
        acc = SBUF_RECV;
    }
    return acc;
}

/* Step 2: take the feed of block b+1, then feed block b-1. */
static void feed(collie_schedule *s, const bb *g, int acc) {
    const collie_coll_args *a = g->a;
    if (g->b + 1 < g->nblocks) {
        sched_round_begin(s);
        bb_reduce(s, pat_bb_feeder(g->local, g->b + 1, a->size), g, acc,
                  bb_held(g, g->local, g->e), false);
        acc = SBUF_RECV;
    }
    if (g->b == 0)
        return;
    sched_round_begin(s);
    int eup = pat_bb_exp(g->b - 1, a->size);
    for (int t = 0; t < pat_bb_feed_count(g->b, a->size); t++) {
        int target = pat_bb_feed_target(g->local, t, g->b, a->size);
        bb_put(s, target, acc, bb_held(g, target - pat_bb_first(g->b - 1, a->size), eup));
    }
}

/* Step 3a: pieces from block b-1, then my range on to block b+1. */
static void pass_down(collie_schedule *s, const bb *g) {
    const collie_coll_args *a = g->a;
    if (g->b > 0) {
        sched_round_begin(s);
        int eup = pat_bb_exp(g->b - 1, a->size), up_first = pat_bb_first(g->b - 1, a->size);
        for (int t = 0; t < pat_bb_feed_count(g->b, a->size); t++) {
            int from = pat_bb_feed_target(g->local, t, g->b, a->size);
            bb_recv(s, from, SBUF_RECV, bb_held(g, from - up_first, eup));
        }
    }
    if (g->b + 1 < g->nblocks) {
        sched_round_begin(s);
        bb_put(s, pat_bb_feeder(g->local, g->b + 1, a->size), SBUF_RECV,
                bb_held(g, g->local, g->e));
    }
}

/* Step 3b: doubling inside the block. */
static void block_allgather(collie_schedule *s, const bb *g) {
    for (int k = g->e - 1; k >= 0; k--) {
        int pnew = pat_hd_partner(g->local, k);
        sched_round_begin(s);
        bb_put(s, g->first + pnew, SBUF_RECV, bb_held(g, g->local, k + 1));
        bb_recv(s, g->first + pnew, SBUF_RECV, bb_held(g, pnew, k + 1));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    bb g = bb_of(a);
    feed(s, &g, block_reduce_scatter(s, &g));
    pass_down(s, &g);
    block_allgather(s, &g);
}

const collie_algorithm collie_algo_allreduce_binary_blocks = {
    .name = "binary_blocks",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "power-of-two blocks run halving&doubling, smaller blocks feed the next "
               "larger (Rabenseifner §3.6); long vectors, P with small δ_expo,max",
    .accepts = NULL,
    .build = build,
};
