/*
 * mpi_requests.c — MPI requests for the collectives collie serves, and the intercepted
 * completion calls on one request.
 *
 * An MPI_I* call served by collie returns a real MPI request: a generalized request
 * (MPI_Grequest_start).  A persistent call returns a real persistent request that MPI
 * never starts: MPI_Send_init to MPI_PROC_NULL, which MPI sees as inactive (kept for reuse
 * when the program frees it, never handed back to MPI before MPI_Finalize).  A table maps
 * these handles to collie requests.  The intercepted MPI_Wait, MPI_Test,
 * MPI_Request_get_status, MPI_Request_free, MPI_Start and MPI_Startall (here) and the
 * calls on arrays (mpi_requests_array.c) progress the collie request, complete the
 * generalized request once collie is done (or mark the persistent one finished), and then
 * let PMPI do the rest, so statuses, MPI_REQUEST_NULL and the other requests of an array
 * behave as MPI defines.
 *
 * Errors: a request collie fails is reported through its communicator's error handler
 * when it finishes (the handler it had when the program freed it, if it did: cm_error),
 * with collie's message in collie_last_error() on the caller's thread (also when the
 * helper thread found it), and the completion call that reports the request
 * returns the MPI error code (MPI_ERR_IN_STATUS and the status's MPI_ERROR for arrays), so
 * a program with MPI_ERRORS_RETURN sees it.
 *
 * A broadcast of a datatype with gaps (cm_call.packed, mpi_types.c) runs on a packed copy
 * that the request owns: the root packs at the call (split-phase) or at each MPI_Start
 * (persistent), the others unpack when the request finishes; the copy and a duplicate of
 * the datatype (the program may free its own) are freed with the request.
 *
 * Progress is shared (mpi_progress.c): while any collie request is active, every wait here
 * — on collie's requests or on MPI's own — runs cm_wait_until, which progresses every
 * active collie request (cm_progress_all) and drives MPI's progress engine in turn; the
 * tests progress all of collie's requests once and MPI's once.
 *
 * MPI_Cancel on a request collie serves (split-phase or persistent) leaves the collective
 * to complete normally (MPI_Test_cancelled: false), says once at `info` that a collective
 * cannot be cancelled, and returns MPI_SUCCESS.  MPI makes cancelling a collective
 * erroneous; the MPIs differ (Open MPI 4.1.4 returns MPI_ERR_REQUEST, fatal by default;
 * MPICH 4.0.2 returns an internal error for MPI_Iallreduce and aborts on an assertion for
 * a persistent collective); both still complete the operation normally.
 *
 * Limits: the blocking calls passed to PMPI unchanged that no file of mpi_progress*.c
 * intercepts (MPI_Comm_free, ...; mpi_progress_ctor.c lists them) do not progress
 * collie's requests while they block.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_requests.h"

static cm_req *table;
static int nused, ncap;
static int nactive;               /* entries with active set */

int cm_requests_active(void) { return nactive; }

cm_req *cm_req_find(MPI_Request h) {
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (int i = 0; i < nused; i++)
        if (table[i].handle == h)
            return &table[i];
    return NULL;
}

static void forget(cm_req *e) {
    collie_request_free(e->req);
    cm_comm_release(e->call.cc);
    cm_extra_free(e->call.extra);
    cm_pack_release(&e->call);
    free(e->deferred_msg);
    *e = table[--nused];
}

static int query_fn(void *extra, MPI_Status *status) {
    (void)extra;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) { (void)extra; return MPI_SUCCESS; }
static int cancel_fn(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

void cm_req_set_empty(MPI_Status *status) {
    if (status == MPI_STATUS_IGNORE)
        return;
    query_fn(NULL, status);
    status->MPI_ERROR = MPI_SUCCESS;
}

/* The MPI requests behind collie's persistent ones: MPI_Send_init to MPI_PROC_NULL, never
 * started, on MPI_COMM_SELF (the request outlives the communicator of its call).
 * MPI_Request_free keeps the MPI request here for the next persistent call instead of
 * freeing it: MPICH 4.0.2 hangs in any persistent collective whose request object was a
 * freed persistent point-to-point request's, so once a program had freed one of collie's,
 * its next persistent collective that collie passes to MPICH (a long double allreduce)
 * hung (tests/mpi/mpi_interlock.c, pattern pfree; found by mpi_soak).  Freed at
 * MPI_Finalize. */
static MPI_Request *spare;
static int nspare, nspare_cap;

static int placeholder(MPI_Request *handle) {
    if (nspare) {
        *handle = spare[--nspare];
        return MPI_SUCCESS;
    }
    return PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, handle);
}

