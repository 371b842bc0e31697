/*
 * mpi_layer.h — internals of libcollie_mpi, the PMPI interposition layer (src/mpi/).
 *
 * mpi_team.c      a collie team per communicator (cached as an MPI attribute), logging
 * mpi_world.c     collie_init under mpirun: MPI_COMM_WORLD's team as collie's world
 * mpi_log.c       COLLIE_MPI_LOG: a line per call, or a summary table at MPI_Finalize
 * mpi_types.c     MPI datatypes → collie datatypes (or a reason not to), cached per handle
 * mpi_ops.c       MPI ops → collie ops: the built-ins, user ops
 * mpi_cache.c     the map from MPI handles to the layer's records
 * mpi_coll.c      the intercepted collectives: blocking, MPI_I*, persistent
 * mpi_xcoll.c     allgather(v) … exscan: mapping a call to collie (bytes, v arrays, in place)
 * mpi_xcoll_calls.c  their MPI_* entry points: blocking, MPI_I*, persistent
 * mpi_stage.c     their buffers of datatypes with gaps, packed before and unpacked after
 * mpi_requests.c  the requests collie serves and the intercepted MPI_Wait/Test/Start/...
 * mpi_progress.c  progress shared with MPI: the wait loop, the blocking point-to-point calls
 * mpi_progress_coll.c, _ctor.c, _io.c  blocking calls passed to PMPI while a helper
 *                 thread (mpi_progress_help.c) moves collie's requests
 * mpi_transport_mixed.c  the shm+mpi transport of communicators spanning several nodes
 * mpi_transport.c      its channels between nodes: non-blocking two-sided MPI (p2p)
 * mpi_transport_rma.c  or MPI-3 RMA (MPI_Put + notification; COLLIE_MPI_TRANSPORT=rma)
 * mpi_rma_window.c     the RMA channels' window memory and its release
 *
 * Everything here calls MPI through PMPI_ only (never through the interposed names).
 */
#ifndef COLLIE_MPI_LAYER_H
#define COLLIE_MPI_LAYER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collie.h"
#include "algorithms/algorithm.h"
#include "transport/transport.h"

/* The persistent collectives: MPI-4's MPI_*_init, or Open MPI 4.1's MPIX_*_init (pcollreq
 * extension); CM_PERSISTENT 0 where the MPI has neither. */
#if defined(OPEN_MPI)
#include <mpi-ext.h>   /* Open MPI's extensions: MPIX_*_init (pcollreq) */
#endif
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define CM_PERSISTENT 1
#define PCOLL(name) MPIX_##name
#define PPCOLL(name) PMPIX_##name
#elif MPI_VERSION >= 4
#define CM_PERSISTENT 1
#define PCOLL(name) MPI_##name
#define PPCOLL(name) PMPI_##name
#else
#define CM_PERSISTENT 0
#endif

/* The layer's own functions are not exported: calls between them are direct, and the
 * per-call path can be inlined (part of keeping the layer thin). */
#pragma GCC visibility push(hidden)

/* The handle map (mpi_cache.c): MPI handle bits → a record. */
#define CM_MAP_BUCKETS 64
typedef struct cm_map {
    struct cm_node *buckets[CM_MAP_BUCKETS];
    uint64_t last_key;         /* the last hit, found again without hashing */
    void *last_value;          /* NULL: none */
} cm_map;
void *cm_map_get(cm_map *m, uint64_t key);
bool cm_map_put(cm_map *m, uint64_t key, void *value);
void *cm_map_del(cm_map *m, uint64_t key);
void cm_map_clear(cm_map *m, void (*drop)(void *value));
static inline uint64_t cm_handle_key(const void *handle, size_t bytes) {
    uint64_t k = 0;
    memcpy(&k, handle, bytes < sizeof k ? bytes : sizeof k);
    return k;
}
static inline uint64_t cm_comm_key(MPI_Comm c) { return cm_handle_key(&c, sizeof c); }
static inline uint64_t cm_type_key(MPI_Datatype t) { return cm_handle_key(&t, sizeof t); }

