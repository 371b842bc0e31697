/*
 * shm_cells.c — the copy cells of the shm transport (layout in transport.h, used by
 * algorithms/cells.c) and the setting of where the kernel single copy is used instead.
 *
 * Size: COLLIE_SHM_CELL_BYTES (default 128 KiB) × COLLIE_SHM_CELLS (default 8) per rank,
 * bounded per job by COLLIE_SHM_CELLS_MAX_BYTES (default 64 MiB): above it the cells shrink
 * (halved down to 16 KiB), then their number (down to 2); a job that still does not fit
 * (more than 2048 ranks at the default bound) has no cells.  Pages of /dev/shm are only
 * allocated when touched, so an unused cell costs nothing.
 *
 * Where the kernel single copy (process_vm_readv/writev) is used instead of the cells or
 * the slots for buffers that are not mapped: COLLIE_SHM_KERNEL_MIN fixes it (from that many
 * bytes; 0: never); unset, the rank that decides each call picks by timing its first calls
 * of each size class both ways (core/path_tune.c).  Rank 0 writes the setting into
 * the segment's header, so all ranks agree.
 */
#include <stdlib.h>

#include "base/base.h"
#include "transport/shm_cells.h"

/* Cells an allreduce / reduce step may span: COLLIE_SHM_CELLS_PER_STEP (default 4), made a
 * power of two that divides the ring and leaves room for two such steps in it. */
static uint32_t widest_step(uint32_t ncells) {
    long long want = collie_env_int("COLLIE_SHM_CELLS_PER_STEP", 4);
    if (want < 1 || want > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS_PER_STEP=%lld: need 1 .. 64; using 4", want);
        want = 4;
    }
    uint32_t w = 1;
    while (w * 2 <= (uint64_t)want && ncells % (w * 2) == 0 && w * 4 <= ncells)
        w *= 2;
    return w;
}

void collie_shm_cells_decide(int size, shm_cells_config *cfg) {
    long long bytes = collie_env_int("COLLIE_SHM_CELL_BYTES", 128 * 1024);
    long long n = collie_env_int("COLLIE_SHM_CELLS", 8);
    long long max = collie_env_int("COLLIE_SHM_CELLS_MAX_BYTES", 64ll << 20);
    if (bytes < 4096 || bytes > (64ll << 20)) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELL_BYTES=%lld: need 4 KiB .. 64 MiB; using 128 KiB", bytes);
        bytes = 128 * 1024;
    }
    if (n < 2 || n > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS=%lld: need 2 .. 64; using 8", n);
        n = 8;
    }
    bytes = (bytes + 63) / 64 * 64;
    while ((long long)size * n * bytes > max && bytes > 16384)
        bytes /= 2;
    while ((long long)size * n * bytes > max && n > 2)
        n--;
    bool fits = (long long)size * n * bytes <= max && size > 1;
    cfg->ncells = fits ? (uint32_t)n : 0;
    cfg->step_cells = fits ? widest_step((uint32_t)n) : 0;
    cfg->cell_bytes = fits ? (uint64_t)bytes : 0;
    cfg->stream = (int32_t)collie_env_int("COLLIE_SHM_STREAM", -1);
    if (cfg->stream == -1)
        cfg->stream = collie_shm_stream_known();   /* measured by an earlier segment, or -1 */
    if (!fits || !collie_stream_copy_native())
        cfg->stream = 0;
}

size_t collie_shm_cells_bytes(int size, const shm_cells_config *cfg) {
    if (!cfg->ncells)
        return 0;
    size_t ctrl = (size_t)size * sizeof(collie_cell_ctrl);
    size_t check = ((size_t)size * cfg->ncells * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    return ((ctrl + 4095) & ~(size_t)4095) + check + (size_t)size * cfg->ncells * cfg->cell_bytes;
}

uint64_t collie_shm_kernel_min(int size) {
    long long forced = collie_env_int("COLLIE_SHM_KERNEL_MIN", -1);
    if (size <= 1 || forced == 0)
        return UINT64_MAX;
    return forced > 0 ? (uint64_t)forced : 0;
}

/* Measured (2026-11-27, AMD EPYC VM, 32 MiB L3; bcast through the cells with memcpy or
 * streaming stores out of them, P = 2, 3, 4, 8, 8-64 MiB, reused and fresh data, 2
 * rounds; docs/performance.md): at 32 and 64 MiB streaming took 0.46-0.93 of memcpy's
 * time (0.80-1.01 at P = 2 with fresh data); at 8 MiB 1.21-1.62 with fresh data; 16 MiB
 * mixed (0.67-1.15).  So from 3/4 of the last-level cache, where one memcpy would stream
 * by itself. */
uint64_t collie_shm_stream_out_min(void) {
    long long forced = collie_env_int("COLLIE_SHM_STREAM_OUT_MIN", -1);
    if (forced == 0)
        return UINT64_MAX;
    if (forced > 0)
        return (uint64_t)forced;
    uint64_t llc = collie_last_level_cache_bytes();
    return llc && collie_stream_copy_native() ? llc / 4 * 3 : UINT64_MAX;
}

int collie_shm_cells_wire(collie_transport *tp, char *region, const shm_cells_config *cfg) {
    if (!cfg->ncells)
        return COLLIE_OK;
    collie_cells *c = calloc(1, sizeof *c);
    if (!c)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the copy-cell table");
    size_t ctrl = ((size_t)tp->size * sizeof(collie_cell_ctrl) + 4095) & ~(size_t)4095;
    size_t check = ((size_t)tp->size * cfg->ncells * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    c->ncells = cfg->ncells;
    c->step_cells = cfg->step_cells ? cfg->step_cells : 1;
    c->cell_bytes = cfg->cell_bytes;
    c->ctrl = (collie_cell_ctrl *)region;
    c->check = (uint32_t *)(region + ctrl);
    c->data = region + ctrl + check;
    c->kernel_min = cfg->kernel_min;
    c->slots_max = cfg->slots_max;
    tp->cells = c;
    return COLLIE_OK;
}
