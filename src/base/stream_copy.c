/*
 * stream_copy.c — a copy whose stores bypass the cache (non-temporal stores), for data a
 * process writes into shared memory for another core to read (the copy cells).
 *
 * Why: where moving a line that one core just wrote into another core's cache costs more
 * than a trip through memory (measured on a 2-core AMD EPYC VM: a 2 MiB bcast through
 * 64 KiB cells took 247 µs with memcpy into the cells, 108 µs with streaming stores;
 * bench/cells_floor), the producer should write around its cache.  Where it does not (an
 * Intel Xeon VM: the same or slower), plain memcpy.  Which one a job uses is measured, not
 * assumed (transport/shm_cells.c).
 *
 * The streaming stores are weakly ordered: collie_stream_copy ends with a store fence, so
 * a release store of a flag after it publishes the data.  x86-64 only (SSE2, part of the
 * base instruction set); elsewhere it is memcpy.
 *
 * A reader's copy out of the cells into its own buffer bypasses the cache too when the
 * call is at least 3/4 of the last-level cache (collie_transport.stream_out_min): its
 * destination would evict itself and everything else before the program reads it, and one
 * memcpy of that size would stream by itself (glibc's non-temporal threshold is 3/4 of
 * the shared cache), but the cells cut it into copies far below that.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#include <stdint.h>

void collie_stream_copy(void *dst, const void *src, size_t n) {
    char *d = dst;
    const char *s = src;
    size_t head = (size_t)(-(uintptr_t)d & 15);
    if (n < 256) {
        memcpy(d, s, n);
        return;
    }
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    memcpy(d + i, s + i, n - i);
    _mm_sfence();
}

bool collie_stream_copy_native(void) { return true; }
#else
void collie_stream_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }

bool collie_stream_copy_native(void) { return false; }
#endif

/* A sysfs number ("3", "32768K", "8M"): 0 if unreadable. */
static uint64_t read_sysfs_number(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long n = 0;
    char unit = 0;
    int got = fscanf(f, "%llu%c", &n, &unit);
    fclose(f);
    if (got < 1)
        return 0;
    return unit == 'K' ? n << 10 : unit == 'M' ? n << 20 : unit == 'G' ? n << 30 : n;
}

/* sysfs first: in a VM the C library's CPUID-based figure can be the host's (seen here:
 * 384 MiB from sysconf against the guest's 32 MiB). */
static uint64_t read_last_level_cache_bytes(void) {
    uint64_t best_level = 0, bytes = 0;
    for (int i = 0; i < 16; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        uint64_t level = read_sysfs_number(path);
        if (level <= best_level)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        uint64_t size = read_sysfs_number(path);
        if (size) {
            best_level = level;
            bytes = size;
        }
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (!bytes) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        bytes = l3 > 0 ? (uint64_t)l3 : 0;
    }
#endif
    return bytes;
}

/* Read once per process: every team's transport asks, and the 16–32 sysfs files took 40 %
 * of an MPI communicator's team set-up (libcollie_mpi, MPI_Comm_dup then a collective). */
uint64_t collie_last_level_cache_bytes(void) {
    static _Atomic uint64_t known = UINT64_MAX;
    uint64_t bytes = atomic_load_explicit(&known, memory_order_relaxed);
    if (bytes == UINT64_MAX) {
        bytes = read_last_level_cache_bytes();
        atomic_store_explicit(&known, bytes, memory_order_relaxed);
    }
    return bytes;
}
