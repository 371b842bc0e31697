/* arena.h — the page allocator of libcollie_heap (arena.c) over one shared-memory file. */
#ifndef COLLIE_HEAP_ARENA_H
#define COLLIE_HEAP_ARENA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_PAGE 4096u

/* Maps a memfd of `bytes` (rounded down to pages) shared, plus the private bookkeeping.
 * Returns false (nothing kept) when any step fails; *why then names it. */
bool arena_init(size_t bytes, const char **why);

/* `bytes` aligned to `align` (a power of two, at least a page), or NULL when the arena has
 * no run that fits or this is a forked child.  *dirty: how many bytes from the start may
 * hold old data (the rest was never touched: zero). */
void *arena_alloc(size_t bytes, size_t align, size_t *dirty);
/* Frees the block starting at p (in the arena); false if no block starts there. */
bool arena_free(void *p);
/* Bytes usable at p (a pointer arena_alloc returned), 0 if p is not a block's start. */
size_t arena_usable(const void *p);

/* Whether p lies in the arena's address range (owned by it, shared or not). */
bool arena_contains(const void *p);
/* Whether [p, p+len) lies in the shared file: then *fd and *offset name it. */
bool arena_shared_range(const void *p, size_t len, int *fd, uint64_t *offset);

/* fork: prepare locks the arena; parent unlocks after the child made its copy; child
 * replaces the shared pages in use by a private copy and stops allocating. */
void arena_fork_prepare(void);
void arena_fork_parent(void);
void arena_fork_child(void);

/* Counters for the debug line: allocations served, and failures that fell back. */
void arena_counts(uint64_t *served, uint64_t *fallbacks, uint64_t *high_bytes);
void arena_count_fallback(void);
#endif
