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
 */
#include <string.h>

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
