/* patterns.c — index math of the algorithms (see patterns.h). */
#include "algorithms/patterns.h"

/* ---- powers of two ------------------------------------------------------------------ */

int pat_pow2_floor(int p) {
    int x = 1;
    while (x <= p / 2)
        x *= 2;
    return x;
}

int pat_log2_floor(int p) {
    int k = 0;
    while ((1 << (k + 1)) <= p && k < 30)
        k++;
    return k;
}

int pat_log2_ceil(int p) {
    int k = 0;
    while ((1 << k) < p && k < 30)
        k++;
    return k;
}

/* ---- folding ------------------------------------------------------------------------ */

int pat_fold_removed(int p) { return p - pat_pow2_floor(p); }

int pat_fold_newrank(int rank, int p) {
    int r = pat_fold_removed(p);
    if (rank >= 2 * r)
        return rank - r;
    return (rank % 2 == 0) ? rank / 2 : -1;
}

int pat_fold_oldrank(int newrank, int p) {
    int r = pat_fold_removed(p);
    return newrank < r ? 2 * newrank : newrank + r;
}

int pat_fold_first(int newrank, int p) { return pat_fold_oldrank(newrank, p); }

int pat_fold_partner(int rank, int p) {
    return rank < 2 * pat_fold_removed(p) ? (rank ^ 1) : -1;
}

/* ---- binomial tree ------------------------------------------------------------------ */

static int rel(int rank, int root, int p) { return (rank - root + p) % p; }
static int unrel(int v, int root, int p) { return (v + root) % p; }

int pat_binomial_parent(int rank, int root, int p) {
    int v = rel(rank, root, p);
    if (v == 0)
        return -1;
    return unrel(v & (v - 1), root, p);
}

int pat_binomial_nchildren(int rank, int root, int p) {
    int v = rel(rank, root, p);
    int n = 0;
    for (int d = 1; v + d < p && (v == 0 || d < (v & -v)); d *= 2)
        n++;
    return n;
}

int pat_binomial_child(int rank, int root, int p, int i) {
    return unrel(rel(rank, root, p) + (1 << i), root, p);
}

/* ---- dissemination ------------------------------------------------------------------ */

int pat_dissemination_rounds(int p) { return pat_log2_ceil(p); }

int pat_dissemination_to(int rank, int round, int p) {
    return (int)(((long long)rank + (1LL << round)) % p);
}

int pat_dissemination_from(int rank, int round, int p) {
    long long d = (1LL << round) % p;
    return (int)(((long long)rank - d + p) % p);
}

/* ---- ring --------------------------------------------------------------------------- */

int pat_ring_next(int rank, int p) { return (rank + 1) % p; }
int pat_ring_prev(int rank, int p) { return (rank - 1 + p) % p; }
int pat_pairwise_to(int rank, int step, int p) { return (rank + step) % p; }
int pat_pairwise_from(int rank, int step, int p) { return (rank - step % p + p) % p; }

/* ---- segments ----------------------------------------------------------------------- */

size_t pat_seg_start(size_t count, int nseg, int j) {
    size_t base = count / (size_t)nseg, extra = count % (size_t)nseg;
    size_t jj = (size_t)j;
    return jj * base + (jj < extra ? jj : extra);
}

size_t pat_seg_len(size_t count, int nseg, int j) {
    return pat_seg_start(count, nseg, j + 1) - pat_seg_start(count, nseg, j);
}

/* ---- halving and doubling ----------------------------------------------------------- */

int pat_hd_partner(int newrank, int step) { return newrank ^ (1 << step); }

void pat_hd_block(int newrank, int step, int p2, int *first, int *nseg) {
    int f = 0;
    for (int k = 0; k < step; k++)
        if (newrank & (1 << k))
            f += p2 >> (k + 1);
    *first = f;
    *nseg = p2 >> step;
}

/* ---- chains of REDUCEs ------------------------------------------------------------- */

int pat_chain_links(int nsrc, int maxsrc) {
    if (nsrc <= maxsrc)
        return 1;
    return 1 + (nsrc - maxsrc + (maxsrc - 2)) / (maxsrc - 1);
}

void pat_chain_link(int nsrc, int maxsrc, int link, int *first, int *n) {
    int f = link == 0 ? 0 : maxsrc + (link - 1) * (maxsrc - 1);
    int cap = link == 0 ? maxsrc : maxsrc - 1;
    *first = f;
    *n = nsrc - f < cap ? nsrc - f : cap;
}
