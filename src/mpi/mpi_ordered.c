/*
 * mpi_ordered.c — persistent collectives matched by start order where the program asserts
 * it: MPI-4's info key mpi_assert_strict_persistent_collective_ordering = true, on the
 * MPI_*_init call's info or on the communicator's (MPI_Comm_set_info, MPI_Comm_dup_with_info).
 * (Open MPI 4.1 cannot carry it: its MPI_MAX_INFO_KEY is 36, the key 48 characters long.)
 *
 * Without it, collie matches persistent requests by initialization order (ranks may start
 * them in different orders), which excludes the algorithms that match calls by sequence
 * number on the shm board (direct_segments, direct_copy, the copy cells).  With it, every
 * rank starts the communicator's persistent collectives in one order, so the request is
 * planned like a blocking call's cached plan: matched by start order, any algorithm.
 */
#include <strings.h>

#include "algorithms/algorithm.h"
#include "core/api.h"
#include "mpi/mpi_layer.h"

static const char key[] = "mpi_assert_strict_persistent_collective_ordering";

/* An MPI whose MPI_MAX_INFO_KEY is shorter than the key (Open MPI 4.1: 36) cannot hold it. */
static bool info_true(MPI_Info info) {
    char value[16] = "";
    int flag = 0;
    if (sizeof key > MPI_MAX_INFO_KEY || info == MPI_INFO_NULL ||
        PMPI_Info_get(info, key, (int)sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
        return false;
    return strcasecmp(value, "true") == 0;
}

bool cm_start_order_asserted(MPI_Info info, MPI_Comm comm) {
    if (info_true(info))
        return true;
    MPI_Info ci = MPI_INFO_NULL;
    if (PMPI_Comm_get_info(comm, &ci) != MPI_SUCCESS || ci == MPI_INFO_NULL)
        return false;
    bool yes = info_true(ci);
    PMPI_Info_free(&ci);
    return yes;
}

int cm_plan_start_order(const cm_call *c, collie_request_t **req) {
    bool bcast = c->coll == COLL_BCAST, barrier = c->coll == COLL_BARRIER;
    collie_call call = {
        .fn = c->fn,
        .coll = c->coll,
        .sendbuf = bcast ? c->crecv : barrier ? NULL : c->csend,
        .recvbuf = barrier ? NULL : c->crecv,
        .count = barrier ? 0 : c->ccount,
        .v = NULL,
        .dtype = barrier ? COLLIE_UINT8 : c->cdtype,
        .op = collie_coll_has_op(c->coll) ? c->cop : NULL,
        .root = c->coll == COLL_ALLREDUCE || barrier ? 0 : c->root,
    };
    return collie_api_persistent_ordered(c->team, &call, req);
}