static int keep_placeholder(MPI_Request *handle) {
    if (nspare == nspare_cap) {
        int cap = nspare_cap ? 2 * nspare_cap : 16;
        MPI_Request *t = realloc(spare, (size_t)cap * sizeof *t);
        if (!t)
            return PMPI_Request_free(handle);
        spare = t;
        nspare_cap = cap;
    }
    spare[nspare++] = *handle;
    *handle = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

void cm_requests_finalize(void) {
    while (nspare)
        PMPI_Request_free(&spare[--nspare]);
    free(spare);
    spare = NULL;
    nspare_cap = 0;
}

/* Takes over req and, for a packed broadcast, c's packed copy (freed here on failure). */
int cm_request_add(collie_request_t *req, const cm_call *c, bool persistent, MPI_Request *handle) {
    int rc = persistent ? placeholder(handle)
                        : PMPI_Grequest_start(query_fn, free_fn, cancel_fn, NULL, handle);
    if (rc == MPI_SUCCESS && nused == ncap) {
        int cap = ncap ? 2 * ncap : 16;
        cm_req *t = realloc(table, (size_t)cap * sizeof *t);
        rc = t ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        if (t) {
            table = t;
            ncap = cap;
        }
    }
    if (rc != MPI_SUCCESS) {
        collie_request_free(req);
        cm_extra_free(c->extra);
        cm_call copy = *c;
        cm_pack_release(&copy);
        return rc;
    }
    table[nused++] = (cm_req){ .handle = *handle, .req = req, .persistent = persistent,
                               .active = !persistent, .call = *c };
    cm_comm_hold(c->cc);
    nactive += !persistent;
    return MPI_SUCCESS;
}

/* MPI's side of e's completion: a packed broadcast's unpacking (and mpi_stage.c's), the
 * error handler, the generalized request. */
static void finish(cm_req *e, int st) {
    if (st == COLLIE_OK && e->call.extra)
        st = cm_extra_unpack(e->call.extra);
    e->active = false;
    e->unreported = e->persistent;
    nactive--;
    if (st == COLLIE_OK && e->call.packed && e->call.cc->rank != e->call.root)
        st = cm_pack_bcast(&e->call, false);
    e->error = st != COLLIE_OK ? cm_error(&e->call, st) : MPI_SUCCESS;
    if (!e->persistent)
        PMPI_Grequest_complete(e->handle);
}

/* One step of e; when collie finished it, completes the generalized request /
 * deactivates the persistent one.  true when e is finished. */
static bool step(cm_req *e) {
    if (!e->active)
        return true;
    if (e->deferred) {
        e->deferred = false;
        if (e->deferred_status != COLLIE_OK)   /* the message is thread-local: set it here */
            collie_fail(e->deferred_status, "%s", e->deferred_msg ? e->deferred_msg : "");
        free(e->deferred_msg);
        e->deferred_msg = NULL;
        finish(e, e->deferred_status);
        return true;
    }
    int st = collie_test(e->req, 0);
    if (st == COLLIE_TIMEOUT)
        return false;
    finish(e, st);
    return true;
}

/* A message without collie_fail's "rank N: " prefix (collie_fail adds it again). */
static const char *without_rank(const char *m) {
    const char *colon = strstr(m, ": ");
    return strncmp(m, "rank ", 5) == 0 && colon ? colon + 2 : m;
}

/* The helper thread's pass (mpi_progress_help.c, while this rank's thread blocks in PMPI):
 * collie's side only — no MPI call; a finished request is left for cm_complete_deferred.
 * Returns the number of requests still running in collie. */
int cm_progress_collie_only(void) {
    int running = 0;
    for (int i = 0; i < nused; i++) {
        cm_req *e = &table[i];
        if (!e->active || e->deferred)
            continue;
        int st = collie_test(e->req, 0);
        if (st == COLLIE_TIMEOUT)
            running++;
        else {
            e->deferred = true;
            e->deferred_status = st;
            e->deferred_msg = st == COLLIE_OK ? NULL : strdup(without_rank(collie_last_error()));
        }
    }
    return running;
}

/* May the helper thread run collie's side of every active request without MPI?  (A team
 * whose transport needs MPI's progress — shm+mpi across nodes — calls MPI.) */
bool cm_active_need_no_mpi(void) {
    for (int i = 0; i < nused; i++)
        if (table[i].active && table[i].req->team->tp->ops->progress)
            return false;
    return true;
}

/* After the helper thread stopped: MPI's side of what it finished. */
void cm_complete_deferred(void) {
    for (int i = 0; i < nused; i++)
        if (table[i].active && table[i].deferred)
            step(&table[i]);
}

void cm_progress_all(void) {
    for (int i = 0; i < nused; i++)
        if (table[i].active)
            step(&table[i]);
    cm_mpi_retire_poll();   /* released MPI channels (mpi_transport.c) */
}

static bool entry_done(void *arg) {
    cm_req *e = arg;
    if (!e->active)
        return true;
    cm_poke_mpi();
    return false;
}

bool cm_req_progress(cm_req *e, bool block) {
    if (block)
        cm_wait_until(entry_done, e);
    bool done = step(e);
    if (done && e->persistent)
        e->unreported = false;
    return done;
}

/* After PMPI completed the handle of a finished split-phase entry, drop the entry. */
static void drop_if_done(MPI_Request h) {
    cm_req *e = cm_req_find(h);
    if (e && !e->persistent && !e->active)
        forget(e);
}

MPI_Request *cm_req_save(int n, const MPI_Request *reqs) {
    MPI_Request *saved = malloc((size_t)(n > 0 ? n : 1) * sizeof *saved);
    if (saved && n > 0)
        memcpy(saved, reqs, (size_t)n * sizeof *saved);
    return saved;
}

void cm_req_drop_done(int n, MPI_Request *saved) {
    for (int i = 0; saved && i < n; i++)
        drop_if_done(saved[i]);
    free(saved);
}

bool cm_req_any(int n, const MPI_Request *reqs) {
    for (int i = 0; nused && i < n; i++)
        if (cm_req_find(reqs[i]))
            return true;
    return false;
}

int cm_req_take_error(cm_req *e) {
    int err = e->error;
    e->error = MPI_SUCCESS;
    return err;
}

/* The completion call's result for a reported entry: its error, if collie failed it. */
static int reported(cm_req *e, int rc, MPI_Status *status) {
    int err = cm_req_take_error(e);
    if (!err)
        return rc;
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = err;
    return err;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    cm_req *e = nused ? cm_req_find(*request) : NULL;
    if (e) {
        MPI_Request h = *request;
        cm_req_progress(e, true);
        int rc = reported(e, PMPI_Wait(request, status), status);
        drop_if_done(h);
        return rc;
    }
    return nactive ? cm_wait_mpi(request, status) : PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    cm_req *e = nused ? cm_req_find(*request) : NULL;
    if (nactive)
        cm_progress_all();
    if (e && !cm_req_progress(e, false)) {
        cm_poke_mpi();
        *flag = 0;
        return MPI_SUCCESS;
    }
    MPI_Request h = *request;
    int rc = PMPI_Test(request, flag, status);
    if (e) {
        rc = reported(e, rc, status);
        drop_if_done(h);
    }
    return rc;
}

/* Says whether the request finished, without completing it: collie's requests are
 * progressed here (MPI only knows a generalized request is complete once collie is). */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    if (nactive)
        cm_progress_all();
    cm_req *e = nused ? cm_req_find(request) : NULL;
    if (!e || !e->persistent)
        return PMPI_Request_get_status(request, flag, status);
    *flag = !e->active;   /* an inactive persistent request counts as complete, as in MPI */
    if (e->active)
        cm_poke_mpi();
    else
        cm_req_set_empty(status);
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request) {
    cm_req *e = nused ? cm_req_find(*request) : NULL;
    if (!e)
        return PMPI_Request_free(request);
    cm_req_progress(e, true);   /* MPI lets an active request be freed: it still completes */
    bool persistent = e->persistent;
    forget(e);
    return persistent ? keep_placeholder(request) : PMPI_Request_free(request);
}

