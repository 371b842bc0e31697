/*
 * floor_util.h — what the copy-floor programs (alltoall_floor.c, bcast_floor.c,
 * allgather_floor.c, allreduce_floor.c) share: a cache-line word for spin barriers, the
 * clock, shared anonymous memory, pinning to a core, times passed between processes as
 * the bits of a double, and a program's first read of its result.
 */
#ifndef COLLIE_BENCH_FLOOR_UTIL_H
#define COLLIE_BENCH_FLOOR_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct word {
    _Alignas(64) _Atomic uint64_t v;
} word;

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* n bytes of zeroed memory shared with the processes forked after; exits on failure. */
static inline void *shared_map(size_t n) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("floor: mmap");
        exit(1);
    }
    memset(p, 0, n);
    return p;
}

static inline void pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Spins until *w reaches v. */
static inline void wait_for(word *w, uint64_t v) {
    while (atomic_load_explicit(&w->v, memory_order_acquire) < v)
        ;
}

static inline uint64_t as_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static inline double as_double(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* A program's first use of n bytes of its result: a load per 64-byte line (the sum, so
 * that the loads are not dropped). */
static inline uint64_t read_lines(const void *p, size_t n) {
    uint64_t acc = 0;
    for (size_t at = 0; at + sizeof acc <= n; at += 64) {
        uint64_t v;
        memcpy(&v, (const char *)p + at, sizeof v);
        acc += v;
    }
    return acc;
}

static inline int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
