/*
 * recursive_doubling.c — allgather by recursive distance doubling, any P.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the recursive-doubling
 *   allgather of the allgather section (MPICH's short/medium-message allgather for
 *   powers of two); non-powers of two folded as Rabenseifner 2004 §3.5, Fig. 2 (the
 *   allgather phase of its reduce-scatter + allgather): p' = 2^⌊lg P⌋, r = P - p'; the
 *   first 2r ranks pair up (2i, 2i+1), the odd one gives its block to the even one first
 *   and gets everything back last (pat_fold_*).  New rank i stands for the contiguous
 *   original ranks pat_fold_first(i) …, so every group of new ranks is a contiguous range
 *   of blocks.
 * Steps: in step k (0 <= k < lg p') new rank i exchanges the blocks of its aligned group of
 *   2^k new ranks with new rank i ^ 2^k (pat_rd_*); after lg p' steps all hold all.
 * Rounds: lg p'; the 2r paired ranks + 2 (removed odd ranks 2 in all).
 * Bytes sent per rank: ≈ n(p'-1)/p' (n = P·B gathered bytes); paired even ranks + n - B,
 *   removed odd ranks B.
 * Restrictions: none — any P, any count.  The v form (allgatherv) is served: a range of
 *   blocks goes as one message per non-empty block (displacements are each rank's own, so
 *   only the blocks are agreed on).
 * Scratch: none (each step reads the blocks it holds, writes the partner's: disjoint).
 * Cost: P = 2^k: T = lg P·α + ((P-1)/P)nβ;
 *       else:   T = (lg p' + 2)α + (2 - 1/p')nβ for the paired ranks (the last step of the
 *               fold moves n).
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_colls.h"

/* The original ranks of the new-rank group first … first+n-1. */
static void group_ranks(int first, int n, int p, int *lo, int *hi) {
    *lo = pat_fold_first(first, p);
    *hi = pat_fold_first(first + n, p);
}

static void doubling(collie_schedule *s, const collie_coll_args *a, int newrank, bool from_send) {
    int p = a->size, steps = pat_log2_floor(p);
    for (int k = 0; k < steps; k++) {
        int partner = pat_rd_partner(newrank, k), f, n, lo, hi;
        int peer = pat_fold_oldrank(partner, p);
        if (k > 0 || !from_send)
            sched_round_begin(s);
        pat_rd_held(newrank, k, &f, &n);
        group_ranks(f, n, p, &lo, &hi);
        if (k == 0 && from_send)   /* an unpaired rank's own block, copied to RECV meanwhile */
            cs_put(s, peer, sched_at(SBUF_SEND, 0), cs_recv_len(a, a->rank));
        else
            cs_put_ranks(s, a, peer, lo, hi);
        pat_rd_held(partner, k, &f, &n);
        group_ranks(f, n, p, &lo, &hi);
        cs_recv_ranks(s, a, peer, lo, hi);
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank, partner = pat_fold_partner(r, p);
    int newrank = pat_fold_newrank(r, p);
    sched_round_begin(s);
    if (!a->in_place)
        sched_copy(s, sched_at(SBUF_RECV, cs_recv_off(a, r)), sched_at(SBUF_SEND, 0),
                   cs_recv_len(a, r));
    if (partner >= 0 && newrank < 0)         /* removed odd rank: hand over the own block */
        cs_put(s, partner, a->in_place ? sched_at(SBUF_RECV, cs_recv_off(a, r))
                                       : sched_at(SBUF_SEND, 0),
               cs_recv_len(a, r));
    else if (partner >= 0)
        cs_recv_ranks(s, a, partner, partner, partner + 1);
    if (newrank >= 0)
        doubling(s, a, newrank, partner < 0 && !a->in_place);
    if (partner < 0)
        return;
    sched_round_begin(s);                    /* everything but the odd rank's own block */
    int odd = newrank >= 0 ? partner : r;
    if (newrank >= 0) {
        cs_put_ranks(s, a, partner, 0, odd);
        cs_put_ranks(s, a, partner, odd + 1, p);
    } else {
        cs_recv_ranks(s, a, partner, 0, odd);
        cs_recv_ranks(s, a, partner, odd + 1, p);
    }
}

const collie_algorithm collie_algo_allgather_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = COLL_ALLGATHER,
    .needs = 0,
    .summary = "recursive doubling allgather, lg P steps (Thakur et al. 2005); P != 2^k "
               "folded as Rabenseifner 2004 Fig. 2; short/medium messages; allgatherv too",
    .accepts = NULL,
    .build = build,
};
