/*
 * heap_threads.c — a multi-threaded program on plain malloc buffers, for the shared heap
 * (libcollie_heap.so, src/heap/).  Run under `collie-run --shared-heap` (heap_test.sh):
 *
 *  1. churn: THREADS threads allocate, check and free blocks of 1 KiB .. 1 MiB through every
 *     entry point (malloc, calloc: zero, realloc: contents kept, posix_memalign,
 *     aligned_alloc, memalign, valloc, pvalloc: alignment, malloc_usable_size: >= size,
 *     reallocarray), each block filled with a pattern of (thread, block, size) that is
 *     checked before it is freed or reallocated;
 *  2. collectives: each thread first allocates its buffers of the sizes in SIZES (malloc,
 *     calloc, posix_memalign, realloc from a small block); the main thread runs allreduce (sum, in place and not), reduce and bcast on them — while the other
 *     threads keep churning — and checks every element against the exact value (integers
 *     in doubles), whatever the other ranks' allocators are;
 *  3. --fork: a child forked with live heap blocks sees their contents, writes into them
 *     and allocates; the parent's blocks must not change and its collectives go on.
 *
 * Prints "rank R: shared heap yes|no" (whether its buffers lie in a shared heap, asked
 * through collie_heap_lookup when that is loaded) and "rank R: OK".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <malloc.h>
#include <unistd.h>

#include "collie.h"

#define THREADS 4
#define LIVE 12
static const size_t SIZES[] = { 3 * 4096 + 24, 1 << 20, 70000, (2 << 20) + 8 };
#define NSIZES (sizeof SIZES / sizeof SIZES[0])

static int rank, size;
static _Atomic int fails;
static _Atomic bool stop;
static collie_team_t *world;

/* Counts and reports a failed check; returns ok. */
static bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool check(bool ok, const char *fmt, ...) {
    if (ok)
        return true;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: FAIL: %s\n", rank, msg);
    atomic_fetch_add(&fails, 1);
    return false;
}

static uint64_t rnd(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static unsigned char pat(uint64_t tag, size_t i) {
    return (unsigned char)((tag * 2654435761u) >> 7 ^ i * 31 ^ i >> 9);
}

static void fill(unsigned char *p, size_t n, uint64_t tag) {
    for (size_t i = 0; i < n; i++)
        p[i] = pat(tag, i);
}

static bool intact(const unsigned char *p, size_t n, uint64_t tag) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != pat(tag, i))
            return false;
    return true;
}

typedef struct {
    unsigned char *p;
    size_t n;
    uint64_t tag;
} block;

/* One new block through one of the entry points, checked and filled. */
static void *get_block(uint64_t *s, size_t n, uint64_t tag) {
    size_t align = (size_t)64 << (rnd(s) % 12);   /* 64 B .. 128 KiB */
    void *p = NULL;
    switch (rnd(s) % 8) {
    case 0: p = malloc(n); break;
    case 1:
        p = calloc(n / 8 + 1, 8);
        for (size_t i = 0; p && i < n; i += 997)
            check(((unsigned char *)p)[i] == 0, "calloc(%zu): byte %zu is not zero", n, i);
        break;
    case 2: check(posix_memalign(&p, align, n) == 0, "posix_memalign(%zu, %zu)", align, n); break;
    case 3: p = aligned_alloc(align, (n + align - 1) / align * align); break;
    case 4: p = memalign(align, n); break;
    case 5: p = valloc(n); align = 4096; break;
    case 6: p = pvalloc(n); align = 4096; break;
    default: p = reallocarray(NULL, n, 1); align = 16; break;
    }
    check(p, "allocation of %zu bytes failed", n);
    if (!p)
        return NULL;
    check((uintptr_t)p % 16 == 0, "%p not 16-byte aligned", p);
    check(malloc_usable_size(p) >= n, "malloc_usable_size %zu < %zu", malloc_usable_size(p), n);
    (void)align;
    fill(p, n, tag);
    return p;
}

