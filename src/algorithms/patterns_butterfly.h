/*
 * patterns_butterfly.h — index math of the butterfly-like allreduce algorithms of End et
 * al. 2016 (pairwise exchange §III-A, Bruck §III-C) and of dissemination.  Pure functions,
 * no schedule building; tested against brute-force definitions for team sizes 1…64
 * (tests/unit/test_butterfly.c).  Conventions as in patterns.h.
 */
#ifndef COLLIE_PATTERNS_BUTTERFLY_H
#define COLLIE_PATTERNS_BUTTERFLY_H

#include <stdbool.h>

/* ---- pairwise exchange (End 2016 §III-A) ----------------------------------------------
 * P = 2^k + q, 0 <= q < 2^k.  Leftover rank 2^k + i (i < q) pairs with rank i; ranks
 * 0 … 2^k - 1 run the butterfly (partner of rank r in step j: r ^ 2^j, pat_hd_partner). */
int pbf_pe_leftover(int p);                      /* q */
int pbf_pe_fold_partner(int rank, int p);        /* the other rank of a fold pair, or -1 */
/* Before butterfly step j, rank r (< 2^k) stands for the block of ranks
 * [r & ~(2^j - 1), … + 2^j); true when that block holds a fold pair (its first rank < q),
 * i.e. when it has leftover data to carry. */
bool pbf_pe_block_has_leftover(int rank, int step, int p);

#endif

/* ---- canonical partial results ----------------------------------------------------------
 * A fixed binary tree over the ranks 0 … p-1 whose nodes are the aligned blocks
 * [j·2^l, (j+1)·2^l) clipped at p (a clipped block equal to its left half is the same
 * node).  A partial result over the linear range [a, b) is sent as the greedy
 * decomposition into maximal nodes, lowest first; the value of a node is always its two
 * children combined lower ∘ higher, so every rank that holds a node holds the same
 * expression.  A cyclic range (first, len) is split at the wrap: [first, p) then
 * [0, rest). */
/* The first node of the decomposition of [a, b) (a < b <= p): returns its end. */
int pbf_node_end(int a, int b, int p);
/* Walks the nodes of the cyclic range (first, len), 0 < len <= p, in order: each is found
 * from the previous one's end.  pbf_walk_next gives the next node [*a, *e), false after
 * the last. */
typedef struct pbf_walk {
    int lo, hi, rest, p;
} pbf_walk;
pbf_walk pbf_walk_begin(int first, int len, int p);
bool pbf_walk_next(pbf_walk *w, int *a, int *e);
/* The parent of node [a, e) (not the root [0, p)): the range [*pa, *pe) whose children
 * are [*pa, *mid) and [*mid, *pe); [a, e) is one of them. */
void pbf_node_parent(int a, int e, int p, int *pa, int *mid, int *pe);

/* ---- Bruck & Ho global combine (End 2016 §III-C, eqs. (15)–(24)) ------------------------
 * n ports, P - 1 = (α_{k-1} … α_0) in base n+1, k = number of digits (0 for P = 1).  Round
 * t = 0 … k-1 uses the digit α = α_{k-1-t} and the count c_t (c_0 = 0,
 * c_{t+1} = (n+1)·c_t + α, c_k = P - 1).  Before round t rank p holds S[1] = x_p … x_{p+c}
 * and S[0] = x_{p+1} … x_{p+c} (cyclic).  Peer slot m = 0 … n-1 of round t:
 *   m < α:   S[1] goes to p - (m+1)(c+1), comes from p + (m+1)(c+1);
 *   m >= α:  S[0] (only when c > 0) goes to p - α(c+1) - (m-α+1)c, comes from the
 *            mirror p + α(c+1) + (m-α+1)c.
 * pbf_bruck_peer gives the offset d >= 1 (to = p - d, from = p + d) and the range
 * length (c+1 or c; 0 = no message). */
int pbf_bruck_rounds(int n, int p);
int pbf_bruck_digit(int n, int p, int round);      /* α_{k-1-round} */
int pbf_bruck_count(int n, int p, int round);      /* c before the round */
int pbf_bruck_peer(int n, int p, int round, int m, int *len);
/* The same from the round's digit α and count c (computed once per round). */
int pbf_bruck_peer_of(int alpha, int c, int m, int *len);
