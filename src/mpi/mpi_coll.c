/*
 * mpi_coll.c — the intercepted collectives: MPI_Allreduce, MPI_Reduce, MPI_Bcast,
 * MPI_Barrier, their MPI_I* forms and the persistent forms the MPI provides (MPI-4
 * MPI_*_init in MPICH 4, MPIX_*_init of Open MPI's pcollreq extension).
 *
 * Each call is prepared (cm_prepare): its communicator's team, its datatype and op
 * mapped (mpi_types.c), MPI_IN_PLACE translated per MPI's rules (allreduce: every rank;
 * reduce: only the root, where recvbuf is input and output; a non-root rank passing
 * MPI_IN_PLACE is an error).  When collie cannot compute exactly what MPI would, the
 * call goes to the PMPI_ function unchanged.  The decision depends only on what every
 * rank passes alike (communicator, type signature, op), so all ranks take the same path.
 *
 * The memo: each blocking collective remembers the (communicator, datatype, op) of its
 * last call served by collie and what it mapped to; a call with the same three goes
 * straight to collie with a few comparisons (the 8-byte MPI_Allreduce then costs what
 * collie_allreduce costs: bench/layer_cost.sh).  It is forgotten wherever MPI frees a
 * communicator, a datatype or an op (their handles are reused).  COLLIE_MPI_LOG logs
 * the calls served through the memo too (one more branch when it is off).  The memo is
 * per thread (MPI_THREAD_MULTIPLE serves blocking calls, one thread per communicator);
 * forgetting bumps an epoch that every thread's memo is checked against.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

static cm_call call_of(const char *fn, int coll, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype dtype, MPI_Op op, int root, MPI_Comm comm) {
    cm_call c;
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.coll = coll;
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.count = count;
    c.dtype = dtype;
    c.op = op;
    c.root = root;
    c.comm = comm;
    return c;
}

/* The thread level is fixed by MPI_Init_thread: asked once (threads may ask at once). */
static bool thread_multiple(void) {
    static atomic_int known = -1;
    int level = atomic_load_explicit(&known, memory_order_relaxed);
    if (level < 0) {
        PMPI_Query_thread(&level);
        atomic_store_explicit(&known, level, memory_order_relaxed);
    }
    return level == MPI_THREAD_MULTIPLE;
}

/* MPI_Allreduce, not MPI_Iallreduce or MPI_Allreduce_init. */
static bool blocking_call(const cm_call *c) {
    return strncmp(c->fn, "MPI_I", 5) != 0 && !strstr(c->fn, "_init");
}

/* Says once (COLLIE_LOG=info, and COLLIE_MPI_LOG per call) what MULTIPLE changes. */
static void log_multiple_once(const char *why) {
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        collie_log(COLLIE_LOG_INFO, "%s; calls on one communicator from two threads at once "
                   "fail with MPI_ERR_ARG (MPI forbids them)", why);
}

static bool map_buffers(cm_call *c, const char **why) {
    int rank = c->cc->rank;
    c->csend = c->sendbuf;
    c->crecv = c->recvbuf;
    if (c->coll == COLL_ALLREDUCE && c->sendbuf == MPI_IN_PLACE)
        c->csend = COLLIE_IN_PLACE;
    if (c->coll == COLL_REDUCE && c->sendbuf == MPI_IN_PLACE)
        c->csend = rank == c->root ? COLLIE_IN_PLACE : NULL;
    if (c->coll == COLL_REDUCE && rank != c->root)
        c->crecv = NULL;
    if (c->coll != COLL_BCAST && c->coll != COLL_BARRIER && c->ccount && !c->csend) {
        *why = "MPI_IN_PLACE at a non-root rank of MPI_Reduce";
        return false;
    }
    return true;
}

/* The part of cm_prepare every intercepted collective shares: COLLIE_MPI, the thread
 * level, the communicator's team.  The same answer on every rank of the communicator. */
bool cm_prepare_comm(cm_call *c, const char **why) {
    *why = NULL;
    cm_setup();
    if (cm_disabled()) {
        *why = "COLLIE_MPI=0";
        return false;
    }
    if (thread_multiple() && !blocking_call(c)) {
        *why = "MPI_THREAD_MULTIPLE: split-phase and persistent calls go to MPI (their request "
               "table serves one thread); blocking calls are served, one thread per communicator";
        log_multiple_once(*why);
        return false;
    }
    c->cc = cm_comm_of(c->comm, why);
    if (!c->cc)
        return false;
    c->team = c->cc->team;
    if (!c->team) {
        *why = c->cc->why;
        return false;
    }
    return true;
}

