/* patterns_nway.c — index math of the n-way dissemination; see patterns_nway.h. */
#include "algorithms/patterns_nway.h"

#include <limits.h>
#include <stdlib.h>

enum { MAX_ROUNDS = 31 };  /* k for P < 2^31 and n = 1 */

static long long ipow(long long b, int e) {
    long long r = 1;
    for (int i = 0; i < e; i++)
        r *= b;
    return r;
}

static int mod(long long a, int P) {
    long long r = a % P;
    return (int)(r < 0 ? r + P : r);
}

int nway_rounds(int n, int P) {
    int k = 0;
    for (long long w = 1; w < P; w *= n + 1)
        k++;
    return k;
}

long long nway_boundary_size(int n, int l, int j) {
    return l == 0 ? 1 : (long long)(j + 1) * ipow(n + 1, l - 1);
}

const char *nway_case_name(int kase) {
    static const char *const names[] = { "exact", "case 1", "case 2", "case 3",
                                         "case 4", "case 5", "base border" };
    return kase >= 0 && kase <= NWAY_BASE ? names[kase] : "not adaptable";
}

/* ---- the 5-tuple search (canonical order: exact, 3, 4, base border, 5, 2, 1) ---------- */

static bool set(nway_plan *pl, int kase, int s, int ls, int js, int lr, int jr, long long A,
                long long B) {
    long long P = (long long)(s - 1) * pl->M + A + pl->M - B;
    if (P != pl->P)
        return false;
    pl->kase = kase;
    pl->s = s, pl->lsnd = ls, pl->jsnd = js, pl->lrcv = lr, pl->jrcv = jr;
    pl->full = s - 1;
    pl->send_part = A;
    pl->drop_part = B;
    return true;
}

/* Cases 3 and 4: P = s·M (s-1 whole windows), P = s·M + j (sender s: newest j ranks). */
static bool find_simple(nway_plan *pl) {
    int n = pl->n;
    for (int s = 2; s <= n; s++)
        if (set(pl, NWAY_CASE3, s, 0, 0, 0, 0, 0, 0))
            return true;
    for (int s = 1; s <= n; s++)
        for (int j = 1; j <= n && j <= pl->M; j++)
            if (set(pl, NWAY_CASE4, s, 1, j, 0, 0, j, 0))
                return true;
    return false;
}

/* Base border (B = 0) and case 5 (B = 1): sender s sends up to g^s_l[j]. */
static bool find_sender_boundary(nway_plan *pl, int kase, long long B) {
    int n = pl->n, lmin = kase == NWAY_BASE ? 1 : 2;
    for (int s = 1; s <= n; s++)
        for (int l = lmin; l < pl->k; l++)
            for (int j = 1; j <= n; j++) {
                long long A = nway_boundary_size(n, l, j);
                if (A > n && set(pl, kase, s, l, j, 0, 0, A, B))
                    return true;
            }
    return false;
}

/* The boundary (l, j), 1 <= l < k, 1 <= j <= n, of size A; false if none.  There is at
 * most one: the sizes of level l are 2·b^(l-1) … b^l, apart from every other level's. */
static bool boundary_of(const nway_plan *pl, long long A, int *l, int *j) {
    long long w = 1;
    for (int ls = 1; ls < pl->k; ls++, w *= pl->n + 1)
        if (A >= 2 * w && A <= (pl->n + 1) * w) {
            *l = ls, *j = (int)(A / w) - 1;
            return A % w == 0;
        }
    return false;
}

/* Cases 2 (l_snd = 0: own data) and 1 (both boundaries; the sender's is the one boundary
 * that completes eq. (8), so searching it in order finds the same). */
static bool find_receiver_boundary(nway_plan *pl, bool own) {
    int n = pl->n, ls, js;
    for (int s = 1; s <= n; s++)
        for (int lr = 1; lr < pl->k; lr++)
            for (int jr = 1; jr <= n; jr++) {
                long long B = nway_boundary_size(n, lr, jr);
                if (own && set(pl, NWAY_CASE2, s, 0, 0, lr, jr, 1, B))
                    return true;
                if (!own && boundary_of(pl, pl->P - s * pl->M + B, &ls, &js) &&
                    set(pl, NWAY_CASE1, s, ls, js, lr, jr, nway_boundary_size(n, ls, js), B))
                    return true;
            }
    return false;
}

