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
 * one inbox per rank (channels.c), then the copy cells (shm_cells.c).  Waits spin briefly, then sleep on the rank's doorbell futex; a writer
 * rings the doorbell only when the reader announced that it sleeps.  Dead peers are found
 * by pid (kill(pid, 0), zombie state in /proc) while waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "transport/channels.h"
#include "transport/shm_cells.h"
#include "transport/shm_mem.h"
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
    /* The copy cells (shm_cells.c), with rank 0's measurement of where the kernel copy
     * beats them. */
    shm_cells_config cells;
} shm_header;

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

static const uint64_t probe_word = SHM_MAGIC;

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
static bool process_dead(int pid) {
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
    if (culprit != tp->rank && process_dead(pid))
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
    if (process_dead(pid)) {
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
    collie_shm_mem_map_peer,
};


/* ---- set-up ----------------------------------------------------------------------------- */

static size_t round_page(size_t n) { return (n + 4095) & ~(size_t)4095; }

static size_t inbox_stride(int size, uint32_t nslots, uint32_t slot_bytes) {
    return round_page(collie_inbox_bytes(size, nslots, slot_bytes));
}

/* Everything before the cells. */
static size_t channels_end(int size, uint32_t nslots, uint32_t slot_bytes) {
    return HEADER_BYTES + round_page((size_t)size * sizeof(shm_ctrl)) +
           round_page((size_t)size * sizeof(collie_board_entry)) +
           (size_t)size * inbox_stride(size, nslots, slot_bytes);
}

static void pause_briefly(void) {
    struct timespec ts = { 0, 100000 };
    nanosleep(&ts, NULL);
}

static int count_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Messages from 256 KiB go single-copy in every call.  In calls up to 1 MiB, messages from
 * 32 KiB do too when every rank has a core: measured at P = 2 (docs/performance.md),
 * 64 KiB bcast 7.9 -> 2.9 us, 1 MiB 98 -> 68 us (reductions: not in the mid range, see
 * use_direct in core/executor.c).
 * Not above 1 MiB (the pipeline segments of chain and ring_pipelined would each wait for
 * their reader: 2 MiB ring_pipelined 285 -> 498 us), and not with more ranks than cores
 * (a sender waits for a reader that is not running: P = 8 32 KiB reduce 15 -> 26 us). */
static void decide_direct_thresholds(shm_header *h, int size) {
    bool oversubscribed = size > count_cpus();
    h->direct_min = (uint64_t)collie_env_int("COLLIE_SHM_DIRECT_MIN", 256 * 1024);
    h->direct_mid_min = (uint64_t)collie_env_int("COLLIE_SHM_DIRECT_MID_MIN",
                                                 oversubscribed ? 0 : 32 * 1024);
    h->direct_mid_max_call = (uint64_t)collie_env_int("COLLIE_SHM_DIRECT_MID_MAX", 1 << 20);
    if (h->direct_mid_min == 0)
        h->direct_mid_min = UINT64_MAX;        /* 0: off */
}

/* The text of an environment variable for a message. */
static const char *env_text(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : "(default)";
}

/* kernel_min: the copy cells' kernel-copy threshold to use (0: measure it here). */
static int create_segment(shm_impl *im, int size, long long slots, long long sbytes,
                          uint64_t kernel_min) {
    if (slots < 2 || slots > 1024 || (slots & (slots - 1)) || sbytes < 64 || sbytes > (64 << 20) || sbytes % 64)
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_SHM_SLOTS=%.32s / COLLIE_SHM_SLOT_BYTES=%.32s: need "
                           "a power of two 2..1024 slots of 64 bytes .. 64 MiB (a multiple of 64)",
                           env_text("COLLIE_SHM_SLOTS"), env_text("COLLIE_SHM_SLOT_BYTES"));
    uint32_t nslots = (uint32_t)slots, slot_bytes = (uint32_t)sbytes;
    shm_cells_config cells;
    collie_shm_cells_decide(size, &cells);
    im->bytes = channels_end(size, nslots, slot_bytes) + collie_shm_cells_bytes(size, &cells);
    int fd = shm_open(im->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot create shared memory %s: %s", im->name,
                           strerror(errno));
    if (ftruncate(fd, (off_t)im->bytes) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(im->name);
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot size shared memory %s to %zu bytes: %s",
                           im->name, im->bytes, strerror(e));
    }
    im->base = mmap(NULL, im->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (im->base == MAP_FAILED) {
        im->base = NULL;
        shm_unlink(im->name);
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot map shared memory %s: %s", im->name,
                           strerror(errno));
    }
    im->hdr = (shm_header *)im->base;
    im->hdr->size = size;
    im->hdr->nslots = nslots;
    im->hdr->slot_bytes = slot_bytes;
    im->hdr->total_bytes = im->bytes;
    decide_direct_thresholds(im->hdr, size);
    if (size <= 1)
        kernel_min = UINT64_MAX;
    cells.kernel_min = kernel_min ? kernel_min : collie_shm_measure_kernel_min();
    cells.slots_max = (uint64_t)collie_env_int("COLLIE_SHM_SLOTS_MAX", 512 << 10);
    im->hdr->cells = cells;
    atomic_store_explicit(&im->hdr->magic, SHM_MAGIC, memory_order_release);
    return COLLIE_OK;
}

