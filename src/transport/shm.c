/*
 * shm.c — the shared-memory transport: ranks on one machine started by collie-run
 * (COLLIE_RANK, COLLIE_SIZE, COLLIE_JOB).
 *
 * collie_shm_create_with() builds the same transport from an explicit rank, size and job
 * name, with an optional bootstrap (`agree`: every rank learns the worst status) that the
 * MPI layer provides, so no rank waits for a segment that failed to appear.
 *
 * One POSIX shared-memory object per job, /collie-<job>, created by rank 0 and unlinked
 * as soon as every rank has mapped it (so nothing is left behind even after a crash;
 * collie-run also removes /dev/shm/collie-<job>* at the end).  Layout: a header page,
 * one control block per rank (pid, state, doorbell futex), the board (direct_access.c),
 * one inbox per rank (channels.c), then the copy cells (shm_cells.c); its types are in
 * shm_segment.h, its set-up in shm_setup.c.  Waits spin briefly, then sleep on the rank's
 * doorbell futex; a writer rings the doorbell only when the reader announced that it
 * sleeps.  Dead peers are found by pid (kill(pid, 0), zombie state in /proc) while waiting.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "transport/channels.h"
#include "transport/shm_cells.h"
#include "transport/shm_mem.h"
#include "transport/shm_segment.h"

static shm_ctrl *ctrl_of(collie_transport *tp, int r) { return &((shm_impl *)tp->impl)->ctrl[r]; }

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts) {
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

/* Called by collie_wake_flush after its full fence. */
static void shm_wake(collie_transport *tp, int peer) {
    shm_ctrl *c = ctrl_of(tp, peer);
    if (atomic_load_explicit(&c->sleeping, memory_order_relaxed)) {
        atomic_fetch_add(&c->doorbell, 1);
        futex(&c->doorbell, FUTEX_WAKE, INT_MAX, NULL);
    }
}

static bool shm_peer_sleeps(collie_transport *tp, int peer) {
    return atomic_load_explicit(&ctrl_of(tp, peer)->sleeping, memory_order_relaxed) != 0;
}

static uint32_t shm_sleep_prepare(collie_transport *tp) {
    shm_ctrl *c = ctrl_of(tp, tp->rank);
    uint32_t token = atomic_load(&c->doorbell);
    atomic_store(&c->sleeping, 1);
    atomic_thread_fence(memory_order_seq_cst);
    return token;
}

static void shm_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns) {
    struct timespec ts = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };
    futex(&ctrl_of(tp, tp->rank)->doorbell, FUTEX_WAIT, token, &ts);
}

static void shm_sleep_done(collie_transport *tp) {
    atomic_store_explicit(&ctrl_of(tp, tp->rank)->sleeping, 0, memory_order_relaxed);
}

/* true if pid is gone or a zombie. */
bool collie_shm_process_dead(int pid) {
    if (pid <= 0)
        return true;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return true;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && (p[2] == 'Z' || p[2] == 'X');
}

/* peer left because rank `culprit` failed: name the culprit, not the survivor. */
static int left_because(collie_transport *tp, int peer, int culprit) {
    collie_transport_blame(tp, culprit);
    if (culprit == tp->rank)
        return collie_fail(COLLIE_ERR_PEER, "rank %d left because this rank made no progress "
                           "(stopped or silent past its watchdog COLLIE_TIMEOUT_MS)", peer);
    int pid = atomic_load(&ctrl_of(tp, culprit)->pid);
    if (culprit != tp->rank && collie_shm_process_dead(pid))
        return collie_fail(COLLIE_ERR_PEER, "rank %d (pid %d) died (rank %d saw it and left "
                           "while this rank waited for it)", culprit, pid, peer);
    return collie_fail(COLLIE_ERR_PEER, "rank %d failed or stayed silent (rank %d saw it and "
                       "left while this rank waited for it)", culprit, peer);
}

static int shm_check_peer(collie_transport *tp, int peer) {
    shm_ctrl *c = ctrl_of(tp, peer);
    int state = atomic_load(&c->state);
    int cause = atomic_load(&c->cause);
    if (state == RANK_FINALIZED && cause > 0 && cause <= tp->size)
        return left_because(tp, peer, cause - 1);
    if (state == RANK_FINALIZED)
        return collie_fail(COLLIE_ERR_PEER, "rank %d already called collie_finalize (or "
                           "collie_team_free on this team) while this rank still waits for it",
                           peer);
    int pid = atomic_load(&c->pid);
    if (collie_shm_process_dead(pid)) {
        collie_transport_blame(tp, peer);
        return collie_fail(COLLIE_ERR_PEER, "rank %d (pid %d) died", peer, pid);
    }
    return COLLIE_OK;
}

/* Live shm transports of this process (a world and its sub-teams): the cache of peers'
 * collie_alloc blocks mapped here is shared by all, so only the last one drops it (a
 * pending call of another team may still read through a mapping). */
static _Atomic int live_transports;

static void shm_destroy(collie_transport *tp) {
    shm_impl *im = tp->impl;
    if (im && im->base && im->ctrl) {
        atomic_store(&im->ctrl[tp->rank].cause, tp->blame);
        atomic_store(&im->ctrl[tp->rank].state, RANK_FINALIZED);
        munmap(im->base, im->bytes);
    }
    if (collie_shm_heap_peer_reads())
        collie_log(COLLIE_LOG_DEBUG, "used peers' shared-heap buffers in place %llu times",
                   (unsigned long long)collie_shm_heap_peer_reads());
    if (atomic_fetch_sub(&live_transports, 1) == 1)
        collie_shm_mem_unmap_peers();
    free(tp->cells);
    free(im);
    collie_channels_free(tp);
    free(tp);
}

