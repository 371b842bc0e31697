/*
 * run_start.c — collie-run's set-up (standard fds, the job id, the signalfd, the exec
 * error pipe) and the start of the ranks: each forked into the job's process group with
 * its environment (COLLIE_*, torchrun's: collie_run_torch.h) and its output pipes, and an
 * exec failure reported back (exit status 127).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "collie_run_torch.h"
#include "run_job.h"

/* Makes sure fds 0-2 exist so pipes never land on them. */
static void ensure_std_fds(void) {
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
            return;
    }
}

static void make_job_id(run_job *j) {
    unsigned long long rnd = 0;
    if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rnd = ((unsigned long long)ts.tv_sec << 30) ^ (unsigned long long)ts.tv_nsec ^
              ((unsigned long long)getpid() << 48);
    }
    snprintf(j->job, sizeof j->job, "%ld-%016llx", (long)j->self, rnd);
}

/* With --tag-output each rank needs two fds: raise the soft limit as far as allowed. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int alloc_job(run_job *j) {
    long p = j->opt.nranks, nstreams = j->opt.tag_output ? 2 * p : 0;
    j->ranks = calloc((size_t)p, sizeof *j->ranks);
    j->pfds = calloc((size_t)nstreams + 1, sizeof *j->pfds);
    j->pstreams = calloc((size_t)nstreams + 1, sizeof *j->pstreams);
    if (nstreams)
        j->streams = calloc((size_t)nstreams, sizeof *j->streams);
    if (!j->ranks || !j->pfds || !j->pstreams || (nstreams && !j->streams)) {
        fprintf(stderr, "collie-run: out of memory\n");
        return -1;
    }
    for (long s = 0; s < nstreams; s++) {
        j->streams[s].fd = -1;
        j->streams[s].rank = s / 2;
        j->streams[s].out = (s % 2) ? STDERR_FILENO : STDOUT_FILENO;
    }
    return 0;
}

int job_init(run_job *j) {
    sigset_t set;
    ensure_std_fds();
    j->self = getpid();
    j->sfd = j->errpipe[0] = j->errpipe[1] = -1;
    make_job_id(j);
    run_torch_master_env(j->opt.nranks);
    if (j->opt.tag_output)
        raise_fd_limit();
    if (alloc_job(j) != 0)
        return -1;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, &j->oldmask);
    signal(SIGPIPE, SIG_IGN);
    j->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (j->sfd < 0 || pipe2(j->errpipe, O_CLOEXEC) != 0) {
        fprintf(stderr, "collie-run: setup failed: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void child_env(const run_job *j, long r) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", r);
    setenv("COLLIE_RANK", buf, 1);
    setenv("COLLIE_LOCAL_RANK", buf, 1);
    snprintf(buf, sizeof buf, "%ld", j->opt.nranks);
    setenv("COLLIE_SIZE", buf, 1);
    setenv("COLLIE_LOCAL_SIZE", buf, 1);
    setenv("COLLIE_JOB", j->job, 1);
    setenv("COLLIE_LAUNCHER", "collie-run", 1);
    run_torch_rank_env(r, j->opt.nranks);
}

static void child_stdio(long r, const int pfd[2][2]) {
    if (pfd[0][1] >= 0) {
        dup2(pfd[0][1], STDOUT_FILENO);
        dup2(pfd[1][1], STDERR_FILENO);
    }
    if (r != 0 || isatty(STDIN_FILENO)) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0 && fd != STDIN_FILENO) {
            dup2(fd, STDIN_FILENO);
            close(fd);
        }
    }
}

/* In the forked child: never returns.  Reports an exec failure's errno on errpipe. */
static _Noreturn void child_exec(const run_job *j, long r, const int pfd[2][2]) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != j->self)
        _exit(127);
    setpgid(0, j->pgid);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &j->oldmask, NULL);
    child_stdio(r, pfd);
    child_env(j, r);
    bind_rank(j, r);
    execvp(j->opt.argv[0], j->opt.argv);
    int err = errno;
    if (write(j->errpipe[1], &err, sizeof err) < 0)
        _exit(127);
    _exit(127);
}

static void close_pipes(int pfd[2][2], int ends) {
    for (int k = 0; k < 2; k++) {
        for (int e = 0; e < 2; e++) {
            if ((ends >> e & 1) && pfd[k][e] >= 0)
                close(pfd[k][e]);
        }
    }
}

static int spawn_rank(run_job *j, long r) {
    int pfd[2][2] = {{-1, -1}, {-1, -1}};
    if (j->streams && (pipe2(pfd[0], O_CLOEXEC) != 0 || pipe2(pfd[1], O_CLOEXEC) != 0)) {
        fprintf(stderr, "collie-run: cannot create pipes for rank %ld: %s\n", r, strerror(errno));
        close_pipes(pfd, 3);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        child_exec(j, r, (const int(*)[2])pfd);
    int err = errno;
    close_pipes(pfd, pid < 0 ? 3 : 2);
    if (pid < 0) {
        fprintf(stderr, "collie-run: cannot start rank %ld: %s\n", r, strerror(err));
        return -1;
    }
    if (j->streams) {
        j->streams[2 * r].fd = pfd[0][0];
        j->streams[2 * r + 1].fd = pfd[1][0];
    }
    if (j->pgid == 0)
        j->pgid = pid;
    setpgid(pid, j->pgid);  /* also done by the child: whoever runs first wins */
    j->ranks[r].pid = pid;
    j->ranks[r].alive = 1;
    j->nalive++;
    return 0;
}

/* After forking: waits until every rank has exec'd (errpipe EOF) or reports the failure. */
static void check_exec(run_job *j) {
    int err;
    close(j->errpipe[1]);
    j->errpipe[1] = -1;
    ssize_t n = read(j->errpipe[0], &err, sizeof err);
    if (n == (ssize_t)sizeof err) {
        fprintf(stderr, "collie-run: cannot run %s: %s\n", j->opt.argv[0], strerror(err));
        begin_stop(j, 127);
    }
}

void launch(run_job *j) {
    for (long r = 0; r < j->opt.nranks; r++) {
        if (spawn_rank(j, r) != 0) {
            begin_stop(j, 1);
            break;
        }
    }
    check_exec(j);
    j->deadline = now_s() + j->opt.timeout;
}
