/* verify.c — the symbolic schedule verifier: setting up the team, running all
 * ranks' schedules together, entry points (see verify.h). */
#include "sim/verify_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup -------------------------------------------------------------------------- */

static uint32_t *alloc_vals(uint64_t bytes, size_t es) {
    return sym_xcalloc((size_t)((bytes + es - 1) / es), sizeof(uint32_t));
}

/* Initial memory and access rules of one rank (see verify.h). */
static void setup_rank(sym_sim *m, int r, const collie_schedule *s) {
    sym_rank *rs = &m->ranks[r];
    rs->s = s;
    sym_rank_args(m->a, r, &rs->args);
    collie_coll_buffer_bytes(&rs->args, r, &rs->lim[SBUF_SEND], &rs->lim[SBUF_RECV]);
    rs->lim[SBUF_TMP] = s->tmp_bytes;
    if (rs->args.in_place) {                   /* SEND is RECV: one memory for both */
        uint64_t both = rs->lim[SBUF_SEND] > rs->lim[SBUF_RECV] ? rs->lim[SBUF_SEND]
                                                               : rs->lim[SBUF_RECV];
        rs->mem[SBUF_SEND] = alloc_vals(both, m->es);
        rs->mem[SBUF_RECV] = rs->mem[SBUF_SEND];
    } else {
        rs->mem[SBUF_SEND] = alloc_vals(rs->lim[SBUF_SEND], m->es);
        rs->mem[SBUF_RECV] = alloc_vals(rs->lim[SBUF_RECV], m->es);
    }
    rs->mem[SBUF_TMP] = alloc_vals(rs->lim[SBUF_TMP], m->es);
    sym_setup_inputs(m, r);
    sym_setup_access(m, r);
    rs->assigned = sym_xcalloc((size_t)m->P, sizeof *rs->assigned);
    rs->heard = sym_xcalloc((size_t)m->words, sizeof *rs->heard);
    rs->heard[r / 64] |= 1ull << (r % 64);
    rs->done = sym_xcalloc(s->nops, 1);
    rs->seq = sym_xcalloc(s->nsrcs, sizeof *rs->seq);
}

/* ---- messages ----------------------------------------------------------------------- */

static sym_snap *take_snap(sym_sim *m, sym_rank *rs) {
    if (!rs->snap) {
        rs->snap = sym_xcalloc(1, sizeof(sym_snap) + (size_t)m->words * sizeof(uint64_t));
        rs->snap->refs = 1;
        memcpy(rs->snap->bits, rs->heard, (size_t)m->words * sizeof(uint64_t));
    }
    rs->snap->refs++;
    return rs->snap;
}

static void drop_snap(sym_snap *s) {
    if (s && --s->refs == 0)
        free(s);
}

static void release(sym_msg *g) {
    free(g->vals);
    g->vals = NULL;
    drop_snap(g->heard);
    g->heard = NULL;
}

static sym_queue *queue_of(sym_sim *m, int from, int to) {
    return &m->q[(size_t)from * (size_t)m->P + (size_t)to];
}

static uint32_t *mem_at(sym_rank *rs, sched_ref ref, size_t es) {
    return rs->mem[ref.buf] + ref.off / es;
}

static bool do_put(sym_sim *m, int r, uint32_t round, const sched_op *op) {
    sym_rank *rs = &m->ranks[r];
    sched_ref src = rs->s->srcs[op->src];
    size_t n = (size_t)(op->bytes / m->es);
    const uint32_t *from = n ? mem_at(rs, src, m->es) : NULL;
    for (size_t e = 0; e < n; e++)
        if (from[e] == SYM_UNDEF)
            return sym_fail(m, r, round, (long)(src.off / m->es + e),
                            "PUT to %d sends undefined %s data", (int)op->peer,
                            sym_buf_name(src.buf));
    sym_queue *q = queue_of(m, r, op->peer);
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 4;
        q->v = sym_xrealloc(q->v, q->cap * sizeof *q->v);
    }
    sym_msg *g = &q->v[q->n++];
    g->bytes = op->bytes;
    g->vals = sym_xcalloc(n, sizeof *g->vals);
    if (n)
        memcpy(g->vals, from, n * sizeof *from);
    g->heard = take_snap(m, rs);
    if (m->hook) {
        char label[256];
        sym_label(&m->st, m->P, m->a->count, g->vals, n, label, sizeof label);
        m->hook(m->hook_ctx, r, (int)op->peer, q->n - 1, label);
    }
    return true;
}

