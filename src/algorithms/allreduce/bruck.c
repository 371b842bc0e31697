/*
 * bruck.c — allreduce by Bruck & Ho's n-port global combine.
 *
 * Source: End et al. 2016 §III-C, eqs. (15)–(24), Fig. 4 (after Bruck & Ho 1993).
 *   P - 1 = (α_{k-1} … α_0) in base n+1; k = ⌈log_{n+1} P⌉ rounds.  Before round t rank p
 *   holds S[1] = x_p … x_{p+c} and S[0] = x_{p+1} … x_{p+c} (cyclic, c = c_t, c_0 = 0); with
 *   α = α_{k-1-t} it sends S[1] to the α ranks p - m(c+1) (m = 1 … α) and S[0] to the n - α
 *   ranks p - α(c+1) - m·c (m = 1 … n-α; none while c = 0), receives the mirror images
 *   from p + …, and c becomes (n+1)c + α (eqs. (16)–(23); index math in
 *   patterns_butterfly.c, pbf_bruck_*).  After k rounds c = P - 1: every rank has all data.
 * Association (a case the paper leaves open; solved here): combined as in the paper, rank
 *   p's result is x_p ∘ … ∘ x_{p-1} cyclically, a different expression on every rank and
 *   out of rank order.  Here S[0] and S[1] are held and sent as their canonical pieces
 *   (canonical_pieces.h: the nodes of one fixed binary tree over ranks 0 … P-1 that
 *   tile the range, a wrapping range split at P-1 | 0), and two sibling nodes are
 *   combined (lower ∘ higher) into their parent as soon as a rank holds both; the
 *   result is the root.  So the message pattern is the paper's, the message contents
 *   are the pieces, and every rank evaluates the same tree in rank order.
 * Rounds: k = ⌈log_{n+1} P⌉ communication rounds, each preceded by a local round gathering
 *   the pieces to send (short vectors; none when they are consecutive already) and followed
 *   by up to ⌈lg P⌉ local merge rounds (the last merge, the root, writes RECV).
 * Messages: vectors up to CP_PACK_MAX_BYTES (4 KiB) send one message per peer and round,
 *   as in the paper, carrying the range's ≤ 2⌈lg P⌉ pieces; longer vectors one PUT per
 *   piece (no gathering copy).
 * Bytes sent per rank: per round and peer one range as ≤ 2⌈lg P⌉ pieces of n bytes; in
 *   total ≤ k·n_ports·2⌈lg P⌉·n (n = vector bytes; exactly n·pieces).
 * Restrictions: none — any P, any n >= 1 (parameter "n", default 5, the value End et al.
 *   used in §IV), any op (exactly once, rank order, bitwise identical).  Scratch is one n
 *   bytes slot per node a rank holds, receives or gathers (< 4P), so it declines vectors
 *   with 4·P·bytes > 256 MiB: it is a short-vector algorithm.
 * Cost (§3.1 model, π ≤ 2⌈lg P⌉ pieces per range, vector n bytes, short vectors):
 *   T ≈ ⌈log_{n+1} P⌉·(n_ports·α + π·n_ports·n(β + copy)) + (P - 1)·nγ_merge — each rank
 *   builds ≤ P - 1 tree nodes; long vectors pay π·n_ports·α per round instead of the copy.
 */
#include "algorithms/algorithm.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns_butterfly.h"

#define BRUCK_DEFAULT_PORTS 5
#define BRUCK_MAX_TMP (256ull << 20)

static int ports(const collie_coll_args *a) {
    long long n = collie_param(&a->params, "n", BRUCK_DEFAULT_PORTS);
    if (n > a->size - 1)
        n = a->size > 1 ? a->size - 1 : 1;      /* more ports than peers: the rest idle */
    return (int)n;
}

static bool accepts(const collie_coll_args *a, const char **why) {
    if (collie_param(&a->params, "n", BRUCK_DEFAULT_PORTS) < 1) {
        *why = "parameter n (ports per round) must be >= 1";
        return false;
    }
    if ((uint64_t)a->size * 4 * a->bytes > BRUCK_MAX_TMP) {
        *why = "vector too long: needs about 4·P vectors of scratch";
        return false;
    }
    return true;
}

static int wrap(int r, int p) { return ((r % p) + p) % p; }

/* Round t: S[1] / S[0] to the n peers below, the same from the n peers above. */
static void round_t(cp_state *st, const collie_coll_args *a, int n, int t) {
    int p = a->size, alpha = pbf_bruck_digit(n, p, t), c = pbf_bruck_count(n, p, t);
    for (int m = 0; m < n; m++) {
        int len, d = pbf_bruck_peer_of(alpha, c, m, &len);
        if (len > 0)
            cp_send(st, wrap(a->rank - d, p), wrap(a->rank + (m < alpha ? 0 : 1), p), len);
    }
    for (int m = 0; m < n; m++) {
        int len, d = pbf_bruck_peer_of(alpha, c, m, &len);
        int from = wrap(a->rank + d, p);
        if (len > 0)
            cp_recv(st, from, wrap(from + (m < alpha ? 0 : 1), p), len);
    }
    cp_exchange(st);
    cp_merge(st);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return;
    cp_state st;
    if (!cp_init(&st, s, a))
        return;
    if (a->size == 1)
        cp_finish_single(&st);
    int n = ports(a), k = pbf_bruck_rounds(n, a->size);
    for (int t = 0; t < k; t++)
        round_t(&st, a, n, t);
    cp_free(&st);
}

const collie_algorithm collie_algo_allreduce_bruck = {
    .name = "bruck",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "Bruck & Ho n-port global combine, ceil(log_{n+1} P) rounds (End 2016 "
               "§III-C); parameter n = ports (default 5); short vectors",
    .accepts = accepts,
    .build = build,
};
