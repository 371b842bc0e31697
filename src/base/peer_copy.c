/*
 * peer_copy.c — a copy of data that another core has just written (a peer's copy cell, a
 * peer's mapped buffer), reading several 4 KiB pages at once.
 *
 * Why: every line of such data sits modified in the other core's cache, and each one is a
 * snoop across the chip (~120–190 ns here).  A plain memcpy walks the source page by page;
 * the hardware prefetchers stop at every 4 KiB page boundary and keep only a few of these
 * misses in flight.  Reading one line from each of up to 8 pages per step keeps 8 misses in
 * flight from independent pages.  Measured on a 2-vCPU Intel Xeon VM (2026-12-04,
 * bench/allgather_floor, P = 2, 128 KiB blocks, fresh data): copying the peer's mapped
 * block 9.6–10.3 µs by memcpy, 7.9–8.4 by this copy; through 32 KiB cells 16.1–16.9 ->
 * 14.1–15.4.  Intel MPI's own copy for this (I_MPI_memcpy_multipage_avx2, seen in a
 * profile of its allgather) reads 8 pages at once the same way; 16 or 32 pages were slower
 * (8.6–9.9 µs), 2–4 pages nearly as good as 8.
 *
 * x86-64 with AVX2 only (chosen at run time); elsewhere, below COLLIE_PEER_COPY_MIN bytes, or with
 * COLLIE_PEER_COPY=0, plain memcpy.  Stores are ordinary (cached) stores: the reader uses
 * what it copied.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

#define PAGE 4096u
#define MAX_STREAMS 8u

#if defined(__x86_64__)
#include <immintrin.h>

/* One block of `streams` pages: each step copies line `o` of every page. */
__attribute__((target("avx2"))) static void copy_pages(char *d, const char *s, unsigned streams) {
    for (size_t o = 0; o < PAGE; o += 64) {
        __m256i lo[MAX_STREAMS], hi[MAX_STREAMS];
        for (unsigned p = 0; p < streams; p++) {
            lo[p] = _mm256_loadu_si256((const __m256i *)(s + p * PAGE + o));
            hi[p] = _mm256_loadu_si256((const __m256i *)(s + p * PAGE + o + 32));
        }
        for (unsigned p = 0; p < streams; p++) {
            _mm256_storeu_si256((__m256i *)(d + p * PAGE + o), lo[p]);
            _mm256_storeu_si256((__m256i *)(d + p * PAGE + o + 32), hi[p]);
        }
    }
}

static bool avx2_present(void) { return __builtin_cpu_supports("avx2"); }
#else
static void copy_pages(char *d, const char *s, unsigned streams) {
    memcpy(d, s, (size_t)streams * PAGE);
}

static bool avx2_present(void) { return false; }
#endif

/* 1: the page-parallel copy, 0: memcpy, -1: not yet decided (COLLIE_PEER_COPY, AVX2). */
static _Atomic int use_pages = -1;

static bool pages_on(void) {
    int on = atomic_load_explicit(&use_pages, memory_order_relaxed);
    if (on < 0) {
        on = avx2_present() && collie_env_int("COLLIE_PEER_COPY", 1) != 0;
        atomic_store_explicit(&use_pages, on, memory_order_relaxed);
    }
    return on;
}

void collie_peer_copy(void *dst, const void *src, size_t n) {
    char *d = dst;
    const char *s = src;
    if (n < COLLIE_PEER_COPY_MIN || !pages_on()) {
        memcpy(d, s, n);
        return;
    }
    while (n >= 2 * PAGE) {
        unsigned streams = n / PAGE < MAX_STREAMS ? (unsigned)(n / PAGE) : MAX_STREAMS;
        copy_pages(d, s, streams);
        d += (size_t)streams * PAGE, s += (size_t)streams * PAGE, n -= (size_t)streams * PAGE;
    }
    memcpy(d, s, n);
}
