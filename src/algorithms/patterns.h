/*
 * patterns.h — the index math of the algorithms: who talks to whom in which step, and
 * which part of the vector moves.  Pure functions of (rank, size, step, count); no
 * schedule building here (the algorithm files do the data movement).  Every function is
 * tested against a brute-force definition for team sizes 1…64 (tests/unit/test_patterns.c).
 *
 * Conventions: p >= 1 is the team size, 0 <= rank < p.  "Relative rank" v of a rooted
 * pattern is (rank - root) mod p.
 */
#ifndef COLLIE_PATTERNS_H
#define COLLIE_PATTERNS_H

#include <stddef.h>

/* ---- powers of two ------------------------------------------------------------------ */
int pat_pow2_floor(int p);          /* largest power of two <= p */
int pat_log2_floor(int p);          /* ⌊log2 p⌋ */
int pat_log2_ceil(int p);           /* ⌈log2 p⌉, 0 for p = 1 */

/* ---- non-power-of-two folding (Rabenseifner 2004 §3.5, Fig. 2) ----------------------
 * p' = pat_pow2_floor(p), r = p - p' ranks are removed: the first 2r ranks pair up
 * (2i, 2i+1); the even one stays as new rank i, the odd one is removed.  Rank j >= 2r
 * becomes new rank j - r.  New rank i stands for the contiguous original ranks
 * pat_fold_first(i) … pat_fold_first(i+1)-1, so new-rank order is rank order. */
int pat_fold_removed(int p);                 /* r */
int pat_fold_newrank(int rank, int p);       /* -1 for a removed (odd, < 2r) rank */
int pat_fold_oldrank(int newrank, int p);    /* the surviving rank of new rank i */
int pat_fold_first(int newrank, int p);      /* first original rank new rank i stands for */
int pat_fold_partner(int rank, int p);       /* rank ^ 1 when rank < 2r, else -1 */

/* ---- binomial tree with root rotation -------------------------------------------------
 * In relative ranks: the parent of v > 0 is v with its lowest set bit cleared; the
 * children of v are v + 2^i for 2^i < lowbit(v) (any 2^i for v = 0) and v + 2^i < p,
 * numbered by i (nearest first).  The subtree of v is the relative ranks
 * v … v + min(lowbit(v), p - v) - 1, so child i's subtree is the relative ranks right
 * after those of v and its children 0 … i-1 (rank order, when root = 0). */
int pat_binomial_parent(int rank, int root, int p);      /* -1 for the root */
int pat_binomial_nchildren(int rank, int root, int p);
int pat_binomial_child(int rank, int root, int p, int i); /* 0 <= i < nchildren */

/* ---- dissemination (Hensgen 1988): in round k < ⌈log2 p⌉, rank sends to rank + 2^k
 * and receives from rank - 2^k (mod p). --------------------------------------------- */
int pat_dissemination_rounds(int p);
int pat_dissemination_to(int rank, int round, int p);
int pat_dissemination_from(int rank, int round, int p);

/* ---- ring: neighbours, and the pairwise exchange of step i (1 <= i < p): send to
 * rank + i, receive from rank - i (Rabenseifner §3.2 "ring algorithms", §3.7). --------- */
int pat_ring_next(int rank, int p);
int pat_ring_prev(int rank, int p);
int pat_pairwise_to(int rank, int step, int p);
int pat_pairwise_from(int rank, int step, int p);

/* ---- segments: count elements cut into nseg contiguous parts whose lengths differ by at
 * most one, the longer ones first (count < nseg gives empty segments at the end). ------ */
size_t pat_seg_start(size_t count, int nseg, int j);     /* 0 <= j <= nseg */
size_t pat_seg_len(size_t count, int nseg, int j);       /* 0 <= j < nseg */

/* ---- recursive vector halving + distance doubling over p2 = 2^L ranks -----------------
 * Step k (0 <= k < L) pairs new rank nr with nr ^ 2^k.  Before step k, nr holds the
 * nseg = p2 >> k segments starting at *first; the partner with bit k clear keeps the
 * lower half, the other the upper half.  Before step L (after the last) each rank holds
 * one segment, all different.  The allgather walks the same blocks backwards. */
int pat_hd_partner(int newrank, int step);
void pat_hd_block(int newrank, int step, int p2, int *first, int *nseg);

/* ---- chains of REDUCEs with at most maxsrc sources each (flat algorithms) ------------
 * nsrc sources in order are reduced by a chain: link 0 takes the first (up to) maxsrc,
 * every later link takes the accumulator first and then up to maxsrc - 1 new sources. */
int pat_chain_links(int nsrc, int maxsrc);
void pat_chain_link(int nsrc, int maxsrc, int link, int *first, int *n);

#endif
