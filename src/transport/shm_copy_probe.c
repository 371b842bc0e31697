/*
 * shm_copy_probe.c — whether copies into the copy cells should bypass the cache
 * (collie_stream_copy, non-temporal stores) on this machine: measured once per job at
 * set-up by ranks 0 and 1, decided by rank 0 and stored in the segment header (shm_header.stream), so every
 * rank copies the same way (COLLIE_SHM_STREAM=0 or 1 fixes it instead).
 *
 * Why measured: it depends on the machine by a factor of ten.  On a 2-core AMD EPYC VM
 * (2026-11-26) a line one core wrote into a cell and the other core then read costs far
 * more than a trip through memory: a 2 MiB bcast through the cells took 917 µs with memcpy
 * into the cells and 83 µs with streaming stores (collie-bench --algo cells, P = 2, fresh
 * data; allreduce 2 MiB 974 -> 198 µs).  On the Intel Xeon VM of earlier sessions
 * streaming stores were no faster (bench/cells_floor; docs/performance.md).
 *
 * What it measures: the cells' own pattern.  Rank 1 (the writer) fills its ring of cells
 * step by step, PROBE_STEP bytes per step, publishing each step in probe_in; rank 0 (the
 * reader) copies every step out into private memory and frees it in probe_freed; the
 * writer refills a cell only once it is freed.  PROBE_ROUNDS rounds of PROBE_BYTES, the
 * writer copying with memcpy or with streaming stores by turns (the order below), the
 * first round of each way not counted; rank 0 times each round and takes streaming stores
 * when their best round took less than STREAM_GAIN of memcpy's best, and the two ranks never
 * ran on one core during the measurement (with more ranks than cores they may: then it
 * measured one core's cache, and memcpy stays).
 *
 * Cost: about 2 ms at set-up where memcpy is slow, well under 1 ms elsewhere.  Bounded:
 * the waits spin, then yield (ranks may share a core), and give up PROBE_BUDGET_NS after
 * the probe began (a peer slow to start, or dead); then rank 0 takes memcpy and set-up
 * goes on, its own waits catching a dead rank.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "transport/shm_segment.h"

#define PROBE_ROUNDS 8
#define PROBE_BYTES (512u << 10)
#define PROBE_STEP (64u << 10)
#define PROBE_BUDGET_NS 50000000ull
#define STREAM_GAIN 0.8

static const bool stream_round[PROBE_ROUNDS] = { false, true, true, false, false, true, true, false };

/* Waits until *w reaches t; false once the probe's time is up. */
static bool wait_step(_Atomic int32_t *w, int32_t t, uint64_t give_up) {
    for (unsigned spins = 0; atomic_load_explicit(w, memory_order_acquire) < t; spins++) {
        if (spins < 4096)
            continue;
        sched_yield();
        if (spins % 64 == 0 && collie_now_ns() > give_up)
            return false;
    }
    return true;
}

static uint64_t step_bytes(const collie_cells *c) {
    return c->cell_bytes < PROBE_STEP ? c->cell_bytes : PROBE_STEP;
}

/* Rank 1: every round's steps into its cells, memcpy or streaming by turns. */
static void write_rounds(collie_transport *tp, shm_header *h, char *src, uint64_t give_up) {
    const collie_cells *c = tp->cells;
    uint64_t n = step_bytes(c);
    int32_t steps = (int32_t)(PROBE_BYTES / n), t = 0, ring = (int32_t)c->ncells;
    for (int r = 0; r < PROBE_ROUNDS; r++)
        for (int32_t k = 0; k < steps; k++) {
            t++;
            if (t > ring && !wait_step(&h->probe_freed, t - ring, give_up))
                return;
            char *cell = collie_cell(c, 1, (uint64_t)t);
            if (stream_round[r])
                collie_stream_copy(cell, src, n);
            else
                memcpy(cell, src, n);
            atomic_store_explicit(&h->probe_cpu, sched_getcpu() + 1, memory_order_relaxed);
            atomic_store_explicit(&h->probe_in, t, memory_order_release);
        }
}

/* Rank 0: copies every step out, times each round; true when streaming clearly won. */
static bool read_rounds(collie_transport *tp, shm_header *h, char *dst, uint64_t give_up) {
    const collie_cells *c = tp->cells;
    uint64_t n = step_bytes(c), best[2] = { UINT64_MAX, UINT64_MAX };
    int32_t steps = (int32_t)(PROBE_BYTES / n), t = 0;
    bool seen[2] = { false, false }, one_core = false;
    for (int r = 0; r < PROBE_ROUNDS; r++) {
        uint64_t t0 = collie_now_ns();
        for (int32_t k = 0; k < steps; k++) {
            t++;
            if (!wait_step(&h->probe_in, t, give_up))
                return false;
            memcpy(dst, collie_cell(c, 1, (uint64_t)t), n);
            one_core |= atomic_load_explicit(&h->probe_cpu, memory_order_relaxed) == sched_getcpu() + 1;
            atomic_store_explicit(&h->probe_freed, t, memory_order_release);
        }
        uint64_t dt = collie_now_ns() - t0;
        int way = stream_round[r];
        if (seen[way] && dt < best[way])
            best[way] = dt;
        seen[way] = true;
    }
    bool stream = !one_core && (double)best[1] < STREAM_GAIN * (double)best[0];
    collie_log(COLLIE_LOG_INFO, "copies into the cells: %.1f us per %u KiB with memcpy, %.1f us "
               "with streaming stores (best of %d rounds each%s): taking %s", best[0] / 1e3,
               PROBE_BYTES >> 10, best[1] / 1e3, PROBE_ROUNDS / 2 - 1,
               one_core ? "; ranks 0 and 1 shared a core, so not between cores" : "",
               stream ? "streaming stores" : "memcpy");
    return stream;
}

void collie_shm_stream_probe(collie_transport *tp) {
    shm_impl *im = tp->impl;
    shm_header *h = im->hdr;
    bool measure = h->cells.stream == -1 && tp->cells && tp->size > 1;
    if (measure && tp->rank <= 1) {
        uint64_t give_up = collie_now_ns() + PROBE_BUDGET_NS;
        char *buf = malloc(step_bytes(tp->cells));
        bool stream = false;
        if (buf) {
            memset(buf, tp->rank + 1, step_bytes(tp->cells));
            if (tp->rank == 1)
                write_rounds(tp, h, buf, give_up);
            else
                stream = read_rounds(tp, h, buf, give_up);
            free(buf);
        }
        if (tp->rank == 0)
            atomic_store_explicit(&h->stream, stream, memory_order_relaxed);
    } else if (tp->rank == 0) {
        atomic_store_explicit(&h->stream, h->cells.stream == 1, memory_order_relaxed);
    }
    if (tp->rank == 0)
        atomic_store_explicit(&h->stream_decided, 1, memory_order_release);
}
