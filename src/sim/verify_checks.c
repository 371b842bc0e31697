/* verify_checks.c — the verifier's static checks (operations, bounds, access
 * rules, intra-round hazards) and result checks (values, causality); see verify.h. */
#include "sim/verify_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *sym_buf_name(int buf) {
    static const char *names[] = { "SBUF_SEND", "SBUF_RECV", "SBUF_TMP" };
    return buf >= 0 && buf < SBUF_COUNT ? names[buf] : "SBUF_?";
}

void sym_describe(const char *name, const collie_coll_args *a, char *out, size_t outsz) {
    snprintf(out, outsz, "%s %s P=%d count=%zu elem=%zu root=%d %s %s%s", name,
             collie_coll_name(a->coll), a->size, a->count, a->elem_size, a->root,
             a->in_place ? "in-place" : "out-of-place",
             a->commutative ? "commutative" : "non-commutative",
             a->idempotent ? " idempotent" : "");
}

bool sym_fail(sym_sim *m, int rank, long round, long elem, const char *fmt, ...) {
    if (m->failed)
        return false;
    m->failed = true;
    char call[256], where[96] = "", what[600];
    sym_describe(m->name, m->a, call, sizeof call);
    int n = rank >= 0 ? snprintf(where, sizeof where, " rank %d", rank) : 0;
    if (round >= 0)
        n += snprintf(where + n, sizeof where - (size_t)n, " round %ld", round);
    if (elem >= 0)
        snprintf(where + n, sizeof where - (size_t)n, " element %ld", elem);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(m->err, m->errsz, "%s:%s: %s", call, where, what);
    return false;
}

/* ==== static checks ================================================================== */

static bool check_ref(sym_sim *m, int r, long round, sched_ref ref, uint64_t bytes, bool write) {
    sym_rank *rs = &m->ranks[r];
    if (ref.buf == SBUF_IN) {
        if (write)
            return sym_fail(m, r, round, -1, "writes to an incoming message");
        if (ref.peer < 0 || ref.peer >= m->P || ref.peer == r)
            return sym_fail(m, r, round, -1, "receives from invalid peer %d", (int)ref.peer);
        return true;
    }
    if (ref.buf >= SBUF_COUNT)
        return sym_fail(m, r, round, -1, "uses unknown buffer %d", ref.buf);
    if (ref.off % m->es || bytes % m->es)
        return sym_fail(m, r, round, -1, "%s offset %llu / %llu bytes not multiples of %zu",
                        sym_buf_name(ref.buf), (unsigned long long)ref.off,
                        (unsigned long long)bytes, m->es);
    if (bytes == 0)
        return true;
    const char *deny = write ? rs->deny_write[ref.buf] : rs->deny_read[ref.buf];
    if (deny)
        return sym_fail(m, r, round, -1, "%s %s: %s", write ? "writes" : "reads",
                        sym_buf_name(ref.buf), deny);
    if (ref.off + bytes > rs->lim[ref.buf])
        return sym_fail(m, r, round, -1, "accesses %s bytes [%llu, %llu), beyond its %llu "
                        "bytes", sym_buf_name(ref.buf), (unsigned long long)ref.off,
                        (unsigned long long)(ref.off + bytes),
                        (unsigned long long)rs->lim[ref.buf]);
    return true;
}

static bool check_op(sym_sim *m, int r, long round, const sched_op *op) {
    const collie_schedule *s = m->ranks[r].s;
    const sched_ref *src = &s->srcs[op->src];
    if (op->kind == SCHED_PUT) {
        if (op->peer < 0 || op->peer >= m->P || op->peer == r)
            return sym_fail(m, r, round, -1, "PUT to invalid peer %d", (int)op->peer);
        if (op->nsrc != 1 || src[0].buf == SBUF_IN)
            return sym_fail(m, r, round, -1, "PUT needs one local source");
        return check_ref(m, r, round, src[0], op->bytes, false);
    }
    if (op->kind != SCHED_REDUCE || op->nsrc < 1)
        return sym_fail(m, r, round, -1, "malformed operation (kind %d, %d sources)", op->kind,
                        op->nsrc);
    for (uint32_t k = 0; k < op->nsrc; k++)
        if (!check_ref(m, r, round, src[k], op->bytes, false))
            return false;
    return check_ref(m, r, round, op->dst, op->bytes, true);
}

/* The memory behind a buffer of rank r: SEND is RECV when in place. */
static int mem_id(const sym_sim *m, int r, int buf) {
    return m->ranks[r].args.in_place && buf == SBUF_SEND ? SBUF_RECV : buf;
}

static bool overlap(const sym_sim *m, int r, sched_ref x, uint64_t bytes_x, sched_ref y,
                    uint64_t bytes_y) {
    if (x.buf == SBUF_IN || y.buf == SBUF_IN || bytes_x == 0 || bytes_y == 0)
        return false;
    if (mem_id(m, r, x.buf) != mem_id(m, r, y.buf))
        return false;
    return x.off < y.off + bytes_y && y.off < x.off + bytes_x;
}

