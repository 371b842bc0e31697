/*
 * select.c — provisional algorithm selection (layer 5): a forced algorithm
 * (COLLIE_<COLL>_ALGO or collie_force_algorithm) when it accepts the call, else the
 * provisional rules below (team size and message size → algorithms to try), else the
 * first algorithm of the registry that accepts the call.  The cost-model selection
 * (collie-tune, rules files) replaces the built-in rules.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "core/core.h"
#include "core/internal.h"

#define SPEC_MAX 128

unsigned collie_select_generation;
static char forced_name[COLL_COUNT][SPEC_MAX];
static collie_algo_params forced_params[COLL_COUNT];
static const char *const env_names[COLL_COUNT] = {
    "COLLIE_ALLREDUCE_ALGO", "COLLIE_REDUCE_ALGO", "COLLIE_BCAST_ALGO", "COLLIE_BARRIER_ALGO",
};

int collie_force_algorithm(int coll, const char *spec) {
    if (coll < 0 || coll >= COLL_COUNT)
        return collie_fail(COLLIE_ERR_ARG, "unknown collective %d", coll);
    collie_select_generation++;
    if (!spec || !*spec || strcmp(spec, "auto") == 0) {
        forced_name[coll][0] = 0;
        return COLLIE_OK;
    }
    char name[SPEC_MAX];
    collie_algo_params params;
    int st = collie_parse_algo_spec(spec, name, sizeof name, &params);
    if (st)
        return st;
    if (!collie_algorithm_find(coll, name)) {
        char list[512] = "";
        for (size_t i = 0; i < collie_algorithm_count(coll); i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, collie_algorithm_at(coll, i)->name, sizeof list - strlen(list) - 1);
        }
        return collie_fail(COLLIE_ERR_ARG, "unknown %s algorithm '%s' (known: auto, %s)",
                           collie_coll_name(coll), name, list);
    }
    snprintf(forced_name[coll], SPEC_MAX, "%s", name);
    forced_params[coll] = params;
    return COLLIE_OK;
}

int collie_select_init_from_env(void) {
    for (int c = 0; c < COLL_COUNT; c++) {
        const char *v = collie_env_str(env_names[c], NULL);
        int st = collie_force_algorithm(c, v);
        if (st)
            return collie_fail(st, "%s: %s", env_names[c], collie_last_error());
    }
    return COLLIE_OK;
}

const char *collie_forced_algorithm(int coll, collie_algo_params *params) {
    if (!forced_name[coll][0])
        return NULL;
    if (params)
        *params = forced_params[coll];
    return forced_name[coll];
}

static const collie_algorithm *try_name(const collie_coll_args *a, const char *name) {
    const collie_algorithm *alg = collie_algorithm_find(a->coll, name);
    const char *why = NULL;
    if (alg && collie_algorithm_accepts(alg, a, &why))
        return alg;
    return NULL;
}

/* Provisional rules, from bench/fastest.sh on a 2-core machine (docs/performance.md):
 * the first rule whose team size and message size match gives a list of algorithms to try
 * in order; the first that accepts the call wins. */
typedef struct rule {
    int coll;
    int min_p, max_p;          /* team sizes */
    uint64_t max_bytes;        /* messages up to this many bytes */
    const char *algos[4];
} rule;

#define ANY_P 1, 1 << 30
#define ALL_BYTES UINT64_MAX
static const rule rules[] = {
    { COLL_ALLREDUCE, 2, 2, 4096, { "recursive_doubling", "flat" } },
    { COLL_ALLREDUCE, ANY_P, 16384, { "flat", "recursive_doubling" } },
    { COLL_ALLREDUCE, 2, 3, 1 << 20, { "flat", "pairwise_exchange", "rabenseifner" } },
    { COLL_ALLREDUCE, ANY_P, 1 << 20, { "binary_blocks", "rabenseifner" } },
    { COLL_ALLREDUCE, 2, 2, ALL_BYTES, { "ring_pipelined", "ring" } },
    { COLL_ALLREDUCE, ANY_P, ALL_BYTES, { "ring", "binary_blocks" } },
    { COLL_REDUCE, ANY_P, 4096, { "binary_tree", "flat", "binomial" } },
    { COLL_REDUCE, ANY_P, 1 << 20, { "flat", "binomial" } },
    { COLL_REDUCE, 2, 4, ALL_BYTES, { "binomial", "flat" } },
    { COLL_REDUCE, ANY_P, ALL_BYTES, { "ring", "binomial" } },
    { COLL_BCAST, 2, 4, 4096, { "binary_tree", "flat", "binomial" } },
    { COLL_BCAST, ANY_P, 4096, { "binomial", "flat" } },
    { COLL_BCAST, 2, 2, ALL_BYTES, { "chain", "binomial" } },
    { COLL_BCAST, ANY_P, 1 << 20, { "binary_tree", "scatter_allgather", "binomial" } },
    { COLL_BCAST, ANY_P, ALL_BYTES, { "flat", "chain", "binomial" } },
    { COLL_BARRIER, ANY_P, ALL_BYTES, { "dissemination", "flat" } },
};

static const collie_algorithm *preferred(const collie_coll_args *a) {
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const rule *r = &rules[i];
        if (r->coll != a->coll || a->size < r->min_p || a->size > r->max_p || a->bytes > r->max_bytes)
            continue;
        for (int k = 0; k < 4 && r->algos[k]; k++) {
            const collie_algorithm *alg = try_name(a, r->algos[k]);
            if (alg)
                return alg;
        }
        return NULL;   /* none of the rule's algorithms accepts: registry order decides */
    }
    return NULL;
}

const collie_algorithm *collie_select(const collie_coll_args *a) {
    const char *why = NULL;
    const collie_algorithm *alg = preferred(a);
    for (size_t i = 0; !alg && i < collie_algorithm_count(a->coll); i++) {
        const collie_algorithm *cand = collie_algorithm_at(a->coll, i);
        if (collie_algorithm_accepts(cand, a, &why))
            alg = cand;
    }
    if (alg)
        collie_log(COLLIE_LOG_DEBUG, "%s of %llu bytes on %d ranks: auto chose %s",
                   collie_coll_name(a->coll), (unsigned long long)a->bytes, a->size, alg->name);
    return alg;
}
