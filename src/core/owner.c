/*
 * owner.c — one thread at a time inside a team.  Every public call on a team (the
 * collectives, collie_start, collie_test/wait, collie_request_free) takes the team's
 * owner word at entry with one compare-and-swap and gives it back when it returns; the
 * same thread may enter again (a blocking call starts and waits for its request).  A
 * second thread that finds the word taken gets COLLIE_ERR_ARG naming the thread inside
 * and its call, instead of running the team's queue and channels concurrently (which
 * returned wrong results).  Different teams have different words, so threads on
 * different teams never meet here.
 *
 * A thread that waits on one team also moves the split-phase calls pending on the
 * process's other teams (progress_others.c); it borrows such a team with the word set to
 * LENT, only if no thread is inside, for one pass of its queue.  A thread that enters a
 * borrowed team waits for that pass to end instead of failing: the collision is collie's
 * own, not the program's.
 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"
#include "core/internal.h"

static _Thread_local char thread_token;   /* its address names this thread */
static char lent_token;                   /* a team borrowed for one progress pass */
#define LENT ((uintptr_t)&lent_token)

int collie_team_enter(collie_team_t *team, const char *fn) {
    uintptr_t me = (uintptr_t)&thread_token, held = 0;
    while (!atomic_compare_exchange_strong_explicit(&team->owner, &held, me, memory_order_acquire,
                                                    memory_order_relaxed)) {
        if (held != LENT)
            break;
        sched_yield();   /* another thread's wait moves this team's queue for a moment */
        held = 0;
    }
    if (held == 0) {
        team->owner_depth = 1;
        atomic_store_explicit(&team->owner_fn, fn, memory_order_relaxed);
        return COLLIE_OK;
    }
    if (held == me) {
        team->owner_depth++;
        return COLLIE_OK;
    }
    const char *inside = atomic_load_explicit(&team->owner_fn, memory_order_relaxed);
    return collie_fail(COLLIE_ERR_ARG, "%s: another thread is inside %s on the same team (thread "
                       "%ld here): calls on one team must not overlap; use one team per thread "
                       "(COLLIE_THREAD_MULTIPLE allows concurrent calls on different teams only)",
                       fn, inside ? inside : "a call", (long)syscall(SYS_gettid));
}

bool collie_team_borrow(collie_team_t *team) {
    uintptr_t held = 0;
    return atomic_compare_exchange_strong_explicit(&team->owner, &held, LENT, memory_order_acquire,
                                                   memory_order_relaxed);
}

void collie_team_give_back(collie_team_t *team) {
    atomic_store_explicit(&team->owner, 0, memory_order_release);
}

void collie_team_leave(collie_team_t *team) {
    if (--team->owner_depth == 0)
        atomic_store_explicit(&team->owner, 0, memory_order_release);
}
