/*
 * mpi_requests.c — MPI requests for the collectives collie serves, and the intercepted
 * completion calls.
 *
 * An MPI_I* call served by collie returns a real MPI request: a generalized request
 * (MPI_Grequest_start).  A persistent call returns a real persistent request that MPI
 * never starts: MPI_Send_init to MPI_PROC_NULL, which MPI sees as inactive.  A table maps
 * these handles to collie requests.  The intercepted MPI_Wait, MPI_Test, MPI_Waitall,
 * MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome, MPI_Request_free,
 * MPI_Start and MPI_Startall progress the collie request, complete the generalized
 * request once collie is done (or mark the persistent one finished), and then let PMPI
 * do the rest, so statuses, MPI_REQUEST_NULL and the other requests of an array behave
 * as MPI defines.
 *
 * Progress is shared (mpi_progress.c): while any collie request is active, every wait here
 * — on collie's requests or on MPI's own — runs cm_wait_until, which progresses every
 * active collie request (cm_progress_all) and drives MPI's progress engine in turn; the
 * tests progress all of collie's requests once and MPI's once.
 *
 * Limits: a blocking call passed to PMPI unchanged that is neither point-to-point, nor a
 * completion call, nor one of mpi_progress_coll.c's (e.g. MPI_Comm_split, MPI_Win_fence)
 * does not progress collie's requests while it blocks; MPI_Request_get_status and MPI_Cancel are
 * not intercepted; Waitsome/Testsome report one completed collie request per call.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

typedef struct cm_req {
    MPI_Request handle;
    collie_request_t *req;
    bool persistent;
    bool active;                  /* started, not yet finished */
    bool unreported;              /* persistent, finished, not yet reported by a wait/test */
    bool deferred;                /* finished by the helper thread (mpi_progress_help.c):
                                     MPI's side of the completion is still to be done */
    int deferred_status;
    char *deferred_msg;           /* the helper thread's collie_last_error() (malloc'd) */
    cm_call call;                 /* for error messages */
} cm_req;

static cm_req *table;
static int nused, ncap;
static int nactive;               /* entries with active set */

int cm_requests_active(void) { return nactive; }

static cm_req *find(MPI_Request h) {
    if (h == MPI_REQUEST_NULL)
        return NULL;
    for (int i = 0; i < nused; i++)
        if (table[i].handle == h)
            return &table[i];
    return NULL;
}

static void forget(cm_req *e) {
    collie_request_free(e->req);
    cm_extra_free(e->call.extra);
    *e = table[--nused];
}

static int query_fn(void *extra, MPI_Status *status) {
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    return MPI_SUCCESS;
}
static int free_fn(void *extra) { return MPI_SUCCESS; }
static int cancel_fn(void *extra, int complete) { return MPI_SUCCESS; }

int cm_request_add(collie_request_t *req, const cm_call *c, bool persistent, MPI_Request *handle) {
    int rc = persistent ? PMPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, c->comm, handle)
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
        return rc;
    }
    table[nused++] = (cm_req){ *handle, req, persistent, !persistent, false, false, 0, NULL, *c };
    nactive += !persistent;
    return MPI_SUCCESS;
}

/* MPI's side of e's completion: the received blocks of a datatype with gaps unpacked
 * (mpi_stage.c), the error handler, the generalized request. */
static void finish(cm_req *e, int st) {
    if (st == COLLIE_OK && e->call.extra)
        st = cm_extra_unpack(e->call.extra);
    e->active = false;
    e->unreported = e->persistent;
    nactive--;
    if (st != COLLIE_OK)
        cm_error(&e->call, st);
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
}

static bool entry_done(void *arg) {
    cm_req *e = arg;
    if (!e->active)
        return true;
    cm_poke_mpi();
    return false;
}

/* Progresses e (and everything else, collie's and MPI's) until e is finished, or one
 * step of it; true when e is finished. */
static bool progress(cm_req *e, bool block) {
    if (block)
        cm_wait_until(entry_done, e);
    bool done = step(e);
    if (done && e->persistent)
        e->unreported = false;
    return done;
}

/* After PMPI completed the handle of a finished split-phase entry, drop the entry. */
static void drop_if_done(MPI_Request h) {
    cm_req *e = find(h);
    if (e && !e->persistent && !e->active)
        forget(e);
}

static void set_empty(MPI_Status *status) {
    if (status == MPI_STATUS_IGNORE)
        return;
    query_fn(NULL, status);
    status->MPI_ERROR = MPI_SUCCESS;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    cm_req *e = nused ? find(*request) : NULL;
    if (e) {
        MPI_Request h = *request;
        progress(e, true);
        int rc = PMPI_Wait(request, status);
        drop_if_done(h);
        return rc;
    }
    return nactive ? cm_wait_mpi(request, status) : PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    cm_req *e = nused ? find(*request) : NULL;
    if (nactive)
        cm_progress_all();
    if (e && !progress(e, false)) {
        cm_poke_mpi();
        *flag = 0;
        return MPI_SUCCESS;
    }
    MPI_Request h = *request;
    int rc = PMPI_Test(request, flag, status);
    if (e)
        drop_if_done(h);
    return rc;
}

/* Saves the handles of collie entries in reqs (PMPI may set them to MPI_REQUEST_NULL). */
static MPI_Request *save_handles(int n, const MPI_Request *reqs) {
    MPI_Request *saved = malloc((size_t)(n > 0 ? n : 1) * sizeof *saved);
    if (saved)
        memcpy(saved, reqs, (size_t)n * sizeof *saved);
    return saved;
}

