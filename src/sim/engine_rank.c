/*
 * engine_rank.c — the simulator's ranks (see sim.h): rounds in order, staging of trailing
 * PUTs, REDUCEs on one CPU per rank once their messages have arrived, completion; and
 * the event loop (sim_run).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_impl.h"

bool sim_fail(sim_engine *e, const char *fmt, ...) {
    if (e->failed)
        return false;
    e->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->res->err, sizeof e->res->err, fmt, ap);
    va_end(ap);
    return false;
}

static double max2(double x, double y) {
    return x > y ? x : y;
}

/* CPU time of a REDUCE (LogGP adds the receive overhead o per incoming source). */
static double reduce_cost(const sim_model *m, const sim_cop *op) {
    double n = (double)op->bytes, t = 0;
    if (op->nsrc >= 2)
        t = m->gamma * n * (op->nsrc - 1);
    else if (op->nin == 0)
        t = m->copy * n;
    if (m->kind == SIM_LOGGP)
        t += m->o * op->nin;
    return t;
}

static bool run_reduce(sim_engine *e, int r, const sim_cop *op, double ready) {
    sim_rank *rs = &e->ranks[r];
    rs->cpu = max2(rs->cpu, ready) + reduce_cost(e->m, op);
    return sim_heap_push(&e->heap, rs->cpu, EV_CPU_DONE, r, 0) || sim_fail(e, "out of memory");
}

/* ---- staging ------------------------------------------------------------------------------ */

static bool writes_over(const sim_csched *s, uint32_t round, const sim_msg *g) {
    size_t at = (size_t)round * SBUF_COUNT + g->buf;
    if (g->buf >= SBUF_COUNT || s->wlo[at] >= g->off + g->bytes || g->off >= s->whi[at])
        return false;                           /* outside everything the round writes */
    for (uint32_t i = s->round_op[round]; i < s->round_op[round + 1]; i++) {
        const sim_cop *w = &s->ops[i];
        if (w->kind == SCHED_REDUCE && w->bytes && w->buf == g->buf &&
            w->off < g->off + g->bytes && g->off < w->off + w->bytes)
            return true;
    }
    return false;
}

/* PUTs still in flight whose source this round overwrites are copied first (the
 * executor's staging); returns when the round's operations may start. */
static double stage_due(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    bool any = false;
    for (int list = 0; list < 2; list++)
        for (int32_t id = list ? rs->x_head : rs->q_head; id != SIM_NONE; id = e->msgs[id].qnext) {
            sim_msg *g = &e->msgs[id];
            if (g->staged || !g->bytes || !writes_over(rs->s, rs->round, g))
                continue;
            g->staged = 1;
            rs->cpu = max2(rs->cpu, t) + e->m->copy * (double)g->bytes;
            e->res->staged++;
            any = true;
        }
    return any ? rs->cpu : t;
}

/* ---- rounds ------------------------------------------------------------------------------- */

/* Matches REDUCE i's incoming sources with messages that have arrived, or waits. */
static bool post_reduce(sim_engine *e, int r, uint32_t i, uint32_t *in_at, double t0) {
    sim_rank *rs = &e->ranks[r];
    sim_cop *op = &rs->s->ops[i];
    op->ready = t0;
    op->peer = op->nin;
    for (uint32_t k = 0; k < op->nin; k++) {
        int from = rs->s->in[(*in_at)++];
        sim_entry *pair = sim_table_get(&e->pairs, sim_pair_key(from, r));
        sim_entry *x = pair ? sim_table_get(&e->inbox, sim_msg_key(from, r, pair->b++)) : NULL;
        if (!x)
            return sim_fail(e, "out of memory");
        if (x->a == 1) {
            op->ready = max2(op->ready, x->t);
            op->peer--;
            sim_table_del(&e->inbox, x);
        } else {
            x->a = 2;
            x->b = i;
        }
    }
    rs->pending++;
    return op->peer > 0 || run_reduce(e, r, op, op->ready);
}

static void end_rounds(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    rs->rounds_done = true;
    rs->finish = t;
    free(rs->s);
    rs->s = NULL;
    sim_rank_check_finish(e, r, t);
}

static void trace_round(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    if (e->c->hooks && e->c->hooks->round) {
        sim_round_trace tr = { r, rs->round, rs->round_start, t };
        e->c->hooks->round(e->c->hooks->ctx, &tr);
    }
}

/* Starts round rs->round at t, and the following ones while rounds have no REDUCE. */
static bool begin_rounds(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    while (rs->round < rs->s->nrounds) {
        const sim_csched *s = rs->s;
        rs->round_start = t;
        double t0 = stage_due(e, r, t);
        uint32_t in_at = s->round_in[rs->round];
        for (uint32_t i = s->round_op[rs->round]; i < s->round_op[rs->round + 1]; i++) {
            const sim_cop *op = &s->ops[i];
            if (op->kind == SCHED_REDUCE) {
                if (!post_reduce(e, r, i, &in_at, t0))
                    return false;
                continue;
            }
            if (e->m->kind == SIM_LOGGP)
                t0 = rs->cpu = max2(rs->cpu, t0) + e->m->o;
            if (!sim_issue(e, r, op, i, t0))
                return false;
        }
        if (rs->pending > 0)
            return true;
        t = max2(t0, rs->cpu);
        trace_round(e, r, t);
        rs->round++;
    }
    end_rounds(e, r, t);
    return true;
}

