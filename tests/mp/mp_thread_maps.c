/*
 * mp_thread_maps.c — a thread that read a peer's collie_alloc memory leaves no mapping of
 * it behind when it ends (shm_mem.c unmaps a thread's peer mappings at its end).  Two
 * ranks; rank 0 runs 16 threads one after the other, each of which takes part in a 1 MiB
 * bcast from rank 1 with both buffers in collie_alloc memory (the reader maps the root's
 * block), checks the data, and ends; after each, rank 0 counts the mappings of other
 * processes' collie_alloc blocks in /proc/self/maps: none may stay.
 *
 * Usage: collie-run -n 2 mp_thread_maps   (prints "mp_thread_maps: passed" on rank 0)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collie.h"

#define N (1u << 17)   /* int64s: 1 MiB */
#define THREADS 16

static int64_t *buf;
static int rank, bad;

/* Mappings of memfds named collie-alloc that are not this process's own blocks. */
static int peer_mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    uintptr_t own = (uintptr_t)buf;
    while (f && fgets(line, sizeof line, f)) {
        uintptr_t lo = 0, hi = 0;
        if (strstr(line, "collie-alloc") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
            !(own >= lo && own < hi))
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

static void *one_bcast(void *round) {
    int r = (int)(intptr_t)round;
    if (rank == 1)
        for (size_t i = 0; i < N; i++)
            buf[i] = (int64_t)(i * 3 + (size_t)r);
    int st = collie_bcast(collie_world(), buf, N, COLLIE_INT64, 1);
    for (size_t i = 0; st == COLLIE_OK && i < N; i++)
        if (buf[i] != (int64_t)(i * 3 + (size_t)r)) {
            fprintf(stderr, "mp_thread_maps: rank %d, round %d: element %zu wrong\n", rank, r, i);
            bad++;
            break;
        }
    if (st != COLLIE_OK) {
        fprintf(stderr, "mp_thread_maps: rank %d: bcast: %s\n", rank, collie_last_error());
        bad++;
    }
    return NULL;
}

int main(void) {
    int provided;
    if (collie_init_thread(COLLIE_THREAD_MULTIPLE, &provided) != COLLIE_OK)
        return 1;
    rank = collie_rank(collie_world());
    buf = collie_alloc(collie_world(), N * sizeof *buf);
    if (!buf || collie_size(collie_world()) != 2) {
        fprintf(stderr, "mp_thread_maps: needs 2 ranks and collie_alloc memory\n");
        return 1;
    }
    for (int r = 0; r < THREADS; r++) {
        pthread_t t;   /* rank 0 reads in a new thread each round; rank 1 in its main one */
        if (rank == 0 && pthread_create(&t, NULL, one_bcast, (void *)(intptr_t)r) == 0)
            pthread_join(t, NULL);
        else
            one_bcast((void *)(intptr_t)r);
        int left = rank == 0 ? peer_mappings() : 0;
        if (left) {
            fprintf(stderr, "mp_thread_maps: after thread %d ended, %d mapping(s) of rank 1's "
                    "memory remain\n", r, left);
            bad++;
        }
    }
    int64_t mine = bad, all = 0;
    collie_allreduce(collie_world(), &mine, &all, 1, COLLIE_INT64, COLLIE_SUM);
    if (rank == 0)
        printf("mp_thread_maps: %s\n", all ? "FAILED" : "passed");
    collie_free(collie_world(), buf);
    collie_finalize();
    return all ? 1 : 0;
}
