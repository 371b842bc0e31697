/* collie-run.c — launcher: starts P ranks of a program on this machine.
 *
 *   collie-run -n P [--timeout S] [--tag-output] [--shared-heap] [--] PROGRAM [ARGS...]
 *
 * Every rank gets COLLIE_RANK, COLLIE_SIZE, COLLIE_LOCAL_RANK, COLLIE_LOCAL_SIZE,
 * COLLIE_JOB (unique id, [A-Za-z0-9-]) and COLLIE_LAUNCHER=collie-run, and what torchrun
 * gives (RANK, WORLD_SIZE, ..., MASTER_ADDR/PORT: collie_run_torch.h).  All ranks share one
 * process group created for the job (so grandchildren are signalled too) and die with
 * SIGKILL if the launcher itself dies (PR_SET_PDEATHSIG).  Rank 0 inherits stdin unless it
 * is a terminal; the other ranks read /dev/null.
 *
 * Design: SIGCHLD/SIGINT/SIGTERM/SIGHUP are blocked and read from a signalfd; one poll()
 * loop waits on it (plus the output pipes with --tag-output) with a timeout computed from
 * the --timeout deadline or the end of the grace period.  When a rank fails (or on a
 * signal or timeout) the group gets SIGTERM, then SIGKILL after RUN_GRACE_S seconds.
 * Finally the job's leftover /dev/shm/collie-<job>[-*] objects are removed.  Signals ignored
 * when collie-run starts (nohup, `&` in a script) stay ignored, as is the Unix convention.
 *
 * Exit status: 0 if all ranks exit 0; else the first failing rank's status (128+signal if
 * killed); 124 on timeout; 128+sig if the launcher got a signal; 127 if PROGRAM cannot be
 * executed; 2 on usage errors; 1 on internal errors (fork, pipe, ...).
 *
 * Standalone: does not use the collie library.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collie_run_args.h"
#include "tool_version.h"
#include "collie_run_tag.h"
#include "collie_run_heap.h"
#include "collie_run_torch.h"

#define RUN_GRACE_S 2.0
#define RUN_DRAIN_S 1.0
#define RUN_SHM_DIR "/dev/shm"

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
} run_job;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- setup --------------------------------------------------------------------------- */

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

static int job_init(run_job *j) {
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

/* ---- starting ranks ------------------------------------------------------------------ */

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

/* ---- stopping ------------------------------------------------------------------------ */

static void signal_job(const run_job *j, int sig) {
    if (j->pgid > 0)
        kill(-j->pgid, sig);
}

static void begin_stop(run_job *j, int code) {
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

static void launch(run_job *j) {
    for (long r = 0; r < j->opt.nranks; r++) {
        if (spawn_rank(j, r) != 0) {
            begin_stop(j, 1);
            break;
        }
    }
    check_exec(j);
    j->deadline = now_s() + j->opt.timeout;
}

/* ---- event loop ---------------------------------------------------------------------- */

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

static void run_loop(run_job *j) {
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
static void drain_streams(run_job *j) {
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

/* Removes /dev/shm/collie-<job> and /dev/shm/collie-<job>-* (this job's only). */
static void cleanup_shm(const run_job *j) {
    char prefix[96];
    int plen = snprintf(prefix, sizeof prefix, "collie-%s", j->job), removed = 0;
    DIR *d = opendir(RUN_SHM_DIR);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strncmp(name, prefix, (size_t)plen) != 0 || (name[plen] && name[plen] != '-'))
            continue;
        if (unlinkat(dirfd(d), name, 0) == 0)
            removed++;
    }
    closedir(d);
    if (removed)
        fprintf(stderr, "collie-run: removed %d leftover shared-memory object%s of job %s\n",
                removed, removed == 1 ? "" : "s", j->job);
}

static void finish(run_job *j) {
    if (j->phase != RUN_RUNNING)
        signal_job(j, SIGKILL);  /* grandchildren that outlived their rank */
    drain_streams(j);
    cleanup_shm(j);
    free(j->ranks);
    free(j->streams);
    free(j->pfds);
    free(j->pstreams);
}

int main(int argc, char **argv) {
    static run_job job;
    if (tool_version_requested(argc, argv, "collie-run"))
        return 0;
    int rc = parse_args(argc, argv, &job.opt);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (run_heap_setup(&job.opt) != 0)
        return 2;
    if (job_init(&job) != 0)
        return 1;
    launch(&job);
    run_loop(&job);
    finish(&job);
    return job.exit_code;
}
