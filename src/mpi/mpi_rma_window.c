/*
 * mpi_rma_window.c — the memory the RMA transport's peers write to (mpi_transport_rma.c):
 * where it comes from, how its address reaches the peers, and how it is given back.
 *
 * A rank releases a transport at a time of its own — in MPI_Comm_free, or inside an
 * MPI_Wait when the program freed the communicator with requests pending — so the release
 * must block nowhere.  MPI_Win_free is collective and blocking: freeing a window per
 * communicator there deadlocked (ranks in MPI_Win_free of different windows, or one in
 * MPI_Win_free while a peer waited for its collie requests; mpi_soak under
 * COLLIE_MPI_NODE_SPLIT=2, MPICH, 7 of 10 seeds).  Two ways out, by MPI:
 *
 * - dynamic (MPICH and others): one window over the layer's duplicate of MPI_COMM_WORLD,
 *   made where MPI is initialised (cm_rma_world_open) and freed at MPI_Finalize.  Each
 *   transport attaches memory of its own (local) and the ranks exchange its address.  The
 *   release starts an MPI_Ibarrier over the communicator and detaches once it completes
 *   (cm_rma_retire_poll): every rank has released by then, and every write is flushed
 *   before the call that made it moves on, so nothing writes to the memory any more.
 * - per communicator (Open MPI): Open MPI 4.1's one-sided components hang or time out on
 *   dynamic windows here (osc/rdma in MPI_Accumulate, osc/pt2pt and osc/ucx in the soak),
 *   so each transport allocates its own window (MPI_Win_allocate, osc/sm on one node) and
 *   the release keeps it: every kept window is freed at MPI_Finalize, where every rank is.
 *   Each MPI_Win_free waits for the window's other ranks, so every rank must free in an
 *   order all agree on, even when threads made windows on different communicators at once:
 *   at creation the ranks of a window agree on a key unique to it (one more than the
 *   largest count of windows any of them has seen, then a tag made by its rank 0), and
 *   every rank frees in increasing key order — the smallest key left is every one of its
 *   ranks' next, so each free completes.  Cost: a freed communicator's window (credits and inbox:
 *   P × slots × slot bytes) stays until MPI_Finalize.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/mpi_layer.h"
#include "mpi/mpi_transport.h"

static MPI_Win world_win = MPI_WIN_NULL;   /* dynamic: the process's one window */
static bool per_comm;                      /* Open MPI: a window per communicator */
static bool world_tried;

/* Transports' memory peers may still write to (released ones included): while there is
 * some, MPI's progress must run (cm_rma_outside_progress). */
static _Atomic int live;

bool cm_rma_windows_live(void) { return atomic_load_explicit(&live, memory_order_relaxed) > 0; }

static bool is_open_mpi(void) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    PMPI_Get_library_version(version, &len);
    return strstr(version, "Open MPI") != NULL;
}

void cm_rma_world_open(void) {
    if (world_tried || strcmp(collie_env_str("COLLIE_MPI_TRANSPORT", "p2p"), "rma") != 0)
        return;
    world_tried = true;
    per_comm = is_open_mpi();
    MPI_Comm comm = cm_world();
    if (per_comm || comm == MPI_COMM_NULL)   /* one rank: no peer on another node */
        return;
    /* An MPI without usable one-sided support fails here: wiring reports it later. */
    PMPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (PMPI_Win_create_dynamic(MPI_INFO_NULL, comm, &world_win) != MPI_SUCCESS) {
        world_win = MPI_WIN_NULL;
        return;
    }
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, world_win);
}

/* ---- per communicator: kept until MPI_Finalize ---------------------------------------------- */

typedef struct kept_window {
    struct kept_window *next;
    MPI_Win win;
    uint64_t key[2];              /* the freeing order, agreed by the window's ranks */
} kept_window;

static kept_window *kept_first;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t windows_seen;   /* the largest key[0] of a window of this rank */
static atomic_uint windows_made;

/* Collective over im->comm: key[0] one more than any rank's windows_seen, key[1] a tag
 * made by rank 0 (its world rank and its count of windows: unique); false if some rank
 * is not `ok` (then no rank goes on to MPI_Win_allocate). */
