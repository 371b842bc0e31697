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
 * Limits: collie requests progress only inside these calls (and other collie calls), not
 * inside unrelated MPI calls such as MPI_Recv; MPI_Request_get_status and MPI_Cancel are
 * not intercepted; Waitsome/Testsome report one completed collie request per call.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_layer.h"

typedef struct cm_req {
    MPI_Request handle;
    collie_request_t *req;
    bool persistent;
    bool active;                  /* started, not yet finished */
    cm_call call;                 /* for error messages */
} cm_req;

static cm_req *table;
static int nused, ncap;

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
        return rc;
    }
    table[nused++] = (cm_req){ *handle, req, persistent, !persistent, *c };
    return MPI_SUCCESS;
}

/* Progresses e (blocking or one bounded step); when collie finished it, completes the
 * generalized request / deactivates the persistent one.  true when e is finished. */
static bool progress(cm_req *e, bool block) {
    if (!e->active)
        return true;
    int st = block ? collie_wait(e->req) : collie_test(e->req, 0);
    if (st == COLLIE_TIMEOUT)
        return false;
    e->active = false;
    if (st != COLLIE_OK)
        cm_error(&e->call, st);
    if (!e->persistent)
        PMPI_Grequest_complete(e->handle);
    return true;
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
    return PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    cm_req *e = nused ? find(*request) : NULL;
    if (e && !progress(e, false)) {
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

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    if (!any_ours(n, reqs))
        return PMPI_Waitall(n, reqs, statuses);
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e)
            progress(e, true);
    }
    MPI_Request *saved = save_handles(n, reqs);
    int rc = PMPI_Waitall(n, reqs, statuses);
    drop_all_done(n, saved);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    if (!any_ours(n, reqs))
        return PMPI_Testall(n, reqs, flag, statuses);
    bool all = true;
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (e && !progress(e, false))
            all = false;
    }
    if (!all) {
        *flag = 0;
        return MPI_SUCCESS;
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
    for (int i = 0; i < n; i++) {
        cm_req *e = find(reqs[i]);
        if (!e || !e->active)
            continue;
        if (progress(e, false) && e->persistent) {
            *index = i;
            *flag = 1;
            set_empty(status);
            return true;
        }
        pending = pending || e->active;
    }
    MPI_Request *saved = save_handles(n, reqs);
    *rc = PMPI_Testany(n, reqs, index, flag, status);
    drop_all_done(n, saved);
    if (*flag && *index == MPI_UNDEFINED && pending)
        *flag = 0;   /* only inactive requests left for PMPI, but collie's are still running */
    return *flag || *rc != MPI_SUCCESS;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    if (!any_ours(n, reqs))
        return PMPI_Testany(n, reqs, index, flag, status);
    int rc = MPI_SUCCESS;
    any_pass(n, reqs, index, flag, status, &rc);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    if (!any_ours(n, reqs))
        return PMPI_Waitany(n, reqs, index, status);
    int rc = MPI_SUCCESS, flag = 0;
    while (!any_pass(n, reqs, index, &flag, status, &rc))
        sched_yield();
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!any_ours(n, reqs))
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    int index = MPI_UNDEFINED;
    int rc = MPI_Waitany(n, reqs, &index, statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : statuses);
    *outcount = index == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
    indices[0] = index;
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!any_ours(n, reqs))
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
    e->active = true;
    return cm_start_request(e->req, &e->call);
}

int MPI_Startall(int n, MPI_Request reqs[]) {
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = MPI_Start(&reqs[i]);
    return rc;
}
