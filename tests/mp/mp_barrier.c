/*
 * mp_barrier.c — barrier semantics checked through the file system: before a barrier every
 * rank creates a marker file; after it, every rank must see the markers of all ranks.
 * One rank per round arrives late.  Blocking, split-phase and persistent barriers, and
 * three split-phase barriers in flight at once.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "mp_common.h"

enum { BAR_BLOCKING, BAR_SPLIT, BAR_PERSISTENT, BAR_MODES };
static const char *const mode_names[] = { "blocking", "split-phase", "persistent" };

static void marker_path(const mp_ctx *c, int round, int rank, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s/barrier_%d_r%d", c->dir, round, rank);
}

static void write_marker(mp_ctx *c, int round)
{
    char path[512];
    marker_path(c, round, c->rank, path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f) {
        mp_fail(c, "cannot create %s", path);
        return;
    }
    fputs("x\n", f);
    fclose(f);
}

static void check_markers(mp_ctx *c, int round, const char *what)
{
    char path[512];
    c->checks++;
    for (int r = 0; r < c->size; r++) {
        marker_path(c, round, r, path, sizeof path);
        if (access(path, F_OK) != 0) {
            mp_fail(c, "after %s barrier (round %d) rank %d's marker is missing: the barrier "
                    "returned before rank %d arrived", what, round, r, r);
            return;
        }
    }
}

static void run_barrier(mp_ctx *c, int mode, collie_request_t *persistent)
{
    collie_request_t *req = NULL;
    int st;
    if (mode == BAR_BLOCKING) {
        st = collie_barrier(c->team);
    } else if (mode == BAR_SPLIT) {
        st = collie_ibarrier(c->team, &req);
        if (st == COLLIE_OK)
            mp_wait_request(c, req, "ibarrier");
        collie_request_free(req);
    } else {
        st = collie_start(persistent);
        if (st == COLLIE_OK)
            st = collie_wait(persistent);
    }
    if (st != COLLIE_OK)
        mp_die(c, st, mode_names[mode]);
}

/* Three ibarriers in flight, each started after a marker; waited for in reverse order. */
static void barriers_in_flight(mp_ctx *c, int first_round)
{
    collie_request_t *req[3];
    for (int i = 0; i < 3; i++) {
        write_marker(c, first_round + i);
        int st = collie_ibarrier(c->team, &req[i]);
        if (st != COLLIE_OK)
            mp_die(c, st, "ibarrier in flight");
    }
    for (int i = 2; i >= 0; i--) {
        int st = collie_wait(req[i]);
        if (st != COLLIE_OK)
            mp_die(c, st, "ibarrier in flight");
        check_markers(c, first_round + i, "in-flight");
        collie_request_free(req[i]);
    }
}

void mp_test_barrier(mp_ctx *c)
{
    int rounds = c->level == MP_QUICK ? 12 : c->level == MP_LONG ? 120 : 30;
    collie_request_t *persistent = NULL;
    int st = collie_barrier_init(c->team, &persistent);
    if (st != COLLIE_OK)
        mp_die(c, st, "collie_barrier_init");
    for (int round = 0; round < rounds; round++) {
        int mode = round % BAR_MODES;
        if (c->rank == (round / BAR_MODES) % c->size) {
            struct timespec late = { 0, 3000000 };
            nanosleep(&late, NULL);
        }
        write_marker(c, round);
        run_barrier(c, mode, persistent);
        check_markers(c, round, mode_names[mode]);
    }
    collie_request_free(persistent);
    barriers_in_flight(c, rounds);
}
