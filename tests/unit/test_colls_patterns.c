/*
 * test_colls_patterns.c — the index math of src/algorithms/patterns_colls.c (allgather,
 * reduce_scatter, alltoall, gather/scatter, scan) against brute-force definitions and
 * simulations of what the algorithms do with it, for team sizes 1…64.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "algorithms/patterns.h"
#include "algorithms/patterns_colls.h"
#include "check.h"

#define MAXP 64

static uint64_t range_mask(int first, int n) {
    uint64_t m = 0;
    for (int i = first; i < first + n; i++)
        m |= 1ULL << i;
    return m;
}

static uint64_t full_mask(int n) { return n == 64 ? ~0ULL : (1ULL << n) - 1; }

/* ---- recursive doubling: holdings grow by the partner's, ranges as declared ---------- */
static void test_rd(int p) {
    int L = pat_log2_floor(p), p2 = 1 << L;
    uint64_t hold[MAXP];
    for (int i = 0; i < p2; i++)
        hold[i] = 1ULL << i;
    for (int k = 0; k < L; k++) {
        uint64_t next[MAXP];
        for (int i = 0; i < p2; i++) {
            int f, n, q = pat_rd_partner(i, k);
            pat_rd_held(i, k, &f, &n);
            check(q >= 0 && q < p2 && pat_rd_partner(q, k) == i, "rd_partner(%d, %d)", i, k);
            check(hold[i] == range_mask(f, n), "rd_held(%d, %d) p2 %d", i, k, p2);
            check((hold[i] & hold[q]) == 0, "rd: %d and %d overlap at step %d", i, q, k);
            next[i] = hold[i] | hold[q];
        }
        memcpy(hold, next, sizeof next);
    }
    for (int i = 0; i < p2; i++)
        check(hold[i] == full_mask(p2), "rd: new rank %d incomplete (p %d)", i, p);
    /* new ranks in order stand for all original ranks in order */
    int covered = 0;
    for (int i = 0; i < p2; i++) {
        check(pat_fold_first(i, p) == covered, "fold_first(%d, %d)", i, p);
        covered = pat_fold_first(i + 1, p);
    }
    check(covered == p, "fold_first(%d, %d) = %d, want %d", p2, p, covered, p);
}

/* ---- recursive halving: what one sends is what its partner keeps; ends with itself --- */
static void test_rh(int p) {
    int L = pat_log2_floor(p), p2 = 1 << L;
    uint64_t resp[MAXP];
    for (int i = 0; i < p2; i++)
        resp[i] = full_mask(p2);
    for (int k = 0; k < L; k++) {
        for (int i = 0; i < p2; i++) {
            int q = pat_rh_partner(i, k, p2), f, n, kf, kn, sf, sn, qf, qn;
            check(q >= 0 && q < p2 && pat_rh_partner(q, k, p2) == i && q != i,
                  "rh_partner(%d, %d, %d)", i, k, p2);
            pat_rh_held(i, k, p2, &f, &n);
            pat_rh_kept(i, k, p2, &kf, &kn);
            pat_rh_sent(i, k, p2, &sf, &sn);
            pat_rh_kept(q, k, p2, &qf, &qn);
            uint64_t held = range_mask(f, n), kept = range_mask(kf, kn), sent = range_mask(sf, sn);
            check(resp[i] == held, "rh_held(%d, %d, %d)", i, k, p2);
            check((kept | sent) == held && !(kept & sent) && (kept >> i & 1),
                  "rh kept/sent (%d, %d, %d)", i, k, p2);
            check(sent == range_mask(qf, qn) && (sent >> q & 1), "rh: %d sends %d what it keeps",
                  i, q);
            check(resp[q] == held, "rh: partners %d, %d hold different blocks", i, q);
        }
        for (int i = 0; i < p2; i++) {
            int kf, kn;
            pat_rh_kept(i, k, p2, &kf, &kn);
            resp[i] = range_mask(kf, kn);
        }
    }
    for (int i = 0; i < p2; i++)
        check(resp[i] == 1ULL << i, "rh: new rank %d ends with %llx", i,
              (unsigned long long)resp[i]);
}

