/*
 * floors.c — what this machine allows at best, measured (the "floors" of
 * docs/performance.md, "Where the time goes"):
 *
 *   pingpong   one-way latency of a cache line between two processes: each waits (spins)
 *              for the other's store to a shared line and answers; one-way = round trip / 2.
 *              Pinned to two different cores, unpinned, and both on one core (the waiter
 *              yields the core: that is a context switch per message).
 *   futex      one-way wake-up latency: the same ping-pong, but each side sleeps in
 *              FUTEX_WAIT and is woken by the other's FUTEX_WAKE (no spinning), on two
 *              cores and on one core.
 *   bandwidth  memcpy and a 2-input float64 sum (dst[i] = a[i] + b[i]) per size, one
 *              process, and at 8 and 64 MiB with two processes (cores 0 and 1) doing the
 *              same at once (the total is what a collective with both cores copying gets).  GB/s counts
 *              bytes read + written (memcpy 2×size, sum 3×size).
 *
 *   line       only the pinned ping-pong, short, as one line "line_ns MIN MEDIAN": the
 *              probe bench/compare runs before and after every launch (this VM's
 *              vCPUs sit sometimes on cores that share a cache, sometimes not: 55 against
 *              260 ns, and every shared-memory library's times change with it).
 *
 *   usage: floors [--quick] [pingpong] [futex] [bandwidth] | floors line   (default: the
 *          first three)
 *
 * Two processes share an anonymous MAP_SHARED mapping; every wait has a deadline, so a
 * dead or descheduled partner gives an error, not a hang.  Latencies: the fastest of 101
 * batches (the floor) and the median batch; bandwidths: the best of 9 runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE 64
#define DEADLINE_NS 20000000000ull   /* 20 s: a partner that long silent is gone */

typedef struct shared {
    _Alignas(LINE) _Atomic uint32_t ping;   /* written by the parent */
    _Alignas(LINE) _Atomic uint32_t pong;   /* written by the child */
    _Alignas(LINE) _Atomic uint32_t ready;  /* start barrier (bandwidth) */
    _Alignas(LINE) double child_gbs;
} shared;

static int quick;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(int core) {
    if (core < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "floors: cannot pin to core %d: %s\n", core, strerror(errno));
        exit(1);
    }
}

static int ncores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void unpin(void) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < ncores() && c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
}

static void die_silent_partner(const char *what) {
    fprintf(stderr, "floors: %s: partner silent for %llu s, giving up\n", what,
            DEADLINE_NS / 1000000000ull);
    exit(1);
}

/* ---- waiting: spin (optionally yielding) or futex ------------------------------------- */

enum wait_kind { SPIN, SPIN_YIELD, FUTEX };

static long futex(_Atomic uint32_t *addr, int op, uint32_t val) {
    struct timespec ts = { 1, 0 };
    return syscall(SYS_futex, (uint32_t *)addr, op, val, op == FUTEX_WAIT ? &ts : NULL, NULL, 0);
}

/* Waits until *word == want. */
static void wait_for(_Atomic uint32_t *word, uint32_t want, enum wait_kind kind) {
    uint64_t start = 0;
    for (unsigned n = 1;; n++) {
        uint32_t v = atomic_load_explicit(word, memory_order_acquire);
        if (v == want)
            return;
        if (kind == FUTEX)
            futex(word, FUTEX_WAIT, v);
        else if (kind == SPIN_YIELD)
            sched_yield();
        else
            __builtin_ia32_pause();
        if (n % 4096 == 0 && !start)
            start = now_ns();
        else if (n % 4096 == 0 && now_ns() - start > DEADLINE_NS)
            die_silent_partner("wait");
    }
}

static void post(_Atomic uint32_t *word, uint32_t v, enum wait_kind kind) {
    atomic_store_explicit(word, v, memory_order_release);
    if (kind == FUTEX)
        futex(word, FUTEX_WAKE, 1);
}

/* ---- two processes ------------------------------------------------------------------- */

static shared *map_shared(void) {
    shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("floors: mmap");
        exit(1);
    }
    memset(s, 0, sizeof *s);
    return s;
}

