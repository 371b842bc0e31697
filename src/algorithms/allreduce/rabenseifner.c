/*
 * rabenseifner.c — allreduce by recursive halving and doubling.
 *
 * Source: Rabenseifner 2004, §3.5 (Recursive Halving and Doubling) and Fig. 2.
 *   p' = 2^⌊lg P⌋, r = P - p' (the paper's "p' = 2^⌈lg p⌉" in §3.5 is a typo; its cost
 *   formula uses 2^⌊lg p⌋).  The vector is cut into p' segments (pat_seg_*).
 *   1. Non-power-of-two: the first 2r ranks pair up; the even rank sends the upper half to
 *      the odd one, the odd rank the lower half to the even one, each reduces its half,
 *      then the odd rank sends its reduced upper half to the even one and drops out.
 *   2. Reduce-scatter by recursive vector halving + distance doubling over the p' new
 *      ranks (pat_hd_*): step k pairs new ranks i and i ^ 2^k, the one with bit k clear
 *      keeps the lower half of its block; after lg p' steps every new rank owns one
 *      segment.
 *   3. Allgather by recursive vector doubling + distance halving (the same blocks
 *      backwards).
 *   4. Non-power-of-two: the even rank of each pair sends the whole result to the odd one.
 * Rounds: 2 lg p'; paired even ranks + 3, removed odd ranks 3 in all.
 * Bytes sent per rank: 2(n - n/p'); paired even ranks + n/2 + n, removed odd ranks n.
 * Restrictions: none — any P, any op, any count (count < p' leaves empty segments whose
 *   messages are skipped).  Non-commutative ops work: in every step both partial
 *   results stand for adjacent contiguous rank ranges and are combined lower ∘ higher.
 *   Every element is reduced on one rank and copied to the others: bitwise identical.
 * Scratch: none (halving keeps reads and writes of one round on disjoint halves).
 * Cost: P = 2^k:  T = 2 lg P α + 2nβ + nγ - (2nβ + nγ)/P;
 *       else:     T = (2 lg p' + 2 + f_α)α + (3 + (1+f_β)/2)nβ + 3/2 nγ - (2nβ + nγ)/p'
 *   (§3.5).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

/* Segments first … first+nseg-1 of the p' segments, as a byte range. */
typedef struct block {
    uint64_t off, bytes;
} block;

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

static void recv_blk(collie_schedule *s, int peer, block b) {
    if (b.bytes > 0)
        sched_recv(s, peer, sched_at(SBUF_RECV, b.off), b.bytes);
}

/* RECV[b] = in ∘ src[b] (peer lower) or src[b] ∘ in. */
static void reduce_blk(collie_schedule *s, int peer, int src_buf, block b, bool peer_lower) {
    if (b.bytes > 0)
        sched_recv_reduce(s, peer, sched_at(SBUF_RECV, b.off), sched_at(src_buf, b.off),
                          peer_lower, b.bytes);
}

/* Step 1 for a paired rank (Fig. 2): exchange halves, then the odd rank hands its half
 * over.  The even rank ends with the full pair result in RECV. */
static void fold_in(collie_schedule *s, const collie_coll_args *a) {
    int p2 = pat_pow2_floor(a->size), partner = a->rank ^ 1;
    block lower = blk(a, 0, p2 / 2), upper = blk(a, p2 / 2, p2 / 2);
    bool even = a->rank % 2 == 0;
    sched_round_begin(s);
    put_blk(s, partner, SBUF_SEND, even ? upper : lower);
    reduce_blk(s, partner, SBUF_SEND, even ? lower : upper, !even);
    sched_round_begin(s);
    if (even)
        recv_blk(s, partner, upper);
    else
        put_blk(s, partner, SBUF_RECV, upper);
}

/* Step 2: halving the block, doubling the distance.  Returns nothing; the owned segment
 * ends in RECV. */
static void reduce_scatter(collie_schedule *s, const collie_coll_args *a, int newrank,
                           int nsteps, int acc_buf) {
    int p2 = 1 << nsteps;
    for (int k = 0; k < nsteps; k++) {
        int first, nseg;
        pat_hd_block(newrank, k, p2, &first, &nseg);
        bool upper = (newrank & (1 << k)) != 0;
        block lo = blk(a, first, nseg / 2), hi = blk(a, first + nseg / 2, nseg / 2);
        int partner = pat_fold_oldrank(pat_hd_partner(newrank, k), a->size);
        sched_round_begin(s);
        put_blk(s, partner, acc_buf, upper ? lo : hi);
        reduce_blk(s, partner, acc_buf, upper ? hi : lo, upper);
        acc_buf = SBUF_RECV;
    }
}

/* Step 3: doubling the block, halving the distance. */
static void allgather(collie_schedule *s, const collie_coll_args *a, int newrank, int nsteps) {
    int p2 = 1 << nsteps;
    for (int k = nsteps - 1; k >= 0; k--) {
        int pnew = pat_hd_partner(newrank, k);
        int mine_first, partner_first, nseg;
        pat_hd_block(newrank, k + 1, p2, &mine_first, &nseg);
        pat_hd_block(pnew, k + 1, p2, &partner_first, &nseg);
        int partner = pat_fold_oldrank(pnew, a->size);
        sched_round_begin(s);
        put_blk(s, partner, SBUF_RECV, blk(a, mine_first, nseg));
        recv_blk(s, partner, blk(a, partner_first, nseg));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    bool paired = pat_fold_partner(a->rank, a->size) >= 0;
    if (paired)
        fold_in(s, a);
    int newrank = pat_fold_newrank(a->rank, a->size);
    if (newrank >= 0) {
        int nsteps = pat_log2_floor(a->size);
        reduce_scatter(s, a, newrank, nsteps, paired ? SBUF_RECV : SBUF_SEND);
        allgather(s, a, newrank, nsteps);
    }
    if (paired) {
        block all = { 0, a->bytes };
        sched_round_begin(s);
        if (newrank >= 0)
            put_blk(s, a->rank + 1, SBUF_RECV, all);
        else
            recv_blk(s, a->rank - 1, all);
    }
}

const collie_algorithm collie_algo_allreduce_rabenseifner = {
    .name = "rabenseifner",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "recursive halving reduce-scatter + recursive doubling allgather "
               "(Rabenseifner §3.5); long vectors",
    .accepts = NULL,
    .build = build,
};