/* ---- Bruck allgather: slot i of rank r ends with block r+i ---------------------------- */
static void test_bruck_ag(int p) {
    static int slot[MAXP][MAXP];
    int total = 0, steps = 0;
    for (int r = 0; r < p; r++)
        for (int i = 0; i < p; i++)
            slot[r][i] = i == 0 ? r : -1;
    for (int d = 1; d < p; d *= 2)
        steps++;
    check(pat_bruck_ag_steps(p) == steps, "bruck_ag_steps(%d)", p);
    for (int k = 0; k < pat_bruck_ag_steps(p); k++) {
        int d = 1 << k, cnt = pat_bruck_ag_count(k, p);
        check(cnt == (d < p - d ? d : p - d) && cnt > 0, "bruck_ag_count(%d, %d)", k, p);
        static int next[MAXP][MAXP];
        memcpy(next, slot, sizeof next);
        for (int r = 0; r < p; r++) {
            int to = pat_bruck_ag_to(r, k, p);
            check(to == ((r - d) % p + p) % p && pat_bruck_ag_from(to, k, p) == r,
                  "bruck_ag_to/from(%d, %d, %d)", r, k, p);
            for (int i = 0; i < cnt; i++) {
                check(slot[r][i] >= 0 && next[to][d + i] < 0, "bruck_ag: slot %d of %d", i, r);
                next[to][d + i] = slot[r][i];
            }
        }
        memcpy(slot, next, sizeof next);
        total += cnt;
    }
    check(total == p - 1, "bruck_ag: %d blocks moved, want %d", total, p - 1);
    for (int r = 0; r < p; r++)
        for (int i = 0; i < p; i++)
            check(slot[r][i] == (r + i) % p, "bruck_ag: rank %d slot %d = %d (p %d)", r, i,
                  slot[r][i], p);
}

/* ---- Bruck alltoall: slot i of rank r ends with the block from rank r-i -------------- */
static void test_bruck_a2a(int p) {
    static int src[MAXP][MAXP], dst[MAXP][MAXP];
    for (int r = 0; r < p; r++)
        for (int i = 0; i < p; i++) {
            src[r][i] = r;
            dst[r][i] = (r + i) % p;
        }
    check(pat_bruck_a2a_steps(p) == pat_log2_ceil(p), "bruck_a2a_steps(%d)", p);
    int maxs = 0;
    for (int k = 0; k < pat_bruck_a2a_steps(p); k++) {
        int n = 0;
        for (int i = 0; i < p; i++)
            if ((i >> k) & 1)
                check(pat_bruck_a2a_pos(i, k) == n++, "bruck_a2a_pos(%d, %d)", i, k);
        check(pat_bruck_a2a_nslots(k, p) == n, "bruck_a2a_nslots(%d, %d) = %d, want %d", k, p,
              pat_bruck_a2a_nslots(k, p), n);
        maxs = n > maxs ? n : maxs;
        static int nsrc[MAXP][MAXP], ndst[MAXP][MAXP];
        memcpy(nsrc, src, sizeof nsrc);
        memcpy(ndst, dst, sizeof ndst);
        for (int r = 0; r < p; r++) {
            int to = pat_bruck_a2a_to(r, k, p);
            check(to == (r + (1 << k)) % p && pat_bruck_a2a_from(to, k, p) == r,
                  "bruck_a2a_to/from(%d, %d, %d)", r, k, p);
            for (int i = 0; i < p; i++)
                if ((i >> k) & 1) {
                    nsrc[to][i] = src[r][i];
                    ndst[to][i] = dst[r][i];
                }
        }
        memcpy(src, nsrc, sizeof nsrc);
        memcpy(dst, ndst, sizeof ndst);
    }
    check(pat_bruck_a2a_maxslots(p) == maxs, "bruck_a2a_maxslots(%d)", p);
    for (int r = 0; r < p; r++)
        for (int i = 0; i < p; i++)
            check(dst[r][i] == r && src[r][i] == ((r - i) % p + p) % p,
                  "bruck_a2a: rank %d slot %d holds %d->%d (p %d)", r, i, src[r][i], dst[r][i],
                  p);
}

/* ---- pairwise alltoall in place: save exactly what is overwritten before it is sent -- */
static void test_a2a_saved(int p) {
    int n = 0;
    for (int s = 1; s < p; s++) {
        int over = -1;        /* the step receiving (overwriting) block rank+s */
        for (int t = 1; t < p; t++)
            if (pat_pairwise_from(0, t, p) == pat_pairwise_to(0, s, p))
                over = t;
        bool save = over <= s;
        check(pat_a2a_saved_slot(s, p) == (save ? n : -1), "a2a_saved_slot(%d, %d)", s, p);
        n += save;
    }
    check(pat_a2a_nsaved(p) == n, "a2a_nsaved(%d) = %d, want %d", p, pat_a2a_nsaved(p), n);
}