/* Replaces, reallocates or checks one of the thread's live blocks at random. */
static void churn_step(uint64_t *s, block *live, uint64_t *tag) {
    block *b = &live[rnd(s) % LIVE];
    if (b->p && !intact(b->p, b->n, b->tag))
        check(0, "a block of %zu bytes changed under its owner", b->n);
    size_t n = 1024 + rnd(s) % (rnd(s) % 4 ? 200000 : 1u << 20);
    if (b->p && rnd(s) % 3 == 0) {   /* realloc keeps the first min(old, new) bytes */
        unsigned char *q = realloc(b->p, n);
        check(q, "realloc to %zu failed", n);
        if (!q)
            return;
        size_t keep = b->n < n ? b->n : n;
        check(intact(q, keep, b->tag), "realloc %zu -> %zu lost the contents", b->n, n);
        b->tag = ++*tag;
        fill(q, n, b->tag);
        b->p = q;
        b->n = n;
        return;
    }
    free(b->p);
    b->tag = ++*tag;
    b->p = get_block(s, n, b->tag);
    b->n = b->p ? n : 0;
}

typedef struct {
    int id;
    double *buf[NSIZES];   /* allocated by the thread, for the main thread's collectives */
} thread_arg;

static _Atomic int buffers_ready;

/* The thread's buffers for the collectives, one entry point each: malloc, calloc,
 * posix_memalign, and realloc from 100 bytes (a glibc block moved into the heap). */
static void own_buffers(thread_arg *t) {
    for (size_t k = 0; k < NSIZES; k++) {
        void *p = NULL;
        switch (k % 4) {
        case 0: p = malloc(SIZES[k]); break;
        case 1: p = calloc(SIZES[k] / sizeof(double), sizeof(double)); break;
        case 2: check(posix_memalign(&p, 256, SIZES[k]) == 0, "posix_memalign"); break;
        default:
            p = malloc(100);
            memset(p, 7, 100);
            p = realloc(p, SIZES[k]);
            check(p && ((unsigned char *)p)[99] == 7, "realloc from 100 bytes lost the contents");
            break;
        }
        check(p, "buffer of %zu bytes", SIZES[k]);
        t->buf[k] = p;
    }
    atomic_fetch_add(&buffers_ready, 1);
}

static void *churn(void *arg) {
    thread_arg *t = arg;
    own_buffers(t);
    uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(t->id * 7919 + rank * 104729 + 1), tag = (uint64_t)t->id << 40;
    block live[LIVE] = { 0 };
    for (int k = 0; k < 100 || !atomic_load(&stop); k++) {
        churn_step(&s, live, &tag);
        if (k >= 100)
            usleep(2000);
    }
    for (int i = 0; i < LIVE; i++) {
        if (live[i].p)
            check(intact(live[i].p, live[i].n, live[i].tag), "block %d changed", i);
        free(live[i].p);
    }
    return NULL;
}

/* Whether p lies in this process's shared heap. */
static bool in_shared_heap(const void *p, size_t n) {
    int (*lookup)(const void *, size_t, int *, uint64_t *);
    *(void **)&lookup = dlsym(RTLD_DEFAULT, "collie_heap_lookup");
    int fd;
    uint64_t off;
    return lookup && lookup(p, n, &fd, &off);
}

static double val(int r, size_t i) {
    return (double)((r + 1) * 1000 + (int)(i % 977));
}

