/*
 * collie-tune.c — measures this machine's cost-model parameters through the library and
 * writes the tuning file (COLLIE_TUNING_FILE, schema 1, described in docs/guide.md
 * "Tuning").  Run it under `collie-run -n P` (P >= 2; P = 2 gives the cleanest numbers):
 *   α  — 8-byte allreduce, recursive_doubling: one bidirectional exchange per round;
 *   f_α — 8-byte bcast, binomial, root alternating 0 and 1 (one-directional messages);
 *   β  — large allreduce, recursive_doubling: α + n·β + n·γ per round;
 *   f_β — large bcast, binomial, alternating roots;
 *   γ, copy — collie_reduce_n (2 sources, float64 sum) and memcpy on large buffers.
 * Each figure is the best mean of a few timed batches (rank 0's clock; the loops are
 * synchronising).  f_β is kept within Rabenseifner's 0.5 … 1 (see docs/measurements.md:
 * the recursive-doubling estimate of β also carries memory traffic the model does not).
 * `--rules` also measures every algorithm of allreduce (or of the collectives given with
 * --coll) at a list of sizes and writes first-match rules for this team size
 * (tune_rules.h).  `--check FILE` parses a tuning
 * file and prints what it holds.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"
#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"
#include "select/tuning.h"
#include "types/types.h"
#include "tune_rules.h"
#include "tool_version.h"

#define BATCHES 5

typedef struct tune {
    collie_team_t *team;
    int rank, P, rounds;           /* rounds: ceil(log2 P) */
    bool quick, rules, malloced;   /* malloced: --malloc */
    int repeat;                    /* --rules: turns over the algorithms per size */
    const char *out, *sizes;       /* sizes: --sizes LIST for --rules */
    const char *colls;             /* --coll LIST for --rules (NULL: allreduce) */
    void *buf;
    size_t big;                    /* bytes of the large measurements */
} tune;

typedef struct measured {
    double alpha, f_alpha, beta, f_beta, gamma, copy;
} measured;

static void usage(FILE *f) {
    fprintf(f, "usage: collie-run -n P collie-tune [--out FILE] [--quick] [--rules [--repeat N]\n"
               "                                   [--sizes LIST] [--coll LIST] [--malloc]]\n"
               "       collie-tune --check FILE\n"
               "       collie-tune --version\n"
               "Measures alpha, beta, gamma, f_alpha, f_beta and copy through collie and writes\n"
               "the tuning file (default collie-tuning.json) for COLLIE_TUNING_FILE.\n"
               "  --out FILE  where to write the file (rank 0)\n"
               "  --quick     shorter runs (under 5 s instead of under 30 s)\n"
               "  --rules     also time every allreduce algorithm at each size (default\n"
               "              8,64,512,4K,32K,256K,2M; --quick 8,512,32K,256K) and write\n"
               "              first-match rules for this P; rules of other P in FILE stay\n"
               "  --coll L    --rules: these collectives (comma-separated: allreduce,\n"
               "              allgather, reduce_scatter, alltoall, gather, scatter, scan,\n"
               "              exscan, or all); sizes are a rank's block where there is one\n"
               "  --malloc    --rules: malloc'd buffers (default collie_alloc)\n"
               "  --repeat N  --rules: turns over the algorithms per size (default 3, <= 16)\n"
               "  --sizes L   --rules: comma-separated sizes in bytes (K, M suffixes)\n"
               "  --check F   parse the tuning file F and print its contents\n");
}

static void must(const tune *t, int st, const char *what) {
    if (st == COLLIE_OK)
        return;
    fprintf(stderr, "collie-tune: rank %d: %s: %s: %s\n", t->rank, what, collie_strerror(st),
            collie_last_error());
    exit(1);
}

/* Best mean seconds per call of `iters` calls of coll (forced to algo) on `bytes` bytes;
 * bcasts alternate their root between ranks 0 and 1. */
static double time_coll(const tune *t, int coll, const char *algo, size_t bytes, int iters) {
    double best = INFINITY;
    size_t count = bytes / 8;
    must(t, collie_force_algorithm(coll, algo), "forcing an algorithm");
    for (int b = 0; b < BATCHES; b++) {
        must(t, collie_barrier(t->team), "barrier");
        uint64_t t0 = collie_now_ns();
        for (int i = 0; i < iters; i++) {
            int st = coll == COLL_BCAST
                         ? collie_bcast(t->team, t->buf, count, COLLIE_FLOAT64, i % 2)
                         : collie_allreduce(t->team, COLLIE_IN_PLACE, t->buf, count,
                                            COLLIE_FLOAT64, COLLIE_SUM);
            must(t, st, algo);
        }
        double s = (double)(collie_now_ns() - t0) * 1e-9 / iters;
        best = s < best ? s : best;
    }
    must(t, collie_force_algorithm(coll, "auto"), "resetting the algorithm");
    return best;
}

