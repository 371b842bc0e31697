/*
 * shm_cells.c — the copy cells of the shm transport (layout in transport.h, used by
 * algorithms/cells.c) and the start-up measurement that decides where the kernel single
 * copy (process_vm_readv) is used instead of them.
 *
 * Size: COLLIE_SHM_CELL_BYTES (default 128 KiB) × COLLIE_SHM_CELLS (default 4) per rank,
 * bounded per job by COLLIE_SHM_CELLS_MAX_BYTES (default 64 MiB): above it the cells shrink
 * (halved down to 16 KiB), then their number (down to 2); a job that still does not fit
 * (more than 2048 ranks at the default bound) has no cells.  Pages of /dev/shm are only
 * allocated when touched, so an unused cell costs nothing.
 *
 * Measurement (rank 0, while creating the segment; about 1 ms of CPU, 20-25 ms of wall time
 * measured at a load average of 38 on 2 cores): for 1 MiB, 256 KiB and 32 KiB, the best of
 * 5 process_vm_readv of this process's own memory and the best of 5 memcpy, interleaved.  Through the cells, allreduce at P = 2 copies 3 × n/2 in user space
 * (copy-in, result into the cell, copy-out) where the kernel path copies 2 × n/2
 * (readv, writev), and bcast copies in and out concurrently: so the kernel copy is taken
 * to win where it costs less than 1.5 memcpys.  It is used from the smallest of these
 * sizes from which it wins at that size and every larger one; never when it loses at
 * 1 MiB.  COLLIE_SHM_KERNEL_MIN overrides (bytes; 0:
 * never).  Every rank reads the result from the segment's header, so all agree.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/base.h"
#include "transport/shm_cells.h"

void collie_shm_cells_decide(int size, shm_cells_config *cfg) {
    long long bytes = collie_env_int("COLLIE_SHM_CELL_BYTES", 128 * 1024);
    long long n = collie_env_int("COLLIE_SHM_CELLS", 4);
    long long max = collie_env_int("COLLIE_SHM_CELLS_MAX_BYTES", 64ll << 20);
    if (bytes < 4096 || bytes > (64ll << 20)) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELL_BYTES=%lld: need 4 KiB .. 64 MiB; using 128 KiB", bytes);
        bytes = 128 * 1024;
    }
    if (n < 2 || n > 64) {
        collie_log(COLLIE_LOG_WARN, "COLLIE_SHM_CELLS=%lld: need 2 .. 64; using 4", n);
        n = 4;
    }
    bytes = (bytes + 63) / 64 * 64;
    while ((long long)size * n * bytes > max && bytes > 16384)
        bytes /= 2;
    while ((long long)size * n * bytes > max && n > 2)
        n--;
    bool fits = (long long)size * n * bytes <= max && size > 1;
    cfg->ncells = fits ? (uint32_t)n : 0;
    cfg->cell_bytes = fits ? (uint64_t)bytes : 0;
}

size_t collie_shm_cells_bytes(int size, const shm_cells_config *cfg) {
    if (!cfg->ncells)
        return 0;
    size_t ctrl = (size_t)size * sizeof(collie_cell_ctrl);
    size_t check = ((size_t)size * cfg->ncells * sizeof(uint32_t) + 4095) & ~(size_t)4095;
    return ((ctrl + 4095) & ~(size_t)4095) + check + (size_t)size * cfg->ncells * cfg->cell_bytes;
}

/* Best of `reps` turns of each, interleaved (the machine may be loaded): *copy, *kernel. */
static void best_of(int reps, char *d, const char *s, size_t n, uint64_t *copy, uint64_t *kernel) {
    *copy = *kernel = UINT64_MAX;
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = collie_now_ns();
        memcpy(d, s, n);
        __asm__ __volatile__("" ::"r"(d) : "memory");
        uint64_t t1 = collie_now_ns();
        struct iovec local = { d, n }, remote = { (void *)s, n };
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)n)
            memset(d, 0, 1);    /* cannot happen for our own memory; the time still counts */
        uint64_t t2 = collie_now_ns();
        *copy = t1 - t0 < *copy ? t1 - t0 : *copy;
        *kernel = t2 - t1 < *kernel ? t2 - t1 : *kernel;
    }
}

uint64_t collie_shm_measure_kernel_min(void) {
    long long forced = collie_env_int("COLLIE_SHM_KERNEL_MIN", -1);
    if (forced >= 0)
        return forced == 0 ? UINT64_MAX : (uint64_t)forced;
    static const size_t sizes[] = { 32 * 1024, 256 * 1024, 1024 * 1024 };
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    size_t top = sizes[nsizes - 1];
    char *a = malloc(top), *b = malloc(top);
    uint64_t from = UINT64_MAX;
    if (!a || !b) {
        free(a);
        free(b);
        return from;
    }
    uint64_t t0 = collie_now_ns();
    memset(a, 1, top);
    memset(b, 2, top);
    for (int i = nsizes - 1; i >= 0; i--) {
        uint64_t copy, kernel;
        best_of(5, b, a, sizes[i], &copy, &kernel);
        collie_log(COLLIE_LOG_INFO, "start-up measurement, %zu bytes: process_vm_readv %.1f us, "
                   "memcpy %.1f us", sizes[i], kernel / 1e3, copy / 1e3);
        if (2 * kernel >= 3 * copy)
            break;
        from = sizes[i];
    }
    free(a);
    free(b);
    collie_log(COLLIE_LOG_INFO, "start-up measurement took %.2f ms: the kernel copy is used from "
               "%llu bytes (%s)", (collie_now_ns() - t0) / 1e6, (unsigned long long)from,
               from == UINT64_MAX ? "never" : "where a buffer is not mapped");
    return from;
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
    c->cell_bytes = cfg->cell_bytes;
    c->ctrl = (collie_cell_ctrl *)region;
    c->check = (uint32_t *)(region + ctrl);
    c->data = region + ctrl + check;
    c->kernel_min = cfg->kernel_min;
    c->slots_max = cfg->slots_max;
    tp->cells = c;
    return COLLIE_OK;
}
