/*
 * pairwise_exchange.c — allreduce by the Pairwise Exchange Algorithm (butterfly).
 *
 * Source: End, Yahyapour, Simmendinger, Alrutz 2016, §III-A and Fig. 1 (right): the
 *   butterfly of Brooks 1986 for P = 2^k (step j: rank r exchanges with r ^ 2^j); for
 *   P = 2^k + q the q "leftover" ranks 2^k … 2^k+q-1 first hand their data to ranks
 *   0 … q-1, wait while the 2^k ranks run the butterfly, and get the result at the end.
 *   The "virtual process" butterfly of Fig. 1 (left) is not offered: it combines the data
 *   of ranks 0 … q-1 twice, wrong for non-idempotent ops (§III-A).
 * How it differs from recursive_doubling.c (Rabenseifner §3.4/§3.5): the butterfly steps
 *   are the same exchange; the fold differs.  recursive_doubling pairs ranks (2i, 2i+1),
 *   which keeps every new rank a contiguous rank range.  Here, as in the paper, leftover
 *   rank 2^k+i folds into rank i, which is not contiguous.  Commutative ops: rank i
 *   combines x_i ∘ x_{2^k+i} and the butterfly runs on one vector (the paper's scheme).
 *   Non-commutative ops (a case the paper leaves open; solved here): rank i keeps the
 *   leftover data apart as a second partial H.  Before step j the block of 2^j ranks a
 *   rank stands for covers ranks [b, b+2^j) in L and the leftovers [2^k+b, 2^k+min(b+2^j,
 *   q)) in H (empty when b >= q); both partials are exchanged and combined lower ∘ higher,
 *   so L and H are contiguous rank ranges; at the end RECV = L ∘ H = x_0 ∘ … ∘ x_{P-1}.
 * Rounds: ⌊lg P⌋ + 2 for P ≠ 2^k (leftover ranks 2), lg P for P = 2^k; non-commutative
 *   with q > 0: one more local round (L ∘ H) on the 2^k butterfly ranks.
 * Bytes sent per rank: n per butterfly step (2n in steps whose block carries an H, i.e.
 *   non-commutative ops with blocks starting below q), + n for ranks 0 … q-1 (the result)
 *   and n for leftover ranks (their input).
 * Restrictions: none — any P, any op.  Bitwise identical: both partners of a step build
 *   the same 2-source node (lower block first), the L ∘ H node is the same on every rank,
 *   and leftover ranks get a copy.
 * Scratch: 2n (commutative) or 4n (non-commutative, q > 0): L and H alternate between two
 *   slots so that no round reads what it writes.
 * Cost (§3.1 model, n bytes): T = lg p'·(α + nβ + nγ) + [q > 0]·(2α_uni + 2nβ_uni + nγ)
 *   for commutative ops; non-commutative with q > 0: up to lg p'·(α + 2nβ + 2nγ)
 *   + 2α_uni + 2nβ_uni + nγ.
 */
#include "algorithms/algorithm.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_butterfly.h"

/* The running partials: L (the ranks' own block) and H (leftover data, non-commutative
 * only); each lives in SBUF_SEND or in one of two TMP slots. */
typedef struct pe_state {
    sched_ref l, h;
    int lslot, hslot;       /* current TMP slot (0/1), -1 while in SEND or absent */
    bool has_h;
} pe_state;

static sched_ref tmp_slot(collie_schedule *s, const collie_coll_args *a, int slot) {
    sched_need_tmp(s, (uint64_t)(slot + 1) * a->bytes);
    return sched_at(SBUF_TMP, (uint64_t)slot * a->bytes);
}

static bool carries_leftovers(const collie_coll_args *a) {
    return !a->commutative && pbf_pe_leftover(a->size) > 0;
}

/* Round 0 on ranks 0 … q-1: take the leftover rank's input (folded or kept apart). */
static void fold_in(collie_schedule *s, const collie_coll_args *a, pe_state *st) {
    int partner = pbf_pe_fold_partner(a->rank, a->size);
    sched_round_begin(s);
    if (carries_leftovers(a)) {
        st->h = tmp_slot(s, a, 2);
        st->hslot = 0;
        st->has_h = true;
        sched_recv(s, partner, st->h, a->bytes);
        return;
    }
    st->l = tmp_slot(s, a, 0);
    st->lslot = 0;
    sched_recv_reduce(s, partner, st->l, sched_at(SBUF_SEND, 0), false, a->bytes);
}

