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
    bool multicast;         /* the team's multicast was set up and verified (mcast needs it) */
    bool single_copy;       /* every rank can read and write every other rank's buffers
                               (shm with single-copy reads and the board; direct_segments) */
    bool any_order;         /* persistent, matched by initialization order: its starts may
                               come in any order relative to other calls (schedules only) */
    const int *node_of;     /* [size]: node of every rank (0 .. nnodes-1, numbered in order
                               of their first rank), when the team spans nodes; else NULL */
    int nnodes;
    collie_algo_params params;
} collie_coll_args;

enum { ALGO_NEEDS_COMMUTATIVE = 1, ALGO_NEEDS_IDEMPOTENT = 2, ALGO_NEEDS_SHM = 4,
       ALGO_NEEDS_MULTICAST = 8, ALGO_NEEDS_SINGLE_COPY = 16 };

/* Extension point for an algorithm that is not (only) a schedule — the multicast
 * broadcast, whose stage 1 is datagrams with unknown arrival.  Its request still sits in the
 * team's queue in start order and is driven by the same waiting loop (request.c), which
 * applies the team timeout and the dead-peer check to req->blocked_peer; instead of the
 * executor, these functions run it.  The schedule its build() makes is not executed; it
 * is the algorithm's worst case, for the verifier and the simulator. */
struct collie_request;
typedef struct collie_algo_driver {
    /* At planning, after build (allocate state in req->algo_state); COLLIE_OK or error. */
    int (*prepare)(struct collie_request *req);
    /* At every start. */
    void (*start)(struct collie_request *req);
    /* Like collie_exec_progress: never waits; COLLIE_OK when done, COLLIE_TIMEOUT while it
     * waits (setting req->blocked_peer and bumping req->moves when something moved). */
    int (*progress)(struct collie_request *req);
    /* Sleep at most timeout_ns or until something may have arrived (token as for the
     * transport's sleep); NULL: the transport's sleep. */
    void (*sleep)(struct collie_request *req, uint32_t token, uint64_t timeout_ns);
    void (*release)(struct collie_request *req);   /* free req->algo_state */
} collie_algo_driver;

typedef struct collie_algorithm {
    const char *name;
    int coll;
    unsigned needs;         /* ALGO_NEEDS_* */
    const char *summary;    /* one line for --help and docs */
    /* Optional extra check: return false and set *why to decline a call. */
    bool (*accepts)(const collie_coll_args *a, const char **why);
    /* Append this rank's schedule to s (already initialised for rank/size/elem_size). */
    void (*build)(collie_schedule *s, const collie_coll_args *a);
    /* Optional: the algorithm runs through these functions instead of the executor. */
    const collie_algo_driver *driver;
    /* "auto" picks it only through a rule (tuning file or built-in), never by the cost
     * model or registry order (the multicast broadcast: only where measured to win). */
    bool auto_by_rule_only;
} collie_algorithm;

/* The cases every reduction builder shares: nothing to do for 0 bytes, a copy of the
 * input for a team of one.  Returns true when it built the whole schedule. */
static inline bool algo_trivial_reduction(collie_schedule *s, const collie_coll_args *a) {
    if (a->bytes == 0)
        return true;
    if (a->size != 1)
        return false;
    sched_copy(s, sched_at(SBUF_RECV, 0), sched_at(SBUF_SEND, 0), a->bytes);
    return true;
}

/* bcast `flat`'s schedule, the root's buffer to every rank (bcast/flat.c; also the
 * schedule bcast `direct_copy` shows the verifier). */
void algo_bcast_root_to_all(collie_schedule *s, const collie_coll_args *a);

/* Registry (registry.c). */
const collie_algorithm *collie_algorithm_find(int coll, const char *name);
/* COLLIE_ERR_ARG naming the valid keys for a parameter alg does not take, or naming the
 * floor for a value below it (segments: a cache line). */
int collie_algorithm_check_params(const collie_algorithm *alg, const collie_algo_params *p);
size_t collie_algorithm_count(int coll);
const collie_algorithm *collie_algorithm_at(int coll, size_t i);
/* true when alg can serve the call; otherwise *why says why not (needs, accepts). */
bool collie_algorithm_accepts(const collie_algorithm *alg, const collie_coll_args *a,
                              const char **why);

#endif
