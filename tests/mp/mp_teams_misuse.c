/*
 * mp_teams_misuse.c — what collie_team_split/dup/free refuse, with the message checked:
 * freeing the world, NULL handles, freeing with a request in progress or not freed, a
 * double free and calls on a freed team; mismatched calls (dup against split, and an
 * allreduce of the very shape of the split's exchange) reported to every rank that split,
 * the world usable afterwards; a rank that dies before a split (mode "dead") or while the
 * others dup in a loop (mode "dead_during").
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mp_teams.h"

static void bad_handles(collie_team_t *world) {
    collie_team_t *w = world, *none = NULL;
    mt_expect_st(collie_team_free(&w), COLLIE_ERR_ARG, "freeing the world");
    mt_expect_msg("world", "freeing the world names it");
    mt_expect(w == world, "a refused free leaves the handle");
    mt_expect_st(collie_team_free(NULL), COLLIE_ERR_ARG, "collie_team_free(NULL)");
    mt_expect_st(collie_team_free(&none), COLLIE_ERR_ARG, "collie_team_free of a NULL handle");
    mt_expect_st(collie_team_split(world, 0, 0, NULL), COLLIE_ERR_ARG, "split without output");
    mt_expect_st(collie_team_dup(NULL, &none), COLLIE_ERR_ARG, "dup of NULL");
}

/* Freeing with a request in progress, then with one not freed; then a double free and
 * calls on the freed handle. */
static void free_rules(collie_team_t *world) {
    collie_team_t *t = NULL;
    mt_expect_st(collie_team_dup(world, &t), COLLIE_OK, "dup for the free rules");
    if (!t)
        return;
    int64_t x = mt_rank + 1, y = 0;
    collie_request_t *req = NULL;
    mt_expect_st(collie_iallreduce(t, &x, &y, 1, COLLIE_INT64, COLLIE_SUM, &req), COLLIE_OK,
                 "iallreduce on the dup");
    /* "in progress", or "not freed" when the call finished already (a team of one) */
    mt_expect_st(collie_team_free(&t), COLLIE_ERR_ARG, "free with a call in progress");
    mt_expect(strstr(collie_last_error(), "in progress") || strstr(collie_last_error(), "not freed"),
              "free with a call in progress names it");
    mt_expect(t != NULL, "a refused free leaves the handle");
    mt_expect_st(collie_wait(req), COLLIE_OK, "wait");
    mt_expect(y == (int64_t)mt_size * (mt_size + 1) / 2, "iallreduce result");
    mt_expect_st(collie_team_free(&t), COLLIE_ERR_ARG, "free with a request not freed");
    mt_expect_msg("not freed", "free with a request not freed names it");
    collie_request_free(req);
    collie_team_t *copy = t;
    mt_expect_st(collie_team_free(&t), COLLIE_OK, "free");
    mt_expect(t == NULL, "free sets NULL");
    mt_expect_st(collie_team_free(&copy), COLLIE_ERR_ARG, "double free");
    mt_expect_msg("not a live team", "double free names the stale handle");
    mt_expect_st(collie_allreduce(copy, &x, &y, 1, COLLIE_INT64, COLLIE_SUM), COLLIE_ERR_ARG,
                 "allreduce on a freed team");
    mt_expect_st(collie_barrier(copy), COLLIE_ERR_ARG, "barrier on a freed team");
    mt_expect_st(collie_team_split(copy, 0, 0, &t), COLLIE_ERR_ARG, "split of a freed team");
    mt_expect(collie_alloc(copy, 64) == NULL, "collie_alloc on a freed team");
}

/* Rank 0 calls dup while the others split; then rank P-1 makes an allreduce of the
 * exchange's shape (P x 5 uint64, bxor, in place) while the others split. */
static void mismatched(collie_team_t *world) {
    collie_team_t *t = NULL;
    int st = mt_rank == 0 ? collie_team_dup(world, &t) : collie_team_split(world, 0, mt_rank, &t);
    mt_expect_st(st, COLLIE_ERR_MISMATCH, "dup against split");
    mt_expect_msg(mt_rank == 0 ? "collie_team_split" : "collie_team_dup",
                  "dup against split names the other call");
    mt_expect(t == NULL, "no team from a mismatched split");
    mt_world_check(40);
    size_t n = (size_t)mt_size * 5;
    uint64_t *tab = calloc(n, sizeof *tab);
    if (mt_rank == mt_size - 1) {
        st = collie_allreduce(world, COLLIE_IN_PLACE, tab, n, COLLIE_UINT64, COLLIE_BXOR);
        mt_expect_st(st, COLLIE_OK, "the allreduce that met a split");
    } else {
        st = collie_team_split(world, 1, 0, &t);
        mt_expect_st(st, COLLIE_ERR_MISMATCH, "split against an allreduce of its shape");
        char want[64];
        snprintf(want, sizeof want, "rank %d of the parent team did not call", mt_size - 1);
        mt_expect_msg(want, "the mismatch names the rank");
        mt_expect(t == NULL, "no team from a mismatched split");
    }
    free(tab);
    mt_world_check(41);
}

void mt_misuse(collie_team_t *world) {
    bad_handles(world);
    free_rules(world);
    if (mt_size > 1)
        mismatched(world);
}

/* Rank P-1 calls a barrier where the others split: every rank gets an error naming a
 * mismatch (not a hang, not a team). */