/* The context of a team's maker (mpi_split.c): the communicator its sub-teams are split
 * from, and whether the team owns it (a sub-team: freed with the team). */
typedef struct cm_split_ctx {
    MPI_Comm comm;
    bool owned;
} cm_split_ctx;

/* What the layer knows of a communicator, found once (mpi_team.c). */
typedef struct cm_comm {
    collie_team_t *team;       /* NULL: collie does not serve this communicator */
    cm_split_ctx split;        /* the team's maker context: this communicator */
    const char *why;           /* the reason, when team is NULL */
    const char *where;         /* "collie", "collie over shm+mpi", ... for the log */
    int rank, size;
    struct cm_comm *next;      /* all live records (freed at MPI_Finalize) */
    int nrequests;             /* entries of the request table made on it (mpi_requests.c) */
    bool freed;                /* MPI freed the communicator while nrequests > 0: the record
                                  (and its team) goes with the last of them */
    MPI_Errhandler errhandler; /* when freed: the communicator's error handler, for errors
                                  of those requests (the handle is gone; cm_error) */
} cm_comm;

/* What the layer knows of a datatype, found once (mpi_types.c). */
typedef struct cm_dtype {
    collie_dtype_t base;       /* what collie reduces it as; 0: it does not (why) */
    size_t mult;               /* base elements per element of the MPI type */
    unsigned ops;              /* bit i: collie serves built-in op i (cm_builtin_op_index) */
    const char *why;           /* why collie does not reduce it (base == 0) */
    const char *op_why;        /* why a built-in op outside `ops` goes to PMPI */
    bool named;                /* predefined */
    MPI_Aint lb, extent;
    bool contiguous;           /* its data is one block of `bytes` (broadcast as bytes) */
    size_t bytes;              /* MPI_Type_size */
} cm_dtype;

/* One intercepted call, as the application made it, and what collie would run instead. */
typedef struct cm_call {
    const char *fn;            /* "MPI_Allreduce", ... */
    int coll;                  /* COLL_ALLREDUCE, ... */
    const void *sendbuf;
    void *recvbuf;             /* the buffer of MPI_Bcast */
    int count;
    MPI_Datatype dtype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    /* filled by cm_prepare */
    const cm_comm *cc;         /* the communicator's record */
    collie_team_t *team;       /* the communicator's team */
    collie_dtype_t cdtype;
    size_t mult;               /* ccount = count * mult */
    bool packed;               /* bcast: this rank's type has gaps (packed, then sent) */
    bool owns_pack;            /* a packed request's: crecv is its packed copy (malloc'd) and
                                  pack_type a duplicate of dtype, freed by cm_pack_release */
    MPI_Datatype pack_type;
    bool start_order;          /* persistent, matched by start order (mpi_ordered.c) */
    MPI_Aint extent;           /* bcast: the type's extent */
    size_t ccount;
    collie_op_t cop;
    const void *csend;
    void *crecv;
    /* allgather … exscan (mpi_xcoll.c): the v arrays collie gets and the packed copies of
     * buffers with gaps; owned by the call (blocking) or its request (cm_extra_free). */
    struct cm_extra *extra;
} cm_call;

/* An MPI call of allgather(v) … exscan as the program made it (mpi_xcoll_calls.c):
 * s… the send side, r… the receive side; for the reductions rcount is the count
 * (reduce_scatter_block: per rank; scan, exscan: the vector) and rtype the datatype. */
typedef struct cm_xargs {
    const char *fn;
    int coll;
    bool v;                    /* a v form (reduce_scatter: rcounts) */
    const void *sendbuf;
    int scount;
    const int *scounts, *sdispls;
    MPI_Datatype stype;
    void *recvbuf;
    int rcount;
    const int *rcounts, *rdispls;
    MPI_Datatype rtype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
} cm_xargs;

