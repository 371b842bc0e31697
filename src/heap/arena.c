/*
 * arena.c — the page allocator of libcollie_heap: large blocks carved out of one memfd.
 *
 * The arena is one memfd of COLLIE_HEAP_BYTES, sized once with ftruncate (sparse: a page
 * costs memory only once touched) and mapped MAP_SHARED, so a peer rank maps the whole
 * file once (collie's shm_mem.c, /proc/<pid>/fd/<fd>) and sees every block of it, present
 * and future.  The file is never shrunk, replaced or closed while the process lives, so a
 * peer's mapping can never be stale: a block freed and reused is the same pages of the same
 * file, and the peer reads whatever the owner wrote last.
 *
 * Blocks are whole pages, page-aligned (the interposer sends only allocations of
 * COLLIE_HEAP_MIN bytes and more here).  Bookkeeping lives in private memory, never in the
 * shared pages: per page, hdr[] holds a block's length with ALLOC at its first page, and
 * length with FREE at the first and last page of a free block (boundary tags, so a freed
 * block merges with both neighbours in O(1)); every other entry is 0.  Free blocks are in
 * doubly linked lists by floor(log2(pages)) (nxt[]/prv[]), a bitmap marks the non-empty
 * lists; allocation takes the first fit of its own class, else the head of a larger class,
 * else pages from the top.  A free that reaches the top lowers it; once the pages above the
 * top that were ever touched reach TRIM_PAGES they are returned to the system with
 * fallocate(PUNCH_HOLE) (peers' mappings then read zeros there, which nobody owns).
 * One mutex guards it all; nothing in here allocates.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap/arena.h"

#define FREE 0x80000000u
#define ALLOC 0x40000000u
#define LEN 0x3fffffffu
#define NIL 0xffffffffu
#define NCLASS 30
#define TRIM_PAGES 4096u   /* 16 MiB */

static char *base;
static uint32_t npages, top, touched;   /* pages in use below top; pages >= touched are zero */
static int arena_fd = -1;
static uint32_t *hdr, *nxt, *prv;
static uint32_t heads[NCLASS], nonempty;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool shared;              /* false after fork, in the child */
static int fork_pipe[2] = { -1, -1 };
static uint64_t served, fallbacks, high_pages;

static void *map_private(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

bool arena_init(size_t bytes, const char **why) {
    size_t pages = bytes / ARENA_PAGE;
    if (pages == 0 || pages > LEN) {
        *why = "COLLIE_HEAP_BYTES must be at least one page and below 4 TiB";
        return false;
    }
    int fd = memfd_create("collie-heap", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)(pages * ARENA_PAGE)) != 0) {
        *why = fd < 0 ? "memfd_create failed" : "ftruncate of the heap's memfd failed";
        if (fd >= 0)
            close(fd);
        return false;
    }
    void *p = mmap(NULL, pages * ARENA_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    uint32_t *meta = map_private(3 * pages * sizeof(uint32_t));
    if (p == MAP_FAILED || !meta) {
        *why = "mmap of the heap failed";
        if (p != MAP_FAILED)
            munmap(p, pages * ARENA_PAGE);
        if (meta)
            munmap(meta, 3 * pages * sizeof(uint32_t));
        close(fd);
        return false;
    }
    hdr = meta;
    nxt = meta + pages;
    prv = meta + 2 * pages;
    for (int c = 0; c < NCLASS; c++)
        heads[c] = NIL;
    base = p;
    npages = (uint32_t)pages;
    arena_fd = fd;
    atomic_store(&shared, true);
    return true;
}

static int class_of(uint32_t len) {
    return 31 - __builtin_clz(len);
}

static void push(uint32_t i, uint32_t len) {
    int c = class_of(len);
    hdr[i] = len | FREE;
    hdr[i + len - 1] = len | FREE;
    prv[i] = NIL;
    nxt[i] = heads[c];
    if (heads[c] != NIL)
        prv[heads[c]] = i;
    heads[c] = i;
    nonempty |= 1u << c;
}