/* Best seconds per byte of a 2-source float64 sum (reduce) or a memcpy (!reduce). */
static double time_local(const tune *t, bool reduce, int iters) {
    size_t n = t->big / 2, count = n / 8;
    char *a = t->buf, *d = a + n;
    const void *srcs[2] = { a, d };
    double best = INFINITY;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = collie_now_ns();
        for (int i = 0; i < iters; i++) {
            if (reduce)
                collie_reduce_n(d, srcs, 2, count, COLLIE_FLOAT64, COLLIE_SUM);
            else
                memcpy(d, a, n);
        }
        double s = (double)(collie_now_ns() - t0) * 1e-9 / iters / (double)n;
        best = s < best ? s : best;
    }
    return best;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static measured measure(const tune *t) {
    measured m;
    int small = t->quick ? 200 : 2000, large = t->quick ? 4 : 20;
    double n = (double)t->big;
    memset(t->buf, 0, t->big);
    m.gamma = time_local(t, true, large);
    m.copy = time_local(t, false, large);
    m.alpha = time_coll(t, COLL_ALLREDUCE, "recursive_doubling", 8, small) / t->rounds;
    double bc8 = time_coll(t, COLL_BCAST, "binomial", 8, small) / t->rounds;
    m.f_alpha = clamp(bc8 / m.alpha, 0.05, 1);
    double ar = time_coll(t, COLL_ALLREDUCE, "recursive_doubling", t->big, large) / t->rounds;
    m.beta = clamp((ar - m.alpha) / n - m.gamma, 1e-13, 1);
    double bc = time_coll(t, COLL_BCAST, "binomial", t->big, large) / t->rounds;
    double f_beta = (bc - m.f_alpha * m.alpha) / (n * m.beta);
    m.f_beta = clamp(f_beta, 0.5, 1);
    if (t->rank == 0 && m.f_beta != f_beta)
        fprintf(stderr, "collie-tune: measured f_beta %.2f kept to %.2f (0.5 … 1: the "
                "recursive-doubling beta includes memory traffic outside the model)\n",
                f_beta, m.f_beta);
    return m;
}

static int write_file(const tune *t, const measured *m, const rules_run *rr,
                      const collie_tuning *old) {
    FILE *f = fopen(t->out, "w");
    if (!f) {
        perror(t->out);
        return 1;
    }
    fprintf(f, "{\n  \"schema\": %d,\n", TUNING_SCHEMA);
    fprintf(f, "  \"generated_by\": \"collie-tune, %d ranks%s, %zu-byte large messages\",\n", t->P,
            t->quick ? ", quick" : "", t->big);
    fprintf(f, "  \"models\": [\n    {\"transport\": \"%s\", \"model\": \"hockney\",\n",
            t->team->tp->shared_memory ? "shm" : "net");
    fprintf(f, "     \"alpha\": %.6g, \"beta\": %.6g, \"gamma\": %.6g, \"copy\": %.6g,\n", m->alpha,
            m->beta, m->gamma, m->copy);
    fprintf(f, "     \"f_alpha\": %.4f, \"f_beta\": %.4f}\n  ]%s\n", m->f_alpha, m->f_beta,
            rr ? "," : "");
    if (rr)
        rules_write(f, rr, old);
    fprintf(f, "}\n");
    return fclose(f) == 0 ? 0 : 1;
}

static int check_file(const char *path) {
    static collie_tuning t;
    char err[512];
    if (collie_tuning_load(&t, path, err, sizeof err)) {
        fprintf(stderr, "collie-tune: %s\n", err);
        return 1;
    }
    printf("%s: schema %d, %d model entries, %d rules\n", path, TUNING_SCHEMA, t.nmodels, t.nrules);
    for (int i = 0; i < t.nmodels; i++) {
        const sim_model *m = &t.models[i].model;
        printf("model %d: alpha %.3g us, beta %.3g GB/s, gamma %.3g GB/s, copy %.3g GB/s, "
               "f_alpha %.2f, f_beta %.2f\n", i, m->alpha * 1e6, 1e-9 / m->beta, 1e-9 / m->gamma,
               1e-9 / m->copy, m->f_alpha, m->f_beta);
    }
    for (int i = 0; i < t.nrules; i++)
        printf("rule %d (line %d): %s P %d..%d bytes %llu..%llu -> %s\n", i, t.rules[i].line,
               collie_coll_name(t.rules[i].coll), t.rules[i].p_min, t.rules[i].p_max,
               (unsigned long long)t.rules[i].bytes_min, (unsigned long long)t.rules[i].bytes_max,
               t.rules[i].alg->name);
    return 0;
}