static pid_t fork_or_die(void) {
    pid_t child = fork();
    if (child < 0) {
        perror("floors: fork");
        exit(1);
    }
    return child;
}

static void reap(pid_t child) {
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "floors: the child process failed\n");
        exit(1);
    }
}

#define BATCHES 101

typedef struct latency {
    double min, median;          /* ns per one-way message, over the batches */
} latency;

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* BATCHES batches of `rounds` round trips; the fastest batch is the floor, the median
 * shows what a loaded machine gives (other processes preempt some batches). */
static latency pingpong(int core_a, int core_b, enum wait_kind kind, long rounds) {
    shared *s = map_shared();
    pid_t child = fork_or_die();
    if (child == 0) {
        pin(core_b);
        for (uint32_t i = 1; i <= BATCHES * (uint32_t)rounds; i++) {
            wait_for(&s->ping, i, kind);
            post(&s->pong, i, kind);
        }
        _exit(0);
    }
    pin(core_a);
    double one_way[BATCHES];
    for (uint32_t batch = 0, i = 0; batch < BATCHES; batch++) {
        uint64_t t0 = now_ns();
        for (long r = 0; r < rounds; r++) {
            post(&s->ping, ++i, kind);
            wait_for(&s->pong, i, kind);
        }
        one_way[batch] = (double)(now_ns() - t0) / (double)rounds / 2;
    }
    reap(child);
    munmap(s, sizeof *s);
    unpin();
    qsort(one_way, BATCHES, sizeof one_way[0], by_value);
    return (latency){ one_way[0], one_way[BATCHES / 2] };
}

/* ---- bandwidth ----------------------------------------------------------------------- */

typedef struct buffers {
    double *a, *b, *dst;
} buffers;

static void alloc_buffers(buffers *m, size_t bytes) {
    double **bufs[3] = { &m->a, &m->b, &m->dst };
    for (int k = 0; k < 3; k++) {
        if (posix_memalign((void **)bufs[k], 4096, bytes) != 0) {
            fprintf(stderr, "floors: cannot allocate %zu bytes\n", bytes);
            exit(1);
        }
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            (*bufs[k])[i] = (double)(i % 7 + (size_t)k);
    }
}

static void free_buffers(buffers *m) {
    free(m->a);
    free(m->b);
    free(m->dst);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void sum2(double *restrict dst, const double *restrict a, const double *restrict b,
                 size_t n) {
    for (size_t i = 0; i < n; i++)
        dst[i] = a[i] + b[i];
}

static uint64_t time_kernel(buffers *m, size_t bytes, int sum, long iters) {
    uint64_t t0 = now_ns();
    for (long i = 0; i < iters; i++) {
        if (sum)
            sum2(m->dst, m->a, m->b, bytes / sizeof(double));
        else
            memcpy(m->dst, m->a, bytes);
        __asm__ volatile("" ::: "memory");   /* keep every iteration */
    }
    return now_ns() - t0;
}

/* GB/s (bytes read + written per ns), best of 9 runs of ~target ms each. */
static double kernel_gbs(size_t bytes, int sum) {
    buffers m;
    alloc_buffers(&m, bytes);
    double target = quick ? 5e6 : 30e6;
    long iters = 1;
    uint64_t t;
    while ((t = time_kernel(&m, bytes, sum, iters)) < target / 10 && iters < (1L << 30))
        iters *= 2;
    iters = (long)((double)iters * target / (double)(t ? t : 1)) + 1;
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 9; r++) {
        t = time_kernel(&m, bytes, sum, iters);
        best = t < best ? t : best;
    }
    free_buffers(&m);
    return (double)bytes * (sum ? 3 : 2) * (double)iters / (double)best;
}

