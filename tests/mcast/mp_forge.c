/*
 * mp_forge.c — forged and replayed multicast datagrams must be dropped, never taken, never
 * fatal (issue 15, item 5).
 *
 *   COLLIE_BCAST_ALGO=mcast collie-run -n P -- mp_forge [ITERS]
 *
 * Rank 1 runs an attacker thread that knows what a local user on the segment can learn
 * (group, port, team id and epochs travel in clear) but not the team's key: it joins the
 * group with its own socket and, for every data datagram it sees, sends
 *   - forgeries for the next epochs with the right magic, team id, root, sizes and a wrong
 *     MAC over garbage payload (without a MAC check these were taken and corrupted
 *     results: D1),
 *   - a "total + 8" forgery for the current epoch (one of these used to kill the job),
 *   - the valid datagram again, twice (duplicates), and valid datagrams of older calls
 *     (replays).
 * Meanwhile every rank runs ITERS broadcasts with rotating roots and checks each result
 * against the root's pattern.  Passes when every call returned COLLIE_OK with the right
 * data and every rank counted forged datagrams (and, all ranks together, replays).
 */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collie.h"
#include "core/core.h"
#include "core/internal.h"
#include "core/mcast_team.h"

#define BYTES 20000

static atomic_bool stop;
static atomic_long sent_forged, sent_replayed;

typedef struct attacker {
    struct sockaddr_in group;
    struct in_addr ifaddr;
    int fd;
} attacker;

