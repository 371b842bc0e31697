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
 *            copies the other half from the peer's output (reduce-scatter + allgather).
 * Prints the best and the mean time per call, after checking the result.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 8192      /* doubles per kernel-copy block (64 KiB) */

enum mode { MAPPED, KERNEL, PULL };

typedef struct shared_line {
    _Atomic long arrived[2];
} shared_line;

typedef struct setup {
    double *in[2], *out[2];
    size_t n, lo, hi;       /* elements; this process's half [lo, hi) */
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

static void call_kernel(setup *s) {
    double *mine = s->in[s->me], *out = s->out[s->me];
    for (size_t b = s->lo; b < s->hi; b += BLOCK) {
        size_t e = b + BLOCK < s->hi ? b + BLOCK : s->hi, len = (e - b) * sizeof(double);
        struct iovec local = { s->scratch, len }, remote = { s->in[1 - s->me] + b, len };
        if (process_vm_readv(s->peer, &local, 1, &remote, 1, 0) != (ssize_t)len)
            die("process_vm_readv");
        for (size_t i = b; i < e; i++)
            out[i] = mine[i] + s->scratch[i - b];
        struct iovec from = { out + b, len }, to = { s->out[1 - s->me] + b, len };
        if (process_vm_writev(s->peer, &from, 1, &to, 1, 0) != (ssize_t)len)
            die("process_vm_writev");
    }
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

static void run(enum mode m, size_t bytes, int iters) {
    size_t n = bytes / sizeof(double);
    int flags = (m == KERNEL ? MAP_PRIVATE : MAP_SHARED) | MAP_ANONYMOUS;
    double *mem = mmap(NULL, 4 * n * sizeof(double), PROT_READ | PROT_WRITE, flags, -1, 0);
    shared_line *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED || line == MAP_FAILED)
        die("mmap");
    setup s = { { mem, mem + n }, { mem + 2 * n, mem + 3 * n }, n, 0, 0, 0, 0, line, 0, { 0 } };
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
    for (int it = 0; it < iters + 5; it++) {
        barrier(&s);
        double t0 = now_s();
        if (m == MAPPED)
            call_mapped(&s);
        else if (m == KERNEL)
            call_kernel(&s);
        else
            call_pull(&s);
        double t = now_s() - t0;
        if (it >= 5) {
            sum += t;
            best = t < best ? t : best;
        }
    }
    double *out = s.out[s.me];
    for (size_t i = 0; i < n; i += n / 7 + 1)
        if (out[i] != 3.0 * (double)i) {
            fprintf(stderr, "allreduce_floor: wrong result at %zu in process %d\n", i, s.me);
            _exit(1);
        }
    if (s.me)
        _exit(0);
    waitpid(child, NULL, 0);
    static const char *names[] = { "mapped", "kernel", "pull" };
    printf("%-7s %10zu B  best %9.1f us  mean %9.1f us\n", names[m], bytes, best * 1e6,
           sum / iters * 1e6);
    munmap(mem, 4 * n * sizeof(double));
    munmap(line, 4096);
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : (size_t)8 << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    if (bytes < 16 || bytes % 16 || iters < 1) {
        fprintf(stderr, "usage: allreduce_floor [BYTES (multiple of 16)] [ITERS >= 1]\n");
        return 2;
    }
    run(MAPPED, bytes, iters);
    run(KERNEL, bytes, iters);
    run(PULL, bytes, iters);
    return 0;
}
