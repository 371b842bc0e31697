/* scan_doubling.c — see scan_doubling.h.
 *
 * Per rank: `part` = the combination of its aligned group of 2^k ranks (cut at P) before
 * step k, `pre` = the prefix so far.  In step k, rank r and q = r ^ 2^k (if q < P)
 * exchange their `part`s; a lower q's part goes in front of both `part` and `pre`, a higher
 * q's after `part`.  A message is sent only when the receiver needs it: a lower rank needs
 * the higher one's part only for steps before its last (pat_scan_last_step).  Two uses of
 * one message need it in TMP, then a local round; a message with one use (the last step)
 * is reduced straight from the inbox. */
#include "algorithms/scan_doubling.h"
#include "algorithms/patterns_colls.h"

typedef struct scan_state {
    const collie_coll_args *a;
    bool exclusive, have_pre;
    bool copy_own;           /* scan, rank 0, not in place: RECV = SEND, in the first round */
    sched_ref part, pre;
} scan_state;

/* pre = x ∘ pre (or x, the first time for exscan), into RECV. */
static void update_pre(collie_schedule *s, scan_state *st, sched_ref x) {
    sched_ref res = sched_at(SBUF_RECV, 0);
    if (st->have_pre) {
        sched_ref srcs[2] = { x, st->pre };
        sched_reduce(s, res, srcs, 2, st->a->bytes);
    } else {
        sched_reduce(s, res, &x, 1, st->a->bytes);
    }
    st->pre = res;
    st->have_pre = true;
}

static void step(collie_schedule *s, scan_state *st, int k, int last) {
    const collie_coll_args *a = st->a;
    int r = a->rank, p = a->size, q = pat_scan_partner(r, k, p);
    uint64_t B = a->bytes;
    if (q < 0)
        return;
    bool send = q > r || k < pat_scan_last_step(q, p);
    bool recv = q < r || k < last;
    sched_round_begin(s);
    if (st->copy_own)
        sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), B);
    st->copy_own = false;
    if (send)
        sched_put(s, q, st->part, B);
    if (!recv)
        return;
    if (k == last) {                 /* only the prefix needs it (q < r) */
        update_pre(s, st, sched_in(q));
        return;
    }
    sched_ref in = sched_at(SBUF_TMP, B), part = sched_at(SBUF_TMP, 0);
    sched_recv(s, q, in, B);
    sched_round_begin(s);
    sched_ref srcs[2] = { q < r ? in : st->part, q < r ? st->part : in };
    sched_reduce(s, part, srcs, 2, B);
    st->part = part;
    if (q < r)
        update_pre(s, st, in);
}

void scan_doubling_build(collie_schedule *s, const collie_coll_args *a, bool exclusive) {
    int r = a->rank, p = a->size, last = pat_scan_last_step(r, p);
    scan_state st = { a, exclusive, !exclusive, !exclusive && !a->in_place && r == 0,
                      sched_at(SBUF_SEND, 0), sched_at(a->in_place ? SBUF_RECV : SBUF_SEND, 0) };
    if (a->bytes == 0)
        return;
    if (last >= 0) {
        sched_need_tmp(s, 2 * a->bytes);
        if (a->in_place) {           /* RECV (the input) is rewritten while part is read */
            sched_round_begin(s);
            sched_copy(s, sched_at(SBUF_TMP, 0), sched_at(SBUF_SEND, 0), a->bytes);
            st.part = sched_at(SBUF_TMP, 0);
        }
    }
    for (int k = 0; k < pat_scan_steps(p); k++)
        step(s, &st, k, last);
    if (st.copy_own)                 /* a team of one */
        sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), a->bytes);
}
