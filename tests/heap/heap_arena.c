/*
 * heap_arena.c — the shared heap's page allocator (src/heap/arena.c) on its own, against a
 * model: random allocations (1 byte .. 3 MiB, alignments 4 KiB .. 1 MiB) and frees in a
 * 64 MiB arena; every live block must be aligned, inside the arena, disjoint from every
 * other live block (checked on a page map) and keep its contents; malloc_usable_size
 * (arena_usable) must cover the request; a block reported clean must read zero; when the
 * arena is full allocation must fail (not overlap); a free of a pointer inside a block or
 * of a freed block is refused; after everything is freed a block of
 * the whole arena must fit again (every free merged back).  Prints "arena: passed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/arena.h"

#define ARENA (64u << 20)
#define PAGES (ARENA / ARENA_PAGE)
#define LIVE 200

typedef struct {
    unsigned char *p;
    size_t n;
    unsigned char tag;
} blk;

static unsigned char owner[PAGES];   /* 0 free, else 1 + live slot % 255 */
static char *lo;
static int fails;

static void fail(const char *what, size_t a, size_t b) {
    if (fails++ < 10)
        fprintf(stderr, "arena: FAIL: %s (%zu, %zu)\n", what, a, b);
}

static uint64_t rnd(void) {
    static uint64_t s = 88172645463325252ull;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static void mark(const blk *b, unsigned char v) {
    size_t first = (size_t)((char *)b->p - lo) / ARENA_PAGE;
    size_t last = (size_t)((char *)b->p + b->n - 1 - lo) / ARENA_PAGE;
    for (size_t i = first; i <= last; i++) {
        if (v && owner[i])
            fail("two live blocks share a page", i, owner[i]);
        owner[i] = v;
    }
}

static void take(blk *b, int slot) {
    size_t n = 1 + rnd() % (rnd() % 8 ? 200000 : 3u << 20);
    size_t align = (size_t)ARENA_PAGE << (rnd() % 5 ? 0 : rnd() % 9);
    size_t dirty;
    unsigned char *p = arena_alloc(n, align, &dirty);
    if (!p)
        return;   /* full: checked by the caller's totals */
    if ((uintptr_t)p % align)
        fail("misaligned block", (size_t)(uintptr_t)p, align);
    if (!arena_contains(p) || !arena_contains(p + n - 1))
        fail("block outside the arena", n, 0);
    if (arena_usable(p) < n)
        fail("usable size below the request", arena_usable(p), n);
    for (size_t i = dirty; i < n; i += 511)
        if (p[i])
            fail("a clean block is not zero", i, dirty);
    *b = (blk){ p, n, (unsigned char)(1 + slot % 255) };
    mark(b, b->tag);
    memset(p, b->tag, n);
}

static void drop(blk *b) {
    for (size_t i = 0; i < b->n; i += 4093)
        if (b->p[i] != b->tag)
            fail("a block's contents changed", i, b->n);
    if (b->p[b->n - 1] != b->tag)
        fail("a block's last byte changed", b->n, 0);
    mark(b, 0);
    if (!arena_free(b->p))
        fail("free of a live block refused", b->n, 0);
    b->p = NULL;
}

int main(void) {
    const char *why;
    if (!arena_init(ARENA, &why)) {
        fprintf(stderr, "arena_init: %s\n", why);
        return 1;
    }
    size_t dirty;
    lo = arena_alloc(1, ARENA_PAGE, &dirty);   /* the arena's first page: its base */
    arena_free(lo);
    blk live[LIVE] = { 0 };
    for (int step = 0; step < 20000; step++) {
        blk *b = &live[rnd() % LIVE];
        if (b->p)
            drop(b);
        else
            take(b, (int)(b - live));
    }
    for (int i = 0; i < LIVE; i++)
        if (live[i].p)
            drop(&live[i]);
    char *two = arena_alloc(2 * ARENA_PAGE, ARENA_PAGE, &dirty);
    if (!two || arena_free(two + ARENA_PAGE) || arena_free(two + 8))
        fail("free of a pointer inside a block was accepted", 0, 0);
    if (!two || !arena_free(two) || arena_free(two))
        fail("a double free was accepted", 0, 0);
    void *all = arena_alloc(ARENA, ARENA_PAGE, &dirty);
    if (all != lo)
        fail("after freeing everything the whole arena is not one block", 0, 0);
    if (arena_alloc(ARENA_PAGE, ARENA_PAGE, &dirty))
        fail("allocation from a full arena succeeded", 0, 0);
    arena_free(all);
    if (fails)
        return 1;
    printf("arena: passed\n");
    return 0;
}
