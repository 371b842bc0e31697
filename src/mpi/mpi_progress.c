/*
 * mpi_progress.c — progress shared between collie and the MPI underneath.
 *
 * A collie request moves only when its rank runs collie's executor; an MPI request moves
 * only inside MPI.  So while collie has active requests (cm_requests_active() > 0), every
 * place where the program can block in MPI runs one loop (cm_wait_until) that alternates
 * a pass over every active collie request (cm_progress_all: collie_test(req, 0) on each,
 * whatever its communicator) with a non-blocking MPI call that drives MPI's progress
 * engine (PMPI_Test / PMPI_Request_get_status / PMPI_Iprobe of what is waited for, or a
 * test of a generalized request that never completes, which makes MPICH and Open MPI run
 * their progress engine once).  The loop spins briefly, then yields the core at every turn
 * (ranks may outnumber cores).
 *
 * Intercepted here: the blocking point-to-point calls MPI_Send, MPI_Ssend, MPI_Rsend,
 * MPI_Recv, MPI_Sendrecv, MPI_Probe, MPI_Mprobe and MPI_Mrecv.  With no active collie
 * request they go straight to PMPI_ (one load and a branch); otherwise they become their
 * non-blocking PMPI_I* form and the loop.  The completion calls (mpi_requests.c) and the
 * blocking collectives collie serves (through collie_blocking_wait, set in cm_setup) use
 * the same loop.
 *
 * The blocking collectives collie does not serve (MPI_Alltoall, ...) and
 * MPI_Sendrecv_replace cannot become a nonblocking form on one rank only (MPI does not
 * match a nonblocking collective with a blocking one): a helper thread runs collie's
 * requests while they block (mpi_progress_coll.c, mpi_progress_help.c); so do the
 * communicator and window constructors and the window synchronisation calls
 * (mpi_progress_ctor.c) and MPI-IO's collective calls (mpi_progress_io.c).  Limit: the
 * blocking calls none of these intercepts (MPI_Comm_free, MPI_Comm_spawn, ...) still block
 * without running collie's requests.
 */
#include <sched.h>

#include "core/internal.h"
#include "mpi/mpi_layer.h"

static MPI_Request poke_req = MPI_REQUEST_NULL;

/* The layer's own duplicate of MPI_COMM_WORLD, made where MPI is initialised.  No message
 * is ever sent on it, so an MPI_Iprobe on it always runs MPI's progress engine: MPICH runs
 * none when the probe finds a message, and a message of the program not yet received on
 * MPI_COMM_WORLD (a rank still in a blocking collective before its MPI_Irecv) turned every
 * poke of a waiting rank into a no-op — a peer's MPI_Win_flush to it never returned
 * (mpi_soak, COLLIE_MPI_TRANSPORT=rma, MPICH).  Unlike a test of one shared request,
 * any thread may probe it at any time. */
static MPI_Comm own_world = MPI_COMM_NULL;

void cm_world_open(void) {
    int size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (own_world == MPI_COMM_NULL && size > 1)   /* MPICH never progresses on a 1-rank probe */
        PMPI_Comm_dup(MPI_COMM_WORLD, &own_world);
}

MPI_Comm cm_world(void) { return own_world; }

void cm_world_close(void) {
    if (own_world != MPI_COMM_NULL)
        PMPI_Comm_free(&own_world);
}

void cm_poke_quiet(void) {
    int flag;
    MPI_Comm comm = own_world != MPI_COMM_NULL ? own_world : MPI_COMM_WORLD;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
}

static int poke_query(void *extra, MPI_Status *status) {
    (void)extra;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}
static int poke_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int poke_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

void cm_poke_mpi(void) {
    int flag = 0;
    if (poke_req == MPI_REQUEST_NULL &&
        PMPI_Grequest_start(poke_query, poke_free, poke_cancel, NULL, &poke_req) != MPI_SUCCESS) {
        poke_req = MPI_REQUEST_NULL;
        cm_poke_quiet();
        return;
    }
    PMPI_Test(&poke_req, &flag, MPI_STATUS_IGNORE);
}

