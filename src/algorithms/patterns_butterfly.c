/* patterns_butterfly.c — index math of the butterfly-like algorithms (see the header). */
#include "algorithms/patterns_butterfly.h"
#include "algorithms/patterns.h"

/* ---- pairwise exchange -------------------------------------------------------------- */

int pbf_pe_leftover(int p) { return p - pat_pow2_floor(p); }

int pbf_pe_fold_partner(int rank, int p) {
    int p2 = pat_pow2_floor(p), q = p - p2;
    if (rank < q)
        return p2 + rank;
    if (rank >= p2)
        return rank - p2;
    return -1;
}

bool pbf_pe_block_has_leftover(int rank, int step, int p) {
    int first = (rank >> step) << step;
    return first < pbf_pe_leftover(p);
}

/* ---- canonical partial results -------------------------------------------------------- */

static int min_int(int x, int y) { return x < y ? x : y; }

static int floor_log2(unsigned x) { return 31 - __builtin_clz(x); }

/* The largest level l (node size 2^l, 1 <= l <= 30) with a a multiple of 2^l, 2^(l-1) < p
 * and the node's end min(a + 2^l, p) <= b; a + 1 when there is none. */
int pbf_node_end(int a, int b, int p) {
    int top = a ? min_int(__builtin_ctz((unsigned)a), 30) : 30;
    if (p > 1)
        top = min_int(top, floor_log2((unsigned)(p - 1)) + 1);
    else
        top = 0;
    if (p > b)                                      /* the end is a + 2^l: at most b */
        top = b - a < 2 ? 0 : min_int(top, floor_log2((unsigned)(b - a)));
    return top < 1 ? a + 1 : min_int(a + (1 << top), p);
}

pbf_walk pbf_walk_begin(int first, int len, int p) {
    int end = first + len;
    pbf_walk w = { first, end <= p ? end : p, end <= p ? 0 : end - p, p };
    return w;
}

bool pbf_walk_next(pbf_walk *w, int *a, int *e) {
    if (w->lo >= w->hi) {
        if (w->rest <= 0)
            return false;
        w->lo = 0;
        w->hi = w->rest;
        w->rest = 0;
    }
    *a = w->lo;
    *e = w->lo = pbf_node_end(w->lo, w->hi, w->p);
    return true;
}

void pbf_node_parent(int a, int e, int p, int *pa, int *mid, int *pe) {
    for (int l = 1; l < 31; l++) {
        int start = (a >> l) << l, end = min_int(start + (1 << l), p);
        int half = start + (1 << (l - 1));
        if (end < e || (start == a && end == e) || half >= end)
            continue;                               /* the same node, or a trivial block */
        *pa = start;
        *mid = half;
        *pe = end;
        return;
    }
    *pa = *mid = *pe = -1;
}

/* ---- Bruck ------------------------------------------------------------------------------ */

int pbf_bruck_rounds(int n, int p) {
    int k = 0;
    for (long long x = p - 1; x > 0; x /= n + 1)
        k++;
    return k;
}

int pbf_bruck_digit(int n, int p, int round) {
    int k = pbf_bruck_rounds(n, p);
    long long x = p - 1;
    for (int i = 0; i < k - 1 - round; i++)
        x /= n + 1;
    return (int)(x % (n + 1));
}

int pbf_bruck_count(int n, int p, int round) {
    long long c = 0;
    for (int t = 0; t < round; t++)
        c = (n + 1) * c + pbf_bruck_digit(n, p, t);
    return (int)c;
}

int pbf_bruck_peer(int n, int p, int round, int m, int *len) {
    return pbf_bruck_peer_of(pbf_bruck_digit(n, p, round), pbf_bruck_count(n, p, round), m,
                             len);
}

int pbf_bruck_peer_of(int alpha, int c, int m, int *len) {
    if (m < alpha) {
        *len = c + 1;
        return (m + 1) * (c + 1);
    }
    *len = c;
    return alpha * (c + 1) + (m - alpha + 1) * c;
}