/* Serves the call on collie (true, *rc its MPI result) or says why not (false, logged). */
bool cm_x_blocking(const cm_xargs *a, int *rc);
bool cm_x_request(const cm_xargs *a, bool persistent, MPI_Request *request, int *rc);

/* A buffer of a datatype with gaps, packed for collie (mpi_stage.c): n blocks of t,
 * counts[j] elements at displs[j] extents from buf (counts NULL: n blocks of `count`
 * elements one after the other), packed one after the other in tmp. */
typedef struct cm_stage {
    char *tmp;                 /* NULL: not staged */
    void *buf;
    MPI_Datatype type;         /* a dup of the program's (it may free its own) */
    size_t size;               /* MPI_Type_size */
    MPI_Aint extent;
    int n;
    size_t count;
    int *counts, *displs;      /* copies (v forms) */
    bool in, out;              /* packed before the collective / unpacked after it */
} cm_stage;

/* What a call of allgather … exscan owns while it runs. */
typedef struct cm_extra {
    collie_coll_v v;           /* the arrays collie gets (bytes or elements) */
    size_t *arrays;            /* their memory */
    cm_stage stage[2];         /* send, receive */
    const char *fn;
} cm_extra;
/* Packs the inputs (before each start), unpacks the outputs (after completion): collie
 * status.  Free: the packed copies, the dups, the arrays. */
int cm_extra_pack(cm_extra *x);
int cm_extra_unpack(cm_extra *x);
void cm_extra_free(cm_extra *x);
/* Packs (pack) or unpacks n elements of t (size bytes of data, extent apart) at elems to or
 * from tmp (n * size bytes), in pieces of at most INT_MAX bytes (mpi_types.c).  Always on
 * MPI_COMM_SELF: a request unpacks after the program may have freed its communicator. */
int cm_pack(bool pack, void *elems, size_t n, MPI_Datatype t, size_t size, MPI_Aint extent,
            char *tmp, const char *fn);

/* Teams (mpi_team.c). */
void cm_setup(void);                  /* once: collie's logging and selection from the env */
/* COLLIE_MPI_LOG (mpi_log.c): off, a line per call, or a table at MPI_Finalize. */
enum { CM_LOG_OFF = 0, CM_LOG_CALLS = 1, CM_LOG_SUMMARY = 2 };
/* Written once by cm_setup (under pthread_once, so every thread that went through
 * cm_setup reads the final values). */
extern int cm_log_on;                 /* COLLIE_MPI_LOG mode: CM_LOG_* */
extern bool cm_off;                   /* COLLIE_MPI=0 */
/* COLLIE_MPI_LOG=1: a line per call. */
static inline bool cm_logging(void) { return cm_log_on == CM_LOG_CALLS; }
/* Any logging (a line per call, or the summary's counts): the call goes through cm_log. */
static inline bool cm_log_wanted(void) { return cm_log_on > CM_LOG_OFF; }
static inline bool cm_disabled(void) { return cm_off; }
/* The record of comm (its team: shm on one node, shm+mpi across nodes, or the reason collie
 * does not serve it), created collectively on first use and cached; NULL with *why only
 * for MPI_COMM_NULL or without memory. */
const cm_comm *cm_comm_of(MPI_Comm comm, const char **why);
/* The team of comm; NULL with *why when collie cannot serve the communicator. */
collie_team_t *cm_team(MPI_Comm comm, const char **why);
/* Sets up comm's record now, inside the call that made the communicator (MPI_Init for
 * MPI_COMM_WORLD, the constructors): collective on comm; nothing for MPI_COMM_NULL or
 * COLLIE_MPI=0 (an intercommunicator's record says why it has no team).  parent: the communicator it was made from
 * (MPI_COMM_NULL: none), whose team tells whether comm lies on one node.  cm_made: the
 * same after a constructor that returned rc and *newcomm from parent; returns rc. */
