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
#include <time.h>
#include "algorithms/algorithm.h"
#include "collie.h"
#include "core/core.h"
#include "core/internal.h"
#include "select/tuning.h"
#include "sim/sim.h"
#include "sim/verify.h"
#include "sim_draw.h"
#include "sim_opts.h"
#include "tool_version.h"

#define SECONDS_PER_OP 1e-6              /* CPU time of the full run per operation, measured
                                            at P = 16384 … 65536 (docs/simulator.md) */
#define FULL_CPU_BUDGET 10.0             /* auto: full runs estimated above this many CPU
                                            seconds use the symmetric method or a closed
                                            form when they can */
#define FORCED_SYMMETRY_RANKS 64         /* --method symmetric: ranks checked first (auto
                                            checks all) */
#define CLOSED_FORM_FROM 1e6             /* closed forms that agree with the full run
                                            (flat, ring_pipelined; ring if count >= P) are
                                            used from this many operations on */

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
    a.single_copy = true;
    a.cell_bytes = 128 * 1024;    /* the shm transport's default copy cells */          /* the simulated team is one shared-memory node */
    a.multicast = true;         /* predict mcast as if its multicast were set up */
    a.params = *params;
    return a;
}

/* ---- predict ---------------------------------------------------------------------------- */

enum { METHOD_CLOSED = 2 };     /* besides enum sim_method */

/* Operations a full simulation would handle, and in *build_s the CPU time of building
 * every rank's schedule (the allreduce ring builders loop over all P steps even when most
 * are empty).  Up to 33 ranks: all of them.  Beyond: ranks 0 and P-1 once each (a root,
 * or the last rank of a team that is not a power of two, is often a hot spot: flat
 * bcast's rank 0 has P - 1 operations, every other rank one) plus the mean of 31 ranks
 * spread between them times the other P - 2. */
static double estimate_ops(const collie_algorithm *alg, const collie_coll_args *a,
                           double *build_s) {
    int P = a->size, inner = P <= 33 ? 0 : 31;
    double edges = 0, sum = 0;
    clock_t t0 = clock();
    for (int i = 0; i < (inner ? 2 : P); i++) {
        long ops = sim_rank_ops(alg, a, inner && i == 1 ? P - 1 : i);
        if (ops < 0)
            return -1;
        edges += (double)ops;
    }
    clock_t t1 = clock();
    for (int i = 1; i <= inner; i++) {
        long ops = sim_rank_ops(alg, a, (int)((long long)i * (P - 1) / (inner + 1)));
        if (ops < 0)
            return -1;
        sum += (double)ops;
    }
    double scale = inner ? (double)(P - 2) / inner : 0;
    *build_s = ((double)(t1 - t0) + (double)(clock() - t1) * scale) / CLOCKS_PER_SEC;
    return edges + sum * scale;
}

/* --method auto: a closed form that agrees with the full run from CLOSED_FORM_FROM
 * operations on; else the full simulation if its estimated CPU time (operations times
 * SECONDS_PER_OP, plus building the schedules) is within FULL_CPU_BUDGET, else the
 * symmetric one if every rank's schedule is rank 0's rotated (checking that costs building
 * every schedule: done when that is within the budget), else a closed form (an estimate),
 * else the full one up to 10 times the budget; NULL, or why none applies. */
