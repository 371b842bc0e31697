/*
 * nway_dissemination.c — allreduce by the adapted n-way dissemination.
 *
 * Source: End, Mohr, Simmendinger & Knüpfer 2016 (IJASM 9(3&4)), §III-B: eqs. (1)–(14),
 *   Table I, Figs. 2–3, Theorem 1 (after Hoefler et al. 2006 and Hensgen et al. 1988).
 * Steps: b = n + 1, k = ⌈log_b P⌉, M = b^(k-1).  Round l < k: rank p sends what it knows
 *   about its window of the b^(l-1) ranks ending at p to p + i·b^(l-1) and receives the
 *   same from p - j·b^(l-1), i, j = 1…n (eq. (1)).  Round k is adapted for P ≠ b^k by the
 *   5-tuple (s, l_snd, l_rcv, j_snd, j_rcv) of Theorem 1, precomputed per (n, P) by
 *   nway_plan_make (patterns_nway.c): senders p - i·M (i < s) send their whole window,
 *   sender p - s·M only its newest ranks up to boundary g^s_{l_snd}[j_snd] (own data if
 *   l_snd = 0), the receiver leaves out its newest ranks up to g_{l_rcv}[j_rcv] (none, or
 *   its own data, in cases 4 / 5 / base border) — every input is combined exactly once.
 *   All five cases and the base-border case are implemented; case 3 with s = 1 cannot occur
 *   (k is minimal).  Table: docs/nway_table.md.
 * Bitwise identical results (not in the paper; the paper's S_l differ from rank to rank,
 *   so its ranks end with differently associated sums — and for P ≠ b^k windows wrap
 *   around rank 0, so operands leave rank order).  Here a rank does not fold everything
 *   into one partial result: it keeps its window as a list of "pieces", the maximal nodes
 *   of one fixed tree T (aligned (n+1)-ary blocks of ranks 0…P-1, each node the REDUCE of
 *   its ≤ n+1 children in rank order) that cover the window without crossing rank 0 and
 *   without crossing the two boundaries of the adapted last round.  A message is those
 *   pieces (one PUT each, oldest first); the receiver forms every T-node it now holds
 *   completely (local rounds after the communication round), and after round k forms the
 *   root of T.  Every node is computed from the same children in the same order wherever
 *   it is computed, so all ranks hold the same expression, in rank order.  The pieces at
 *   the boundaries are exactly the paper's partial results "stored when the boundary is
 *   formed": the cut keeps them apart, and the last round sends / leaves them out.
 *   The price: a message carries 1 … ~2n·l pieces instead of one vector (see the table).
 * Rounds: k communication rounds, each followed by ≤ ⌈log_b P⌉ local merge rounds.
 * Bytes sent per rank: Σ_l n·c_l·m (m = vector bytes, c_l = pieces of the window after
 *   round l-1, c_0 = 1, c_l ≤ b^l); P = b^k and n = P-1: (P-1)·m.
 * Restrictions: any op (non-commutative fine, not idempotent-only: exactly once).  Only
 *   (n, P) adaptable by Theorem 1 (docs/nway_table.md).  Parameter n (1…254): when given
 *   and (n, P) is not adaptable the algorithm DECLINES (the selector moves on to the next
 *   algorithm); when not given it PICKS the adaptable n nearest to 2 (order 2, 3, 1, 4, 5,
 *   …; n = P-1 is always adaptable, so some n is always found).
 * Scratch: (live pieces)·m, slots reused after their last round.
 * Cost: T = Σ_{l=1..k} (n·c_{l-1}·α + n·c_{l-1}·m·β) + (P-1)·m·γ_eff, with
 *   γ_eff ≤ γ·(b/n)·(number of T-nodes formed)/(P-1); for P = b^k, c ≡ 1:
 *   T = k·(nα + n·m·β + n·m·γ), the paper's formula.
 */
#include <stdlib.h>
#include "algorithms/algorithm.h"
#include "algorithms/patterns_nway.h"
#include "collie.h"

typedef struct piece {
    nway_range r;
    int slot;               /* TMP slot, -1: own input (SEND), -2: the result (RECV) */
} piece;

typedef struct builder {
    collie_schedule *s;
    const collie_coll_args *a;
    nway_plan pl;
    piece *cur, *have;      /* held pieces; pieces available in this round */
    int ncur, nhave;
    nway_range *tmp, *form; /* scratch for piece lists and merge plans */
    int *depth;
    int *last_use;          /* per slot: last round reading or writing it; -1 when free */
    bool *live;
    int nslots, cap_slots, round;
} builder;

