/*
 * run_bind.c — collie-run's CPU binding (--bind-to core|none, or COLLIE_BIND_TO): which
 * CPUs each rank may run on, decided before the ranks start.
 *
 * Why: unbound ranks that sleep on futexes drift onto one core.  The kernel places a
 * woken task near its waker, so after some thousands of wake-ups the two ranks of a P = 2
 * job share one core for most of a run (seen on the 2-core AMD VM, 2026-11-27: the last
 * CPU of both ranks was the same in 50 of 60 samples of a 1 s allreduce run, 512 KiB calls
 * took 35–50 µs against 30 µs with the ranks bound to different cores).  MPI launchers
 * bind by default for the same reason (Open MPI to cores up to 2 ranks, Intel MPI always).
 *
 * The plan, from the CPUs collie-run itself may run on (its affinity mask), grouped into
 * cores by /sys/devices/system/cpu/cpuN/topology (package and core id; a CPU without
 * that information is a core of its own):
 * - P ranks ≤ cores: rank r gets every CPU of core r (cores in order of their first CPU);
 * - else P ≤ CPUs: rank r gets one CPU, the first hardware thread of every core before
 *   any second one;
 * - else: no binding (more ranks than CPUs; --bind-to core is then a usage error).
 * The default binds when 2 ≤ P ≤ CPUs; one rank has no peer to wait for, and two
 * single-rank jobs bound alike would share one CPU.
 *
 * Every rank also gets COLLIE_JOB_CPUS, the number of CPUs of the launcher's mask: bound
 * to one core, a rank's own mask no longer tells whether the job has a core per rank.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_job.h"

typedef struct {
    int package, core;   /* from sysfs; -1: unknown (the CPU is a core of its own) */
} cpu_place;

static int read_topology_int(int cpu, const char *what) {
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static cpu_place place_of(int cpu) {
    cpu_place p = { read_topology_int(cpu, "physical_package_id"),
                    read_topology_int(cpu, "core_id") };
    if (p.package < 0 || p.core < 0)
        p.package = p.core = -1;
    return p;
}

static int same_core(cpu_place a, cpu_place b) {
    return a.core >= 0 && a.package == b.package && a.core == b.core;
}

/* The CPUs of collie-run's mask grouped into cores. */
typedef struct {
    int n, ncores;
    int cpu[CPU_SETSIZE];      /* in mask order */
    int core[CPU_SETSIZE];     /* core index of cpu[i], cores in order of their first CPU */
    int thread[CPU_SETSIZE];   /* index of cpu[i] within its core */
    cpu_place place[CPU_SETSIZE];    /* of each core */
    int threads[CPU_SETSIZE];        /* CPUs seen so far per core */
} cpu_list;

static void group_cores(const cpu_set_t *mask, cpu_list *l) {
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, mask))
            continue;
        cpu_place p = place_of(c);
        int k = 0;
        while (k < l->ncores && !same_core(l->place[k], p))
            k++;
        if (k == l->ncores)
            l->place[l->ncores++] = p;
        l->cpu[l->n] = c;
        l->core[l->n] = k;
        l->thread[l->n++] = l->threads[k]++;
    }
}

/* Rank r's CPUs: the whole core r, or the r-th CPU taking first threads first. */
static void plan_ranks(run_job *j, const cpu_list *l) {
    long p = j->opt.nranks, r = 0;
    for (long i = 0; i < p; i++)
        CPU_ZERO(&j->bind_sets[i]);
    if (p <= l->ncores) {
        for (int i = 0; i < l->n; i++)
            if (l->core[i] < p)
                CPU_SET(l->cpu[i], &j->bind_sets[l->core[i]]);
        return;
    }
    for (int t = 0; r < p; t++)
        for (int i = 0; i < l->n && r < p; i++)
            if (l->thread[i] == t)
                CPU_SET(l->cpu[i], &j->bind_sets[r++]);
}

/* Declared in run_job.h. */
int bind_plan(run_job *j) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) {
        j->job_cpus = 0;      /* unknown: the ranks look at their own masks */
        if (j->opt.bind == RUN_BIND_CORE)
            fprintf(stderr, "collie-run: warning: --bind-to core: cannot read the CPUs "
                    "collie-run may run on (%m); the ranks run unbound\n");
        return 0;
    }
    long p = j->opt.nranks;
    cpu_list *l = calloc(1, sizeof *l);
    if (!l) {
        fprintf(stderr, "collie-run: out of memory\n");
        return -1;
    }
    group_cores(&mask, l);
    j->job_cpus = l->n;
    int bind = j->opt.bind == RUN_BIND_CORE ||
               (j->opt.bind == RUN_BIND_DEFAULT && p >= 2 && p <= l->n);
    int rc = 0;
    if (bind && p > l->n) {
        fprintf(stderr, "collie-run: --bind-to core: %ld ranks but collie-run may run on %d "
                "CPU%s; use --bind-to none to let ranks share CPUs\n", p, l->n,
                l->n == 1 ? "" : "s");
        rc = -1;
    } else if (bind && !(j->bind_sets = calloc((size_t)p, sizeof *j->bind_sets))) {
        fprintf(stderr, "collie-run: out of memory\n");
        rc = -1;
    } else if (bind) {
        plan_ranks(j, l);
    }
    free(l);
    return rc;
}

/* Declared in run_job.h: in the forked child, before exec. */
void bind_rank(const run_job *j, long r) {
    char buf[32];
    if (j->job_cpus > 0) {
        snprintf(buf, sizeof buf, "%d", j->job_cpus);
        setenv("COLLIE_JOB_CPUS", buf, 1);
    }
    if (j->bind_sets && sched_setaffinity(0, sizeof j->bind_sets[r], &j->bind_sets[r]) != 0)
        fprintf(stderr, "collie-run: warning: rank %ld could not be bound to its CPUs (%m); "
                "it runs unbound\n", r);
}
