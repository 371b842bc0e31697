/* base.c — status strings, thread-local error messages, logging, environment, clock. */
#include "base/base.h"
#include "base/size_suffix.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char last_error[1024];
static int log_rank = -1;
int collie_log_level_ = COLLIE_LOG_ERROR;

const char *collie_strerror(int status) {
    switch (status) {
    case COLLIE_OK: return "success";
    case COLLIE_TIMEOUT: return "still in progress (timeout)";
    case COLLIE_ERR_ARG: return "invalid argument";
    case COLLIE_ERR_NOMEM: return "out of memory";
    case COLLIE_ERR_PEER: return "peer failed or timed out";
    case COLLIE_ERR_MISMATCH: return "ranks called mismatching collectives";
    case COLLIE_ERR_UNSUPPORTED: return "unsupported";
    case COLLIE_ERR_TRANSPORT: return "transport failure";
    case COLLIE_ERR_INTERNAL: return "internal error";
    default: return "unknown status";
    }
}

const char *collie_last_error(void) { return last_error; }

const char *collie_version(void) { return COLLIE_VERSION_STRING; }

void collie_set_log_rank(int rank) { log_rank = rank; }

int collie_fail(int status, const char *fmt, ...) {
    char msg[sizeof last_error - 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_rank >= 0)
        snprintf(last_error, sizeof last_error, "rank %d: %s", log_rank, msg);
    else
        snprintf(last_error, sizeof last_error, "%s", msg);
    /* The caller gets the error; printing it is for COLLIE_LOG=warn and above. */
    if (status < 0)
        collie_log(COLLIE_LOG_WARN, "%s (%s)", msg, collie_strerror(status));
    return status;
}

void collie_log_init(void) {
    const char *v = getenv("COLLIE_LOG");
    if (!v || !*v)
        return;
    static const char *names[] = { "error", "warn", "info", "debug" };
    for (int i = 0; i < 4; i++)
        if (strcasecmp(v, names[i]) == 0)
            collie_log_level_ = i;
}

void collie_log(int level, const char *fmt, ...) {
    if (collie_log_level_ < level)
        return;
    static const char *names[] = { "error", "warn", "info", "debug" };
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_rank >= 0)
        fprintf(stderr, "collie[%d] %s: %s\n", log_rank, names[level], msg);
    else
        fprintf(stderr, "collie %s: %s\n", names[level], msg);
}

/* Sizes may end in K, M or G (KiB, MiB, GiB), as collie_env_check (env.c) accepts them. */
long long collie_env_int(const char *name, long long def) {
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    long long x = 0;
    if (collie_parse_size(v, &x) != COLLIE_SIZE_OK) {
        collie_log(COLLIE_LOG_ERROR, "ignoring %s=\"%.64s\": not a whole number (sizes may end "
                   "in K, M or G)", name, v);
        return def;
    }
    return x;
}

const char *collie_env_str(const char *name, const char *def) {
    const char *v = getenv(name);
    return (v && *v) ? v : def;
}

uint64_t collie_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static _Atomic int self_pid;
static pthread_once_t self_pid_once = PTHREAD_ONCE_INIT;

static void self_pid_forget(void) { atomic_store_explicit(&self_pid, 0, memory_order_relaxed); }
static void self_pid_watch_fork(void) { pthread_atfork(NULL, NULL, self_pid_forget); }

int collie_self_pid(void) {
    int pid = atomic_load_explicit(&self_pid, memory_order_relaxed);
    if (pid)
        return pid;
    pthread_once(&self_pid_once, self_pid_watch_fork);
    pid = (int)getpid();
    atomic_store_explicit(&self_pid, pid, memory_order_relaxed);
    return pid;
}

int collie_size_class(uint64_t bytes) {
    return bytes > 1 ? 63 - __builtin_clzll(bytes) : 0;
}

uint64_t collie_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