static sym_msg *incoming(sym_sim *m, int r, int peer, uint32_t seq) {
    sym_queue *q = queue_of(m, peer, r);
    return seq < q->n ? &q->v[seq] : NULL;
}

/* Takes message (peer, seq) for a REDUCE of `bytes`: size check, causality. */
static sym_msg *consume(sym_sim *m, int r, uint32_t round, int peer, uint32_t seq,
                        uint64_t bytes) {
    sym_rank *rs = &m->ranks[r];
    sym_msg *g = incoming(m, r, peer, seq);
    if (g->bytes != bytes) {
        sym_fail(m, r, round, -1, "size mismatch: message #%u from rank %d has %llu bytes, "
                 "the REDUCE consuming it %llu", seq, peer, (unsigned long long)g->bytes,
                 (unsigned long long)bytes);
        return NULL;
    }
    bool grew = false;
    for (int w = 0; w < m->words; w++) {
        grew |= (g->heard->bits[w] & ~rs->heard[w]) != 0;
        rs->heard[w] |= g->heard->bits[w];
    }
    if (grew) {
        drop_snap(rs->snap);
        rs->snap = NULL;
    }
    queue_of(m, peer, r)->consumed++;
    return g;
}

/* ---- running ------------------------------------------------------------------------ */

/* Starts the current round: numbers its incoming sources (per-pair order is schedule
 * order) and sends its PUTs. */
static bool start_round(sym_sim *m, int r) {
    sym_rank *rs = &m->ranks[r];
    const sched_round *rd = &rs->s->rounds[rs->round];
    for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++) {
        const sched_op *op = &rs->s->ops[i];
        rs->done[i] = op->kind == SCHED_PUT;
        if (op->kind == SCHED_PUT && !do_put(m, r, rs->round, op))
            return false;
        for (uint32_t k = 0; op->kind == SCHED_REDUCE && k < op->nsrc; k++) {
            sched_ref x = rs->s->srcs[op->src + k];
            if (x.buf == SBUF_IN)
                rs->seq[op->src + k] = rs->assigned[x.peer]++;
        }
    }
    rs->started = true;
    return true;
}

/* The first incoming source of op whose message has not been sent yet, or -1. */
static int missing_source(sym_sim *m, int r, const sched_op *op) {
    const sym_rank *rs = &m->ranks[r];
    for (uint32_t k = 0; k < op->nsrc; k++) {
        sched_ref x = rs->s->srcs[op->src + k];
        if (x.buf == SBUF_IN && !incoming(m, r, x.peer, rs->seq[op->src + k]))
            return (int)k;
    }
    return -1;
}

/* A collective without an op takes each incoming message in a REDUCE of its own: its
 * senders choose their messages' way (kernel copy or slots) each alone, and a receiver
 * follows one sender's chunking (core/executor.c follow_sender), not several in step. */
static bool one_incoming(sym_sim *m, int r, uint32_t round, const sched_op *op) {
    uint32_t incoming = 0;
    for (uint32_t k = 0; k < op->nsrc; k++)
        incoming += m->ranks[r].s->srcs[op->src + k].buf == SBUF_IN;
    if (incoming <= 1 || op->bytes == 0 || collie_coll_has_op(m->a->coll))
        return true;
    return sym_fail(m, r, round, -1, "a REDUCE of a %s (no op) takes %u incoming messages at once",
                    collie_coll_name(m->a->coll), incoming);
}