static const char *choose_method(const sim_opts *o, const collie_algorithm *alg,
                                 const collie_coll_args *a, int *method) {
    static char why[200];
    *method = !strcmp(o->method, "symmetric") ? SIM_SYMMETRIC
              : !strcmp(o->method, "closed")  ? METHOD_CLOSED : SIM_FULL;
    if (strcmp(o->method, "auto") != 0)
        return NULL;
    double build_s = 0, ops = estimate_ops(alg, a, &build_s);
    double full_s = ops * SECONDS_PER_OP + build_s;
    bool closed = sim_closed_form_has(alg) && o->model.kind == SIM_HOCKNEY;
    bool close_enough = strcmp(alg->name, "ring") != 0 || a->count >= (size_t)a->size;
    if (closed && close_enough && ops > CLOSED_FORM_FROM) {
        *method = METHOD_CLOSED;        /* agrees with the full run (test_sim) */
        return NULL;
    }
    if (ops < 0 || full_s <= FULL_CPU_BUDGET)
        return NULL;
    snprintf(why, sizeof why, "not checked for rotation symmetry (building costs %.0f s)",
             build_s);
    if (build_s <= FULL_CPU_BUDGET && sim_symmetric(alg, a, why, sizeof why)) {
        *method = SIM_SYMMETRIC;
        return NULL;
    }
    if (closed) {                       /* ring with count < P: an estimate */
        *method = METHOD_CLOSED;
        return NULL;
    }
    if (full_s <= 10 * FULL_CPU_BUDGET)
        return NULL;                    /* slow (minutes), but possible */
    return why;
}

static const char *method_name(int method) {
    return method == SIM_SYMMETRIC ? "symmetric" : method == METHOD_CLOSED ? "closed" : "full";
}

/* Runs one prediction by the chosen method; NULL, or why it failed. */
static const char *run_method(const sim_opts *o, sim_config *c, int method, sim_result *r) {
    static char why[256];
    if (method == SIM_SYMMETRIC &&    /* forced: a quick check of the first ranks */
        !sim_symmetric_upto(c->alg, &c->args, FORCED_SYMMETRY_RANKS, why, sizeof why))
        return why;
    if (method != METHOD_CLOSED) {
        c->method = method;
        return sim_run(c, r) == 0 ? NULL : r->err;
    }
    memset(r, 0, sizeof *r);
    if (sim_closed_form(c->alg, &c->args, &o->model, &r->time, why, sizeof why) != 0)
        return why;
    return NULL;
}

/* One row: alg's prediction, shown as `shown` (the algorithm, or "auto") with `note`. */
static void predict_one(const sim_opts *o, const collie_algorithm *alg, collie_coll_args args,
                        const char *shown, const char *note) {
    sim_config c = { alg, args, o->model, SIM_FULL, NULL };
    int P = args.size;
    const char *why = NULL;
    int method = SIM_FULL;
    if (collie_algorithm_accepts(alg, &c.args, &why))
        why = choose_method(o, alg, &c.args, &method);
    else
        why = why ? why : "declined";
    sim_result r;
    if (!why)
        why = run_method(o, &c, method, &r);
    const char *mname = method_name(method);
    if (o->csv && why)
        printf("%s,%d,%llu,,%s,,,\"%s%s%s\"\n", shown, P, (unsigned long long)c.args.bytes,
               mname, note, *note ? ": " : "", why);
    else if (o->csv)
        printf("%s,%d,%llu,%.4f,%s,%llu,%llu,%s\n", shown, P,
               (unsigned long long)c.args.bytes, r.time * 1e6, mname,
               (unsigned long long)r.messages, (unsigned long long)r.events, note);
    else if (why)
        printf("%-22s %8d %12llu %14s  %-9s  (%s%s%s)\n", shown, P,
               (unsigned long long)c.args.bytes, "n/a", mname, note, *note ? ": " : "", why);
    else
        printf("%-22s %8d %12llu %14.3f  %-9s %10llu %s\n", shown, P,
               (unsigned long long)c.args.bytes, r.time * 1e6, mname,
               (unsigned long long)r.messages, note);
}

/* `--algo auto`: what the library's selection (src/select/select.c: tuning file rules,
 * its cost model, or the built-in rules) chooses for each call, and its prediction. */