/* Opens the segment rank 0 creates, waiting for it until the deadline. */
static int open_segment(shm_impl *im, uint64_t deadline) {
    int fd;
    struct stat st;
    for (;;) {
        fd = shm_open(im->name, O_RDWR, 0);
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= HEADER_BYTES)
            break;
        if (fd >= 0)
            close(fd);
        if (collie_now_ns() > deadline)
            return collie_fail(COLLIE_ERR_PEER, "timed out waiting for rank 0 to create the "
                               "shared memory %s", im->name);
        pause_briefly();
    }
    im->bytes = (size_t)st.st_size;
    im->base = mmap(NULL, im->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (im->base == MAP_FAILED) {
        im->base = NULL;
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot map shared memory %s: %s", im->name,
                           strerror(errno));
    }
    im->hdr = (shm_header *)im->base;
    while (atomic_load_explicit(&im->hdr->magic, memory_order_acquire) != SHM_MAGIC) {
        if (collie_now_ns() > deadline)
            return collie_fail(COLLIE_ERR_PEER, "timed out waiting for rank 0 to initialise %s",
                               im->name);
        pause_briefly();
    }
    if (im->hdr->total_bytes != im->bytes)
        return collie_fail(COLLIE_ERR_TRANSPORT, "shared memory %s has %zu bytes, header says %llu",
                           im->name, im->bytes, (unsigned long long)im->hdr->total_bytes);
    return COLLIE_OK;
}

/* A rank that attached and then died (or a zombie), or, when the pids are known, one that
 * died before it attached: its rank (and *pid), else -1. */
static int dead_attached_rank(collie_transport *tp, int *pid) {
    shm_impl *im = tp->impl;
    for (int r = 0; r < tp->size; r++) {
        if (r == tp->rank)
            continue;
        bool attached = atomic_load(&im->ctrl[r].state) == RANK_ALIVE;
        *pid = attached ? atomic_load(&im->ctrl[r].pid) : im->pids ? im->pids[r] : 0;
        if ((attached || im->pids) && process_dead(*pid))
            return r;
    }
    return -1;
}

/* Waits until *counter reaches want: fails at the deadline (COLLIE_TIMEOUT_MS, if set) or
 * as soon as a rank that attached has died (checked every 100 ms).  A failing rank unlinks
 * the segment: no rank can use it any more, and rank 0 may be the one that died. */
static int wait_count(collie_transport *tp, _Atomic int32_t *counter, int want,
                      uint64_t deadline, const char *what) {
    shm_impl *im = tp->impl;
    uint64_t next_check = collie_now_ns() + 100000000ull;
    int st = COLLIE_OK;
    while (atomic_load(counter) < want && !st) {
        uint64_t now = collie_now_ns();
        if (now > deadline)
            st = collie_fail(COLLIE_ERR_PEER, "timed out (COLLIE_TIMEOUT_MS) after %d of %d "
                             "ranks %s", (int)atomic_load(counter), want, what);
        if (!st && now > next_check) {
            next_check = now + 100000000ull;
            int pid = 0, dead = dead_attached_rank(tp, &pid);
            if (dead >= 0)
                st = collie_fail(COLLIE_ERR_PEER, "rank %d (pid %d) died while %d of %d ranks "
                                 "%s", dead, pid, (int)atomic_load(counter), want, what);
        }
        if (!st)
            pause_briefly();
    }
    if (st)
        shm_unlink(im->name);
    return st;
}

/* Can this rank read another process's memory (process_vm_readv)? */
static bool probe_direct(collie_transport *tp) {
    shm_impl *im = tp->impl;
    int peer = (tp->rank + 1) % tp->size;
    uint64_t value = 0;
    struct iovec local = { &value, sizeof value };
    struct iovec remote = { (void *)(uintptr_t)im->ctrl[peer].probe_addr, sizeof value };
    ssize_t n = process_vm_readv(atomic_load(&im->ctrl[peer].pid), &local, 1, &remote, 1, 0);
    return n == (ssize_t)sizeof value && value == SHM_MAGIC;
}


