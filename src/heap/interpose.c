/*
 * interpose.c — libcollie_heap.so: malloc and friends, large blocks from a shared heap.
 *
 * LD_PRELOAD'ed into a rank (collie-run --shared-heap, or by hand for MPI programs with
 * libcollie_mpi), it serves allocations of COLLIE_HEAP_MIN bytes and more (default 64 KiB)
 * from arena.c, a memfd that peer ranks map; collie's shm transport asks
 * collie_heap_lookup() (found with dlsym) whether a buffer lies there and then treats it
 * exactly like collie_alloc memory (mapped by peers: the zero-copy paths).  Everything
 * else goes to the next allocator (glibc's, found with dlsym(RTLD_NEXT)): small blocks,
 * large ones once the arena (COLLIE_HEAP_BYTES, default 1 GiB) is full, every allocation
 * in a forked child (arena.c gives the child a private copy of its blocks), and all of
 * them in a process that is not a rank of a job (no COLLIE_JOB, OMPI_COMM_WORLD_SIZE,
 * PMI_SIZE or PMIX_RANK) or has COLLIE_SHARED_HEAP=0.
 *
 * Bootstrap: dlsym may itself call calloc/malloc before the real functions are known; those
 * calls (in the resolving thread only) get memory from a static buffer, never freed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/size_suffix.h"
#include "heap/arena.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    void *(*memalign)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable)(void *);
} real;

static _Atomic int resolved;   /* 0 no, 1 under way, 2 done */
static __thread bool resolving __attribute__((tls_model("initial-exec")));
static bool active;
static size_t heap_min = 65536;

/* ---- bootstrap memory ------------------------------------------------------------- */

static _Alignas(4096) char boot[65536];
static _Atomic size_t boot_used;

static bool is_boot(const void *p) {
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

/* Each boot block is preceded by its size (16 bytes before the returned pointer). */
static void *boot_alloc(size_t n, size_t align) {
    if (align < 16)
        align = 16;
    size_t at = atomic_load(&boot_used), start, end;
    do {
        start = (at + 16 + align - 1) & ~(align - 1);
        end = start + n;
        if (end > sizeof boot || end < start)
            return NULL;
    } while (!atomic_compare_exchange_weak(&boot_used, &at, end));
    memcpy(boot + start - 16, &n, sizeof n);
    return boot + start;
}

static size_t boot_size(const void *p) {
    size_t n;
    memcpy(&n, (const char *)p - 16, sizeof n);
    return n;
}

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        static const char msg[] = "collie-heap: dlsym(RTLD_NEXT) found no allocator after "
                                  "libcollie_heap.so\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            abort();
        abort();
    }
    return f;
}

/* Finds the next allocator; false while this thread is finding it (use boot memory). */
static bool ready(void) {
    if (atomic_load_explicit(&resolved, memory_order_acquire) == 2)
        return true;
    if (resolving)
        return false;
    int expect = 0;
    if (!atomic_compare_exchange_strong(&resolved, &expect, 1)) {
        while (atomic_load_explicit(&resolved, memory_order_acquire) != 2)
            sched_yield();
        return true;
    }
    resolving = true;
    *(void **)&real.malloc = next("malloc");
    *(void **)&real.calloc = next("calloc");
    *(void **)&real.realloc = next("realloc");
    *(void **)&real.free = next("free");
    *(void **)&real.memalign = next("memalign");
    *(void **)&real.posix_memalign = next("posix_memalign");
    *(void **)&real.aligned_alloc = next("aligned_alloc");
    *(void **)&real.valloc = next("valloc");
    *(void **)&real.pvalloc = next("pvalloc");
    *(void **)&real.usable = next("malloc_usable_size");
    resolving = false;
    atomic_store_explicit(&resolved, 2, memory_order_release);
    return true;
}

/* ---- the shared path -------------------------------------------------------------- */

static bool large(size_t n) {
    return active && n >= heap_min;
}

static void *heap_alloc(size_t n, size_t align, bool zero) {
    size_t dirty;
    void *p = arena_alloc(n, align < ARENA_PAGE ? ARENA_PAGE : align, &dirty);
    if (p && zero && dirty)
        memset(p, 0, dirty < n ? dirty : n);
    return p;
}

static bool power_of_two(size_t a) {
    return a && !(a & (a - 1));
}

static _Noreturn void bad_pointer(const char *fn, const void *p) {
    char msg[160];
    int len = snprintf(msg, sizeof msg, "collie-heap: %s(%p): not a block of the shared heap "
                       "(freed twice, or not returned by malloc)\n", fn, p);
    if (len > 0 && write(2, msg, (size_t)len) < 0)
        abort();
    abort();
}

/* ---- the interposed functions ----------------------------------------------------- */

EXPORT void *malloc(size_t n) {
    if (large(n)) {
        void *p = heap_alloc(n, 0, false);
        if (p)
            return p;
    }
    return ready() ? real.malloc(n) : boot_alloc(n, 16);
}

EXPORT void free(void *p) {
    if (!p || is_boot(p))
        return;
    if (arena_contains(p)) {
        if (!arena_free(p))
            bad_pointer("free", p);
        return;
    }
    if (ready())
        real.free(p);
}

EXPORT void *calloc(size_t a, size_t b) {
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    if (large(n)) {
        void *p = heap_alloc(n, 0, true);
        if (p)
            return p;
    }
    return ready() ? real.calloc(a, b) : boot_alloc(n, 16);   /* boot memory is zero */
}

/* realloc of a block of the shared heap: in place when it still fits, else moved. */
static void *realloc_heap(void *p, size_t n) {
    size_t old = arena_usable(p);
    if (!old)
        bad_pointer("realloc", p);
    if (n == 0) {
        arena_free(p);
        return NULL;
    }
    if (n <= old && n >= heap_min)
        return p;
    void *q = malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    arena_free(p);
    return q;
}