/* Per call, everything comes from the records cached per communicator and datatype. */
bool cm_prepare(cm_call *c, const char **why) {
    if (!cm_prepare_comm(c, why))
        return false;
    if ((c->coll == COLL_REDUCE || c->coll == COLL_BCAST) && (c->root < 0 || c->root >= c->cc->size)) {
        *why = "root out of range";
        return false;
    }
    if (c->coll == COLL_ALLREDUCE || c->coll == COLL_REDUCE) {
        if (!cm_map_reduction(c, why))
            return false;
    } else if (c->coll == COLL_BCAST && !cm_map_bcast(c, why)) {
        return false;
    }
    return map_buffers(c, why);
}

/* cm_prepare for the request forms (a broadcast of a type with gaps is served too: its
 * request owns a packed copy, run_request). */
static bool cm_prepare_request(cm_call *c, const char **why) {
    return cm_prepare(c, why);
}

/* "collie", or "collie over shm+mpi" when the team spans nodes. */
static const char *where(const cm_call *c) { return c->cc->where; }

/* ---- the memo of the blocking calls --------------------------------------------------------- */

typedef struct cm_memo {
    const cm_comm *cc;            /* NULL: empty */
    unsigned epoch;               /* memo_epoch when it was made */
    MPI_Comm comm;
    MPI_Datatype dtype;
    MPI_Op op;
    collie_dtype_t cdtype;
    size_t mult;
    collie_op_t cop;
} cm_memo;

/* Per thread (MPI_THREAD_MULTIPLE: threads call on different communicators at once); a
 * free in any thread bumps memo_epoch, which empties every thread's memo at once. */
static _Thread_local cm_memo memo[COLL_COUNT];
static atomic_uint memo_epoch;

void cm_memo_forget(void) {
    atomic_fetch_add_explicit(&memo_epoch, 1, memory_order_acq_rel);
    memset(memo, 0, sizeof memo);
}

static void remember(const cm_call *c) {
    unsigned epoch = atomic_load_explicit(&memo_epoch, memory_order_acquire);
    memo[c->coll] = (cm_memo){ c->cc, epoch, c->comm, c->dtype, c->op, c->cdtype, c->mult, c->cop };
}

/* The memo of coll if it matches the call, else NULL. */
static inline const cm_memo *recall(int coll, MPI_Comm comm, MPI_Datatype dtype, MPI_Op op, int count) {
    const cm_memo *m = &memo[coll];
    return m->cc && m->comm == comm && m->dtype == dtype && m->op == op && count >= 0 &&
                   m->epoch == atomic_load_explicit(&memo_epoch, memory_order_acquire)
               ? m
               : NULL;
}

/* The end of a call served through the memo: its log line, or its error reported as the
 * full path would. */
static int memo_done(cm_call c, const cm_memo *m, int st) {
    c.cc = m->cc;
    c.team = m->cc->team;
    cm_log(&c, m->cc->where, NULL);
    return st ? cm_error(&c, st) : MPI_SUCCESS;
}

/* Runs the blocking form on collie; the caller already prepared c. */
static int run_blocking(cm_call *c) {
    int st = COLLIE_OK;
    if (c->coll == COLL_ALLREDUCE)
        st = collie_allreduce(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop);
    else if (c->coll == COLL_REDUCE)
        st = collie_reduce(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop, c->root);
    else if (c->coll == COLL_BCAST && c->packed)
        st = cm_packed_bcast(c);
    else if (c->coll == COLL_BCAST)
        st = collie_bcast(c->team, c->crecv, c->ccount, c->cdtype, c->root);
    else
        st = collie_barrier(c->team);
    cm_log(c, where(c), NULL);
    if (!st && !c->packed)
        remember(c);
    return st ? cm_error(c, st) : MPI_SUCCESS;
}

/* Plans the request form (split-phase or persistent) on collie. */
static int plan_request(cm_call *c, bool persistent, collie_request_t **req) {
    if (persistent && c->start_order)
        return cm_plan_start_order(c, req);
    if (persistent) {
        if (c->coll == COLL_ALLREDUCE)
            return collie_allreduce_init(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop, req);
        if (c->coll == COLL_REDUCE)
            return collie_reduce_init(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop,
                                      c->root, req);
        if (c->coll == COLL_BCAST)
            return collie_bcast_init(c->team, c->crecv, c->ccount, c->cdtype, c->root, req);
        return collie_barrier_init(c->team, req);
    }
    if (c->coll == COLL_ALLREDUCE)
        return collie_iallreduce(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop, req);
    if (c->coll == COLL_REDUCE)
        return collie_ireduce(c->team, c->csend, c->crecv, c->ccount, c->cdtype, c->cop, c->root, req);
    if (c->coll == COLL_BCAST)
        return collie_ibcast(c->team, c->crecv, c->ccount, c->cdtype, c->root, req);
    return collie_ibarrier(c->team, req);
}