void cm_team_early(MPI_Comm comm, MPI_Comm parent);
int cm_made(int rc, MPI_Comm parent, const MPI_Comm *newcomm);
/* A shm transport over comm, whose ranks share a node (collective). */
int cm_shm_transport(MPI_Comm comm, bool part_of_nodes, collie_transport **tp, const char **why);
/* A transport over all of comm (collective): shm on one node, else shm+mpi. */
int cm_transport_of(MPI_Comm comm, collie_transport **tp, const char **why);
/* Makes sub-teams of a team over a communicator (mpi_split.c): PMPI_Comm_split/dup, then
 * cm_transport_of; its context is a cm_split_ctx. */
struct collie_team_maker;
extern const struct collie_team_maker cm_team_maker;
/* A team made from comm (a record's, or the world's) learns how its sub-teams are made. */
void cm_team_set_maker(collie_team_t *team, cm_split_ctx *ctx, MPI_Comm comm, bool of_comm);
/* The call's line (COLLIE_MPI_LOG=1) or its count for the summary (mpi_team.c). */
void cm_log_line(const cm_call *c, const char *where, const char *why);
/* Logs the call (COLLIE_MPI_LOG): where it ran and why it went to PMPI. */
static inline void cm_log(const cm_call *c, const char *where, const char *why) {
    if (cm_log_wanted())
        cm_log_line(c, where, why);
}
int cm_log_mode(void);
void cm_log_count(const char *fn, const char *route);   /* for the summary */
void cm_log_summary(void);            /* at MPI_Finalize, collective over MPI_COMM_WORLD */
void cm_free_all_teams(void);         /* at MPI_Finalize */
/* A request of the table made on c's team keeps the record (and the team) alive after
 * MPI_Comm_free: MPI lets pending operations complete and persistent requests run on. */
void cm_comm_hold(const cm_comm *c);
void cm_comm_release(const cm_comm *c);

/* Types (mpi_types.c): true when collie computes exactly what MPI would. */
bool cm_map_reduction(cm_call *c, const char **why);
bool cm_map_bcast(cm_call *c, const char **why);
/* A broadcast of a type with gaps: packed to count * size bytes (its signature, the same
 * on every rank), broadcast by collie, unpacked (mpi_types.c). */
int cm_packed_bcast(const cm_call *c);
/* The same for a request (split-phase or persistent): the packed copy and a duplicate of
 * the datatype, owned by c (crecv: the copy; the root's data packed at once when `now`),
 * then at each start the root packs (pack) and at each completion the others unpack. */
int cm_pack_setup(cm_call *c, bool now);
int cm_pack_bcast(const cm_call *c, bool pack);
void cm_pack_release(cm_call *c);     /* frees what cm_pack_setup made; no-op otherwise */
void cm_free_types(void);             /* at MPI_Finalize */

/* Ops (mpi_ops.c).  Built-in op index 0..11 in COLLIE_OPID_* order, -1 if not built in. */
#define CM_NBUILTIN_OPS 12
int cm_builtin_op_index(MPI_Op op);
collie_op_t cm_builtin_op(int index);
bool cm_is_user_op(MPI_Op op);
collie_op_t cm_user_op(MPI_Op op, MPI_Datatype t);   /* its collie op for a predefined t */
void cm_free_user_ops(void);          /* at MPI_Finalize */
/* Open MPI reduces MPI_BYTE with every integer op (as unsigned bytes); MPICH only bitwise.
 * The MPI-5 standard ABI build (neither defined) serves the bitwise ops; PMPI decides the rest. */
#if defined(OPEN_MPI)
#define CM_BYTE_ARITHMETIC 1
#else
#define CM_BYTE_ARITHMETIC 0
#endif

/* Decides and fills c for collie (true) or gives the reason for PMPI (false). */
bool cm_prepare(cm_call *c, const char **why);
/* Its first part, shared by every collective: COLLIE_MPI, the thread level, the team. */
bool cm_prepare_comm(cm_call *c, const char **why);
/* The record of a datatype (mpi_types.c), made on first use; NULL without memory. */
const cm_dtype *cm_dtype_of(MPI_Datatype t);
/* Forgets the blocking calls' memo (mpi_coll.c): where MPI frees a communicator, a
 * datatype or an op, and at MPI_Finalize. */
