/*
 * team_setup.c — the transport of a sub-team over its parent's own collectives (teams of
 * collie-run's shared memory: no MPI, no launcher help).
 *
 * A new team of n > 1 ranks gets a shared-memory segment of its own, made by
 * collie_shm_create_with like the MPI layer's per-communicator segments: the new rank 0
 * creates it under the name every member computed from the split's table, the others open
 * it, each step agreed on so that no rank waits for a segment that failed to appear.  The
 * agreement runs over the *parent* team, where every rank of every new team (and every
 * rank in no team) takes part in the same sequence of allreduces: each round carries
 * (status, in set-up) with MIN.  A rank making a segment answers the transport's `agree`
 * calls with rounds marked "in set-up"; every other rank — in no team, in a team of one,
 * finished or failed — runs "drain" rounds carrying its status until a round shows nobody
 * in set-up any more.  All ranks see the same rounds, so they leave together, and the last
 * round's status is the worst over the parent: a failure in any team fails the split on
 * every rank (and each failing segment is unlinked by collie_shm_create_with).  Ranks that
 * die before they attach are noticed by pid (the split's table carries the pids); a rank
 * that dies in a round fails the parent's allreduce on the others.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"

typedef struct setup_sync {
    collie_team_t *parent;
    int err;            /* the parent's own collective failed: every later round too */
} setup_sync;

/* One round over the parent: *worst = min status, *busy = some rank still in set-up. */
static int round_trip(setup_sync *s, int status, int in_setup, int *worst, int *busy) {
    if (s->err)
        return s->err;
    int32_t v[2] = { status, in_setup ? -1 : 0 }, r[2] = { 0, 0 };
    int st = collie_allreduce(s->parent, v, r, 2, COLLIE_INT32, COLLIE_MIN);
    if (st) {
        char msg[512];
        const char *m = collie_last_error(), *colon = strstr(m, ": ");
        snprintf(msg, sizeof msg, "%s", strncmp(m, "rank ", 5) == 0 && colon ? colon + 2 : m);
        s->err = collie_fail(st, "setting up the new team's shared memory over the parent "
                             "team: %s", msg);
        return s->err;
    }
    *worst = r[0];
    *busy = r[1] < 0;
    return COLLIE_OK;
}

/* collie_shm_config.agree: this rank's status at a step of its segment's set-up. */
static int agree_step(void *ctx, int status) {
    setup_sync *s = ctx;
    int worst = 0, busy = 0;
    int st = round_trip(s, status, 1, &worst, &busy);
    return st ? st : worst;
}

/* Rounds until nobody is in set-up; the worst final status over the parent. */
static int drain(setup_sync *s, int status) {
    for (;;) {
        int worst = 0, busy = 0;
        int st = round_trip(s, status, 0, &worst, &busy);
        if (st)
            return st;
        if (!busy)
            return worst;
    }
}

int collie_subteam_transport(collie_team_t *parent, const collie_subteam_spec *spec,
                             collie_transport **tp) {
    setup_sync s = { parent, COLLIE_OK };
    int st = spec->status;
    *tp = NULL;
    if (!st && spec->my >= 0 && spec->n == 1)
        st = collie_self_create(tp);
    else if (!st && spec->my >= 0) {
        collie_shm_config cfg = { spec->my, spec->n, spec->name, agree_step, &s, spec->pids,
                                  false };
        st = collie_shm_create_with(&cfg, tp);
        if (st)
            *tp = NULL;
    }
    int all = drain(&s, st);
    if (!all && *tp)
        collie_log(COLLIE_LOG_DEBUG, "a sub-team of %d ranks over %s (%s)", spec->n,
                   (*tp)->ops->name, spec->n > 1 ? spec->name : "a team of one");
    if (!all || st)
        return st ? st : COLLIE_OK;
    if (*tp)
        (*tp)->ops->destroy(*tp);
    *tp = NULL;
    if (all == s.err)
        return all;
    return collie_fail(all, "another rank of the parent team failed to set up its new team "
                       "(%s)", collie_strerror(all));
}
