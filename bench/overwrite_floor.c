/*
 * overwrite_floor.c — what it costs one core to overwrite shared memory that the other
 * core has just read, and the other to read it back: the hand-over at the heart of every
 * two-copy path (slots, copy cells, the peers' shared-memory cells).
 *
 * Two processes pinned to cores 0 and 1 take turns on a ring of RING buffers of BYTES in
 * shared memory: the writer copies BYTES from its private buffer into the next buffer of
 * the ring (timed), raises a flag; the reader copies that buffer into its private buffer
 * (timed), raises a flag; and so on.  The same buffer comes back every RING turns, so
 * RING 1 rewrites lines the reader read one turn before; a large RING lets them leave the
 * reader's private cache first.  The writer's copy is memcpy or non-temporal stores (SSE2
 * movntdq, then sfence: around the writer's cache, so the reader reads from memory).
 * Prints the mean time per copy of each side in µs.
 *
 *   usage: overwrite_floor [BYTES [RING [TURNS]]]     (default 64 KiB, 1, 2000)
 *
 * Measured (2026-11-29, AMD EPYC VM, 1 MiB of L2 per core, 64 KiB): RING 1 memcpy writer
 * 7.4-8.9 µs, reader 1.9; non-temporal writer 2.3, reader 4.1-5.6; RING 32 (2 MiB) memcpy
 * writer 2.2-2.3, reader 1.6-2.0 (an hour earlier, in another state of the VM, 5.6 for the
 * writer).  docs/measurements.md, "Overwriting what the other core has just read".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
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

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static void pin(int core) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(core, &s);
    if (sched_setaffinity(0, sizeof s, &s))
        perror("sched_setaffinity (left unpinned)");
}

/* The writer's copy: memcpy, or (nt) non-temporal 16-byte stores where the ISA has them. */
static void copy_in(char *dst, const char *src, size_t n, int nt) {
#if defined(__x86_64__)
    if (nt) {
        size_t i = 0;
        for (; i + 16 <= n; i += 16)
            _mm_stream_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
        memcpy(dst + i, src + i, n - i);
        _mm_sfence();
        return;
    }
#endif
    (void)nt;
    memcpy(dst, src, n);
}

/* One run; prints the writer's and the reader's mean per copy. */
static int run(size_t bytes, int ring, int turns, int nt) {
    size_t area = bytes * (size_t)ring;
    char *shared = mmap(NULL, area + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    if (shared == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    _Atomic long *turn = (_Atomic long *)(shared + area);
    double *writer_us = (double *)(shared + area + 64);
    memset(shared, 1, area);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 1;
    }
    int writer = child == 0;
    pin(writer ? 1 : 0);
    char *mine = aligned_alloc(64, (bytes + 63) / 64 * 64);
    memset(mine, writer ? 2 : 3, bytes);
    double total = 0;
    for (long t = 0; t < turns; t++) {
        char *buf = shared + (size_t)(t % ring) * bytes;
        long mine_turn = 2 * t + (writer ? 0 : 1);   /* the writer first, then the reader */
        while (atomic_load_explicit(turn, memory_order_acquire) != mine_turn)
            ;
        double a = now_us();
        if (writer)
            copy_in(buf, mine, bytes, nt);
        else
            memcpy(mine, buf, bytes);
        total += now_us() - a;
        atomic_store_explicit(turn, mine_turn + 1, memory_order_release);
    }
    if (writer) {
        *writer_us = total / turns;
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("%8zu B  ring %3d  %-8s  writer %8.2f us  reader %8.2f us\n", bytes, ring,
           nt ? "nt" : "memcpy", *writer_us, total / turns);
    free(mine);
    munmap(shared, area + 4096);
    return 0;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    int ring = argc > 2 ? atoi(argv[2]) : 1;
    int turns = argc > 3 ? atoi(argv[3]) : 2000;
    if (bytes < 64 || ring < 1 || turns < 1) {
        fprintf(stderr, "usage: overwrite_floor [BYTES >= 64 [RING >= 1 [TURNS >= 1]]]\n");
        return 2;
    }
    return run(bytes, ring, turns, 0) || run(bytes, ring, turns, 1);
}