static int open_attacker(attacker *a, const collie_mcast *mc) {
    a->group = mc->sock.group;
    a->ifaddr = mc->sock.ifaddr;
    a->fd = socket(AF_INET, SOCK_DGRAM, 0);
    int one = 1;
    setsockopt(a->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(a->fd, (struct sockaddr *)&a->group, sizeof a->group) != 0)
        return -1;
    struct ip_mreq mreq = { a->group.sin_addr, a->ifaddr };
    if (setsockopt(a->fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0)
        return -1;
    setsockopt(a->fd, IPPROTO_IP, IP_MULTICAST_IF, &a->ifaddr, sizeof a->ifaddr);
    unsigned char loop = 1;
    setsockopt(a->fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    return 0;
}

static void send_raw(attacker *a, const void *p, size_t n, atomic_long *count) {
    if (sendto(a->fd, p, n, 0, (struct sockaddr *)&a->group, sizeof a->group) == (ssize_t)n)
        (*count)++;
}

/* For a valid datagram (h, n bytes) seen on the group: forgeries and replays. */
static void attack(attacker *a, const unsigned char *d, size_t n, unsigned char *old, size_t *old_n) {
    mcast_hdr h;
    memcpy(&h, d, sizeof h);
    if (h.magic != MCAST_MAGIC || h.kind != MCAST_KIND_DATA)
        return;
    unsigned char f[MCAST_MAX_DATAGRAM];
    for (uint32_t ahead = 1; ahead <= 2; ahead++) {   /* future epochs, garbage, wrong MAC */
        mcast_hdr g = h;
        g.epoch = h.epoch + ahead;
        memset(g.mac, 0xA5, sizeof g.mac);
        memcpy(f, &g, sizeof g);
        memset(f + sizeof g, 0xEE, n - sizeof g);
        send_raw(a, f, n, &sent_forged);
    }
    mcast_hdr g = h;   /* the one-packet denial of service: total + 8 */
    g.total += 8;
    g.mac[0] ^= 1;
    memcpy(f, &g, sizeof g);
    memcpy(f + sizeof g, d + sizeof g, n - sizeof g);
    send_raw(a, f, n, &sent_forged);
    memcpy(f, d, n);   /* a valid datagram with one payload bit flipped */
    if (n > sizeof g) {
        f[n - 1] ^= 0x10;
        send_raw(a, f, n, &sent_forged);
    }
    send_raw(a, d, n, &sent_replayed);   /* duplicates */
    send_raw(a, d, n, &sent_replayed);
    if (*old_n)
        send_raw(a, old, *old_n, &sent_replayed);   /* an older call */
    memcpy(old, d, n);
    *old_n = n;
}

static void *attacker_main(void *arg) {
    attacker *a = arg;
    static unsigned char d[MCAST_MAX_DATAGRAM], old[MCAST_MAX_DATAGRAM];
    size_t old_n = 0;
    int64_t last_epoch = -1;
    while (!atomic_load(&stop)) {
        struct pollfd p = { a->fd, POLLIN, 0 };
        if (poll(&p, 1, 10) <= 0)
            continue;
        ssize_t n = recv(a->fd, d, sizeof d, 0);
        if (n < (ssize_t)sizeof(mcast_hdr))
            continue;
        mcast_hdr h;
        memcpy(&h, d, sizeof h);
        /* Attack the first fragment of each call (and skip our own datagrams). */
        if (h.magic != MCAST_MAGIC || h.kind != MCAST_KIND_DATA || h.frag != 0 ||
            (int64_t)h.epoch <= last_epoch || h.mac[0] == 0xA5)
            continue;
        last_epoch = h.epoch;
        attack(a, d, (size_t)n, old, &old_n);
    }
    return NULL;
}

static void fill(unsigned char *b, int iter, int root) {
    for (size_t i = 0; i < BYTES; i++)
        b[i] = (unsigned char)(i * 7 + (size_t)iter * 13 + (size_t)root * 101);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 60;
    if (collie_init() != COLLIE_OK) {
        fprintf(stderr, "collie_init: %s\n", collie_last_error());
        return 1;
    }
    collie_team_t *w = collie_world();
    int rank = collie_rank(w), size = collie_size(w), bad = 0;
    if (!w->mcast) {
        fprintf(stderr, "mp_forge: the team has no multicast (COLLIE_BCAST_ALGO=mcast?)\n");
        return 1;
    }
    attacker a;
    pthread_t thr;
    bool attacking = rank == 1 && open_attacker(&a, w->mcast) == 0;
    if (rank == 1 && !attacking) {
        fprintf(stderr, "mp_forge: the attacker could not join the group\n");
        bad++;
    }
    if (attacking)
        pthread_create(&thr, NULL, attacker_main, &a);
    unsigned char *buf = malloc(BYTES), *want = malloc(BYTES);
    for (int it = 0; it < iters && !bad; it++) {
        int root = it % size;
        fill(want, it, root);
        if (rank == root)
            memcpy(buf, want, BYTES);
        else
            memset(buf, 0, BYTES);
        int st = collie_bcast(w, buf, BYTES, COLLIE_UINT8, root);
        if (st != COLLIE_OK) {
            fprintf(stderr, "FAIL rank %d: bcast %d returned %s: %s\n", rank, it, collie_strerror(st),
                    collie_last_error());
            bad++;
        } else if (memcmp(buf, want, BYTES) != 0) {
            fprintf(stderr, "FAIL rank %d: bcast %d (root %d) returned OK with wrong data\n", rank, it, root);
            bad++;
        }
        usleep(2000);   /* give the attacker time to strike between calls */
    }
    if (attacking) {
        atomic_store(&stop, true);
        pthread_join(thr, NULL);
    }
    uint64_t forged = 0, stale = 0, dups = 0, total[3];
    collie_team_mcast_rejects(w, &forged, &stale, &dups);
    uint64_t mine[3] = { forged, stale + dups, forged ? 1 : 0 };
    if (collie_allreduce(w, mine, total, 3, COLLIE_UINT64, COLLIE_SUM) != COLLIE_OK)
        bad++, total[1] = total[2] = 0;
    printf("mp_forge rank %d: %d bcasts, dropped %llu forged, %llu of older calls, %llu duplicates\n",
           rank, iters, (unsigned long long)forged, (unsigned long long)stale, (unsigned long long)dups);
    if (attacking)
        printf("mp_forge attacker: sent %ld forged, %ld replayed datagrams\n",
               atomic_load(&sent_forged), atomic_load(&sent_replayed));
    if (rank == 0 && (total[2] != (uint64_t)size || total[1] == 0)) {
        fprintf(stderr, "FAIL: %llu of %d ranks counted forged datagrams, %llu replays counted\n",
                (unsigned long long)total[2], size, (unsigned long long)total[1]);
        bad++;
    }
    free(buf);
    free(want);
    int all_bad = 0;
    if (collie_allreduce(w, &bad, &all_bad, 1, COLLIE_INT32, COLLIE_MAX) != COLLIE_OK)
        all_bad = 1;
    collie_finalize();
    if (rank == 0 || all_bad)
        printf("%s: forged and replayed datagrams %s\n", all_bad ? "FAIL" : "PASS",
               all_bad ? "got through or were not counted" : "were dropped and counted; results correct");
    return all_bad ? 1 : 0;
}
