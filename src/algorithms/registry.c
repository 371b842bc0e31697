/*
 * registry.c — the list of algorithms per collective, lookup, the restriction check, and
 * the "name:key=value,…" algorithm specs of COLLIE_<COLL>_ALGO.
 *
 * The order of each list is the preference order: "auto" without a tuning file takes the
 * first algorithm that accepts the call (the selector may do better with the cost model).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algorithms/algorithm.h"
#include "base/base.h"
#include "core/core.h"

extern const collie_algorithm collie_algo_allreduce_recursive_doubling;
extern const collie_algorithm collie_algo_allreduce_rabenseifner;
extern const collie_algorithm collie_algo_allreduce_ring;
extern const collie_algorithm collie_algo_allreduce_flat;
extern const collie_algorithm collie_algo_allreduce_pairwise_exchange;
extern const collie_algorithm collie_algo_allreduce_binomial;
extern const collie_algorithm collie_algo_allreduce_bruck;
extern const collie_algorithm collie_algo_allreduce_dissemination;
extern const collie_algorithm collie_algo_reduce_binomial;
extern const collie_algorithm collie_algo_reduce_flat;
extern const collie_algorithm collie_algo_bcast_binomial;
extern const collie_algorithm collie_algo_bcast_flat;
extern const collie_algorithm collie_algo_bcast_linear;
extern const collie_algorithm collie_algo_bcast_binary_tree;
extern const collie_algorithm collie_algo_bcast_scatter_allgather;
extern const collie_algorithm collie_algo_bcast_chain;
extern const collie_algorithm collie_algo_bcast_mcast;
extern const collie_algorithm collie_algo_barrier_dissemination;
extern const collie_algorithm collie_algo_barrier_flat;
extern const collie_algorithm collie_algo_allreduce_nway_dissemination;
extern const collie_algorithm collie_algo_barrier_nway_dissemination;
extern const collie_algorithm collie_algo_allreduce_binary_blocks;
extern const collie_algorithm collie_algo_allreduce_ring_pipelined;
extern const collie_algorithm collie_algo_reduce_rabenseifner;
extern const collie_algorithm collie_algo_reduce_binary_blocks;
extern const collie_algorithm collie_algo_reduce_ring;
extern const collie_algorithm collie_algo_reduce_binary_tree;
extern const collie_algorithm collie_algo_allreduce_hierarchical;
extern const collie_algorithm collie_algo_allreduce_direct_segments;
extern const collie_algorithm collie_algo_reduce_direct_segments;
extern const collie_algorithm collie_algo_bcast_direct_copy;
extern const collie_algorithm collie_algo_allreduce_cells;
extern const collie_algorithm collie_algo_reduce_cells;
extern const collie_algorithm collie_algo_bcast_cells;
extern const collie_algorithm collie_algo_reduce_hierarchical;
extern const collie_algorithm collie_algo_bcast_hierarchical;
extern const collie_algorithm collie_algo_allgather_flat;
extern const collie_algorithm collie_algo_reduce_scatter_flat;
extern const collie_algorithm collie_algo_alltoall_flat;
extern const collie_algorithm collie_algo_gather_linear;
extern const collie_algorithm collie_algo_scatter_linear;
extern const collie_algorithm collie_algo_scan_linear;
extern const collie_algorithm collie_algo_exscan_linear;
extern const collie_algorithm collie_algo_allgather_ring;
extern const collie_algorithm collie_algo_allgather_recursive_doubling;
extern const collie_algorithm collie_algo_allgather_bruck;
extern const collie_algorithm collie_algo_reduce_scatter_recursive_halving;
extern const collie_algorithm collie_algo_reduce_scatter_ring;
extern const collie_algorithm collie_algo_alltoall_pairwise;
extern const collie_algorithm collie_algo_alltoall_bruck;
extern const collie_algorithm collie_algo_allgather_direct;
extern const collie_algorithm collie_algo_reduce_scatter_direct;
extern const collie_algorithm collie_algo_reduce_scatter_cells;
extern const collie_algorithm collie_algo_alltoall_direct;
extern const collie_algorithm collie_algo_allgather_cells;
extern const collie_algorithm collie_algo_alltoall_cells;
extern const collie_algorithm collie_algo_gather_binomial;
extern const collie_algorithm collie_algo_scatter_binomial;
extern const collie_algorithm collie_algo_scan_recursive_doubling;
extern const collie_algorithm collie_algo_exscan_recursive_doubling;

static const collie_algorithm *const allreduce_algos[] = {
    &collie_algo_allreduce_recursive_doubling,
    &collie_algo_allreduce_rabenseifner,
    &collie_algo_allreduce_ring,
    &collie_algo_allreduce_flat,
    &collie_algo_allreduce_pairwise_exchange,
    &collie_algo_allreduce_binomial,
    &collie_algo_allreduce_bruck,
    &collie_algo_allreduce_dissemination,
    &collie_algo_allreduce_binary_blocks,
    &collie_algo_allreduce_ring_pipelined,
    &collie_algo_allreduce_nway_dissemination,
    &collie_algo_allreduce_hierarchical,
    &collie_algo_allreduce_direct_segments,
    &collie_algo_allreduce_cells,
};
static const collie_algorithm *const reduce_algos[] = {
    &collie_algo_reduce_binomial,
    &collie_algo_reduce_flat,
    &collie_algo_reduce_rabenseifner,
    &collie_algo_reduce_binary_blocks,
    &collie_algo_reduce_ring,
    &collie_algo_reduce_binary_tree,
    &collie_algo_reduce_hierarchical,
    &collie_algo_reduce_direct_segments,
    &collie_algo_reduce_cells,
};
static const collie_algorithm *const bcast_algos[] = {
    &collie_algo_bcast_binomial,
    &collie_algo_bcast_flat,
    &collie_algo_bcast_linear,
    &collie_algo_bcast_binary_tree,
    &collie_algo_bcast_scatter_allgather,
    &collie_algo_bcast_chain,
    &collie_algo_bcast_mcast,
    &collie_algo_bcast_hierarchical,
    &collie_algo_bcast_direct_copy,
    &collie_algo_bcast_cells,
};
static const collie_algorithm *const barrier_algos[] = {
    &collie_algo_barrier_dissemination,
    &collie_algo_barrier_flat,
    &collie_algo_barrier_nway_dissemination,
};

static const collie_algorithm *const allgather_algos[] = {
    &collie_algo_allgather_flat,
    &collie_algo_allgather_ring,
    &collie_algo_allgather_recursive_doubling,
    &collie_algo_allgather_bruck,
    &collie_algo_allgather_direct,
    &collie_algo_allgather_cells,
};
static const collie_algorithm *const reduce_scatter_algos[] = {
    &collie_algo_reduce_scatter_flat,
    &collie_algo_reduce_scatter_recursive_halving,
    &collie_algo_reduce_scatter_ring,
    &collie_algo_reduce_scatter_direct,
    &collie_algo_reduce_scatter_cells,
};
static const collie_algorithm *const alltoall_algos[] = {
    &collie_algo_alltoall_flat,
    &collie_algo_alltoall_pairwise,
    &collie_algo_alltoall_bruck,
    &collie_algo_alltoall_direct,
    &collie_algo_alltoall_cells,
};
static const collie_algorithm *const gather_algos[] = {
    &collie_algo_gather_linear,
    &collie_algo_gather_binomial,
};
static const collie_algorithm *const scatter_algos[] = {
    &collie_algo_scatter_linear,
    &collie_algo_scatter_binomial,
};
static const collie_algorithm *const scan_algos[] = {
    &collie_algo_scan_linear,
    &collie_algo_scan_recursive_doubling,
};
static const collie_algorithm *const exscan_algos[] = {
    &collie_algo_exscan_linear,
    &collie_algo_exscan_recursive_doubling,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
    const collie_algorithm *const *list;
    size_t n;
} registry[COLL_COUNT] = {
    [COLL_ALLREDUCE] = { allreduce_algos, NELEM(allreduce_algos) },
    [COLL_REDUCE] = { reduce_algos, NELEM(reduce_algos) },
    [COLL_BCAST] = { bcast_algos, NELEM(bcast_algos) },
    [COLL_BARRIER] = { barrier_algos, NELEM(barrier_algos) },
    [COLL_ALLGATHER] = { allgather_algos, NELEM(allgather_algos) },
    [COLL_REDUCE_SCATTER] = { reduce_scatter_algos, NELEM(reduce_scatter_algos) },
    [COLL_ALLTOALL] = { alltoall_algos, NELEM(alltoall_algos) },
    [COLL_GATHER] = { gather_algos, NELEM(gather_algos) },
    [COLL_SCATTER] = { scatter_algos, NELEM(scatter_algos) },
    [COLL_SCAN] = { scan_algos, NELEM(scan_algos) },
    [COLL_EXSCAN] = { exscan_algos, NELEM(exscan_algos) },
};

const char *collie_coll_name(int coll) {
    static const char *const names[COLL_COUNT] = {
        [COLL_ALLREDUCE] = "allreduce",
        [COLL_REDUCE] = "reduce",
        [COLL_BCAST] = "bcast",
        [COLL_BARRIER] = "barrier",
        [COLL_ALLGATHER] = "allgather",
        [COLL_REDUCE_SCATTER] = "reduce_scatter",
        [COLL_ALLTOALL] = "alltoall",
        [COLL_GATHER] = "gather",
        [COLL_SCATTER] = "scatter",
        [COLL_SCAN] = "scan",
        [COLL_EXSCAN] = "exscan",
    };
    if (coll < 0 || coll >= COLL_COUNT)
        return "unknown";
    return names[coll];
}

size_t collie_algorithm_count(int coll) {
    if (coll < 0 || coll >= COLL_COUNT)
        return 0;
    return registry[coll].n;
}

const collie_algorithm *collie_algorithm_at(int coll, size_t i) {
    if (i >= collie_algorithm_count(coll) || !registry[coll].list)
        return NULL;
    return registry[coll].list[i];
}

const collie_algorithm *collie_algorithm_find(int coll, const char *name) {
    if (!name)
        return NULL;
    for (size_t i = 0; i < collie_algorithm_count(coll); i++)
        if (strcmp(registry[coll].list[i]->name, name) == 0)
            return registry[coll].list[i];
    return NULL;
}

/* The parameters an algorithm takes and their floors: a segment is at least a cache line
 * (ring_pipelined:segment=1 would make one chunk per byte: 23 s for 256 KiB). */
