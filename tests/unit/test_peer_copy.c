/*
 * test_peer_copy.c — two pieces of the copy cells' data path:
 *   collie_peer_copy (base/peer_copy.c), the copy that reads up to 8 pages at once: for
 *     lengths around its thresholds (8 KiB), its page blocks (4 KiB multiples, 8 pages)
 *     and its tail, and every source and destination alignment within a line (sampled),
 *     the destination holds the source's bytes and nothing around it changed (checked
 *     against the source byte by byte).
 *   collie_cell_index (transport/transport.h), where a rank's data of a step lie in the
 *     cells: for team sizes 1 … 64, ring lengths 1 … 9 and the first 6 laps, every step's
 *     writers take distinct cells (a permutation of the rings) at the step's cell index;
 *     without rotation rank r always writes ring r; with it, the ring rank r fills in a
 *     lap is the one it read rank r + 1's data from in the lap before.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "check.h"
#include "copy_check.h"
#include "transport/transport.h"

static void copies(void) {
    static const size_t lengths[] = { 0, 1, 63, 4096, 8191, 8192, 8193, 12288 + 5, 32767,
                                      32768, 32769, 36864 + 7, 65536, 65536 + 13,
                                      9 * 4096 + 4095, 262144, 262144 + 4095 };
    size_t most = 262144 + 4095;
    size_t src_bytes = (most + 128 + 63) / 64 * 64;   /* aligned_alloc: a multiple of 64 */
    size_t area_bytes = (2 * COPY_GUARD + 64 + most + 64 + 63) / 64 * 64;
    unsigned char *src_area = aligned_alloc(64, src_bytes);
    unsigned char *area = aligned_alloc(64, area_bytes);
    if (!src_area || !area) {
        check(false, "out of memory");
        return;
    }
    uint64_t x = 777;
    for (size_t i = 0; i < most + 128; i++)
        src_area[i] = (unsigned char)collie_splitmix64(&x);
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++)
        for (size_t da = 0; da < 64; da += 7)
            for (size_t sa = 0; sa < 64; sa += 9)
                copy_check("peer copy", collie_peer_copy, src_area + sa, area, da, lengths[li]);
    free(src_area);
    free(area);
}

static void cell_indices(void) {
    for (uint32_t size = 1; size <= 64; size++)
        for (uint32_t ncells = 1; ncells <= 9; ncells++) {
            collie_cells c = { .ncells = ncells, .rings = size };
            char *taken = calloc((size_t)size * ncells, 1);
            if (!taken) {
                check(false, "out of memory");
                return;
            }
            for (uint64_t t = 1; t <= 6ull * ncells; t++) {
                memset(taken, 0, (size_t)size * ncells);
                for (uint32_t r = 0; r < size; r++) {
                    uint64_t rot = collie_cell_index(&c, (int)r, t, true);
                    uint64_t own = collie_cell_index(&c, (int)r, t, false);
                    check(own == (uint64_t)r * ncells + (t - 1) % ncells,
                          "P=%u cells=%u step %llu: rank %u without rotation at %llu", size,
                          ncells, (unsigned long long)t, r, (unsigned long long)own);
                    check(rot % ncells == (t - 1) % ncells && rot < (uint64_t)size * ncells,
                          "P=%u cells=%u step %llu: rank %u's cell index %llu", size, ncells,
                          (unsigned long long)t, r, (unsigned long long)rot);
                    check(!taken[rot], "P=%u cells=%u step %llu: two ranks write cell %llu",
                          size, ncells, (unsigned long long)t, (unsigned long long)rot);
                    taken[rot] = 1;
                    if (t > ncells && size > 1) {
                        uint64_t read_before = collie_cell_index(&c, (int)((r + 1) % size), t - ncells, true);
                        check(rot == read_before, "P=%u cells=%u step %llu: rank %u writes %llu, "
                              "not the cell it read rank %u's data from a lap before (%llu)",
                              size, ncells, (unsigned long long)t, r, (unsigned long long)rot,
                              (r + 1) % size, (unsigned long long)read_before);
                    }
                }
            }
            free(taken);
        }
}

int main(void) {
    copies();
    cell_indices();
    printf("test_peer_copy: %s\n", failures ? "FAILED" : "passed");
    return failures != 0;
}
