/* collie-run.c — launcher: starts P ranks of a program on this machine.
 *
 *   collie-run -n P [--timeout S] [--tag-output] [--shared-heap] [--bind-to core|none]
 *              [--] PROGRAM [ARGS...]
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
 * Ranks are bound to cores of their own when there are at least 2 and at most as many as
 * the CPUs collie-run may use, unless --bind-to none (run_bind.c says why and how).
 *
 * Standalone: does not use the collie library.
 *
 * This file: main and the clean-up at the end.  Set-up and starting the ranks are in
 * run_start.c, the event loop and stopping in run_events.c (shared: run_job.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run_job.h"
#include "collie_run_heap.h"   /* uses run_opts */
#include "tool_version.h"

#define RUN_SHM_DIR "/dev/shm"

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
    free(j->bind_sets);
}

int main(int argc, char **argv) {
    static run_job job;
    if (tool_version_requested(argc, argv, "collie-run"))
        return 0;
    int rc = parse_args(argc, argv, &job.opt);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (run_heap_setup(&job.opt) != 0 || bind_plan(&job) != 0)
        return 2;
    if (job_init(&job) != 0)
        return 1;
    launch(&job);
    run_loop(&job);
    finish(&job);
    return job.exit_code;
}
