/*
 * bruck.c — allgather by Bruck's concatenation algorithm (radix 2).
 *
 * Source: Bruck, Ho, Kipnis, Upfal & Weathersby 1997, "Efficient algorithms for all-to-all
 *   communications in multiport message-passing systems" (IEEE TPDS 8(11)), the
 *   concatenation algorithm with one port; Thakur, Rabenseifner & Gropp 2005 (IJHPCA
 *   19(1)), the allgather section (MPICH's short-message allgather for P != 2^k).
 *   A work array in TMP whose slot i holds the block of rank (rank + i) mod P starts with
 *   the own block; in step k (0 <= k < ⌈lg P⌉) a rank sends its first min(2^k, P - 2^k)
 *   slots to rank - 2^k and receives as many into slots 2^k … from rank + 2^k
 *   (pat_bruck_ag_*).  A last local round rotates the slots into place: slot i to block
 *   (rank + i) mod P of RECV (two copies).
 * Rounds: ⌈lg P⌉ communication rounds + 1 local round.
 * Bytes sent per rank: n·(P-1)/P (n = P·B gathered bytes); copies n.
 * Restrictions: any P, any count; block form only (declines allgatherv: the concatenated
 *   messages need equal blocks).  For short messages: ⌈lg P⌉ messages for any P, at the
 *   price of the final rotation.
 * Scratch: P·B.
 * Cost: T = ⌈lg P⌉α + ((P-1)/P)nβ + n·copy.
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns_colls.h"

static bool accepts(const collie_coll_args *a, const char **why) {
    if (cs_is_v(a)) {
        *why = "Bruck's concatenated messages need equal blocks (allgatherv: use ring or "
               "recursive_doubling)";
        return false;
    }
    return true;
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    uint64_t B = a->bytes;
    sched_ref own = a->in_place ? sched_at(SBUF_RECV, (uint64_t)r * B) : sched_at(SBUF_SEND, 0);
    if (B == 0)
        return;
    sched_round_begin(s);
    if (!a->in_place)
        sched_copy(s, sched_at(SBUF_RECV, (uint64_t)r * B), own, B);
    if (p == 1)
        return;
    sched_need_tmp(s, (uint64_t)p * B);
    sched_copy(s, sched_at(SBUF_TMP, 0), own, B);
    for (int k = 0; k < pat_bruck_ag_steps(p); k++) {
        uint64_t bytes = (uint64_t)pat_bruck_ag_count(k, p) * B;
        if (k > 0)                /* step 0 sends the own block from where it was */
            sched_round_begin(s);
        sched_put(s, pat_bruck_ag_to(r, k, p), k == 0 ? own : sched_at(SBUF_TMP, 0), bytes);
        sched_recv(s, pat_bruck_ag_from(r, k, p), sched_at(SBUF_TMP, (uint64_t)B << k), bytes);
    }
    sched_round_begin(s);         /* slots 1 … P-r-1 are ranks r+1 …, the rest 0 … r-1 */
    uint64_t upper = (uint64_t)(p - r - 1) * B;
    sched_copy(s, sched_at(SBUF_RECV, (uint64_t)(r + 1) * B), sched_at(SBUF_TMP, B), upper);
    sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_TMP, B + upper), (uint64_t)r * B);
}

const collie_algorithm collie_algo_allgather_bruck = {
    .name = "bruck",
    .coll = COLL_ALLGATHER,
    .needs = 0,
    .summary = "Bruck concatenation allgather, ceil(lg P) steps for any P + a local "
               "rotation (Bruck et al. 1997); short messages; block form only",
    .accepts = accepts,
    .build = build,
};
