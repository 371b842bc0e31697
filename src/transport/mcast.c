/*
 * mcast.c — the multicast transport's socket (see mcast.h).
 *
 * Recipe (measured on this machine: /work/shared/research/gaspi-and-multicast.md §5):
 * SO_REUSEADDR so every rank of the host can bind the same group:port; bind the group
 * address itself (a socket bound to 0.0.0.0 would also get other groups' datagrams on
 * that port); join with an explicit interface address and send with IP_MULTICAST_IF —
 * no multicast route is needed, and none exists on plain loopback; TTL 1 (0 on lo) keeps
 * datagrams on the link.  The receive buffer is asked for COLLIE_MCAST_RCVBUF bytes
 * (default 4 MiB; SO_RCVBUFFORCE first, which needs CAP_NET_ADMIN) and the effective size
 * is read back: a smaller buffer only means more loss, which stage 2 repairs, so it is
 * logged, not refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <sodium.h>
#include <stddef.h>

#include "base/base.h"
#include "transport/mcast.h"

/* ---- fault injection ------------------------------------------------------------------ */

int mcast_drop_parse(mcast_drop *d, const char *spec, int rank) {
    memset(d, 0, sizeof *d);
    d->rng = (uint64_t)collie_env_int("COLLIE_MCAST_DROP_SEED", 1) * 0x100000001B3ull + (uint64_t)rank;
    if (!spec || !*spec)
        return COLLIE_OK;
    if (strncmp(spec, "pattern:", 8) == 0) {
        const char *p = spec + 8;
        size_t n = strlen(p);
        if (n == 0 || n >= sizeof d->pattern || strspn(p, "01") != n)
            return collie_fail(COLLIE_ERR_ARG, "COLLIE_MCAST_DROP=%s: a pattern is 1 to %zu "
                               "characters 0 (keep) or 1 (drop)", spec, sizeof d->pattern - 1);
        memcpy(d->pattern, p, n + 1);
        return COLLIE_OK;
    }
    char *end;
    double v = strtod(spec, &end);
    if (end == spec || *end || !(v >= 0.0 && v <= 1.0))
        return collie_fail(COLLIE_ERR_ARG, "COLLIE_MCAST_DROP=%s: expected a probability 0..1 "
                           "or pattern:BITS (e.g. pattern:0110)", spec);
    d->prob = v;
    return COLLIE_OK;
}

bool mcast_drop_this(mcast_drop *d, int rank, const mcast_hdr *h) {
    if (d->pattern[0]) {
        size_t n = strlen(d->pattern);
        return d->pattern[((uint64_t)rank + h->frag + h->epoch) % n] == '1';
    }
    if (d->prob <= 0.0)
        return false;
    if (d->prob >= 1.0)
        return true;
    return (double)(collie_splitmix64(&d->rng) >> 11) * 0x1.0p-53 < d->prob;
}

/* ---- interface -------------------------------------------------------------------------- */

/* Finds the interface named (or holding the address) spec: its address and MTU. */
static int find_interface(mcast_socket *m, const char *spec) {
    struct in_addr want;
    bool by_addr = inet_pton(AF_INET, spec, &want) == 1;
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: getifaddrs failed: %s", strerror(errno));
    bool found = false;
    for (struct ifaddrs *i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if (by_addr ? a.s_addr != want.s_addr : strcmp(i->ifa_name, spec) != 0)
            continue;
        found = true;
        m->ifaddr = a;
        snprintf(m->ifname, sizeof m->ifname, "%s", i->ifa_name);
    }
    freeifaddrs(list);
    if (!found)
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: COLLIE_MCAST_IF=%s names no interface "
                           "with an IPv4 address in this network namespace", spec);
    struct ifreq req;
    memset(&req, 0, sizeof req);
    memcpy(req.ifr_name, m->ifname, strnlen(m->ifname, sizeof req.ifr_name - 1));
    m->mtu = ioctl(m->fd, SIOCGIFMTU, &req) == 0 ? req.ifr_mtu : 1500;
    return COLLIE_OK;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static int sockopt(mcast_socket *m, int level, int opt, const void *v, socklen_t len,
                   const char *what) {
    if (setsockopt(m->fd, level, opt, v, len) == 0)
        return COLLIE_OK;
    return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: %s on %s failed: %s", what, m->ifname,
                       strerror(errno));
}

