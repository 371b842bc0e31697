/*
 * shm_cells.c — the copy cells of the shm transport (layout in transport.h, used by
 * algorithms/cells.c) and the setting of where the kernel single copy is used instead.
 *
 * Size: COLLIE_SHM_CELL_BYTES (default 128 KiB) × COLLIE_SHM_CELLS (default 8) per rank,
 * of which one call cycles through at most COLLIE_SHM_CELLS_WINDOW (default 8), bounded per
 * job by COLLIE_SHM_CELLS_MAX_BYTES (default 64 MiB): above it the ring first loses the
 * cells beyond the window, then the cells shrink (halved down to 16 KiB), then their number
 * (down to 2); a job that still does not fit (more than 2048 ranks at the default bound)
 * has no cells.  Every process maps all the cells' pages when it joins (collie_shm_populate):
 * the cells take their whole size of memory from the start.
 *
 * Why rotating rings of 8 (COLLIE_SHM_CELLS_ROTATE, default on; transport.h): each lap
 * a rank fills the ring whose cells it has just read (its neighbour's), so the lines it
 * overwrites are in its own cache.  Without rotation a writer overwrites lines that the
 * other cores read last, which cost as much as the reading (Intel Xeon VM, 2026-12-04:
 * allgather P = 2 128 KiB fresh 14.5-15.5 us with 32 cells, 11.3-11.8 with 8 rotating;
 * docs/design.md).  The ring is short so that a lap's lines are still cached when the
 * rank comes back.  Until then the ring was 32 cells without rotation, so that a cell came
 * back only after the readers' copies left their private caches: overwriting lines that
 * another core has just read cost the writer 3-4x a plain copy on an AMD EPYC VM
 * (bench/overwrite_floor, docs/measurements.md; allreduce 128 KiB at P = 2 8.4-10.5 us
 * with 32 cells against 15.6-24 with 8, on 2026-11-28); rotation is not measured there,
 * and COLLIE_SHM_CELLS=32 COLLIE_SHM_CELLS_ROTATE=0 restores that layout.
 * A long call cycles its window only, and starts at the ring's first cell: with all 32
 * cells per call allreduce 8 MiB took 958-1243 us against 812-1052, and with windows
 * moving round the ring from call to call 504-893 against 410-665 (2026-11-29).
 *
 * Where the kernel single copy (process_vm_readv/writev) is used instead of the cells or
 * the slots for buffers that are not mapped: COLLIE_SHM_KERNEL_MIN fixes it (from that many
 * bytes; 0: never); unset, the rank that decides each call picks by timing its first calls
 * of each size class both ways (core/path_tune.c).  Rank 0 writes the setting into
 * the segment's header, so all ranks agree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/base.h"
#include "transport/shm_cells.h"

/* Cells an allreduce / reduce step may span: COLLIE_SHM_CELLS_PER_STEP (default 4), made a
 * power of two that divides the window and leaves room for two such steps in it. */
static uint32_t widest_step(uint32_t window) {
    long long want = collie_env_int("COLLIE_SHM_CELLS_PER_STEP", 4);
    if (want < 1 || want > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS_PER_STEP=%lld: need 1 .. 64; using 4", want);
        want = 4;
    }
    uint32_t w = 1;
    while (w * 2 <= (uint64_t)want && window % (w * 2) == 0 && w * 4 <= window)
        w *= 2;
    return w;
}