typedef struct param_rule {
    int coll;              /* the collective whose algorithm it is; -1: any of that name */
    const char *algo, *key;
    long long min;
    const char *floor_why;
} param_rule;

#define CACHE_LINE 64
static const param_rule param_rules[] = {
    { -1, "ring_pipelined", "segment", CACHE_LINE, "a cache line" },
    { -1, "chain", "segment", CACHE_LINE, "a cache line" },
    { -1, "mcast", "segment", CACHE_LINE, "a cache line" },
    { COLL_ALLREDUCE, "bruck", "n", 1, "one port" },   /* not allgather/alltoall bruck */
    { -1, "nway_dissemination", "n", 1, "one port" },
    { -1, "hierarchical", "node", 1, "one rank per node" },
};
#define NPARAM_RULES (sizeof param_rules / sizeof param_rules[0])

static bool rule_of(const param_rule *r, const collie_algorithm *alg) {
    return (r->coll < 0 || r->coll == alg->coll) && strcmp(r->algo, alg->name) == 0;
}

static void param_keys_of(const collie_algorithm *alg, char *out, size_t n) {
    out[0] = 0;
    for (size_t i = 0; i < NPARAM_RULES; i++)
        if (rule_of(&param_rules[i], alg))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? ", " : "",
                     param_rules[i].key);
}