int mt_against_barrier(collie_team_t *world) {
    collie_team_t *t = NULL;
    int st = mt_rank == mt_size - 1 ? collie_barrier(world) : collie_team_split(world, 0, 0, &t);
    mt_expect(st == COLLIE_ERR_MISMATCH || st == COLLIE_ERR_PEER, "split against a barrier fails");
    mt_expect(strstr(collie_last_error(), "barrier") || strstr(collie_last_error(), "allreduce"),
              "the error names the calls");
    mt_expect(t == NULL, "no team");
    if (mt_rank == 0)
        printf("mp_teams against_barrier P=%d: %s\n", mt_size, mt_failures ? "FAILED" : "passed");
    fflush(stdout);
    collie_finalize();
    return mt_failures ? 1 : 0;
}

static void *kill_later(void *arg) {
    struct timespec ts = { 0, 20 * 1000000 };   /* 20 ms: some 20-50 dups into the loop */
    (void)arg;
    nanosleep(&ts, NULL);
    raise(SIGKILL);
    return NULL;
}

/* Every rank dups and frees in a loop; rank P-1 is killed by a thread of its own 20 ms
 * in, so (nearly always) inside a dup — in the exchange, the segment's set-up or the
 * agreement.  Every other rank's dup must fail with COLLIE_ERR_PEER, not hang. */
int mt_dead_during(collie_team_t *world) {
    signal(SIGTERM, SIG_IGN);
    mt_expect_st(collie_barrier(world), COLLIE_OK, "barrier before the loop");
    pthread_t th;
    if (mt_rank == mt_size - 1 && pthread_create(&th, NULL, kill_later, NULL) != 0)
        raise(SIGKILL);
    int st = COLLIE_OK, i = 0;
    for (; i < 100000 && st == COLLIE_OK; i++) {
        collie_team_t *t = NULL;
        st = collie_team_dup(world, &t);
        if (t)
            mt_expect_st(collie_team_free(&t), COLLIE_OK, "free in the loop");
    }
    mt_expect_st(st, COLLIE_ERR_PEER, "a dup while rank P-1 dies");
    if (mt_rank == 0)
        printf("mp_teams dead_during P=%d: %s (failed at dup %d: %s)\n", mt_size,
               mt_failures ? "FAILED" : "passed", i, collie_last_error());
    fflush(stdout);
    collie_finalize();
    return mt_failures ? 1 : 0;
}

/* COLLIE_CHECK=1 with persistent requests (any team): each round a persistent allreduce
 * started three times, freed, then a blocking allreduce.  A persistent request once ended
 * before its agreement step, so its next start skipped the step on that rank only and the
 * ranks' call numbers parted (a mismatch "found by COLLIE_CHECK" in about 1 run in 3). */
int mt_persistent_check(collie_team_t *world) {
    enum { N = 1000, BIG = 40000 };
    int64_t *v = malloc(BIG * sizeof *v), *o = malloc(N * sizeof *o);
    for (int round = 0; round < 60 && !mt_failures; round++) {
        collie_request_t *req = NULL;
        for (int i = 0; i < N; i++)
            v[i] = mt_rank + i + round;
        mt_expect_st(collie_allreduce_init(world, v, o, N, COLLIE_INT64, COLLIE_SUM, &req),
                     COLLIE_OK, "allreduce_init");
        for (int k = 0; k < 3 && req; k++) {
            mt_expect_st(collie_start(req), COLLIE_OK, "start");
            mt_expect_st(collie_wait(req), COLLIE_OK, "wait");
            mt_expect(o[7] == (int64_t)mt_size * (7 + round) + (int64_t)mt_size * (mt_size - 1) / 2,
                      "persistent result");
        }
        collie_request_free(req);
        for (int i = 0; i < BIG; i++)
            v[i] = mt_rank;
        mt_expect_st(collie_allreduce(world, COLLIE_IN_PLACE, v, BIG, COLLIE_INT64, COLLIE_SUM),
                     COLLIE_OK, "blocking allreduce after the persistent one");
        mt_expect(v[BIG - 1] == (int64_t)mt_size * (mt_size - 1) / 2, "blocking result");
    }
    free(v);
    free(o);
    if (mt_rank == 0)
        printf("mp_teams persistent_check P=%d: %s\n", mt_size, mt_failures ? "FAILED" : "passed");
    fflush(stdout);
    collie_finalize();
    return mt_failures ? 1 : 0;
}

/* Rank P-1 is killed after a barrier; every other rank's split must fail naming it. */
int mt_dead(collie_team_t *world) {
    signal(SIGTERM, SIG_IGN);   /* report before collie-run's SIGKILL, 2 s after the death */
    mt_expect_st(collie_barrier(world), COLLIE_OK, "barrier before the death");
    if (mt_rank == mt_size - 1)
        raise(SIGKILL);
    collie_team_t *t = NULL;
    int st = collie_team_split(world, mt_rank % 2, 0, &t);
    mt_expect_st(st, COLLIE_ERR_PEER, "split with a dead rank");
    char want[32];
    snprintf(want, sizeof want, "rank %d", mt_size - 1);
    mt_expect_msg(want, "the error names the dead rank");
    mt_expect(t == NULL, "no team");
    if (mt_rank == 0)
        printf("mp_teams dead P=%d: %s\n", mt_size, mt_failures ? "FAILED" : "passed");
    fflush(stdout);
    collie_finalize();
    return mt_failures ? 1 : 0;
}
