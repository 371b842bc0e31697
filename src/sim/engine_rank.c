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

/* Runs a REDUCE whose sources have all arrived, once posted, on the rank's one CPU.  The
 * round ends when its last REDUCE is done: one event then, at the CPU's time (the CPU is
 * in order, so the last REDUCE run is the last done). */
static bool run_reduce(sim_engine *e, int r, const sim_cop *op) {
    sim_rank *rs = &e->ranks[r];
    rs->cpu = max2(rs->cpu, op->u.ready) + reduce_cost(e->m, op);
    if (--rs->unrun > 0 || rs->unposted > 0)
        return true;
    return sim_heap_push(&e->heap, rs->cpu, EV_CPU_DONE, r, 0) || sim_fail(e, "out of memory");
}

/* ---- staging ------------------------------------------------------------------------------ */

typedef struct write_bounds {
    uint64_t lo[SBUF_COUNT], hi[SBUF_COUNT];    /* bytes [lo, hi) written (lo >= hi: none) */
} write_bounds;

static void round_bounds(const sim_csched *s, uint32_t round, write_bounds *w) {
    for (int b = 0; b < SBUF_COUNT; b++) {
        w->lo[b] = UINT64_MAX;
        w->hi[b] = 0;
    }
    for (uint32_t i = s->round_op[round]; i < s->round_op[round + 1]; i++) {
        const sim_cop *op = &s->ops[i];
        if (op->kind != SCHED_REDUCE || !op->bytes || op->buf >= SBUF_COUNT)
            continue;
        w->lo[op->buf] = op->off < w->lo[op->buf] ? op->off : w->lo[op->buf];
        if (op->off + op->bytes > w->hi[op->buf])
            w->hi[op->buf] = op->off + op->bytes;
    }
}

static bool writes_over(const sim_csched *s, uint32_t round, const write_bounds *w,
                        const sim_cop *put) {
    uint64_t off = put->off, end = put->off + put->bytes;
    if (put->buf >= SBUF_COUNT || w->lo[put->buf] >= end || off >= w->hi[put->buf])
        return false;                           /* outside everything the round writes */
    for (uint32_t i = s->round_op[round]; i < s->round_op[round + 1]; i++) {
        const sim_cop *op = &s->ops[i];
        if (op->kind == SCHED_REDUCE && op->bytes && op->buf == put->buf && op->off < end &&
            off < op->off + op->bytes)
            return true;
    }
    return false;
}

/* Stages message id if this round overwrites its source. */
static void stage_one(sim_engine *e, int r, int32_t id, const write_bounds *w, double t,
                      bool *any) {
    sim_rank *rs = &e->ranks[r];
    sim_msg *g = &e->msgs[id];
    if (g->staged || !g->bytes || !writes_over(rs->s, rs->round, w, &rs->s->ops[g->op]))
        return;
    g->staged = 1;
    rs->cpu = max2(rs->cpu, t) + e->m->copy * (double)g->bytes;
    e->res->staged++;
    *any = true;
}

/* PUTs still in flight whose source this round overwrites are copied first (the
 * executor's staging): the waiting ones in issue order, then the one on the link;
 * returns when the round's operations may start. */
static double stage_due(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    int32_t on_link = e->links[r].out_msg;
    if (rs->q.live == 0 && on_link == SIM_NONE)
        return t;
    write_bounds w;
    round_bounds(rs->s, rs->round, &w);
    bool any = false;
    for (uint32_t i = rs->q.head; i < rs->q.len; i++)
        if (rs->q.v[i].id != SIM_NONE)
            stage_one(e, r, rs->q.v[i].id, &w, t, &any);
    if (on_link != SIM_NONE)
        stage_one(e, r, on_link, &w, t, &any);
    return any ? rs->cpu : t;
}

/* ---- rounds ------------------------------------------------------------------------------- */

/* Posts REDUCE i at t0: it runs once its incoming messages have all arrived. */
static bool post_reduce(sim_engine *e, int r, uint32_t i, double t0) {
    sim_rank *rs = &e->ranks[r];
    sim_cop *op = &rs->s->ops[i];
    op->u.ready = max2(op->u.ready, t0);
    rs->unposted--;
    rs->unrun++;
    return op->peer > 0 || run_reduce(e, r, op);
}

static uint32_t count_reduces(const sim_csched *s, uint32_t round) {
    uint32_t n = 0;
    for (uint32_t i = s->round_op[round]; i < s->round_op[round + 1]; i++)
        n += s->ops[i].kind == SCHED_REDUCE;
    return n;
}

