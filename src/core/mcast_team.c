/*
 * mcast_team.c — a team's multicast, set up when the team is created (the paper's
 * pre-posted receives: Hoefler 2007 §2.1, §3), never on the critical path of a broadcast.
 *
 * When: COLLIE_MCAST=on, or (default COLLIE_MCAST=auto) when COLLIE_BCAST_ALGO forces
 * mcast or a rule of the tuning file names it; COLLIE_MCAST=off never.  All ranks must see
 * the same setting (collie-run passes one environment to all).
 *
 * Steps, all over the team's own collectives (binomial, dissemination, recursive doubling
 * are forced, not selected):
 *   1. rank 0 draws the group (239.1-254.x.1-254, administratively scoped, RFC 2365), the
 *      port, the team id and the synchronisation seed from getrandom() and broadcasts them;
 *   2. every rank opens its socket (mcast.c): bound, joined, receive buffer sized;
 *   3. barrier; then every rank multicasts a probe and collects probes until it has one
 *      from every rank (resending its own every 20 ms) or COLLIE_MCAST_PROBE_MS passes;
 *   4. an allreduce (min) agrees on "everyone heard everyone" and on the fragment size
 *      (the smallest of: every rank's MTU payload, the shm slot size, COLLIE_MCAST_FRAG).
 * Multicast is used only when step 4 says every rank succeeded; otherwise team->mcast stays
 * NULL, "mcast" declines every call and the reason is logged (warn when mcast was forced).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <sys/random.h>

#include "base/base.h"
#include "core/core.h"
#include "core/mcast_team.h"
#include "select/tuning.h"

extern const collie_algorithm collie_algo_bcast_mcast;

/* Runs one collective with a named algorithm and waits for it. */
static int internal_call(collie_team_t *team, const char *algo, int coll, void *buf,
                         size_t count, collie_dtype_t dtype, collie_op_t op) {
    const collie_algorithm *alg = collie_algorithm_find(coll, algo);
    collie_request_t *req = NULL;
    int st = collie_request_build_with(team, alg, coll, coll == COLL_ALLREDUCE ? COLLIE_IN_PLACE : NULL,
                                       buf, count, dtype, op, 0, false, &req);
    if (!st)
        st = collie_start(req);
    if (!st)
        st = collie_wait(req);
    collie_request_free(req);
    return st;
}

static bool tuning_names_mcast(void) {
    const collie_tuning *t = collie_select_tuning();
    for (int i = 0; t && i < t->nrules; i++)
        if (t->rules[i].alg == &collie_algo_bcast_mcast)
            return true;
    return false;
}

/* Should this team set up multicast?  *why says why not. */
static bool wanted(const collie_team_t *team, bool *forced, const char **why) {
    const char *mode = collie_env_str("COLLIE_MCAST", "auto");
    const char *bcast = collie_forced_algorithm(COLL_BCAST, NULL);
    *forced = bcast && strcmp(bcast, "mcast") == 0;
    if (team->size < 2)
        return *why = "a team of one", false;
    if (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0)
        return *why = "COLLIE_MCAST=off", false;
    if (strcmp(mode, "on") == 0 || strcmp(mode, "1") == 0 || *forced || tuning_names_mcast())
        return true;
    if (strcmp(mode, "auto") != 0)
        collie_log(COLLIE_LOG_WARN, "COLLIE_MCAST=%s: expected on, off or auto", mode);
    return *why = "neither COLLIE_MCAST=on nor COLLIE_BCAST_ALGO=mcast nor a tuning rule "
                  "naming mcast", false;
}

/* The setup block rank 0 draws and broadcasts. */
typedef struct setup_block {
    uint64_t team_id, seed;
    uint32_t group_be;
    uint32_t port;
    unsigned char key[MCAST_KEY_BYTES];   /* the datagrams' MAC key (never on the network) */
} setup_block;

static int draw(setup_block *b) {
    unsigned char r[24];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: getrandom failed");
    memcpy(&b->team_id, r, 8);
    memcpy(&b->seed, r + 8, 8);
    uint32_t g = (239u << 24) | ((uint32_t)(1 + r[16] % 254) << 16) | ((uint32_t)r[17] << 8) |
                 (uint32_t)(1 + r[18] % 254);
    b->group_be = htonl(g);
    b->port = 20000u + ((uint32_t)r[19] << 8 | r[20]) % 40000u;
    return mcast_new_key(b->key);
}

static void send_probe(collie_mcast *mc, int rank) {
    mcast_hdr h = { MCAST_MAGIC, MCAST_KIND_PROBE, mc->team_id, 0, rank, 0, 0, 0, 0, 0, 0, 0, { 0 } };
    mcast_send(&mc->sock, &h, NULL);
}

