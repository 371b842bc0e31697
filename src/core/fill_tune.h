/*
 * fill_tune.h — how this rank copies into the copy cells in a call (memcpy or streaming
 * stores), and out of other ranks' cells (a bcast reader; every rank of allgather and
 * alltoall), per collective and size class,
 * from its own timed calls, tried again after gaps of 128 - 2048 calls of a class
 * (fill_tune.c).
 */
#ifndef COLLIE_FILL_TUNE_H
#define COLLIE_FILL_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/internal.h"

/* Which copies a fill_way times: into this rank's cells, out of other ranks' cells, or
 * (allgather, alltoall `direct`, bcast `direct_copy` readers) out of peers' mapped buffers. */
enum fill_dir { FILL_INTO, FILL_OUT, FILL_MAPPED, FILL_DIRS };

/* One call's copies into (or out of) the cells: the way, and (timed) when it began. */
typedef struct fill_way {
    bool stream;            /* this call copies with streaming stores */
    bool timed;             /* its time counts in a trial (fill_tune_end records it) */
    uint8_t dir;            /* enum fill_dir */
    uint64_t begun_ns;
} fill_way;

/* At the start of req's steps through the cells, for a rank that fills cells in it. */
fill_way fill_tune_begin(collie_request_t *req);
/* The same for a rank's copies out of other ranks' cells (a bcast reader; allgather,
 * alltoall). */
fill_way out_tune_begin(collie_request_t *req);
/* The same for a rank's copies out of its peers' mapped buffers (allgather and alltoall
 * `direct` with collie_alloc or shared-heap buffers), in their own table. */
fill_way mapped_out_tune_begin(collie_request_t *req);
/* req's call is over on this rank: records the time of a timed call (any direction). */
void fill_tune_end(collie_request_t *req, fill_way *w);

#endif
