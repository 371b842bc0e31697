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

bool sim_builder_init(sim_builder *b, const collie_coll_args *args) {
    sched_init(&b->s, 0, args->size, args->elem_size);
    b->count = calloc((size_t)args->size, sizeof *b->count);
    b->peers = malloc((size_t)args->size * sizeof *b->peers);
    return b->count && b->peers;
}

void sim_builder_free(sim_builder *b) {
    sched_free(&b->s);
    free(b->count);
    free(b->peers);
    b->count = NULL;
    b->peers = NULL;
}

static sim_csched *alloc_csched(sim_arena *arena, uint32_t nrounds, uint32_t nops,
                                uint32_t nin, uint32_t nfrom) {
    size_t words = 2 * ((size_t)nfrom + 1) + 2 * (size_t)nin + (size_t)nrounds + 1;
    words += words & 1;                                 /* ops on 8 bytes */
    size_t sz = sizeof(sim_csched) + words * sizeof(uint32_t) + (size_t)nops * sizeof(sim_cop);
    sim_csched *c = arena ? sim_arena_alloc(arena, sz) : malloc(sz);
    if (!c)
        return NULL;
    c->nrounds = nrounds;
    c->nops = nops;
    c->nin = nin;
    c->nfrom = nfrom;
    c->from = (sim_sender *)(c + 1);
    c->in_op = (uint32_t *)(c->from + nfrom + 1);
    c->round_op = c->in_op + nin;
    c->in = (int32_t *)(c->round_op + nrounds + 1);
    c->ops = (sim_cop *)((uint32_t *)(c + 1) + words);
    return c;
}

