/*
 * sim_mcast.c — predicting the two-stage multicast broadcast (algorithms/bcast/mcast.c,
 * Hoefler et al. 2007), which is not a schedule, with its own small model:
 *   - fragments: the message is cut into F fragments of at most `segment` bytes
 *     (parameter, default 16 KiB as at run time on loopback);
 *   - stage 1: the root multicasts fragment f, which has left it at
 *     t_f = (f + 1)(mc_alpha + s·mc_beta) (s: the fragment's bytes) and reaches every rank
 *     at that moment (hardware multicast; on one host the kernel really copies it to each
 *     receiver in the root's send call, which this model does not charge);
 *   - every (rank, fragment) datagram is lost independently with probability `loss`;
 *   - stage 2: each rank's outgoing link forwards the fragments it holds to its successor
 *     one at a time, in the order it got them, each costing f_α·α + f_β·s·β (Hockney,
 *     one-directional), from when it holds the fragment and the link is free; the root
 *     forwards after its multicast; the root's predecessor forwards nothing;
 *   - a rank finishes when it holds every fragment and its forwards are done.
 * With loss 0 every rank finishes at t_(F-1) + one forward: constant in P.  With loss the
 * result is the mean over Monte Carlo trials (fixed seed, so predictions repeat): `time` the
 * mean latest finish, `mean` the mean over trials of the mean finish over ranks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/base.h"
#include "sim/sim.h"

#define MCAST_SEGMENT 16384
#define WORK_LIMIT 50000000.0     /* rank x fragment steps over all trials */

typedef struct mc_ctx {
    const sim_model *m;
    int P, F;
    uint64_t bytes, seg;
    double *sent;          /* [F] multicast leaves the root */
    double *got;           /* [F] this rank holds fragment f */
    double *next;          /* [F] the chain delivers f to the successor */
    int *order;            /* [F] fragments by time held */
    uint64_t rng;
} mc_ctx;

static bool lost(mc_ctx *c) {
    if (c->m->loss <= 0)
        return false;
    return (double)(collie_splitmix64(&c->rng) >> 11) * 0x1.0p-53 < c->m->loss;
}

static uint64_t frag_len(const mc_ctx *c, int f) {
    uint64_t off = (uint64_t)f * c->seg;
    return c->bytes - off < c->seg ? c->bytes - off : c->seg;
}

static double hop(const mc_ctx *c, int f) {
    return c->m->f_alpha * c->m->alpha + c->m->f_beta * (double)frag_len(c, f) * c->m->beta;
}

static const double *sort_key;
static int by_time(const void *a, const void *b) {
    double x = sort_key[*(const int *)a], y = sort_key[*(const int *)b];
    return x < y ? -1 : x > y;
}

/* Forwards the fragments of c->got in arrival order: fills c->next, returns when the
 * link is done. */
static double forward(mc_ctx *c) {
    for (int f = 0; f < c->F; f++)
        c->order[f] = f;
    sort_key = c->got;
    qsort(c->order, (size_t)c->F, sizeof *c->order, by_time);
    double link = 0;
    for (int k = 0; k < c->F; k++) {
        int f = c->order[k];
        double start = c->got[f] > link ? c->got[f] : link;
        link = start + hop(c, f);
        c->next[f] = link;
    }
    return link;
}

/* One trial: the latest finish; *mean gets the mean finish over ranks. */
static double trial(mc_ctx *c, double *mean) {
    double latest = 0, sum = 0;
    for (int f = 0; f < c->F; f++)
        c->got[f] = c->sent[c->F - 1];      /* the root forwards after its multicast */
    double fin = c->P > 1 ? forward(c) : c->sent[c->F - 1];
    latest = sum = fin;
    for (int v = 1; v < c->P; v++) {
        fin = 0;
        for (int f = 0; f < c->F; f++) {
            double by_chain = c->next[f];
            c->got[f] = lost(c) || c->sent[f] > by_chain ? by_chain : c->sent[f];
            fin = c->got[f] > fin ? c->got[f] : fin;
        }
        if (v < c->P - 1) {
            double done = forward(c);
            fin = done > fin ? done : fin;
        }
        latest = fin > latest ? fin : latest;
        sum += fin;
    }
    *mean = sum / c->P;
    return latest;
}

int sim_mcast_run(const sim_config *c, sim_result *out) {
    memset(out, 0, sizeof *out);
    mc_ctx x = { &c->model, c->args.size, 0, c->args.bytes, 0, NULL, NULL, NULL, NULL, 0x5EEDull };
    long long seg = collie_param(&c->args.params, "segment", MCAST_SEGMENT);
    x.seg = seg > 0 ? (uint64_t)seg : MCAST_SEGMENT;
    uint64_t F = x.bytes ? (x.bytes + x.seg - 1) / x.seg : 0;
    if (x.P < 1 || F > (1u << 24)) {
        snprintf(out->err, sizeof out->err, "mcast: P = %d, %llu fragments: out of range", x.P,
                 (unsigned long long)F);
        return -1;
    }
    if (F == 0 || x.P == 1)
        return 0;
    x.F = (int)F;
    int trials = c->model.loss > 0 ? 64 : 1;
    while (trials > 1 && (double)trials * x.P * x.F > WORK_LIMIT)
        trials /= 2;
    x.sent = calloc(F, sizeof *x.sent);
    x.got = calloc(F, sizeof *x.got);
    x.next = calloc(F, sizeof *x.next);
    x.order = calloc(F, sizeof *x.order);
    if (!x.sent || !x.got || !x.next || !x.order) {
        snprintf(out->err, sizeof out->err, "mcast: out of memory for %d fragments", x.F);
        free(x.sent), free(x.got), free(x.next), free(x.order);
        return -1;
    }
    for (int f = 0; f < x.F; f++)
        x.sent[f] = (f ? x.sent[f - 1] : 0) + c->model.mc_alpha + (double)frag_len(&x, f) * c->model.mc_beta;
    for (int t = 0; t < trials; t++) {
        double mean;
        out->time += trial(&x, &mean) / trials;
        out->mean += mean / trials;
    }
    out->messages = F + (uint64_t)(x.P - 1) * F;
    out->events = (uint64_t)trials * (uint64_t)x.P * F;
    free(x.sent), free(x.got), free(x.next), free(x.order);
    return 0;
}
