/* shm_cells.h — the copy cells of the shm transport and the setting of where the kernel
 * single copy is used instead (shm_cells.c). */
#ifndef COLLIE_SHM_CELLS_H
#define COLLIE_SHM_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "transport/transport.h"

typedef struct shm_cells_config {
    uint32_t ncells;        /* 0: no cells */
    uint32_t window;        /* cells one call cycles through at most */
    uint32_t step_cells;    /* cells an allreduce / reduce step may span at most (1, 2, 4 …) */
    uint64_t cell_bytes;
    uint64_t kernel_min;    /* see collie_cells.kernel_min */
    uint64_t slots_max;     /* see collie_cells.slots_max */
    int32_t rotate;         /* 1: rank r writes lap L of the ring into ring (r + L) % size
                               (see collie_cells.rotate; COLLIE_SHM_CELLS_ROTATE) */
    int32_t stream;         /* copies into the cells bypass the cache: 1 yes, 0 no, -1 to be
                               measured at set-up (shm_copy_probe.c) */
} shm_cells_config;

/* The answer of the first segment this process joined to whether copies into the cells
 * bypass the cache (-1: none yet), and keeping it (shm_copy_probe.c). */
int collie_shm_stream_known(void);
void collie_shm_stream_remember(bool stream);
/* Cells per rank and their size from the environment, bounded per job; stream from
 * COLLIE_SHM_STREAM, else this process's earlier answer, else -1 (to be measured). */
void collie_shm_cells_decide(int size, shm_cells_config *cfg);
/* Fewer cells, for a /dev/shm that cannot hold them: the ring shrinks to its window, then
 * the cells go (calls take the slots or the kernel copy instead).  False when there were
 * none left to drop. */
bool collie_shm_cells_shrink(shm_cells_config *cfg);
/* Bytes of the cell region in the segment (page multiple). */
size_t collie_shm_cells_bytes(int size, const shm_cells_config *cfg);
/* COLLIE_SHM_KERNEL_MIN for a team of `size`: UINT64_MAX never (set to 0, or one rank),
 * else from that many bytes; 0 when unset: chosen per call (core/path_tune.c). */
uint64_t collie_shm_kernel_min(int size);
/* COLLIE_SHM_STREAM_OUT_MIN (0: never, UINT64_MAX returned), else 3/4 of the last-level
 * cache (never if unknown or without native streaming stores). */
uint64_t collie_shm_stream_out_min(void);
/* COLLIE_SHM_STREAM_OUT_MIN as above when set, else 4 MiB (never without native streaming
 * stores): the own block of allgather and alltoall `direct` (collie_transport.stream_own_min). */
uint64_t collie_shm_stream_own_min(void);
/* 64 MiB of the team's outputs, UINT64_MAX when COLLIE_SHM_STREAM_OUT_MIN is set or without
 * native streaming stores (collie_transport.stream_team_min). */
uint64_t collie_shm_stream_team_min(void);
uint64_t collie_shm_cells_lend_min(void);   /* COLLIE_SHM_CELLS_LEND_MIN (UINT64_MAX: never) */
/* Maps the pages of [region, region + bytes) into this process now (named `what` in the
 * warning if that fails). */
void collie_shm_populate(char *region, size_t bytes, int rank, const char *what);
/* Sets tp->cells to the region (tp->size set) and maps its pages; no-op without cells. */
int collie_shm_cells_wire(collie_transport *tp, char *region, const shm_cells_config *cfg);

#endif
