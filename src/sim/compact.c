/*
 * compact.c — per-rank schedules for the simulator: built by the registry's builder into
 * a reused scratch schedule, then copied into one small allocation holding only what
 * timing needs (sim_csched); and the rotation-symmetry check of SIM_SYMMETRIC (on the
 * communication: kinds, sizes, peers; local operands may differ, see sim.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim_impl.h"

static uint32_t count_incoming(const collie_schedule *s, const sched_op *op) {
    uint32_t n = 0;
    for (uint32_t k = 0; op->kind == SCHED_REDUCE && k < op->nsrc; k++)
        n += s->srcs[op->src + k].buf == SBUF_IN;
    return n;
}

static sim_csched *alloc_csched(uint32_t nrounds, uint32_t nops, uint32_t nin) {
    size_t nw = (size_t)nrounds * SBUF_COUNT;
    size_t sz = sizeof(sim_csched) + (size_t)nops * sizeof(sim_cop) + 2 * nw * sizeof(uint64_t) +
                2 * ((size_t)nrounds + 1) * sizeof(uint32_t) + (size_t)nin * sizeof(int32_t);
    sim_csched *c = malloc(sz);
    if (!c)
        return NULL;
    c->nrounds = nrounds;
    c->nops = nops;
    c->ops = (sim_cop *)(c + 1);
    c->wlo = (uint64_t *)(c->ops + nops);
    c->whi = c->wlo + nw;
    c->round_op = (uint32_t *)(c->whi + nw);
    c->round_in = c->round_op + nrounds + 1;
    c->in = (int32_t *)(c->round_in + nrounds + 1);
    return c;
}

static void compact_op(const collie_schedule *s, const sched_op *op, bool in_place,
                       sim_cop *out, int32_t *in, uint32_t *nin) {
    memset(out, 0, sizeof *out);
    out->kind = op->kind;
    out->bytes = op->bytes;
    out->nsrc = op->nsrc;
    out->peer = op->peer;
    sched_ref ref = op->kind == SCHED_PUT ? s->srcs[op->src] : op->dst;
    out->buf = in_place && ref.buf == SBUF_SEND ? SBUF_RECV : ref.buf;
    out->off = ref.off;
    for (uint32_t k = 0; op->kind == SCHED_REDUCE && k < op->nsrc; k++)
        if (s->srcs[op->src + k].buf == SBUF_IN) {
            in[(*nin)++] = s->srcs[op->src + k].peer;
            out->nin++;
        }
}

static bool build_into(const collie_algorithm *alg, const collie_coll_args *args, int rank,
                       collie_schedule *s, char *err, size_t errsz) {
    collie_coll_args a = *args;
    a.rank = rank;
    sched_reset(s);
    s->rank = rank;
    s->size = args->size;
    s->elem_size = args->elem_size;
    alg->build(s, &a);
    sched_finish(s);
    if (s->error) {
        snprintf(err, errsz, "%s: building rank %d's schedule failed (error %d)", alg->name,
                 rank, s->error);
        return false;
    }
    return true;
}

/* The byte range each round's REDUCEs write, per buffer (staging checks it first). */
static void write_bounds(sim_csched *c) {
    for (uint32_t k = 0; k < c->nrounds; k++) {
        uint64_t *lo = &c->wlo[k * SBUF_COUNT], *hi = &c->whi[k * SBUF_COUNT];
        for (int b = 0; b < SBUF_COUNT; b++) {
            lo[b] = UINT64_MAX;
            hi[b] = 0;
        }
        for (uint32_t i = c->round_op[k]; i < c->round_op[k + 1]; i++) {
            const sim_cop *w = &c->ops[i];
            if (w->kind != SCHED_REDUCE || !w->bytes || w->buf >= SBUF_COUNT)
                continue;
            lo[w->buf] = w->off < lo[w->buf] ? w->off : lo[w->buf];
            hi[w->buf] = w->off + w->bytes > hi[w->buf] ? w->off + w->bytes : hi[w->buf];
        }
    }
}

