/*
 * shm_setup.c — set-up of the shared-memory transport (shm.c): rank 0 creates the
 * job's segment (/collie-<job>) and decides what every rank must agree on (slots,
 * single-copy thresholds, copy cells); the others open it once it is initialised; every
 * rank wires its board, inboxes and cells into the segment, attaches, and probes whether
 * it can read a peer's memory (process_vm_readv).  Waits fail when a rank that attached
 * has died, or at COLLIE_TIMEOUT_MS.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "transport/channels.h"
#include "transport/shm_segment.h"

static const uint64_t probe_word = SHM_MAGIC;

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

/* A set-up wait's pause: for the first YIELD_FOR_NS of the wait give the CPU away and come
 * straight back (the other ranks are usually a few microseconds behind: sleeping at once
 * cost every wait 100 us or more, about 0.5 ms per team at P = 2), then sleep 100 us a
 * time (a rank still starting, or a core shared with many ranks). */
#define YIELD_FOR_NS 2000000ull
static void pause_briefly(uint64_t wait_began_ns) {
    if (collie_now_ns() - wait_began_ns < YIELD_FOR_NS) {
        sched_yield();
        return;
    }
    struct timespec ts = { 0, 100000 };
    nanosleep(&ts, NULL);
}

/* Declared in shm_segment.h.  collie-run binds each rank to a core of its own and says in
 * COLLIE_JOB_CPUS how many CPUs the job has: a bound rank's own mask would count one. */
int collie_shm_count_cpus(void) {
    long long job = collie_env_int("COLLIE_JOB_CPUS", 0);
    if (job > 0)
        return job > INT_MAX ? INT_MAX : (int)job;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Messages from 256 KiB go single-copy in every call.  In calls up to 1 MiB, messages from
 * 32 KiB do too when every rank has a core: measured at P = 2 (docs/measurements.md),
 * 64 KiB bcast 7.9 -> 2.9 us, 1 MiB 98 -> 68 us (reductions: not in the mid range, see
 * use_direct in core/executor_impl.h).
 * Not above 1 MiB (the pipeline segments of chain and ring_pipelined would each wait for
 * their reader: 2 MiB ring_pipelined 285 -> 498 us), and not with more ranks than cores
 * (a sender waits for a reader that is not running: P = 8 32 KiB reduce 15 -> 26 us). */
static void decide_direct_thresholds(shm_header *h, int size) {
    bool oversubscribed = size > collie_shm_count_cpus();
    h->shared_cores = oversubscribed;
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

/* Free bytes of the file system that holds POSIX shared memory (0: unknown). */
static uint64_t shm_room(void) {
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0)
        return 0;
    return (uint64_t)v.f_bavail * v.f_frsize;
}

/* The segment takes at most half of /dev/shm's free space (the MPI library underneath,
 * the program's own shared windows, other teams and other jobs need it too; a container's
 * is often 64 MiB): where it would take more, the copy cells shrink
 * (collie_shm_cells_shrink), with a warning.  With 3/4, 8 ranks in 64 MiB kept the full
 * ring (40 MiB) and an MPI_Win_allocate_shared of 24 MiB that plain Open MPI serves failed
 * through the drop-in. */
static void fit_cells(int size, size_t channels, shm_cells_config *cells) {
    uint64_t room = shm_room();
    size_t want = channels + collie_shm_cells_bytes(size, cells);
    while (room && channels + collie_shm_cells_bytes(size, cells) > room / 2 &&
           collie_shm_cells_shrink(cells))
        ;
    size_t got = channels + collie_shm_cells_bytes(size, cells);
    if (got < want)
        collie_log(COLLIE_LOG_WARN, "rank 0: /dev/shm has %llu MiB free; the shared memory of "
                   "%d ranks takes %zu MiB instead of %zu (%s): large calls with malloc'd "
                   "buffers may be slower; a larger /dev/shm (docker run --shm-size=1g) "
                   "restores them", (unsigned long long)(room >> 20), size, got >> 20,
                   want >> 20, cells->ncells ? "a ring of copy cells as short as a call's "
                   "window" : "no copy cells");
}

/* Allocates every page of the segment now, so that a /dev/shm too small for it fails here
 * (ENOSPC) rather than with SIGBUS at some later first touch of a page; on ENOSPC the copy
 * cells shrink and it tries again.  0, or the error number. */
static int reserve_pages(int fd, shm_impl *im, int size, size_t channels, shm_cells_config *cells) {
    for (;;) {
        int e = posix_fallocate(fd, 0, (off_t)im->bytes);
        if (e == EINVAL || e == EOPNOTSUPP)
            return 0;   /* cannot reserve here: pages come at first touch, as before */
        if (e != ENOSPC || !collie_shm_cells_shrink(cells))
            return e;
        im->bytes = channels + collie_shm_cells_bytes(size, cells);
        collie_log(COLLIE_LOG_WARN, "rank 0: /dev/shm is full: the shared memory of %d ranks "
                   "shrinks to %zu MiB (%s); a larger /dev/shm (docker run --shm-size=1g) "
                   "restores it", size, im->bytes >> 20,
                   cells->ncells ? "copy cells of a call's window only" : "no copy cells");
        if (ftruncate(fd, (off_t)im->bytes) != 0)
            return errno;
    }
}

static int create_segment(shm_impl *im, int size, long long slots, long long sbytes) {
    if (slots < 2 || slots > 1024 || (slots & (slots - 1)) || sbytes < 64 || sbytes > (64 << 20) || sbytes % 64)
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_SHM_SLOTS=%.32s / COLLIE_SHM_SLOT_BYTES=%.32s: need "
                           "a power of two 2..1024 slots of 64 bytes .. 64 MiB (a multiple of 64)",
                           env_text("COLLIE_SHM_SLOTS"), env_text("COLLIE_SHM_SLOT_BYTES"));
    uint32_t nslots = (uint32_t)slots, slot_bytes = (uint32_t)sbytes;
    shm_cells_config cells;
    collie_shm_cells_decide(size, &cells);
    size_t channels = channels_end(size, nslots, slot_bytes);
    fit_cells(size, channels, &cells);
    im->bytes = channels + collie_shm_cells_bytes(size, &cells);
    int fd = shm_open(im->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0)
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot create shared memory %s: %s", im->name,
                           strerror(errno));
    int e = ftruncate(fd, (off_t)im->bytes) != 0 ? errno : 0;
    if (!e)
        e = reserve_pages(fd, im, size, channels, &cells);
    if (e) {
        close(fd);
        shm_unlink(im->name);
        return collie_fail(COLLIE_ERR_TRANSPORT, "cannot allocate the %zu bytes of shared "
                           "memory %s for %d ranks (/dev/shm has %llu bytes free): %s; the slots "
                           "alone take %zu (COLLIE_SHM_SLOTS x COLLIE_SHM_SLOT_BYTES per pair of "
                           "ranks): enlarge /dev/shm (docker run --shm-size=1g) or lower them",
                           im->bytes, im->name, size, (unsigned long long)shm_room(), strerror(e),
                           channels);
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
    cells.kernel_min = collie_shm_kernel_min(size);
    /* Measured (docs/design.md): at P = 2 the slots beat the cells up to 512 KiB calls with
     * reused inputs; from P = 3 the cells already win at 512 KiB (allreduce 0.74-0.91x). */
    cells.slots_max = (uint64_t)collie_env_int("COLLIE_SHM_SLOTS_MAX", size <= 2 ? 512 << 10 : 256 << 10);
    im->hdr->cells = cells;
    atomic_store_explicit(&im->hdr->magic, SHM_MAGIC, memory_order_release);
    return COLLIE_OK;
}

