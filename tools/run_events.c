/*
 * run_events.c — collie-run's event loop: one poll() on the signalfd (SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP) and, with --tag-output, the ranks' output pipes, with a timeout until
 * the next deadline (--timeout, or the end of the grace period).  A failing rank (the one
 * killed by a signal first, when survivors report its death), a signal or the timeout
 * stops the job: SIGTERM to its process group, SIGKILL after RUN_GRACE_S seconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_job.h"

#define RUN_GRACE_S 2.0
#define RUN_DRAIN_S 1.0

void signal_job(const run_job *j, int sig) {
    if (j->pgid > 0)
        kill(-j->pgid, sig);
}

void begin_stop(run_job *j, int code) {
    if (j->phase != RUN_RUNNING)
        return;
    j->exit_code = code;
    j->phase = RUN_TERM_SENT;
    j->grace_end = now_s() + RUN_GRACE_S;
    signal_job(j, SIGTERM);
}

static void force_kill(run_job *j) {
    signal_job(j, SIGKILL);
    j->phase = RUN_KILL_SENT;
}

static const char *others(long n, char *buf, size_t size) {
    snprintf(buf, size, "; stopping the other %ld rank%s", n, n == 1 ? "" : "s");
    return n > 0 ? buf : "";
}

static void rank_failed(run_job *j, long r, int status) {
    char buf[64];
    const char *rest = others(j->nalive, buf, sizeof buf);
    int code;
    if (WIFSIGNALED(status)) {
        code = 128 + WTERMSIG(status);
        fprintf(stderr, "collie-run: rank %ld (pid %ld) killed by signal %d (%s)%s\n", r,
                (long)j->ranks[r].pid, WTERMSIG(status), strsignal(WTERMSIG(status)), rest);
    } else {
        code = WEXITSTATUS(status);
        fprintf(stderr, "collie-run: rank %ld (pid %ld) exited with status %d%s\n", r,
                (long)j->ranks[r].pid, code, rest);
    }
    begin_stop(j, code);
}

static long find_rank(const run_job *j, pid_t pid) {
    for (long r = 0; r < j->opt.nranks; r++) {
        if (j->ranks[r].pid == pid && j->ranks[r].alive)
            return r;
    }
    return -1;
}

/* Reaps one exited rank without waiting: its rank (status in *status), -1 if none. */
static long reap_one(run_job *j, int *status) {
    pid_t pid;
    while ((pid = waitpid(-1, status, WNOHANG)) > 0) {
        long r = find_rank(j, pid);
        if (r < 0)
            continue;
        j->ranks[r].alive = 0;
        j->nalive--;
        return r;
    }
    return -1;
}

/* A rank that exits with an error status is often a survivor reporting that a peer was
 * killed (it may see the death before the killed rank is reaped): for up to 300 ms, look
 * for a rank killed by a signal and blame that one first. */
static bool blame_killed_rank(run_job *j, long survivor) {
    for (int i = 0; i < 60 && j->nalive > 0; i++) {
        int status;
        long r = reap_one(j, &status);
        if (r >= 0 && WIFSIGNALED(status)) {
            rank_failed(j, r, status);
            fprintf(stderr, "collie-run: (rank %ld exited with an error after that)\n", survivor);
            return true;
        }
        if (r < 0) {
            struct timespec ts = { 0, 5000000 };
            nanosleep(&ts, NULL);
        }
    }
    return false;
}

static void reap(run_job *j) {
    int status;
    long r;
    while ((r = reap_one(j, &status)) >= 0) {
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (ok || j->phase != RUN_RUNNING)
            continue;
        if (WIFSIGNALED(status) || !blame_killed_rank(j, r))
            rank_failed(j, r, status);
    }
}

