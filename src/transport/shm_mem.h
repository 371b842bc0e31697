/* shm_mem.h — registered memory of the shm transport (shm_mem.c). */
#ifndef COLLIE_SHM_MEM_H
#define COLLIE_SHM_MEM_H
#include "transport/transport.h"

void *collie_shm_mem_alloc(collie_transport *tp, size_t bytes);
void collie_shm_mem_free(collie_transport *tp, void *ptr);
bool collie_shm_mem_find(collie_transport *tp, const void *ptr, uint64_t len, collie_mem_ref *ref);
const void *collie_shm_mem_map_peer(collie_transport *tp, int peer, int pid,
                                    const collie_mem_ref *ref, uint64_t len);
void collie_shm_mem_unmap_peers(void);
/* Peers' shared-heap buffers this process used in place (mapped), since it started. */
uint64_t collie_shm_heap_peer_reads(void);
/* The serial naming a process's shared heap (libcollie_heap) in a collie_mem_ref. */
#define COLLIE_HEAP_SERIAL 0u
#endif
