/*
 * collie-sim.c — the simulator tool (docs/simulator.md):
 *   predict  predicted time per (algorithm, P, bytes) from the cost model (src/sim/sim.h);
 *   verify   every algorithm on symbolic contributions for P = 1 … N (src/sim/verify.h);
 *   draw     an SVG of one call's messages (tools/sim_draw.h).
 * Calls are modelled as: elements of --elem bytes (8), a commutative operation (verify
 * also runs non-commutative ones where the algorithm allows), root 0, shared memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "core/core.h"
#include "sim/sim.h"
#include "sim/verify.h"
#include "sim_draw.h"
#include "sim_opts.h"

#define FULL_EVENT_BUDGET 40000000.0     /* auto: above this, simulate rank 0 by symmetry */

/* The algorithms --algo names: one, or every algorithm of the collective ("all"). */
static int select_algos(const sim_opts *o, const collie_algorithm **out, int cap,
                        collie_algo_params *params) {
    memset(params, 0, sizeof *params);
    if (strcmp(o->algo, "all") == 0) {
        int n = 0;
        for (size_t i = 0; i < collie_algorithm_count(o->coll) && n < cap; i++)
            out[n++] = collie_algorithm_at(o->coll, i);
        return n;
    }
    char name[64];
    if (collie_parse_algo_spec(o->algo, name, sizeof name, params) != 0 ||
        !(out[0] = collie_algorithm_find(o->coll, name))) {
        fprintf(stderr, "collie-sim: no %s algorithm '%s'\n", collie_coll_name(o->coll), o->algo);
        return -1;
    }
    return 1;
}

static collie_coll_args make_args(const sim_opts *o, const collie_algorithm *alg, int P,
                                  long long bytes, const collie_algo_params *params) {
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = o->coll;
    a.size = P;
    a.elem_size = (size_t)o->elem;
    a.count = o->coll == COLL_BARRIER ? 0 : (size_t)(bytes / o->elem);
    a.bytes = a.count * a.elem_size;
    a.commutative = true;
    a.idempotent = (alg->needs & ALGO_NEEDS_IDEMPOTENT) != 0;
    a.shared_memory = true;
    a.multicast = true;         /* predict mcast as if its multicast were set up */
    a.params = *params;
    return a;
}

/* ---- predict ---------------------------------------------------------------------------- */

static const char *choose_method(const sim_opts *o, const collie_algorithm *alg,
                                 const collie_coll_args *a, int *method) {
    static char why[200];
    *method = strcmp(o->method, "symmetric") == 0 ? SIM_SYMMETRIC : SIM_FULL;
    if (strcmp(o->method, "auto") != 0)
        return NULL;
    long ops = sim_rank_ops(alg, a, 0);
    if (ops < 0 || (double)ops * a->size <= FULL_EVENT_BUDGET)
        return NULL;
    if (!sim_symmetric(alg, a, why, sizeof why))
        return why;
    *method = SIM_SYMMETRIC;
    return NULL;
}

static void predict_one(const sim_opts *o, const collie_algorithm *alg, int P, long long bytes,
                        const collie_algo_params *params) {
    sim_config c = { alg, make_args(o, alg, P, bytes, params), o->model, SIM_FULL, NULL };
    const char *why = NULL;
    if (collie_algorithm_accepts(alg, &c.args, &why))
        why = choose_method(o, alg, &c.args, &c.method);
    else
        why = why ? why : "declined";
    sim_result r;
    if (!why && sim_run(&c, &r) != 0)
        why = r.err;
    const char *method = c.method == SIM_SYMMETRIC ? "symmetric" : "full";
    if (o->csv && why)
        printf("%s,%d,%llu,,%s,,,\"%s\"\n", alg->name, P, (unsigned long long)c.args.bytes,
               method, why);
    else if (o->csv)
        printf("%s,%d,%llu,%.4f,%s,%llu,%llu,\n", alg->name, P,
               (unsigned long long)c.args.bytes, r.time * 1e6, method,
               (unsigned long long)r.messages, (unsigned long long)r.events);
    else if (why)
        printf("%-22s %8d %12llu %14s  %-9s  (%s)\n", alg->name, P,
               (unsigned long long)c.args.bytes, "n/a", method, why);
    else
        printf("%-22s %8d %12llu %14.3f  %-9s %10llu\n", alg->name, P,
               (unsigned long long)c.args.bytes, r.time * 1e6, method,
               (unsigned long long)r.messages);
}

static int predict(const sim_opts *o) {
    const collie_algorithm *algs[64];
    collie_algo_params params;
    int na = select_algos(o, algs, 64, &params);
    if (na < 0 || !o->nP || (!o->nbytes && o->coll != COLL_BARRIER)) {
        fprintf(stderr, "collie-sim predict: needs --algo, --P and --bytes\n");
        return 2;
    }
    long long zero = 0;
    const long long *bytes = o->nbytes ? o->bytes : &zero;
    int nbytes = o->nbytes ? o->nbytes : 1;
    if (o->csv)
        printf("algorithm,P,bytes,time_us,method,messages,events,note\n");
    else
        printf("%-22s %8s %12s %14s  %-9s %10s\n", "algorithm", "P", "bytes", "time[us]",
               "method", "messages");
    for (int i = 0; i < na; i++)
        for (int p = 0; p < o->nP; p++)
            for (int b = 0; b < nbytes; b++)
                predict_one(o, algs[i], (int)o->P[p], bytes[b], &params);
    return 0;
}

/* ---- verify ----------------------------------------------------------------------------- */