/* ---- binomial subtrees: descendants are a relative range, children tile it ----------- */
static void test_subtrees(int p) {
    for (int root = 0; root < p; root++)
        for (int r = 0; r < p; r++) {
            int v = (r - root + p) % p, n = pat_binomial_subtree(r, root, p);
            uint64_t desc = 0;
            for (int q = 0; q < p; q++) {
                int x = q;
                while (x >= 0 && x != r)
                    x = pat_binomial_parent(x, root, p);
                if (x == r)
                    desc |= 1ULL << ((q - root + p) % p);
            }
            check(desc == range_mask(v, n), "binomial_subtree(%d, %d, %d)", r, root, p);
            int next = v + 1;
            for (int i = 0; i < pat_binomial_nchildren(r, root, p); i++) {
                int c = pat_binomial_child(r, root, p, i);
                check((c - root + p) % p == next, "binomial child %d of %d (%d, %d)", i, r,
                      root, p);
                next += pat_binomial_subtree(c, root, p);
            }
            check(next == v + n, "binomial children of %d don't tile (%d, %d)", r, root, p);
            int first = n;     /* where actual ranks stop increasing */
            for (int t = 1; t < n && first == n; t++)
                if ((v + t + root) % p < (v + t - 1 + root) % p)
                    first = t;
            check(pat_rel_split(v, n, root, p) == first, "rel_split(%d, %d, %d, %d)", v, n,
                  root, p);
        }
}

/* ---- scan: simulate parts and prefixes as rank intervals ----------------------------- */
static void test_scan(int p) {
    int lo[MAXP], hi[MAXP], pre_lo[MAXP], steps = 0;
    for (int d = 1; d < p; d *= 2)
        steps++;
    check(pat_scan_steps(p) == steps, "scan_steps(%d)", p);
    for (int r = 0; r < p; r++) {
        lo[r] = hi[r] = pre_lo[r] = r;
        int last = -1;
        for (int k = 0; k < steps; k++)
            if ((r ^ (1 << k)) < p)
                last = k;
        check(pat_scan_last_step(r, p) == last, "scan_last_step(%d, %d)", r, p);
    }
    for (int k = 0; k < steps; k++) {
        int nlo[MAXP], nhi[MAXP];
        memcpy(nlo, lo, sizeof nlo);
        memcpy(nhi, hi, sizeof nhi);
        for (int r = 0; r < p; r++) {
            int q = pat_scan_partner(r, k, p);
            check(q == ((r ^ (1 << k)) < p ? (r ^ (1 << k)) : -1), "scan_partner(%d, %d, %d)",
                  r, k, p);
            if (q < 0)
                continue;
            /* what the builder sends and receives agrees between the partners */
            bool r_sends = q > r || k < pat_scan_last_step(q, p);
            bool q_recvs = r < q || k < pat_scan_last_step(q, p);
            check(r_sends == q_recvs, "scan: %d sends to %d: %d, received: %d", r, q, r_sends,
                  q_recvs);
            bool r_recvs = q < r || k < pat_scan_last_step(r, p);
            if (!r_recvs)
                continue;
            if (q < r) {
                check(hi[q] + 1 == lo[r] && hi[q] + 1 == pre_lo[r], "scan: %d's part not below %d", q, r);
                nlo[r] = lo[q];
                pre_lo[r] = lo[q];
            } else {
                check(hi[r] + 1 == lo[q], "scan: %d's part not above %d", q, r);
                nhi[r] = hi[q];
            }
        }
        memcpy(lo, nlo, sizeof nlo);
        memcpy(hi, nhi, sizeof nhi);
    }
    for (int r = 0; r < p; r++)
        check(pre_lo[r] == 0, "scan: rank %d's prefix starts at %d (p %d)", r, pre_lo[r], p);
}

int main(void) {
    for (int p = 1; p <= MAXP; p++) {
        test_rd(p);
        test_rh(p);
        test_bruck_ag(p);
        test_bruck_a2a(p);
        test_a2a_saved(p);
        test_subtrees(p);
        test_scan(p);
    }
    if (failures)
        fprintf(stderr, "test_colls_patterns: %d failures\n", failures);
    else
        printf("test_colls_patterns: ok\n");
    return failures ? 1 : 0;
}
