/*
 * run_job.h — what collie-run's files share: the job (its ranks, output streams, signal
 * fd, phase and deadlines) and the functions one file calls in another.  collie-run.c:
 * main and the clean-up at the end; run_start.c: set-up and starting the ranks;
 * run_events.c: the event loop (exits, signals, timeouts, output) and stopping the job;
 * run_bind.c: which CPUs each rank may run on.
 */
#ifndef COLLIE_RUN_JOB_H
#define COLLIE_RUN_JOB_H

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>
#include <time.h>

#include "collie_run_args.h"
#include "collie_run_tag.h"

typedef struct {
    pid_t pid;
    int alive;
} run_rank;

enum { RUN_RUNNING, RUN_TERM_SENT, RUN_KILL_SENT };

typedef struct {
    run_opts opt;
    run_rank *ranks;
    run_stream *streams;    /* 2 per rank with --tag-output, else NULL */
    struct pollfd *pfds;    /* signalfd + open streams */
    run_stream **pstreams;  /* stream behind pfds[i + 1] */
    char job[64];
    pid_t self, pgid;
    int sfd, errpipe[2];
    sigset_t oldmask;
    long nalive;
    int phase, exit_code;
    double deadline, grace_end;
    cpu_set_t *bind_sets;   /* rank r's CPUs (run_bind.c); NULL: ranks run unbound */
    int job_cpus;           /* CPUs collie-run may run on (0: unknown) */
} run_job;

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* run_start.c */
int job_init(run_job *j);     /* -1 on failure (reported) */
void launch(run_job *j);      /* starts the ranks; a failure begins stopping the job */

/* run_bind.c */
int bind_plan(run_job *j);               /* -1 on a usage error (reported) */
void bind_rank(const run_job *j, long r);   /* in the forked child */

/* run_events.c */
void signal_job(const run_job *j, int sig);
void begin_stop(run_job *j, int code);   /* SIGTERM now, SIGKILL after RUN_GRACE_S */
void run_loop(run_job *j);               /* until every rank has exited */
void drain_streams(run_job *j);          /* --tag-output: what is left in the pipes */

#endif
