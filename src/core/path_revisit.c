/*
 * path_revisit.c — the choice of way of a size class (path_tune.c), revisited once it is
 * in use: allreduce and reduce `direct_segments`, where every rank has a core.
 *
 * A trial's blocks are a few calls early in a size class's life, and a way can run slower
 * for good than in them: reduce of 128 KiB at P = 2 with reused buffers took the slots in
 * 2 launches of 3 (trial 8.7-12.2 us against the kernel copy's 9.3-10.6), which then ran
 * at 12.6-13.5 against the kernel copy's 9.2-9.5, because every few hundred calls their
 * copies between the cores ran 1.7x slower for some 60 calls (2026-12-04, Intel Xeon VM;
 * docs/measurements.md).  So the decider keeps timing its calls after the choice: after
 * REVISIT_SETTLE calls, the mean of the next REVISIT_WINDOW (each call capped at 4x the
 * reference, so that one descheduled call does not decide).  When it exceeds REVISIT_LOSS
 * times the trial's time of the fastest other way, the class takes that way and times one
 * window of it; if that window is slower than the one that made the switch, it goes back.
 * Then the choice stands.  Every rank follows the decider's way of each call (posted on
 * the board), and every way gives the same bits.
 *
 * Measured (collie-bench --coll reduce --min-bytes 128K --max-bytes 128K --barrier-each,
 * 4 launches): the trial took the slots in 2, and both switched to the kernel copy (256
 * calls at 13.2 / 12.8 us against the trial's 10.4 / 10.2); the size's time (slowest
 * rank, the switch included) 9.8-10.6 us against 9.3-10.1 where the trial had taken the
 * kernel copy.  allreduce and reduce 32 KiB - 512 KiB reused and fresh, 2 launches each:
 * no switch.
 */
#include "base/base.h"
#include "core/path_tune_impl.h"

enum { REVISIT_WATCH = 0, REVISIT_CHECK = 1, REVISIT_DONE = 2 };
#define REVISIT_SETTLE 64
#define REVISIT_WINDOW 256
#define REVISIT_LOSS 1.25

/* The way with the best trial time other than `way` (-1: none timed). */
static int fastest_other(const tune_class *c, int way) {
    int best = -1;
    for (int w = 0; w < PATH_WAYS; w++)
        if (w != way && c->best[w] && (best < 0 || c->best[w] < c->best[best]))
            best = w;
    return best;
}

static bool revisited(const collie_request_t *req, bool driver) {
    int coll = req->args.coll;
    return driver && (coll == COLL_ALLREDUCE || coll == COLL_REDUCE) &&
           !req->team->tp->oversubscribed;
}

static void switch_way(collie_request_t *req, tune_class *c, int to, uint64_t mean, uint64_t ref) {
    int from = c->chosen - 1;
    collie_log(COLLIE_LOG_INFO, "rank %d: %s of %llu B up to %llu B: %d calls by %s took %.1f us "
               "on average against %.1f us by %s (%s): taking %s", req->args.rank,
               collie_coll_name(req->args.coll), 1ull << collie_size_class(req->args.bytes),
               (2ull << collie_size_class(req->args.bytes)) - 1, REVISIT_WINDOW,
               path_way_name(from), mean / 1e3, ref / 1e3, path_way_name(to),
               c->revisit == REVISIT_WATCH ? "its trial" : "before the switch", path_way_name(to));
    c->chosen = (uint8_t)(1 + to);
}

void path_tune_revisit(collie_request_t *req, tune_class *c, int path, uint64_t ns, bool driver) {
    if (!revisited(req, driver))
        return;
    int way = c->chosen - 1;
    int other = c->revisit == REVISIT_WATCH ? fastest_other(c, way) : c->left_way;
    if (c->revisit == REVISIT_DONE || path != way || other < 0)
        return;
    if (c->settle < REVISIT_SETTLE) {
        c->settle++;
        return;
    }
    uint64_t ref = c->revisit == REVISIT_WATCH ? c->best[other] : c->left_ns;
    c->window_ns += ns < 4 * ref ? ns : 4 * ref;
    if (++c->window < REVISIT_WINDOW)
        return;
    uint64_t mean = c->window_ns / REVISIT_WINDOW;
    c->settle = 0;
    c->window = 0;
    c->window_ns = 0;
    if (c->revisit == REVISIT_CHECK) {   /* the way taken, against the window that left */
        if (mean > ref)
            switch_way(req, c, other, mean, ref);
        c->revisit = REVISIT_DONE;
        return;
    }
    if ((double)mean <= REVISIT_LOSS * (double)ref)
        return;
    switch_way(req, c, other, mean, ref);
    c->left_way = (uint8_t)way;
    c->left_ns = mean;
    c->revisit = REVISIT_CHECK;
}