static void size_rcvbuf(mcast_socket *m) {
    long long want = collie_env_int("COLLIE_MCAST_RCVBUF", 4 << 20);
    int v = want > 0 && want < (1 << 30) ? (int)want : 4 << 20;
    if (setsockopt(m->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
        setsockopt(m->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
    socklen_t len = sizeof m->rcvbuf;
    getsockopt(m->fd, SOL_SOCKET, SO_RCVBUF, &m->rcvbuf, &len);
    if (m->rcvbuf < v)   /* the kernel doubles what it grants */
        collie_log(COLLIE_LOG_INFO, "multicast: asked for a receive buffer of %d bytes, got %d "
                   "(net.core.rmem_max caps it): large broadcasts lose more datagrams, which "
                   "stage 2 repairs", v, m->rcvbuf);
}

static int join_and_bind(mcast_socket *m) {
    int one = 1;
    int st = sockopt(m, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one, "SO_REUSEADDR");
    if (!st && bind(m->fd, (struct sockaddr *)&m->group, sizeof m->group) != 0)
        st = collie_fail(COLLIE_ERR_TRANSPORT, "multicast: bind to %s:%u failed: %s",
                         inet_ntoa(m->group.sin_addr), ntohs(m->group.sin_port), strerror(errno));
    struct ip_mreq mreq = { m->group.sin_addr, m->ifaddr };
    if (!st)
        st = sockopt(m, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq, "IP_ADD_MEMBERSHIP");
    if (!st)
        st = sockopt(m, IPPROTO_IP, IP_MULTICAST_IF, &m->ifaddr, sizeof m->ifaddr, "IP_MULTICAST_IF");
    unsigned char loop = 1, ttl = (unsigned char)collie_env_int("COLLIE_MCAST_TTL", 1);
    if (!st)
        st = sockopt(m, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop, "IP_MULTICAST_LOOP");
    if (!st)
        st = sockopt(m, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl, "IP_MULTICAST_TTL");
    return st;
}

int mcast_open(mcast_socket *m, int rank, uint32_t group_be, uint16_t port,
               const unsigned char key[MCAST_KEY_BYTES]) {
    memset(m, 0, sizeof *m);
    m->rank = rank;
    memcpy(m->key, key, MCAST_KEY_BYTES);
    m->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (m->fd < 0)
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: socket() failed: %s", strerror(errno));
    m->group.sin_family = AF_INET;
    m->group.sin_addr.s_addr = group_be;
    m->group.sin_port = htons(port);
    int st = mcast_drop_parse(&m->drop, collie_env_str("COLLIE_MCAST_DROP", NULL), rank);
    if (!st)
        st = find_interface(m, collie_env_str("COLLIE_MCAST_IF", "lo"));
    if (!st)
        st = join_and_bind(m);
    if (st) {
        mcast_close(m);
        return st;
    }
    size_rcvbuf(m);
    long payload = (long)m->mtu - 28 - (long)sizeof(mcast_hdr);
    if (payload > (long)(MCAST_MAX_DATAGRAM - sizeof(mcast_hdr)))
        payload = (long)(MCAST_MAX_DATAGRAM - sizeof(mcast_hdr));
    if (payload < 64) {
        mcast_close(m);
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: MTU %d of %s is too small", m->mtu,
                           m->ifname);
    }
    m->max_payload = (uint32_t)payload;
    m->buf = malloc(MCAST_MAX_DATAGRAM);
    if (!m->buf) {
        mcast_close(m);
        return collie_fail(COLLIE_ERR_NOMEM, "multicast: no receive buffer");
    }
    return COLLIE_OK;
}

void mcast_close(mcast_socket *m) {
    sodium_memzero(m->key, sizeof m->key);
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
    free(m->buf);
    m->buf = NULL;
}

/* ---- datagrams ------------------------------------------------------------------------- */

int mcast_new_key(unsigned char key[MCAST_KEY_BYTES]) {
    if (sodium_init() < 0)
        return collie_fail(COLLIE_ERR_TRANSPORT, "multicast: libsodium failed to initialise");
    randombytes_buf(key, MCAST_KEY_BYTES);
    return COLLIE_OK;
}

/* The datagram's one-time Poly1305 key: the first 32 bytes of ChaCha20 under the team's
 * key and a nonce unique per datagram content — epoch, fragment, sender (root) and kind;
 * a datagram is sent once per (epoch, fragment) by its root, and a probe again only
 * unchanged (the construction of libsodium's ChaCha20-Poly1305). */
static void one_time_key(const unsigned char key[MCAST_KEY_BYTES], const mcast_hdr *h,
                         unsigned char otk[crypto_onetimeauth_KEYBYTES]) {
    unsigned char nonce[crypto_stream_chacha20_ietf_NONCEBYTES] = { 0 };
    uint32_t who = ((uint32_t)h->root & 0xFFFFFFu) | (h->kind << 24);
    memcpy(nonce, &h->epoch, 4);
    memcpy(nonce + 4, &h->frag, 4);
    memcpy(nonce + 8, &who, 4);
    crypto_stream_chacha20_ietf(otk, crypto_onetimeauth_KEYBYTES, nonce, key);
}

_Static_assert(MCAST_MAC_BYTES == crypto_onetimeauth_BYTES, "the MAC is a Poly1305 tag");

void mcast_mac(const unsigned char key[MCAST_KEY_BYTES], const mcast_hdr *h, const void *payload,
               size_t len, unsigned char mac[MCAST_MAC_BYTES]) {
    unsigned char otk[crypto_onetimeauth_KEYBYTES];
    crypto_onetimeauth_state st;
    one_time_key(key, h, otk);
    crypto_onetimeauth_init(&st, otk);
    crypto_onetimeauth_update(&st, (const unsigned char *)h, offsetof(mcast_hdr, mac));
    if (len)
        crypto_onetimeauth_update(&st, payload, len);
    crypto_onetimeauth_final(&st, mac);
    sodium_memzero(otk, sizeof otk);
}

int mcast_send(mcast_socket *m, const mcast_hdr *h, const void *payload) {
    mcast_hdr sealed = *h;
    mcast_mac(m->key, h, payload, h->len, sealed.mac);
    struct iovec iov[2] = { { &sealed, sizeof sealed }, { (void *)payload, h->len } };
    struct msghdr msg = { &m->group, sizeof m->group, iov, h->len ? 2 : 1, NULL, 0, 0 };
    if (sendmsg(m->fd, &msg, 0) >= 0)
        return 0;
    m->send_errors++;
    return -errno;
}

/* Is the datagram of n bytes in m->buf authentic (a valid MAC under the team's key)? */
static bool authentic(mcast_socket *m, size_t n) {
    const mcast_hdr *h = (const mcast_hdr *)m->buf;
    if (n < sizeof *h)
        return false;
    unsigned char mac[MCAST_MAC_BYTES];
    mcast_mac(m->key, h, h + 1, n - sizeof *h, mac);
    return sodium_memcmp(mac, h->mac, MCAST_MAC_BYTES) == 0;
}

long mcast_recv(mcast_socket *m) {
    if (m->held_len) {
        long n = (long)m->held_len;
        m->held_len = 0;
        return n;
    }
    for (;;) {
        ssize_t n = recv(m->fd, m->buf, MCAST_MAX_DATAGRAM, MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
        if (authentic(m, (size_t)n))
            return (long)n;
        if (m->forged++ == 0)
            collie_log(COLLIE_LOG_INFO, "multicast: dropped a datagram of %zd bytes without a valid "
                       "MAC on %s (forged or corrupted; counted, COLLIE_LOG=debug at finalize "
                       "gives the totals)", n, m->ifname);
    }
}

void mcast_hold(mcast_socket *m, size_t len) { m->held_len = len; }

bool mcast_wait(mcast_socket *m, uint64_t timeout_ns) {
    struct pollfd p = { m->fd, POLLIN, 0 };
    struct timespec ts = { (time_t)(timeout_ns / 1000000000ull), (long)(timeout_ns % 1000000000ull) };
    return ppoll(&p, 1, &ts, NULL) > 0;
}