static void compact_op(const collie_schedule *s, const sched_op *op, bool in_place,
                       sim_cop *out) {
    memset(out, 0, sizeof *out);
    out->kind = op->kind;
    out->bytes = op->bytes;
    out->nsrc = op->nsrc;
    sched_ref ref = op->kind == SCHED_PUT ? s->srcs[op->src] : op->dst;
    out->buf = in_place && ref.buf == SBUF_SEND ? SBUF_RECV : ref.buf;
    out->off = ref.off;
    out->peer = op->kind == SCHED_PUT ? op->peer : 0;
    for (uint32_t k = 0; op->kind == SCHED_REDUCE && k < op->nsrc; k++)
        out->nin += s->srcs[op->src + k].buf == SBUF_IN;
    if (op->kind == SCHED_REDUCE)
        out->peer = out->nin;
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

/* Every PUT's target and every incoming source names a rank of the team. */
static bool check_peers(const collie_schedule *s, const char *name, char *err, size_t errsz) {
    for (uint32_t i = 0; i < s->nops; i++) {
        const sched_op *op = &s->ops[i];
        for (uint32_t k = 0; k < op->nsrc; k++) {
            int peer = op->kind == SCHED_PUT ? op->peer : s->srcs[op->src + k].peer;
            if (op->kind == SCHED_REDUCE && s->srcs[op->src + k].buf != SBUF_IN)
                continue;
            if (peer < 0 || peer >= s->size) {
                snprintf(err, errsz, "%s: rank %d's op %u names rank %d, outside 0 … %d",
                         name, s->rank, i, peer, s->size - 1);
                return false;
            }
        }
    }
    return true;
}

static void forget_counts(sim_builder *b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        b->count[b->peers[i]] = 0;
}

/* Counts one more item for peer; returns the count before. */
static uint32_t count_peer(sim_builder *b, int peer, uint32_t *npeers) {
    if (b->count[peer] == 0)
        b->peers[(*npeers)++] = peer;
    return b->count[peer]++;
}

/* Numbers each PUT among this rank's PUTs to the same peer (the message's seq). */
static void number_puts(sim_builder *b, sim_csched *c) {
    uint32_t npeers = 0;
    for (uint32_t i = 0; i < c->nops; i++)
        if (c->ops[i].kind == SCHED_PUT)
            c->ops[i].u.put.seq = count_peer(b, c->ops[i].peer, &npeers);
    forget_counts(b, npeers);
}

/* Counts the incoming sources per sender (b->peers: the senders); returns how many. */
static uint32_t count_incoming(sim_builder *b, uint32_t *nin) {
    const collie_schedule *s = &b->s;
    uint32_t nfrom = 0;
    *nin = 0;
    for (uint32_t i = 0; i < s->nops; i++)
        for (uint32_t k = 0; s->ops[i].kind == SCHED_REDUCE && k < s->ops[i].nsrc; k++)
            if (s->srcs[s->ops[i].src + k].buf == SBUF_IN) {
                count_peer(b, s->srcs[s->ops[i].src + k].peer, &nfrom);
                (*nin)++;
            }
    return nfrom;
}

static int cmp_int(const void *x, const void *y) {
    int a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Fills from/from_at (senders ascending) and in/in_op (each incoming source in op order,
 * and its REDUCE grouped by sender); the counts of count_incoming are used and cleared. */
static void index_incoming(sim_builder *b, sim_csched *c) {
    const collie_schedule *s = &b->s;
    qsort(b->peers, c->nfrom, sizeof *b->peers, cmp_int);
    uint32_t at = 0;
    for (uint32_t g = 0; g < c->nfrom; g++) {
        c->from[g].from = b->peers[g];
        c->from[g].at = at;
        at += b->count[b->peers[g]];
        b->count[b->peers[g]] = c->from[g].at;      /* from now on: the next free entry */
    }
    c->from[c->nfrom].from = INT32_MAX;
    c->from[c->nfrom].at = at;
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nops; i++)
        for (uint32_t k = 0; s->ops[i].kind == SCHED_REDUCE && k < s->ops[i].nsrc; k++)
            if (s->srcs[s->ops[i].src + k].buf == SBUF_IN) {
                int from = s->srcs[s->ops[i].src + k].peer;
                c->in[n++] = from;
                c->in_op[b->count[from]++] = i;
            }
    forget_counts(b, c->nfrom);
}

sim_csched *sim_csched_build(sim_builder *b, sim_arena *arena, const collie_algorithm *alg,
                             const collie_coll_args *args, int rank, char *err, size_t errsz) {
    collie_schedule *s = &b->s;
    if (!build_into(alg, args, rank, s, err, errsz) || !check_peers(s, alg->name, err, errsz))
        return NULL;
    uint32_t nin, nfrom = count_incoming(b, &nin);
    sim_csched *c = alloc_csched(arena, s->nrounds, s->nops, nin, nfrom);
    if (!c) {
        forget_counts(b, nfrom);
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    index_incoming(b, c);
    for (uint32_t k = 0; k < s->nrounds; k++)
        c->round_op[k] = s->rounds[k].first_op;
    c->round_op[s->nrounds] = s->nops;
    for (uint32_t i = 0; i < s->nops; i++)
        compact_op(s, &s->ops[i], args->in_place, &c->ops[i]);
    number_puts(b, c);
    return c;
}

bool sim_csched_sender(const sim_csched *s, int from, uint32_t *at, uint32_t *end) {
    uint32_t lo = 0, hi = s->nfrom;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->from[mid].from < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (s->from[lo].from != from)
        return false;
    *at = s->from[lo].at;
    *end = s->from[lo + 1].at;
    return true;
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
    sim_builder b;
    bool ok = sim_builder_init(&b, args);
    if (!ok)
        snprintf(why, whysz, "out of memory");
    sim_csched *zero = ok ? sim_csched_build(&b, NULL, alg, args, 0, why, whysz) : NULL;
    ok = zero != NULL;
    for (int q = 1; ok && q < P; q++) {
        sim_csched *other = sim_csched_build(&b, NULL, alg, args, q, why, whysz);
        ok = other && same_shifted(zero, other, q, args->size, why, whysz);
        free(other);
    }
    free(zero);
    sim_builder_free(&b);
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