static sched_ref ref_of(const builder *b, int slot) {
    if (slot == -1)
        return sched_at(SBUF_SEND, 0);
    if (slot == -2)
        return sched_at(SBUF_RECV, 0);
    return sched_at(SBUF_TMP, (uint64_t)slot * b->a->bytes);
}

static void use(builder *b, int slot) {
    if (slot >= 0)
        b->last_use[slot] = b->round;
}

static int alloc_slot(builder *b) {
    int i = 0;
    while (i < b->nslots && (b->live[i] || b->last_use[i] >= b->round))
        i++;
    if (i == b->cap_slots) {
        b->s->error = COLLIE_ERR_INTERNAL;
        return 0;
    }
    if (i == b->nslots) {
        b->nslots++;
        sched_need_tmp(b->s, (uint64_t)b->nslots * b->a->bytes);
    }
    b->live[i] = true;
    use(b, i);
    return i;
}

static void begin_round(builder *b) {
    sched_round_begin(b->s);
    b->round++;
}

static void put_pieces(builder *b, int peer, int first) {
    for (int i = first; i < b->ncur; i++) {
        sched_put(b->s, peer, ref_of(b, b->cur[i].slot), b->a->bytes);
        use(b, b->cur[i].slot);
    }
}

/* Receives the pieces of q's window after round l, from its piece `first` on. */
static void recv_pieces(builder *b, int q, int l, int first) {
    int np = nway_pieces(&b->pl, q, l, b->tmp);
    for (int i = first; i < np; i++) {
        int slot = alloc_slot(b);
        sched_recv(b->s, q, ref_of(b, slot), b->a->bytes);
        b->have[b->nhave].r = b->tmp[i];
        b->have[b->nhave++].slot = slot;
    }
}

static int find_piece(const piece *list, int n, nway_range r) {
    for (int i = 0; i < n; i++)
        if (list[i].r.lo == r.lo && list[i].r.len == r.len)
            return i;
    return -1;
}

/* One REDUCE forming node r from its children (all in have by now). */
static void form_one(builder *b, nway_range r, int dst_slot) {
    nway_range kids[NWAY_MAX_N + 1];
    sched_ref srcs[NWAY_MAX_N + 1];
    int nk = nway_children(b->pl.n, b->pl.P, r, kids);
    for (int i = 0; i < nk; i++) {
        int at = find_piece(b->have, b->nhave, kids[i]);
        if (at < 0) {
            b->s->error = COLLIE_ERR_INTERNAL;
            return;
        }
        srcs[i] = ref_of(b, b->have[at].slot);
        use(b, b->have[at].slot);
    }
    sched_reduce(b->s, ref_of(b, dst_slot), srcs, nk, b->a->bytes);
}

/* Forms the T-nodes `want` from have, depth by depth, one local round each; the root goes
 * to RECV.  Then want (with their slots) becomes cur and unused pieces are freed. */
static void merge(builder *b, const nway_range *want, int nwant, bool root) {
    nway_range *have_r = b->tmp;
    for (int i = 0; i < b->nhave; i++)
        have_r[i] = b->have[i].r;
    int nf = nway_merge_plan(b->pl.n, b->pl.P, have_r, b->nhave, want, nwant, b->form, b->depth);
    if (nf < 0) {
        b->s->error = COLLIE_ERR_INTERNAL;
        return;
    }
    for (int d = 1, more = nf > 0; more; d++) {
        more = 0;
        begin_round(b);
        for (int i = 0; i < nf; i++) {
            more |= b->depth[i] > d;
            if (b->depth[i] != d)
                continue;
            int slot = root && b->form[i].len == b->pl.P ? -2 : alloc_slot(b);
            form_one(b, b->form[i], slot);
            b->have[b->nhave].r = b->form[i];
            b->have[b->nhave++].slot = slot;
        }
    }
    for (int i = 0; i < b->nhave; i++)
        if (b->have[i].slot >= 0)
            b->live[b->have[i].slot] = false;
    b->ncur = 0;
    for (int i = 0; i < nwant; i++) {
        int at = find_piece(b->have, b->nhave, want[i]);
        if (at < 0) {
            b->s->error = COLLIE_ERR_INTERNAL;
            return;
        }
        b->cur[b->ncur] = b->have[at];
        if (b->cur[b->ncur].slot >= 0)
            b->live[b->cur[b->ncur].slot] = true;
        b->ncur++;
    }
}