void collie_shm_cells_decide(int size, shm_cells_config *cfg) {
    long long bytes = collie_env_int("COLLIE_SHM_CELL_BYTES", 128 * 1024);
    long long n = collie_env_int("COLLIE_SHM_CELLS", 8);
    long long window = collie_env_int("COLLIE_SHM_CELLS_WINDOW", 8);
    long long max = collie_env_int("COLLIE_SHM_CELLS_MAX_BYTES", 64ll << 20);
    if (bytes < 4096 || bytes > (64ll << 20)) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELL_BYTES=%lld: need 4 KiB .. 64 MiB; using 128 KiB", bytes);
        bytes = 128 * 1024;
    }
    if (n < 2 || n > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS=%lld: need 2 .. 64; using 8", n);
        n = 8;
    }
    if (window < 2 || window > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS_WINDOW=%lld: need 2 .. 64; using 8", window);
        window = 8;
    }
    bytes = (bytes + 63) / 64 * 64;
    while ((long long)size * n * bytes > max && n > window)
        n--;
    while ((long long)size * n * bytes > max && bytes > 16384)
        bytes /= 2;
    while ((long long)size * n * bytes > max && n > 2)
        n--;
    bool fits = (long long)size * n * bytes <= max && size > 1;
    if (window > n)
        window = n;
    uint32_t widest = fits ? widest_step((uint32_t)window) : 0;
    /* wide steps take adjacent cells: the ring a multiple of them, so none wraps */
    n = widest ? n / widest * widest : n;
    cfg->ncells = fits ? (uint32_t)n : 0;
    cfg->window = fits ? (uint32_t)window : 0;
    cfg->step_cells = widest;
    cfg->cell_bytes = fits ? (uint64_t)bytes : 0;
    cfg->rotate = collie_env_int("COLLIE_SHM_CELLS_ROTATE", 1) != 0;
    cfg->stream = (int32_t)collie_env_int("COLLIE_SHM_STREAM", -1);
    if (cfg->stream == -1)
        cfg->stream = collie_shm_stream_known();   /* measured by an earlier segment, or -1 */
    if (!fits || !collie_stream_copy_native())
        cfg->stream = 0;
}

bool collie_shm_cells_shrink(shm_cells_config *cfg) {
    if (!cfg->ncells)
        return false;
    if (cfg->ncells > cfg->window) {
        cfg->ncells = cfg->window;   /* a multiple of step_cells, as the ring was */
        return true;
    }
    cfg->ncells = cfg->window = cfg->step_cells = 0;
    cfg->cell_bytes = 0;
    cfg->stream = 0;
    return true;
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
 * rounds; docs/measurements.md): at 32 and 64 MiB streaming took 0.46-0.93 of memcpy's
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

/* Measured (2026-12-04, Intel Xeon VM, collie-bench --coll alltoall --algo direct
 * --barrier-each [--fresh-data], malloc buffers, 2 rounds, µs): the own block's copy with
 * streaming stores against memcpy, P = 4 4 MiB blocks 2954-2966 against 3188-3374 reused,
 * 3332-3363 against 3822-3917 fresh; 8 MiB 8688-9194 against 9181-9627 reused, P = 3 8 MiB
 * 4504-4832 against 5030-5454; allgather P = 4 8 MiB 6139-6305 against 6585-6880; P = 2 4 MiB
 * 646-648 against 681-694 reused, fresh within the noise.  At 2 MiB blocks no gain (P = 3
 * fresh 1141-1185 against 1131-1138).  The rest of such a call is kernel copies or copies
 * out of mapped peers, which fill the cache with the output's other blocks: the own block's
 * lines would only evict them. */
#define OWN_STREAM_MIN (4u << 20)
uint64_t collie_shm_stream_own_min(void) {
    long long forced = collie_env_int("COLLIE_SHM_STREAM_OUT_MIN", -1);
    if (forced == 0 || !collie_stream_copy_native())
        return UINT64_MAX;
    return forced > 0 ? (uint64_t)forced : OWN_STREAM_MIN;
}

/* An allreduce `direct_segments` with every buffer mapped writes its reduced pieces into
 * the peers' outputs with streaming stores once the team's outputs together (P times the
 * call's bytes) reach this (algorithms/direct_access.c); COLLIE_SHM_STREAM_OUT_MIN, when
 * set, alone (collie_transport.stream_out_min; 0: never).
 * Where the outputs no longer fit the caches a plain store first reads its line from
 * memory (the read for ownership); a streaming store does not, and the reader would not
 * find the line in the writer's cache anyway.  Measured (2026-12-05, Intel Xeon VM,
 * collie-bench --coll allreduce --collie-alloc --min-bytes 8M --max-bytes 64M
 * --barrier-each [--fresh-data], µs, this rule / COLLIE_SHM_STREAM_OUT_MIN=0, 2 rounds):
 * P = 2 32 MiB 5098-5857 / 7342-7443 (fresh 5758-5951 / 7517-7956), 64 MiB 12346-12461 /
 * 15785-15856; P = 4 16 MiB 3356-3583 / 6903-7535 (fresh 6057-6894 / 8808-9553), 32 MiB
 * 10935-11409 / 16343-18031, 64 MiB 22608-22693 / 32874-33196.  At 32 MiB of outputs
 * streaming was slower: P = 2 16 MiB 1467-1524 against 1309-1457, P = 4 8 MiB 1513
 * against 1341, P = 8 4 MiB 1558 against 1375 (P = 8 8 MiB: 3920 against 7928). */
