/*
 * binomial.c — scatter along a binomial tree, any root.
 *
 * Source: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)), the binomial-tree scatter
 *   (MPICH's scatter: the root sends each child its subtree's blocks in one message, the
 *   inner ranks pass them on); the tree is patterns.h's binomial tree with root rotation
 *   (relative rank v = rank - root mod P; the subtree of v is the relative ranks v … v +
 *   pat_binomial_subtree - 1).
 * Data movement: the root sends each child its subtree's blocks straight from SEND, in two
 *   parts when the relative range wraps past rank P-1 (pat_rel_split; the child receives
 *   the same parts); an inner rank receives its subtree in TMP (own block first), passes
 *   the children's parts on from there and copies its own block to RECV; a leaf receives
 *   straight into RECV.  Children are served farthest (largest subtree) first.
 * Rounds: ⌈lg P⌉ levels; each rank 1 round of receiving and 1 of sending.
 * Bytes sent per rank: the root n(P-1)/P (n = P·B) in ⌈lg P⌉ messages; an inner rank its
 *   subtree minus its own block.
 * Restrictions: any P, any root, any count; block form only (declines scatterv: the inner
 *   ranks would need their subtree's counts, which only the root has).
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
               "has scatterv's counts)";
        return false;
    }
    return true;
}

static int rel(int rank, int root, int p) { return (rank - root + p) % p; }

/* The root's PUTs of relative ranks v … v+n-1 from SEND (actual rank order). */
static void put_subtree(collie_schedule *s, const collie_coll_args *a, int child, int v, int n) {
    int p = a->size, first = pat_rel_split(v, n, a->root, p);
    uint64_t B = a->bytes;
    cs_put(s, child, sched_at(SBUF_SEND, (uint64_t)((v + a->root) % p) * B),
           (uint64_t)first * B);
    cs_put(s, child, sched_at(SBUF_SEND, 0), (uint64_t)(n - first) * B);
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    int p = a->size, r = a->rank, root = a->root, v = rel(r, root, p);
    int n = pat_binomial_subtree(r, root, p), nc = pat_binomial_nchildren(r, root, p);
    uint64_t B = a->bytes;
    if (B == 0)
        return;
    sched_round_begin(s);
    if (r == root) {
        for (int i = nc - 1; i >= 0; i--) {
            int c = pat_binomial_child(r, root, p, i);
            put_subtree(s, a, c, rel(c, root, p), pat_binomial_subtree(c, root, p));
        }
        if (!a->in_place)
            sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, (uint64_t)r * B), B);
        return;
    }
    int parent = pat_binomial_parent(r, root, p);
    int first = parent == root ? pat_rel_split(v, n, root, p) : n;
    if (nc == 0) {
        sched_recv(s, parent, sched_at(SBUF_RECV, 0), B);
        return;
    }
    sched_need_tmp(s, (uint64_t)n * B);
    sched_recv(s, parent, sched_at(SBUF_TMP, 0), (uint64_t)first * B);
    cs_recv(s, parent, sched_at(SBUF_TMP, (uint64_t)first * B), (uint64_t)(n - first) * B);
    sched_round_begin(s);
    for (int i = nc - 1; i >= 0; i--) {
        int c = pat_binomial_child(r, root, p, i), cv = rel(c, root, p);
        sched_put(s, c, sched_at(SBUF_TMP, (uint64_t)(cv - v) * B),
                  (uint64_t)pat_binomial_subtree(c, root, p) * B);
    }
    sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_TMP, 0), B);
}

const collie_algorithm collie_algo_scatter_binomial = {
    .name = "binomial",
    .coll = COLL_SCATTER,
    .needs = 0,
    .summary = "binomial-tree scatter, ceil(lg P) levels, subtrees in one message (Thakur "
               "et al. 2005); any root; block form only",
    .accepts = accepts,
    .build = build,
};
