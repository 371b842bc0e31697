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

enum collie_coll {
    COLL_ALLREDUCE = 0, COLL_REDUCE, COLL_BCAST, COLL_BARRIER,
    COLL_ALLGATHER, COLL_REDUCE_SCATTER, COLL_ALLTOALL, COLL_GATHER, COLL_SCATTER, COLL_SCAN,
    COLL_EXSCAN, COLL_COUNT
};
const char *collie_coll_name(int coll);   /* "allreduce", ... */
/* The collective combines inputs with an op (allreduce, reduce, reduce_scatter, scan,
 * exscan); it has a root (reduce, bcast, gather, scatter). */
bool collie_coll_has_op(int coll);
bool collie_coll_rooted(int coll);

/* Parameters given after the algorithm name: "nway_dissemination:n=3,segment=65536". */
#define COLLIE_MAX_PARAMS 4
typedef struct collie_algo_params {
    int count;
    char key[COLLIE_MAX_PARAMS][24];
    long long value[COLLIE_MAX_PARAMS];
} collie_algo_params;
long long collie_param(const collie_algo_params *p, const char *key, long long def);

/* The arrays of a v form (allgatherv, reduce_scatter with counts, alltoallv, gatherv,
 * scatterv), in elements, `size` entries each, owned by the caller for the life of the
 * request (layout: coll_layout.c, COLLS_SPEC.md):
 *   allgatherv  counts, displs = recvcounts, displs (every rank); own = sendcount
 *   gatherv     counts, displs = recvcounts, displs (root only, else NULL); own = sendcount
 *   scatterv    counts, displs = sendcounts, displs (root only, else NULL); own = recvcount
 *   reduce_scatter  counts = recvcounts (the same on every rank), displs NULL: block j
 *               starts at counts[0] + … + counts[j-1]; own = counts[rank]
 *   alltoallv   counts, displs = sendcounts, sdispls; rcounts, rdispls = recvcounts,
 *               rdispls (in place: counts, displs are ignored, the recv arrays serve
 *               both); own = 0 */
typedef struct collie_coll_v {
    const size_t *counts, *displs;
    const size_t *rcounts, *rdispls;
    size_t own;
} collie_coll_v;

/* Everything a builder may look at.  All ranks of one call see the same values except
 * rank, v and (gather, scatter) in_place. */
typedef struct collie_coll_args {
    int coll;               /* enum collie_coll */
    int rank, size;
    int root;               /* reduce, bcast, gather, scatter; 0 otherwise */
    /* Elements of one block (0 for barrier): allreduce, reduce, bcast, scan, exscan the
     * vector; allgather, alltoall, gather, scatter a rank's block; reduce_scatter the
     * per-rank result.  v forms: this rank's v->own. */
    size_t count;
    size_t elem_size;       /* bytes per element */
    uint64_t bytes;         /* count * elem_size */
    bool commutative;       /* the op (allreduce, reduce) */
    bool idempotent;
    bool in_place;          /* SBUF_SEND and SBUF_RECV are the same memory (gather,
                               scatter: only ever true at the root) */
    bool shared_memory;     /* the transport is shared memory (flat algorithms need it) */
    bool multicast;         /* the team's multicast was set up and verified (mcast needs it) */
    bool single_copy;       /* every rank can read and write every other rank's buffers
                               (shm with single-copy reads and the board; direct_segments) */
    bool any_order;         /* persistent, matched by initialization order: its starts may
                               come in any order relative to other calls (schedules only) */
    uint64_t cell_bytes;    /* the shm transport's copy cells (cells.c): bytes per cell, or 0 */
    bool shared_cores;      /* more ranks than cores on this node, as rank 0 counted them
                               (collie_transport.shared_cores): ranks run in turn */
    const int *node_of;     /* [size]: node of every rank (0 .. nnodes-1, numbered in order
                               of their first rank), when the team spans nodes; else NULL */
    int nnodes;
    collie_algo_params params;
    /* The v form's arrays of this rank, NULL for the block form.  (The verifier's
     * sym_run/sym_verify take an array of `size` entries here, entry r for rank r.) */
    const collie_coll_v *v;
} collie_coll_args;

/* ---- buffer layout (coll_layout.c; the table in COLLS_SPEC.md) ------------------------- */
/* Bytes of SBUF_SEND and SBUF_RECV that rank `rank` of call a uses (a->v: that rank's
 * arrays); 0 for a buffer the rank does not use.  In place both are the extent of the
 * shared memory where SEND is RECV (reduce_scatter, alltoall, scan, exscan), else SEND is 0
 * (allgather, gather and scatter roots). */
void collie_coll_buffer_bytes(const collie_coll_args *a, int rank, uint64_t *send,
                              uint64_t *recv);
/* Block j (0 … size-1) of this rank's buffer buf (SBUF_SEND or SBUF_RECV), block and v
 * forms alike: its byte offset in *off and length in *len.  Multi-block buffers:
 * allgather/gather RECV (block from rank j), scatter SEND, alltoall SEND (to j) and RECV
 * (from j), reduce_scatter SEND (block for rank j; in place SEND is RECV).  Single-block buffers
 * (j ignored): allgather/gather SEND, scatter/reduce_scatter RECV, scan/exscan both, and
 * the other collectives: [0, count·elem).  In place, the alltoall SEND layout is the
 * RECV layout.  False (and 0, 0) when rank j's block is not known here (gatherv/scatterv
 * arrays on a non-root). */
bool collie_coll_block(const collie_coll_args *a, int buf, int j, uint64_t *off,
                       uint64_t *len);
/* Where this rank's own contribution lies (allgather, gather): SEND at 0, or in place
 * its block of RECV; *len its bytes. */
sched_ref collie_coll_own_block(const collie_coll_args *a, uint64_t *len);

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
