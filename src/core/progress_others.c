/*
 * progress_others.c — a wait on one team moves the split-phase calls pending on the
 * process's other teams too, as MPI's progress rule asks of MPI_Wait: rank 0 may wait for
 * its allreduce on a sub-team first and its barrier on the world second while rank 1 waits
 * in the other order; each rank's barrier then completes only if rank 0's wait for the
 * allreduce also moves the barrier.  (mp_soak found this: three ranks, four split-phase
 * calls on two teams, every rank asleep in collie_wait.)
 *
 * wait.c calls collie_progress_others when its own request has stopped moving (before it
 * yields or sleeps, not in its spinning phase, so a call that only waits for its own peers
 * pays nothing); a team another thread is inside is left to that thread (owner.c: a team
 * is borrowed only when no thread is inside).  A failure found on another team is that
 * team's (collie_team_fail: its requests report it when waited for), not this wait's.
 * While other teams still have pending calls the waiter sleeps in short slices only
 * (wait.c: a peer's write to another team's memory does not wake this team's sleep).
 */
#include "base/base.h"
#include "core/internal.h"

#define PASS_MAX 64     /* teams borrowed per pass (more wait for the next pass) */

typedef struct pass {
    collie_team_t *self;
    collie_team_t *lent[PASS_MAX];
    int nlent;
    int busy;           /* other teams with calls still pending after the pass */
} pass;

/* Under the team list's lock: borrows each other team that has pending calls and no thread
 * inside (one that another thread is inside is that thread's to move).  The
 * borrowed word also keeps the team from being freed until it is given back, so the pass
 * itself runs outside the lock. */
static void borrow_one(collie_team_t *team, void *arg) {
    pass *p = arg;
    if (team == p->self)
        return;
    if (p->nlent == PASS_MAX) {
        p->busy++;      /* the next pass */
        return;
    }
    if (!collie_team_borrow(team))
        return;
    if (team->head && !team->failed)
        p->lent[p->nlent++] = team;
    else
        collie_team_give_back(team);
}

int collie_progress_others(collie_team_t *self) {
    pass p = { .self = self };
    collie_teams_each(borrow_one, &p);
    for (int i = 0; i < p.nlent; i++) {
        collie_team_t *team = p.lent[i];
        (void)collie_progress_queue(team, team->tail);
        collie_wake_flush(team->tp);
        if (team->head && !team->failed)
            p.busy++;
        collie_team_give_back(team);
    }
    return p.busy;
}