sim_csched *sim_csched_build(const collie_algorithm *alg, const collie_coll_args *args,
                             int rank, collie_schedule *s, char *err, size_t errsz) {
    if (!build_into(alg, args, rank, s, err, errsz))
        return NULL;
    uint32_t nin = 0;
    for (uint32_t i = 0; i < s->nops; i++)
        nin += count_incoming(s, &s->ops[i]);
    sim_csched *c = alloc_csched(s->nrounds, s->nops, nin);
    if (!c) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    uint32_t at = 0;
    for (uint32_t k = 0; k < s->nrounds; k++) {
        c->round_op[k] = s->rounds[k].first_op;
        c->round_in[k] = at;
        for (uint32_t i = s->rounds[k].first_op; i < s->rounds[k].first_op + s->rounds[k].nops; i++)
            compact_op(s, &s->ops[i], args->in_place, &c->ops[i], c->in, &at);
    }
    c->round_op[s->nrounds] = s->nops;
    write_bounds(c);
    c->round_in[s->nrounds] = at;
    return c;
}

/* ---- rotation symmetry ------------------------------------------------------------------ */

static int shifted(int peer, int q, int P) {
    return (int)(((long)peer + q) % P);
}

static bool same_op(const sim_csched *x, const sim_csched *y, uint32_t i, int q, int P,
                    uint32_t *in_at) {
    const sim_cop *a = &x->ops[i], *b = &y->ops[i];
    if (a->kind != b->kind || a->bytes != b->bytes || a->nin != b->nin)
        return false;
    if (a->kind == SCHED_PUT && shifted(a->peer, q, P) != b->peer)
        return false;
    for (uint32_t k = 0; k < a->nin; k++, (*in_at)++)
        if (shifted(x->in[*in_at], q, P) != y->in[*in_at])
            return false;
    return true;
}

/* Compares rank q's schedule with rank 0's shifted by q. */
static bool same_shifted(const sim_csched *x, const sim_csched *y, int q, int P, char *why,
                         size_t whysz) {
    if (x->nrounds != y->nrounds || x->nops != y->nops) {
        snprintf(why, whysz, "rank %d has %u rounds / %u ops, rank 0 %u / %u", q, y->nrounds,
                 y->nops, x->nrounds, x->nops);
        return false;
    }
    uint32_t in_at = 0;
    for (uint32_t k = 0; k < x->nrounds; k++) {
        if (x->round_op[k] != y->round_op[k])
            return snprintf(why, whysz, "rank %d's round %u differs from rank 0's", q, k), false;
        for (uint32_t i = x->round_op[k]; i < x->round_op[k + 1]; i++)
            if (!same_op(x, y, i, q, P, &in_at)) {
                snprintf(why, whysz, "rank %d's op %u (round %u) is not rank 0's shifted by %d",
                         q, i, k, q);
                return false;
            }
    }
    return true;
}

/* Ranks 1 … upto - 1 are compared (all of them: the cost is building all P schedules, as
 * a full run does; it stops at the first difference). */
bool sim_symmetric_upto(const collie_algorithm *alg, const collie_coll_args *args, int upto,
                        char *why, size_t whysz) {
    int P = args->size < upto ? args->size : upto;
    collie_schedule s;
    sched_init(&s, 0, args->size, args->elem_size);
    sim_csched *zero = sim_csched_build(alg, args, 0, &s, why, whysz);
    bool ok = zero != NULL;
    for (int q = 1; ok && q < P; q++) {
        sim_csched *other = sim_csched_build(alg, args, q, &s, why, whysz);
        ok = other && same_shifted(zero, other, q, args->size, why, whysz);
        free(other);
    }
    free(zero);
    sched_free(&s);
    return ok;
}

bool sim_symmetric(const collie_algorithm *alg, const collie_coll_args *args, char *why,
                   size_t whysz) {
    return sim_symmetric_upto(alg, args, args->size, why, whysz);
}

long sim_rank_ops(const collie_algorithm *alg, const collie_coll_args *args, int rank) {
    char err[128];
    collie_schedule s;
    sched_init(&s, rank, args->size, args->elem_size);
    long n = build_into(alg, args, rank, &s, err, sizeof err) ? (long)s.nops : -1;
    sched_free(&s);
    return n;
}
