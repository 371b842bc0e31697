/*
 * init.c — joining the world: collie_init picks the transport from the environment
 * (collie-run's COLLIE_RANK/COLLIE_SIZE/COLLIE_JOB → shm; nothing → a team of one) and
 * reads the configuration (COLLIE_LOG, COLLIE_<COLL>_ALGO, COLLIE_TIMEOUT_MS).  A program
 * linked with libcollie_mpi gets its world from MPI instead (collie_set_world_provider).
 */
#include <stdlib.h>

#include "base/base.h"
#include "core/internal.h"
#include "core/mcast_team.h"

static collie_team_t *world;
static collie_world_provider provider;

void collie_set_world_provider(const collie_world_provider *p) {
    if (p)
        provider = *p;
    else
        provider = (collie_world_provider){ NULL, NULL, NULL, NULL };
}

/* The thread level asked of collie_init_thread, and the one granted: what the world's
 * transport allows (over MPI no more than MPI provides: the mpi transports call MPI from
 * whichever thread is in collie). */
static int thread_required = COLLIE_THREAD_SERIALIZED;
static int thread_level = COLLIE_THREAD_SERIALIZED;

/* *from_provider: the transport came from the provider (its maker makes sub-teams). */
static int world_transport(collie_transport **tp, bool *from_provider) {
    *from_provider = false;
    if (getenv("COLLIE_JOB"))
        return collie_shm_create(tp);
    if (provider.create) {
        int granted = thread_required;
        int st = provider.create(tp, thread_required, &granted);
        if (granted < thread_level)
            thread_level = granted;
        *from_provider = *tp != NULL;
        if (st || *tp)
            return st;
    }
    return collie_self_create(tp);
}

static int init_at(int required);

int collie_init_thread(int required, int *provided) {
    if (required < COLLIE_THREAD_SINGLE || required > COLLIE_THREAD_MULTIPLE)
        return collie_fail(COLLIE_ERR_ARG, "collie_init_thread: required level %d is not one of "
                           "COLLIE_THREAD_SINGLE (0) .. COLLIE_THREAD_MULTIPLE (3)", required);
    if (!provided)
        return collie_fail(COLLIE_ERR_ARG, "collie_init_thread: provided (output) is NULL");
    int st = init_at(required);
    if (st)
        return st;
    *provided = thread_level;
    return COLLIE_OK;
}

int collie_query_thread(int *provided) {
    if (!provided)
        return collie_fail(COLLIE_ERR_ARG, "collie_query_thread: provided (output) is NULL");
    *provided = thread_level;
    return COLLIE_OK;
}

int collie_init(void) { return init_at(COLLIE_THREAD_SERIALIZED); }

static int init_at(int required) {
    if (world)
        return collie_fail(COLLIE_ERR_ARG, "collie_init: already initialised");
    thread_required = thread_level = required;
    collie_log_init();
    int st = collie_env_check();
    if (st)
        return st;
    const char *rank = getenv("COLLIE_RANK");
    if (rank)
        collie_set_log_rank(atoi(rank));
    st = collie_select_init_from_env();
    if (st)
        return st;
    collie_transport *tp = NULL;
    bool from_provider = false;
    st = world_transport(&tp, &from_provider);
    if (st)
        return st;
    collie_set_serial_calls(thread_level <= COLLIE_THREAD_FUNNELED);
    st = collie_team_create(tp, &world);
    if (st) {
        tp->ops->destroy(tp);
        return st;
    }
    if (from_provider) {
        world->maker = provider.maker;
        world->maker_ctx = provider.maker_ctx;
    }
    collie_set_log_rank(world->rank);
    if ((st = collie_mcast_team_setup(world))) {
        collie_team_destroy(world);
        world = NULL;
        return st;
    }
    collie_log(COLLIE_LOG_INFO, "joined a team of %d ranks over %s%s%s", world->size,
               tp->ops->name, tp->direct_ok ? " (single-copy reads on)" : "",
               tp->oversubscribed ? " (more ranks than cores)" : "");
    if (tp->cells && tp->stream_out_min != UINT64_MAX)
        collie_log(COLLIE_LOG_INFO, "bcasts of at least %llu KiB copy out of the cells with "
                   "streaming stores (COLLIE_SHM_STREAM_OUT_MIN)",
                   (unsigned long long)(tp->stream_out_min >> 10));
    if (tp->cells && tp->stream_team_min != UINT64_MAX)
        collie_log(COLLIE_LOG_INFO, "writes into a team's outputs that together reach %llu "
                   "MiB (bcast, allgather, allreduce) start with streaming stores",
                   (unsigned long long)(tp->stream_team_min >> 20));
    return COLLIE_OK;
}

int collie_finalize(void) {
    if (!world)
        return collie_fail(COLLIE_ERR_ARG, "collie_finalize: collie_init was not called");
    int st = COLLIE_OK;
    if (world->head)
        st = collie_fail(COLLIE_ERR_ARG, "collie_finalize: collectives are still in progress");
    collie_subteams_free_all();
    collie_team_destroy(world);
    world = NULL;
    collie_set_serial_calls(false);
    if (provider.finalize)
        provider.finalize();
    return st;
}

collie_team_t *collie_world(void) { return world; }
