/*
 * allreduce_floor.c — the floor of a 2-process float64 sum allreduce on this machine: the
 * data movement alone, with no library around it (issue #7, docs/performance.md).
 *
 *   build/bench/allreduce_floor [BYTES] [ITERS]      (default 8 MiB, 200)
 *
 * Two processes (fork), a spin barrier on a shared cache line before every call and at
 * its end.  Each process sums its half of the vector and writes it into both outputs:
 *   mapped:  all four buffers in shared memory (what collie_alloc buffers allow);
 *   kernel:  private buffers; the peer's half is read with process_vm_readv into 64 KiB
 *            of scratch and the result written with process_vm_writev (malloc buffers);
 *   pull:    mapped, but each process sums its half into its own output only and then
 *            copies the other half from the peer's output (reduce-scatter + allgather);
 *   staged:  private buffers (malloc's case without kernel help) and a shared staging
 *            area per process: each copies the peer's half of its input into its staging
 *            area, sums its own half (own input + the peer's staging) into its output and
 *            into its staging area, then copies the peer's result half out of the peer's
 *            staging area: three user-space copies of n/2, in steps of STEP bytes with a
 *            flag per stage and step (STEP = the whole vector: one step, two barriers).
 * With FRESH = 1 every input is rewritten before every call (untimed), as a real program
 * does.  Prints the best and the mean time per call, after checking the result.
 *
 *   build/bench/allreduce_floor [BYTES] [ITERS] [FRESH] [STEP]   (STEP for staged only)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "floor_util.h"

#define BLOCK 8192      /* doubles per kernel-copy block (64 KiB) */

enum mode { MAPPED, KERNEL, PULL, STAGED, KPULL, RING2, RING2SWAP, RING2SD };

typedef struct shared_line {
    _Atomic long arrived[2];
    char pad[64 - 2 * sizeof(long)];
    _Atomic long stage_in[2] __attribute__((aligned(64)));    /* steps copied in, per process */
    _Atomic long stage_out[2] __attribute__((aligned(64)));   /* steps reduced */
} shared_line;

