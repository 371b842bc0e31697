/*
 * bruck.c — alltoall by Bruck's index algorithm (radix 2), for short messages.
 *
 * Source: Bruck, Ho, Kipnis, Upfal & Weathersby 1997, "Efficient algorithms for all-to-all
 *   communications in multiport message-passing systems" (IEEE TPDS 8(11)), the index
 *   algorithm with r = 2 and one port; Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)),
 *   the all-to-all section (MPICH's short-message alltoall).
 *   Phase 1: slot i of rank r holds r's block for rank (r + i) mod P (the paper's local
 *   rotation; here slots are read straight from SEND until first moved).  Phase 2: in step
 *   k (0 <= k < ⌈lg P⌉) the slots with bit k set go, packed in increasing order, to rank
 *   r + 2^k, and the same slots come from rank r - 2^k (pat_bruck_a2a_*).  Phase 3: slot i
 *   now holds the block from rank (r - i) mod P: the inverse rotation copies it to RECV.
 * Data movement: a step packs its slots into TMP's out area (merged copies) and receives
 *   into the in area; a slot received in step k is read from there by the next step's
 *   pack if that step sends it again, else copied back to its slot (in the same local
 *   round), so each step is one local and one communication round.
 * Rounds: ⌈lg P⌉ communication rounds + ⌈lg P⌉ + 1 local rounds.
 * Bytes sent per rank: ≈ (n/2)⌈lg P⌉ (n = P·B): each step ≤ ⌈P/2⌉ blocks; copies about
 *   as much plus n.
 * Restrictions: any P, any count; block form only (declines alltoallv: the packed
 *   messages need equal blocks).  Short messages: ⌈lg P⌉ messages instead of P - 1, each
 *   block travels up to ⌈lg P⌉ times.
 * Scratch: (P + 2⌈P/2⌉)·B.
 * Cost: T = ⌈lg P⌉(α + ⌈P/2⌉Bβ + 2⌈P/2⌉B·copy) + n·copy.
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns_colls.h"

typedef struct bk {
    const collie_coll_args *a;
    uint64_t B, out_off, in_off;  /* TMP: slots 0 … P-1, then the out and in areas */
    int steps;
} bk;

static bool accepts(const collie_coll_args *a, const char **why) {
    if (cs_is_v(a)) {
        *why = "Bruck's packed messages need equal blocks (alltoallv: use pairwise)";
        return false;
    }
    return true;
}

/* Where slot i's current value is at the start of step k (k == steps: at the end). */
static sched_ref loc(const bk *g, int i, int k) {
    int last = -1;
    for (int b = k - 1; b >= 0 && last < 0; b--)
        if ((i >> b) & 1)
            last = b;
    if (last < 0) {                              /* not moved yet: the input */
        int p = g->a->size;
        uint64_t off = (uint64_t)((g->a->rank + i) % p) * g->B;
        return sched_at(g->a->in_place ? SBUF_RECV : SBUF_SEND, off);
    }
    if (last == k - 1)                           /* arrived in the previous step */
        return sched_at(SBUF_TMP, g->in_off + (uint64_t)pat_bruck_a2a_pos(i, last) * g->B);
    return sched_at(SBUF_TMP, (uint64_t)i * g->B);
}

/* The local round before step k: pack the slots to send, put back the ones that arrived
 * in step k-1 and stay. */
static void pack(collie_schedule *s, const bk *g, int k) {
    int p = g->a->size;
    cs_copier c;
    cs_copy_init(&c, s);
    sched_round_begin(s);
    for (int i = 1; i < p; i++)
        if ((i >> k) & 1)
            cs_copy(&c, sched_at(SBUF_TMP, g->out_off + (uint64_t)pat_bruck_a2a_pos(i, k) * g->B),
                    loc(g, i, k), g->B);
    cs_copy_flush(&c);
    for (int i = 1; k > 0 && i < p; i++)
        if (((i >> (k - 1)) & 1) && !((i >> k) & 1))
            cs_copy(&c, sched_at(SBUF_TMP, (uint64_t)i * g->B), loc(g, i, k), g->B);
    cs_copy_flush(&c);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank;
    bk g = { a, a->bytes, 0, 0, pat_bruck_a2a_steps(p) };
    if (g.B == 0)
        return;
    uint64_t h = (uint64_t)pat_bruck_a2a_maxslots(p) * g.B;
    g.out_off = (uint64_t)p * g.B;
    g.in_off = g.out_off + h;
    if (p > 1)
        sched_need_tmp(s, g.in_off + h);
    for (int k = 0; k < g.steps; k++) {
        uint64_t bytes = (uint64_t)pat_bruck_a2a_nslots(k, p) * g.B;
        pack(s, &g, k);
        sched_round_begin(s);
        sched_put(s, pat_bruck_a2a_to(r, k, p), sched_at(SBUF_TMP, g.out_off), bytes);
        sched_recv(s, pat_bruck_a2a_from(r, k, p), sched_at(SBUF_TMP, g.in_off), bytes);
    }
    sched_round_begin(s);               /* slot i came from rank r - i */
    cs_copier c;
    cs_copy_init(&c, s);
    for (int j = 0; j < p; j++) {
        int i = (r - j + p) % p;
        cs_copy(&c, sched_at(SBUF_RECV, (uint64_t)j * g.B), loc(&g, i, g.steps), g.B);
    }
    cs_copy_flush(&c);
}

const collie_algorithm collie_algo_alltoall_bruck = {
    .name = "bruck",
    .coll = COLL_ALLTOALL,
    .needs = 0,
    .summary = "Bruck index alltoall, ceil(lg P) steps of about P/2 packed blocks (Bruck et "
               "al. 1997); short messages; block form only",
    .accepts = accepts,
    .build = build,
};
