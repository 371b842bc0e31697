/* patterns_colls.c — index math of the allgather … exscan algorithms (see patterns_colls.h). */
#include "algorithms/patterns_colls.h"
#include "algorithms/patterns.h"

static int mod(long long x, int p) { return (int)(((x % p) + p) % p); }

/* ---- recursive doubling ------------------------------------------------------------- */

int pat_rd_partner(int newrank, int step) { return newrank ^ (1 << step); }

void pat_rd_held(int newrank, int step, int *first, int *n) {
    *n = 1 << step;
    *first = newrank & ~(*n - 1);
}

/* ---- recursive halving, distance halving -------------------------------------------- */

int pat_rh_partner(int newrank, int step, int p2) { return newrank ^ (p2 >> (step + 1)); }

void pat_rh_held(int newrank, int step, int p2, int *first, int *n) {
    *n = p2 >> step;
    *first = newrank & ~(*n - 1);
}

void pat_rh_kept(int newrank, int step, int p2, int *first, int *n) {
    int f, len;
    pat_rh_held(newrank, step, p2, &f, &len);
    *n = len / 2;
    *first = f + (newrank & *n);
}

void pat_rh_sent(int newrank, int step, int p2, int *first, int *n) {
    int f, len;
    pat_rh_held(newrank, step, p2, &f, &len);
    *n = len / 2;
    *first = f + ((newrank & *n) ^ *n);
}

/* ---- Bruck allgather ---------------------------------------------------------------- */

int pat_bruck_ag_steps(int p) { return pat_log2_ceil(p); }

int pat_bruck_ag_count(int step, int p) {
    int d = 1 << step;
    return d < p - d ? d : p - d;
}

int pat_bruck_ag_to(int rank, int step, int p) { return mod((long long)rank - (1LL << step), p); }
int pat_bruck_ag_from(int rank, int step, int p) { return mod((long long)rank + (1LL << step), p); }

/* ---- Bruck alltoall ----------------------------------------------------------------- */

int pat_bruck_a2a_steps(int p) { return pat_log2_ceil(p); }

int pat_bruck_a2a_nslots(int step, int p) {
    int d = 1 << step, period = 2 * d;
    int full = (p / period) * d, rest = p % period - d;
    return full + (rest > 0 ? rest : 0);
}

int pat_bruck_a2a_maxslots(int p) {
    int m = 0;
    for (int k = 0; k < pat_bruck_a2a_steps(p); k++)
        if (pat_bruck_a2a_nslots(k, p) > m)
            m = pat_bruck_a2a_nslots(k, p);
    return m;
}

int pat_bruck_a2a_pos(int slot, int step) {
    int d = 1 << step;
    return (slot >> (step + 1)) * d + (slot & (d - 1));
}

int pat_bruck_a2a_to(int rank, int step, int p) { return mod((long long)rank + (1LL << step), p); }
int pat_bruck_a2a_from(int rank, int step, int p) { return mod((long long)rank - (1LL << step), p); }

/* ---- pairwise alltoall in place ----------------------------------------------------- */

int pat_a2a_nsaved(int p) { return p - (p + 1) / 2; }   /* steps ⌈p/2⌉ … p-1 */

int pat_a2a_saved_slot(int step, int p) {
    int lo = (p + 1) / 2;
    return step >= lo && step < p ? step - lo : -1;
}

/* ---- binomial subtrees -------------------------------------------------------------- */

int pat_binomial_subtree(int rank, int root, int p) {
    int v = mod((long long)rank - root, p);
    if (v == 0)
        return p;
    int low = v & -v;
    return low < p - v ? low : p - v;
}

int pat_rel_split(int v, int n, int root, int p) {
    int wrap = p - root;                 /* relative rank of actual rank 0 */
    return (root > 0 && v < wrap && v + n > wrap) ? wrap - v : n;
}

/* ---- recursive doubling scan -------------------------------------------------------- */

int pat_scan_steps(int p) { return pat_log2_ceil(p); }

int pat_scan_partner(int rank, int step, int p) {
    int q = rank ^ (1 << step);
    return q < p ? q : -1;
}

int pat_scan_last_step(int rank, int p) {
    int last = -1;
    for (int k = 0; k < pat_scan_steps(p); k++)
        if (pat_scan_partner(rank, k, p) >= 0)
            last = k;
    return last;
}