static bool parse_args(tune *t, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            t->quick = true;
        else if (!strcmp(argv[i], "--rules"))
            t->rules = true;
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            t->out = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            t->sizes = argv[++i];
        else if (!strcmp(argv[i], "--coll") && i + 1 < argc)
            t->colls = argv[++i];
        else if (!strcmp(argv[i], "--malloc"))
            t->malloced = true;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            t->repeat = atoi(argv[++i]);
        else
            return false;
    }
    return t->repeat >= 1 && t->repeat <= 16;
}

/* --sizes LIST (or the defaults) into rr; false (message printed) on a bad list. */
static bool parse_sizes(const tune *t, rules_run *rr) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", t->sizes ? t->sizes
                                  : t->quick ? "8,512,32K,256K" : "8,64,512,4K,32K,256K,2M");
    rr->nsizes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long long v = strtoull(tok, &end, 10);
        v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 0;
        end += *end == 'K' || *end == 'M';
        if (*end || v < 8 || v % 8 || v > t->big || rr->nsizes == RULES_MAX_SIZES ||
            (rr->nsizes && v <= rr->sizes[rr->nsizes - 1])) {
            fprintf(stderr, "collie-tune: --sizes: '%s' is not a multiple of 8 bytes, growing, "
                    "within 8 … %zu bytes (at most %d sizes)\n", tok, t->big, RULES_MAX_SIZES);
            return false;
        }
        rr->sizes[rr->nsizes++] = v;
    }
    return rr->nsizes > 0;
}

/* Rank 0: the rules already in the output file (kept for other P); false if it exists but
 * does not parse. */
static bool load_old(const tune *t, collie_tuning *old, bool *have) {
    char err[512];
    FILE *f = t->rank == 0 && t->rules ? fopen(t->out, "r") : NULL;
    *have = f != NULL;
    if (!f)
        return true;
    fclose(f);
    if (collie_tuning_load(old, t->out, err, sizeof err) == 0)
        return true;
    fprintf(stderr, "collie-tune: %s (not overwritten; remove it or choose another --out)\n", err);
    return false;
}

static int run(tune *t) {
    must(t, collie_init(), "collie_init");
    t->team = collie_world();
    t->rank = collie_rank(t->team);
    t->P = collie_size(t->team);
    if (t->P < 2) {
        fprintf(stderr, "collie-tune: needs at least 2 ranks: run it as collie-run -n 2 collie-tune\n");
        collie_finalize();
        return 2;
    }
    for (t->rounds = 0; (1 << t->rounds) < t->P; t->rounds++)
        ;
    t->big = t->quick ? (1u << 20) : (4u << 20);
    t->buf = collie_alloc(t->team, t->big);
    if (!t->buf)
        must(t, COLLIE_ERR_NOMEM, "allocating the buffer");
    static collie_tuning old;
    bool have_old = false;
    static rules_run rr;
    memset(&rr, 0, sizeof rr);
    rr.team = t->team;
    rr.rank = t->rank;
    rr.P = t->P;
    rr.repeat = t->repeat;
    rr.quick = t->quick;
    rr.malloced = t->malloced;
    int64_t ok = load_old(t, &old, &have_old) &&
                 (!t->rules || (parse_sizes(t, &rr) && rules_parse_colls(&rr, t->colls)));
    must(t, collie_bcast(t->team, &ok, 1, COLLIE_INT64, 0), "bcast");
    if (!ok) {
        collie_free(t->team, t->buf);
        collie_finalize();
        return 2;
    }
    measured m = measure(t);
    if (t->rules) {
        if (!rules_alloc(&rr, rr.sizes[rr.nsizes - 1]))
            must(t, COLLIE_ERR_NOMEM, "allocating the --rules buffers");
        rules_measure(&rr);
        rules_free(&rr);
    }
    int st = t->rank == 0 ? write_file(t, &m, t->rules ? &rr : NULL, have_old ? &old : NULL) : 0;
    collie_free(t->team, t->buf);
    must(t, collie_barrier(t->team), "final barrier");
    collie_finalize();
    if (t->rank == 0 && st == 0)
        st = check_file(t->out);
    return st;
}

int main(int argc, char **argv) {
    tune t = { .out = "collie-tuning.json", .repeat = 3 };
    if (tool_version_requested(argc, argv, "collie-tune"))
        return 0;
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--check"))
        return check_file(argv[2]);
    if (!parse_args(&t, argc, argv)) {
        usage(stderr);
        return 2;
    }
    return run(&t);
}
