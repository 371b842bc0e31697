/*
 * mp_algos.c — the parts of mp_collectives that use the internal algorithm registry:
 * `--list-algorithms COLL` (so run_matrix.sh tests every registered algorithm, including
 * ones added later), and the check that a forced algorithm really runs when it accepts
 * the call.
 */
#include <stdio.h>
#include <string.h>
#include "mp_common.h"
#include "algorithms/algorithm.h"
#include "core/core.h"

static int coll_id(const char *name)
{
    for (int i = 0; i < COLL_COUNT; i++)
        if (strcmp(collie_coll_name(i), name) == 0)
            return i;
    return -1;
}

int mp_list_algorithms(const char *coll)
{
    int id = coll_id(coll);
    if (id < 0) {
        fprintf(stderr, "mp_collectives: unknown collective '%s'\n", coll);
        return 2;
    }
    for (size_t i = 0; i < collie_algorithm_count(id); i++)
        printf("%s\n", collie_algorithm_at(id, i)->name);
    return 0;
}

/* The call used for the check: 1023 float64 SUM (allreduce, reduce to root 0), or bcast
 * of 1023 float64 from root 0, or a barrier. */
static collie_coll_args probe_args(const mp_ctx *c, int coll)
{
    collie_coll_args a;
    memset(&a, 0, sizeof a);
    a.coll = coll;
    a.rank = c->rank;
    a.size = c->size;
    a.count = coll == COLL_BARRIER ? 0 : 1023;
    a.elem_size = coll == COLL_BARRIER ? 1 : 8;
    a.bytes = a.count * a.elem_size;
    a.commutative = true;
    a.in_place = coll == COLL_BCAST;
    a.shared_memory = true;       /* collie-run: the shm transport */
    a.multicast = collie_team_multicast(c->team);
    a.single_copy = collie_team_single_copy(c->team);
    a.cell_bytes = collie_team_cell_bytes(c->team);
    return a;
}

static int start_probe(mp_ctx *c, int coll, double *buf, collie_request_t **req)
{
    switch (coll) {
    case COLL_ALLREDUCE:
        return collie_iallreduce(c->team, buf, buf + 1023, 1023, COLLIE_FLOAT64, COLLIE_SUM, req);
    case COLL_REDUCE:
        return collie_ireduce(c->team, buf, buf + 1023, 1023, COLLIE_FLOAT64, COLLIE_SUM, 0, req);
    case COLL_BCAST:
        return collie_ibcast(c->team, buf, 1023, COLLIE_FLOAT64, 0, req);
    default:
        return collie_ibarrier(c->team, req);
    }
}

void mp_check_algorithm_used(mp_ctx *c, int coll)
{
    static double buf[2 * 1023];
    char name[64];
    collie_coll_args a = probe_args(c, coll);
    if (strcmp(c->algo, "auto") == 0)
        return;
    if (collie_parse_algo_spec(c->algo, name, sizeof name, &a.params) != COLLIE_OK) {
        mp_fail(c, "cannot parse algorithm spec '%s': %s", c->algo, collie_last_error());
        return;
    }
    const collie_algorithm *alg = collie_algorithm_find(coll, name);
    const char *why = NULL;
    bool accepts = alg && collie_algorithm_accepts(alg, &a, &why);
    collie_request_t *req = NULL;
    int st = start_probe(c, coll, buf, &req);
    if (st != COLLIE_OK)
        mp_die(c, st, "algorithm probe");
    const char *used = collie_request_algorithm(req);
    c->checks++;
    if (accepts && (!used || strcmp(used, name) != 0))
        mp_fail(c, "%s forced to %s (which accepts the probe call) but the request runs %s",
                collie_coll_name(coll), name, used ? used : "(null)");
    if (!accepts && used && strcmp(used, name) == 0)
        mp_fail(c, "%s ran %s although it declines the call (%s)", collie_coll_name(coll), name,
                why ? why : "?");
    if ((st = collie_wait(req)) != COLLIE_OK)
        mp_die(c, st, "algorithm probe");
    collie_request_free(req);
}