int MPI_Cancel(MPI_Request *request) {
    cm_req *e = nused && request ? cm_req_find(*request) : NULL;
    if (!e)
        return PMPI_Cancel(request);
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        collie_log(COLLIE_LOG_INFO, "MPI_Cancel on %s served by collie: a collective cannot be "
                   "cancelled (MPI); it completes normally (MPI_Test_cancelled: false)",
                   e->call.fn);
    return MPI_SUCCESS;
}

int cm_start_request(collie_request_t *req, const cm_call *c) {
    int st = collie_start(req);
    if (!st)
        st = collie_test(req, 0);
    return st < 0 ? cm_error(c, st) : MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request) {
    cm_req *e = nused ? cm_req_find(*request) : NULL;
    if (!e)
        return PMPI_Start(request);
    if (e->active)
        return cm_error(&e->call, collie_fail(COLLIE_ERR_ARG, "MPI_Start: the request is already active"));
    int st = e->call.extra ? cm_extra_pack(e->call.extra) : COLLIE_OK;   /* mpi_stage.c */
    if (!st && e->call.packed && e->call.cc->rank == e->call.root)
        st = cm_pack_bcast(&e->call, true);   /* the root's data as it is now */
    if (st)
        return cm_error(&e->call, st);
    e->active = true;
    e->unreported = false;
    e->error = MPI_SUCCESS;
    nactive++;
    int rc = cm_start_request(e->req, &e->call);
    if (rc != MPI_SUCCESS && e->active) {
        e->active = false;
        nactive--;
    }
    return rc;
}

int MPI_Startall(int n, MPI_Request reqs[]) {
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Start(&reqs[i]);
    return rc;
}