/* Takes free block i off its list and clears its tags. */
static void unlink_block(uint32_t i) {
    uint32_t len = hdr[i] & LEN;
    int c = class_of(len);
    if (prv[i] != NIL)
        nxt[prv[i]] = nxt[i];
    else
        heads[c] = nxt[i];
    if (nxt[i] != NIL)
        prv[nxt[i]] = prv[i];
    if (heads[c] == NIL)
        nonempty &= ~(1u << c);
    hdr[i] = 0;
    hdr[i + len - 1] = 0;
}

/* The first page at or after i whose address is a multiple of align. */
static uint32_t aligned_page(uint32_t i, size_t align) {
    uintptr_t a = (uintptr_t)(base + (size_t)i * ARENA_PAGE);
    uintptr_t up = (a + align - 1) & ~(uintptr_t)(align - 1);
    return i + (uint32_t)((up - a) / ARENA_PAGE);
}

/* A free block of at least `need` pages (unlinked, tags cleared), or NIL. */
static uint32_t take_free(uint32_t need, uint32_t *len) {
    int c = class_of(need);
    for (uint32_t i = heads[c]; i != NIL; i = nxt[i])
        if ((hdr[i] & LEN) >= need) {
            *len = hdr[i] & LEN;
            unlink_block(i);
            return i;
        }
    uint32_t larger = c + 1 < NCLASS ? nonempty & ~((2u << c) - 1) : 0;
    if (!larger)
        return NIL;
    uint32_t i = heads[__builtin_ctz(larger)];
    *len = hdr[i] & LEN;
    unlink_block(i);
    return i;
}

/* Pages [s, s+pages) become the block; what is left of [i, i+len) goes back as free. */
static void carve(uint32_t i, uint32_t len, uint32_t s, uint32_t pages) {
    if (s > i)
        push(i, s - i);
    if (s + pages < i + len)
        push(s + pages, i + len - s - pages);
    hdr[s] = pages | ALLOC;
}

void *arena_alloc(size_t bytes, size_t align, size_t *dirty) {
    if (!atomic_load_explicit(&shared, memory_order_relaxed) || bytes == 0)
        return NULL;
    size_t want = (bytes + ARENA_PAGE - 1) / ARENA_PAGE;
    size_t slack = align > ARENA_PAGE ? align / ARENA_PAGE - 1 : 0;
    if (want + slack > npages) {
        arena_count_fallback();
        return NULL;
    }
    uint32_t pages = (uint32_t)want, len = 0, s;
    pthread_mutex_lock(&lock);
    uint32_t i = take_free(pages + (uint32_t)slack, &len);
    if (i != NIL) {
        s = aligned_page(i, align);
        carve(i, len, s, pages);
    } else {
        s = aligned_page(top, align);
        if (s < top || (uint64_t)s + pages > npages) {
            fallbacks++;
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        if (s > top)
            push(top, s - top);
        hdr[s] = pages | ALLOC;
        top = s + pages;
    }
    *dirty = s >= touched ? 0 : (size_t)(touched - s) * ARENA_PAGE;
    if (s + pages > touched)
        touched = s + pages;
    served++;
    if (top > high_pages)
        high_pages = top;
    pthread_mutex_unlock(&lock);
    return base + (size_t)s * ARENA_PAGE;
}

bool arena_contains(const void *p) {
    const char *c = p;
    return base && c >= base && c < base + (size_t)npages * ARENA_PAGE;
}

static uint32_t page_of(const void *p) {
    return (uint32_t)(((const char *)p - base) / ARENA_PAGE);
}

size_t arena_usable(const void *p) {
    if (!arena_contains(p) || ((uintptr_t)p & (ARENA_PAGE - 1)))
        return 0;
    pthread_mutex_lock(&lock);
    uint32_t h = hdr[page_of(p)];
    pthread_mutex_unlock(&lock);
    return (h & ALLOC) ? (size_t)(h & LEN) * ARENA_PAGE : 0;
}

/* Returns the touched pages above the top to the system once they are many. */
static void trim(void) {
    if (touched - top < TRIM_PAGES || !atomic_load_explicit(&shared, memory_order_relaxed))
        return;
    if (fallocate(arena_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)top * ARENA_PAGE,
                  (off_t)(touched - top) * ARENA_PAGE) == 0)
        touched = top;
}

