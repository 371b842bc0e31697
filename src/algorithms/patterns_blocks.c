/* patterns_blocks.c — index math of the block, rooted, pipelined and tree algorithms
 * (see patterns_blocks.h). */
#include <stdbool.h>
#include "algorithms/patterns_blocks.h"
#include "algorithms/patterns.h"

/* ---- binary blocks ------------------------------------------------------------------ */

int pat_bb_nblocks(int p) {
    int n = 0;
    for (int x = p; x > 0; x &= x - 1)
        n++;
    return n;
}

/* Exponent of the b-th set bit of p, counting from the highest. */
int pat_bb_exp(int b, int p) {
    for (int e = 30; e >= 0; e--)
        if ((p >> e) & 1) {
            if (b == 0)
                return e;
            b--;
        }
    return -1;
}

int pat_bb_first(int b, int p) {
    int first = 0;
    for (int i = 0; i < b; i++)
        first += 1 << pat_bb_exp(i, p);
    return first;
}

int pat_bb_block_of(int rank, int p) {
    int b = 0;
    while (b + 1 < pat_bb_nblocks(p) && pat_bb_first(b + 1, p) <= rank)
        b++;
    return b;
}

int pat_bb_delta_max(int p) {
    int d = 0, n = pat_bb_nblocks(p);
    for (int b = 0; b + 1 < n; b++) {
        int x = pat_bb_exp(b, p) - pat_bb_exp(b + 1, p);
        d = x > d ? x : d;
    }
    return d;
}

int pat_bb_feed_count(int b, int p) { return 1 << (pat_bb_exp(b - 1, p) - pat_bb_exp(b, p)); }

int pat_bb_feed_target(int local, int t, int b, int p) {
    return pat_bb_first(b - 1, p) + local + t * (1 << pat_bb_exp(b, p));
}

int pat_bb_feeder(int local, int b, int p) {
    return pat_bb_first(b, p) + local % (1 << pat_bb_exp(b, p));
}

/* ---- rooted fold -------------------------------------------------------------------- */

/* True when root is a removed rank, so it swaps roles with its even partner. */
static bool root_removed(int p, int root) { return pat_fold_newrank(root, p) < 0; }

int pat_rfold_newrank(int rank, int p, int root) {
    if (root_removed(p, root) && (rank | 1) == root)
        return rank == root ? root / 2 : -1;
    return pat_fold_newrank(rank, p);
}

int pat_rfold_oldrank(int newrank, int p, int root) {
    int old = pat_fold_oldrank(newrank, p);
    return root_removed(p, root) && old == root - 1 ? root : old;
}

/* ---- gather by distance halving ----------------------------------------------------- */

int pat_hd_gather_role(int newrank, int nroot, int step) {
    int diff = newrank ^ nroot;
    if (diff >> (step + 1))
        return 0;
    return (diff >> step) & 1 ? -1 : 1;
}

/* ---- fixed-size chunks -------------------------------------------------------------- */

size_t pat_chunk_count(size_t len, size_t csize) { return (len + csize - 1) / csize; }

size_t pat_chunk_len(size_t len, size_t csize, size_t c) {
    size_t off = c * csize;
    return len - off < csize ? len - off : csize;
}

/* ---- pipelined ring ----------------------------------------------------------------- */

int pat_pring_steps(int p) { return 2 * (p - 1); }

static int mod(long long x, int p) { return (int)(((x % p) + p) % p); }

int pat_pring_send_part(int rank, int step, int p) { return mod((long long)rank - step - 1, p); }
int pat_pring_recv_part(int rank, int step, int p) { return mod((long long)rank - step - 2, p); }

/* ---- binary tree -------------------------------------------------------------------- */

int pat_btree_parent(int rank, int root, int p) {
    int v = mod((long long)rank - root, p);
    return v == 0 ? -1 : mod((long long)(v - 1) / 2 + root, p);
}

int pat_btree_nchildren(int rank, int root, int p) {
    int v = mod((long long)rank - root, p);
    long long c = 2LL * v + 1;
    return c >= p ? 0 : c + 1 >= p ? 1 : 2;
}

int pat_btree_child(int rank, int root, int p, int i) {
    int v = mod((long long)rank - root, p);
    return mod(2LL * v + 1 + i + root, p);
}

int pat_btree_depth(int p) { return pat_log2_floor(p); }
