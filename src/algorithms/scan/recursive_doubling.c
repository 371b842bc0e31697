/*
 * recursive_doubling.c — scan (inclusive prefix reduction) by recursive doubling.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)) describe recursive doubling
 *   for allgather and allreduce; MPICH's MPI_Scan applies it to the prefix: in step k
 *   (0 <= k < ⌈lg P⌉) rank r exchanges the combination of its aligned group of 2^k ranks
 *   (`part`) with rank r ^ 2^k (when < P, pat_scan_partner); a lower partner's part is
 *   put in front of `part` and of the prefix, a higher partner's after `part`.  After
 *   ⌈lg P⌉ steps the prefix is x_0 ∘ … ∘ x_r.  Builder: scan_doubling.c.
 * Rounds: ⌈lg P⌉ communication rounds, each but a rank's last followed by a local round
 *   (the received part has two uses); in place + 1 local copy first.
 * Bytes sent per rank: ≤ ⌈lg P⌉·n (n = vector bytes); a higher rank's part goes to a
 *   lower one only while the lower one still needs it.
 * Restrictions: none — any P, any count, any op: every combination is lower ∘ higher
 *   over adjacent rank ranges, each x_i exactly once (the prefixes of different ranks are
 *   different expressions, as they must be).
 * Scratch: 2n (the part and the received part).
 * Cost: T = ⌈lg P⌉(α + nβ + 2nγ).
 */
#include "algorithms/algorithm.h"
#include "algorithms/scan_doubling.h"

static void build(collie_schedule *s, const collie_coll_args *a) {
    scan_doubling_build(s, a, false);
}

const collie_algorithm collie_algo_scan_recursive_doubling = {
    .name = "recursive_doubling",
    .coll = COLL_SCAN,
    .needs = 0,
    .summary = "recursive doubling prefix, ceil(lg P) steps (MPICH's MPI_Scan; Thakur et al. "
               "2005); any op in rank order",
    .accepts = NULL,
    .build = build,
};
