/*
 * binomial.c — gather along a binomial tree, any root.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the binomial-tree gather
 *   (MPICH's gather: each process receives its subtree's data from its children, then
 *   sends it all to its parent in one message); the tree is patterns.h's binomial tree
 *   with root rotation (relative rank v = rank - root mod P; the subtree of v is the
 *   relative ranks v … v + pat_binomial_subtree - 1, its children's subtrees follow).
 * Data movement: an inner rank gathers its subtree's blocks in relative order in TMP
 *   (its own block first) and sends them to its parent in one PUT; the root receives each
 *   child's subtree straight into RECV, in two parts when it wraps past rank P-1
 *   (pat_rel_split; the child splits its PUT the same way).
 * Rounds: ⌈lg P⌉ levels; each rank 1 round of receiving (all children at once) and 1 of
 *   sending.
 * Bytes sent per rank: its subtree's blocks (B · subtree size); the root's children
 *   n/2, n/4, … (n = P·B).
 * Restrictions: any P, any root, any count; block form only (declines gatherv: the
 *   inner ranks would need their subtree's counts, which only the root has).
 * Scratch: B · subtree size on inner non-root ranks.
 * Cost: T = ⌈lg P⌉α + ((P-1)/P)nβ (+ B·copy on inner ranks).
 */
#include "algorithms/algorithm.h"
#include "algorithms/colls_sched.h"
#include "algorithms/patterns.h"
#include "algorithms/patterns_colls.h"

static bool accepts(const collie_coll_args *a, const char **why) {
    if (cs_is_v(a)) {
        *why = "inner ranks of the tree would need their subtree's counts (only the root "
               "has gatherv's counts)";
        return false;
    }
    return true;
}

static int rel(int rank, int root, int p) { return (rank - root + p) % p; }

/* Relative ranks v … v+n-1 as an actual rank range in RECV at the root: the part before
 * the wrap, then the part from rank 0. */
static void recv_subtree(collie_schedule *s, const collie_coll_args *a, int child, int v,
                         int n) {
    int p = a->size, first = pat_rel_split(v, n, a->root, p);
    uint64_t B = a->bytes;
    cs_recv(s, child, sched_at(SBUF_RECV, (uint64_t)((v + a->root) % p) * B),
            (uint64_t)first * B);
    cs_recv(s, child, sched_at(SBUF_RECV, 0), (uint64_t)(n - first) * B);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank, root = a->root, v = rel(r, root, p);
    int n = pat_binomial_subtree(r, root, p), nc = pat_binomial_nchildren(r, root, p);
    uint64_t B = a->bytes;
    if (B == 0)
        return;
    sched_round_begin(s);
    if (r == root) {
        if (!a->in_place)
            sched_copy(s, sched_at(SBUF_RECV, (uint64_t)r * B), sched_at(SBUF_SEND, 0), B);
        for (int i = 0; i < nc; i++) {
            int c = pat_binomial_child(r, root, p, i);
            recv_subtree(s, a, c, rel(c, root, p), pat_binomial_subtree(c, root, p));
        }
        return;
    }
    int parent = pat_binomial_parent(r, root, p);
    int first = parent == root ? pat_rel_split(v, n, root, p) : n;
    sched_ref data = sched_at(SBUF_SEND, 0);
    if (nc > 0) {                          /* gather the subtree in TMP */
        sched_need_tmp(s, (uint64_t)n * B);
        sched_copy(s, sched_at(SBUF_TMP, 0), data, B);
        for (int i = 0; i < nc; i++) {
            int c = pat_binomial_child(r, root, p, i), cv = rel(c, root, p);
            sched_recv(s, c, sched_at(SBUF_TMP, (uint64_t)(cv - v) * B),
                       (uint64_t)pat_binomial_subtree(c, root, p) * B);
        }
        sched_round_begin(s);
        data = sched_at(SBUF_TMP, 0);
    }
    sched_put(s, parent, data, (uint64_t)first * B);
    if (first < n)
        sched_put(s, parent, sched_at(SBUF_TMP, (uint64_t)first * B), (uint64_t)(n - first) * B);
}

const collie_algorithm collie_algo_gather_binomial = {
    .name = "binomial",
    .coll = COLL_GATHER,
    .needs = 0,
    .summary = "binomial-tree gather, ceil(lg P) levels, subtrees in one message (Thakur et "
               "al. 2005); any root; block form only",
    .accepts = accepts,
    .build = build,
};
