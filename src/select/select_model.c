/*
 * select_model.c — cost-model selection: for a call class (select_model.h) every
 * registered algorithm that accepts the class's representative call is simulated
 * (sim_run, rank-symmetric shortcut when exact) and ranked by predicted time; the ranking
 * is cached (direct-mapped table, mutex-protected), and a call takes the first algorithm
 * of its class's ranking that accepts it.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "select/select_model.h"

#define CACHE_SLOTS 512
#define MAX_RANKED 32
#define FULL_SIM_EVENT_LIMIT 4000000L   /* skip simulations that would cost more events */

typedef struct class_key {
    int coll, size, bucket;
    size_t elem_size;
    unsigned flags;
} class_key;

typedef struct cache_entry {
    bool used;
    class_key key;
    int n;
    const collie_algorithm *ranked[MAX_RANKED];
} cache_entry;

static cache_entry cache[CACHE_SLOTS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* The classes whose predictions COLLIE_LOG=debug printed (once per class: simulating every
 * algorithm at every call made a debug run 40x slower; the same table's shape as cache). */
static class_key logged[CACHE_SLOTS];
static bool logged_used[CACHE_SLOTS];

static int bytes_bucket(uint64_t bytes) {
    int b = 0;
    for (; bytes; bytes >>= 1)
        b++;
    return b;   /* 0 for 0 bytes, else 1 + floor(log2(bytes)) */
}

static class_key key_of(const collie_coll_args *a) {
    class_key k = { a->coll, a->size, bytes_bucket(a->bytes), a->elem_size, 0 };
    k.flags = (unsigned)a->commutative | (unsigned)a->idempotent << 1 | (unsigned)a->in_place << 2 |
              (unsigned)a->shared_memory << 3;
    return k;
}

static unsigned key_hash(const class_key *k) {
    uint64_t h = (uint64_t)k->coll * 0x9E3779B97F4A7C15ull;
    h = (h ^ (uint64_t)k->size) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (uint64_t)k->bucket) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (k->elem_size << 4 | k->flags)) * 0x9E3779B97F4A7C15ull;
    return (unsigned)(h >> 40) % CACHE_SLOTS;
}

static bool same_key(const class_key *x, const class_key *y) {
    return x->coll == y->coll && x->size == y->size && x->bucket == y->bucket &&
           x->elem_size == y->elem_size && x->flags == y->flags;
}

/* The class's representative call: 1.5 × the bucket's lower bound, root 0. */
static collie_coll_args representative(const collie_coll_args *a) {
    collie_coll_args r = *a;
    int b = bytes_bucket(a->bytes);
    r.root = 0;
    r.rank = 0;
    memset(&r.params, 0, sizeof r.params);
    if (b == 0 || a->elem_size == 0)
        return r;
    uint64_t want = (3ull << (b - 1)) / 2;
    r.count = (size_t)(want / a->elem_size) ? (size_t)(want / a->elem_size) : 1;
    r.bytes = (uint64_t)r.count * a->elem_size;
    return r;
}

/* Predicted seconds, or INFINITY when the simulation fails or would be too expensive. */
static double predict(const collie_algorithm *alg, const collie_coll_args *a, const sim_model *m) {
    sim_config c = { .alg = alg, .args = *a, .model = *m, .method = SIM_FULL };
    char why[128];
    sim_result res;
    if (sim_symmetric(alg, a, why, sizeof why))
        c.method = SIM_SYMMETRIC;
    else if (sim_rank_ops(alg, a, 0) * (long)a->size > FULL_SIM_EVENT_LIMIT)
        return INFINITY;
    if (sim_run(&c, &res) != 0)
        return INFINITY;
    return res.time;
}

static void rank_class(cache_entry *e, const collie_coll_args *a, const sim_model *m) {
    collie_coll_args r = representative(a);
    double cost[MAX_RANKED];
    const char *why = NULL;
    e->n = 0;
    for (size_t i = 0; i < collie_algorithm_count(a->coll) && e->n < MAX_RANKED; i++) {
        const collie_algorithm *alg = collie_algorithm_at(a->coll, i);
        if (alg->auto_by_rule_only || !collie_algorithm_accepts(alg, &r, &why))
            continue;
        double t = predict(alg, &r, m);
        int k = e->n++;
        for (; k > 0 && cost[k - 1] > t; k--) {   /* insertion sort, stable */
            cost[k] = cost[k - 1];
            e->ranked[k] = e->ranked[k - 1];
        }
        cost[k] = t;
        e->ranked[k] = alg;
    }
}

const collie_algorithm *collie_select_by_model(const collie_coll_args *a, const sim_model *m) {
    class_key k = key_of(a);
    const char *why = NULL;
    const collie_algorithm *best = NULL;
    pthread_mutex_lock(&cache_lock);
    cache_entry *e = &cache[key_hash(&k)];
    if (!e->used || !same_key(&e->key, &k)) {
        rank_class(e, a, m);
        e->key = k;
        e->used = true;
    }
    for (int i = 0; i < e->n && !best; i++)
        if (collie_algorithm_accepts(e->ranked[i], a, &why))
            best = e->ranked[i];
    pthread_mutex_unlock(&cache_lock);
    return best;
}

void collie_select_model_reset(void) {
    pthread_mutex_lock(&cache_lock);
    memset(cache, 0, sizeof cache);
    memset(logged_used, 0, sizeof logged_used);
    pthread_mutex_unlock(&cache_lock);
}

/* Marks a's class as logged; false when it was already. */
static bool first_log_of_class(const collie_coll_args *a) {
    class_key k = key_of(a);
    unsigned slot = key_hash(&k);
    pthread_mutex_lock(&cache_lock);
    bool first = !logged_used[slot] || !same_key(&logged[slot], &k);
    logged[slot] = k;
    logged_used[slot] = true;
    pthread_mutex_unlock(&cache_lock);
    return first;
}

void collie_select_log_costs(const collie_coll_args *a, const sim_model *m) {
    if (!first_log_of_class(a))
        return;
    char line[1024] = "";
    const char *why = NULL;
    collie_coll_args r = representative(a);
    for (size_t i = 0; i < collie_algorithm_count(a->coll); i++) {
        const collie_algorithm *alg = collie_algorithm_at(a->coll, i);
        if (!collie_algorithm_accepts(alg, &r, &why))
            continue;
        size_t len = strlen(line);
        snprintf(line + len, sizeof line - len, " %s=%.2fus", alg->name, predict(alg, &r, m) * 1e6);
    }
    collie_log(COLLIE_LOG_DEBUG, "%s of %llu bytes on %d ranks: predicted (at %llu bytes):%s",
               collie_coll_name(a->coll), (unsigned long long)a->bytes, a->size,
               (unsigned long long)r.bytes, line);
}