static void drop_all_done(int n, MPI_Request *saved) {
    for (int i = 0; saved && i < n; i++)
        drop_if_done(saved[i]);
    free(saved);
}

static bool any_ours(int n, const MPI_Request *reqs) {
    for (int i = 0; nused && i < n; i++)
        if (find(reqs[i]))
            return true;
    return false;
}

typedef struct waitall {
    int n;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int rc;
} waitall;

/* Every collie entry of the array finished, then PMPI_Testall completes the rest. */
static bool all_finished(void *arg) {
    waitall *w = arg;
    for (int i = 0; i < w->n; i++) {
        cm_req *e = find(w->reqs[i]);
        if (e && e->active) {
            cm_poke_mpi();
            return false;
        }
    }
    int flag = 0;
    w->rc = PMPI_Testall(w->n, w->reqs, &flag, w->statuses);
    return flag || w->rc != MPI_SUCCESS;
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    bool ours = any_ours(n, reqs);
    if (!ours && !nactive)
        return PMPI_Waitall(n, reqs, statuses);
    MPI_Request *saved = ours ? save_handles(n, reqs) : NULL;
    waitall w = { n, reqs, statuses, MPI_SUCCESS };
    for (int i = 0; ours && i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e)
            e->unreported = false;
    }
    int rc = cm_wait_until(all_finished, &w) ? w.rc : PMPI_Waitall(n, reqs, statuses);
    if (ours)
        drop_all_done(n, saved);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    if (nactive)
        cm_progress_all();
    if (!any_ours(n, reqs))
        return PMPI_Testall(n, reqs, flag, statuses);
    bool all = true;
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e && !progress(e, false))
            all = false;
    }
    if (!all) {
        cm_poke_mpi();
        *flag = 0;
        return MPI_SUCCESS;
    }
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e)
            e->unreported = false;
    }
    MPI_Request *saved = save_handles(n, reqs);
    int rc = PMPI_Testall(n, reqs, flag, statuses);
    drop_all_done(n, saved);
    return rc;
}

/* One pass of Waitany/Testany: progresses the collie entries; a persistent entry that
 * just finished is reported here (PMPI ignores inactive requests).  true when done. */
static bool any_pass(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                     int *rc) {
    bool pending = false;
    if (nactive)
        cm_progress_all();
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e && e->unreported) {   /* a persistent entry finished since it was started */
            e->unreported = false;
            *index = i;
            *flag = 1;
            set_empty(status);
            return true;
        }
        pending = pending || (e && e->active);
    }
    MPI_Request *saved = save_handles(n, reqs);
    *rc = PMPI_Testany(n, reqs, index, flag, status);
    drop_all_done(n, saved);
    if (*flag && *index == MPI_UNDEFINED && pending)
        *flag = 0;   /* only inactive requests left for PMPI, but collie's are still running */
    return *flag || *rc != MPI_SUCCESS;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    if (!nactive && !any_ours(n, reqs))
        return PMPI_Testany(n, reqs, index, flag, status);
    int rc = MPI_SUCCESS;
    if (!any_pass(n, reqs, index, flag, status, &rc))
        cm_poke_mpi();
    return rc;
}

typedef struct waitany {
    int n;
    MPI_Request *reqs;
    int *index, flag;
    MPI_Status *status;
    int rc;
} waitany;

static bool any_done(void *arg) {
    waitany *w = arg;
    return any_pass(w->n, w->reqs, w->index, &w->flag, w->status, &w->rc);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    if (!nactive && !any_ours(n, reqs))
        return PMPI_Waitany(n, reqs, index, status);
    waitany w = { n, reqs, index, 0, status, MPI_SUCCESS };
    if (cm_wait_until(any_done, &w))
        return w.rc;
    /* Nothing of collie's is active: one more pass reports what just finished. */
    if (any_pass(n, reqs, index, &w.flag, status, &w.rc))
        return w.rc;
    MPI_Request *saved = save_handles(n, reqs);
    int rc = PMPI_Waitany(n, reqs, index, status);
    drop_all_done(n, saved);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!nactive && !any_ours(n, reqs))
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    int index = MPI_UNDEFINED;
    int rc = MPI_Waitany(n, reqs, &index, statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses);
    *outcount = index == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
    indices[0] = index;
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!nactive && !any_ours(n, reqs))
        return PMPI_Testsome(n, reqs, outcount, indices, statuses);
    int index = MPI_UNDEFINED, flag = 0;
    int rc = MPI_Testany(n, reqs, &index, &flag, statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses);
    *outcount = !flag ? 0 : index == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
    indices[0] = index;
    return rc;
}

int MPI_Request_free(MPI_Request *request) {
    cm_req *e = nused ? find(*request) : NULL;
    if (!e)
        return PMPI_Request_free(request);
    progress(e, true);   /* MPI lets an active request be freed: it still completes */
    forget(e);
    return PMPI_Request_free(request);
}

int cm_start_request(collie_request_t *req, const cm_call *c) {
    int st = collie_start(req);
    if (!st)
        st = collie_test(req, 0);
    return st < 0 ? cm_error(c, st) : MPI_SUCCESS;
}

int MPI_Start(MPI_Request *request) {
    cm_req *e = nused ? find(*request) : NULL;
    if (!e)
        return PMPI_Start(request);
    if (e->active)
        return cm_error(&e->call, collie_fail(COLLIE_ERR_ARG, "MPI_Start: the request is already active"));
    int st = e->call.extra ? cm_extra_pack(e->call.extra) : COLLIE_OK;
    if (st)
        return cm_error(&e->call, st);
    e->active = true;
    e->unreported = false;
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