int collie_algorithm_check_params(const collie_algorithm *alg, const collie_algo_params *p) {
    for (int k = 0; k < p->count; k++) {
        const param_rule *r = NULL;
        for (size_t i = 0; i < NPARAM_RULES && !r; i++)
            if (rule_of(&param_rules[i], alg) && strcmp(param_rules[i].key, p->key[k]) == 0)
                r = &param_rules[i];
        char keys[128];
        param_keys_of(alg, keys, sizeof keys);
        if (!r)
            return collie_fail(COLLIE_ERR_ARG, "%s algorithm %s has no parameter '%s' (%s%s)",
                               collie_coll_name(alg->coll), alg->name, p->key[k],
                               keys[0] ? "valid: " : "it takes none", keys);
        if (p->value[k] < r->min)
            return collie_fail(COLLIE_ERR_ARG, "%s:%s=%lld is below its floor of %lld (%s)",
                               alg->name, r->key, p->value[k], r->min, r->floor_why);
    }
    return COLLIE_OK;
}

static bool decline(const char **why, const char *reason) {
    if (why)
        *why = reason;
    return false;
}

bool collie_algorithm_accepts(const collie_algorithm *alg, const collie_coll_args *a,
                              const char **why) {
    if (!alg || !a)
        return decline(why, "no algorithm or no call");
    if (alg->coll != a->coll)
        return decline(why, "is an algorithm for another collective");
    if ((alg->needs & ALGO_NEEDS_COMMUTATIVE) && !a->commutative)
        return decline(why, "needs a commutative operation (operands out of rank order)");
    if ((alg->needs & ALGO_NEEDS_IDEMPOTENT) && !a->idempotent)
        return decline(why, "needs an idempotent operation (combines some inputs twice)");
    if ((alg->needs & ALGO_NEEDS_SHM) && !a->shared_memory)
        return decline(why, "needs a shared-memory transport");
    if ((alg->needs & ALGO_NEEDS_MULTICAST) && !a->multicast)
        return decline(why, "needs multicast, which was not set up and verified when the team "
                            "was created (COLLIE_MCAST, COLLIE_LOG=info says why)");
    if (alg->driver && a->any_order)
        return decline(why, "runs its own protocol, matched by start order; a persistent request "
                            "(matched by initialization order) needs a schedule");
    if ((alg->needs & ALGO_NEEDS_SINGLE_COPY) && !a->single_copy)
        return decline(why, "needs single-copy access to every rank's buffers (the shm "
                            "transport with process_vm_readv allowed; COLLIE_SHM_DIRECT=1)");
    const char *reason = NULL;
    if (alg->accepts && !alg->accepts(a, &reason))
        return decline(why, reason ? reason : "declined by the algorithm");
    if (why)
        *why = NULL;
    return true;
}

