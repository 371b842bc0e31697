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
 *   pieces, oldest first: for vectors up to CP_PACK_MAX_BYTES (4 KiB) one PUT, as in the
 *   paper (a local round before the communication round gathers them into consecutive
 *   slots unless they already are), for longer vectors one PUT per piece (no copy); the
 *   receiver forms every T-node it now holds completely (local rounds after the
 *   communication round), and after round k forms the root of T.  Every node is computed from the same children in the same order wherever
 *   it is computed, so all ranks hold the same expression, in rank order.  The pieces at
 *   the boundaries are exactly the paper's partial results "stored when the boundary is
 *   formed": the cut keeps them apart, and the last round sends / leaves them out.
 *   The price: a message carries 1 … ~2n·l pieces instead of one vector (see the table).
 * Rounds: k communication rounds, each preceded by ≤ 1 local gather round (short vectors)
 *   and followed by ≤ ⌈log_b P⌉ local merge rounds.
 * Bytes sent per rank: Σ_l n·c_l·m (m = vector bytes, c_l = pieces of the window after
 *   round l-1, c_0 = 1, c_l ≤ b^l); P = b^k and n = P-1: (P-1)·m.
 * Restrictions: any op (non-commutative fine, not idempotent-only: exactly once).  Only
 *   (n, P) adaptable by Theorem 1 (docs/nway_table.md).  Parameter n (1…254): when given
 *   and (n, P) is not adaptable the algorithm DECLINES (the selector moves on to the next
 *   algorithm); when not given it PICKS the adaptable n nearest to 2 (order 2, 3, 1, 4, 5,
 *   …; n = P-1 is always adaptable, so some n is always found).
 * Scratch: (live pieces + gathered copies)·m, slots reused after their last round.
 * Cost (short vectors): T = Σ_{l=1..k} (n·α + c_{l-1}·m·copy + n·c_{l-1}·m·β) +
 *   (P-1)·m·γ_eff, with γ_eff ≤ γ·(b/n)·(number of T-nodes formed)/(P-1); long vectors
 *   pay n·c_{l-1}·α per round and no copy.  For P = b^k, c ≡ 1: T = k·(nα + n·m·β + n·m·γ),
 *   the paper's formula.
 */
#include <stdint.h>
#include <stdlib.h>
#include "algorithms/algorithm.h"
#include "algorithms/canonical_pieces.h"
#include "algorithms/patterns_nway.h"
#include "collie.h"

/* Piece lists: ranges with their places (slot: TMP slot, -1: own input (SEND), -2: the
 * result (RECV)).  Every array is sized by what a rank holds, not by P: a piece list has
 * at most nway_max_pieces entries; stage, have, the merge plan and the slots grow on
 * demand. */