/* Step 3: true when a probe from every rank arrived in time. */
static bool probe_all(collie_mcast *mc, int rank, int size, char *why, size_t whylen) {
    char *heard = calloc((size_t)size, 1);
    int nheard = 0;
    uint64_t start = collie_now_ns(), last_send = 0;
    uint64_t limit = (uint64_t)collie_env_int("COLLIE_MCAST_PROBE_MS", 2000) * 1000000ull;
    while (heard && nheard < size && collie_now_ns() - start < limit) {
        if (collie_now_ns() - last_send > 20000000ull) {
            send_probe(mc, rank);
            last_send = collie_now_ns();
        }
        mcast_wait(&mc->sock, 5000000ull);
        long n;
        while ((n = mcast_recv(&mc->sock)) > 0) {
            const mcast_hdr *h = (const mcast_hdr *)mc->sock.buf;
            if ((size_t)n < sizeof *h || h->magic != MCAST_MAGIC || h->kind != MCAST_KIND_PROBE ||
                h->team_id != mc->team_id || h->root < 0 || h->root >= size || heard[h->root])
                continue;
            heard[h->root] = 1;
            nheard++;
        }
    }
    snprintf(why, whylen, "rank %d heard probes from %d of %d ranks within %llu ms on %s "
             "(COLLIE_MCAST_IF, COLLIE_MCAST_PROBE_MS)", rank, nheard, size,
             (unsigned long long)(limit / 1000000ull), mc->sock.ifname);
    free(heard);
    return nheard == size;
}

static void read_options(collie_mcast *mc) {
    long long delay = collie_env_int("COLLIE_MCAST_ROOT_DELAY_US", 0);
    mc->root_delay_ns = delay > 0 ? (uint64_t)delay * 1000ull : 0;
    const char *sync = collie_env_str("COLLIE_MCAST_SYNC", "none");
    mc->sync_random = strcmp(sync, "random") == 0;
    if (!mc->sync_random && strcmp(sync, "none") != 0)
        collie_log(COLLIE_LOG_WARN, "COLLIE_MCAST_SYNC=%s: expected none or random; using none", sync);
}

/* Steps 2-3 on this rank: *ok when it works (why says why not); an error only when the
 * team's barrier fails. */
static int try_local(collie_team_t *team, collie_mcast *mc, const setup_block *b, bool *opened,
                     bool *ok, char *why, size_t whylen) {
    mc->team_id = b->team_id;
    mc->seed = b->seed;
    *opened = mcast_open(&mc->sock, team->rank, b->group_be, (uint16_t)b->port, b->key) == COLLIE_OK;
    if (!*opened)
        snprintf(why, whylen, "%s", collie_last_error());
    int st = internal_call(team, "dissemination", COLL_BARRIER, NULL, 0, COLLIE_UINT8, NULL);
    *ok = !st && *opened && probe_all(mc, team->rank, team->size, why, whylen);
    return st;
}

static uint32_t frag_limit(const collie_team_t *team, const collie_mcast *mc) {
    uint64_t f = mc->sock.max_payload;
    if (team->tp->slot_bytes < f)
        f = team->tp->slot_bytes;
    long long user = collie_env_int("COLLIE_MCAST_FRAG", 0);
    if (user >= 64 && (uint64_t)user < f)
        f = (uint64_t)user;
    return (uint32_t)f;
}

static int finish(collie_team_t *team, collie_mcast *mc, bool forced, bool ok, const char *why) {
    if (!ok) {
        collie_log(forced ? COLLIE_LOG_WARN : COLLIE_LOG_INFO, "multicast is not used on this "
                   "team: %s; mcast declines every broadcast, auto never chooses it", why);
        if (mc->sock.fd >= 0)
            mcast_close(&mc->sock);
        free(mc);
        return COLLIE_OK;
    }
    team->tp->discard = calloc((size_t)team->size, sizeof *team->tp->discard);
    if (!team->tp->discard) {
        mcast_close(&mc->sock);
        free(mc);
        return collie_fail(COLLIE_ERR_NOMEM, "multicast: cannot allocate the discard counters");
    }
    read_options(mc);
    team->mcast = mc;
    char group[INET_ADDRSTRLEN], ifaddr[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &mc->sock.group.sin_addr, group, sizeof group);
    inet_ntop(AF_INET, &mc->sock.ifaddr, ifaddr, sizeof ifaddr);
    collie_log(COLLIE_LOG_INFO, "multicast group %s:%u on %s (%s, MTU %d), %u-byte fragments, "
               "receive buffer %d bytes, root delay %llu us, sync %s",
               group, ntohs(mc->sock.group.sin_port), mc->sock.ifname, ifaddr, mc->sock.mtu, mc->frag_bytes, mc->sock.rcvbuf,
               (unsigned long long)(mc->root_delay_ns / 1000), mc->sync_random ? "random" : "none");
    return COLLIE_OK;
}