bool arena_free(void *p) {
    if ((uintptr_t)p & (ARENA_PAGE - 1))
        return false;
    uint32_t i = page_of(p);
    pthread_mutex_lock(&lock);
    if (!(hdr[i] & ALLOC)) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    uint32_t start = i, len = hdr[i] & LEN;
    hdr[i] = 0;
    if (i > 0 && (hdr[i - 1] & FREE)) {
        uint32_t pl = hdr[i - 1] & LEN;
        start = i - pl;
        unlink_block(start);
        len += pl;
    }
    uint32_t j = start + len;
    if (j < top && (hdr[j] & FREE)) {
        uint32_t nl = hdr[j] & LEN;
        unlink_block(j);
        len += nl;
    }
    if (start + len == top) {
        top = start;
        trim();
    } else {
        push(start, len);
    }
    pthread_mutex_unlock(&lock);
    return true;
}

bool arena_shared_range(const void *p, size_t len, int *fd, uint64_t *offset) {
    const char *c = p;
    if (!atomic_load_explicit(&shared, memory_order_relaxed) || !arena_contains(p) ||
        len > (size_t)(base + (size_t)npages * ARENA_PAGE - c))
        return false;
    *fd = arena_fd;
    *offset = (uint64_t)(c - base);
    return true;
}

void arena_fork_prepare(void) {
    pthread_mutex_lock(&lock);
    if (!atomic_load(&shared) || pipe2(fork_pipe, O_CLOEXEC) != 0)
        fork_pipe[0] = fork_pipe[1] = -1;
}

/* Waits until the child has its private copy (or died: end of file). */
void arena_fork_parent(void) {
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[1]);
        char c;
        while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
            ;
        close(fork_pipe[0]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_unlock(&lock);
}

/* The pages below the top become a private copy at the same address; the rest of the
 * shared mapping goes; the child never allocates from the arena again.  Returns false
 * when memory for the copy cannot be had. */
static bool privatize(void) {
    size_t used = (size_t)top * ARENA_PAGE, all = (size_t)npages * ARENA_PAGE;
    if (used) {
        void *copy = map_private(used);
        if (!copy)
            return false;
        memcpy(copy, base, used);
        if (mremap(copy, used, used, MREMAP_MAYMOVE | MREMAP_FIXED, base) == MAP_FAILED)
            return false;
    }
    if (all > used)
        mmap(base + used, all - used, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    close(arena_fd);
    arena_fd = -1;
    return true;
}

void arena_fork_child(void) {
    bool ok = !atomic_load(&shared) || privatize();
    atomic_store(&shared, false);
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[0]);
        if (write(fork_pipe[1], "", 1) < 0) {
            /* the parent then reads end of file when this side closes: the same */
        }
        close(fork_pipe[1]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    pthread_mutex_init(&lock, NULL);
    if (!ok) {
        static const char msg[] = "collie-heap: fork: no memory for the child's private copy of "
                                  "the shared heap; the child stops (it would write into its "
                                  "parent's memory)\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            _exit(127);
        _exit(127);
    }
}

void arena_counts(uint64_t *s, uint64_t *f, uint64_t *high_bytes) {
    pthread_mutex_lock(&lock);
    *s = served;
    *f = fallbacks;
    *high_bytes = high_pages * ARENA_PAGE;
    pthread_mutex_unlock(&lock);
}

void arena_count_fallback(void) {
    pthread_mutex_lock(&lock);
    fallbacks++;
    pthread_mutex_unlock(&lock);
}
