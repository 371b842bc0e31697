/* collie_run_torch.h — the environment torchrun gives its ranks, so that a PyTorch program
 * started by collie-run finds its rendezvous with torch's default `env://` (header-only,
 * used by tools/run_start.c): `dist.init_process_group("collie")` (or "gloo") with no
 * init_method works as under torchrun.
 *
 * Every rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (its collie rank and the
 * team size); MASTER_ADDR (127.0.0.1) and MASTER_PORT (a TCP port that was free on the
 * loopback when the job started: rank 0's TCPStore binds it) unless the caller set them.
 * And, as torchrun does, OMP_NUM_THREADS=1 when it is not set and several ranks share the
 * machine: otherwise every rank's OpenMP runtime (torch's intra-op pool, numpy's BLAS) starts
 * one thread per core and they spin against each other and against the waiting ranks — a
 * 1 MiB torch all_reduce with fresh input took 2.7 ms instead of 0.19 at P = 2 on 2 cores.
 */
#ifndef COLLIE_RUN_TORCH_H
#define COLLIE_RUN_TORCH_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* A port the kernel gives for 127.0.0.1:0 (free now); 0 when there is no loopback. */
static unsigned run_torch_free_port(void) {
    struct sockaddr_in a = { 0 };
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unsigned port = 0;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* In the launcher, before any rank starts: MASTER_ADDR and MASTER_PORT, unless set, and
 * OMP_NUM_THREADS=1 for several ranks, unless set. */
static void run_torch_master_env(long nranks) {
    char buf[16];
    if (nranks > 1)
        setenv("OMP_NUM_THREADS", "1", 0);
    unsigned port = getenv("MASTER_PORT") ? 0 : run_torch_free_port();
    setenv("MASTER_ADDR", "127.0.0.1", 0);
    if (port) {
        snprintf(buf, sizeof buf, "%u", port);
        setenv("MASTER_PORT", buf, 0);
    }
}

/* In rank r's child, before exec. */
static void run_torch_rank_env(long r, long nranks) {
    char buf[32];
    snprintf(buf, sizeof buf, "%ld", r);
    setenv("RANK", buf, 1);
    setenv("LOCAL_RANK", buf, 1);
    snprintf(buf, sizeof buf, "%ld", nranks);
    setenv("WORLD_SIZE", buf, 1);
    setenv("LOCAL_WORLD_SIZE", buf, 1);
}

#endif
