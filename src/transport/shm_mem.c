/*
 * shm_mem.c — registered memory of the shm transport (collie_alloc).
 *
 * Every block is a memfd file mapped MAP_SHARED, so another rank of the job can map the
 * same pages: it opens /proc/<pid>/fd/<fd> of the owner (the same permission
 * process_vm_readv needs) and keeps the mapping in a small cache.  The executor uses
 * this for single-copy chunks whose source lies in a block: the receiver reduces or
 * copies straight out of the sender's buffer instead of first copying it with
 * process_vm_readv.  A block is named by (owner, fd, serial); the serial tells a reused
 * fd number apart.  When a mapping cannot be made the caller falls back to
 * process_vm_readv (the descriptor still carries the address).
 *
 * The shared heap (libcollie_heap.so, src/heap/, when preloaded): its memfd counts as one
 * more block, found through its collie_heap_lookup (dlsym) and named by serial
 * COLLIE_HEAP_SERIAL (0, which collie_alloc never gives).  A peer maps the whole file once;
 * the file is never replaced while its owner lives, so the mapping is never stale.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "transport/shm_mem.h"

typedef struct shm_block {
    char *ptr;
    size_t bytes;
    int fd;
    uint32_t serial;
    struct shm_block *next;
} shm_block;

/* This process's blocks: alloc, free and find may run in threads on different teams. */
static shm_block *blocks;
static uint32_t next_serial;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;

/* A peer's block mapped here. */
typedef struct peer_map {
    int pid, fd;
    uint32_t serial;
    char *base;
    size_t bytes;
    uint64_t last_use;
} peer_map;

/* Per thread: a mapping is used by the call that made it, in its thread, and evicted only
 * by that thread's later mappings (threads on different teams never unmap each other's). */
#define PEER_MAPS 64
static _Thread_local peer_map maps[PEER_MAPS];
static _Thread_local uint64_t map_clock;
static _Atomic bool map_failed_logged;

/* A thread's mappings go when it ends (a key's destructor; the thread's own variables are
 * still there when it runs): else every thread that ever read a peer's block kept up to
 * PEER_MAPS mappings, and the peer's freed memory with them, for the life of the process. */
static pthread_key_t maps_key;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;
static void unmap_thread_maps(void *unused) {
    (void)unused;
    collie_shm_mem_unmap_peers();
}
static void maps_key_make(void) { (void)pthread_key_create(&maps_key, unmap_thread_maps); }
static void unmap_at_thread_end(void) {
    pthread_once(&maps_once, maps_key_make);
    (void)pthread_setspecific(maps_key, (void *)1);   /* non-NULL: the destructor runs */
}

/* libcollie_heap's lookup, when it is loaded (found once). */
typedef int (*heap_lookup_fn)(const void *ptr, size_t len, int *fd, uint64_t *offset);
static heap_lookup_fn heap_lookup;
static pthread_once_t heap_once = PTHREAD_ONCE_INIT;
static _Atomic uint64_t heap_peer_reads;

static void find_heap(void) {
    *(void **)&heap_lookup = dlsym(RTLD_DEFAULT, "collie_heap_lookup");
}

void *collie_shm_mem_alloc(collie_transport *tp, size_t bytes) {
    (void)tp;
    size_t len = bytes ? (bytes + 4095) & ~(size_t)4095 : 4096;
    shm_block *b = malloc(sizeof *b);
    int fd = b ? memfd_create("collie-alloc", MFD_CLOEXEC) : -1;
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(b);
        collie_fail(COLLIE_ERR_NOMEM, "collie_alloc: cannot allocate %zu bytes of shared memory: %s",
                    bytes, strerror(e));
        return NULL;
    }
    b->ptr = p;
    b->bytes = len;
    b->fd = fd;
    pthread_mutex_lock(&blocks_lock);
    if (++next_serial == COLLIE_HEAP_SERIAL)
        ++next_serial;
    b->serial = next_serial;
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&blocks_lock);
    return p;
}