/* Round l < k: whole windows to and from n peers each. */
static void round_full(builder *b, int l) {
    const nway_plan *pl = &b->pl;
    begin_round(b);
    for (int i = 1; i <= pl->n; i++)
        put_pieces(b, nway_to(b->a->rank, l, i, pl->n, pl->P), 0);
    b->nhave = 0;
    for (int j = 1; j <= pl->n; j++)
        recv_pieces(b, nway_from(b->a->rank, l, j, pl->n, pl->P), l - 1, 0);
    for (int i = 0; i < b->ncur; i++)
        b->have[b->nhave++] = b->cur[i];
    nway_range *want = b->form + 2 * pl->P;   /* past the merge plan's room */
    int nw = nway_pieces(pl, b->a->rank, l, want);
    merge(b, want, nw, false);
}

/* Round k, adapted by the plan (Theorem 1). */
static void round_last(builder *b) {
    const nway_plan *pl = &b->pl;
    int k = pl->k, p = b->a->rank, n = pl->n;
    begin_round(b);
    for (int i = 1; i <= nway_last_peers(pl); i++) {
        int first = 0;
        if (i > pl->full)
            first = b->ncur - nway_newest_pieces(pl, p, k - 1, pl->send_part);
        put_pieces(b, nway_to(p, k, i, n, pl->P), first);
    }
    b->nhave = 0;
    for (int j = 1; j <= nway_last_peers(pl); j++) {
        int q = nway_from(p, k, j, n, pl->P), first = 0;
        if (j > pl->full)
            first = nway_pieces(pl, q, k - 1, b->tmp) -
                    nway_newest_pieces(pl, q, k - 1, pl->send_part);
        recv_pieces(b, q, k - 1, first);
    }
    int keep = b->ncur - nway_newest_pieces(pl, p, k - 1, pl->drop_part);
    for (int i = 0; i < keep; i++)
        b->have[b->nhave++] = b->cur[i];
    nway_range root = { 0, pl->P };
    merge(b, &root, 1, true);
}

static bool alloc_builder(builder *b, int P) {
    size_t np = (size_t)P + 2;
    b->cur = malloc(np * sizeof *b->cur);
    b->have = malloc(3 * np * sizeof *b->have);
    b->tmp = malloc(np * sizeof *b->tmp);
    b->form = malloc(3 * np * sizeof *b->form);
    b->depth = malloc(2 * np * sizeof *b->depth);
    b->last_use = malloc(5 * np * sizeof *b->last_use);
    b->live = calloc(5 * np, sizeof *b->live);
    b->cap_slots = 5 * (int)np;
    return b->cur && b->have && b->tmp && b->form && b->depth && b->last_use && b->live;
}

static void free_builder(builder *b) {
    free(b->cur), free(b->have), free(b->tmp), free(b->form);
    free(b->depth), free(b->last_use), free(b->live);
}

static int chosen_n(const collie_coll_args *a) {
    return (int)collie_param(&a->params, "n", nway_default_n(a->size));
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    builder b = { .s = s, .a = a, .round = -1 };
    if (!nway_plan_make(chosen_n(a), a->size, &b.pl) || !alloc_builder(&b, a->size)) {
        s->error = b.pl.kase == NWAY_NONE ? COLLIE_ERR_INTERNAL : COLLIE_ERR_NOMEM;
        free_builder(&b);
        return;
    }
    b.cur[0].r.lo = a->rank, b.cur[0].r.len = 1, b.cur[0].slot = -1;
    b.ncur = 1;
    for (int l = 1; l < b.pl.k && !s->error; l++)
        round_full(&b, l);
    if (!s->error)
        round_last(&b);
    free_builder(&b);
}

static bool accepts(const collie_coll_args *a, const char **why) {
    long long n = collie_param(&a->params, "n", 2);
    nway_plan pl;
    if (n < 1 || n > NWAY_MAX_N) {
        *why = "parameter n must be 1…254";
        return false;
    }
    if (!nway_plan_make(chosen_n(a), a->size, &pl)) {
        *why = "(n, P) is not adaptable by End 2016 Theorem 1 (see docs/nway_table.md); "
               "leave n unset to pick the nearest adaptable n";
        return false;
    }
    return true;
}

const collie_algorithm collie_algo_allreduce_nway_dissemination = {
    .name = "nway_dissemination",
    .coll = COLL_ALLREDUCE,
    .needs = 0,
    .summary = "adapted n-way dissemination, n peers per round, exactly once, canonical "
               "tree for identical results (End 2016 §III-B); parameter n",
    .accepts = accepts,
    .build = build,
};
