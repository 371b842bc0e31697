/*
 * patterns_colls.h — index math of the allgather, reduce_scatter, alltoall, gather,
 * scatter, scan and exscan algorithms (Thakur, Rabenseifner & Gropp 2005; Bruck et al.
 * 1997; Rabenseifner 2004).  Pure functions of (rank, size, step); the algorithm files do
 * the data movement.  Complements patterns.h (folding, binomial trees, pairwise steps,
 * powers of two — reused, not repeated here).  Every function is tested against a
 * brute-force definition for team sizes 1…64 (tests/unit/test_colls_patterns.c).
 *
 * Conventions as in patterns.h: p >= 1 ranks, 0 <= rank < p; "new ranks" are those of the
 * non-power-of-two folding (pat_fold_*), p2 = 2^L of them.
 */
#ifndef COLLIE_PATTERNS_COLLS_H
#define COLLIE_PATTERNS_COLLS_H

/* ---- recursive doubling (allgather; Thakur et al. 2005, allgather) ----
 * Step k (0 <= k < L) pairs new rank nr with nr ^ 2^k.  Before step k, nr holds the 2^k
 * new-rank blocks *first … *first + *n - 1 (the aligned group of 2^k containing nr); the
 * partner holds the adjacent aligned group, and after the step both hold the union. */
int pat_rd_partner(int newrank, int step);
void pat_rd_held(int newrank, int step, int *first, int *n);

/* ---- recursive halving with distance halving (Thakur et al., reduce-scatter) ----
 * Step k (0 <= k < L) pairs new rank nr with nr ^ (p2 >> (k+1)).  Before step k, nr is
 * responsible for the p2 >> k new-rank blocks starting at *first (the aligned group
 * containing nr); it sends the half that does not contain nr and keeps the other half.
 * After step L-1 it keeps exactly its own block nr. */
int pat_rh_partner(int newrank, int step, int p2);
void pat_rh_held(int newrank, int step, int p2, int *first, int *n);
void pat_rh_kept(int newrank, int step, int p2, int *first, int *n);   /* half kept */
void pat_rh_sent(int newrank, int step, int p2, int *first, int *n);   /* half sent */

/* ---- Bruck concatenation allgather (Bruck et al. 1997 "concatenation") ---------
 * ⌈lg p⌉ steps.  Slot i of a rank's work array holds the block of rank (rank + i) mod p.
 * Before step k, slots 0 … 2^k - 1 are filled; in step k a rank sends its first
 * pat_bruck_ag_count(k, p) slots to rank - 2^k and receives as many into slots 2^k … from
 * rank + 2^k. */
int pat_bruck_ag_steps(int p);
int pat_bruck_ag_count(int step, int p);     /* min(2^k, p - 2^k) */
int pat_bruck_ag_to(int rank, int step, int p);
int pat_bruck_ag_from(int rank, int step, int p);

/* ---- Bruck alltoall (Bruck et al. 1997, "index" with radix 2) ----------
 * Slot i (0 <= i < p) of rank r starts with r's block for rank (r + i) mod p.  In step k
 * (0 <= k < ⌈lg p⌉) every slot i with bit k set moves to rank r + 2^k (same slot); so after
 * the last step slot i of rank r holds the block rank (r - i) mod p sent to r.  A step's
 * message is its slots in increasing order: slot i is the pat_bruck_a2a_pos(i, k)-th of
 * the pat_bruck_a2a_nslots(k, p) slots it carries. */
int pat_bruck_a2a_steps(int p);
int pat_bruck_a2a_nslots(int step, int p);   /* slots i < p with bit k set */
int pat_bruck_a2a_maxslots(int p);           /* max over the steps */
int pat_bruck_a2a_pos(int slot, int step);   /* for a slot with bit k set */
int pat_bruck_a2a_to(int rank, int step, int p);
int pat_bruck_a2a_from(int rank, int step, int p);

/* ---- pairwise alltoall in place ---------------------------------------------------------
 * Step s = 1 … p-1 sends block rank + s and receives (overwrites) block rank - s; block
 * rank + s is overwritten in step p - s.  It must be saved to scratch first when
 * p - s <= s; pat_a2a_saved_slot gives its slot among the saved blocks (s - ⌈p/2⌉ … in
 * step order), -1 when it needs no saving. */
int pat_a2a_nsaved(int p);
int pat_a2a_saved_slot(int step, int p);

/* ---- binomial gather / scatter subtrees (patterns.h's binomial tree) -------------------
 * The subtree of rank is the relative ranks v … v + pat_binomial_subtree(rank, root, p) - 1.
 * In actual ranks, a relative range [v, v + n) is split where it wraps past rank p - 1
 * (relative rank p - root): pat_rel_split gives the length of its first part (n when it
 * does not wrap). */
int pat_binomial_subtree(int rank, int root, int p);
int pat_rel_split(int v, int n, int root, int p);

/* ---- recursive doubling scan (the doubling scan of MPICH's MPIR_Scan) --------------------
 * Step k pairs rank with rank ^ 2^k when that is < p, else -1 (no exchange).  A rank's
 * partial result before step k covers the ranks of its aligned group of 2^k (cut at p). */
int pat_scan_steps(int p);                   /* ⌈lg p⌉ */
int pat_scan_partner(int rank, int step, int p);
int pat_scan_last_step(int rank, int p);     /* the last step with a partner, -1 if none */

#endif