/* Opens the segment rank 0 creates, waiting for it until the deadline. */
static int open_segment(shm_impl *im, uint64_t deadline) {
    int fd;
    struct stat st;
    uint64_t began = collie_now_ns();
    for (;;) {
        fd = shm_open(im->name, O_RDWR, 0);
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= HEADER_BYTES)
            break;
        if (fd >= 0)
            close(fd);
        if (collie_now_ns() > deadline)
            return collie_fail(COLLIE_ERR_PEER, "timed out waiting for rank 0 to create the "
                               "shared memory %s", im->name);
        pause_briefly(began);
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
        pause_briefly(began);
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
        if ((attached || im->pids) && collie_shm_process_dead(*pid))
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
    uint64_t began = collie_now_ns(), next_check = began + 100000000ull;
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
            pause_briefly(began);
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
    if (st)
        return st;
    collie_shm_stream_probe(tp);
    st = wait_count(tp, &im->hdr->stream_decided, 1, deadline, "measured copies into the cells");
    bool stream = atomic_load(&im->hdr->stream) == 1;
    if (!st && tp->cells) {
        tp->cells->stream = stream;
        collie_shm_stream_remember(stream);
    }
    return st;
}

/* Maps now the pages of the segment that this rank touches (the cells: shm_cells.c):
 * the header, control blocks and board, its own inbox, and its ring in every other
 * rank's inbox — not the rings between other ranks (at P = 64 a rank maps 16 of the
 * segment's 516 MiB of slots, and all 64 MiB of cells).  Pages left to a call's first
 * touch put page faults into the calls path_tune.c times to choose a way.  Measured
 * (2026-11-29, AMD EPYC VM, fast state, P = 2, a bcast of 128 KiB as the first size,
 * COLLIE_LOG=info): with only the cells mapped, the trial took the slots in 7 of 11 runs
 * (3.2-3.7 us a call from then on, against the cells' 2.7); with the whole segment mapped
 * in 3 of 35, with these pages in 2 of 16 (both right after the machine changed state).
 * Mapping the whole segment (580 MiB at P = 64) cost 64 ranks on 2 cores 2.3 s to run one
 * allreduce, against 0.9 with only the cells mapped and 1.3 with these pages. */
