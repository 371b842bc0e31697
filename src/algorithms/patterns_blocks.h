/*
 * patterns_blocks.h — index math of the binary-blocks, rooted halving&doubling, pipelined
 * ring and binary-tree algorithms (Rabenseifner 2004 §3.3, §3.5, §3.6; GASPI-SHAN).  Pure
 * functions; complements patterns.h (which has halving&doubling blocks, folding, ring
 * neighbours, segments and binomial trees — reused, not repeated here).  Every function is
 * tested against a brute-force definition for team sizes 1…64 (tests/unit/test_blocks.c).
 */
#ifndef COLLIE_PATTERNS_BLOCKS_H
#define COLLIE_PATTERNS_BLOCKS_H

#include <stddef.h>

/* ---- binary blocks (Rabenseifner §3.6, Fig. 3) ----------------------------------------
 * p = 2^e0 + 2^e1 + … (e0 > e1 > …, the binary representation of p).  Block b holds the
 * 2^eb consecutive ranks pat_bb_first(b) …; block 0 is the largest and has the lowest
 * ranks, so blocks in index order are blocks in rank order.  Inside a block, ranks are
 * numbered from 0 (local rank = rank - pat_bb_first). */
int pat_bb_nblocks(int p);                   /* number of set bits of p */
int pat_bb_exp(int b, int p);                /* eb */
int pat_bb_first(int b, int p);              /* first rank of block b */
int pat_bb_block_of(int rank, int p);        /* b with first(b) <= rank < first(b) + 2^eb */
int pat_bb_delta_max(int p);                 /* δ_expo,max: max e(b) - e(b+1), 0 if 1 block */

/* Feeding block b into block b-1 (b >= 1): with d = e(b-1) - e(b), local rank i of block b
 * sends to the 2^d local ranks i + t·2^eb (t < 2^d) of block b-1; local rank j of block b-1
 * hears from local rank j mod 2^eb of block b.  After the halving steps of its block, the
 * segment range of local rank j of block b-1 lies inside that of its feeder (both hold the
 * bits 0 … eb-1 of their local rank), and the 2^d ranges of a feeder's targets tile it. */
int pat_bb_feed_count(int b, int p);                  /* 2^d */
int pat_bb_feed_target(int local, int t, int b, int p); /* a rank of block b-1 */
int pat_bb_feeder(int local, int b, int p);           /* the rank of block b feeding
                                                         local rank `local` of block b-1 */

/* ---- rooted fold (Rabenseifner §3.5, reduce) -----------------------------------------
 * As pat_fold_* in patterns.h, except that when the root is a removed (odd, < 2r) rank,
 * it and its even partner swap roles: the root survives as the pair's new rank. */
int pat_rfold_newrank(int rank, int p, int root);     /* -1 for a removed rank */
int pat_rfold_oldrank(int newrank, int p, int root);  /* the survivor of new rank i */

/* ---- gather by distance halving to new rank nroot over p2 = 2^L new ranks -------------
 * Steps k = L-1 … 0.  A new rank is active at step k when its bits above k equal those of
 * nroot; an active rank receives from nr ^ 2^k when its bit k equals nroot's, else it
 * sends to it and is done.  Returns +1 receive, -1 send, 0 idle. */
int pat_hd_gather_role(int newrank, int nroot, int step);

/* ---- fixed-size chunks: a part of len elements cut into chunks of csize (>= 1). ------- */
size_t pat_chunk_count(size_t len, size_t csize);
size_t pat_chunk_len(size_t len, size_t csize, size_t c);   /* c < pat_chunk_count */

/* ---- pipelined ring (GASPI-SHAN): steps g = 0 … 2p-3; in step g rank r sends part
 * (r-g-1) mod p to r+1 and receives part (r-g-2) mod p from r-1.  Steps g < p-1 are the
 * reduce stage (the chain of part q starts on rank q+1, ends on its owner q at step p-2),
 * steps g >= p-1 the broadcast stage (owner q's result travels q+1, …, q-1). ----------- */
int pat_pring_steps(int p);                      /* 2(p-1) */
int pat_pring_send_part(int rank, int step, int p);
int pat_pring_recv_part(int rank, int step, int p);

/* ---- binary tree (heap order) with root rotation: in relative ranks v = rank - root mod
 * p, the children of v are 2v+1 and 2v+2 (< p), the parent of v > 0 is (v-1)/2. -------- */
int pat_btree_parent(int rank, int root, int p);     /* -1 for the root */
int pat_btree_nchildren(int rank, int root, int p);  /* 0, 1 or 2 */
int pat_btree_child(int rank, int root, int p, int i);
int pat_btree_depth(int p);                          /* levels below the root: ⌊lg p⌋ */

#endif
