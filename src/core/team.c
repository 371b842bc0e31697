/*
 * team.c — a team: a transport view plus the queue of started collectives.  Requests on
 * a team progress strictly in start order (every rank starts collectives in the same
 * order), so the messages of different collectives never cross on a channel; each chunk
 * also carries a hash of its call, so a rank that called something else is detected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/api.h"
#include "core/internal.h"
#include "core/core.h"
#include "core/mcast_team.h"

int collie_team_create(collie_transport *tp, collie_team_t **out) {
    collie_team_t *t = calloc(1, sizeof *t);
    if (!t)
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate a team");
    t->rank = tp->rank;
    t->size = tp->size;
    t->tp = tp;
    /* Waits last as long as the peers live (like MPI); COLLIE_TIMEOUT_MS is an opt-in
     * watchdog that also fails a call whose peers live but make no progress. */
    long long ms = collie_env_int("COLLIE_TIMEOUT_MS", 0);
    t->timeout_ns = ms > 0 ? (uint64_t)ms * 1000000ull : 0;
    long long spin = collie_env_int("COLLIE_SPIN_NS", tp->oversubscribed ? 0 : 100000);
    t->spin_ns = spin > 0 ? (uint64_t)spin : 0;
    /* With more ranks than cores the yields are a waiter's only polling (no spin), and a
     * rank that sleeps pays a futex wake-up per hand-over: 256 there (2026-12-03, Intel
     * Xeon VM, P = 3, 512 KiB, collie-bench --barrier-each, 2 rounds, best of each, 256
     * against 32: allreduce 0.72-0.73, reduce 0.72-0.76, bcast 0.49-0.87, allgather 0.75,
     * alltoall 0.89-0.91 of the time; 8 B-32 KiB and 8 MiB within the noise, as at P = 4
     * and 8).  A yield with nothing else to run returns at once, so 256 is a spin of a few
     * hundred microseconds at most before the sleep. */
    long long yields = collie_env_int("COLLIE_YIELDS", tp->oversubscribed ? 256 : 32);
    t->max_yields = yields > 0 ? (int)yields : 0;
    t->check_calls = collie_env_int("COLLIE_CHECK", 0) > 0;
    t->serial_entry = collie_serial_calls();
    int st = collie_handle_add(t, COLLIE_HANDLE_TEAM);
    if (st) {
        free(t);
        return st;
    }
    *out = t;
    return COLLIE_OK;
}

void collie_team_destroy(collie_team_t *team) {
    if (!collie_handle_valid(team, COLLIE_HANDLE_TEAM))
        return;
    for (unsigned i = 0; i < sizeof team->cache / sizeof team->cache[0]; i++)
        collie_request_free(team->cache[i]);
    collie_handle_remove(team, COLLIE_HANDLE_TEAM);
    collie_mcast_team_free(team);
    collie_stash_free(team);
    free(team->path_tune);
    free(team->fill_tune);
    if (team->tp)
        team->tp->ops->destroy(team->tp);
    free(team);
}

/* Every queued request fails with status; later calls fail at once with the message. */
int collie_team_fail(collie_team_t *team, int status) {
    if (!team->failed) {
        team->failed = status;
        snprintf(team->fail_msg, sizeof team->fail_msg, "%s", collie_last_error());
        if (team->tp->board)   /* peers waiting for this rank stop too (request.c) */
            atomic_store_explicit(&team->tp->board[team->rank].failed, status, memory_order_release);
    }
    for (collie_request_t *r = team->head; r; r = r->next) {
        r->active = false;
        r->status = status;
    }
    team->head = team->tail = NULL;
    return status;
}

int collie_team_check(const collie_team_t *team, const char *fn) {
    if (!team)
        return collie_fail(COLLIE_ERR_ARG, "%s: team is NULL (call collie_init first)", fn);
    if (!collie_handle_valid(team, COLLIE_HANDLE_TEAM))
        return collie_fail(COLLIE_ERR_ARG, "%s: %p is not a live team (freed by "
                           "collie_team_free, or used after collie_finalize?)", fn,
                           (const void *)team);
    return COLLIE_OK;
}

uint64_t collie_team_cell_bytes(const collie_team_t *team) {
    return collie_handle_valid(team, COLLIE_HANDLE_TEAM) && team->tp->cells ? team->tp->cells->cell_bytes : 0;
}

bool collie_team_multicast(const collie_team_t *team) {
    return collie_handle_valid(team, COLLIE_HANDLE_TEAM) && team->mcast;
}

bool collie_team_single_copy(const collie_team_t *team) {
    return collie_handle_valid(team, COLLIE_HANDLE_TEAM) && team->tp->board && team->tp->direct_ok;
}

int collie_rank(const collie_team_t *team) {
    int st = collie_team_check(team, "collie_rank");
    return st ? st : team->rank;
}

int collie_size(const collie_team_t *team) {
    int st = collie_team_check(team, "collie_size");
    return st ? st : team->size;
}

void *collie_alloc(collie_team_t *team, size_t bytes) {
    if (collie_team_check(team, "collie_alloc"))
        return NULL;
    return team->tp->ops->mem_alloc(team->tp, bytes);
}

void collie_free(collie_team_t *team, void *ptr) {
    if (!ptr || collie_team_check(team, "collie_free"))
        return;
    team->tp->ops->mem_free(team->tp, ptr);
    collie_api_forget_mapped();   /* its pages may be gone (api_check.c) */
}