void collie_shm_mem_free(collie_transport *tp, void *ptr) {
    (void)tp;
    pthread_mutex_lock(&blocks_lock);
    for (shm_block **pp = &blocks; *pp; pp = &(*pp)->next) {
        if ((*pp)->ptr != ptr)
            continue;
        shm_block *b = *pp;
        *pp = b->next;
        pthread_mutex_unlock(&blocks_lock);
        munmap(b->ptr, b->bytes);
        close(b->fd);
        free(b);
        return;
    }
    pthread_mutex_unlock(&blocks_lock);
    collie_fail(COLLIE_ERR_ARG, "collie_free: %p was not returned by collie_alloc", ptr);
}

bool collie_shm_mem_find(collie_transport *tp, const void *ptr, uint64_t len, collie_mem_ref *ref) {
    (void)tp;
    const char *p = ptr;
    bool found = false;
    pthread_mutex_lock(&blocks_lock);
    for (const shm_block *b = blocks; b && !found; b = b->next)
        if (p >= b->ptr && p + len <= b->ptr + b->bytes) {
            ref->fd = b->fd;
            ref->serial = b->serial;
            ref->offset = (uint64_t)(p - b->ptr);
            found = true;
        }
    pthread_mutex_unlock(&blocks_lock);
    if (found)
        return true;
    pthread_once(&heap_once, find_heap);
    int fd;
    uint64_t offset;
    if (!heap_lookup || !heap_lookup(ptr, (size_t)len, &fd, &offset))
        return false;
    ref->fd = fd;
    ref->serial = COLLIE_HEAP_SERIAL;
    ref->offset = offset;
    return true;
}

/* Maps the owner's block into a free (or the least recently used) cache entry. */
static peer_map *map_block(int pid, const collie_mem_ref *ref) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, (int)ref->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (!atomic_exchange(&map_failed_logged, true))
            collie_log(COLLIE_LOG_INFO, "cannot map a peer's collie_alloc block (%s: %s); "
                       "reading it with process_vm_readv instead", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return NULL;
    peer_map *victim = &maps[0];
    for (int i = 0; i < PEER_MAPS; i++) {
        if (!maps[i].base) {
            victim = &maps[i];
            break;
        }
        if (maps[i].last_use < victim->last_use)
            victim = &maps[i];
    }
    if (victim->base)
        munmap(victim->base, victim->bytes);
    *victim = (peer_map){ pid, (int)ref->fd, ref->serial, base, (size_t)st.st_size, 0 };
    unmap_at_thread_end();
    return victim;
}

/* COLLIE_SHM_MAP_PEERS=0: never map a peer's block, so that every reader takes the
 * process_vm_readv fallback (as where /proc/<pid>/fd cannot be opened); tests use it. */
static int map_peers_off = -1;
static void map_peers_setting(void) { map_peers_off = collie_env_int("COLLIE_SHM_MAP_PEERS", 1) == 0; }

const void *collie_shm_mem_map_peer(collie_transport *tp, int peer, int pid,
                                    const collie_mem_ref *ref, uint64_t len) {
    (void)tp;
    (void)peer;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, map_peers_setting);
    if (map_peers_off)
        return NULL;
    peer_map *m = NULL;
    for (int i = 0; i < PEER_MAPS && !m; i++)
        if (maps[i].base && maps[i].pid == pid && maps[i].fd == ref->fd && maps[i].serial == ref->serial)
            m = &maps[i];
    if (!m) {
        if (!(m = map_block(pid, ref)))
            return NULL;
        if (ref->serial == COLLIE_HEAP_SERIAL)
            collie_log(COLLIE_LOG_DEBUG, "mapped rank %d's shared heap (pid %d, %zu bytes): "
                       "its malloc buffers are read and written in place", peer, pid, m->bytes);
    }
    if (ref->offset + len > m->bytes)
        return NULL;
    if (ref->serial == COLLIE_HEAP_SERIAL)
        atomic_fetch_add_explicit(&heap_peer_reads, 1, memory_order_relaxed);
    m->last_use = ++map_clock;
    return m->base + ref->offset;
}

uint64_t collie_shm_heap_peer_reads(void) {
    return atomic_load_explicit(&heap_peer_reads, memory_order_relaxed);
}

void collie_shm_mem_unmap_peers(void) {
    for (int i = 0; i < PEER_MAPS; i++)
        if (maps[i].base) {
            munmap(maps[i].base, maps[i].bytes);
            maps[i].base = NULL;
        }
}
