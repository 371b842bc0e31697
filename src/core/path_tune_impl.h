/*
 * path_tune_impl.h — what path_tune.c (the trial of the ways) and path_revisit.c (the
 * choice revisited after it) share: a size class's record of a collective's calls.  Not
 * for other files: they use path_tune.h.
 */
#ifndef COLLIE_PATH_TUNE_IMPL_H
#define COLLIE_PATH_TUNE_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/path_tune.h"

/* Counted calls per block, at most (blocks of 4, the first not counted). */
#define BLOCK_COUNTED 3

typedef struct tune_class {
    uint64_t best[PATH_WAYS];   /* per way, ns: the best of its blocks' times */
    uint64_t block_ns[BLOCK_COUNTED];   /* the current block's counted calls */
    uint8_t in_block;   /* how many of them */
    uint8_t block_way;  /* their way */
    uint8_t calls;      /* calls timed so far */
    uint8_t chosen;     /* 0 until decided, then 1 + the way */
    uint8_t trial;      /* 0 until the first call, then 1 + TRIAL_* */
    uint8_t skip;       /* 0, or the untimed calls once the warm-up ended them (warm_up) */
    uint64_t warm_ns;   /* the untimed calls' time so far */
    /* After the choice (path_revisit.c): */
    uint8_t revisit;    /* REVISIT_WATCH, _PROBE, _CHECK (switched) or _DONE */
    uint8_t other_way;  /* the way probed, or left at the switch */
    uint16_t settle;    /* calls before the current window */
    uint16_t window;    /* calls in the current window */
    uint64_t window_ns; /* their time, each capped */
    uint64_t kept_ns;   /* the mean of the chosen way's window */
} tune_class;

/* "the kernel copy", "shared memory", ... for the log. */
const char *path_way_name(int way);
/* A call of class c after its choice (the decider's time ns by `path`); `driver`: the
 * direct-access driver's table for buffers that are not all mapped (path_revisit.c). */
void path_tune_revisit(collie_request_t *req, tune_class *c, int path, uint64_t ns, bool driver);
/* The way of the next call of a chosen class: the chosen one, or the one it probes. */
int path_tune_revisit_way(const tune_class *c);

#endif