static void predict_auto(const sim_opts *o, int P, long long bytes) {
    collie_algo_params none;
    memset(&none, 0, sizeof none);
    collie_algorithm any = { .name = "auto", .coll = o->coll };
    collie_coll_args a = make_args(o, &any, P, bytes, &none);
    const collie_algorithm *alg = collie_select(&a);
    if (!alg) {
        printf(o->csv ? "auto,%d,%lld,,,,,\"no algorithm accepts the call\"\n"
                      : "auto %d %lld n/a (no algorithm accepts the call)\n", P, bytes);
        return;
    }
    a.idempotent = (alg->needs & ALGO_NEEDS_IDEMPOTENT) != 0;
    char note[96];
    snprintf(note, sizeof note, "chose %s", alg->name);
    predict_one(o, alg, a, "auto", note);
}

static int predict(const sim_opts *o) {
    const collie_algorithm *algs[64];
    collie_algo_params params;
    bool is_auto = !strcmp(o->algo, "auto");
    int na = is_auto ? 1 : select_algos(o, algs, 64, &params);
    if (na < 0 || !o->nP || (!o->nbytes && o->coll != COLL_BARRIER)) {
        fprintf(stderr, "collie-sim predict: needs --algo, --P and --bytes\n");
        return 2;
    }
    if (o->tuning && collie_select_set_tuning(o->tuning) != COLLIE_OK) {
        fprintf(stderr, "collie-sim predict: %s\n", collie_last_error());
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
            for (int b = 0; b < nbytes; b++) {
                if (is_auto) {
                    predict_auto(o, (int)o->P[p], bytes[b]);
                    continue;
                }
                collie_coll_args a = make_args(o, algs[i], (int)o->P[p], bytes[b], &params);
                predict_one(o, algs[i], a, algs[i]->name, "");
            }
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
    sym_build_all(alg, a, s);
    if (o->inject_rank >= 0 && o->inject_rank < a->size)
        inject_fault(&s[o->inject_rank]);
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
            a.in_place = (v & 2) && (collie_coll_has_op(a.coll) || a.coll > COLL_BARRIER);
            bool rooted = collie_coll_rooted(a.coll);
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

#define DRAW_MAX_P 1024     /* recursive_doubling: 1.6 s, 10240 arrows; ring: 1 M arrows */

static int draw(const sim_opts *o) {
    const collie_algorithm *alg;
    collie_algo_params params;
    if (select_algos(o, &alg, 1, &params) != 1 || o->nP != 1 || !o->out) {
        fprintf(stderr, "collie-sim draw: needs one --algo, one --P and -o FILE.svg\n");
        return 2;
    }
    if (o->P[0] > DRAW_MAX_P) {
        fprintf(stderr, "collie-sim draw: --P %lld is more ranks than a drawing shows (one row "
                "per rank; the symbolic run behind the labels grows as P^2): at most %d\n",
                o->P[0], DRAW_MAX_P);
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

/* `collie-sim model [--model FILE]`: the parameters predictions use. */
static int print_model(int argc, char **argv) {
    sim_model m;
    char err[256];
    sim_model_default(&m);
    if (argc == 4 && !strcmp(argv[2], "--model") && sim_model_load(&m, argv[3], err, sizeof err)) {
        fprintf(stderr, "collie-sim: %s\n", err);
        return 2;
    }
    if (argc != 2 && argc != 4) {
        sim_usage(stderr);
        return 2;
    }
    printf("model = %s\nalpha = %g\nbeta = %g\nf_alpha = %g\nf_beta = %g\ngamma = %g\n"
           "copy = %g\nL = %g\no = %g\ng = %g\nG = %g\n",
           m.kind == SIM_LOGGP ? "loggp" : "hockney", m.alpha, m.beta, m.f_alpha, m.f_beta,
           m.gamma, m.copy, m.L, m.o, m.g, m.G);
    return 0;
}

int main(int argc, char **argv) {
    sim_opts o;
    if (tool_version_requested(argc, argv, "collie-sim"))
        return 0;
    if (argc >= 2 && !strcmp(argv[1], "model"))
        return print_model(argc, argv);
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