static void end_rounds(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    rs->rounds_done = true;
    rs->finish = t;
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
    e->batch.tail = SIM_NONE;                   /* an earlier batch's event may be gone */
    while (rs->round < rs->s->nrounds) {
        const sim_csched *s = rs->s;
        rs->round_start = t;
        double t0 = stage_due(e, r, t);
        uint32_t reduces = rs->unposted = count_reduces(s, rs->round);
        rs->posted = s->round_op[rs->round + 1];  /* no message arrives while posting */
        for (uint32_t i = s->round_op[rs->round]; i < s->round_op[rs->round + 1]; i++) {
            const sim_cop *op = &s->ops[i];
            if (op->kind == SCHED_REDUCE) {
                if (!post_reduce(e, r, i, t0))
                    return false;
                continue;
            }
            if (e->m->kind == SIM_LOGGP)
                t0 = rs->cpu = max2(rs->cpu, t0) + e->m->o;
            if (!sim_issue(e, r, op, i, t0))
                return false;
        }
        if (reduces > 0)
            return true;                        /* until the last one is done */
        t = max2(t0, rs->cpu);
        trace_round(e, r, t);
        rs->round++;
    }
    end_rounds(e, r, t);
    return true;
}

bool sim_rank_start(sim_engine *e, int r, double t) {
    return begin_rounds(e, r, t);
}

bool sim_cpu_done(sim_engine *e, int r, double t) {
    sim_rank *rs = &e->ranks[r];
    trace_round(e, r, t);
    rs->round++;
    return begin_rounds(e, r, t);
}

bool sim_arrive(sim_engine *e, const sim_msg *g, double t) {
    int to = e->sym ? 0 : g->to;
    sim_rank *rs = &e->ranks[to];
    if (g->rop == UINT32_MAX)
        return true;                            /* no REDUCE takes it (it waits forever) */
    sim_cop *op = &rs->ops[g->rop];
    if (op->bytes != g->bytes && !e->sym) {
        uint32_t seq = sim_rank_of(e, g->from)->ops[g->op].u.put.seq;
        return sim_fail(e, "rank %d: message #%u from rank %d has %llu bytes, its REDUCE %llu",
                        to, seq, g->from, (unsigned long long)g->bytes,
                        (unsigned long long)op->bytes);
    }
    op->u.ready = max2(op->u.ready, t);
    return --op->peer > 0 || g->rop >= rs->posted || run_reduce(e, to, op);
}

void sim_rank_check_finish(sim_engine *e, int r, double t) {
    sim_rank *rs = sim_rank_of(e, r);
    if (rs->unfinished == 0 && rs->rounds_done && !rs->finished) {
        rs->finished = true;
        rs->finish = max2(rs->finish, t);
    }
}

/* ---- the event loop ------------------------------------------------------------------------ */

/* Every rank's schedule, before the first event (they all start at 0). */
static bool build_schedules(sim_engine *e) {
    sim_csched **all = malloc((size_t)e->nranks * sizeof *all);
    if (!all)
        return sim_fail(e, "out of memory");
    char err[sizeof e->res->err];
    bool ok = sim_csched_build_all(e->c->alg, e->a, e->nranks, all, e->arenas, err, sizeof err);
    for (int r = 0; ok && r < e->nranks; r++) {
        e->ranks[r].s = all[r];
        e->ranks[r].ops = all[r]->ops;
    }
    if (ok)
        sim_resolve_puts(all, e->nranks, e->P, e->sym);
    free(all);
    return ok || sim_fail(e, "%s", err);
}

static bool setup(sim_engine *e, const sim_config *c, sim_result *out) {
    memset(e, 0, sizeof *e);
    memset(out, 0, sizeof *out);
    e->c = c;
    e->a = &c->args;
    e->m = &c->model;
    e->res = out;
    e->P = c->args.size;
    e->sym = c->method == SIM_SYMMETRIC;
    e->batch.tail = SIM_NONE;
    const char *why = NULL;
    if (!c->alg || e->P < 1 || e->P > SIM_MAX_P)
        return sim_fail(e, "no algorithm, or P outside 1 … %d", SIM_MAX_P);
    if (!collie_algorithm_accepts(c->alg, &c->args, &why))
        return sim_fail(e, "%s declines: %s", c->alg->name, why);
    e->nranks = e->sym ? 1 : e->P;
    size_t rbytes = (size_t)e->nranks * sizeof *e->ranks;
    if (posix_memalign((void **)&e->ranks, 64, rbytes) != 0)
        return sim_fail(e, "out of memory");
    sim_advise_huge(e->ranks, rbytes);          /* before the first touch */
    memset(e->ranks, 0, rbytes);
    e->links = malloc((size_t)e->nranks * sizeof *e->links);
    if (!e->links)
        return sim_fail(e, "out of memory");
    if (!build_schedules(e))
        return false;
    for (int r = 0; r < e->nranks; r++) {
        sim_rank *rs = &e->ranks[r];
        e->links[r].out_msg = e->links[r].in_msg = SIM_NONE;
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
    for (int t = 0; t < SIM_MAX_THREADS; t++)
        sim_arena_free(&e->arenas[t]);
    sim_arena_free(&e->queue_arena);
    free(e->ranks);
    free(e->links);
    free(e->issued);
    free(e->msgs);
    sim_heap_free(&e->heap);
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
