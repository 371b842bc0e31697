/*
 * shm_copy_probe.c — whether copies into the copy cells should bypass the cache
 * (collie_stream_copy, non-temporal stores) on this machine: measured once per job at
 * set-up by ranks 0 and 1, decided by rank 0 and stored in the segment header (shm_header.stream), so
 * every rank copies the same way (COLLIE_SHM_STREAM=0 or 1 fixes it instead).
 *
 * Why measured: it depends on the machine by a factor of ten.  On a 2-core AMD EPYC VM
 * (2026-11-26) a line one core wrote into a cell and the other core then read costs far
 * more than a trip through memory: a 2 MiB bcast through the cells took 917 µs with memcpy
 * into the cells and 83 µs with streaming stores (collie-bench --algo cells, P = 2, fresh
 * data; allreduce 2 MiB 974 -> 198 µs).  On the Intel Xeon VM of earlier sessions
 * streaming stores were no faster (bench/cells_floor; docs/performance.md).
 *
 * What it measures: the cells' own pattern.  Rank 1 (the writer) fills the window of cells
 * that a long call cycles through (collie_cells.window) step by step, PROBE_STEP bytes
 * per step, publishing each step in probe_in; rank 0 (the reader) copies every step out
 * into private memory and frees it in probe_freed; the writer refills a cell only once it
 * is freed.  Rounds of PROBE_BYTES, the writer copying
 * with memcpy or with streaming stores by turns (way_of), until each way has PROBE_COUNTED
 * rounds after its first (not counted) that ran between two cores: a round during which
 * both ranks ran on one core measures one core's cache, not the copy between cores, and is
 * left out (right after fork the two processes often start on one core, until the
 * scheduler moves one).  Rank 0 times each round and takes streaming stores when their
 * best round took less than STREAM_GAIN of memcpy's best.  Where the two ranks keep
 * sharing a core (more ranks than cores, or both bound to one) memcpy stays.

 * Once per process: the answer of the first segment a process joins is kept
 * (collie_shm_stream_known), and a later segment whose rank 0 already knows it (sub-teams,
 * the MPI layer's communicators) takes it without measuring.
 *
 * Cost: 1–2 ms at set-up where memcpy is slow, less elsewhere; at most PROBE_ROUNDS_MAX
 * rounds.  Bounded in time too: the waits spin, then yield (ranks may share a core), and
 * give up PROBE_BUDGET_NS after the probe began (a peer slow to start, or dead); then
 * rank 0 takes memcpy and set-up goes on, its own waits catching a dead rank.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/shm_segment.h"

#define PROBE_ROUNDS_MAX 40
#define PROBE_COUNTED 2         /* counted rounds of each way, after one uncounted */
#define PROBE_BYTES (512u << 10)
#define PROBE_STEP (64u << 10)
#define PROBE_BUDGET_NS 50000000ull
#define STREAM_GAIN 0.8

static _Atomic int known_answer = -1;

int collie_shm_stream_known(void) { return atomic_load(&known_answer); }

void collie_shm_stream_remember(bool stream) {
    int none = -1;
    atomic_compare_exchange_strong(&known_answer, &none, stream ? 1 : 0);
}

/* Round r's way: memcpy, streaming, streaming, memcpy, and again (a trend favours neither). */
static int way_of(int r) { return (r % 4 == 1 || r % 4 == 2) ? 1 : 0; }

/* Waits until *w reaches t; false once the probe's time is up or the reader said stop. */
static bool wait_step(_Atomic int32_t *w, int32_t t, _Atomic int32_t *stop, uint64_t give_up) {
    for (unsigned spins = 0; atomic_load_explicit(w, memory_order_acquire) < t; spins++) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed))
            return false;
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

/* Rank 1: round after round into its cells, by the rounds' ways, until rank 0 says stop. */
static void write_rounds(collie_transport *tp, shm_header *h, char *src, uint64_t give_up) {
    const collie_cells *c = tp->cells;
    uint64_t n = step_bytes(c);
    int32_t steps = (int32_t)(PROBE_BYTES / n), t = 0, ring = (int32_t)c->window;
    for (int r = 0; r < PROBE_ROUNDS_MAX; r++)
        for (int32_t k = 0; k < steps; k++) {
            t++;
            if (t > ring && !wait_step(&h->probe_freed, t - ring, &h->probe_stop, give_up))
                return;
            char *cell = collie_cell(c, 1, (uint64_t)((t - 1) % ring + 1), false);
            if (way_of(r))
                collie_stream_copy(cell, src, n);
            else
                memcpy(cell, src, n);
            atomic_store_explicit(&h->probe_cpu, sched_getcpu() + 1, memory_order_relaxed);
            atomic_store_explicit(&h->probe_in, t, memory_order_release);
        }
}