/* A broadcast of a type with gaps runs on a packed copy the request owns (the root
 * packs now if split-phase, else at each MPI_Start; mpi_requests.c unpacks). */
static int run_request(cm_call *c, bool persistent, MPI_Request *handle) {
    collie_request_t *req = NULL;
    int st = c->packed ? cm_pack_setup(c, !persistent) : COLLIE_OK;
    if (!st)
        st = plan_request(c, persistent, &req);
    if (st) {
        int rc = cm_error(c, st);
        cm_pack_release(c);
        return rc;
    }
    cm_log(c, where(c), c->start_order ? "matched by start order: "
                                         "mpi_assert_strict_persistent_collective_ordering" : NULL);
    return cm_request_add(req, c, persistent, handle);
}

/* ---- blocking ----------------------------------------------------------------------------- */

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype, MPI_Op op,
                  MPI_Comm comm) {
    const cm_memo *m = recall(COLL_ALLREDUCE, comm, dtype, op, count);
    if (m) {
        int st = collie_allreduce(m->cc->team, sendbuf == MPI_IN_PLACE ? COLLIE_IN_PLACE : sendbuf,
                                  recvbuf, (size_t)count * m->mult, m->cdtype, m->cop);
        if (st || cm_log_wanted())
            return memo_done(call_of("MPI_Allreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count,
                                     dtype, op, 0, comm), m, st);
        return MPI_SUCCESS;
    }
    cm_call c = call_of("MPI_Allreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0, comm);
    const char *why;
    if (cm_prepare(&c, &why))
        return run_blocking(&c);
    cm_log(&c, "PMPI", why);
    return PMPI_Allreduce(sendbuf, recvbuf, count, dtype, op, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype, MPI_Op op,
               int root, MPI_Comm comm) {
    const cm_memo *m = recall(COLL_REDUCE, comm, dtype, op, count);
    if (m && root >= 0 && root < m->cc->size && (sendbuf != MPI_IN_PLACE || m->cc->rank == root)) {
        bool me = m->cc->rank == root;
        int st = collie_reduce(m->cc->team, sendbuf == MPI_IN_PLACE ? COLLIE_IN_PLACE : sendbuf,
                               me ? recvbuf : NULL, (size_t)count * m->mult, m->cdtype, m->cop, root);
        if (st || cm_log_wanted())
            return memo_done(call_of("MPI_Reduce", COLL_REDUCE, sendbuf, recvbuf, count, dtype,
                                     op, root, comm), m, st);
        return MPI_SUCCESS;
    }
    cm_call c = call_of("MPI_Reduce", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, comm);
    const char *why;
    if (cm_prepare(&c, &why))
        return run_blocking(&c);
    cm_log(&c, "PMPI", why);
    return PMPI_Reduce(sendbuf, recvbuf, count, dtype, op, root, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm) {
    const cm_memo *m = recall(COLL_BCAST, comm, dtype, MPI_OP_NULL, count);
    if (m && root >= 0 && root < m->cc->size) {
        int st = collie_bcast(m->cc->team, buf, (size_t)count * m->mult, m->cdtype, root);
        if (st || cm_log_wanted())
            return memo_done(call_of("MPI_Bcast", COLL_BCAST, NULL, buf, count, dtype,
                                     MPI_OP_NULL, root, comm), m, st);
        return MPI_SUCCESS;
    }
    cm_call c = call_of("MPI_Bcast", COLL_BCAST, NULL, buf, count, dtype, MPI_OP_NULL, root, comm);
    const char *why;
    if (cm_prepare(&c, &why))
        return run_blocking(&c);
    cm_log(&c, "PMPI", why);
    return PMPI_Bcast(buf, count, dtype, root, comm);
}

int MPI_Barrier(MPI_Comm comm) {
    const cm_memo *m = recall(COLL_BARRIER, comm, MPI_DATATYPE_NULL, MPI_OP_NULL, 0);
    if (m) {
        int st = collie_barrier(m->cc->team);
        if (st || cm_log_wanted())
            return memo_done(call_of("MPI_Barrier", COLL_BARRIER, NULL, NULL, 0, MPI_DATATYPE_NULL,
                                     MPI_OP_NULL, 0, comm), m, st);
        return MPI_SUCCESS;
    }
    cm_call c = call_of("MPI_Barrier", COLL_BARRIER, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, comm);
    const char *why;
    if (cm_prepare(&c, &why))
        return run_blocking(&c);
    cm_log(&c, "PMPI", why);
    return PMPI_Barrier(comm);
}

/* ---- split-phase ---------------------------------------------------------------------------- */

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request) {
    cm_call c = call_of("MPI_Iallreduce", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0, comm);
    const char *why;
    if (cm_prepare_request(&c, &why))
        return run_request(&c, false, request);
    cm_log(&c, "PMPI", why);
    return PMPI_Iallreduce(sendbuf, recvbuf, count, dtype, op, comm, request);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
    cm_call c = call_of("MPI_Ireduce", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, comm);
    const char *why;
    if (cm_prepare_request(&c, &why))
        return run_request(&c, false, request);
    cm_log(&c, "PMPI", why);
    return PMPI_Ireduce(sendbuf, recvbuf, count, dtype, op, root, comm, request);
}

int MPI_Ibcast(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm,
               MPI_Request *request) {
    cm_call c = call_of("MPI_Ibcast", COLL_BCAST, NULL, buf, count, dtype, MPI_OP_NULL, root, comm);
    const char *why;
    if (cm_prepare_request(&c, &why))
        return run_request(&c, false, request);
    cm_log(&c, "PMPI", why);
    return PMPI_Ibcast(buf, count, dtype, root, comm, request);
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    cm_call c = call_of("MPI_Ibarrier", COLL_BARRIER, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, comm);
    const char *why;
    if (cm_prepare_request(&c, &why))
        return run_request(&c, false, request);
    cm_log(&c, "PMPI", why);
    return PMPI_Ibarrier(comm, request);
}

/* ---- persistent ------------------------------------------------------------------------------ */
#if CM_PERSISTENT

int PCOLL(Allreduce_init)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype,
                          MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_call c = call_of("MPI_Allreduce_init", COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op, 0, comm);
    const char *why;
    if (cm_prepare_request(&c, &why)) {
        c.start_order = cm_start_order_asserted(info, comm);
        return run_request(&c, true, request);
    }
    cm_log(&c, "PMPI", why);
    return PPCOLL(Allreduce_init)(sendbuf, recvbuf, count, dtype, op, comm, info, request);
}

int PCOLL(Reduce_init)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dtype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_call c = call_of("MPI_Reduce_init", COLL_REDUCE, sendbuf, recvbuf, count, dtype, op, root, comm);
    const char *why;
    if (cm_prepare_request(&c, &why)) {
        c.start_order = cm_start_order_asserted(info, comm);
        return run_request(&c, true, request);
    }
    cm_log(&c, "PMPI", why);
    return PPCOLL(Reduce_init)(sendbuf, recvbuf, count, dtype, op, root, comm, info, request);
}