#define TEAM_STREAM_MIN (64ull << 20)
uint64_t collie_shm_stream_team_min(void) {
    if (collie_env_int("COLLIE_SHM_STREAM_OUT_MIN", -1) >= 0 || !collie_stream_copy_native())
        return UINT64_MAX;
    return TEAM_STREAM_MIN;
}

/* Blocks of an allgather, alltoall or reduce_scatter in registered memory from this size
 * (allgather: P − 1 times it) are read by the peers straight from there
 * (algorithms/cells_in_place.c); 0: never.  Each rank's
 * own setting: the ranks need not agree. */
#define LEND_MIN_DEFAULT (32u * 1024u)
uint64_t collie_shm_cells_lend_min(void) {
    long long forced = collie_env_int("COLLIE_SHM_CELLS_LEND_MIN", -1);
    if (forced == 0)
        return UINT64_MAX;
    return forced > 0 ? (uint64_t)forced : LEND_MIN_DEFAULT;
}

/* Declared in shm_cells.h.  Maps every page of [region, region + bytes) into this
 * process now, rather than at a call's first touch of each: a first touch costs a page
 * fault per 4 KiB, which made the first calls through the cells 15-20x slower (allreduce
 * 128 KiB, P = 2: 90 us against 5 with 32 cells) — and those first calls are the ones the
 * path trial times (core/path_tune.c).  MADV_POPULATE_WRITE (Linux 5.14) maps without
 * writing the contents; where the kernel does not know it, a read of one byte per page
 * maps the page.  Rank 0 allocated every page when it created the segment (shm_setup.c,
 * reserve_pages); should this fail otherwise all the same (no room: a touch would raise
 * SIGBUS), nothing is touched and a warning says so. */
void collie_shm_populate(char *region, size_t bytes, int rank, const char *what) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t step = page > 0 ? (uintptr_t)page : 4096;
    uintptr_t lo = (uintptr_t)region / step * step;
    uintptr_t hi = ((uintptr_t)region + bytes + step - 1) / step * step;
    if (!bytes)
        return;
#ifdef MADV_POPULATE_WRITE
    if (madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0)
        return;
    if (errno != EINVAL) {
        collie_log(COLLIE_LOG_WARN, "rank %d: cannot map the %zu bytes of %s (%s): is /dev/shm "
                   "large enough?", rank, (size_t)(hi - lo), what, strerror(errno));
        return;
    }
#endif
    for (uintptr_t at = lo; at < hi; at += step)
        (void)*(volatile char *)at;
}

int collie_shm_cells_wire(collie_transport *tp, char *region, const shm_cells_config *cfg) {
    if (!cfg->ncells)
        return COLLIE_OK;
    collie_shm_populate(region, collie_shm_cells_bytes(tp->size, cfg), tp->rank,
                        "the copy cells (COLLIE_SHM_CELLS_MAX_BYTES bounds them)");
    collie_cells *c = calloc(1, sizeof *c);
    if (!c)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the copy-cell table");
    size_t ctrl = ((size_t)tp->size * sizeof(collie_cell_ctrl) + 4095) & ~(size_t)4095;
    size_t check = ((size_t)tp->size * cfg->ncells * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    c->ncells = cfg->ncells;
    c->rings = (uint32_t)tp->size;
    c->rotate = cfg->rotate && tp->size > 1;
    c->window = cfg->window;
    c->step_cells = cfg->step_cells ? cfg->step_cells : 1;
    c->cell_bytes = cfg->cell_bytes;
    c->ctrl = (collie_cell_ctrl *)region;
    c->check = (uint32_t *)(region + ctrl);
    c->data = region + ctrl + check;
    c->kernel_min = cfg->kernel_min;
    c->slots_max = cfg->slots_max;
    c->lend_min = collie_shm_cells_lend_min();
    tp->cells = c;
    return COLLIE_OK;
}
