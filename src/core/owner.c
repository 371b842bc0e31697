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
 *
 * At COLLIE_THREAD_SINGLE and FUNNELED (and a drop-in under MPI_THREAD_SINGLE or
 * FUNNELED, what MPI_Init gives) the program promises one thread in collie at a time, so
 * teams made then take the word with a plain load and store instead: the locked
 * compare-and-swap waits for the previous call's stores to shared memory to drain, 30-60
 * ns of a small call (2026-12-04, Intel Xeon VM, P = 2, release-timed bcast of 8 B 0.18 ->
 * 0.145 us).  Such a team still names a second thread that it finds inside, but two
 * threads that enter at the same moment may both pass: the check is best effort where the
 * thread level rules the overlap out (MPI does not check it at these levels at all).  Any
 * thread may call, one at a time (a program that called MPI_Init may make its calls from
 * another thread), and MPI's progress helper (mpi_progress_help.c) runs under a lock the
 * caller's thread takes back before it calls again.
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

static bool serial_calls;   /* teams made now are entered by one thread at a time */

void collie_set_serial_calls(bool on) { serial_calls = on; }

bool collie_serial_calls(void) { return serial_calls; }

static int entered(collie_team_t *team, const char *fn, uintptr_t held, uintptr_t me);

/* A team made at SINGLE / FUNNELED: no locked instruction (the header says why). */
static int enter_serial(collie_team_t *team, const char *fn, uintptr_t me) {
    uintptr_t held = atomic_load_explicit(&team->owner, memory_order_relaxed);
    if (held == 0)
        atomic_store_explicit(&team->owner, me, memory_order_relaxed);
    return entered(team, fn, held, me);
}

int collie_team_enter(collie_team_t *team, const char *fn) {
    uintptr_t me = (uintptr_t)&thread_token, held = 0;
    if (team->serial_entry)
        return enter_serial(team, fn, me);
    while (!atomic_compare_exchange_strong_explicit(&team->owner, &held, me, memory_order_acquire,
                                                    memory_order_relaxed)) {
        if (held != LENT)
            break;
        sched_yield();   /* another thread's wait moves this team's queue for a moment */
        held = 0;
    }
    return entered(team, fn, held, me);
}

/* After the word was found `held` (0: now taken by `me`). */
static int entered(collie_team_t *team, const char *fn, uintptr_t held, uintptr_t me) {
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
    if (team->serial_entry) {   /* this thread is the only one in collie */
        if (atomic_load_explicit(&team->owner, memory_order_relaxed) != 0)
            return false;
        atomic_store_explicit(&team->owner, LENT, memory_order_relaxed);
        return true;
    }
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
