/*
 * handles.c — the registry of live handles (teams, requests, user operations).
 *
 * A handle is valid while it is registered: a team from creation to collie_finalize, a
 * request from planning to collie_request_free, a user op from collie_op_create to
 * collie_op_free.  The public calls look a handle up here before they dereference it, so a
 * stale or wild pointer (a team after finalize, a request freed twice, (collie_op_t)0x10)
 * is answered with COLLIE_ERR_ARG instead of a crash.
 *
 * An open-addressing hash set of (pointer, kind).  Lookups take no lock (a few atomic
 * loads: they run on every call); additions and removals take a mutex.  A full table is
 * rebuilt at twice the size and published atomically; the old one is kept (reachable, a
 * geometric series: at most the size of the current one), since a concurrent lookup may
 * still read it.  Deleted entries leave tombstones that a rebuild clears.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/base.h"

#define TOMB ((uintptr_t)1)
#define MAX_TABLES 48

typedef struct entry {
    _Atomic uintptr_t ptr;  /* 0 empty, TOMB deleted; stored after kind (release) */
    _Atomic int kind;
} entry;

typedef struct table {
    size_t cap;             /* a power of two */
    entry e[];
} table;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(table *) current;
static table *all_tables[MAX_TABLES];   /* every table made, the current one last */
static size_t ntables, used, tombs;     /* used counts live entries */

static size_t slot_of(uintptr_t p, size_t mask) {
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & mask;
}

static entry *lookup(table *t, uintptr_t p) {
    if (!t)
        return NULL;
    for (size_t i = slot_of(p, t->cap - 1), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
        uintptr_t v = atomic_load_explicit(&t->e[i].ptr, memory_order_acquire);
        if (v == p)
            return &t->e[i];
        if (v == 0)
            return NULL;
    }
    return NULL;
}

static void put(table *t, uintptr_t p, int kind) {
    size_t i = slot_of(p, t->cap - 1);
    for (;;) {
        uintptr_t v = atomic_load_explicit(&t->e[i].ptr, memory_order_relaxed);
        if (v == 0 || v == TOMB)
            break;
        i = (i + 1) & (t->cap - 1);
    }
    atomic_store_explicit(&t->e[i].kind, kind, memory_order_relaxed);
    atomic_store_explicit(&t->e[i].ptr, p, memory_order_release);
}

/* Publishes a table of at least four times the live entries; false when out of memory. */
static bool rebuild(void) {
    table *old = atomic_load(&current);
    size_t c = 64;
    while (c < 4 * (used + 1))
        c *= 2;
    table *t = ntables < MAX_TABLES ? calloc(1, sizeof *t + c * sizeof(entry)) : NULL;
    if (!t)
        return false;
    t->cap = c;
    for (size_t i = 0; old && i < old->cap; i++) {
        uintptr_t v = atomic_load_explicit(&old->e[i].ptr, memory_order_relaxed);
        if (v > TOMB)
            put(t, v, atomic_load_explicit(&old->e[i].kind, memory_order_relaxed));
    }
    all_tables[ntables++] = t;
    atomic_store_explicit(&current, t, memory_order_release);
    tombs = 0;
    return true;
}

int collie_handle_add(const void *h, int kind) {
    pthread_mutex_lock(&lock);
    table *t = atomic_load(&current);
    bool ok = (t && (used + tombs + 1) * 2 <= t->cap) || rebuild();
    if (ok) {
        put(atomic_load(&current), (uintptr_t)h, kind);
        used++;
    }
    pthread_mutex_unlock(&lock);
    return ok ? COLLIE_OK : collie_fail(COLLIE_ERR_NOMEM, "cannot register a handle");
}

bool collie_handle_remove(const void *h, int kind) {
    if ((uintptr_t)h <= TOMB)
        return false;
    pthread_mutex_lock(&lock);
    entry *e = lookup(atomic_load(&current), (uintptr_t)h);
    bool found = e && atomic_load_explicit(&e->kind, memory_order_relaxed) == kind;
    if (found) {
        atomic_store_explicit(&e->ptr, TOMB, memory_order_release);
        used--;
        tombs++;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

bool collie_handle_valid(const void *h, int kind) {
    if ((uintptr_t)h <= TOMB)
        return false;
    entry *e = lookup(atomic_load_explicit(&current, memory_order_acquire), (uintptr_t)h);
    return e && atomic_load_explicit(&e->kind, memory_order_relaxed) == kind;
}