void cm_memo_forget(void);
/* Maps a collie status to an MPI error, reported through comm's error handler. */
int cm_error(const cm_call *c, int status);

/* shm for the peers in `node` (my node), MPI (p2p or rma) for the others (collective). */
int cm_mixed_transport_create(MPI_Comm comm, MPI_Comm node, collie_transport **out);

/* Persistent calls under mpi_assert_strict_persistent_collective_ordering (mpi_ordered.c):
 * whether the init's info or the communicator's asserts it, and the request, matched by
 * start order, for a prepared call. */
bool cm_start_order_asserted(MPI_Info info, MPI_Comm comm);
int cm_plan_start_order(const cm_call *c, collie_request_t **req);

/* Requests (mpi_requests.c). */
int cm_request_add(collie_request_t *req, const cm_call *c, bool persistent, MPI_Request *handle);
int cm_start_request(collie_request_t *req, const cm_call *c);
int cm_requests_active(void);         /* collie requests started and not finished */
void cm_requests_finalize(void);      /* at MPI_Finalize: the persistent requests' MPI side */
/* Released MPI channels (mpi_transport.c: their release blocks nowhere): a step of each,
 * and (at MPI_Finalize, where every rank is) all of them to the end. */
void cm_mpi_retire_poll(void);
void cm_mpi_retire_all(void);
/* The RMA transport's windows (mpi_rma_window.c; only with COLLIE_MPI_TRANSPORT=rma):
 * opened where MPI is initialised (collective over MPI_COMM_WORLD; after cm_world_open),
 * every one freed at MPI_Finalize after cm_mpi_retire_all. */
void cm_rma_world_open(void);
void cm_rma_world_close(void);
void cm_progress_all(void);           /* one step of every active collie request */

/* Shared progress (mpi_progress.c). */
void cm_poke_mpi(void);               /* runs MPI's progress engine once */
/* The layer's own duplicate of MPI_COMM_WORLD (made where MPI is initialised, freed at
 * MPI_Finalize; MPI_COMM_NULL before or with one rank), and a poke of MPI's progress
 * engine from any thread: an MPI_Iprobe on it, where no message ever waits. */
void cm_world_open(void);
MPI_Comm cm_world(void);
void cm_world_close(void);
void cm_poke_quiet(void);
/* Runs cm_progress_all and done(arg) in turn until done is true (true) or no collie
 * request is active any more (false: the caller may block in PMPI). */
bool cm_wait_until(bool (*done)(void *), void *arg);
int cm_wait_mpi(MPI_Request *req, MPI_Status *status);             /* PMPI_Wait, shared */
/* Collie's requests moving while this thread blocks in a PMPI call (mpi_progress_help.c):
 * cm_help_begin before the call (true when a helper thread now runs them),
 * cm_help_end(began, rc) after it (returns rc). */
bool cm_help_begin(void);
int cm_help_end(bool began, int rc);
/* mpi_requests.c, for the helper: collie's side of every active request without MPI
 * (returns how many still run), whether that needs no MPI, and MPI's side afterwards. */
int cm_progress_collie_only(void);
bool cm_active_need_no_mpi(void);
void cm_complete_deferred(void);
int cm_waitall_mpi(int n, MPI_Request reqs[], MPI_Status statuses[]);
/* Whether every request of reqs is complete (null and inactive ones count), completing
 * none (else MPI's progress engine runs once); a wait then completes them with
 * PMPI_Waitall, which returns at once (not PMPI_Testall: mpi_progress.c says why). */
bool cm_mpi_all_complete(int n, const MPI_Request reqs[]);
int cm_wait_collie(collie_request_t *req);  /* collie_wait that keeps MPI and the rest moving */
int cm_blocking_wait(collie_request_t *req);   /* the same while collie requests are active */
void cm_progress_finalize(void);      /* at MPI_Finalize */

#pragma GCC visibility pop

#endif