static void collectives_on(double *a, size_t bytes, int round) {
    size_t n = bytes / sizeof(double);
    double *out = malloc(bytes);
    for (size_t i = 0; i < n; i++)
        a[i] = val(rank, i + (size_t)round);
    int st = collie_allreduce(world, a, out, n, COLLIE_FLOAT64, COLLIE_SUM);
    check(st == COLLIE_OK, "allreduce: %s", collie_last_error());
    for (size_t i = 0; i < n; i++) {
        double want = 0;
        for (int r = 0; r < size; r++)
            want += val(r, i + (size_t)round);
        if (out[i] != want) {
            check(0, "allreduce of %zu bytes: element %zu is %g, want %g", bytes, i, out[i], want);
            break;
        }
    }
    st = collie_allreduce(world, COLLIE_IN_PLACE, out, n, COLLIE_FLOAT64, COLLIE_MAX);
    check(st == COLLIE_OK, "allreduce in place: %s", collie_last_error());
    int root = round % size;
    st = collie_reduce(world, a, out, n, COLLIE_FLOAT64, COLLIE_MIN, root);
    check(st == COLLIE_OK, "reduce: %s", collie_last_error());
    for (size_t i = 0; rank == root && i < n; i++)
        if (out[i] != val(0, i + (size_t)round)) {
            check(0, "reduce of %zu bytes: element %zu is %g", bytes, i, out[i]);
            break;
        }
    st = collie_bcast(world, a, n, COLLIE_FLOAT64, root);
    check(st == COLLIE_OK, "bcast: %s", collie_last_error());
    for (size_t i = 0; i < n; i++)
        if (a[i] != val(root, i + (size_t)round)) {
            check(0, "bcast of %zu bytes from %d: element %zu is %g", bytes, root, i, a[i]);
            break;
        }
    free(out);
}

/* A child with live heap blocks: it reads them, writes into them and allocates; the
 * parent's copies must not change.  Runs with the churn threads stopped. */
static void fork_check(double *a, size_t bytes) {
    for (size_t i = 0; i < bytes / sizeof(double); i++)
        a[i] = (double)i;
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            bad += a[i] != (double)i;
        memset(a, 0x5a, bytes);
        void *fresh = malloc(4 << 20);
        bad += fresh == NULL || in_shared_heap(fresh, 4 << 20) || in_shared_heap(a, bytes);
        memset(fresh, 1, 4 << 20);
        free(fresh);
        a = realloc(a, 2 * bytes);
        bad += a == NULL;
        free(a);
        _exit(bad ? 1 : 0);
    }
    check(pid > 0, "fork failed");
    int status = 0;
    waitpid(pid, &status, 0);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child saw wrong data (status %d)", status);
    for (size_t i = 0; i < bytes / sizeof(double); i++)
        if (a[i] != (double)i) {
            check(0, "the child's writes reached the parent: element %zu is %g", i, a[i]);
            break;
        }
}

int main(int argc, char **argv) {
    bool do_fork = argc > 1 && strcmp(argv[1], "--fork") == 0;
    int provided;
    if (collie_init_thread(COLLIE_THREAD_MULTIPLE, &provided) != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    world = collie_world();
    rank = collie_rank(world);
    size = collie_size(world);
    thread_arg args[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t].id = t;
        pthread_create(&th[t], NULL, churn, &args[t]);
    }
    while (atomic_load(&buffers_ready) < THREADS)
        usleep(100);
    for (int t = 0; t < THREADS; t++)
        if (!args[t].buf[0] || !args[t].buf[1] || !args[t].buf[2] || !args[t].buf[3])
            return 1;
    bool shared = in_shared_heap(args[0].buf[2], SIZES[2]);
    printf("rank %d: shared heap %s\n", rank, shared ? "yes" : "no");
    for (int round = 0; round < 2; round++)
        for (int t = 0; t < THREADS; t++)
            for (size_t k = 0; k < NSIZES; k++)
                collectives_on(args[t].buf[k], SIZES[k], round * THREADS + t);
    atomic_store(&stop, true);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    if (do_fork) {
        fork_check(args[0].buf[2], SIZES[2]);
        collectives_on(args[1].buf[2], SIZES[2], 99);
    }
    for (int t = 0; t < THREADS; t++)
        for (size_t k = 0; k < NSIZES; k++)
            free(args[t].buf[k]);
    collie_barrier(world);
    collie_finalize();
    if (fails)
        return 1;
    printf("rank %d: OK\n", rank);
    return 0;
}
