/*
 * recursive_doubling.c — exscan (exclusive prefix reduction) by recursive doubling.
 *
 * Source: as scan/recursive_doubling.c (MPICH's MPI_Exscan; recursive doubling of
 *   Thakur, Rabenseifner & Gropp 2005, IJHPCA 19(1)): the same exchanges of aligned-group
 *   parts (pat_scan_partner), but the prefix starts empty: the first lower partner's part
 *   becomes it, later lower partners' parts go in front.  Rank r ends with
 *   x_0 ∘ … ∘ x_{r-1}; rank 0 never has a lower partner, its RECV stays untouched.
 *   Builder: scan_doubling.c.
 * Rounds: ⌈lg P⌉ communication rounds, each but a rank's last followed by a local round;
 *   in place + 1 local copy first.
 * Bytes sent per rank: ≤ ⌈lg P⌉·n (n = vector bytes).
 * Restrictions: none — any P, any count, any op (lower ∘ higher, each x_i once).
 * Scratch: 2n.
 * Cost: T = ⌈lg P⌉(α + nβ + 2nγ).
 */
#include "algorithms/algorithm.h"
#include "algorithms/scan_doubling.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    scan_doubling_build(s, a, true);
}

const collie_algorithm collie_algo_exscan_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = COLL_EXSCAN,
    .needs = 0,
    .summary = "recursive doubling exclusive prefix, ceil(lg P) steps (MPICH's MPI_Exscan); "
               "any op in rank order",
    .accepts = NULL,
    .build = build,
};
