/*
 * patterns_nway.h — index math of the n-way dissemination (End et al. 2016 §III-B):
 * peers per round, the 5-tuple that adapts the last round (Theorem 1), the canonical
 * reduction tree that makes every rank's result bitwise identical, and which partial
 * results (pieces) a rank holds, sends, keeps and forms in every round.  Pure functions,
 * tested against brute force in tests/unit/test_nway.c.
 *
 * Notation: b = n + 1; k = ⌈log_b P⌉ rounds; M = b^(k-1).  After round l (0 <= l < k)
 * rank p knows the window W_l(p) = the w_l = b^l ranks p - w_l + 1 … p (mod P); its
 * "newest c ranks" are p - c + 1 … p.  Round l (1 <= l <= k) sends to p + i·b^(l-1) and
 * receives from p - j·b^(l-1), i, j = 1 … n (eq. (1)).
 *
 * Sizes of the paper's boundaries (eqs. (5), (6)): boundary g_l[j] (l >= 1, 1 <= j <= n)
 * delimits the newest size(l, j) = (j+1)·b^(l-1) ranks (= n·Σ_{i<l-1} b^i + j·b^(l-1) + 1);
 * l = 0 stands for the rank's own data (size 1).
 *
 * The last round (Theorem 1): senders p - i·M, i = 1 … full, send their whole window,
 * sender p - (full+1)·M sends only its newest send_part ranks (0: no such sender), and
 * the receiver drops its newest drop_part ranks, so that
 *     P = full·M + send_part + (M - drop_part)              (= eq. (8)).
 */
#ifndef COLLIE_PATTERNS_NWAY_H
#define COLLIE_PATTERNS_NWAY_H

#include <stdbool.h>

enum nway_case {
    NWAY_NONE = -1,        /* not adaptable */
    NWAY_EXACT = 0,        /* P = (n+1)^k: no adaptation */
    NWAY_CASE1 = 1,        /* l_rcv, l_snd > 0 */
    NWAY_CASE2 = 2,        /* l_rcv > 0, l_snd = 0 */
    NWAY_CASE3 = 3,        /* l_rcv = l_snd = 0: P = s·M */
    NWAY_CASE4 = 4,        /* l_rcv = 0, l_snd = 1 */
    NWAY_CASE5 = 5,        /* l_rcv = 0, l_snd > 1: receiver drops its own data */
    NWAY_BASE = 6,         /* sender boundary = receiver's base border g_B */
};

#define NWAY_MAX_N 254     /* a tree node reduces n + 1 <= SCHED_MAX_SOURCES sources */

typedef struct nway_plan {
    int n, P, k;
    long long M;                    /* b^(k-1); 0 when k = 0 (P = 1) */
    int kase;                       /* enum nway_case */
    int s, lsnd, lrcv, jsnd, jrcv;  /* the 5-tuple (0 where the case leaves one open) */
    int full;                       /* last round: senders sending their whole window */
    long long send_part;            /* A: newest ranks sent by sender full + 1; 0 = none */
    long long drop_part;            /* B: newest ranks of its window the receiver drops */
} nway_plan;

/* ⌈log_{n+1} P⌉ (0 for P = 1). */
int nway_rounds(int n, int P);
/* (j+1)·(n+1)^(l-1) for l >= 1; 1 for l = 0. */
long long nway_boundary_size(int n, int l, int j);
/* The plan of (n, P); false (kase = NWAY_NONE) when Theorem 1 gives no tuple. */
bool nway_plan_make(int n, int P, nway_plan *pl);
const char *nway_case_name(int kase);
/* The adaptable n nearest to 2 (order 2, 3, 1, 4, 5, …, up to min(P-1, NWAY_MAX_N));
 * 2 for P <= 3. */
int nway_default_n(int P);

/* Peers of round l (1 <= l <= k): i-th target p + i·(n+1)^(l-1), j-th source. */
int nway_to(int rank, int l, int i, int n, int P);
int nway_from(int rank, int l, int j, int n, int P);
/* Last round (l = k): how many ranks rank sends to / receives from (full + [A > 0]). */
int nway_last_peers(const nway_plan *pl);

/* ---- the canonical tree T: aligned (n+1)-ary blocks over ranks 0 … P-1 ---------------
 * A node is a range [lo, lo+len) with lo = i·b^h and len = min(b^h, P - lo); its value
 * is the REDUCE of its children (the level-(h-1) blocks in it, in rank order) for the
 * least such h.  Every rank forms a node the same way, so results are bitwise identical. */
typedef struct nway_range {
    int lo, len;
} nway_range;

bool nway_is_node(int n, int P, int lo, int len);
/* Children of a node with len >= 2, in rank order; returns their number (2 … n+1). */
int nway_children(int n, int P, nway_range node, nway_range *kids);

/* The pieces rank holds after round l (0 <= l < k): the maximal T-nodes covering W_l(rank)
 * that cross neither rank 0 (wrap) nor the plan's cuts before the newest send_part and
 * drop_part ranks (so those parts are unions of pieces — the paper's "partial result
 * stored when the boundary is formed").  Oldest first; returns the count, at most
 * nway_max_pieces(pl) (and <= w_l). */
int nway_pieces(const nway_plan *pl, int rank, int l, nway_range *out);
/* A bound on nway_pieces' count for any rank and round: min(P, 8·n·(k+1) + 4) (each of the
 * <= 4 cut-free stretches takes <= n nodes per level on the way up and <= n on the way down,
 * levels 0 … k, plus one cut short at P). */
int nway_max_pieces(const nway_plan *pl);
/* How many of those pieces (the last ones) hold the newest c ranks; -1 if no boundary. */
int nway_newest_pieces(const nway_plan *pl, int rank, int l, long long c);
/* The same for a given piece list (oldest first). */
int nway_newest_count(const nway_range *pieces, int np, long long c);

/* ---- merge plans: T-nodes `want` from pieces `have` ------------------------------------
 * A node to form is the REDUCE of its children, given as codes: i for have[i], -1 - f for
 * form[f].  The plan lists the nodes to form children before parents (depth first over
 * want, children in rank order), each have-piece is a child at most once, and depth =
 * 1 + the largest depth of a formed child (have: 0). */
typedef struct nway_form {
    nway_range r;
    int depth;
    int first, nkids;       /* its children: kid[first … first+nkids) */
} nway_form;

typedef struct nway_merge {
    nway_form *form;        /* room for nhave entries */
    int *kid;               /* room for 2·nhave */
    int *top;               /* room for nwant: what each wanted node is (a code) */
} nway_merge;

/* The plan for want from have.  want: T-nodes, each next one starting where the previous
 * ends (mod P); have: pairwise disjoint pieces in ring order too (ascending mod P from any
 * of them on), so that the walk over want meets its held pieces one after the other and
 * needs no lookup.  Returns the number of nodes to form, or -1 when a wanted node is not
 * a union of have-pieces (taken in that order). */
int nway_merge_plan(int n, const nway_range *have, int nhave, const nway_range *want,
                    int nwant, nway_merge *out);

#endif