bool nway_plan_make(int n, int P, nway_plan *pl) {
    pl->n = n, pl->P = P;
    pl->k = 0, pl->M = 0;
    pl->kase = NWAY_NONE;
    pl->s = pl->lsnd = pl->lrcv = pl->jsnd = pl->jrcv = 0;
    pl->full = 0, pl->send_part = 0, pl->drop_part = 0;
    if (n < 1 || n > NWAY_MAX_N || P < 1)
        return false;                       /* (before nway_rounds: n = 0 never ends) */
    pl->k = nway_rounds(n, P);
    pl->M = pl->k ? ipow(n + 1, pl->k - 1) : 0;
    if (P == 1 || (long long)P == pl->M * (n + 1)) {
        pl->kase = NWAY_EXACT;
        pl->s = n, pl->full = P == 1 ? 0 : n;
        return true;
    }
    return find_simple(pl) || find_sender_boundary(pl, NWAY_BASE, 0) ||
           find_sender_boundary(pl, NWAY_CASE5, 1) || find_receiver_boundary(pl, true) ||
           find_receiver_boundary(pl, false);
}

int nway_default_n(int P) {
    nway_plan pl;
    int limit = P - 1 < NWAY_MAX_N ? P - 1 : NWAY_MAX_N;
    if (nway_plan_make(2, P, &pl) || nway_plan_make(3, P, &pl) || nway_plan_make(1, P, &pl))
        return pl.n;
    for (int n = 4; n <= limit; n++)
        if (nway_plan_make(n, P, &pl))
            return n;
    return 2;
}

/* ---- peers ---------------------------------------------------------------------------- */

int nway_to(int rank, int l, int i, int n, int P) {
    return mod(rank + (long long)i * ipow(n + 1, l - 1), P);
}

int nway_from(int rank, int l, int j, int n, int P) {
    return mod(rank - (long long)j * ipow(n + 1, l - 1), P);
}

int nway_last_peers(const nway_plan *pl) {
    return pl->full + (pl->send_part > 0);
}

/* ---- the canonical tree ----------------------------------------------------------------- */

/* The least h with [lo, lo+len) = block (h, lo / b^h); -1 if none. */
static int node_level(int n, int P, int lo, int len) {
    if (lo < 0 || len < 1 || lo + len > P)
        return -1;
    long long bh = 1;
    for (int h = 0; lo % bh == 0; h++, bh *= n + 1) {
        long long want = bh < P - lo ? bh : P - lo;
        if (len == want)
            return h;
        if (bh >= P)
            break;
    }
    return -1;
}

bool nway_is_node(int n, int P, int lo, int len) {
    return node_level(n, P, lo, len) >= 0;
}

int nway_children(int n, int P, nway_range node, nway_range *kids) {
    int h = node_level(n, P, node.lo, node.len);
    if (h < 1)
        return 0;
    int c = (int)ipow(n + 1, h - 1), nk = 0, end = node.lo + node.len;
    for (int x = node.lo; x < end; x += c) {
        kids[nk].lo = x;
        kids[nk++].len = end - x < c ? end - x : c;
    }
    return nk;
}

/* The node of level h at x: b^h ranks, cut short at P. */
static int node_size(const long long *pw, int h, int x, int P) {
    return (int)(pw[h] < P - x ? pw[h] : P - x);
}

/* Greedy maximal cover of the linear range [lo, lo+len) by T-nodes, appended to out: at
 * every x the node of the highest level h that x is aligned to (x % b^h = 0), that fits and
 * that is not above the root (b^(h-1) < P).  After a node of level h the next x is aligned
 * to b^h, so the search starts from h: down while it does not fit, else up.
 * pw = b^0 … b^k. */
static int cover(const long long *pw, int P, int lo, int len, nway_range *out) {
    int cnt = 0, end = lo + len, h = 0;
    for (int x = lo; x < end;) {
        while (x + node_size(pw, h, x, P) > end)
            h--;
        while (pw[h] < P && x + node_size(pw, h + 1, x, P) <= end && x % pw[h + 1] == 0)
            h++;
        out[cnt].lo = x;
        out[cnt].len = node_size(pw, h, x, P);
        x += out[cnt++].len;
    }
    return cnt;
}

static void add_split(long long *splits, int *ns, long long off, long long w) {
    if (off <= 0 || off >= w)
        return;
    for (int i = 0; i < *ns; i++)
        if (splits[i] == off)
            return;
    int i = *ns;
    while (i > 0 && splits[i - 1] > off) {
        splits[i] = splits[i - 1];
        i--;
    }
    splits[i] = off;
    (*ns)++;
}