static bool agree_key(rma_impl *im, bool ok, uint64_t key[2]) {
    int rank = 0, world = 0;
    PMPI_Comm_rank(im->comm, &rank);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world);
    uint64_t mine[3] = { atomic_load(&windows_seen) + 1,
                         rank == 0 ? ((uint64_t)world << 32 | atomic_fetch_add(&windows_made, 1)) : 0,
                         !ok }, all[3];
    PMPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, im->comm);
    key[0] = all[0], key[1] = all[1];
    uint64_t seen = atomic_load(&windows_seen);
    while (seen < key[0] && !atomic_compare_exchange_weak(&windows_seen, &seen, key[0]))
        ;
    return all[2] == 0;
}

static bool before(const uint64_t a[2], const uint64_t b[2]) {
    return a[0] != b[0] ? a[0] < b[0] : a[1] < b[1];
}

/* Into kept_first, in increasing key order. */
static void keep(kept_window *k) {
    pthread_mutex_lock(&kept_lock);
    kept_window **pp = &kept_first;
    while (*pp && before((*pp)->key, k->key))
        pp = &(*pp)->next;
    k->next = *pp;
    *pp = k;
    pthread_mutex_unlock(&kept_lock);
}

/* Collective over im->comm, even on a rank that is not `ok` already. */
static int allocate(rma_impl *im, int size, size_t bytes, bool ok) {
    kept_window *k = ok ? malloc(sizeof *k) : NULL;
    uint64_t key[2];
    if (!agree_key(im, k != NULL, key)) {
        const char *why = k ? "another rank could not allocate its rma tables"
                            : "cannot allocate the rma transport's tables";
        free(k);
        return collie_fail(COLLIE_ERR_NOMEM, "%s", why);
    }
    if (PMPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, im->comm, &im->base, &im->win) !=
        MPI_SUCCESS) {
        free(k);
        im->win = MPI_WIN_NULL;
        im->base = NULL;
        return collie_fail(COLLIE_ERR_TRANSPORT, "MPI_Win_allocate of %zu bytes failed (no "
                           "one-sided support between these ranks? Open MPI: try --mca osc ucx)",
                           bytes);
    }
    memset(im->base, 0, bytes);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, im->win);
    for (int r = 0; r < size; r++)
        im->world_of[r] = r, im->disp[r] = 0;
    k->win = im->win, k->key[0] = key[0], k->key[1] = key[1];
    keep(k);
    atomic_fetch_add(&live, 1);
    return COLLIE_OK;
}

static void free_kept(void) {
    pthread_mutex_lock(&kept_lock);
    while (kept_first) {
        kept_window *k = kept_first;
        kept_first = k->next;
        PMPI_Win_unlock_all(k->win);
        PMPI_Win_free(&k->win);
        free(k);
        atomic_fetch_sub(&live, 1);
    }
    pthread_mutex_unlock(&kept_lock);
}

/* ---- dynamic: attached, detached when every rank has released -------------------------------- */

/* world_of[r]: rank r of im->comm in the window's communicator. */
static int map_world(rma_impl *im, int size) {
    MPI_Group g_comm, g_world;
    PMPI_Comm_group(im->comm, &g_comm);
    PMPI_Comm_group(cm_world(), &g_world);
    int *ranks = malloc((size_t)size * sizeof *ranks);
    int st = ranks ? COLLIE_OK : collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the rank map");
    for (int r = 0; !st && r < size; r++)
        ranks[r] = r;
    if (!st)
        PMPI_Group_translate_ranks(g_comm, size, ranks, g_world, im->world_of);
    for (int r = 0; !st && r < size; r++)
        if (im->world_of[r] == MPI_UNDEFINED)
            st = collie_fail(COLLIE_ERR_TRANSPORT, "rank %d of this communicator is not in "
                             "MPI_COMM_WORLD (a spawned process?): the rma transport cannot reach "
                             "it; use COLLIE_MPI_TRANSPORT=p2p", r);
    free(ranks);
    PMPI_Group_free(&g_comm);
    PMPI_Group_free(&g_world);
    return st;
}

static int attach(rma_impl *im, int size, size_t bytes) {
    if (world_win == MPI_WIN_NULL)
        return collie_fail(COLLIE_ERR_TRANSPORT, "the rma transport has no window: "
                           "MPI_Win_create_dynamic failed at MPI_Init, or MPI was initialised "
                           "before libcollie_mpi was loaded (no one-sided support? "
                           "COLLIE_MPI_TRANSPORT=p2p works without it)");
    im->base = aligned_alloc(COLLIE_CACHELINE, bytes);
    if (!im->base)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the rma transport's %zu bytes", bytes);
    memset(im->base, 0, bytes);
    if (PMPI_Win_attach(world_win, im->base, (MPI_Aint)bytes) != MPI_SUCCESS) {
        free(im->base);
        im->base = NULL;
        return collie_fail(COLLIE_ERR_TRANSPORT, "MPI_Win_attach of %zu bytes failed", bytes);
    }
    im->win = world_win;
    atomic_fetch_add(&live, 1);
    return map_world(im, size);
}

