/*
 * check.c — COLLIE_CHECK=1: an agreement step before every call, so that every rank of
 * the team reports a mismatch, also where no message of the call itself meets (two ranks
 * that both believe they are the root of a bcast).
 *
 * Each call gets a companion allreduce (planned with it, started just before it): a
 * P x 4 table of uint64, each rank filling its own row with its call's identity
 * (call_id.c: collective and form, root, count in bytes or the v form's counts hash,
 * datatype, op identity, algorithm) and
 * zeros elsewhere, summed (bxor).  When the step finishes every rank holds every row and
 * compares them; any difference fails the team on every rank with COLLIE_ERR_MISMATCH
 * naming both calls.  The step is itself an ordinary collective of fixed shape, so it
 * matches between ranks whatever they called.  Cost: one allreduce of 32·P bytes per call.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/internal.h"
#include "types/types.h"

enum { ROW = 4 };

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void fill_row(const collie_request_t *req, uint64_t *row) {
    const collie_call_id *id = &req->id;
    row[0] = (uint64_t)id->coll << 32 | (uint32_t)id->root;
    row[1] = id->bytes;
    row[2] = (uint64_t)id->dtype << 32 | id->op;
    row[3] = (uint64_t)name_hash(req->algo->name) << 32 | (uint64_t)id->vform << 1 |
             1;   /* 1: the row is present */
}

static void row_id(const uint64_t *row, uint32_t seq, collie_call_id *id) {
    memset(id, 0, sizeof *id);
    id->coll = (uint8_t)(row[0] >> 32);
    id->root = (int32_t)(uint32_t)row[0];
    id->bytes = row[1];
    id->dtype = (uint32_t)(row[2] >> 32);
    id->op = (uint32_t)row[2];
    id->vform = (uint8_t)(row[3] >> 1 & 1);
    id->seq_plus1 = seq + 1;
}

int collie_check_plan(collie_request_t *req) {
    collie_team_t *team = req->team;
    size_t n = (size_t)team->size * ROW;
    uint64_t *table = calloc(n, sizeof *table);
    if (!table)
        return collie_fail(COLLIE_ERR_NOMEM, "COLLIE_CHECK: no memory for the agreement table");
    collie_request_t *step = NULL;
    team->check_calls = false;     /* the step itself is not checked */
    /* The step is matched as its request is: a persistent request matched by initialization
     * order (started in a different order on every rank) gets a step matched so too, else
     * the steps of two such requests met between ranks and reported a mismatch that was not
     * there (mp_soak persistent under COLLIE_CHECK=1). */
    int how = req->args.any_order ? COLLIE_REQ_BY_INIT : 1;
    int st = collie_request_build(team, COLL_ALLREDUCE, COLLIE_IN_PLACE, table, n, COLLIE_UINT64,
                                  collie_builtin_op(COLLIE_OPID_BXOR), 0, how, &step);
    team->check_calls = true;
    if (st) {
        free(table);
        return st;
    }
    step->checks = req;
    req->check_step = step;
    return COLLIE_OK;
}

void collie_check_start(collie_request_t *req) {
    collie_request_t *step = req->check_step;
    uint64_t *table = step->buf[SBUF_RECV];
    memset(table, 0, (size_t)req->team->size * ROW * sizeof *table);
    fill_row(req, table + (size_t)req->team->rank * ROW);
    if (collie_start(step) != COLLIE_OK)
        collie_log(COLLIE_LOG_WARN, "COLLIE_CHECK: the agreement step did not start: %s",
                   collie_last_error());
}

int collie_check_verify(collie_request_t *step) {
    const collie_request_t *req = step->checks;
    const uint64_t *table = step->buf[SBUF_RECV];
    int P = req->team->size, me = req->team->rank;
    const uint64_t *mine = table + (size_t)me * ROW;
    /* Rows equal to this rank's are equal to each other: comparing against it suffices. */
    for (int q = 0; q < P; q++) {
        const uint64_t *row = table + (size_t)q * ROW;
        if (!memcmp(row, mine, ROW * sizeof *row))
            continue;
        collie_call_id a, b;
        row_id(mine, req->call_seq, &a);
        row_id(row, req->call_seq, &b);
        return collie_call_mismatch(&a, q, "called", &b, "found by COLLIE_CHECK");
    }
    return COLLIE_OK;
}

void collie_check_free(collie_request_t *req) {
    collie_request_t *step = req->check_step;
    if (!step)
        return;
    req->check_step = NULL;
    step->checks = NULL;
    void *table = step->buf[SBUF_RECV];
    collie_request_free(step);
    free(table);
}