typedef struct setup {
    double *in[2], *out[2];
    double *stage[2];       /* staged: the shared staging areas */
    double *stage2[2];      /* ring2: the second ones (results) */
    int swap;               /* ring2swap: results into the area just read (no stage2) */
    int sum_direct;         /* ring2sd: the sum reads the peer's area (no copy first) */
    size_t n, lo, hi;       /* elements; this process's half [lo, hi) */
    size_t step;            /* staged: elements per step */
    long calls;             /* staged: steps taken before this call */
    int me;
    pid_t peer;
    shared_line *line;
    long epoch;
    double scratch[BLOCK];
} setup;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void barrier(setup *s) {
    long e = ++s->epoch;
    atomic_store(&s->line->arrived[s->me], e);
    while (atomic_load(&s->line->arrived[1 - s->me]) < e)
        __builtin_ia32_pause();
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void call_mapped(setup *s) {
    for (size_t i = s->lo; i < s->hi; i++) {
        double v = s->in[0][i] + s->in[1][i];
        s->out[0][i] = v;
        s->out[1][i] = v;
    }
    barrier(s);
}

/* This process's half: the peer's part of it read with process_vm_readv 64 KiB at a time,
 * reduced into this process's output, and (write_peer) written into the peer's output with
 * process_vm_writev. */
static void kernel_half(setup *s, bool write_peer) {
    double *mine = s->in[s->me], *out = s->out[s->me];
    for (size_t b = s->lo; b < s->hi; b += BLOCK) {
        size_t e = b + BLOCK < s->hi ? b + BLOCK : s->hi, len = (e - b) * sizeof(double);
        struct iovec local = { s->scratch, len }, remote = { s->in[1 - s->me] + b, len };
        if (process_vm_readv(s->peer, &local, 1, &remote, 1, 0) != (ssize_t)len)
            die("process_vm_readv");
        for (size_t i = b; i < e; i++)
            out[i] = mine[i] + s->scratch[i - b];
        struct iovec from = { out + b, len }, to = { s->out[1 - s->me] + b, len };
        if (write_peer && process_vm_writev(s->peer, &from, 1, &to, 1, 0) != (ssize_t)len)
            die("process_vm_writev");
    }
}

static void call_kernel(setup *s) {
    kernel_half(s, true);
    barrier(s);
}

/* kpull: as kernel, but the result half stays in this process's output; once both halves
 * are reduced each process reads the peer's result half out of the peer's output
 * (process_vm_readv), so that every line of its result was last written by its own core. */
static void call_kernel_pull(setup *s) {
    double *out = s->out[s->me];
    kernel_half(s, false);
    barrier(s);
    size_t olo = s->me ? 0 : s->hi, ohi = s->me ? s->lo : s->n, len = (ohi - olo) * sizeof(double);
    struct iovec local = { out + olo, len }, remote = { s->out[1 - s->me] + olo, len };
    if (process_vm_readv(s->peer, &local, 1, &remote, 1, 0) != (ssize_t)len)
        die("process_vm_readv");
    barrier(s);
}

static void call_pull(setup *s) {
    double *out = s->out[s->me];
    for (size_t i = s->lo; i < s->hi; i++)
        out[i] = s->in[0][i] + s->in[1][i];
    barrier(s);
    size_t olo = s->me ? 0 : s->hi, ohi = s->me ? s->lo : s->n;
    memcpy(out + olo, s->out[1 - s->me] + olo, (ohi - olo) * sizeof(double));
    barrier(s);
}

static void wait_at(_Atomic long *flag, long v) {
    while (atomic_load_explicit(flag, memory_order_acquire) < v)
        __builtin_ia32_pause();
}

/* One step [b, e) of the vector: slices [b, mid) of process 0, [mid, e) of process 1. */
static void staged_in(setup *s, size_t b, size_t e, long t) {
    size_t mid = b + (e - b) / 2;
    size_t plo = s->me ? b : mid, phi = s->me ? mid : e;   /* the peer's slice */
    memcpy(s->stage[s->me] + plo, s->in[s->me] + plo, (phi - plo) * sizeof(double));
    atomic_store_explicit(&s->line->stage_in[s->me], t, memory_order_release);
}

static void staged_reduce(setup *s, size_t b, size_t e, long t) {
    size_t mid = b + (e - b) / 2;
    size_t lo = s->me ? mid : b, hi = s->me ? e : mid;
    const double *mine = s->in[s->me], *theirs = s->stage[1 - s->me];
    double *out = s->out[s->me], *st = s->stage[s->me];
    wait_at(&s->line->stage_in[1 - s->me], t);
    for (size_t i = lo; i < hi; i++) {
        double v = mine[i] + theirs[i];
        out[i] = v;
        st[i] = v;
    }
    atomic_store_explicit(&s->line->stage_out[s->me], t, memory_order_release);
}

static void staged_out(setup *s, size_t b, size_t e, long t) {
    size_t mid = b + (e - b) / 2;
    size_t plo = s->me ? b : mid, phi = s->me ? mid : e;
    wait_at(&s->line->stage_out[1 - s->me], t);
    memcpy(s->out[s->me] + plo, s->stage[1 - s->me] + plo, (phi - plo) * sizeof(double));
}

void collie_peer_copy(void *dst, const void *src, size_t n);   /* src/base/peer_copy.c */

/* ring2: Intel MPI's ring at P = 2 as seen in gdb (2026-12-05): each process copies the
 * peer's half of its input into its staging area (whole, not pipelined); copies its own
 * half from the peer's staging area into its output (8 pages at a time: collie_peer_copy)
 * and adds its input there in place; copies that result half into a second staging area;
 * and copies the peer's result half from the peer's second area into its output.  Every
 * line of the output is written last by its own core; both reads across the cores are
 * multi-page copies. */
static void call_ring2(setup *s) {
    size_t n = s->n, half = n / 2;
    size_t plo = s->me ? 0 : half, phi = s->me ? half : n;   /* the peer's half */
    double *out = s->out[s->me];
    const double *mine = s->in[s->me];
    long t = ++s->calls;
    memcpy(s->stage[s->me] + plo, mine + plo, (phi - plo) * sizeof(double));
    atomic_store_explicit(&s->line->stage_in[s->me], t, memory_order_release);
    wait_at(&s->line->stage_in[1 - s->me], t);
    const double *in_peer = s->stage[1 - s->me];
    if (s->sum_direct) {
        for (size_t i = s->lo; i < s->hi; i++)
            out[i] = mine[i] + in_peer[i];
    } else {
        collie_peer_copy(out + s->lo, in_peer + s->lo, (s->hi - s->lo) * sizeof(double));
        for (size_t i = s->lo; i < s->hi; i++)
            out[i] += mine[i];
    }
    double *res = s->swap ? s->stage[1 - s->me] : s->stage2[s->me];   /* where my result half goes */
    memcpy(res + s->lo, out + s->lo, (s->hi - s->lo) * sizeof(double));
    atomic_store_explicit(&s->line->stage_out[s->me], t, memory_order_release);
    wait_at(&s->line->stage_out[1 - s->me], t);
    const double *theirs = s->swap ? s->stage[s->me] : s->stage2[1 - s->me];
    collie_peer_copy(out + plo, theirs + plo, (phi - plo) * sizeof(double));
    barrier(s);   /* the staging areas are free again */
}

/* Pipelined as collie's cells are: copy-in of step k + 1 before the reduction of step k. */
static void call_staged(setup *s) {
    size_t nsteps = (s->n + s->step - 1) / s->step;
    long base = s->calls;
    for (size_t k = 0; k <= nsteps + 1; k++) {
        if (k < nsteps)
            staged_in(s, k * s->step, k * s->step + s->step < s->n ? k * s->step + s->step : s->n, base + (long)k + 1);
        if (k >= 1 && k - 1 < nsteps) {
            size_t j = k - 1;
            staged_reduce(s, j * s->step, j * s->step + s->step < s->n ? j * s->step + s->step : s->n, base + (long)j + 1);
        }
        if (k >= 2) {
            size_t j = k - 2;
            staged_out(s, j * s->step, j * s->step + s->step < s->n ? j * s->step + s->step : s->n, base + (long)j + 1);
        }
    }
    s->calls += (long)nsteps;
    barrier(s);   /* the staging areas are free again */
}

static void fill_inputs(setup *s, int it) {
    double *in = s->in[s->me];
    double f = s->me ? 2.0 : 1.0;
    for (size_t i = 0; i < s->n; i++)
        in[i] = f * (double)(i + (size_t)it);
}

static void run(enum mode m, size_t bytes, int iters, int fresh, size_t step_bytes, int use) {
    size_t n = bytes / sizeof(double);
    bool mapped = m == MAPPED || m == PULL;   /* the others' buffers are private */
    int flags = (mapped ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
    double *mem = mmap(NULL, 4 * n * sizeof(double), PROT_READ | PROT_WRITE, flags, -1, 0);
    shared_line *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED || line == MAP_FAILED)
        die("mmap");
    double *stage = mmap(NULL, 4 * n * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (stage == MAP_FAILED)
        die("mmap");
    size_t step = step_bytes / sizeof(double) / 16 * 16;
    setup s = { { mem, mem + n }, { mem + 2 * n, mem + 3 * n }, { stage, stage + n },
                { stage + 2 * n, stage + 3 * n }, m >= RING2SWAP, m == RING2SD, n, 0, 0,
                step ? step : n, 0, 0, 0, line, 0, { 0 } };
    for (size_t i = 0; i < n; i++) {
        s.in[0][i] = (double)i;
        s.in[1][i] = 2.0 * (double)i;
    }
    memset(s.out[0], 0, n * sizeof(double));
    memset(s.out[1], 0, n * sizeof(double));
    fflush(stdout);
    pid_t parent = getpid(), child = fork();
    if (child < 0)
        die("fork");
    s.me = child == 0;
    s.peer = s.me ? parent : child;
    s.lo = s.me ? n / 2 : 0;
    s.hi = s.me ? n : n / 2;
    double best = 1e30, sum = 0;
    int last = 0;
    for (int it = 0; it < iters + 5; it++) {
        if (fresh) {
            fill_inputs(&s, it);
            last = it;
        }
        barrier(&s);
        double t0 = now_s();
        if (m == MAPPED)
            call_mapped(&s);
        else if (m == KERNEL)
            call_kernel(&s);
        else if (m == PULL)
            call_pull(&s);
        else if (m == KPULL)
            call_kernel_pull(&s);
        else if (m >= RING2)
            call_ring2(&s);
        else
            call_staged(&s);
        if (use) {   /* the program's first use of its result, timed with the call */
            volatile uint64_t sink = read_lines(s.out[s.me], n * sizeof(double));
            (void)sink;
        }
        double t = now_s() - t0;
        if (it >= 5) {
            sum += t;
            best = t < best ? t : best;
        }
    }
    double *out = s.out[s.me];
    for (size_t i = 0; i < n; i += n / 7 + 1)
        if (out[i] != 3.0 * (double)(i + (size_t)last)) {
            fprintf(stderr, "allreduce_floor: wrong result at %zu in process %d\n", i, s.me);
            _exit(1);
        }
    if (s.me)
        _exit(0);
    waitpid(child, NULL, 0);
    static const char *names[] = { "mapped", "kernel", "pull", "staged", "kpull", "ring2", "ring2sw", "ring2sd" };
    printf("%-7s %10zu B %s%s step %8zu B  best %9.1f us  mean %9.1f us\n", names[m], bytes,
           fresh ? "fresh " : "reused", use ? " +use" : "", m == STAGED ? s.step * sizeof(double) : bytes, best * 1e6,
           sum / iters * 1e6);
    munmap(mem, 4 * n * sizeof(double));
    munmap(line, 4096);
    munmap(stage, 4 * n * sizeof(double));
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : (size_t)8 << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    int fresh = argc > 3 ? atoi(argv[3]) : 0;
    size_t step = argc > 4 ? (size_t)atol(argv[4]) : bytes;
    int use = argc > 5 ? atoi(argv[5]) : 0;
    if (bytes < 16 || bytes % 16 || iters < 1 || step < 128) {
        fprintf(stderr, "usage: allreduce_floor [BYTES (multiple of 16)] [ITERS >= 1] [FRESH 0|1] [STEP >= 128] [USE 0|1]\n");
        return 2;
    }
    for (int m = MAPPED; m <= RING2SD; m++)
        run((enum mode)m, bytes, iters, fresh, step, use);
    return 0;
}