static void detach(char *base) {
    PMPI_Win_detach(world_win, base);
    free(base);
    atomic_fetch_sub(&live, 1);
}

typedef struct cm_rma_retiring {
    struct cm_rma_retiring *next;
    MPI_Comm comm;
    char *base;                   /* attached until every rank of comm has released */
    MPI_Request barrier;
} retiring;

static retiring *retiring_list;
static pthread_mutex_t retiring_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int nretiring;

bool cm_rma_retire_poll(void) {
    if (atomic_load_explicit(&nretiring, memory_order_acquire) == 0)
        return false;
    pthread_mutex_lock(&retiring_lock);
    for (retiring **pp = &retiring_list; *pp;) {
        retiring *r = *pp;
        int done = 0;
        PMPI_Test(&r->barrier, &done, MPI_STATUS_IGNORE);
        if (!done) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        detach(r->base);
        PMPI_Comm_free(&r->comm);
        free(r);
        atomic_fetch_sub(&nretiring, 1);
    }
    pthread_mutex_unlock(&retiring_lock);
    return atomic_load_explicit(&nretiring, memory_order_acquire) > 0;
}

static void retire(rma_impl *im, retiring *r) {
    r->comm = im->comm, r->base = im->base;
    im->comm = MPI_COMM_NULL, im->base = NULL;
    PMPI_Ibarrier(r->comm, &r->barrier);
    pthread_mutex_lock(&retiring_lock);
    r->next = retiring_list;
    retiring_list = r;
    atomic_fetch_add(&nretiring, 1);
    pthread_mutex_unlock(&retiring_lock);
    cm_rma_retire_poll();
}

/* ---- both ------------------------------------------------------------------------------------- */

int cm_rma_window_get(rma_impl *im, int size, size_t bytes) {
    if (!world_tried)   /* MPI initialised before this library was loaded */
        per_comm = is_open_mpi();
    im->win = MPI_WIN_NULL;
    im->disp = calloc((size_t)size, sizeof *im->disp);
    im->world_of = calloc((size_t)size, sizeof *im->world_of);
    im->retire = calloc(1, sizeof *im->retire);
    bool ok = im->disp && im->world_of && im->retire;
    bytes = (bytes + COLLIE_CACHELINE - 1) & ~(size_t)(COLLIE_CACHELINE - 1);
    /* Errors of the window's calls are reported here, not fatal. */
    PMPI_Comm_set_errhandler(im->comm, MPI_ERRORS_RETURN);
    if (per_comm)
        return allocate(im, size, bytes, ok);
    if (!ok)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate the rma transport's tables");
    return attach(im, size, bytes);
}

int cm_rma_window_share(rma_impl *im) {
    if (!per_comm) {   /* every rank's memory is attached and zeroed before anyone learns where */
        MPI_Aint mine;
        PMPI_Get_address(im->base, &mine);
        PMPI_Allgather(&mine, 1, MPI_AINT, im->disp, 1, MPI_AINT, im->comm);
    }
    PMPI_Win_sync(im->win);
    return COLLIE_OK;
}

void cm_rma_window_put(rma_impl *im) {
    free(im->disp);
    free(im->world_of);
    im->disp = NULL;
    im->world_of = NULL;
    retiring *r = im->retire;
    im->retire = NULL;
    if (!per_comm && !im->failed && r && im->base && im->comm != MPI_COMM_NULL) {
        retire(im, r);
        return;
    }
    free(r);
    if (!per_comm && im->base)   /* the set-up failed (agreed): nobody wrote to it */
        detach(im->base);
    im->base = NULL;           /* per_comm: the window is kept until MPI_Finalize */
    im->win = MPI_WIN_NULL;
    if (im->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&im->comm);
}

/* At MPI_Finalize, after every release has finished (cm_mpi_retire_all). */
void cm_rma_world_close(void) {
    free_kept();
    if (world_win != MPI_WIN_NULL) {
        PMPI_Win_unlock_all(world_win);
        PMPI_Win_free(&world_win);
    }
    world_tried = false;
}