int nway_pieces(const nway_plan *pl, int rank, int l, nway_range *out) {
    long long pw[MAX_ROUNDS + 1];
    pw[0] = 1;
    for (int h = 1; h <= pl->k; h++)
        pw[h] = pw[h - 1] * (pl->n + 1);
    long long w = pw[l];
    int start = mod(rank - w + 1, pl->P), ns = 0, cnt = 0;
    long long splits[5];
    add_split(splits, &ns, mod(-(long long)start, pl->P), w);
    add_split(splits, &ns, w - pl->send_part, w);
    add_split(splits, &ns, w - pl->drop_part, w);
    splits[ns] = w;
    long long prev = 0;
    for (int i = 0; i <= ns; i++) {
        cnt += cover(pw, pl->P, mod(start + prev, pl->P), (int)(splits[i] - prev), out + cnt);
        prev = splits[i];
    }
    return cnt;
}

int nway_max_pieces(const nway_plan *pl) {
    long long most = 8LL * pl->n * (pl->k + 1) + 4;
    return (int)(most < pl->P ? most : pl->P);
}

int nway_newest_count(const nway_range *pieces, int np, long long c) {
    long long sum = 0;
    int found = -1;
    for (int i = np - 1; i >= 0 && sum < c; i--) {
        sum += pieces[i].len;
        if (sum == c)
            found = np - i;
    }
    return c == 0 ? 0 : found;
}

int nway_newest_pieces(const nway_plan *pl, int rank, int l, long long c) {
    nway_range *p = malloc(sizeof *p * (size_t)nway_max_pieces(pl));
    int np = p ? nway_pieces(pl, rank, l, p) : 0, found = nway_newest_count(p, np, c);
    free(p);
    return found;
}

/* ---- merge plans ---------------------------------------------------------------------- */

enum { NO_NODE = INT_MIN };

typedef struct merge_ctx {
    int n;
    const nway_range *have;  /* in ring order, walked from `at` on */
    int nhave, at, taken;
    nway_merge *out;
    int nform, nkid;
} merge_ctx;

/* The index of the next held piece if it is r (then it is taken), else -1. */
static int take(merge_ctx *m, nway_range r) {
    if (m->taken == m->nhave)
        return -1;
    const nway_range *h = &m->have[m->at];
    if (h->lo != r.lo || h->len != r.len)
        return -1;
    int i = m->at;
    m->at = i + 1 == m->nhave ? 0 : i + 1;
    m->taken++;
    return i;
}

/* The children's size of a T-node of len >= 2 ranks: the largest power of n+1 below len
 * (its level is the least h with (n+1)^h >= len). */
static int child_size(int n, int len) {
    long long c = 1;
    while (c * (n + 1) < len)
        c *= n + 1;
    return (int)c;
}

/* Node r as a child code (have index i, or -1 - f for formed node f), appending what must
 * be formed; its depth in *depth; NO_NODE if impossible. */
static int form_node(merge_ctx *m, nway_range r, int *depth) {
    int at = take(m, r);
    *depth = 0;
    if (at >= 0)
        return at;
    if (r.len < 2)
        return NO_NODE;
    int codes[NWAY_MAX_N + 1], nk = 0, c = child_size(m->n, r.len), end = r.lo + r.len;
    for (int x = r.lo; x < end; x += c) {
        nway_range kid = { x, end - x < c ? end - x : c };
        int dk;
        codes[nk++] = form_node(m, kid, &dk);
        if (codes[nk - 1] == NO_NODE)
            return NO_NODE;
        *depth = dk > *depth ? dk : *depth;
    }
    nway_form *f = &m->out->form[m->nform];
    f->r = r, f->depth = ++*depth, f->first = m->nkid, f->nkids = nk;
    for (int i = 0; i < nk; i++)
        m->out->kid[m->nkid++] = codes[i];
    return -1 - m->nform++;
}

int nway_merge_plan(int n, const nway_range *have, int nhave, const nway_range *want,
                    int nwant, nway_merge *out) {
    merge_ctx m = { n, have, nhave, 0, 0, out, 0, 0 };
    while (nwant > 0 && m.at < nhave && have[m.at].lo != want[0].lo)
        m.at++;
    if (nwant > 0 && m.at == nhave)
        return -1;
    for (int i = 0; i < nwant; i++) {
        int depth;
        out->top[i] = form_node(&m, want[i], &depth);
        if (out->top[i] == NO_NODE)
            return -1;
    }
    return m.nform;
}
