/*
 * cells_floor.c — the floor of a bcast through shared copy cells between two cores, and
 * whether non-temporal stores or CLDEMOTE make the copy into the cells faster here
 * (issue 14 asks for non-temporal stores "where they measure faster").
 *
 * Two processes pinned to cores 0 and 1 share a ring of cells.  Per call the root writes
 * new values into its private input (untimed, as a program would), both meet at a spin
 * barrier, then the root copies the input chunk by chunk into the ring (waiting for a
 * free cell) and the reader copies each chunk out into its private output: exactly the
 * copy-cell bcast of src/algorithms/cells.c, without the library.  The root's copy into
 * the cell is one of
 *   plain      memcpy
 *   nt         non-temporal 16-byte stores (SSE2 movntdq) and an sfence
 *   cldemote   memcpy, then CLDEMOTE of every line (a hint to push it towards the shared
 *              cache; executes as a no-op on x86 processors without it)
 * Prints the reader's mean and best time per call in µs.
 *
 *   usage: cells_floor [BYTES [CHUNK [CELLS [CALLS]]]]   (default 2 MiB, 64 KiB, 4, 300)
 */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

typedef struct word {
    _Alignas(64) _Atomic uint64_t v;
} word;

typedef struct ctrl {
    word in, freed, root_ready, reader_ready;
} ctrl;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void wait_at_least(_Atomic uint64_t *w, uint64_t v) {
    while (atomic_load_explicit(w, memory_order_acquire) < v)
        ;
}

static void copy_plain(char *d, const char *s, size_t n) { memcpy(d, s, n); }

static void copy_nt(char *d, const char *s, size_t n) {
#if defined(__x86_64__)
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + i, s + i, n - i);
    _mm_sfence();
#else
    memcpy(d, s, n);
#endif
}

static void copy_demote(char *d, const char *s, size_t n) {
    memcpy(d, s, n);
#if defined(__x86_64__)
    for (size_t i = 0; i < n; i += 64)
        __asm__ volatile(".byte 0x0f, 0x1c, 0x07" : : "D"(d + i) : "memory");   /* cldemote (%rdi) */
#endif
}

typedef void (*copy_fn)(char *, const char *, size_t);

static void pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* One variant: returns nothing, the reader prints its line. */
static void run(const char *name, copy_fn copy, size_t bytes, size_t chunk, int ncells, int calls) {
    ctrl *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *cells = mmap(NULL, (size_t)ncells * chunk, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED || cells == MAP_FAILED) {
        perror("cells_floor: mmap");
        exit(1);
    }
    memset(cells, 0, (size_t)ncells * chunk);
    fflush(stdout);
    pid_t child = fork();
    int reader = child == 0;
    pin(reader);
    char *buf = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    memset(buf, 1, bytes);
    uint64_t step = 0, nsteps = (bytes + chunk - 1) / chunk;
    double total = 0, best = 1e30;
    for (int call = 1; call <= calls; call++) {
        if (!reader)
            for (size_t i = 0; i + 8 <= bytes; i += 8)
                *(uint64_t *)(buf + i) = (uint64_t)call * 0x9E3779B97F4A7C15ull + i;
        atomic_store_explicit(reader ? &c->reader_ready.v : &c->root_ready.v, (uint64_t)call, memory_order_release);
        wait_at_least(reader ? &c->root_ready.v : &c->reader_ready.v, (uint64_t)call);
        double t0 = now_us();
        for (uint64_t k = 0; k < nsteps; k++) {
            uint64_t t = step + k + 1;
            char *cell = cells + (size_t)((t - 1) % (uint64_t)ncells) * chunk;
            size_t off = (size_t)k * chunk, len = bytes - off < chunk ? bytes - off : chunk;
            if (!reader) {
                if (t > (uint64_t)ncells)
                    wait_at_least(&c->freed.v, t - (uint64_t)ncells);
                copy(cell, buf + off, len);
                atomic_store_explicit(&c->in.v, t, memory_order_release);
            } else {
                wait_at_least(&c->in.v, t);
                memcpy(buf + off, cell, len);
                atomic_store_explicit(&c->freed.v, t, memory_order_release);
            }
        }
        step += nsteps;
        double dt = now_us() - t0;
        total += dt;
        best = dt < best ? dt : best;
        if (!reader)
            wait_at_least(&c->freed.v, step);
    }
    if (reader) {
        printf("%-9s %9zu B  chunk %7zu  cells %2d  mean %9.2f us  best %9.2f us\n", name, bytes,
               chunk, ncells, total / calls, best);
        exit(0);
    }
    waitpid(child, NULL, 0);
    free(buf);
    munmap(cells, (size_t)ncells * chunk);
    munmap(c, sizeof *c);
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : 2u << 20;
    size_t chunk = argc > 2 ? strtoull(argv[2], NULL, 0) : 64u << 10;
    int ncells = argc > 3 ? atoi(argv[3]) : 4, calls = argc > 4 ? atoi(argv[4]) : 300;
    if (bytes == 0 || chunk < 64 || chunk % 64 || ncells < 2 || calls < 1 || sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "usage: cells_floor [BYTES [CHUNK (a multiple of 64) [CELLS >= 2 [CALLS]]]] "
                        "(needs 2 cores)\n");
        return 2;
    }
    run("plain", copy_plain, bytes, chunk, ncells, calls);
    run("nt", copy_nt, bytes, chunk, ncells, calls);
    run("cldemote", copy_demote, bytes, chunk, ncells, calls);
    return 0;
}
