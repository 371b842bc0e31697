/*
 * mpi_progress_help.c — collie's requests keep moving while this rank blocks in a PMPI call
 * that has no nonblocking form to wait on in the shared loop (mpi_progress.c).
 *
 * A rank blocked in PMPI_Alltoall while a peer waits in MPI_Wait for a collie request this
 * rank started would deadlock: MPI's collective needs the peer, the peer needs this rank's
 * collie schedule to move, and nothing runs it.  MPI requires that program to work.  The
 * blocking call cannot become its nonblocking form plus the shared loop, as the
 * point-to-point calls do: MPI does not match a nonblocking collective on one rank with
 * the blocking one on another (MPI-3.1 §5.12), and the other ranks call the blocking
 * form.  So, while collie has active requests, a helper thread runs collie's side of them
 * (cm_progress_collie_only: collie_test, no MPI call) for as long as the caller's thread
 * is inside PMPI; afterwards the caller's thread does MPI's side of what finished
 * (cm_complete_deferred: the error handler, MPI_Grequest_complete).  The thread is made
 * on first need and then parked on a condition variable; with no active collie request
 * the blocking call costs one load and a branch more.
 *
 * Only where collie's side needs no MPI: when a team of an active request runs over the
 * shm+mpi transport (nodes joined by MPI, whose progress calls MPI), the helper would call
 * MPI from a second thread, so it is not used unless MPI provides MPI_THREAD_MULTIPLE.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "mpi/mpi_layer.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static bool helping;          /* under lock: the helper runs collie's requests */
static int inside;            /* under lock: helped calls under way (nested: a callback MPI
                                 makes inside one, e.g. an attribute copy function) */
static bool thread_made;

/* Holds `lock` while it runs collie: the caller's thread, leaving PMPI, takes the lock and
 * so waits for the pass in flight to end before it touches collie again. */
static void *helper_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!helping)
            pthread_cond_wait(&wake, &lock);
        if (cm_progress_collie_only() == 0) {
            helping = false;   /* all finished on collie's side: park until the next call */
            continue;
        }
        pthread_mutex_unlock(&lock);
        sched_yield();
        pthread_mutex_lock(&lock);
    }
    return NULL;
}

static bool may_help(void) {
    if (cm_active_need_no_mpi())
        return true;
    int level = MPI_THREAD_SINGLE;
    return PMPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
}

static __attribute__((noinline)) bool help_begin(void) {
    if (!may_help())
        return false;
    pthread_mutex_lock(&lock);
    if (!thread_made) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        thread_made = pthread_create(&t, &attr, helper_main, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    inside += thread_made;
    helping = thread_made;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    return thread_made;
}

/* With no active collie request: one counter test (the rest is out of line). */
bool cm_help_begin(void) {
    return cm_requests_active() && help_begin();
}

/* The helper stops only when the outermost helped call returns. */
int cm_help_end(bool began, int rc) {
    if (!began)
        return rc;
    pthread_mutex_lock(&lock);
    bool last = --inside == 0;
    if (last)
        helping = false;
    pthread_mutex_unlock(&lock);
    if (last)
        cm_complete_deferred();
    return rc;
}
