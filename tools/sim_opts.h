/*
 * sim_opts.h — command-line options of collie-sim (tools/collie-sim.c): parsing of the
 * options, of lists ("2,3,4,8,65536", bytes with K/M/G suffixes) and the usage text.
 */
#ifndef COLLIE_SIM_OPTS_H
#define COLLIE_SIM_OPTS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "sim/sim.h"

#define SIM_MAX_LIST 64

typedef struct sim_opts {
    const char *cmd, *coll_name, *algo, *out, *model_file, *method, *tuning;
    int coll;
    long long P[SIM_MAX_LIST], bytes[SIM_MAX_LIST], n[SIM_MAX_LIST];
    int nP, nbytes, nn;
    int max_p, elem, inject_rank;
    bool csv;
    sim_model model;
    bool have_model;
} sim_opts;

static void sim_usage(FILE *f) {
    fprintf(f,
        "usage: collie-sim predict --coll C --algo NAME|all|auto --P LIST --bytes LIST\n"
        "                          [--model FILE] [--csv] [--method auto|full|symmetric|closed]\n"
        "                          [--tuning FILE]  (auto: the library's choice, with that file)\n"
        "       collie-sim model   [--model FILE]  (prints the model's parameters)\n"
        "       collie-sim verify  --coll C --algo NAME|all --max-p N [--n LIST]\n"
        "       collie-sim draw    --coll C --algo NAME --P N [--n K] [--bytes B]\n"
        "                          [--model FILE] -o FILE.svg\n"
        "       collie-sim --version\n"
        "  C: allreduce, reduce, bcast, barrier.  LIST: 2,3,4,8,65536; bytes take K, M, G\n"
        "  (x1024).  NAME may carry parameters: nway_dissemination:n=3.  --elem E sets the\n"
        "  element size (default 8).  Model files: key = value lines or a JSON object with\n"
        "  model (hockney|loggp), alpha, beta, f_alpha, f_beta, gamma, copy, L, o, g, G\n"
        "  (seconds, seconds per byte); see docs/simulator.md.\n");
}

static bool parse_ll(const char *s, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    end += shift != 0;
    if (end == s || *end || errno || v < 0 || v > (1LL << 50))
        return false;
    *out = v << shift;
    return true;
}

/* Parses "a,b,c" into out; false on a bad or too long list. */
static bool parse_list(const char *s, long long *out, int *n) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == SIM_MAX_LIST || !parse_ll(tok, &out[*n]))
            return false;
        (*n)++;
    }
    return *n > 0;
}

static int find_coll(const char *name) {
    for (int c = 0; c < COLL_COUNT; c++)
        if (name && strcmp(collie_coll_name(c), name) == 0)
            return c;
    return -1;
}

static bool opt_fail(const char *fmt, const char *arg) {
    fprintf(stderr, "collie-sim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return false;
}

/* One option with its value; false on an unknown option or a bad value. */
static bool parse_opt(sim_opts *o, const char *k, const char *v) {
    long long x = 0;
    bool ok = true;
    if (!strcmp(k, "--coll")) o->coll_name = v;
    else if (!strcmp(k, "--algo")) o->algo = v;
    else if (!strcmp(k, "--P")) ok = parse_list(v, o->P, &o->nP);
    else if (!strcmp(k, "--bytes")) ok = parse_list(v, o->bytes, &o->nbytes);
    else if (!strcmp(k, "--n")) ok = parse_list(v, o->n, &o->nn);
    else if (!strcmp(k, "--model")) o->model_file = v;
    else if (!strcmp(k, "--method")) o->method = v;
    else if (!strcmp(k, "--tuning")) o->tuning = v;
    else if (!strcmp(k, "-o")) o->out = v;
    else if (!strcmp(k, "--max-p")) {
        if (!parse_ll(v, &x) || x < 1 || x > 4096)
            return opt_fail("--max-p must be 1 ... 4096 (verify runs every P up to it), not %s", v);
        o->max_p = (int)x;
    } else if (!strcmp(k, "--elem")) {
        if (!parse_ll(v, &x) || x < 1 || x > 4096)
            return opt_fail("--elem must be 1 ... 4096 bytes, not %s", v);
        o->elem = (int)x;
    }
    else if (!strcmp(k, "--inject-fault")) ok = parse_ll(v, &x), o->inject_rank = (int)x;
    else return opt_fail("unknown option %s", k);
    return ok || opt_fail("bad value for %s", k);
}

static bool sim_parse_opts(sim_opts *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->elem = 8;
    o->inject_rank = -1;
    o->method = "auto";
    sim_model_default(&o->model);
    if (argc < 2)
        return false;
    o->cmd = argv[1];
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--csv")) {
            o->csv = true;
            continue;
        }
        if (i + 1 >= argc)
            return opt_fail("%s needs a value", argv[i]);
        if (!parse_opt(o, argv[i], argv[i + 1]))
            return false;
        i++;
    }
    if ((o->coll = find_coll(o->coll_name)) < 0)
        return opt_fail("--coll must be allreduce, reduce, bcast, barrier, allgather, "
                        "reduce_scatter, alltoall, gather, scatter, scan or exscan (got %s)",
                        o->coll_name ? o->coll_name : "nothing");
    if (!o->algo)
        return opt_fail("%s needs --algo", o->cmd);
    char err[256];
    if (o->model_file && sim_model_load(&o->model, o->model_file, err, sizeof err) != 0)
        return opt_fail("%s", err);
    o->have_model = o->model_file != NULL;
    return true;
}

#endif
