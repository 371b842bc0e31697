/*
 * algorithm.h — the algorithm registry (layer 4).  Each algorithm lives in its own file
 * under src/algorithms/<collective>/, starting with a header comment (paper and section,
 * rounds, bytes per rank, restrictions, cost formula), and exports one
 * `const collie_algorithm collie_algo_<coll>_<name>` that registry.c lists.
 */
#ifndef COLLIE_ALGORITHM_H
#define COLLIE_ALGORITHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "schedule/schedule.h"

enum collie_coll { COLL_ALLREDUCE = 0, COLL_REDUCE, COLL_BCAST, COLL_BARRIER, COLL_COUNT };
const char *collie_coll_name(int coll);   /* "allreduce", ... */

/* Parameters given after the algorithm name: "nway_dissemination:n=3,segment=65536". */
#define COLLIE_MAX_PARAMS 4
typedef struct collie_algo_params {
    int count;
    char key[COLLIE_MAX_PARAMS][24];
    long long value[COLLIE_MAX_PARAMS];
} collie_algo_params;
long long collie_param(const collie_algo_params *p, const char *key, long long def);

/* Everything a builder may look at.  All ranks of one call see the same values except rank. */
typedef struct collie_coll_args {
    int coll;               /* enum collie_coll */
    int rank, size;
    int root;               /* reduce, bcast; 0 otherwise */
    size_t count;           /* elements (0 for barrier) */
    size_t elem_size;       /* bytes per element */
    uint64_t bytes;         /* count * elem_size */
    bool commutative;       /* the op (allreduce, reduce) */
    bool idempotent;
    bool in_place;          /* SBUF_SEND and SBUF_RECV are the same memory */
    bool shared_memory;     /* the transport is shared memory (flat algorithms need it) */
    const int *node_of;     /* [size]: node of every rank (0 .. nnodes-1, numbered in order
                               of their first rank), when the team spans nodes; else NULL */
    int nnodes;
    collie_algo_params params;
} collie_coll_args;

enum { ALGO_NEEDS_COMMUTATIVE = 1, ALGO_NEEDS_IDEMPOTENT = 2, ALGO_NEEDS_SHM = 4 };

typedef struct collie_algorithm {
    const char *name;
    int coll;
    unsigned needs;         /* ALGO_NEEDS_* */
    const char *summary;    /* one line for --help and docs */
    /* Optional extra check: return false and set *why to decline a call. */
    bool (*accepts)(const collie_coll_args *a, const char **why);
    /* Append this rank's schedule to s (already initialised for rank/size/elem_size). */
    void (*build)(collie_schedule *s, const collie_coll_args *a);
} collie_algorithm;

/* Registry (registry.c). */
const collie_algorithm *collie_algorithm_find(int coll, const char *name);
size_t collie_algorithm_count(int coll);
const collie_algorithm *collie_algorithm_at(int coll, size_t i);
/* true when alg can serve the call; otherwise *why says why not (needs, accepts). */
bool collie_algorithm_accepts(const collie_algorithm *alg, const collie_coll_args *a,
                              const char **why);

#endif
