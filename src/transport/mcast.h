/*
 * mcast.h — the multicast transport: one IPv4 UDP multicast socket per rank and team, used
 * by stage 1 of the multicast broadcast (algorithms/bcast/mcast.c).  Datagrams are
 * unreliable: lost, duplicated, late or early; every one carries a header naming its team,
 * call (epoch), root and fragment, so receivers can tell them apart.
 *
 * The socket is bound to the group address (so other groups on the same port never
 * arrive), joined on an explicitly chosen interface, and its receive buffer sized and read
 * back at team creation — the paper's pre-posted receives; nothing of this is done on the
 * critical path.  Headers are in host byte order: all ranks run on one machine (shm).
 *
 * Authentication: every datagram ends its header with a 16-byte MAC over the header and
 * the payload: libsodium's Poly1305 (crypto_onetimeauth) under a one-time key taken from
 * ChaCha20 with the team's 32-byte key and a nonce naming the datagram (epoch, fragment,
 * sender, kind) — the construction of ChaCha20-Poly1305.  Rank 0 of the team draws the key
 * (CSPRNG) at set-up and gives the others over the team's own channels (shared memory,
 * never the network).  mcast_recv returns only
 * datagrams whose MAC verifies; the others are dropped and counted (`forged`).  Payloads
 * are authenticated, not encrypted: anyone on the segment can read them.
 */
#ifndef COLLIE_MCAST_H
#define COLLIE_MCAST_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCAST_MAGIC 0x434d4332u      /* "CMC2" */
#define MCAST_KEY_BYTES 32
#define MCAST_MAC_BYTES 16
#define MCAST_MAX_DATAGRAM 65507u    /* 65535 - IPv4 header - UDP header */

enum { MCAST_KIND_DATA = 1, MCAST_KIND_PROBE = 2 };

typedef struct mcast_hdr {
    uint32_t magic;
    uint32_t kind;          /* MCAST_KIND_* */
    uint64_t team_id;       /* random, agreed at team creation */
    uint32_t epoch;         /* the call's sequence number on the team */
    int32_t root;           /* data: the broadcast's root; probe: the sender */
    uint32_t frag, nfrags;  /* fragment index and count */
    uint32_t len;           /* payload bytes in this datagram */
    uint32_t frag_bytes;    /* payload bytes of a full fragment */
    uint64_t total;         /* bytes of the whole message */
    uint32_t check;         /* data: the call's hash (mismatches show) */
    uint32_t dtype;         /* data: the call's datatype (collie_dtype_compact) */
    unsigned char mac[MCAST_MAC_BYTES];   /* over the header before it and the payload */
} mcast_hdr;

/* Fault injection on receive (COLLIE_MCAST_DROP): a probability, or a pattern of 0/1. */
typedef struct mcast_drop {
    double prob;            /* drop each data datagram with this probability */
    char pattern[65];       /* if set: drop (epoch e, fragment f) at rank r when
                               pattern[(r + f + e) % len] == '1' */
    uint64_t rng;
} mcast_drop;

typedef struct mcast_socket {
    int fd;
    int rank;
    struct sockaddr_in group;    /* group address and port */
    struct in_addr ifaddr;       /* the interface's address */
    char ifname[32];
    int mtu;
    int rcvbuf;                  /* effective SO_RCVBUF */
    uint32_t max_payload;        /* payload bytes per datagram within the interface MTU */
    mcast_drop drop;
    char *buf;                   /* one datagram (receive scratch) */
    size_t held_len;             /* a datagram of a later call kept in buf (0: none) */
    unsigned char key[MCAST_KEY_BYTES];   /* the team's MAC key (mcast_open) */
    uint64_t dropped, send_errors;
    uint64_t forged;             /* datagrams dropped: no valid MAC (or too short) */
} mcast_socket;

/* Parses COLLIE_MCAST_DROP ("0.5", "1", "pattern:0110"); COLLIE_OK or COLLIE_ERR_ARG. */
int mcast_drop_parse(mcast_drop *d, const char *spec, int rank);
/* true when the injected loss drops this data datagram. */
bool mcast_drop_this(mcast_drop *d, int rank, const mcast_hdr *h);

/* Opens the socket: interface from COLLIE_MCAST_IF (name or IPv4 address; default lo),
 * binds group:port, joins, sizes the receive buffer (COLLIE_MCAST_RCVBUF), sets TTL and
 * loop; key authenticates every datagram.  On failure returns an error and leaves the
 * reason in collie_last_error(). */
int mcast_open(mcast_socket *m, int rank, uint32_t group_be, uint16_t port,
               const unsigned char key[MCAST_KEY_BYTES]);
/* Fills key with random bytes (libsodium's CSPRNG); COLLIE_OK or an error. */
int mcast_new_key(unsigned char key[MCAST_KEY_BYTES]);
/* The MAC of header h (its mac field excluded) and payload under key. */
void mcast_mac(const unsigned char key[MCAST_KEY_BYTES], const mcast_hdr *h, const void *payload,
               size_t len, unsigned char mac[MCAST_MAC_BYTES]);
void mcast_close(mcast_socket *m);

/* Sends one datagram: header (its MAC filled in here) + payload.  0 or -errno (the caller
 * decides; loss is normal). */
int mcast_send(mcast_socket *m, const mcast_hdr *h, const void *payload);
/* Receives one authentic datagram into m->buf without waiting: its length, 0 if none is
 * queued, or -errno.  Datagrams without a valid MAC are dropped and counted (`forged`,
 * logged at info the first time).  A held datagram (mcast_hold) is returned first. */
long mcast_recv(mcast_socket *m);
/* Keeps the datagram now in m->buf for a later call (stops reading until it is taken). */
void mcast_hold(mcast_socket *m, size_t len);
/* Waits up to timeout_ns for the socket to be readable (ppoll); true if it is.  A held
 * datagram does not count (and leaves the socket readable if more are queued). */
bool mcast_wait(mcast_socket *m, uint64_t timeout_ns);

#endif
