/*
 * mcast_team.h — a team's multicast: set up, verified and agreed at team creation
 * (mcast_team.c), used by the multicast broadcast (algorithms/bcast/mcast.c).
 */
#ifndef COLLIE_MCAST_TEAM_H
#define COLLIE_MCAST_TEAM_H

#include <stdbool.h>
#include <stdint.h>
#include "core/internal.h"
#include "transport/mcast.h"

typedef struct collie_mcast {
    mcast_socket sock;
    uint64_t team_id;          /* random, in every datagram */
    uint64_t seed;             /* of the random single-process synchronisation */
    uint32_t frag_bytes;       /* payload per datagram and per chain chunk (agreed) */
    uint64_t root_delay_ns;    /* COLLIE_MCAST_ROOT_DELAY_US */
    bool sync_random;          /* COLLIE_MCAST_SYNC=random */
    /* Counters (COLLIE_LOG=debug prints them at finalize; tests read them). */
    uint64_t calls, frags_by_mcast, frags_by_chain, finished_by_mcast;
    uint64_t stale, duplicates;   /* authentic datagrams dropped: of older calls, repeated */
} collie_mcast;

/* Sets up the team's multicast when COLLIE_MCAST asks for it (see mcast_team.c); every
 * rank must call it with the same environment.  COLLIE_OK also when multicast is not used
 * or failed verification (team->mcast stays NULL, the reason is logged); an error only
 * when the team's own collectives fail. */
int collie_mcast_team_setup(collie_team_t *team);
/* Logs the counters (COLLIE_LOG=debug) and closes the socket. */
void collie_mcast_team_free(collie_team_t *team);

#endif
