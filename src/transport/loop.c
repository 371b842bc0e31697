/*
 * loop.c — the in-process transport: P virtual ranks in one process, channels in ordinary
 * memory.  Nothing sleeps; the caller drives all ranks in turn (unit tests, simulator,
 * and the team of one).
 */
#include <stdlib.h>
#include <string.h>
#include "base/base.h"
#include "transport/channels.h"
#include "transport/transport.h"

typedef struct loop_shared {
    char *memory;
    int refs;
} loop_shared;

static void loop_wake(collie_transport *tp, int peer) {}
static uint32_t loop_sleep_prepare(collie_transport *tp) { return 0; }
static void loop_sleep(collie_transport *tp, uint32_t token, uint64_t timeout_ns) {}
static void loop_sleep_done(collie_transport *tp) {}
static int loop_check_peer(collie_transport *tp, int peer) { return COLLIE_OK; }

static void *loop_mem_alloc(collie_transport *tp, size_t bytes) {
    void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (!p)
        collie_fail(COLLIE_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    return p;
}

static void loop_mem_free(collie_transport *tp, void *ptr) { free(ptr); }

static void loop_destroy(collie_transport *tp) {
    loop_shared *sh = tp->impl;
    collie_channels_free(tp);
    if (--sh->refs == 0) {
        free(sh->memory);
        free(sh);
    }
    free(tp);
}

static const collie_transport_ops loop_ops = {
    "loop", loop_wake, loop_sleep_prepare, loop_sleep, loop_sleep_done, loop_check_peer,
    loop_mem_alloc, loop_mem_free, loop_destroy, NULL, NULL, NULL, NULL,
};

int collie_loop_create(int size, collie_transport **tps) {
    uint32_t nslots = (uint32_t)collie_env_int("COLLIE_SHM_SLOTS", 4);
    uint32_t slot_bytes = (uint32_t)collie_env_int("COLLIE_SHM_SLOT_BYTES", 4096);
    size_t inbox = collie_inbox_bytes(size, nslots, slot_bytes);
    loop_shared *sh = calloc(1, sizeof *sh);
    char **inboxes = calloc((size_t)size, sizeof *inboxes);
    if (sh)
        sh->memory = aligned_alloc(64, inbox * (size_t)size);
    if (!sh || !inboxes || !sh->memory) {
        free(inboxes);
        if (sh)
            free(sh->memory);
        free(sh);
        return collie_fail(COLLIE_ERR_NOMEM, "cannot allocate %d in-process inboxes", size);
    }
    memset(sh->memory, 0, inbox * (size_t)size);
    for (int r = 0; r < size; r++)
        inboxes[r] = sh->memory + (size_t)r * inbox;
    int st = COLLIE_OK, made = 0;
    sh->refs = 1;   /* held by this function until every rank is made */
    for (int r = 0; r < size && st == COLLIE_OK; r++) {
        collie_transport *tp = calloc(1, sizeof *tp);
        tps[r] = tp;
        if (!tp) {
            st = collie_fail(COLLIE_ERR_NOMEM, "cannot allocate %d in-process ranks", size);
            break;
        }
        made++;
        tp->ops = &loop_ops;
        tp->stream_out_min = UINT64_MAX;
        tp->stream_own_min = UINT64_MAX;
        tp->stream_team_min = UINT64_MAX;
        tp->rank = r;
        tp->size = size;
        tp->nslots = nslots;
        tp->slot_bytes = slot_bytes;
        tp->shared_memory = true;
        tp->impl = sh;
        sh->refs++;
        st = collie_channels_wire(tp, inboxes);
    }
    free(inboxes);
    if (st != COLLIE_OK)   /* undo: nothing of a failed creation stays allocated */
        for (int r = 0; r < made; r++) {
            loop_destroy(tps[r]);
            tps[r] = NULL;
        }
    if (--sh->refs == 0) {
        free(sh->memory);
        free(sh);
    }
    return st;
}

int collie_self_create(collie_transport **out) {
    return collie_loop_create(1, out);
}