bool sim_rank_start(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    rs->s = sim_csched_build(e->c->alg, e->a, r, &e->scratch, e->res->err, sizeof e->res->err);
    if (!rs->s)
        return sim_fail(e, "%s", e->res->err);
    return begin_rounds(e, r, t);
}

bool sim_cpu_done(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    if (--rs->pending > 0)
        return true;
    trace_round(e, r, t);
    rs->round++;
    return begin_rounds(e, r, t);
}

bool sim_arrive(sim_engine *e, int from, int to, uint32_t seq, uint64_t bytes, double t) {
    sim_entry *x = sim_table_get(&e->inbox, sim_msg_key(from, to, seq));
    if (!x)
        return sim_fail(e, "out of memory");
    if (x->a != 2) {
        x->a = 1;
        x->t = t;
        return true;
    }
    sim_rank *rs = &e->ranks[to];
    sim_cop *op = &rs->s->ops[x->b];
    sim_table_del(&e->inbox, x);
    if (op->bytes != bytes && !e->sym)
        return sim_fail(e, "rank %d: message #%u from rank %d has %llu bytes, its REDUCE %llu",
                        to, seq, from, (unsigned long long)bytes,
                        (unsigned long long)op->bytes);
    op->ready = max2(op->ready, t);
    return --op->peer > 0 || run_reduce(e, to, op, op->ready);
}

void sim_rank_check_finish(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[e->sym ? 0 : r];
    if (rs->rounds_done && rs->unfinished == 0 && !rs->finished) {
        rs->finished = true;
        rs->finish = max2(rs->finish, t);
    }
}

/* ---- the event loop ------------------------------------------------------------------------ */

static bool setup(sim_engine *e, const sim_config *c, sim_result *out) {
    memset(e, 0, sizeof *e);
    memset(out, 0, sizeof *out);
    e->c = c;
    e->a = &c->args;
    e->m = &c->model;
    e->res = out;
    e->P = c->args.size;
    e->sym = c->method == SIM_SYMMETRIC;
    const char *why = NULL;
    if (!c->alg || e->P < 1 || e->P > SIM_MAX_P)
        return sim_fail(e, "no algorithm, or P outside 1 … %d", SIM_MAX_P);
    if (!collie_algorithm_accepts(c->alg, &c->args, &why))
        return sim_fail(e, "%s declines: %s", c->alg->name, why);
    e->nranks = e->sym ? 1 : e->P;
    e->ranks = calloc((size_t)e->nranks, sizeof *e->ranks);
    if (!e->ranks)
        return sim_fail(e, "out of memory");
    sched_init(&e->scratch, 0, e->P, c->args.elem_size);
    for (int r = 0; r < e->nranks; r++) {
        sim_rank *rs = &e->ranks[r];
        rs->out_msg = rs->in_msg = rs->q_head = rs->q_tail = rs->x_head = SIM_NONE;
        rs->w_head = rs->w_tail = rs->free_msg = SIM_NONE;
        if (!sim_heap_push(&e->heap, 0.0, EV_START, r, 0))
            return sim_fail(e, "out of memory");
    }
    return true;
}

static bool dispatch(sim_engine *e, const sim_event *ev) {
    switch (ev->kind) {
    case EV_START: return sim_rank_start(e, ev->id, ev->t);
    case EV_CPU_DONE: return sim_cpu_done(e, ev->id, ev->t);
    default: return sim_event_msg(e, ev);
    }
}

static bool summarize(sim_engine *e) {
    double sum = 0;
    for (int r = 0; r < e->nranks; r++) {
        const sim_rank *rs = &e->ranks[r];
        if (!rs->finished)
            return sim_fail(e, "deadlock: rank %d never finishes (round %u)", r, rs->round);
        e->res->time = max2(e->res->time, rs->finish);
        sum += rs->finish;
    }
    e->res->mean = sum / e->nranks;
    return true;
}

static void teardown(sim_engine *e) {
    for (int r = 0; e->ranks && r < e->nranks; r++)
        free(e->ranks[r].s);
    free(e->ranks);
    free(e->msgs);
    sim_heap_free(&e->heap);
    sim_table_free(&e->pairs);
    sim_table_free(&e->inbox);
    sched_free(&e->scratch);
}

int sim_run(const sim_config *c, sim_result *out) {
    if (c->alg && strcmp(c->alg->name, "mcast") == 0)   /* not a schedule (algorithm.h) */
        return sim_mcast_run(c, out);
    sim_engine e;
    bool ok = setup(&e, c, out);
    sim_event ev;
    while (ok && sim_heap_pop(&e.heap, &ev)) {
        out->events++;
        ok = dispatch(&e, &ev);
    }
    ok = ok && summarize(&e);
    teardown(&e);
    return ok ? 0 : -1;
}