/* Test-only fault (--inject-fault RANK): on that rank, the first REDUCE with two or more
 * sources gets its first two operands swapped; without one, its last operation is
 * dropped.  Shows that the tool reports a broken schedule. */
static void inject_fault(collie_schedule *s) {
    for (uint32_t i = 0; i < s->nops; i++) {
        sched_op *op = &s->ops[i];
        if (op->kind == SCHED_REDUCE && op->nsrc >= 2) {
            sched_ref t = s->srcs[op->src];
            s->srcs[op->src] = s->srcs[op->src + 1];
            s->srcs[op->src + 1] = t;
            return;
        }
    }
    if (s->nops > 0) {
        s->nops--;
        s->rounds[s->nrounds - 1].nops--;
        sched_finish(s);
    }
}

/* Verifies one call; prints a line and returns 1 on failure. */
static int verify_call(const sim_opts *o, const collie_algorithm *alg,
                       const collie_coll_args *a, long long n) {
    const char *why;
    if (!collie_algorithm_accepts(alg, a, &why))
        return 0;
    collie_schedule *s = calloc((size_t)a->size, sizeof *s);
    for (int r = 0; r < a->size; r++) {
        collie_coll_args ar = *a;
        ar.rank = r;
        sched_init(&s[r], r, a->size, a->elem_size);
        alg->build(&s[r], &ar);
        sched_finish(&s[r]);
        if (r == o->inject_rank)
            inject_fault(&s[r]);
    }
    char err[1024], nbuf[24];
    snprintf(nbuf, sizeof nbuf, "%lld", n);
    int rc = sym_run(alg->name, a, s, err, sizeof err);
    if (rc != 0)
        printf("FAIL %s P=%d n=%s: %s\n", alg->name, a->size, n >= 0 ? nbuf : "-", err);
    for (int r = 0; r < a->size; r++)
        sched_free(&s[r]);
    free(s);
    return rc != 0;
}

/* Every variant of one (algorithm, P, n): a few counts, non-commutative where allowed,
 * in place, roots 0 and P-1. */
static int verify_variants(const sim_opts *o, const collie_algorithm *alg, int P, long long n,
                           const collie_algo_params *params) {
    long long counts[] = { 1, P + 1, 3 * P + 2 };
    int fails = 0;
    for (int ci = 0; ci < 3; ci++)
        for (int v = 0; v < 4; v++) {
            collie_coll_args a = make_args(o, alg, P, counts[ci] * o->elem, params);
            a.commutative = (v & 1) || (alg->needs & ALGO_NEEDS_COMMUTATIVE);
            a.in_place = (v & 2) && (a.coll == COLL_ALLREDUCE || a.coll == COLL_REDUCE);
            bool rooted = a.coll == COLL_REDUCE || a.coll == COLL_BCAST;
            a.root = rooted && ci == 2 ? P - 1 : 0;
            fails += verify_call(o, alg, &a, n);
        }
    return fails;
}

static int verify(const sim_opts *o) {
    const collie_algorithm *algs[64];
    collie_algo_params base;
    int na = select_algos(o, algs, 64, &base);
    if (na < 0 || o->max_p < 1) {
        fprintf(stderr, "collie-sim verify: needs --algo and --max-p\n");
        return 2;
    }
    int fails = 0, runs = 0;
    for (int i = 0; i < na; i++)
        for (int P = 1; P <= o->max_p; P++)
            for (int k = 0; k < (o->nn ? o->nn : 1); k++) {
                collie_algo_params params = base;
                long long n = o->nn ? o->n[k] : collie_param(&base, "n", -1);
                if (o->nn && params.count < COLLIE_MAX_PARAMS) {
                    snprintf(params.key[params.count], sizeof params.key[0], "n");
                    params.value[params.count++] = n;
                }
                fails += verify_variants(o, algs[i], P, n, &params);
                runs++;
            }
    fprintf(stderr, "collie-sim verify: %d (algorithm, P, n) combinations, %d failures\n", runs,
            fails);
    return fails ? 1 : 0;
}

/* ---- draw ----------------------------------------------------------------------------------- */

static int draw(const sim_opts *o) {
    const collie_algorithm *alg;
    collie_algo_params params;
    if (select_algos(o, &alg, 1, &params) != 1 || o->nP != 1 || !o->out) {
        fprintf(stderr, "collie-sim draw: needs one --algo, one --P and -o FILE.svg\n");
        return 2;
    }
    if (o->nn && params.count < COLLIE_MAX_PARAMS) {
        snprintf(params.key[params.count], sizeof params.key[0], "n");
        params.value[params.count++] = o->n[0];
    }
    long long bytes = o->nbytes ? o->bytes[0] : (long long)o->P[0] * o->elem;
    collie_coll_args a = make_args(o, alg, (int)o->P[0], bytes, &params);
    return sim_draw_svg(alg, &a, o->have_model ? &o->model : NULL, o->out);
}

int main(int argc, char **argv) {
    sim_opts o;
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        sim_usage(stdout);
        return 0;
    }
    if (!sim_parse_opts(&o, argc, argv)) {
        sim_usage(stderr);
        return 2;
    }
    if (!strcmp(o.cmd, "predict"))
        return predict(&o);
    if (!strcmp(o.cmd, "verify"))
        return verify(&o);
    if (!strcmp(o.cmd, "draw"))
        return draw(&o);
    fprintf(stderr, "collie-sim: unknown command '%s'\n", o.cmd);
    sim_usage(stderr);
    return 2;
}