/* ---- parameters ---------------------------------------------------------------------- */

long long collie_param(const collie_algo_params *p, const char *key, long long def) {
    if (!p || !key)
        return def;
    for (int i = 0; i < p->count && i < COLLIE_MAX_PARAMS; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->value[i];
    return def;
}

static bool is_name_char(char c) {
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* Parses a decimal integer with an optional binary suffix k, m, g (×1024^i). */
static bool parse_value(const char *s, size_t len, long long *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (end == buf || errno)
        return false;
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    if (shift)
        end++;
    if (*end != '\0' || v > (LLONG_MAX >> shift) || v < (LLONG_MIN >> shift))
        return false;
    *out = v * (1LL << shift);
    return true;
}

/* Parses one "key=value" of length len into params. */
static int parse_param(const char *spec, const char *s, size_t len, collie_algo_params *p) {
    const char *eq = memchr(s, '=', len);
    size_t klen = eq ? (size_t)(eq - s) : 0;
    if (!eq || klen == 0)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': expected key=value, got '%.*s'",
                           spec, (int)len, s);
    if (klen >= sizeof p->key[0])
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': parameter name '%.*s' too long",
                           spec, (int)klen, s);
    for (size_t i = 0; i < klen; i++)
        if (!is_name_char(s[i]))
            return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': bad parameter name '%.*s'",
                               spec, (int)klen, s);
    if (p->count >= COLLIE_MAX_PARAMS)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': more than %d parameters", spec,
                           COLLIE_MAX_PARAMS);
    char key[sizeof p->key[0]];
    memcpy(key, s, klen);
    key[klen] = '\0';
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->key[i], key) == 0)
            return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': parameter '%s' given twice",
                               spec, key);
    long long v;
    if (!parse_value(eq + 1, len - klen - 1, &v))
        return collie_fail(COLLIE_ERR_ARG,
                           "algorithm spec '%s': parameter '%s' needs an integer value, got '%.*s'",
                           spec, key, (int)(len - klen - 1), eq + 1);
    memcpy(p->key[p->count], key, klen + 1);
    p->value[p->count++] = v;
    return COLLIE_OK;
}

int collie_parse_algo_spec(const char *spec, char *name, size_t namesz,
                           collie_algo_params *params) {
    if (!spec || !name || namesz == 0 || !params)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec: null argument");
    memset(params, 0, sizeof *params);
    name[0] = '\0';
    while (isspace((unsigned char)*spec))
        spec++;
    size_t total = strlen(spec);
    while (total > 0 && isspace((unsigned char)spec[total - 1]))
        total--;
    const char *colon = memchr(spec, ':', total);
    size_t nlen = colon ? (size_t)(colon - spec) : total;
    if (nlen == 0)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%.*s': empty algorithm name",
                           (int)total, spec);
    for (size_t i = 0; i < nlen; i++)
        if (!is_name_char(spec[i]))
            return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%.*s': bad character in name",
                               (int)total, spec);
    if (nlen >= namesz)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%.*s': name too long", (int)total,
                           spec);
    char whole[256];
    snprintf(whole, sizeof whole, "%.*s", (int)total, spec);
    const char *p = colon ? colon + 1 : spec + total, *end = spec + total;
    if (colon && p == end)
        return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': nothing after ':'", whole);
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
        int rc = parse_param(whole, p, len, params);
        if (rc != COLLIE_OK)
            return rc;
        p += len;
        if (comma && ++p == end)
            return collie_fail(COLLIE_ERR_ARG, "algorithm spec '%s': trailing ','", whole);
    }
    memcpy(name, spec, nlen);
    name[nlen] = '\0';
    return COLLIE_OK;
}
