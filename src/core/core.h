/*
 * core.h — internal interface of the API layer for tools and tests (collie-bench forces
 * algorithms per measurement; tests run schedules in-process).
 */
#ifndef COLLIE_CORE_H
#define COLLIE_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include "collie.h"
#include "algorithms/algorithm.h"

/* Same as setting COLLIE_<COLL>_ALGO=spec (e.g. "ring", "nway_dissemination:n=3", "auto")
 * for collectives started from now on.  COLLIE_ERR_ARG for an unknown name or bad params. */
int collie_force_algorithm(int coll, const char *spec);

/* Parses "name[:key=value[,key=value]]" into name (size namesz) and params.
 * COLLIE_OK or COLLIE_ERR_ARG (message set). */
int collie_parse_algo_spec(const char *spec, char *name, size_t namesz, collie_algo_params *params);

/* true when the team's multicast was set up and verified at creation (mcast broadcast). */
bool collie_team_multicast(const collie_team_t *team);
/* Every rank can read and write every other rank's buffers (direct_segments). */
bool collie_team_single_copy(const collie_team_t *team);
/* Bytes per copy cell of the team's shm transport (algorithms/cells.c), 0 without cells. */
uint64_t collie_team_cell_bytes(const collie_team_t *team);
/* This rank's multicast broadcast counters so far: fragments it took from datagrams,
 * fragments it took from the chain, calls it finished without the chain.  False when the
 * team has no multicast. */
bool collie_team_mcast_stats(const collie_team_t *team, uint64_t *by_mcast, uint64_t *by_chain,
                             uint64_t *finished_by_mcast);
/* Datagrams this rank dropped so far: without a valid MAC (forged or corrupted), of older
 * calls (replayed or late), repeated fragments (duplicates).  False without multicast. */
bool collie_team_mcast_rejects(const collie_team_t *team, uint64_t *forged, uint64_t *stale,
                               uint64_t *duplicates);

#endif
