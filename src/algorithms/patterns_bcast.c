/* patterns_bcast.c — index math of the broadcasts (see patterns_bcast.h). */
#include "algorithms/patterns_bcast.h"

int pat_rel_rank(int rank, int root, int p) { return (rank - root + p) % p; }
int pat_abs_rank(int v, int root, int p) { return (v + root) % p; }

/* ---- binary tree -------------------------------------------------------------------- */

int pat_bintree_parent(int rank, int root, int p) {
    int v = pat_rel_rank(rank, root, p);
    return v == 0 ? -1 : pat_abs_rank((v - 1) / 2, root, p);
}

int pat_bintree_nchildren(int rank, int root, int p) {
    long long first = 2LL * pat_rel_rank(rank, root, p) + 1;
    if (first >= p)
        return 0;
    return first + 1 < p ? 2 : 1;
}

int pat_bintree_child(int rank, int root, int p, int i) {
    return pat_abs_rank(2 * pat_rel_rank(rank, root, p) + 1 + i, root, p);
}

/* ---- binomial subtrees -------------------------------------------------------------- */

int pat_binomial_subtree_size(int rank, int root, int p) {
    int v = pat_rel_rank(rank, root, p);
    if (v == 0)
        return p;
    int low = v & -v;
    return low < p - v ? low : p - v;
}

bool pat_binomial_in_subtree(int rank, int root, int p, int w) {
    int v = pat_rel_rank(rank, root, p);
    return w >= v && w < v + pat_binomial_subtree_size(rank, root, p);
}

/* ---- ring allgather ----------------------------------------------------------------- */

int pat_ring_ag_send_block(int v, int step, int p) { return ((v - step) % p + p) % p; }
int pat_ring_ag_recv_block(int v, int step, int p) { return ((v - step - 1) % p + p) % p; }

/* ---- chain -------------------------------------------------------------------------- */

int pat_chain_prev(int rank, int root, int p) {
    int v = pat_rel_rank(rank, root, p);
    return v == 0 ? -1 : pat_abs_rank(v - 1, root, p);
}

int pat_chain_next(int rank, int root, int p) {
    int v = pat_rel_rank(rank, root, p);
    return v == p - 1 ? -1 : pat_abs_rank(v + 1, root, p);
}

/* ---- fixed-size segments ------------------------------------------------------------ */

size_t pat_fseg_count(size_t count, size_t seg) { return (count + seg - 1) / seg; }

size_t pat_fseg_start(size_t count, size_t seg, size_t j) {
    return j < pat_fseg_count(count, seg) ? j * seg : count;
}

size_t pat_fseg_len(size_t count, size_t seg, size_t j) {
    return pat_fseg_start(count, seg, j + 1) - pat_fseg_start(count, seg, j);
}

size_t pat_fseg_elems(size_t count, size_t elem_size, long long seg_bytes, size_t max_segs) {
    size_t seg = (size_t)seg_bytes / elem_size;
    if (seg == 0)
        seg = 1;
    if (pat_fseg_count(count, seg) > max_segs)
        seg = (count + max_segs - 1) / max_segs;
    return seg;
}

/* ---- the pipelined chain ------------------------------------------------------------ */

size_t pat_chain_steps(int p, size_t nseg) {
    return p == 1 || nseg == 0 ? 0 : nseg + (size_t)p - 2;
}

/* Segment t - d when 0 <= t - d < nseg, else -1. */
static long seg_at(size_t step, long long d, size_t nseg) {
    long long s = (long long)step - d;
    return s >= 0 && (size_t)s < nseg ? (long)s : -1;
}

long pat_chain_recv_seg(int rank, int root, int p, size_t nseg, size_t step) {
    int v = pat_rel_rank(rank, root, p);
    return v == 0 ? -1 : seg_at(step, v - 1, nseg);
}

long pat_chain_send_seg(int rank, int root, int p, size_t nseg, size_t step) {
    int v = pat_rel_rank(rank, root, p);
    return v == p - 1 ? -1 : seg_at(step, v, nseg);
}

bool pat_chain_active_steps(int rank, int root, int p, size_t nseg, size_t *first,
                            size_t *last) {
    int v = pat_rel_rank(rank, root, p);
    if (p == 1 || nseg == 0)
        return false;
    *first = v == 0 ? 0 : (size_t)v - 1;
    *last = (size_t)v + nseg - (v == p - 1 ? 2 : 1);
    return true;
}