static const collie_transport_ops shm_ops = {
    "shm", shm_wake, shm_sleep_prepare, shm_sleep, shm_sleep_done, shm_check_peer,
    collie_shm_mem_alloc, collie_shm_mem_free, shm_destroy, NULL, collie_shm_mem_find,
    collie_shm_mem_map_peer, shm_peer_sleeps,
};

static int read_env(int *rank, int *size, const char **job) {
    const char *r = getenv("COLLIE_RANK"), *s = getenv("COLLIE_SIZE");
    *job = getenv("COLLIE_JOB");
    char *end1, *end2;
    long lr = r ? strtol(r, &end1, 10) : -1, ls = s ? strtol(s, &end2, 10) : -1;
    if (!r || !s || !*job || *end1 || *end2 || ls < 1 || lr < 0 || lr >= ls || ls > 65536)
        return collie_fail(COLLIE_ERR_ARG, "bad launcher environment: COLLIE_RANK=%s "
                           "COLLIE_SIZE=%s COLLIE_JOB=%s (start the program with collie-run)",
                           r ? r : "(unset)", s ? s : "(unset)", *job ? *job : "(unset)");
    for (const char *c = *job; *c; c++)
        if (!(*c == '-' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            return collie_fail(COLLIE_ERR_ARG, "COLLIE_JOB=%s may only hold letters, digits, - and _", *job);
    *rank = (int)lr;
    *size = (int)ls;
    return COLLIE_OK;
}

int collie_shm_create_with(const collie_shm_config *cfg, collie_transport **out) {
    if (!cfg || !out || cfg->size < 1 || cfg->rank < 0 || cfg->rank >= cfg->size || !cfg->job)
        return collie_fail(COLLIE_ERR_ARG, "collie_shm_create_with: bad rank %d / size %d / job",
                           cfg ? cfg->rank : -1, cfg ? cfg->size : -1);
    collie_transport *tp = calloc(1, sizeof *tp);
    shm_impl *im = calloc(1, sizeof *im);
    if (!tp || !im) {
        free(tp);
        free(im);
        int st = collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the shm transport");
        if (cfg->agree)   /* the others wait in the set-up's first agreement: fail it there */
            (void)cfg->agree(cfg->agree_ctx, st);
        return st;
    }
    tp->ops = &shm_ops;
    tp->impl = im;
    atomic_fetch_add(&live_transports, 1);   /* shm_destroy takes it back on every path */
    tp->rank = cfg->rank;
    tp->size = cfg->size;
    tp->shared_memory = true;
    tp->oversubscribed = cfg->size > collie_shm_count_cpus();
    /* Measured on an Intel Xeon VM (P = 2): 256 B - 8 KiB calls 0.1-0.2 µs faster with the
     * slot demoted; larger calls and ranks sharing cores slower (executor.c put_progress). */
    long long demote = collie_env_int("COLLIE_SHM_DEMOTE_MAX", tp->oversubscribed ? 0 : 8192);
    tp->demote_max_bytes = demote > 0 ? (uint64_t)demote : 0;
    tp->stream_out_min = collie_shm_stream_out_min();
    tp->stream_own_min = collie_shm_stream_own_min();
    tp->stream_team_min = collie_shm_stream_team_min();
    tp->by_reference_min_bytes = (uint64_t)collie_env_int("COLLIE_SHM_BY_REFERENCE_MIN", 4096);
    /* No cap by default (issue 14: collie_alloc memory is read in place at every size);
     * COLLIE_SHM_BY_REFERENCE_MAX caps it (4 MiB measured better for forced
     * ring_pipelined at P = 2, 8 MiB; auto takes direct_segments there). */
    long long by_ref_max = collie_env_int("COLLIE_SHM_BY_REFERENCE_MAX", 0);
    tp->by_reference_max_call_bytes = by_ref_max > 0 ? (uint64_t)by_ref_max : UINT64_MAX;
    snprintf(im->name, sizeof im->name, "/collie-%s", cfg->job);
    im->pids = cfg->pids;
    /* Like MPI_Init, set-up waits for ranks that have not arrived yet as long as the ranks
     * that did are alive; COLLIE_TIMEOUT_MS (opt-in) bounds it. */
    long long timeout_ms = collie_env_int("COLLIE_TIMEOUT_MS", 0);
    uint64_t deadline = timeout_ms > 0 ? collie_now_ns() + (uint64_t)timeout_ms * 1000000ull
                                       : UINT64_MAX;
    int st = collie_shm_setup(tp, cfg, deadline);
    im->pids = NULL;
    if (st) {
        if (cfg->rank == 0 && im->base)
            shm_unlink(im->name);
        shm_destroy(tp);
        return st;
    }
    *out = tp;
    return COLLIE_OK;
}

int collie_shm_create(collie_transport **out) {
    collie_shm_config cfg = { 0, 0, NULL, NULL, NULL, NULL, false };
    int st = read_env(&cfg.rank, &cfg.size, &cfg.job);
    return st ? st : collie_shm_create_with(&cfg, out);
}
