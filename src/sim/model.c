/*
 * model.c — the simulator's cost models: defaults, and parsing of model files
 * ("key = value" lines or a flat JSON object; see sim.h and docs/simulator.md).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"

void sim_model_default(sim_model *m) {
    memset(m, 0, sizeof *m);
    m->kind = SIM_HOCKNEY;
    m->alpha = 0.3e-6;          /* one flag write + wake-up on shm */
    m->beta = 1.0 / 10e9;       /* 10 GB/s per direction */
    m->f_alpha = 1.0;
    m->f_beta = 0.7;            /* one copy alone gets more memory bandwidth than two */
    m->gamma = 1.0 / 10e9;      /* vectorised sum of doubles */
    m->copy = 1.0 / 10e9;
    m->L = 0.2e-6;
    m->o = 0.05e-6;
    m->g = 0.1e-6;
    m->G = 1.0 / 10e9;
    m->mc_alpha = 5e-6;         /* a UDP datagram through the kernel (loopback, measured) */
    m->mc_beta = 1.0 / 2e9;
    m->loss = 0.0;
}

static double *field(sim_model *m, const char *key) {
    static const char *const names[] = { "alpha", "beta", "f_alpha", "f_beta", "gamma",
                                         "copy", "L", "o", "g", "G", "mc_alpha", "mc_beta",
                                         "loss" };
    double *const ptrs[] = { &m->alpha, &m->beta, &m->f_alpha, &m->f_beta, &m->gamma,
                             &m->copy, &m->L, &m->o, &m->g, &m->G, &m->mc_alpha, &m->mc_beta,
                             &m->loss };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i], key) == 0)
            return ptrs[i];
    return NULL;
}

/* Copies the next token (separators: white space and the JSON/ini punctuation) into tok;
 * returns the position after it, or NULL at the end. */
static const char *next_token(const char *p, char *tok, size_t toksz) {
    for (;;) {
        while (*p && (isspace((unsigned char)*p) || strchr("{},:=\"'", *p)))
            p++;
        if (*p != '#')
            break;
        while (*p && *p != '\n')
            p++;
    }
    if (!*p)
        return NULL;
    size_t n = 0;
    while (*p && !isspace((unsigned char)*p) && !strchr("{},:=\"'#", *p)) {
        if (n + 1 < toksz)
            tok[n++] = *p;
        p++;
    }
    tok[n] = '\0';
    return p;
}

static int set_value(sim_model *m, const char *key, const char *val, char *err, size_t errsz) {
    if (strcmp(key, "model") == 0) {
        if (strcmp(val, "hockney") == 0)
            m->kind = SIM_HOCKNEY;
        else if (strcmp(val, "loggp") == 0)
            m->kind = SIM_LOGGP;
        else
            return snprintf(err, errsz, "model: unknown model '%s' (hockney, loggp)", val), -1;
        return 0;
    }
    double *f = field(m, key);
    if (!f)
        return snprintf(err, errsz, "model: unknown key '%s'", key), -1;
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (end == val || *end || errno || v < 0)
        return snprintf(err, errsz, "model: '%s' needs a non-negative number, got '%s'", key,
                        val), -1;
    *f = v;
    return 0;
}

int sim_model_parse(sim_model *m, const char *text, char *err, size_t errsz) {
    char key[64], val[64];
    const char *p = text;
    while ((p = next_token(p, key, sizeof key))) {
        p = next_token(p, val, sizeof val);
        if (!p)
            return snprintf(err, errsz, "model: key '%s' has no value", key), -1;
        if (set_value(m, key, val, err, errsz) != 0)
            return -1;
    }
    if (m->f_alpha > 1 || m->f_beta > 1)
        return snprintf(err, errsz, "model: f_alpha and f_beta must be <= 1"), -1;
    if (m->loss > 1)
        return snprintf(err, errsz, "model: loss is a probability, 0 .. 1"), -1;
    return 0;
}

int sim_model_load(sim_model *m, const char *path, char *err, size_t errsz) {
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(err, errsz, "model: cannot open %s: %s", path, strerror(errno)), -1;
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    char buf[4096];
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return snprintf(err, errsz, "model: out of memory"), -1;
            }
            text = t;
        }
        memcpy(text + len, buf, got);
        len += got;
    }
    fclose(f);
    int rc = sim_model_parse(m, text ? (text[len] = '\0', text) : "", err, errsz);
    free(text);
    return rc;
}
