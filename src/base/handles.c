/*
 * handles.c — the registry of live handles (teams, requests, user operations).
 *
 * A handle is valid while it is registered: a team from creation to collie_finalize, a
 * request from planning to collie_request_free, a user op from collie_op_create to
 * collie_op_free.  The public calls look a handle up here before they dereference it, so a
 * stale or wild pointer (a team after finalize, a request freed twice, (collie_op_t)0x10)
 * is answered with COLLIE_ERR_ARG instead of a crash.  An open-addressing hash set of
 * (pointer, kind) pairs behind a mutex; it grows by doubling, deleted entries leave
 * tombstones that a rebuild clears.
 *
 * Every blocking call looks up its team and request several times, so each thread keeps
 * the last few handles it found valid, tagged with the registry's removal count: a
 * removal anywhere bumps the count and so empties every thread's cache, and a cached
 * handle is one that was registered and has not been removed since.  The hit costs one
 * atomic load instead of a mutex round trip (an 8-byte bcast at P = 2 made 4 lookups).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/base.h"

#define TOMB ((uintptr_t)1)

typedef struct entry {
    uintptr_t ptr;          /* 0 empty, TOMB deleted */
    int kind;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table;
static size_t cap, used, tombs;     /* used counts live entries */
static _Atomic uint64_t removals;   /* handles removed so far */

#define SEEN_WAYS 4
static _Thread_local struct {
    uint64_t removals;              /* the count the entries were valid at */
    entry way[SEEN_WAYS];
    unsigned next;
} seen;

static bool seen_valid(uintptr_t p, int kind) {
    if (seen.removals != atomic_load_explicit(&removals, memory_order_acquire))
        return false;
    for (int i = 0; i < SEEN_WAYS; i++)
        if (seen.way[i].ptr == p && seen.way[i].kind == kind)
            return true;
    return false;
}

/* Called with the count read before the lookup that found p valid. */
static void seen_add(uintptr_t p, int kind, uint64_t at) {
    if (seen.removals != at) {
        for (int i = 0; i < SEEN_WAYS; i++)
            seen.way[i].ptr = 0;
        seen.removals = at;
    }
    seen.way[seen.next++ % SEEN_WAYS] = (entry){ p, kind };
}

static size_t slot_of(uintptr_t p, size_t mask) {
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & mask;
}

static entry *lookup(uintptr_t p) {
    if (!table)
        return NULL;
    for (size_t i = slot_of(p, cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (table[i].ptr == p)
            return &table[i];
        if (table[i].ptr == 0)
            return NULL;
    }
    return NULL;
}

static void put(entry *t, size_t c, uintptr_t p, int kind) {
    size_t i = slot_of(p, c - 1);
    while (t[i].ptr != 0 && t[i].ptr != TOMB)
        i = (i + 1) & (c - 1);
    t[i] = (entry){ p, kind };
}

/* Rebuilds into a table of at least twice the live entries; false when out of memory. */
static bool rebuild(void) {
    size_t c = 64;
    while (c < 4 * (used + 1))
        c *= 2;
    entry *t = calloc(c, sizeof *t);
    if (!t)
        return false;
    for (size_t i = 0; i < cap; i++)
        if (table[i].ptr > TOMB)
            put(t, c, table[i].ptr, table[i].kind);
    free(table);
    table = t;
    cap = c;
    tombs = 0;
    return true;
}

int collie_handle_add(const void *h, int kind) {
    uintptr_t p = (uintptr_t)h;
    pthread_mutex_lock(&lock);
    bool ok = (used + tombs + 1) * 2 <= cap || rebuild();
    if (ok) {
        put(table, cap, p, kind);
        used++;
    }
    pthread_mutex_unlock(&lock);
    return ok ? COLLIE_OK : collie_fail(COLLIE_ERR_NOMEM, "cannot register a handle");
}

bool collie_handle_remove(const void *h, int kind) {
    if ((uintptr_t)h <= TOMB)
        return false;
    pthread_mutex_lock(&lock);
    entry *e = lookup((uintptr_t)h);
    bool found = e && e->kind == kind;
    if (found) {
        e->ptr = TOMB;
        used--;
        tombs++;
        atomic_fetch_add_explicit(&removals, 1, memory_order_acq_rel);
    }
    pthread_mutex_unlock(&lock);
    return found;
}

bool collie_handle_valid(const void *h, int kind) {
    uintptr_t p = (uintptr_t)h;
    if (p <= TOMB)
        return false;
    if (seen_valid(p, kind))
        return true;
    pthread_mutex_lock(&lock);
    uint64_t at = atomic_load_explicit(&removals, memory_order_relaxed);
    entry *e = lookup(p);
    bool ok = e && e->kind == kind;
    pthread_mutex_unlock(&lock);
    if (ok)
        seen_add(p, kind, at);
    return ok;
}