/* Does writer w (a REDUCE with bytes > 0) conflict with op j of the same round? */
static bool check_pair(sym_sim *m, int r, long round, uint32_t w, uint32_t j) {
    const collie_schedule *s = m->ranks[r].s;
    const sched_op *ow = &s->ops[w], *oj = &s->ops[j];
    uint32_t iw = w - s->rounds[round].first_op, ij = j - s->rounds[round].first_op;
    for (uint32_t k = 0; k < oj->nsrc; k++)
        if (overlap(m, r, ow->dst, ow->bytes, s->srcs[oj->src + k], oj->bytes))
            return sym_fail(m, r, round, -1, "hazard: op %u writes %s bytes that op %u of the "
                            "same round reads", iw, sym_buf_name(ow->dst.buf), ij);
    if (oj->kind == SCHED_REDUCE && overlap(m, r, ow->dst, ow->bytes, oj->dst, oj->bytes))
        return sym_fail(m, r, round, -1, "hazard: ops %u and %u of the same round both write "
                        "%s", iw, ij, sym_buf_name(ow->dst.buf));
    return true;
}

/* A REDUCE may read its own dst only at the same offset. */
static bool check_self(sym_sim *m, int r, long round, uint32_t w) {
    const collie_schedule *s = m->ranks[r].s;
    const sched_op *o = &s->ops[w];
    for (uint32_t k = 0; k < o->nsrc; k++) {
        sched_ref x = s->srcs[o->src + k];
        bool same = mem_id(m, r, x.buf) == mem_id(m, r, o->dst.buf) && x.off == o->dst.off;
        if (!same && overlap(m, r, o->dst, o->bytes, x, o->bytes))
            return sym_fail(m, r, round, -1, "op %u: dst partially overlaps its source %u",
                            w - s->rounds[round].first_op, k);
    }
    return true;
}

static bool check_round(sym_sim *m, int r, uint32_t round) {
    const collie_schedule *s = m->ranks[r].s;
    const sched_round *rd = &s->rounds[round];
    uint32_t end = rd->first_op + rd->nops;
    for (uint32_t i = rd->first_op; i < end; i++)
        if (!check_op(m, r, round, &s->ops[i]))
            return false;
    for (uint32_t w = rd->first_op; w < end; w++) {
        if (s->ops[w].kind != SCHED_REDUCE || s->ops[w].bytes == 0)
            continue;
        if (!check_self(m, r, round, w))
            return false;
        for (uint32_t j = rd->first_op; j < end; j++)
            if (j != w && !check_pair(m, r, round, w, j))
                return false;
    }
    return true;
}

bool sym_check_static(sym_sim *m, int r) {
    const collie_schedule *s = m->ranks[r].s;
    if (s->error)
        return sym_fail(m, r, -1, -1, "the builder failed (error %d)", s->error);
    if (s->rank != r || s->size != m->P || s->elem_size != m->es)
        return sym_fail(m, r, -1, -1, "schedule made for rank %d of %d, elem %zu", s->rank,
                        s->size, s->elem_size);
    for (uint32_t k = 0; k < s->nrounds; k++)
        if (!check_round(m, r, k))
            return false;
    return true;
}

/* ==== result checks ================================================================== */

static bool check_expr(sym_sim *m, int r, uint32_t id, size_t e) {
    char desc[640];
    const char *problem = sym_expr_problem(&m->st, id, e, m->P, m->a->commutative,
                                           m->a->idempotent, desc, sizeof desc);
    if (problem)
        return sym_fail(m, r, -1, (long)e, "result %s:%s", problem, desc);
    return true;
}

static bool heard_from(sym_sim *m, int r, int q) {
    return sym_heard_from(m, r, q);
}

static bool heard_all(sym_sim *m, int r) {
    for (int q = 0; q < m->P; q++)
        if (!heard_from(m, r, q))
            return false;
    return true;
}

static bool check_allreduce(sym_sim *m) {
    const uint32_t *ref = m->ranks[0].mem[SBUF_RECV];
    for (size_t e = 0; e < m->a->count; e++)
        if (!check_expr(m, 0, ref[e], e))
            return false;
    for (int r = 1; r < m->P; r++)
        for (size_t e = 0; e < m->a->count; e++)
            if (m->ranks[r].mem[SBUF_RECV][e] != ref[e])
                return sym_fail(m, r, -1, (long)e, "%s", m->ranks[r].mem[SBUF_RECV][e] ==
                                SYM_UNDEF ? "result is missing (never written)"
                                          : "result differs from rank 0's (other operands or "
                                            "association: not bitwise identical)");
    for (int r = 0; r < m->P && m->a->count > 0; r++)
        if (!heard_all(m, r))
            return false;
    return true;
}

static bool check_reduce(sym_sim *m) {
    int root = m->a->root;
    for (size_t e = 0; e < m->a->count; e++)
        if (!check_expr(m, root, m->ranks[root].mem[SBUF_RECV][e], e))
            return false;
    return m->a->count == 0 || heard_all(m, root);
}

static bool check_bcast(sym_sim *m) {
    for (size_t e = 0; e < m->a->count; e++) {
        uint32_t expect = sym_leaf_id(&m->st, m->a->root, (uint32_t)e);
        for (int r = 0; r < m->P; r++)
            if (m->ranks[r].mem[SBUF_RECV][e] != expect)
                return sym_fail(m, r, -1, (long)e, "does not hold the root's element");
    }
    for (int r = 0; r < m->P && m->a->count > 0; r++)
        if (!heard_from(m, r, m->a->root))
            return false;
    return true;
}

static bool check_barrier(sym_sim *m) {
    for (int r = 0; r < m->P; r++)
        if (!heard_all(m, r))
            return false;
    return true;
}

bool sym_check_results(sym_sim *m) {
    switch (m->a->coll) {
    case COLL_ALLREDUCE: return check_allreduce(m);
    case COLL_REDUCE: return check_reduce(m);
    case COLL_BCAST: return check_bcast(m);
    case COLL_BARRIER: return check_barrier(m);
    default: return sym_check_results_more(m);
    }
}