void cm_progress_finalize(void) {
    if (poke_req == MPI_REQUEST_NULL)
        return;
    PMPI_Grequest_complete(poke_req);
    PMPI_Wait(&poke_req, MPI_STATUS_IGNORE);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

bool cm_wait_until(bool (*done)(void *), void *arg) {
    for (unsigned turn = 0;; turn++) {
        cm_progress_all();
        if (done(arg))
            return true;
        if (!cm_requests_active())
            return false;   /* nothing of collie's left: the caller may block in PMPI */
        if (turn < 16)
            cpu_relax();
        else
            sched_yield();
    }
}

typedef struct collie_one {
    collie_request_t *req;
    int st;
} collie_one;

static bool collie_done(void *arg) {
    collie_one *c = arg;
    c->st = collie_request_test(c->req, 0);
    if (c->st != COLLIE_TIMEOUT)
        return true;
    cm_poke_mpi();
    return false;
}

int cm_wait_collie(collie_request_t *req) {
    collie_one c = { req, COLLIE_OK };
    return cm_wait_until(collie_done, &c) ? c.st : collie_request_test(req, COLLIE_BLOCK);
}

int cm_blocking_wait(collie_request_t *req) {
    return cm_requests_active() ? cm_wait_collie(req) : collie_request_test(req, COLLIE_BLOCK);
}

/* ---- one MPI request or an array of them ---------------------------------------------- */

typedef struct test_one {
    MPI_Request *req;
    MPI_Status *status;
    int rc;
} test_one;

static bool one_done(void *arg) {
    test_one *t = arg;
    int flag = 0;
    t->rc = PMPI_Test(t->req, &flag, t->status);
    return flag || t->rc != MPI_SUCCESS;
}

int cm_wait_mpi(MPI_Request *req, MPI_Status *status) {
    test_one t = { req, status, MPI_SUCCESS };
    if (cm_wait_until(one_done, &t))
        return t.rc;
    return PMPI_Wait(req, status);
}

typedef struct test_all {
    int n;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int rc;
} test_all;

/* Asked one request at a time (PMPI_Request_get_status completes nothing), and the array
 * completed by PMPI_Waitall once all are: MPICH 4.0.2's PMPI_Testall returns
 * MPI_ERR_IN_STATUS (fatal under the default error handler) when it completes a persistent
 * collective request, where its MPI_Waitall returns MPI_SUCCESS, so a program's
 * MPI_Waitall over one (a persistent call collie passed to MPI) failed under the drop-in
 * only (tests/mpi/mpi_interlock.c, pattern pwaitall; found by mpi_soak). */
bool cm_mpi_all_complete(int n, const MPI_Request reqs[]) {
    for (int i = 0; i < n; i++) {
        int flag = 1;
        if (reqs[i] != MPI_REQUEST_NULL &&
            PMPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
            cm_poke_mpi();
            return false;
        }
    }
    return true;
}

static bool all_done(void *arg) {
    test_all *t = arg;
    if (!cm_mpi_all_complete(t->n, t->reqs))
        return false;
    t->rc = PMPI_Waitall(t->n, t->reqs, t->statuses);
    return true;
}

int cm_waitall_mpi(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    test_all t = { n, reqs, statuses, MPI_SUCCESS };
    if (cm_wait_until(all_done, &t))
        return t.rc;
    return PMPI_Waitall(n, reqs, statuses);
}

/* ---- blocking point-to-point ------------------------------------------------------------ */

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (!cm_requests_active())
        return PMPI_Send(buf, count, type, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Isend(buf, count, type, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : cm_wait_mpi(&r, MPI_STATUS_IGNORE);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (!cm_requests_active())
        return PMPI_Ssend(buf, count, type, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Issend(buf, count, type, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : cm_wait_mpi(&r, MPI_STATUS_IGNORE);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (!cm_requests_active())
        return PMPI_Rsend(buf, count, type, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : cm_wait_mpi(&r, MPI_STATUS_IGNORE);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status) {
    if (!cm_requests_active())
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : cm_wait_mpi(&r, status);
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
    if (!cm_requests_active())
        return PMPI_Mrecv(buf, count, type, message, status);
    MPI_Request r;
    int rc = PMPI_Imrecv(buf, count, type, message, &r);
    return rc != MPI_SUCCESS ? rc : cm_wait_mpi(&r, status);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status) {
    if (!cm_requests_active())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                             recvtype, source, recvtag, comm, status);
    MPI_Request r[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    rc = cm_waitall_mpi(2, r, st);
    if (status != MPI_STATUS_IGNORE)
        *status = st[0];
    return rc;
}

typedef struct probe {
    int source, tag;
    MPI_Comm comm;
    MPI_Message *message;   /* NULL: MPI_Probe */
    MPI_Status *status;
    int rc;
} probe;

static bool probed(void *arg) {
    probe *p = arg;
    int flag = 0;
    p->rc = p->message ? PMPI_Improbe(p->source, p->tag, p->comm, &flag, p->message, p->status)
                       : PMPI_Iprobe(p->source, p->tag, p->comm, &flag, p->status);
    return flag || p->rc != MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    probe p = { source, tag, comm, NULL, status, MPI_SUCCESS };
    if (cm_requests_active() && cm_wait_until(probed, &p))
        return p.rc;
    return PMPI_Probe(source, tag, comm, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    probe p = { source, tag, comm, message, status, MPI_SUCCESS };
    if (cm_requests_active() && cm_wait_until(probed, &p))
        return p.rc;
    return PMPI_Mprobe(source, tag, comm, message, status);
}