EXPORT void *realloc(void *p, size_t n) {
    if (!p)
        return malloc(n);
    if (is_boot(p)) {
        void *q = malloc(n);
        if (q)
            memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
        return q;
    }
    if (arena_contains(p))
        return realloc_heap(p, n);
    if (!ready())
        return NULL;
    if (large(n)) {
        size_t old = real.usable(p);
        void *q = n > old ? heap_alloc(n, 0, false) : NULL;
        if (q) {
            memcpy(q, p, old);
            real.free(p);
            return q;
        }
    }
    return real.realloc(p, n);
}

EXPORT void *reallocarray(void *p, size_t a, size_t b) {
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

EXPORT void *memalign(size_t align, size_t n) {
    if (large(n) && power_of_two(align)) {
        void *p = heap_alloc(n, align, false);
        if (p)
            return p;
    }
    return ready() ? real.memalign(align, n) : boot_alloc(n, align);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    if (large(n) && power_of_two(align) && align % sizeof(void *) == 0) {
        void *p = heap_alloc(n, align, false);
        if (p) {
            *out = p;
            return 0;
        }
    }
    if (!ready()) {
        *out = boot_alloc(n, align);
        return *out ? 0 : ENOMEM;
    }
    return real.posix_memalign(out, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n) {
    if (large(n) && power_of_two(align)) {
        void *p = heap_alloc(n, align, false);
        if (p)
            return p;
    }
    return ready() ? real.aligned_alloc(align, n) : boot_alloc(n, align);
}

EXPORT void *valloc(size_t n) {
    if (large(n)) {
        void *p = heap_alloc(n, ARENA_PAGE, false);
        if (p)
            return p;
    }
    return ready() ? real.valloc(n) : boot_alloc(n, ARENA_PAGE);
}

EXPORT void *pvalloc(size_t n) {
    size_t page = ARENA_PAGE, rounded = (n + page - 1) & ~(page - 1);
    if (rounded >= n && large(rounded)) {
        void *p = heap_alloc(rounded, page, false);
        if (p)
            return p;
    }
    return ready() ? real.pvalloc(n) : boot_alloc(rounded, page);
}

EXPORT size_t malloc_usable_size(void *p) {
    if (!p)
        return 0;
    if (is_boot(p))
        return boot_size(p);
    if (arena_contains(p))
        return arena_usable(p);
    return ready() ? real.usable(p) : 0;
}

/* collie's shm transport (shm_mem.c): is [p, p+len) in the shared heap?  Then *fd (this
 * process's descriptor of the heap's memfd) and *offset name it. */
EXPORT int collie_heap_lookup(const void *p, size_t len, int *fd, uint64_t *offset) {
    return arena_shared_range(p, len, fd, offset);
}

/* ---- set-up ----------------------------------------------------------------------- */

static bool debug_log(void) {
    const char *v = getenv("COLLIE_LOG");
    return v && strcasecmp(v, "debug") == 0;
}

static void say(const char *text) {
    char msg[256];
    int len = snprintf(msg, sizeof msg, "collie-heap: pid %d: %s\n", (int)getpid(), text);
    if (len > 0 && write(2, msg, (size_t)len) < 0)
        return;
}

/* A whole number from the environment; false (with a message) if it is not one. */
static bool env_size(const char *name, size_t *out) {
    const char *v = getenv(name);
    if (!v || !*v)
        return true;
    char *end, text[160];
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    long long scale = end == v ? 0 : collie_size_suffix_scale(end);
    if (errno || scale == 0 || *v == '-' || x > SIZE_MAX / (unsigned long long)scale) {
        snprintf(text, sizeof text, "%s=\"%.40s\" is not a whole number (K, M or G may follow); "
                 "the shared heap is off", name, v);
        say(text);
        return false;
    }
    *out = (size_t)(x * (unsigned long long)scale);
    return true;
}

static bool in_job(void) {
    return getenv("COLLIE_JOB") || getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
           getenv("PMIX_RANK");
}

static void configure(void) {
    const char *on = getenv("COLLIE_SHARED_HEAP"), *why;
    size_t bytes = (size_t)1 << 30;
    if ((on && *on && strcmp(on, "1") != 0) || !in_job())
        return;   /* COLLIE_SHARED_HEAP=0 (collie_init names other values), or no job */
    if (!env_size("COLLIE_HEAP_MIN", &heap_min) || !env_size("COLLIE_HEAP_BYTES", &bytes))
        return;
    if (heap_min == 0)
        heap_min = 1;
    if (!arena_init(bytes, &why)) {
        char text[160];
        snprintf(text, sizeof text, "%s; the shared heap is off", why);
        say(text);
        return;
    }
    pthread_atfork(arena_fork_prepare, arena_fork_parent, arena_fork_child);
    active = true;
    if (debug_log()) {
        char text[160];
        snprintf(text, sizeof text, "shared heap of %zu bytes for allocations of %zu bytes and more",
                 bytes, heap_min);
        say(text);
    }
}

__attribute__((constructor)) static void heap_start(void) {
    ready();
    configure();
}

__attribute__((destructor)) static void heap_stop(void) {
    if (!active || !debug_log())
        return;
    uint64_t served, fallbacks, high;
    arena_counts(&served, &fallbacks, &high);
    char text[200];
    snprintf(text, sizeof text, "%llu allocations from the shared heap, %llu fell back to malloc, "
             "high-water %llu bytes", (unsigned long long)served, (unsigned long long)fallbacks,
             (unsigned long long)high);
    say(text);
}
