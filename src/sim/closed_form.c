/*
 * closed_form.c — predicted times of the allreduce algorithms whose simulation needs P²
 * messages (flat, ring, ring_pipelined), computed from their round structure instead of
 * simulating every message (sim.h: sim_closed_form).  Hockney model only.
 *
 * The formulas follow the simulator's semantics (docs/simulator.md) for ranks that run
 * in lockstep, with u(n) = f_α·α + f_β·n·β a one-directional and b(n) = α + n·β a
 * bidirectional message:
 *   flat:  every rank sends P-1 messages one after the other; the exchange with the rank
 *          P/2 away is bidirectional.  Rank 0 needs rank 1's message, which comes last,
 *          for its first REDUCE, so it reduces all P inputs after the last arrival:
 *          T = (P-1)·u(n) [+ b(n) - u(n) for even P] + (P-1)·γ·n.
 *   ring:  s = the largest segment; reduce-scatter steps i = 1 … P-1 cost a message
 *          (bidirectional at i = P/2) plus one reduction γ·s; the allgather's P-1 steps
 *          cost u(s) (b(s) for P = 2).
 *   ring_pipelined: round t carries k_t chunks one after the other on the ring link; the
 *          j-th arrives at j·u(c) after the round starts, its reduction (γ·c in the
 *          reduce stage, nothing in the broadcast stage) runs when it has arrived and
 *          the CPU is free; the round ends with its last reduction.
 * Where segments are uneven (count not a multiple of P), every rank is charged the
 * largest one.  Where count < P, ranks with empty segments skip their rounds and the
 * lockstep assumption no longer holds; test_sim measures how far these formulas are from
 * the full simulation for small P (docs/simulator.md).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "algorithms/patterns.h"
#include "algorithms/patterns_blocks.h"
#include "sim/sim.h"

static double uni(const sim_model *m, double n) {
    return m->f_alpha * m->alpha + m->f_beta * n * m->beta;
}

static double bidi(const sim_model *m, double n) {
    return m->alpha + n * m->beta;
}

static double flat_time(const collie_coll_args *a, const sim_model *m) {
    int P = a->size;
    double n = (double)a->bytes;
    double t = (P - 1) * uni(m, n) + (P - 1) * m->gamma * n;
    if (P % 2 == 0)
        t += bidi(m, n) - uni(m, n);
    return t;
}

static double ring_time(const collie_coll_args *a, const sim_model *m) {
    int P = a->size;
    double s = (double)(pat_seg_len(a->count, P, 0) * a->elem_size);
    bool pair = a->count >= (size_t)P;         /* the exchange at i = P/2 goes both ways */
    double rs = (P - 1) * (uni(m, s) + m->gamma * s);
    if (P % 2 == 0 && pair)
        rs += bidi(m, s) - uni(m, s);
    if (P % 2 == 1 && pair)
        rs += m->gamma * s;                     /* measured: one reduction more (test_sim) */
    double ag = P == 2 && pair ? bidi(m, s) : (P - 1) * uni(m, s);
    return rs + ag;
}

/* One round of the pipelined ring: chunks of steps lo … hi, chunk index t - step. */
static double pring_round(const collie_coll_args *a, const sim_model *m, size_t part,
                          size_t chunk, long long t, long long lo, long long hi) {
    double arrive = 0, cpu = 0;
    for (long long step = lo; step <= hi; step++) {
        double c = (double)(pat_chunk_len(part, chunk, (size_t)(t - step)) * a->elem_size);
        arrive += a->size == 2 && a->count >= 2 ? bidi(m, c) : uni(m, c);
        cpu = (cpu > arrive ? cpu : arrive) + (step < a->size - 1 ? m->gamma * c : 0);
    }
    return cpu;
}

static double ring_pipelined_time(const collie_coll_args *a, const sim_model *m) {
    long long seg = collie_param(&a->params, "segment", 64 * 1024);
    size_t chunk = (size_t)seg / a->elem_size > 0 ? (size_t)seg / a->elem_size : 1;
    size_t part = pat_seg_len(a->count, a->size, 0);
    long long mchunks = (long long)pat_chunk_count(part, chunk);
    long long steps = 2LL * a->size - 2, rounds = steps + mchunks - 1;
    double t = 0;
    for (long long r = 0; r < rounds; r++) {
        long long lo = r - mchunks + 1 > 0 ? r - mchunks + 1 : 0;
        long long hi = r < steps - 1 ? r : steps - 1;
        t += pring_round(a, m, part, chunk, r, lo, hi);
    }
    return t;
}

bool sim_closed_form_has(const collie_algorithm *alg) {
    if (alg->coll != COLL_ALLREDUCE)
        return false;
    return !strcmp(alg->name, "flat") || !strcmp(alg->name, "ring") ||
           !strcmp(alg->name, "ring_pipelined");
}

int sim_closed_form(const collie_algorithm *alg, const collie_coll_args *a,
                    const sim_model *m, double *time, char *why, size_t whysz) {
    if (!sim_closed_form_has(alg))
        return snprintf(why, whysz, "%s has no closed form", alg->name), -1;
    if (m->kind != SIM_HOCKNEY)
        return snprintf(why, whysz, "closed forms exist for the Hockney model only"), -1;
    if (a->bytes == 0 || a->size < 2) {
        *time = a->size == 1 ? m->copy * (double)a->bytes : 0;
        return 0;
    }
    if (!strcmp(alg->name, "flat"))
        *time = flat_time(a, m);
    else if (!strcmp(alg->name, "ring"))
        *time = ring_time(a, m);
    else
        *time = ring_pipelined_time(a, m);
    return 0;
}
