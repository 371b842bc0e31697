/*
 * dissemination.c — allreduce by dissemination.
 *
 * Source: Hensgen, Finkel & Manber 1988, via End et al. 2016 §III-B (the 1-way case) and
 *   GASPI-SHAN ("Allreduce implementation – Dissemination"): in step t < ⌈lg P⌉ rank i
 *   sends to i + 2^t and receives from i - 2^t (pat_dissemination_*).  What it sends is
 *   everything it knows: the window of ranks i - 2^t + 1 … i (cyclic).  After step t it
 *   knows i - 2^(t+1) + 1 … i; for P ≠ 2^k the last window overlaps what the receiver
 *   already knows — the double counting End §III-B and GASPI-SHAN warn of.
 * Association and double counting (solved here, not in the papers): windows are held
 *   and sent as canonical pieces (canonical_pieces.h: nodes of one fixed binary tree over
 *   ranks 0 … P-1; a wrapping window split at P-1 | 0), two sibling nodes are combined
 *   lower ∘ higher as soon as a rank holds both, and a received piece the rank already
 *   holds is dropped (a node has the same value wherever it was built).  The result is
 *   the root: exactly once, in rank order, the same tree on every rank.  This plays the
 *   role of GASPI-SHAN's re-use of earlier partial results for P ≠ 2^k — the overlap is
 *   still sent but never combined — so the algorithm needs neither an idempotent nor a
 *   commutative op.
 * Rounds: ⌈lg P⌉ communication rounds, each preceded by a local round gathering the pieces
 *   to send (short vectors; none when they are consecutive already) and followed by up to
 *   ⌈lg P⌉ local merge rounds.
 * Messages: one per step for vectors up to CP_PACK_MAX_BYTES (4 KiB), carrying all the
 *   window's pieces (the paper's one message per step); longer vectors one PUT per piece.
 * Bytes sent per rank: step t sends the 2^t-rank window as ≤ 2(t+1) pieces of n bytes.
 * Restrictions: none — any P, any op.  Scratch: one n-byte slot per piece held, received
 *   or gathered (< 4P), so it declines vectors with 4·P·bytes > 256 MiB (short-vector
 *   algorithm).
 * Cost (§3.1 model, vector n bytes, short vectors): T ≈ ⌈lg P⌉·α + Σ_t π_t·n(β + copy) +
 *   (P - 1)·nγ, π_t ≤ 2(t+1) pieces in step t (long vectors: Σ_t π_t·α, no copy); for
 *   P = 2^k the pieces of an aligned window are one node.
 */
#include "algorithms/algorithm.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns.h"

#define DISS_MAX_TMP (256ull << 20)

static bool accepts(const collie_coll_args *a, const char **why) {
    if ((uint64_t)a->size * 4 * a->bytes > DISS_MAX_TMP) {
        *why = "vector too long: needs about 4·P vectors of scratch";
        return false;
    }
    return true;
}

static int wrap(int r, int p) { return ((r % p) + p) % p; }

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    cp_state st;
    if (!cp_init(&st, s, a))
        return;
    if (a->size == 1)
        cp_finish_single(&st);
    int p = a->size, rounds = pat_dissemination_rounds(p);
    for (int t = 0; t < rounds; t++) {
        int w = 1 << t;
        int to = pat_dissemination_to(a->rank, t, p), from = pat_dissemination_from(a->rank, t, p);
        cp_send(&st, to, wrap(a->rank - w + 1, p), w);
        cp_recv(&st, from, wrap(from - w + 1, p), w);
        cp_exchange(&st);
        cp_merge(&st);
    }
    cp_free(&st);
}

const collie_algorithm collie_algo_allreduce_dissemination = {
    .name = "dissemination",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "dissemination, ceil(lg P) rounds to rank + 2^t (Hensgen 1988, GASPI-SHAN); "
               "canonical pieces, any op; short vectors",
    .accepts = accepts,
    .build = build,
};
