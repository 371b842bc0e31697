/*
 * init.c — joining the world: collie_init picks the transport from the environment
 * (collie-run's COLLIE_RANK/COLLIE_SIZE/COLLIE_JOB → shm; nothing → a team of one) and
 * reads the configuration (COLLIE_LOG, COLLIE_<COLL>_ALGO, COLLIE_TIMEOUT_MS).
 */
#include <stdlib.h>

#include "base/base.h"
#include "core/internal.h"
#include "core/mcast_team.h"

static collie_team_t *world;

int collie_init(void) {
    if (world)
        return collie_fail(COLLIE_ERR_ARG, "collie_init: already initialised");
    collie_log_init();
    const char *rank = getenv("COLLIE_RANK");
    if (rank)
        collie_set_log_rank(atoi(rank));
    int st = collie_select_init_from_env();
    if (st)
        return st;
    collie_transport *tp = NULL;
    st = getenv("COLLIE_JOB") ? collie_shm_create(&tp) : collie_self_create(&tp);
    if (st)
        return st;
    st = collie_team_create(tp, &world);
    if (st) {
        tp->ops->destroy(tp);
        return st;
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
    return COLLIE_OK;
}

int collie_finalize(void) {
    if (!world)
        return collie_fail(COLLIE_ERR_ARG, "collie_finalize: collie_init was not called");
    int st = COLLIE_OK;
    if (world->head)
        st = collie_fail(COLLIE_ERR_ARG, "collie_finalize: collectives are still in progress");
    collie_team_destroy(world);
    world = NULL;
    return st;
}

collie_team_t *collie_world(void) { return world; }
