/*
 * shm_segment.h — the shm transport's shared segment as shm.c (the transport: wake-ups,
 * sleeping, dead peers, teardown) and shm_setup.c (creating, opening and wiring the
 * segment, attaching the ranks) both see it: the header page, the per-rank control blocks
 * and the process-private part of the transport.
 */
#ifndef COLLIE_SHM_SEGMENT_H
#define COLLIE_SHM_SEGMENT_H

#include "base/base.h"
#include "transport/shm_cells.h"
#include "transport/transport.h"

#define SHM_MAGIC 0xC0111E5E6A11ull
#define HEADER_BYTES 4096

enum { RANK_ABSENT = 0, RANK_ALIVE = 1, RANK_FINALIZED = 2 };

typedef struct shm_header {
    _Atomic uint64_t magic;       /* stored last by rank 0 */
    int32_t size;
    uint32_t nslots, slot_bytes;
    uint64_t total_bytes;
    _Atomic int32_t attached;     /* ranks that mapped the segment */
    _Atomic int32_t probed;       /* ranks that tested single-copy reads */
    _Atomic int32_t direct_failed;
    /* Single-copy thresholds, decided by rank 0 so that every rank agrees on which messages
     * go single-copy (it depends on the environment and on ranks vs cores). */
    uint64_t direct_min, direct_mid_min, direct_mid_max_call;
    /* More ranks than the CPUs rank 0 may run on (collie_transport.shared_cores). */
    int32_t shared_cores;
    /* The copy cells (shm_cells.c), with rank 0's measurement of where the kernel copy
     * beats them. */
    shm_cells_config cells;
    /* Copies into the cells bypass the cache (shm_copy_probe.c): rank 0's answer (from
     * cells.stream, or measured), valid once stream_decided is 1; the words the
     * measurement's steps go by. */
    _Atomic int32_t stream, stream_decided;
    _Alignas(64) _Atomic int32_t probe_in;
    _Alignas(64) _Atomic int32_t probe_freed;
    _Atomic int32_t probe_cpu;    /* the writer's CPU + 1 at its last step */
    _Atomic int32_t probe_stop;   /* rank 0 has its answer */
    _Atomic uint8_t way_choices[COLLIE_WAY_CHOICES];   /* collie_transport.way_choices */
} shm_header;
_Static_assert(sizeof(shm_header) <= HEADER_BYTES, "the header fits its page");

typedef struct shm_ctrl {
    _Atomic int32_t pid;
    _Atomic int32_t state;
    _Atomic uint32_t doorbell;    /* futex word */
    _Atomic uint32_t sleeping;
    uint64_t probe_addr;          /* address of a word with value SHM_MAGIC in that process */
    _Atomic int32_t cause;        /* when it left: 1 + the rank whose failure made it leave */
    char pad[COLLIE_CACHELINE - 28];
} shm_ctrl;

typedef struct shm_impl {
    char *base;
    size_t bytes;
    shm_header *hdr;
    shm_ctrl *ctrl;
    char name[128];
    uint64_t last_check_ns;
    const int32_t *pids;          /* during set-up: collie_shm_config.pids, or NULL */
} shm_impl;

/* shm.c */
bool collie_shm_process_dead(int pid);   /* true if pid is gone or a zombie */
int collie_shm_count_cpus(void);         /* the CPUs the job may run on */

/* shm_copy_probe.c: where the header asks for it (cells.stream -1), ranks 0 and 1 measure
 * whether copies into the cells should bypass the cache; rank 0 stores the answer in the
 * header and sets stream_decided (also when there is nothing to measure). */
void collie_shm_stream_probe(collie_transport *tp);

/* shm_setup.c: rank 0 creates the segment, the others open it (agreeing under a
 * bootstrap), every rank wires its channels, attaches and probes single-copy reads. */
int collie_shm_setup(collie_transport *tp, const collie_shm_config *cfg, uint64_t deadline);

#endif