/* Where step j writes L: RECV after the last step unless L ∘ H follows or the step reads
 * the input in place; else the free TMP slot. */
static sched_ref l_target(collie_schedule *s, const collie_coll_args *a, pe_state *st,
                          bool last) {
    bool reads_send = st->lslot < 0;
    if (last && !carries_leftovers(a) && !(reads_send && a->in_place)) {
        st->lslot = -1;
        return sched_at(SBUF_RECV, 0);
    }
    st->lslot = st->lslot == 0 ? 1 : 0;
    return tmp_slot(s, a, st->lslot);
}

/* The H part of step j: combine or take the partner's H (sent after its L). */
static void exchange_h(collie_schedule *s, const collie_coll_args *a, pe_state *st,
                       int partner, bool partner_lower, bool partner_has_h) {
    if (!partner_has_h)
        return;
    int slot = st->hslot == 0 ? 1 : 0;
    sched_ref dst = tmp_slot(s, a, 2 + slot);
    if (st->has_h)
        sched_recv_reduce(s, partner, dst, st->h, partner_lower, a->bytes);
    else
        sched_recv(s, partner, dst, a->bytes);
    st->h = dst;
    st->hslot = slot;
    st->has_h = true;
}

/* Butterfly step j: send L (and H), combine lower ∘ higher. */
static void step(collie_schedule *s, const collie_coll_args *a, pe_state *st, int j,
                 bool last) {
    int partner = pat_hd_partner(a->rank, j);
    bool partner_lower = partner < a->rank;
    bool partner_has_h = carries_leftovers(a) && pbf_pe_block_has_leftover(partner, j, a->size);
    sched_round_begin(s);
    sched_put(s, partner, st->l, a->bytes);
    if (st->has_h)
        sched_put(s, partner, st->h, a->bytes);
    sched_ref old = st->l, dst = l_target(s, a, st, last);
    sched_recv_reduce(s, partner, dst, old, partner_lower, a->bytes);
    st->l = dst;
    exchange_h(s, a, st, partner, partner_lower, partner_has_h);
}

/* After the butterfly: RECV = L ∘ H (non-commutative), or L to RECV (in place, lg p' = 1
 * and nothing folded: the step could not write RECV while reading it). */
static void finish(collie_schedule *s, const collie_coll_args *a, pe_state *st) {
    if (st->has_h) {
        sched_ref srcs[2] = { st->l, st->h };
        sched_round_begin(s);
        sched_reduce(s, sched_at(SBUF_RECV, 0), srcs, 2, a->bytes);
    } else if (st->lslot >= 0) {
        sched_round_begin(s);
        sched_copy(s, sched_at(SBUF_RECV, 0), st->l, a->bytes);
    }
}

static void build_butterfly_rank(collie_schedule *s, const collie_coll_args *a) {
    pe_state st = { sched_at(SBUF_SEND, 0), sched_at(SBUF_SEND, 0), -1, -1, false };
    int partner = pbf_pe_fold_partner(a->rank, a->size);
    if (partner >= 0)
        fold_in(s, a, &st);
    int nsteps = pat_log2_floor(a->size);
    for (int j = 0; j < nsteps; j++)
        step(s, a, &st, j, j == nsteps - 1);
    finish(s, a, &st);
    if (partner >= 0) {
        sched_round_begin(s);
        sched_put(s, partner, sched_at(SBUF_RECV, 0), a->bytes);
    }
}

/* A leftover rank: give the input away, get the result at the end. */
static void build_leftover_rank(collie_schedule *s, const collie_coll_args *a) {
    int partner = pbf_pe_fold_partner(a->rank, a->size);
    sched_round_begin(s);
    sched_put(s, partner, sched_at(SBUF_SEND, 0), a->bytes);
    sched_round_begin(s);
    sched_recv(s, partner, sched_at(SBUF_RECV, 0), a->bytes);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    if (a->rank >= pat_pow2_floor(a->size))
        build_leftover_rank(s, a);
    else
        build_butterfly_rank(s, a);
}

const collie_algorithm collie_algo_allreduce_pairwise_exchange = {
    .name = "pairwise_exchange",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "butterfly, leftover ranks 2^k+i fold into rank i (End 2016 §III-A); "
               "short vectors",
    .accepts = NULL,
    .build = build,
};