static bool do_reduce(sym_sim *m, int r, uint32_t round, const sched_op *op) {
    sym_rank *rs = &m->ranks[r];
    const sched_ref *src = &rs->s->srcs[op->src];
    size_t n = (size_t)(op->bytes / m->es);
    sym_msg *in[SCHED_MAX_SOURCES];
    if (!one_incoming(m, r, round, op))
        return false;
    for (uint32_t k = 0; k < op->nsrc; k++) {
        in[k] = NULL;
        if (src[k].buf == SBUF_IN &&
            !(in[k] = consume(m, r, round, src[k].peer, rs->seq[op->src + k], op->bytes)))
            return false;
    }
    for (size_t e = 0; e < n; e++) {
        for (uint32_t k = 0; k < op->nsrc; k++) {
            uint32_t v = in[k] ? in[k]->vals[e] : mem_at(rs, src[k], m->es)[e];
            if (v == SYM_UNDEF)
                return sym_fail(m, r, round, (long)(op->dst.off / m->es + e),
                                "REDUCE source %u reads undefined %s data", k,
                                sym_buf_name(src[k].buf));
            m->vals[k] = v;
        }
        uint32_t id = op->nsrc == 1 ? m->vals[0] : sym_node_id(&m->st, m->vals, op->nsrc);
        mem_at(rs, op->dst, m->es)[e] = id;
    }
    for (uint32_t k = 0; k < op->nsrc; k++)
        if (in[k])
            release(in[k]);
    return true;
}

/* Runs the ready REDUCEs of r's current round; true in *all when the round is done. */
static bool run_ready(sym_sim *m, int r, bool *all, bool *progress) {
    sym_rank *rs = &m->ranks[r];
    const sched_round *rd = &rs->s->rounds[rs->round];
    *all = true;
    for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++) {
        if (rs->done[i])
            continue;
        if (missing_source(m, r, &rs->s->ops[i]) >= 0) {
            *all = false;
            continue;
        }
        if (!do_reduce(m, r, rs->round, &rs->s->ops[i]))
            return false;
        rs->done[i] = 1;
        *progress = true;
    }
    return true;
}

/* Advances rank r as far as it can; *progress set when anything happened. */
static bool advance(sym_sim *m, int r, bool *progress) {
    sym_rank *rs = &m->ranks[r];
    while (rs->round < rs->s->nrounds) {
        bool all;
        if (!rs->started) {
            if (!start_round(m, r))
                return false;
            *progress = true;
        }
        if (!run_ready(m, r, &all, progress))
            return false;
        if (!all)
            return true;
        rs->round++;
        rs->started = false;
    }
    return true;
}

/* Names the first blocked rank and the message it waits for. */
static bool report_deadlock(sym_sim *m) {
    for (int r = 0; r < m->P; r++) {
        sym_rank *rs = &m->ranks[r];
        if (rs->round >= rs->s->nrounds)
            continue;
        const sched_round *rd = &rs->s->rounds[rs->round];
        for (uint32_t i = rd->first_op; i < rd->first_op + rd->nops; i++) {
            const sched_op *op = &rs->s->ops[i];
            int k = rs->done[i] ? -1 : missing_source(m, r, op);
            if (k < 0)
                continue;
            int peer = rs->s->srcs[op->src + (uint32_t)k].peer;
            return sym_fail(m, r, rs->round, -1, "deadlock: waits for message #%u from rank "
                            "%d, which sent only %u", rs->seq[op->src + (uint32_t)k], peer,
                            queue_of(m, peer, r)->n);
        }
    }
    return sym_fail(m, -1, -1, -1, "deadlock");
}

static bool check_consumed(sym_sim *m) {
    for (int p = 0; p < m->P; p++)
        for (int q = 0; q < m->P; q++) {
            sym_queue *qu = queue_of(m, p, q);
            if (qu->consumed < qu->n)
                return sym_fail(m, q, -1, -1, "message #%u from rank %d (%llu bytes) never "
                                "consumed", qu->consumed, p,
                                (unsigned long long)qu->v[qu->consumed].bytes);
        }
    return true;
}

static bool run(sym_sim *m) {
    bool progress = true;
    while (progress) {
        progress = false;
        for (int r = 0; r < m->P; r++)
            if (!advance(m, r, &progress))
                return false;
    }
    for (int r = 0; r < m->P; r++)
        if (m->ranks[r].round < m->ranks[r].s->nrounds)
            return report_deadlock(m);
    return check_consumed(m);
}

