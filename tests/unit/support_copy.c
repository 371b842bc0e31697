/* support_copy.c — copy_check (copy_check.h). */
#include <string.h>

#include "check.h"
#include "copy_check.h"

#define FILL 0xA5

void copy_check(const char *name, copy_fn copy, const unsigned char *src, unsigned char *area,
                size_t dalign, size_t n) {
    memset(area, FILL, COPY_GUARD + dalign + n + COPY_GUARD);
    unsigned char *dst = area + COPY_GUARD + dalign;
    copy(dst, src, n);
    for (size_t i = 0; i < n; i++)
        if (dst[i] != src[i]) {
            check(false, "%s of %zu bytes, destination offset %zu: byte %zu is 0x%02x, not 0x%02x",
                  name, n, dalign, i, dst[i], src[i]);
            return;
        }
    for (size_t i = 0; i < COPY_GUARD + dalign; i++)
        if (area[i] != FILL) {
            check(false, "%s of %zu bytes, destination offset %zu: wrote %zu bytes before the "
                  "destination", name, n, dalign, COPY_GUARD + dalign - i);
            return;
        }
    for (size_t i = 0; i < COPY_GUARD; i++)
        if (dst[n + i] != FILL) {
            check(false, "%s of %zu bytes, destination offset %zu: wrote byte %zu after the "
                  "destination", name, n, dalign, i);
            return;
        }
}