typedef struct builder {
    collie_schedule *s;
    const collie_coll_args *a;
    nway_plan pl;
    nway_range *cur_r, *want, *tmp;
    int *cur_slot, ncur;        /* held pieces (the window after the last round) */
    int *send_slot;             /* where cur's pieces are sent from (gathered or not) */
    bool packed;                /* short vector: one PUT per message (see put_pieces) */
    bool gathered;              /* send_slot are copies, freed after the round */
    nway_range *stage_r;        /* the pieces received in this round, in receive order */
    int *stage_slot, nstage;
    int blk_end[NWAY_MAX_N + 1], nblk; /* per sender: where its pieces end in stage */
    nway_range *have_r;         /* the pieces available in this round, in ring order */
    int *have_slot, nhave, cap_have;
    nway_merge plan;
    int *form_slot;             /* per node of the merge plan */
    int *last_use;              /* per slot: last round reading or writing it */
    uint64_t *free_bits;        /* per slot: 1 when it holds no live piece */
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

static void set_live(builder *b, int slot, bool live) {
    if (slot < 0)
        return;
    uint64_t bit = (uint64_t)1 << (slot % 64);
    if (live)
        b->free_bits[slot / 64] &= ~bit;
    else
        b->free_bits[slot / 64] |= bit;
}

static bool grow(void **arr, int cap, size_t elem) {
    void *p = realloc(*arr, (size_t)cap * elem);
    if (p)
        *arr = p;
    return p != NULL;
}

/* Room for one more slot (arrays doubled, in whole words of free_bits). */
static bool room_slot(builder *b) {
    if (b->nslots < b->cap_slots)
        return true;
    int cap = b->cap_slots ? 2 * b->cap_slots : 64;
    if (!grow((void **)&b->last_use, cap, sizeof *b->last_use) ||
        !grow((void **)&b->free_bits, cap / 64, sizeof *b->free_bits)) {
        b->s->error = COLLIE_ERR_NOMEM;
        return false;
    }
    for (int w = b->cap_slots / 64; w < cap / 64; w++)
        b->free_bits[w] = 0;
    b->cap_slots = cap;
    return true;
}

/* The lowest slot that holds no live piece and was not touched in this round; -1: none. */
static int free_slot(const builder *b) {
    for (int w = 0; w * 64 < b->nslots; w++)
        for (uint64_t bits = b->free_bits[w]; bits; bits &= bits - 1) {
            int at = w * 64 + __builtin_ctzll(bits);
            if (b->last_use[at] < b->round)
                return at;
        }
    return -1;
}

static bool slot_free(const builder *b, int at) {
    return (b->free_bits[at / 64] >> (at % 64) & 1) && b->last_use[at] < b->round;
}

/* The lowest run of c consecutive slots that hold no live piece and were not touched in
 * this round (or a run reaching past the end, extended by new slots), taken; its first
 * slot, 0 when out of memory (the schedule's error is set). */
static int alloc_run(builder *b, int c) {
    int start = b->nslots, run = 0;
    for (int i = 0; i < b->nslots && run < c; i++) {
        if (!slot_free(b, i))
            run = 0;
        else if (run++ == 0)
            start = i;
    }
    if (run == 0)
        start = b->nslots;
    while (b->nslots < start + c) {
        if (!room_slot(b))
            return 0;
        b->nslots++;
    }
    sched_need_tmp(b->s, (uint64_t)b->nslots * b->a->bytes);
    for (int i = start; i < start + c; i++) {
        set_live(b, i, true);
        use(b, i);
    }
    return start;
}

/* That slot, else a new one. */
static int alloc_slot(builder *b) {
    int i = free_slot(b);
    if (i < 0) {
        if (!room_slot(b))
            return 0;
        i = b->nslots++;
        sched_need_tmp(b->s, (uint64_t)b->nslots * b->a->bytes);
    }
    set_live(b, i, true);
    use(b, i);
    return i;
}

static void begin_round(builder *b) {
    sched_round_begin(b->s);
    b->round++;
}

/* Room for nhave pieces in stage, have and the merge plan over them. */
static bool room_have(builder *b, int nhave) {
    if (nhave <= b->cap_have)
        return true;
    int cap = b->cap_have ? 2 * b->cap_have : 64;
    cap = cap < nhave ? nhave : cap;
    if (!grow((void **)&b->stage_r, cap, sizeof *b->stage_r) ||
        !grow((void **)&b->stage_slot, cap, sizeof *b->stage_slot) ||
        !grow((void **)&b->have_r, cap, sizeof *b->have_r) ||
        !grow((void **)&b->have_slot, cap, sizeof *b->have_slot) ||
        !grow((void **)&b->plan.form, cap, sizeof *b->plan.form) ||
        !grow((void **)&b->plan.kid, 2 * cap, sizeof *b->plan.kid) ||
        !grow((void **)&b->form_slot, cap, sizeof *b->form_slot)) {
        b->s->error = COLLIE_ERR_NOMEM;
        return false;
    }
    b->cap_have = cap;
    return true;
}

/* Before a communication round, for short vectors: a local round copying the held pieces
 * into consecutive slots, unless they already are, so that every message is one PUT. */
static void gather_cur(builder *b) {
    b->gathered = b->packed && !cp_slots_consecutive(b->cur_slot, b->ncur);
    if (!b->gathered) {
        for (int i = 0; i < b->ncur; i++)
            b->send_slot[i] = b->cur_slot[i];
        return;
    }
    begin_round(b);
    int run = alloc_run(b, b->ncur);
    for (int i = 0; i < b->ncur; i++) {
        sched_copy(b->s, ref_of(b, run + i), ref_of(b, b->cur_slot[i]), b->a->bytes);
        use(b, b->cur_slot[i]);
        b->send_slot[i] = run + i;
    }
}

/* Sends cur[first … ncur) to peer: one PUT (short vectors) or one PUT per piece. */
static void put_pieces(builder *b, int peer, int first) {
    uint64_t n = b->a->bytes;
    if (b->packed)
        sched_put(b->s, peer, ref_of(b, b->send_slot[first]), (uint64_t)(b->ncur - first) * n);
    for (int i = first; i < b->ncur; i++) {
        if (!b->packed)
            sched_put(b->s, peer, ref_of(b, b->send_slot[i]), n);
        use(b, b->send_slot[i]);
    }
}

/* After the PUTs of a round: gathered copies hold no live piece any more (they are not
 * reused within this round: put_pieces marked them used). */
static void release_gathered(builder *b) {
    for (int i = 0; b->gathered && i < b->ncur; i++)
        set_live(b, b->send_slot[i], false);
    b->gathered = false;
}

/* Receives q's pieces tmp[first … np) (its window after some round, oldest first): into
 * consecutive slots by one receive (short vectors), else one receive per piece. */
static void recv_pieces(builder *b, int q, int np, int first) {
    if (!room_have(b, b->nstage + np - first))
        return;
    int run = b->packed ? alloc_run(b, np - first) : 0;
    if (b->packed)
        sched_recv(b->s, q, ref_of(b, run), (uint64_t)(np - first) * b->a->bytes);
    for (int i = first; i < np; i++) {
        int slot = b->packed ? run + i - first : alloc_slot(b);
        if (!b->packed)
            sched_recv(b->s, q, ref_of(b, slot), b->a->bytes);
        b->stage_r[b->nstage] = b->tmp[i];
        b->stage_slot[b->nstage++] = slot;
    }
    b->blk_end[b->nblk++] = b->nstage;
}

static void add_have(builder *b, nway_range r, int slot) {
    b->have_r[b->nhave] = r;
    b->have_slot[b->nhave++] = slot;
}

/* have = the received pieces, the farthest sender's (received last: the oldest ranks)
 * first, then the own pieces cur[0 … keep): the new window in ring order, as
 * nway_merge_plan wants it. */
static void gather_have(builder *b, int keep) {
    b->nhave = 0;
    if (!room_have(b, b->nstage + keep))
        return;
    for (int k = b->nblk - 1; k >= 0; k--)
        for (int i = k > 0 ? b->blk_end[k - 1] : 0; i < b->blk_end[k]; i++)
            add_have(b, b->stage_r[i], b->stage_slot[i]);
    for (int i = 0; i < keep; i++)
        add_have(b, b->cur_r[i], b->cur_slot[i]);
}

/* The slot of a merge-plan code (have[i] or formed node -1 - f). */
static int slot_of(const builder *b, int code) {
    return code >= 0 ? b->have_slot[code] : b->form_slot[-1 - code];
}

/* One REDUCE forming node f of the plan (its children are formed or held by now). */
static void form_one(builder *b, int f, bool root) {
    const nway_form *fm = &b->plan.form[f];
    sched_ref srcs[NWAY_MAX_N + 1];
    int slot = root && fm->r.len == b->pl.P ? -2 : alloc_slot(b);
    for (int i = 0; i < fm->nkids; i++) {
        int ks = slot_of(b, b->plan.kid[fm->first + i]);
        srcs[i] = ref_of(b, ks);
        use(b, ks);
    }
    sched_reduce(b->s, ref_of(b, slot), srcs, fm->nkids, b->a->bytes);
    b->form_slot[f] = slot;
}

/* Forms the T-nodes want (b->want or the root) from have, depth by depth, one local round
 * each; the root goes to RECV.  Then want (with their slots) becomes cur and unused pieces
 * are freed. */
static void merge(builder *b, const nway_range *want, int nwant, bool root) {
    int nf = nway_merge_plan(b->pl.n, b->have_r, b->nhave, want, nwant, &b->plan);
    if (nf < 0 || b->s->error) {
        b->s->error = b->s->error ? b->s->error : COLLIE_ERR_INTERNAL;
        return;
    }
    for (int d = 1, more = nf > 0; more; d++) {
        more = 0;
        begin_round(b);
        for (int f = 0; f < nf; f++) {
            more |= b->plan.form[f].depth > d;
            if (b->plan.form[f].depth == d)
                form_one(b, f, root);
        }
    }
    for (int i = 0; i < b->nhave; i++)
        set_live(b, b->have_slot[i], false);
    for (int f = 0; f < nf; f++)
        set_live(b, b->form_slot[f], false);
    for (int i = 0; i < nwant; i++) {
        b->cur_r[i] = want[i];
        b->cur_slot[i] = slot_of(b, b->plan.top[i]);
        set_live(b, b->cur_slot[i], true);
    }
    b->ncur = nwant;
}

/* Round l < k: whole windows to and from n peers each. */
static void round_full(builder *b, int l) {
    const nway_plan *pl = &b->pl;
    int p = b->a->rank;
    gather_cur(b);
    begin_round(b);
    for (int i = 1; i <= pl->n; i++)
        put_pieces(b, nway_to(p, l, i, pl->n, pl->P), 0);
    release_gathered(b);
    b->nstage = b->nblk = 0;
    for (int j = 1; j <= pl->n; j++) {
        int q = nway_from(p, l, j, pl->n, pl->P);
        recv_pieces(b, q, nway_pieces(pl, q, l - 1, b->tmp), 0);
    }
    gather_have(b, b->ncur);
    merge(b, b->want, nway_pieces(pl, p, l, b->want), false);
}

/* Round k, adapted by the plan (Theorem 1). */
static void round_last(builder *b) {
    const nway_plan *pl = &b->pl;
    int k = pl->k, p = b->a->rank, n = pl->n;
    gather_cur(b);
    begin_round(b);
    for (int i = 1; i <= nway_last_peers(pl); i++) {
        int first = 0;
        if (i > pl->full)
            first = b->ncur - nway_newest_count(b->cur_r, b->ncur, pl->send_part);
        put_pieces(b, nway_to(p, k, i, n, pl->P), first);
    }
    release_gathered(b);
    b->nstage = b->nblk = 0;
    for (int j = 1; j <= nway_last_peers(pl); j++) {
        int q = nway_from(p, k, j, n, pl->P), np = nway_pieces(pl, q, k - 1, b->tmp);
        int first = j > pl->full ? np - nway_newest_count(b->tmp, np, pl->send_part) : 0;
        recv_pieces(b, q, np, first);
    }
    gather_have(b, b->ncur - nway_newest_count(b->cur_r, b->ncur, pl->drop_part));
    nway_range root = { 0, pl->P };
    merge(b, &root, 1, true);
}

static bool alloc_builder(builder *b) {
    size_t np = (size_t)nway_max_pieces(&b->pl);
    b->cur_r = malloc(np * sizeof *b->cur_r);
    b->cur_slot = malloc(np * sizeof *b->cur_slot);
    b->send_slot = malloc(np * sizeof *b->send_slot);
    b->want = malloc(np * sizeof *b->want);
    b->tmp = malloc(np * sizeof *b->tmp);
    b->plan.top = malloc(np * sizeof *b->plan.top);
    return b->cur_r && b->cur_slot && b->send_slot && b->want && b->tmp && b->plan.top;
}

static void free_builder(builder *b) {
    free(b->cur_r), free(b->cur_slot), free(b->send_slot), free(b->want), free(b->tmp);
    free(b->stage_r), free(b->stage_slot), free(b->have_r), free(b->have_slot);
    free(b->form_slot), free(b->plan.form), free(b->plan.kid), free(b->plan.top);
    free(b->last_use), free(b->free_bits);
}

static int chosen_n(const collie_coll_args *a) {
    return (int)collie_param(&a->params, "n", nway_default_n(a->size));
}

static void build(collie_schedule *s, const collie_coll_args *a) {
    if (algo_trivial_reduction(s, a))
        return;
    builder b = { .s = s, .a = a, .round = -1, .packed = a->bytes <= CP_PACK_MAX_BYTES };
    if (!nway_plan_make(chosen_n(a), a->size, &b.pl) || !alloc_builder(&b)) {
        s->error = b.pl.kase == NWAY_NONE ? COLLIE_ERR_INTERNAL : COLLIE_ERR_NOMEM;
        free_builder(&b);
        return;
    }
    b.cur_r[0].lo = a->rank, b.cur_r[0].len = 1, b.cur_slot[0] = -1;
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
