/*
 * mpi_world.c — collie_init under mpirun: the world provider of a program that uses
 * collie's own API linked with libcollie_mpi (core/internal.h, collie_set_world_provider).
 * MPI_COMM_WORLD's team is the world; MPI is initialised here unless the program did it,
 * and finalised at collie_finalize only if it was initialised here.
 */
#include <stdbool.h>

#include "base/base.h"
#include "core/internal.h"
#include "mpi/mpi_layer.h"

static bool initialised_mpi;
static cm_split_ctx world_ctx;     /* MPI_COMM_WORLD, for the world's sub-teams */

/* collie's thread level as MPI's and back (MPI orders its four levels the same way). */
static int mpi_thread_level(int collie_level) {
    static const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                  MPI_THREAD_MULTIPLE };
    return levels[collie_level];
}

static int collie_thread_level(int mpi_level) {
    return mpi_level >= MPI_THREAD_MULTIPLE ? COLLIE_THREAD_MULTIPLE
         : mpi_level >= MPI_THREAD_SERIALIZED ? COLLIE_THREAD_SERIALIZED
         : mpi_level >= MPI_THREAD_FUNNELED ? COLLIE_THREAD_FUNNELED : COLLIE_THREAD_SINGLE;
}

/* MPI_Init_thread at the level collie_init_thread was asked for, unless the program
 * initialised MPI itself: collie's level is then at most MPI's (*granted), since its
 * transports call MPI from whichever thread is in collie — two threads on different teams
 * over an MPI without MPI_THREAD_MULTIPLE crashed inside Open MPI. */
static int world_create(collie_transport **tp, int required, int *granted) {
    int up = 0, provided = MPI_THREAD_SINGLE;
    PMPI_Initialized(&up);
    if (!up) {
        if (PMPI_Init_thread(NULL, NULL, mpi_thread_level(required), &provided) != MPI_SUCCESS)
            return collie_fail(COLLIE_ERR_TRANSPORT, "collie_init: MPI_Init_thread failed");
        initialised_mpi = true;
    } else {
        PMPI_Query_thread(&provided);
    }
    *granted = collie_thread_level(provided);
    if (*granted < required)
        collie_log(COLLIE_LOG_INFO, "collie_init_thread: MPI provides thread level %d, so collie "
                   "provides %d (%d asked)", provided, *granted, required);
    cm_setup();
    cm_world_open();           /* once: the MPI_Init wrapper may have */
    if (!cm_disabled())
        cm_rma_world_open();
    world_ctx.comm = MPI_COMM_WORLD;
    world_ctx.owned = false;
    const char *why = NULL;
    int st = cm_transport_of(MPI_COMM_WORLD, tp, &why);
    if (st && why)
        collie_log(COLLIE_LOG_ERROR, "collie_init: MPI_COMM_WORLD: %s", why);
    return st;
}

static void world_finalize(void) {
    if (!initialised_mpi)
        return;
    initialised_mpi = false;
    cm_log_summary();
    cm_free_all_teams();
    cm_mpi_retire_all();
    cm_rma_world_close();
    cm_world_close();
    cm_free_user_ops();
    cm_free_types();
    PMPI_Finalize();
}

__attribute__((constructor)) static void install_world_provider(void) {
    collie_world_provider p = { world_create, world_finalize, &cm_team_maker, &world_ctx };
    collie_set_world_provider(&p);
}
