/*
 * test_stream_copy.c — collie_stream_copy (base/stream_copy.c), the copy into the copy
 * cells that bypasses the cache: for every alignment of destination and source within 64
 * bytes and lengths around its thresholds and chunk boundaries, the destination holds the
 * source's bytes and nothing around it changed (checked against the source itself, byte by
 * byte, not against memcpy).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "check.h"
#include "copy_check.h"

int main(void) {
    static const size_t lengths[] = { 0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 271, 319,
                                      320, 1000, 4096, 4097, 65536 + 13, 262144 };
    size_t most = 262144;
    unsigned char *src_area = aligned_alloc(64, most + 128);
    unsigned char *area = aligned_alloc(64, 2 * COPY_GUARD + 64 + most + 64);
    if (!src_area || !area) {
        fprintf(stderr, "test_stream_copy: out of memory\n");
        return 1;
    }
    uint64_t x = 12345;
    for (size_t i = 0; i < most + 128; i++)
        src_area[i] = (unsigned char)collie_splitmix64(&x);
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
        for (size_t da = 0; da < 64; da++)
            for (size_t sa = 0; sa < 64; sa += lengths[li] > 4096 ? 13 : 1)
                copy_check("stream copy", collie_stream_copy, src_area + sa, area, da, lengths[li]);
    free(src_area);
    free(area);
    printf("test_stream_copy: %s (streaming stores %s)\n", failures ? "FAILED" : "passed",
           collie_stream_copy_native() ? "native" : "not available: memcpy");
    return failures != 0;
}
