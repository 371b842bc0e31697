/*
 * recursive_doubling.c — allreduce by recursive distance doubling.
 *
 * Source: Rabenseifner 2004, §3.4 (Recursive Doubling).  Non-powers-of-two as the design
 *   map says ("fold the extra ranks in first, send them the result last"), with the
 *   pairing of §3.5 / Fig. 2: p' = 2^⌊lg P⌋, r = P - p'; the first 2r ranks pair up, the
 *   odd rank sends its input to the even one and gets the result back at the end.
 * Steps: in step k (0 <= k < lg p') new rank i exchanges its whole intermediate vector
 *   with new rank i ^ 2^k and both compute lower ∘ higher.
 * Rounds: lg p' for every rank; the 2r paired ranks + 2 (odd: 2 rounds in all).
 * Bytes sent per rank: n·lg p'; paired even ranks + n, removed odd ranks n in all.
 * Restrictions: none — any P, any op.  Non-commutative ops work: each new rank stands for
 *   a contiguous range of original ranks and both partners compute the same 2-source
 *   node (lower range first), so every rank holds the same expression (bitwise identical).
 * Scratch: n bytes (the intermediate vector alternates between TMP and RECV so that no
 *   round reads what it writes); in place with lg p' odd costs one local copy more.
 * Cost (§3.1 model, n bytes): T = lg p'·(α + nβ + nγ)
 *                                 + [P ≠ 2^k]·(2α_uni + 2nβ_uni + nγ)
 *   (the paper's bound: ⌈lg P⌉(α + nβ + nγ) + [P ≠ 2^k](α_uni + nβ_uni)).
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"

/* The buffer holding the intermediate vector after step k of nsteps: the last step writes
 * SBUF_RECV, the steps before alternate with SBUF_TMP. */
static int acc_buf(int step, int nsteps) {
    return (nsteps - step) % 2 == 0 ? SBUF_RECV : SBUF_TMP;
}

static sched_ref acc_ref(collie_schedule *s, int buf, uint64_t bytes) {
    if (buf == SBUF_TMP)
        sched_need_tmp(s, bytes);
    return sched_at(buf, 0);
}

/* A removed odd rank: give its input to rank - 1, get the result from it at the end. */
static void build_removed(collie_schedule *s, const collie_coll_args *a) {
    sched_round_begin(s);
    sched_put(s, a->rank - 1, sched_at(SBUF_SEND, 0), a->bytes);
    sched_round_begin(s);
    sched_recv(s, a->rank - 1, sched_at(SBUF_RECV, 0), a->bytes);
}

/* Where the vector entering step 0 lives: the even rank of a pair reduces its partner's
 * input into it; an unpaired rank reads its input in place, or copies it when the input
 * is the very buffer step 0 writes (in place and acc_buf(1) == RECV). */
static sched_ref fold_in(collie_schedule *s, const collie_coll_args *a, int nsteps) {
    sched_ref send = sched_at(SBUF_SEND, 0);
    if (pat_fold_partner(a->rank, a->size) >= 0) {
        sched_ref acc = acc_ref(s, acc_buf(0, nsteps), a->bytes);
        sched_round_begin(s);
        sched_recv_reduce(s, a->rank + 1, acc, send, false, a->bytes);
        return acc;
    }
    if (a->in_place && acc_buf(1, nsteps) == SBUF_RECV) {
        sched_ref acc = acc_ref(s, SBUF_TMP, a->bytes);
        sched_round_begin(s);
        sched_copy(s, acc, send, a->bytes);
        return acc;
    }
    return send;
}

/* Step k: send the intermediate vector to the partner, combine lower ∘ higher. */
static sched_ref exchange(collie_schedule *s, const collie_coll_args *a, int newrank, int k,
                          int nsteps, sched_ref acc) {
    int partner = pat_fold_oldrank(pat_hd_partner(newrank, k), a->size);
    bool partner_lower = (newrank & (1 << k)) != 0;
    sched_ref dst = acc_ref(s, acc_buf(k + 1, nsteps), a->bytes);
    sched_round_begin(s);
    sched_put(s, partner, acc, a->bytes);
    sched_recv_reduce(s, partner, dst, acc, partner_lower, a->bytes);
    return dst;
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    int newrank = pat_fold_newrank(a->rank, a->size);
    if (newrank < 0) {
        build_removed(s, a);
        return;
    }
    int nsteps = pat_log2_floor(a->size);
    sched_ref acc = fold_in(s, a, nsteps);
    for (int k = 0; k < nsteps; k++)
        acc = exchange(s, a, newrank, k, nsteps, acc);
    if (pat_fold_partner(a->rank, a->size) >= 0) {
        sched_round_begin(s);
        sched_put(s, a->rank + 1, acc, a->bytes);
    }
}

const collie_algorithm collie_algo_allreduce_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "recursive distance doubling, whole vector each step (Rabenseifner §3.4); "
               "short vectors",
    .accepts = NULL,
    .build = build,
};