int PCOLL(Bcast_init)(void *buf, int count, MPI_Datatype dtype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request) {
    cm_call c = call_of("MPI_Bcast_init", COLL_BCAST, NULL, buf, count, dtype, MPI_OP_NULL, root, comm);
    const char *why;
    if (cm_prepare_request(&c, &why)) {
        c.start_order = cm_start_order_asserted(info, comm);
        return run_request(&c, true, request);
    }
    cm_log(&c, "PMPI", why);
    return PPCOLL(Bcast_init)(buf, count, dtype, root, comm, info, request);
}

int PCOLL(Barrier_init)(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    cm_call c = call_of("MPI_Barrier_init", COLL_BARRIER, NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, comm);
    const char *why;
    if (cm_prepare_request(&c, &why)) {
        c.start_order = cm_start_order_asserted(info, comm);
        return run_request(&c, true, request);
    }
    cm_log(&c, "PMPI", why);
    return PPCOLL(Barrier_init)(comm, info, request);
}

#endif

/* ---- init and finalize ------------------------------------------------------------------------ */

/* MPI_COMM_WORLD's team is set up here, where every rank is anyway (mpi_team.c says why
 * not in the first collective). */
static int init_done(int rc) {
    if (rc == MPI_SUCCESS) {
        int level = MPI_THREAD_MULTIPLE;
        PMPI_Query_thread(&level);
        collie_set_serial_calls(level <= MPI_THREAD_FUNNELED);   /* one thread at a time */
        cm_setup();
        cm_world_open();
        if (!cm_disabled())
            cm_rma_world_open();
        cm_team_early(MPI_COMM_WORLD, MPI_COMM_NULL);
    }
    return rc;
}

int MPI_Init(int *argc, char ***argv) { return init_done(PMPI_Init(argc, argv)); }

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    return init_done(PMPI_Init_thread(argc, argv, required, provided));
}

int MPI_Finalize(void) {
    cm_log_summary();
    cm_memo_forget();
    cm_progress_finalize();
    cm_requests_finalize();
    collie_subteams_free_all();   /* their communicators and MPI channels, while MPI is up */
    cm_free_all_teams();
    cm_mpi_retire_all();          /* the released MPI channels: every rank is here */
    cm_rma_world_close();
    cm_world_close();
    cm_free_user_ops();
    cm_free_types();
    return PMPI_Finalize();
}