static int attach(collie_transport *tp, uint64_t deadline) {
    shm_impl *im = tp->impl;
    shm_ctrl *me = &im->ctrl[tp->rank];
    atomic_store(&me->pid, (int32_t)getpid());
    me->probe_addr = (uint64_t)(uintptr_t)&probe_word;
    atomic_store(&me->state, RANK_ALIVE);
    atomic_fetch_add(&im->hdr->attached, 1);
    int st = wait_count(tp, &im->hdr->attached, tp->size, deadline, "attached to the shared memory");
    if (tp->rank == 0)
        shm_unlink(im->name);
    if (st)
        return st;
    bool want_direct = collie_env_int("COLLIE_SHM_DIRECT", 1) != 0 && tp->size > 1;
    if (want_direct && !probe_direct(tp))
        atomic_store(&im->hdr->direct_failed, 1);
    atomic_fetch_add(&im->hdr->probed, 1);
    st = wait_count(tp, &im->hdr->probed, tp->size, deadline, "probed single-copy reads");
    tp->direct_ok = want_direct && !atomic_load(&im->hdr->direct_failed);
    return st;
}

static int wire(collie_transport *tp) {
    shm_impl *im = tp->impl;
    im->ctrl = (shm_ctrl *)(im->base + HEADER_BYTES);
    char *board = im->base + HEADER_BYTES + round_page((size_t)tp->size * sizeof(shm_ctrl));
    tp->board = (collie_board_entry *)board;
    char *inbox0 = board + round_page((size_t)tp->size * sizeof(collie_board_entry));
    size_t stride = inbox_stride(tp->size, tp->nslots, tp->slot_bytes);
    char **inboxes = calloc((size_t)tp->size, sizeof *inboxes);
    if (!inboxes)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the channel table");
    for (int r = 0; r < tp->size; r++)
        inboxes[r] = inbox0 + (size_t)r * stride;
    int st = collie_channels_wire(tp, inboxes);
    free(inboxes);
    if (st)
        return collie_fail(st, "cannot allocate the channel table");
    char *cells = im->base + channels_end(tp->size, tp->nslots, tp->slot_bytes);
    return collie_shm_cells_wire(tp, cells, &im->hdr->cells);
}

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

/* Under a bootstrap: every rank learns the worst status of all ranks (see transport.h). */
static int agree(const collie_shm_config *cfg, int st, const char *step) {
    if (!cfg->agree)
        return st;
    int all = cfg->agree(cfg->agree_ctx, st);
    if (all && !st)
        return collie_fail(all, "another rank failed to %s (%s)", step, collie_strerror(all));
    return all ? st : COLLIE_OK;
}

/* Rank 0 creates the segment; the others open it (after rank 0, under a bootstrap). */
static int create_or_open(collie_transport *tp, const collie_shm_config *cfg, uint64_t deadline) {
    shm_impl *im = tp->impl;
    int st = COLLIE_OK;
    if (cfg->rank == 0)
        st = create_segment(im, cfg->size, collie_env_int("COLLIE_SHM_SLOTS", 8),
                            collie_env_int("COLLIE_SHM_SLOT_BYTES", cfg->size > 64 ? 4096 : 16384),
                            cfg->kernel_min);
    st = agree(cfg, st, "create the shared memory");
    if (st)
        return st;
    if (cfg->rank != 0)
        st = open_segment(im, deadline);
    if (!st) {
        tp->nslots = im->hdr->nslots;
        tp->slot_bytes = im->hdr->slot_bytes;
        tp->direct_min_bytes = im->hdr->direct_min;
        tp->direct_mid_min_bytes = im->hdr->direct_mid_min;
        tp->direct_mid_max_call_bytes = im->hdr->direct_mid_max_call;
        if (im->hdr->size != cfg->size)
            st = collie_fail(COLLIE_ERR_ARG, "team size %d but the job's segment was made for %d",
                             cfg->size, im->hdr->size);
    }
    if (!st)
        st = wire(tp);
    return agree(cfg, st, "open the shared memory");
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
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the shm transport");
    }
    tp->ops = &shm_ops;
    tp->impl = im;
    atomic_fetch_add(&live_transports, 1);   /* shm_destroy takes it back on every path */
    tp->rank = cfg->rank;
    tp->size = cfg->size;
    tp->shared_memory = true;
    tp->oversubscribed = cfg->size > count_cpus();
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
    int st = create_or_open(tp, cfg, deadline);
    if (!st)
        st = attach(tp, deadline);
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
    collie_shm_config cfg = { 0, 0, NULL, NULL, NULL, NULL, 0 };
    int st = read_env(&cfg.rank, &cfg.size, &cfg.job);
    return st ? st : collie_shm_create_with(&cfg, out);
}