static void populate_own_pages(collie_transport *tp, char *inbox0, size_t stride) {
    shm_impl *im = tp->impl;
    size_t chan = collie_channel_bytes(tp->nslots, tp->slot_bytes);
    collie_shm_populate(im->base, (size_t)(inbox0 - im->base), tp->rank, "the board");
    collie_shm_populate(inbox0 + (size_t)tp->rank * stride, stride, tp->rank, "the slots");
    for (int q = 0; q < tp->size; q++) {
        if (q == tp->rank)
            continue;
        collie_shm_populate((char *)tp->to[q].consumed, sizeof *tp->to[q].consumed, tp->rank, "the slots");
        collie_shm_populate(tp->to[q].slots, chan, tp->rank, "the slots");
    }
}

static int wire(collie_transport *tp) {
    shm_impl *im = tp->impl;
    im->ctrl = (shm_ctrl *)(im->base + HEADER_BYTES);
    char *board = im->base + HEADER_BYTES + round_page((size_t)tp->size * sizeof(shm_ctrl));
    tp->board = (collie_board_entry *)board;
    tp->way_choices = im->hdr->way_choices;
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
    populate_own_pages(tp, inbox0, stride);
    char *cells = im->base + channels_end(tp->size, tp->nslots, tp->slot_bytes);
    return collie_shm_cells_wire(tp, cells, &im->hdr->cells);
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

/* The default slot geometry (rank 0 decides; the others read it from the header).  When
 * every rank has a core and the team is small: 32 slots of 8 KiB per channel (256 KiB).
 * Measured at P = 2 (2026-11-25, collie-bench 1 KiB-256 KiB, --barrier-each,
 * --release-each and back-to-back, 3 rounds; docs/measurements.md): against 8 slots of
 * 16 KiB, allreduce 16 KiB 0.72-0.77 of the time, 1-4 KiB 0.85-0.9, reduce 64 KiB 0.73,
 * bcast, allgather, alltoall 16 KiB 0.7-0.75; equal from 256 KiB.  The number of slots
 * made the difference (8 of 8 KiB was no faster than 8 of 16 KiB).  With more ranks than
 * cores (P = 4, 8) it was mixed, so there, and for the shm+mpi transport (whose nodes must
 * all use one geometry), 8 slots of 16 KiB (4 KiB above 64 ranks). */
#define ADAPTIVE_SLOTS_MAX_RANKS 16
static void default_geometry(const collie_shm_config *cfg, int64_t *slots, int64_t *bytes) {
    if (!cfg->fixed_geometry && cfg->size <= ADAPTIVE_SLOTS_MAX_RANKS &&
        cfg->size <= collie_shm_count_cpus()) {
        *slots = 32;
        *bytes = 8192;
        return;
    }
    *slots = 8;
    *bytes = cfg->size > 64 ? 4096 : 16384;
}

/* Rank 0 creates the segment; the others open it (after rank 0, under a bootstrap). */
static int create_or_open(collie_transport *tp, const collie_shm_config *cfg, uint64_t deadline) {
    shm_impl *im = tp->impl;
    int st = COLLIE_OK;
    if (cfg->rank == 0) {
        int64_t slots, bytes;
        default_geometry(cfg, &slots, &bytes);
        st = create_segment(im, cfg->size, collie_env_int("COLLIE_SHM_SLOTS", slots),
                            collie_env_int("COLLIE_SHM_SLOT_BYTES", bytes));
    }
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
        tp->shared_cores = im->hdr->shared_cores != 0;
        tp->kernel_min_own = collie_shm_kernel_min(cfg->size);
        if (im->hdr->size != cfg->size)
            st = collie_fail(COLLIE_ERR_ARG, "team size %d but the job's segment was made for %d",
                             cfg->size, im->hdr->size);
    }
    if (!st)
        st = wire(tp);
    return agree(cfg, st, "open the shared memory");
}

int collie_shm_setup(collie_transport *tp, const collie_shm_config *cfg, uint64_t deadline) {
    int st = create_or_open(tp, cfg, deadline);
    return st ? st : attach(tp, deadline);
}
