/*
 * rabenseifner.c — reduce by recursive halving (reduce-scatter) and a binomial gather to
 * the root.
 *
 * Source: Rabenseifner 2004, §3.5 (Recursive Halving and Doubling, "Reduce") and Fig. 2.
 *   p' = 2^⌊lg P⌋, r = P - p'; the vector is cut into p' segments (pat_seg_*).
 *   1. Non-power-of-two: the first 2r ranks pair up (2i, 2i+1) and exchange halves as in
 *      allreduce/rabenseifner.c; then the removed rank of the pair sends its reduced half
 *      to the survivor.  The survivor is the even rank, except when the root is the odd
 *      (removed) rank: then the two swap roles after the first reduction (§3.5), i.e. the
 *      even rank sends its lower half to the root, which survives as new rank i
 *      (pat_rfold_*).  No extra cost.
 *   2. Reduce-scatter by recursive vector halving + distance doubling over the p' new
 *      ranks (pat_hd_*), as in the allreduce.
 *   3. Gather by distance halving to the root's new rank (pat_hd_gather_role): in step
 *      k = lg p' - 1 … 0 a rank whose bit k equals the root's receives its partner's
 *      block (pat_hd_block at step k+1), the other one sends it and is done (§3.5: "the
 *      bit with the value p'/2 … identical to that bit in root rank must receive").
 *   Non-commutative ops: new-rank order is rank order and every combination is
 *   lower ∘ higher of adjacent contiguous rank ranges (the role swap keeps the pair's
 *   halves in place), so the result is x_0 ∘ … ∘ x_{P-1}.
 * Rounds: 2 lg p' on the root's path; + 2 for paired ranks.
 * Bytes sent per rank: at most (n - n/p') + (n - n/p') (reduce-scatter, gather);
 *   paired ranks + n/2 (+ n/2 from the removed one).
 * Restrictions: none — any P, any root, any op, any count (empty segments skipped).
 *   Non-root ranks accumulate in TMP and never touch RECV.
 * Scratch: n bytes on non-root ranks.
 * Cost: P = 2^k: T = lg P(1+f_α)α + (1+f_β)nβ + nγ - (n(β+β_uni) + nγ)/P;
 *       else:   T = lg p'(1+f_α)α + (1+f_α)α + (1 + (1+f_β)/2 + f_β)nβ + 3/2 nγ
 *                   - ((1+f_β)nβ + nγ)/p'   (§3.5).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"

typedef struct block {
    uint64_t off, bytes;
} block;

/* Segments first … first+nseg-1 of the p' segments, as a byte range. */
static block blk(const collie_coll_args *a, int first, int nseg) {
    int p2 = pat_pow2_floor(a->size);
    size_t lo = pat_seg_start(a->count, p2, first);
    size_t hi = pat_seg_start(a->count, p2, first + nseg);
    block b = { lo * a->elem_size, (hi - lo) * a->elem_size };
    return b;
}

static void put_blk(collie_schedule *s, int peer, int buf, block b) {
    if (b.bytes > 0)
        sched_put(s, peer, sched_at(buf, b.off), b.bytes);
}

static void recv_blk(collie_schedule *s, int peer, int buf, block b) {
    if (b.bytes > 0)
        sched_recv(s, peer, sched_at(buf, b.off), b.bytes);
}

/* dst[b] = in ∘ src[b] (peer lower) or src[b] ∘ in. */
static void reduce_blk(collie_schedule *s, int peer, int dst, int src, block b, bool peer_lower) {
    if (b.bytes > 0)
        sched_recv_reduce(s, peer, sched_at(dst, b.off), sched_at(src, b.off), peer_lower,
                          b.bytes);
}

/* Step 1 for a paired rank: exchange halves, then the removed rank hands its half over. */
static void fold_in(collie_schedule *s, const collie_coll_args *a, int dst, bool survivor) {
    int p2 = pat_pow2_floor(a->size), partner = a->rank ^ 1;
    block lower = blk(a, 0, p2 / 2), upper = blk(a, p2 / 2, p2 / 2);
    bool even = a->rank % 2 == 0;
    sched_round_begin(s);
    put_blk(s, partner, SBUF_SEND, even ? upper : lower);
    reduce_blk(s, partner, dst, SBUF_SEND, even ? lower : upper, !even);
    sched_round_begin(s);
    if (survivor)
        recv_blk(s, partner, dst, even ? upper : lower);
    else
        put_blk(s, partner, dst, even ? lower : upper);
}

static void reduce_scatter(collie_schedule *s, const collie_coll_args *a, int newrank,
                           int acc, int dst) {
    int nsteps = pat_log2_floor(a->size), p2 = 1 << nsteps;
    for (int k = 0; k < nsteps; k++) {
        int first, nseg;
        pat_hd_block(newrank, k, p2, &first, &nseg);
        bool upper = (newrank & (1 << k)) != 0;
        block lo = blk(a, first, nseg / 2), hi = blk(a, first + nseg / 2, nseg / 2);
        int partner = pat_rfold_oldrank(pat_hd_partner(newrank, k), a->size, a->root);
        sched_round_begin(s);
        put_blk(s, partner, acc, upper ? lo : hi);
        reduce_blk(s, partner, dst, acc, upper ? hi : lo, upper);
        acc = dst;
    }
}

static void gather(collie_schedule *s, const collie_coll_args *a, int newrank, int dst) {
    int nsteps = pat_log2_floor(a->size), p2 = 1 << nsteps;
    int nroot = pat_rfold_newrank(a->root, a->size, a->root);
    for (int k = nsteps - 1; k >= 0; k--) {
        int role = pat_hd_gather_role(newrank, nroot, k);
        int pnew = pat_hd_partner(newrank, k), first, nseg;
        int partner = pat_rfold_oldrank(pnew, a->size, a->root);
        if (role == 0)
            return;
        sched_round_begin(s);
        pat_hd_block(role > 0 ? pnew : newrank, k + 1, p2, &first, &nseg);
        if (role > 0)
            recv_blk(s, partner, dst, blk(a, first, nseg));
        else
            put_blk(s, partner, dst, blk(a, first, nseg));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    int dst = a->rank == a->root ? SBUF_RECV : SBUF_TMP;
    if (dst == SBUF_TMP)
        sched_need_tmp(s, a->bytes);
    int newrank = pat_rfold_newrank(a->rank, a->size, a->root);
    bool paired = pat_fold_partner(a->rank, a->size) >= 0;
    if (paired)
        fold_in(s, a, dst, newrank >= 0);
    if (newrank < 0)
        return;
    reduce_scatter(s, a, newrank, paired ? dst : SBUF_SEND, dst);
    gather(s, a, newrank, dst);
}

const collie_algorithm collie_algo_reduce_rabenseifner = {
    .name = "rabenseifner",
    .coll = COLL_REDUCE,
    .needs = 0,
    .summary = "recursive halving reduce-scatter + binomial gather to the root "
               "(Rabenseifner §3.5); long vectors",
    .accepts = NULL,
    .build = build,
};
