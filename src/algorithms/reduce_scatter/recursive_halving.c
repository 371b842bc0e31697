/*
 * recursive_halving.c — reduce_scatter by recursive vector halving, any P.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the recursive-halving
 *   reduce-scatter of the reduce-scatter section (MPICH's short-message reduce_scatter for
 *   commutative ops); the halving is Rabenseifner 2004 §3.5's first phase, here with the
 *   distance halving so that rank i ends with block i.  Non-powers of two as in MPICH and
 *   Rabenseifner Fig. 2: p' = 2^⌊lg P⌋, r = P - p'; among the first 2r ranks each odd rank
 *   sends its whole input to the even one, which reduces it and stands for both
 *   (pat_fold_*: new rank i stands for the contiguous ranks pat_fold_first(i) …), and
 *   gets its block back at the end.
 * Steps: in step k (0 <= k < lg p') new rank i is responsible for the blocks of its
 *   aligned group of p'/2^k new ranks; it sends the half without i to new rank
 *   i ^ (p'/2^(k+1)) and reduces the half it keeps with the one received (pat_rh_*).  The
 *   last step sends the partner's blocks one original rank at a time, so that the own
 *   block is reduced straight into RECV.
 * Rounds: lg p'; the 2r paired ranks + 2 (removed odd ranks 2 in all).
 * Bytes sent per rank: ≈ n(p'-1)/p' (n = P·B the input); paired even ranks + B, removed
 *   odd ranks n.
 * Restrictions: commutative operations (partners combine blocks of ranks that are not
 *   adjacent).  Any P, any count; the v form (reduce_scatter with unequal counts) is
 *   served: the blocks of a range of ranks follow each other in every rank's input.
 *   Every block is reduced on one rank only.
 * Scratch: n (the partial input).
 * Cost: P = 2^k: T = lg P·α + ((P-1)/P)n(β + γ);
 *       else:   T = (lg p' + 2)α + (1 + (p'-1)/p')n(β + γ) + Bβ on the paired ranks.
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_colls.h"

typedef struct range {
    uint64_t off, bytes;
} range;

/* The input bytes of the new-rank group first … first+n-1. */
static range group_bytes(const collie_coll_args *a, int first, int n) {
    uint64_t lo = cs_send_off(a, pat_fold_first(first, a->size));
    uint64_t hi = cs_send_off(a, pat_fold_first(first + n, a->size));
    range g = { lo, hi - lo };
    return g;
}

/* dst = in ∘ src (partner lower) or src ∘ in, nothing for 0 bytes. */
static void recv_reduce(collie_schedule *s, int peer, sched_ref dst, sched_ref src,
                        bool peer_lower, uint64_t bytes) {
    if (bytes > 0)
        sched_recv_reduce(s, peer, dst, src, peer_lower, bytes);
}

static sched_ref at(int buf, uint64_t off) { return sched_at(buf, off); }

/* One halving step: acc is SEND before the first (unpaired ranks), TMP after. */
static void step(collie_schedule *s, const collie_coll_args *a, int nr, int k, int L, int acc) {
    int p2 = 1 << L, q = pat_rh_partner(nr, k, p2), peer = pat_fold_oldrank(q, a->size);
    int sf, sn, kf, kn;
    pat_rh_sent(nr, k, p2, &sf, &sn);
    pat_rh_kept(nr, k, p2, &kf, &kn);
    sched_round_begin(s);
    if (k < L - 1) {
        range out = group_bytes(a, sf, sn), keep = group_bytes(a, kf, kn);
        cs_put(s, peer, at(acc, out.off), out.bytes);
        recv_reduce(s, peer, at(SBUF_TMP, keep.off), at(acc, keep.off), q < nr, keep.bytes);
        return;
    }
    /* last step: one message per original rank of the group */
    for (int j = pat_fold_first(sf, a->size); j < pat_fold_first(sf + 1, a->size); j++)
        cs_put(s, peer, at(acc, cs_send_off(a, j)), cs_send_len(a, j));
    for (int j = pat_fold_first(kf, a->size); j < pat_fold_first(kf + 1, a->size); j++) {
        bool direct = j == a->rank && !a->in_place;
        sched_ref dst = direct ? at(SBUF_RECV, 0) : at(SBUF_TMP, cs_send_off(a, j));
        recv_reduce(s, peer, dst, at(acc, cs_send_off(a, j)), q < nr, cs_send_len(a, j));
    }
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    uint64_t total = cs_send_off(a, p), own = cs_send_len(a, r);
    if (total == 0)
        return;
    if (p == 1) {
        if (!a->in_place)
            sched_copy(s, at(SBUF_RECV, 0), at(SBUF_SEND, 0), own);
        return;
    }
    int partner = pat_fold_partner(r, p), nr = pat_fold_newrank(r, p);
    sched_round_begin(s);
    if (nr < 0) {                           /* removed odd rank */
        sched_put(s, partner, at(SBUF_SEND, 0), total);
        sched_round_begin(s);
        cs_recv(s, partner, at(SBUF_RECV, 0), own);
        return;
    }
    sched_need_tmp(s, total);
    int acc = SBUF_SEND;
    if (partner >= 0) {                     /* the even rank takes its partner's input */
        sched_recv_reduce(s, partner, at(SBUF_TMP, 0), at(SBUF_SEND, 0), false, total);
        acc = SBUF_TMP;
    }
    int L = pat_log2_floor(p);
    for (int k = 0; k < L; k++) {
        step(s, a, nr, k, L, acc);
        acc = SBUF_TMP;
    }
    sched_round_begin(s);
    if (partner >= 0)
        cs_put(s, partner, at(SBUF_TMP, cs_send_off(a, partner)), cs_send_len(a, partner));
    if (a->in_place)
        sched_copy(s, at(SBUF_RECV, 0), at(SBUF_TMP, cs_send_off(a, r)), own);
}

const collie_algorithm collie_algo_reduce_scatter_recursive_halving = {
    .name = "recursive_halving",
    .coll = COLL_REDUCE_SCATTER,
    .needs = ALGO_NEEDS_COMMUTATIVE,
    .summary = "recursive vector halving, lg P steps (Thakur et al. 2005; Rabenseifner 2004 "
               "§3.5); P != 2^k folded; commutative ops; unequal counts too",
    .accepts = NULL,
    .build = build,
};
