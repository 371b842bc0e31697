/*
 * arena.c — the simulator's large memory on transparent huge pages.  At P = 65536 the
 * engine touches a different rank's schedule for nearly every message; with 4 KiB pages
 * nearly every such access also misses the TLB (measured: bruck at P = 65536 took 48 s,
 * 33 s with huge pages).  Where the kernel gives huge pages only on request (THP
 * "madvise" mode, Debian's default) these helpers request them; elsewhere they are plain
 * allocations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "sim/sim_impl.h"

#define HUGE_PAGE (2u << 20)
#define FIRST_CHUNK HUGE_PAGE
#define LAST_CHUNK (64u << 20)

typedef struct sim_arena_chunk {
    struct sim_arena_chunk *prev;
    size_t size;
} sim_arena_chunk;

void sim_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
    uintptr_t lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)(HUGE_PAGE - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);  /* a hint: failure is harmless */
#else
    (void)p;
    (void)bytes;
#endif
}

static bool new_chunk(sim_arena *a, size_t need) {
    size_t size = a->next_size ? a->next_size : FIRST_CHUNK;
    need += sizeof(sim_arena_chunk) + 16;
    while (size < need)
        size *= 2;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    sim_advise_huge(p, size);
    sim_arena_chunk *c = p;
    c->prev = a->chunks;
    c->size = size;
    a->chunks = c;
    a->at = (char *)p + ((sizeof *c + 15) & ~(size_t)15);
    a->end = (char *)p + size;
    a->next_size = size < LAST_CHUNK ? 2 * size : size;
    return true;
}

void *sim_arena_alloc(sim_arena *a, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    if ((size_t)(a->end - a->at) < bytes && !new_chunk(a, bytes))
        return NULL;
    void *p = a->at;
    a->at += bytes;
    return p;
}

void sim_arena_free(sim_arena *a) {
    while (a->chunks) {
        sim_arena_chunk *c = a->chunks;
        a->chunks = c->prev;
        munmap(c, c->size);
    }
    a->at = a->end = NULL;
    a->next_size = 0;
}