typedef struct probe_tally {
    uint64_t best[2];       /* ns, per way, over counted rounds */
    int rounds[2];          /* rounds between two cores so far, per way */
    int one_core;           /* rounds during which the two ranks shared a core */
} probe_tally;

static bool tally_done(const probe_tally *y) {
    return y->rounds[0] > PROBE_COUNTED && y->rounds[1] > PROBE_COUNTED;
}

/* Rank 0: copies every step out and times each round; a round during which both ranks ran
 * on one core (the writer's last CPU is the reader's) is not counted.  False when out of
 * time. */
static bool read_rounds(collie_transport *tp, shm_header *h, char *dst, uint64_t give_up,
                        probe_tally *y) {
    const collie_cells *c = tp->cells;
    uint64_t n = step_bytes(c);
    int32_t steps = (int32_t)(PROBE_BYTES / n), t = 0, ring = (int32_t)c->window;
    for (int r = 0; r < PROBE_ROUNDS_MAX && !tally_done(y); r++) {
        uint64_t t0 = collie_now_ns();
        bool shared = false;
        for (int32_t k = 0; k < steps; k++) {
            t++;
            if (!wait_step(&h->probe_in, t, NULL, give_up))
                return false;
            memcpy(dst, collie_cell(c, 1, (uint64_t)((t - 1) % ring + 1), false), n);
            shared |= atomic_load_explicit(&h->probe_cpu, memory_order_relaxed) == sched_getcpu() + 1;
            atomic_store_explicit(&h->probe_freed, t, memory_order_release);
        }
        uint64_t dt = collie_now_ns() - t0;
        int way = way_of(r);
        if (shared) {   /* sleep briefly: a waking task goes to an idle core if there is one */
            y->one_core++;
            nanosleep(&(struct timespec){ 0, 200000 }, NULL);
            continue;
        }
        if (y->rounds[way]++ > 0 && dt < y->best[way])   /* the first is not counted */
            y->best[way] = dt;
    }
    return true;
}

/* Rank 0: measures, says stop, and returns the answer (logged). */
static bool measure(collie_transport *tp, shm_header *h, char *buf, uint64_t give_up) {
    probe_tally y = { { UINT64_MAX, UINT64_MAX }, { 0, 0 }, 0 };
    bool in_time = read_rounds(tp, h, buf, give_up, &y);
    atomic_store_explicit(&h->probe_stop, 1, memory_order_relaxed);
    if (!tally_done(&y)) {
        collie_log(COLLIE_LOG_INFO, "copies into the cells: memcpy (%s: %d and %d rounds between "
                   "two cores, %d on one core)", in_time ? "ranks 0 and 1 shared a core" : "out of time",
                   y.rounds[0], y.rounds[1], y.one_core);
        return false;
    }
    bool stream = (double)y.best[1] < STREAM_GAIN * (double)y.best[0];
    collie_log(COLLIE_LOG_INFO, "copies into the cells: %.1f us per %u KiB with memcpy, %.1f us "
               "with streaming stores (best of %d rounds each; %d rounds on one core not "
               "counted): taking %s", y.best[0] / 1e3, PROBE_BYTES >> 10, y.best[1] / 1e3,
               PROBE_COUNTED, y.one_core, stream ? "streaming stores" : "memcpy");
    return stream;
}

void collie_shm_stream_probe(collie_transport *tp) {
    shm_impl *im = tp->impl;
    shm_header *h = im->hdr;
    bool wanted = h->cells.stream == -1 && tp->cells && tp->size > 1;
    if (wanted && tp->rank <= 1) {
        uint64_t give_up = collie_now_ns() + PROBE_BUDGET_NS;
        char *buf = malloc(step_bytes(tp->cells));
        bool stream = false;
        if (buf) {
            memset(buf, tp->rank + 1, step_bytes(tp->cells));
            if (tp->rank == 1)
                write_rounds(tp, h, buf, give_up);
            else
                stream = measure(tp, h, buf, give_up);
            free(buf);
        }
        if (tp->rank == 0)
            atomic_store_explicit(&h->stream, stream, memory_order_relaxed);
    } else if (tp->rank == 0) {
        atomic_store_explicit(&h->stream, h->cells.stream == 1, memory_order_relaxed);
    }
    if (tp->rank == 0) {   /* also when rank 0 could not measure: the writer stops waiting */
        atomic_store_explicit(&h->probe_stop, 1, memory_order_relaxed);
        atomic_store_explicit(&h->stream_decided, 1, memory_order_release);
    }
}
