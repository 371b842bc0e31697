/*
 * mpi_cache.c — a map from MPI handles (communicators, datatypes) to the layer's records,
 * so that what does not change between calls is looked up once (docs/design.md, "The MPI
 * layer's caches").  A handle is an int in MPICH's ABI and a pointer in Open MPI's and in
 * the MPI-5 standard ABI (predefined ones small constants there); the map keys on its bits.  Chained hashing with a fixed number of buckets: the number of
 * live communicators and datatypes a program uses in collectives is small.  Entries are
 * removed where MPI frees the handle (attribute delete callbacks), since MPI reuses
 * handles.  Not locked itself: its users (mpi_team.c, mpi_types.c) hold their own lock,
 * since lookups also write the last-hit slot (MPI_THREAD_MULTIPLE).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_layer.h"

typedef struct cm_node {
    uint64_t key;
    void *value;
    struct cm_node *next;
} cm_node;

static uint64_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    return k ^ (k >> 29);
}

void *cm_map_get(cm_map *m, uint64_t key) {
    if (m->last_value && m->last_key == key)
        return m->last_value;
    for (const cm_node *n = m->buckets[mix(key) % CM_MAP_BUCKETS]; n; n = n->next)
        if (n->key == key) {
            m->last_key = key;
            m->last_value = n->value;
            return n->value;
        }
    return NULL;
}

/* Replaces the value of key if present; false when out of memory. */
bool cm_map_put(cm_map *m, uint64_t key, void *value) {
    cm_node **head = &m->buckets[mix(key) % CM_MAP_BUCKETS];
    m->last_value = NULL;
    for (cm_node *n = *head; n; n = n->next)
        if (n->key == key) {
            n->value = value;
            return true;
        }
    cm_node *n = malloc(sizeof *n);
    if (!n)
        return false;
    *n = (cm_node){ key, value, *head };
    *head = n;
    return true;
}

void *cm_map_del(cm_map *m, uint64_t key) {
    m->last_value = NULL;
    for (cm_node **pp = &m->buckets[mix(key) % CM_MAP_BUCKETS]; *pp; pp = &(*pp)->next)
        if ((*pp)->key == key) {
            cm_node *n = *pp;
            void *value = n->value;
            *pp = n->next;
            free(n);
            return value;
        }
    return NULL;
}

/* Empties the map, calling drop on each value (if drop is not NULL). */
void cm_map_clear(cm_map *m, void (*drop)(void *value)) {
    m->last_value = NULL;
    for (int b = 0; b < CM_MAP_BUCKETS; b++)
        while (m->buckets[b]) {
            cm_node *n = m->buckets[b];
            m->buckets[b] = n->next;
            if (drop)
                drop(n->value);
            free(n);
        }
}