/* Both processes run the kernel at once, pinned to cores 0 and 1; returns the sum. */
static double kernel_gbs_two(size_t bytes, int sum) {
    shared *s = map_shared();
    pid_t child = fork_or_die();
    if (child == 0) {
        pin(1);
        atomic_fetch_add(&s->ready, 1);
        wait_for(&s->ready, 2, SPIN_YIELD);
        s->child_gbs = kernel_gbs(bytes, sum);
        _exit(0);
    }
    pin(0);
    atomic_fetch_add(&s->ready, 1);
    wait_for(&s->ready, 2, SPIN_YIELD);
    double mine = kernel_gbs(bytes, sum);
    reap(child);
    double total = mine + s->child_gbs;
    munmap(s, sizeof *s);
    unpin();
    return total;
}

/* ---- driver -------------------------------------------------------------------------- */

static void row(const char *group, const char *what, double v, const char *unit) {
    printf("%-10s %-36s %10.1f %s\n", group, what, v, unit);
    fflush(stdout);
}

static void latency_row(const char *group, const char *what, latency l) {
    printf("%-10s %-36s %10.1f ns one-way (median of batches %.1f)\n", group, what, l.min,
           l.median);
    fflush(stdout);
}

static void run_pingpong(void) {
    long spin_rounds = quick ? 200 : 2000, yield_rounds = quick ? 20 : 200;
    if (ncores() >= 2)
        latency_row("pingpong", "spin, pinned to cores 0 and 1", pingpong(0, 1, SPIN, spin_rounds));
    if (ncores() >= 2)
        latency_row("pingpong", "spin, unpinned", pingpong(-1, -1, SPIN, spin_rounds));
    latency_row("pingpong", "spin+yield, both on core 0", pingpong(0, 0, SPIN_YIELD, yield_rounds));
}

/* bench/compare's probe of the machine's state: about 10 ms. */
static void run_line(void) {
    if (ncores() < 2) {
        printf("line_ns - -\n");
        return;
    }
    latency l = pingpong(0, 1, SPIN, 200);
    printf("line_ns %.1f %.1f\n", l.min, l.median);
}

static void run_futex(void) {
    long rounds = quick ? 20 : 200;
    if (ncores() >= 2)
        latency_row("futex", "wake-up, pinned to cores 0 and 1", pingpong(0, 1, FUTEX, rounds));
    latency_row("futex", "wake-up, both on core 0", pingpong(0, 0, FUTEX, rounds));
}

static void run_bandwidth(void) {
    static const size_t sizes[] = { 32 << 10, 1 << 20, 64 << 20 };
    char what[64];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int sum = 0; sum <= 1; sum++) {
            snprintf(what, sizeof what, "%s %zu KiB, 1 process", sum ? "sum2 f64" : "memcpy",
                     sizes[i] >> 10);
            row("bandwidth", what, kernel_gbs(sizes[i], sum), "GB/s");
        }
    }
    static const size_t both[] = { 8 << 20, 64 << 20 };
    for (size_t i = 0; ncores() >= 2 && i < sizeof both / sizeof both[0]; i++) {
        for (int sum = 0; sum <= 1; sum++) {
            snprintf(what, sizeof what, "%s %zu KiB, 2 processes (total)",
                     sum ? "sum2 f64" : "memcpy", both[i] >> 10);
            row("bandwidth", what, kernel_gbs_two(both[i], sum), "GB/s");
        }
    }
}

int main(int argc, char **argv) {
    int want[3] = { 0, 0, 0 }, any = 0;
    if (argc == 2 && !strcmp(argv[1], "line")) {
        run_line();
        return 0;
    }
    static const char *const names[3] = { "pingpong", "futex", "bandwidth" };
    for (int i = 1; i < argc; i++) {
        int known = !strcmp(argv[i], "--quick");
        quick |= known;
        for (int k = 0; k < 3; k++)
            if (!strcmp(argv[i], names[k]))
                known = want[k] = any = 1;
        if (!known) {
            fprintf(stderr, "floors: unknown argument '%s'\n"
                            "usage: floors [--quick] [pingpong] [futex] [bandwidth] | floors line\n", argv[i]);
            return 2;
        }
    }
    printf("# floors: %d cores online%s\n", ncores(), quick ? " (--quick)" : "");
    void (*const runs[3])(void) = { run_pingpong, run_futex, run_bandwidth };
    for (int k = 0; k < 3; k++)
        if (want[k] || !any)
            runs[k]();
    return 0;
}
