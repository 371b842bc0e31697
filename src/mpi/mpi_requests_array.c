/*
 * mpi_requests_array.c — the intercepted completion calls on arrays of requests:
 * MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome, for
 * arrays that mix requests served by collie (mpi_requests.c) with MPI's own.
 *
 * Each call progresses every active collie request (and MPI's engine), then lets PMPI
 * complete the array: a collie request whose generalized request is complete is reported
 * by PMPI like any other; a finished persistent collie request is inactive to PMPI
 * (MPI_Send_init to MPI_PROC_NULL, never started), so it is reported here, once
 * (cm_req.unreported), with an empty status.  MPI_Waitsome/MPI_Testsome report every
 * request complete at the call — MPI's and collie's, split-phase and persistent — in one
 * call; MPI_Testall with flag false changes nothing (a finished persistent request stays
 * to be reported).  A request collie failed makes the call return MPI_ERR_IN_STATUS with
 * its status's MPI_ERROR set (Waitany/Testany: its error code).
 */
#include <stdlib.h>

#include "mpi/mpi_requests.h"

/* The errors of the entries reported at statuses[0..k) (request idx[j], or j without
 * idx): MPI_ERR_IN_STATUS when one failed (its MPI_ERROR set, the others' MPI_SUCCESS
 * unless PMPI already filled them), else rc. */
static int array_errors(int k, const int *idx, const MPI_Request *saved, MPI_Status statuses[],
                        int rc) {
    bool any = false;
    for (int j = 0; saved && j < k && !any; j++) {
        const cm_req *e = cm_req_find(saved[idx ? idx[j] : j]);
        any = e && e->error;
    }
    if (!any)
        return rc;
    for (int j = 0; j < k; j++) {
        cm_req *e = cm_req_find(saved[idx ? idx[j] : j]);
        int err = e ? cm_req_take_error(e) : MPI_SUCCESS;
        if (statuses == MPI_STATUSES_IGNORE)
            continue;
        if (err)
            statuses[j].MPI_ERROR = err;
        else if (rc != MPI_ERR_IN_STATUS)
            statuses[j].MPI_ERROR = MPI_SUCCESS;
    }
    return MPI_ERR_IN_STATUS;
}

/* ---- all ------------------------------------------------------------------------------- */

typedef struct waitall {
    int n;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int rc;
} waitall;

/* Every collie entry of the array finished and every MPI request complete, then
 * PMPI_Waitall completes the array at once (cm_mpi_all_complete: not PMPI_Testall). */
static bool all_finished(void *arg) {
    waitall *w = arg;
    for (int i = 0; i < w->n; i++) {
        cm_req *e = cm_req_find(w->reqs[i]);
        if (e && e->active) {
            cm_poke_mpi();
            return false;
        }
    }
    if (!cm_mpi_all_complete(w->n, w->reqs))
        return false;
    w->rc = PMPI_Waitall(w->n, w->reqs, w->statuses);
    return true;
}

