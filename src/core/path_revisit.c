/*
 * path_revisit.c — the choice of way of a size class (path_tune.c), revisited once it is
 * in use: allreduce and reduce `direct_segments`, where every rank has a core.
 *
 * A trial's blocks are a few calls early in a size class's life, and a way can run slower
 * for good than in them, or the other way's blocks can have been slow: reduce of 128 KiB
 * at P = 2 with reused buffers took the slots in 2 launches of 3 (trial 8.7-12.2 us
 * against the kernel copy's 9.3-10.6, or 12.1 once), which then ran at 12.6-14.3 against
 * the kernel copy's 9.2-9.5, because every few hundred calls their copies between the
 * cores ran 1.7x slower for some 60 calls (2026-12-04, Intel Xeon VM;
 * docs/measurements.md).  So once the class chose, the decider times REVISIT_WINDOW calls
 * of that way (after REVISIT_SETTLE) and then probes the fastest other way of the trial
 * for PROBE_SKIP + PROBE_COUNTED calls, their mean against the window's (each call of the
 * window capped at 4x the way's trial time, each of the probe at 4x the window's mean, so
 * that one descheduled call does not decide; a probe call that cannot go the probed way
 * ends the revisit).  If the probed way took less
 * than 1 / PROBE_GAIN of the time, the class takes it and times one window of it, and
 * goes back if that window is slower than the one before the probe.  Then the choice
 * stands: 18 calls of the other way once, and a window of the new way at most.  Every
 * rank follows the decider's way of each call (posted on the board), and every way gives
 * the same bits.
 *
 * Measured (collie-bench --coll reduce or allreduce --min-bytes 32K --max-bytes 2M
 * --step-factor 4 --barrier-each [--fresh-data], 2026-12-04, Intel Xeon VM, P = 2):
 * reduce 128 KiB reused took the slots in 2 launches of 6 and both switched to the kernel
 * copy (windows 11.8 / 12.4 us, probes 9.1 / 10.8; the size 9.4 / 9.9 for the slowest
 * rank against 9.3-9.7 where the trial took the kernel copy); allreduce 32 KiB switched in 3 launches of 4 (slots
 * 3.9 / 4.4 -> kernel copy 3.5 / 3.4 reused, kernel copy 5.2 -> cells 4.6 fresh); the
 * other sizes kept their way; with the revisit off (a test build) allreduce 32 KiB - 2 MiB
 * within noise of it, 3 rounds alternating.
 */
#include "base/base.h"
#include "core/path_tune_impl.h"

enum { REVISIT_WATCH = 0, REVISIT_PROBE = 1, REVISIT_CHECK = 2, REVISIT_DONE = 3 };
#define REVISIT_SETTLE 64
#define REVISIT_WINDOW 256
#define PROBE_SKIP 2            /* calls of the probed way not counted (its buffers cold) */
#define PROBE_COUNTED 16
#define PROBE_GAIN 1.1          /* the probed way must take less than 1 / 1.1 of the time */

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

int path_tune_revisit_way(const tune_class *c) {
    return c->revisit == REVISIT_PROBE ? c->other_way : c->chosen - 1;
}

static void log_revisit(const collie_request_t *req, int level, const char *what, int way,
                        uint64_t ns, int other, uint64_t other_ns, const char *then) {
    int k = collie_size_class(req->args.bytes);
    collie_log(level, "rank %d: %s of %llu B up to %llu B: %s by %s took %.1f us on "
               "average, by %s %.1f: %s", req->args.rank, collie_coll_name(req->args.coll),
               1ull << k, (2ull << k) - 1, what, path_way_name(way), ns / 1e3,
               path_way_name(other), other_ns / 1e3, then);
}

static void log_probe(const collie_request_t *req, int way, uint64_t ns, int other) {
    int k = collie_size_class(req->args.bytes);
    collie_log(COLLIE_LOG_DEBUG, "rank %d: %s of %llu B up to %llu B: %d calls by %s took %.1f us "
               "on average: probing %s for %d calls", req->args.rank,
               collie_coll_name(req->args.coll), 1ull << k, (2ull << k) - 1, REVISIT_WINDOW,
               path_way_name(way), ns / 1e3, path_way_name(other), PROBE_SKIP + PROBE_COUNTED);
}

/* Adds a call to the current window (each call at most `cap` ns); the window's mean once
 * it has `len` calls, else 0. */
static uint64_t window_add(tune_class *c, uint64_t ns, uint64_t cap, int len) {
    c->window_ns += ns < cap ? ns : cap;
    if (++c->window < len)
        return 0;
    uint64_t mean = c->window_ns / (uint64_t)len;
    c->window = 0;
    c->window_ns = 0;
    return mean;
}

/* The probe's counted calls ended: switch if the probed way was clearly faster. */
static void probe_done(const collie_request_t *req, tune_class *c, uint64_t mean) {
    int kept = c->chosen - 1;
    if ((double)mean * PROBE_GAIN >= (double)c->kept_ns) {
        log_revisit(req, COLLIE_LOG_DEBUG, "a window of calls", kept, c->kept_ns, c->other_way,
                    mean, "keeping the former");
        c->revisit = REVISIT_DONE;
        return;
    }
    log_revisit(req, COLLIE_LOG_INFO, "a window of calls", kept, c->kept_ns, c->other_way, mean,
                "taking the latter");
    c->chosen = (uint8_t)(1 + c->other_way);
    c->other_way = (uint8_t)kept;
    c->revisit = REVISIT_CHECK;
    c->settle = 0;
}

void path_tune_revisit(collie_request_t *req, tune_class *c, int path, uint64_t ns, bool driver) {
    if (!revisited(req, driver) || c->revisit == REVISIT_DONE)
        return;
    if (path != path_tune_revisit_way(c)) {   /* a call that could not go that way */
        if (c->revisit == REVISIT_PROBE)
            c->revisit = REVISIT_DONE;           /* the probe given up: the choice stands */
        return;
    }
    if (c->revisit == REVISIT_PROBE) {
        if (c->settle++ < PROBE_SKIP)
            return;
        uint64_t mean = window_add(c, ns, 4 * c->kept_ns, PROBE_COUNTED);
        if (mean)
            probe_done(req, c, mean);
        return;
    }
    if (c->settle < REVISIT_SETTLE) {
        c->settle++;
        return;
    }
    uint64_t ref = c->revisit == REVISIT_CHECK ? c->kept_ns : c->best[c->chosen - 1];
    uint64_t cap = ref ? 4 * ref : UINT64_MAX;
    uint64_t mean = window_add(c, ns, cap, REVISIT_WINDOW);
    if (!mean)
        return;
    if (c->revisit == REVISIT_CHECK) {   /* the way taken, against the window that left */
        bool back = mean > c->kept_ns;
        log_revisit(req, back ? COLLIE_LOG_INFO : COLLIE_LOG_DEBUG, "once taken, the calls",
                    c->chosen - 1, mean, c->other_way, c->kept_ns,
                    back ? "going back" : "keeping the former");
        if (back)
            c->chosen = (uint8_t)(1 + c->other_way);
        c->revisit = REVISIT_DONE;
        return;
    }
    int other = fastest_other(c, c->chosen - 1);
    c->kept_ns = mean;
    c->revisit = other < 0 ? REVISIT_DONE : REVISIT_PROBE;
    c->other_way = (uint8_t)(other < 0 ? 0 : other);
    c->settle = 0;
    if (other >= 0)
        log_probe(req, c->chosen - 1, mean, other);
}