/* ---- entry points ------------------------------------------------------------------- */

static void sim_free(sym_sim *m) {
    for (int r = 0; r < m->P && m->ranks; r++) {
        sym_rank *rs = &m->ranks[r];
        if (rs->mem[SBUF_RECV] != rs->mem[SBUF_SEND])
            free(rs->mem[SBUF_RECV]);
        free(rs->mem[SBUF_SEND]);
        free(rs->mem[SBUF_TMP]);
        free(rs->done);
        free(rs->seq);
        free(rs->assigned);
        free(rs->heard);
        drop_snap(rs->snap);
    }
    for (size_t i = 0; m->q && i < (size_t)m->P * (size_t)m->P; i++) {
        for (uint32_t k = 0; k < m->q[i].n; k++)
            release(&m->q[i].v[k]);
        free(m->q[i].v);
    }
    free(m->q);
    free(m->ranks);
    free(m->vals);
    sym_store_free(&m->st);
}

static bool args_ok(sym_sim *m, const collie_coll_args *a) {
    bool rooted = collie_coll_rooted(a->coll);
    if (a->coll < 0 || a->coll >= COLL_COUNT || a->size < 1 || a->bytes != a->count * m->es ||
        (rooted && (a->root < 0 || a->root >= a->size)))
        return sym_fail(m, -1, -1, -1, "bad call arguments");
    m->P = a->size;
    return sym_check_call(m);
}

int sym_run(const char *name, const collie_coll_args *args, const collie_schedule *scheds,
            char *err, size_t errsz) {
    return sym_run_traced(name, args, scheds, NULL, NULL, err, errsz);
}

int sym_run_traced(const char *name, const collie_coll_args *args,
                   const collie_schedule *scheds, sym_put_hook hook, void *ctx, char *err,
                   size_t errsz) {
    sym_sim m;
    memset(&m, 0, sizeof m);
    m.hook = hook;
    m.hook_ctx = ctx;
    m.name = name;
    m.a = args;
    m.es = args->elem_size ? args->elem_size : 1;
    m.err = err;
    m.errsz = errsz;
    if (errsz)
        err[0] = '\0';
    if (!args_ok(&m, args))
        return -1;
    m.P = args->size;
    m.words = (args->size + 63) / 64;
    m.ranks = sym_xcalloc((size_t)m.P, sizeof *m.ranks);
    m.q = sym_xcalloc((size_t)m.P * (size_t)m.P, sizeof *m.q);
    m.vals = sym_xcalloc(SCHED_MAX_SOURCES, sizeof *m.vals);
    for (int r = 0; r < m.P; r++)
        setup_rank(&m, r, &scheds[r]);
    bool ok = true;
    for (int r = 0; r < m.P && ok; r++)
        ok = sym_check_static(&m, r);
    ok = ok && run(&m) && sym_check_results(&m);
    sim_free(&m);
    return ok ? 0 : -1;
}

void sym_build_all(const collie_algorithm *alg, const collie_coll_args *args,
                   collie_schedule *scheds) {
    for (int r = 0; r < args->size; r++) {
        collie_coll_args a;
        sym_rank_args(args, r, &a);
        sched_init(&scheds[r], r, args->size, args->elem_size);
        alg->build(&scheds[r], &a);
        sched_finish(&scheds[r]);
    }
}

int sym_verify(const collie_algorithm *alg, const collie_coll_args *args, char *err,
               size_t errsz) {
    int P = args->size > 0 ? args->size : 0;
    collie_schedule *s = sym_xcalloc((size_t)P, sizeof *s);
    sym_build_all(alg, args, s);
    int rc = sym_run(alg->name, args, s, err, errsz);
    if (rc != 0 && getenv("COLLIE_TEST_DUMP"))
        for (int r = 0; r < P; r++)
            sched_print(&s[r], stderr);
    for (int r = 0; r < P; r++)
        sched_free(&s[r]);
    free(s);
    return rc;
}