int collie_mcast_team_setup(collie_team_t *team) {
    bool forced;
    const char *why_not = NULL;
    if (!wanted(team, &forced, &why_not)) {
        collie_log(COLLIE_LOG_DEBUG, "multicast not set up: %s", why_not);
        return COLLIE_OK;
    }
    mcast_drop check;   /* a malformed COLLIE_MCAST_DROP fails collie_init on every rank */
    int st = mcast_drop_parse(&check, collie_env_str("COLLIE_MCAST_DROP", NULL), team->rank);
    if (st)
        return st;
    collie_mcast *mc = calloc(1, sizeof *mc);
    if (!mc)
        return collie_fail(COLLIE_ERR_NOMEM, "multicast: cannot allocate the team state");
    mc->sock.fd = -1;
    setup_block b;
    memset(&b, 0, sizeof b);
    st = team->rank == 0 ? draw(&b) : COLLIE_OK;   /* a failed draw sends zeros: group 0 */
    st = internal_call(team, "binomial", COLL_BCAST, &b, sizeof b, COLLIE_UINT8, NULL);
    if (st) {
        free(mc);
        return st;
    }
    bool opened = false;
    char why[512] = "group 0.0.0.0: rank 0 could not draw a random group";
    uint64_t agree[2] = { 0, 0 };
    if (b.group_be) {
        bool ok = false;
        if ((st = try_local(team, mc, &b, &opened, &ok, why, sizeof why))) {
            if (opened)
                mcast_close(&mc->sock);
            free(mc);
            return st;
        }
        agree[0] = ok;
    }
    agree[1] = opened ? frag_limit(team, mc) : 0;
    if ((st = internal_call(team, "recursive_doubling", COLL_ALLREDUCE, agree, 2, COLLIE_UINT64,
                            COLLIE_MIN))) {
        if (opened)
            mcast_close(&mc->sock);
        free(mc);
        return st;
    }
    sodium_memzero(b.key, sizeof b.key);
    mc->frag_bytes = (uint32_t)agree[1];
    if (agree[0] != 1 && strncmp(why, "rank", 4) && opened)
        snprintf(why, sizeof why, "verification failed on another rank (its log says why)");
    return finish(team, mc, forced, agree[0] == 1 && mc->frag_bytes >= 64, why);
}

void collie_mcast_team_free(collie_team_t *team) {
    collie_mcast *mc = team->mcast;
    if (!mc)
        return;
    /* Chain chunks still owed stay unread: never more than the channel holds
     * (algorithms/bcast/mcast.c), so no predecessor waits for this rank. */
    collie_log(COLLIE_LOG_DEBUG, "multicast: %llu broadcasts, fragments by multicast %llu, by the "
               "chain %llu, finished by multicast %llu, datagrams dropped by injection %llu, send "
               "errors %llu; dropped: %llu forged or corrupted (no valid MAC), %llu of older calls, "
               "%llu duplicates", (unsigned long long)mc->calls, (unsigned long long)mc->frags_by_mcast,
               (unsigned long long)mc->frags_by_chain, (unsigned long long)mc->finished_by_mcast,
               (unsigned long long)mc->sock.dropped, (unsigned long long)mc->sock.send_errors,
               (unsigned long long)mc->sock.forged, (unsigned long long)mc->stale,
               (unsigned long long)mc->duplicates);
    mcast_close(&mc->sock);
    free(mc);
    team->mcast = NULL;
}

bool collie_team_mcast_stats(const collie_team_t *team, uint64_t *by_mcast, uint64_t *by_chain,
                             uint64_t *finished_by_mcast) {
    const collie_mcast *mc = team ? team->mcast : NULL;
    if (!mc)
        return false;
    *by_mcast = mc->frags_by_mcast;
    *by_chain = mc->frags_by_chain;
    *finished_by_mcast = mc->finished_by_mcast;
    return true;
}

bool collie_team_mcast_rejects(const collie_team_t *team, uint64_t *forged, uint64_t *stale,
                               uint64_t *duplicates) {
    const collie_mcast *mc = team ? team->mcast : NULL;
    if (!mc)
        return false;
    *forged = mc->sock.forged;
    *stale = mc->stale;
    *duplicates = mc->duplicates;
    return true;
}