/* A completed Waitall/Testall: every persistent entry of the array is reported. */
static void all_reported(int n, const MPI_Request *reqs) {
    for (int i = 0; i < n; i++) {
        cm_req *e = cm_req_find(reqs[i]);
        if (e && e->persistent)
            e->unreported = false;
    }
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    bool ours = cm_req_any(n, reqs);
    if (!ours && !cm_requests_active())
        return PMPI_Waitall(n, reqs, statuses);
    if (!ours)
        return cm_waitall_mpi(n, reqs, statuses);
    MPI_Request *saved = cm_req_save(n, reqs);
    all_reported(n, reqs);
    waitall w = { n, reqs, statuses, MPI_SUCCESS };
    int rc = cm_wait_until(all_finished, &w) ? w.rc : PMPI_Waitall(n, reqs, statuses);
    rc = array_errors(n, NULL, saved, statuses, rc);
    cm_req_drop_done(n, saved);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    if (cm_requests_active())
        cm_progress_all();
    if (!cm_req_any(n, reqs))
        return PMPI_Testall(n, reqs, flag, statuses);
    for (int i = 0; i < n; i++) {
        cm_req *e = cm_req_find(reqs[i]);
        if (e && e->active) {
            cm_poke_mpi();
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    MPI_Request *saved = cm_req_save(n, reqs);
    int rc = PMPI_Testall(n, reqs, flag, statuses);
    if (*flag) {
        all_reported(n, reqs);
        rc = array_errors(n, NULL, saved, statuses, rc);
    }
    cm_req_drop_done(n, saved);
    return rc;
}

/* ---- any ------------------------------------------------------------------------------- */

/* One pass of Waitany/Testany: progresses the collie entries; a persistent entry that
 * just finished is reported here (PMPI ignores inactive requests).  true when done. */
static bool any_pass(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                     int *rc) {
    bool pending = false;
    if (cm_requests_active())
        cm_progress_all();
    for (int i = 0; i < n; i++) {
        cm_req *e = cm_req_find(reqs[i]);
        if (e && e->unreported) {   /* a persistent entry finished since it was started */
            e->unreported = false;
            *index = i;
            *flag = 1;
            cm_req_set_empty(status);
            *rc = cm_req_take_error(e);
            if (status != MPI_STATUS_IGNORE)
                status->MPI_ERROR = *rc;
            return true;
        }
        pending = pending || (e && e->active);
    }
    MPI_Request *saved = cm_req_save(n, reqs);
    *rc = PMPI_Testany(n, reqs, index, flag, status);
    if (*flag && *index != MPI_UNDEFINED && saved) {
        cm_req *e = cm_req_find(saved[*index]);
        int err = e ? cm_req_take_error(e) : MPI_SUCCESS;
        if (err) {
            *rc = err;
            if (status != MPI_STATUS_IGNORE)
                status->MPI_ERROR = err;
        }
    }
    cm_req_drop_done(n, saved);
    if (*flag && *index == MPI_UNDEFINED && pending)
        *flag = 0;   /* only inactive requests left for PMPI, but collie's are still running */
    return *flag || *rc != MPI_SUCCESS;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    if (!cm_requests_active() && !cm_req_any(n, reqs))
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
    if (!cm_requests_active() && !cm_req_any(n, reqs))
        return PMPI_Waitany(n, reqs, index, status);
    waitany w = { n, reqs, index, 0, status, MPI_SUCCESS };
    if (cm_wait_until(any_done, &w))
        return w.rc;
    /* Nothing of collie's is active: one more pass reports what just finished. */
    if (any_pass(n, reqs, index, &w.flag, status, &w.rc))
        return w.rc;
    MPI_Request *saved = cm_req_save(n, reqs);
    int rc = PMPI_Waitany(n, reqs, index, status);
    cm_req_drop_done(n, saved);
    return rc;
}

/* ---- some ------------------------------------------------------------------------------ */

typedef struct some {
    int n;
    MPI_Request *reqs;
    int *outcount, *indices;
    MPI_Status *statuses;
    int rc;
} some;

/* One pass of Waitsome/Testsome: every request complete now, in one report — PMPI's
 * (collie's split-phase ones among them) first, then the finished persistent collie
 * entries, which PMPI sees as inactive.  *outcount: MPI_UNDEFINED only when no request
 * is active on either side.  true when something was reported, nothing is active, or
 * an error. */
static bool some_pass(some *s) {
    bool pending = false;
    if (cm_requests_active())
        cm_progress_all();
    MPI_Request *saved = cm_req_save(s->n, s->reqs);
    int k = 0;
    s->rc = PMPI_Testsome(s->n, s->reqs, &k, s->indices, s->statuses);
    bool none_active = k == MPI_UNDEFINED;   /* on PMPI's side */
    if (none_active)
        k = 0;
    for (int i = 0; i < s->n; i++) {
        cm_req *e = cm_req_find(s->reqs[i]);
        if (e && e->unreported) {
            e->unreported = false;
            s->indices[k] = i;
            if (s->statuses != MPI_STATUSES_IGNORE)
                cm_req_set_empty(&s->statuses[k]);
            k++;
        }
        pending = pending || (e && e->active);
    }
    s->rc = array_errors(k, s->indices, saved, s->statuses, s->rc);
    cm_req_drop_done(s->n, saved);
    *s->outcount = k > 0 ? k : pending || !none_active ? 0 : MPI_UNDEFINED;
    return *s->outcount != 0 || s->rc != MPI_SUCCESS;
}

static bool some_done(void *arg) {
    some *s = arg;
    if (some_pass(s))
        return true;
    cm_poke_mpi();
    return false;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!cm_requests_active() && !cm_req_any(n, reqs))
        return PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    some s = { n, reqs, outcount, indices, statuses, MPI_SUCCESS };
    if (cm_wait_until(some_done, &s))
        return s.rc;
    /* Nothing of collie's is active: one more pass reports what just finished. */
    if (some_pass(&s))
        return s.rc;
    MPI_Request *saved = cm_req_save(n, reqs);
    int rc = PMPI_Waitsome(n, reqs, outcount, indices, statuses);
    cm_req_drop_done(n, saved);
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    if (!cm_requests_active() && !cm_req_any(n, reqs))
        return PMPI_Testsome(n, reqs, outcount, indices, statuses);
    some s = { n, reqs, outcount, indices, statuses, MPI_SUCCESS };
    if (!some_pass(&s))
        cm_poke_mpi();
    return s.rc;
}