static void got_signal(run_job *j, int sig) {
    if (j->phase == RUN_RUNNING) {
        fprintf(stderr, "collie-run: received signal %d (%s); stopping %ld rank%s\n", sig,
                strsignal(sig), j->nalive, j->nalive == 1 ? "" : "s");
        begin_stop(j, 128 + sig);
    } else if (j->phase == RUN_TERM_SENT) {
        fprintf(stderr, "collie-run: received signal %d again; killing all ranks\n", sig);
        force_kill(j);
    }
}

static void read_signals(run_job *j) {
    struct signalfd_siginfo si;
    while (read(j->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD)
            reap(j);
        else
            got_signal(j, (int)si.ssi_signo);
    }
    reap(j);  /* SIGCHLDs coalesce: always look for more */
}

static void check_deadlines(run_job *j) {
    double t = now_s();
    if (j->phase == RUN_RUNNING && j->opt.timeout > 0 && t >= j->deadline) {
        fprintf(stderr, "collie-run: timeout after %g s; killing %ld rank%s\n", j->opt.timeout,
                j->nalive, j->nalive == 1 ? "" : "s");
        begin_stop(j, 124);
    } else if (j->phase == RUN_TERM_SENT && t >= j->grace_end) {
        force_kill(j);
    }
}

/* Milliseconds until the next deadline (rounded up), or -1 if none. */
static int poll_timeout_ms(const run_job *j) {
    double until;
    if (j->phase == RUN_RUNNING && j->opt.timeout > 0)
        until = j->deadline;
    else if (j->phase == RUN_TERM_SENT)
        until = j->grace_end;
    else
        return -1;
    double ms = ceil((until - now_s()) * 1000.0);
    return ms < 0 ? 0 : ms > 1e9 ? 1000000000 : (int)ms;
}

/* Fills pfds[1..] with the open output streams; returns the total count. */
static nfds_t build_pollfds(run_job *j) {
    nfds_t n = 1;
    j->pfds[0] = (struct pollfd){.fd = j->sfd, .events = POLLIN};
    for (long s = 0; j->streams && s < 2 * j->opt.nranks; s++) {
        if (j->streams[s].fd < 0)
            continue;
        j->pfds[n] = (struct pollfd){.fd = j->streams[s].fd, .events = POLLIN};
        j->pstreams[n++] = &j->streams[s];
    }
    return n;
}

static void read_streams(run_job *j, nfds_t n) {
    for (nfds_t i = 1; i < n; i++) {
        if (j->pfds[i].revents)
            tag_read(j->pstreams[i]);
    }
}

/* Should not happen: kill everything and reap with blocking waits. */
static void poll_failed(run_job *j) {
    fprintf(stderr, "collie-run: poll failed: %s; killing all ranks\n", strerror(errno));
    begin_stop(j, 1);
    force_kill(j);
    while (j->nalive > 0) {
        pid_t pid = waitpid(-1, NULL, 0);
        long r = pid > 0 ? find_rank(j, pid) : -1;
        if (pid < 0 && errno == ECHILD)
            break;
        if (r >= 0) {
            j->ranks[r].alive = 0;
            j->nalive--;
        }
    }
}

void run_loop(run_job *j) {
    while (j->nalive > 0) {
        nfds_t n = build_pollfds(j);
        int rc = poll(j->pfds, n, poll_timeout_ms(j));
        if (rc < 0 && errno != EINTR) {
            poll_failed(j);
            return;
        }
        if (rc > 0 && j->pfds[0].revents)
            read_signals(j);
        if (rc > 0)
            read_streams(j, n);
        check_deadlines(j);
    }
}

/* After the last rank: forwards what is still in the pipes (bounded in time). */
void drain_streams(run_job *j) {
    if (!j->streams)
        return;
    double end = now_s() + RUN_DRAIN_S;
    nfds_t n;
    while ((n = build_pollfds(j)) > 1 && now_s() < end) {
        if (poll(j->pfds + 1, n - 1, 100) <= 0)
            break;
        read_streams(j, n);
    }
    for (long s = 0; s < 2 * j->opt.nranks; s++)
        tag_close(&j->streams[s]);
}
