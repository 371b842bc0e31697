/*
 * patterns_bcast.h — the index math of the broadcasts (linear, binary_tree,
 * scatter_allgather, chain; chain's per-segment math is also stage 2 of the multicast
 * broadcast, Hoefler 2007 §2.2).  Pure functions, no schedule building; every function is
 * tested against a brute-force definition for team sizes 1…64
 * (tests/unit/test_bcast_algos.c).  Binomial trees, ring neighbours and equal segments
 * are in patterns.h.
 *
 * Conventions as in patterns.h: p >= 1, 0 <= rank, root < p; the relative rank of a rank
 * is v = (rank - root) mod p, so the root is relative rank 0.
 */
#ifndef COLLIE_PATTERNS_BCAST_H
#define COLLIE_PATTERNS_BCAST_H

#include <stdbool.h>
#include <stddef.h>

int pat_rel_rank(int rank, int root, int p);    /* (rank - root) mod p */
int pat_abs_rank(int v, int root, int p);       /* (v + root) mod p */

/* ---- binary tree in heap numbering (Abuelsoud–Paznikov Alg. 1) ----------------------
 * In relative ranks the children of v are 2v+1 and 2v+2 (those < p), the parent of v > 0
 * is (v-1)/2.  Child 0 is 2v+1 (its subtree is at least as large as child 1's). */
int pat_bintree_parent(int rank, int root, int p);        /* -1 for the root */
int pat_bintree_nchildren(int rank, int root, int p);
int pat_bintree_child(int rank, int root, int p, int i);  /* 0 <= i < nchildren */

/* ---- binomial subtrees (patterns.h's tree): the subtree of relative rank v is the
 * relative ranks v … v + size - 1, size = min(lowbit(v), p - v), p for the root. -------- */
int pat_binomial_subtree_size(int rank, int root, int p);
/* true when relative rank w lies in the subtree of rank. */
bool pat_binomial_in_subtree(int rank, int root, int p, int w);

/* ---- ring allgather over relative ranks: in step j (0 <= j < p-1) relative rank v sends
 * block (v - j) mod p to v + 1 and receives block (v - j - 1) mod p from v - 1. -------- */
int pat_ring_ag_send_block(int v, int step, int p);
int pat_ring_ag_recv_block(int v, int step, int p);

/* ---- chain along the virtual ring starting at the root (Hoefler 2007 §2.2) ----------
 * Relative rank v receives from v - 1 and forwards to v + 1; the root receives nothing
 * and the root's predecessor (relative p - 1) forwards nothing (the link p-1 → 0 is
 * omitted). */
int pat_chain_prev(int rank, int root, int p);   /* -1 for the root */
int pat_chain_next(int rank, int root, int p);   /* -1 for the root's predecessor */

/* ---- fixed-size segments: count elements cut into segments of seg >= 1 elements, the
 * last one shorter; count 0 has no segments. ------------------------------------------ */
size_t pat_fseg_count(size_t count, size_t seg);
size_t pat_fseg_start(size_t count, size_t seg, size_t j);   /* 0 <= j <= nseg */
size_t pat_fseg_len(size_t count, size_t seg, size_t j);     /* 0 <= j < nseg */
/* Segment length in elements for a requested size in bytes: rounded down to whole
 * elements, at least one element, and raised so that there are at most max_segs
 * segments.  seg_bytes >= 1, elem_size >= 1, max_segs >= 1. */
size_t pat_fseg_elems(size_t count, size_t elem_size, long long seg_bytes, size_t max_segs);

/* ---- the pipelined chain: in step t (0 <= t < steps) relative rank v receives segment
 * t - (v - 1) from its predecessor and forwards segment t - v to its successor, when
 * those are valid segments (0 … nseg-1) and the neighbour exists.  So segment s reaches
 * relative rank v in step s + v - 1 and the last rank in step nseg + p - 3. ---------- */
size_t pat_chain_steps(int p, size_t nseg);      /* nseg + p - 2 (0 if p == 1 or !nseg) */
long pat_chain_recv_seg(int rank, int root, int p, size_t nseg, size_t step); /* or -1 */
long pat_chain_send_seg(int rank, int root, int p, size_t nseg, size_t step); /* or -1 */
/* The steps in which rank does anything: first … last inclusive; false if none. */
bool pat_chain_active_steps(int rank, int root, int p, size_t nseg, size_t *first,
                            size_t *last);

#endif
