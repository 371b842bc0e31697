/*
 * base.h — status messages, logging, environment configuration, clocks (layer 1).
 */
#ifndef COLLIE_BASE_H
#define COLLIE_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "collie.h"

/* Records a detailed message for collie_last_error() (prefixed with "rank R: " when the
 * rank is known), logs it at level error, and returns status. */
int collie_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void collie_set_log_rank(int rank);

enum collie_log_level { COLLIE_LOG_ERROR = 0, COLLIE_LOG_WARN, COLLIE_LOG_INFO, COLLIE_LOG_DEBUG };
extern int collie_log_level_;       /* read once from COLLIE_LOG */
void collie_log_init(void);
void collie_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define COLLIE_LOG_ON(level) (collie_log_level_ >= (level))

/* Environment: integer with default; returns def when unset, logs a warning when malformed. */
long long collie_env_int(const char *name, long long def);
const char *collie_env_str(const char *name, const char *def);
/* Parses text (the value of variable name) as a whole number in [min, max] into *out;
 * COLLIE_ERR_ARG with a message quoting the text otherwise (env.c). */
int collie_env_parse(const char *name, const char *text, long long min, long long max,
                     long long *out);
/* Checks the COLLIE_* environment at collie_init (env.c): COLLIE_ERR_ARG for a malformed
 * number or log level; unknown COLLIE_* names are warned about on stderr. */
int collie_env_check(void);

/* The registry of live handles (handles.c): a public call checks a handle here before it
 * dereferences it, so stale and wild pointers get COLLIE_ERR_ARG, not a crash. */
enum { COLLIE_HANDLE_TEAM = 1, COLLIE_HANDLE_REQUEST, COLLIE_HANDLE_OP };
int collie_handle_add(const void *h, int kind);
bool collie_handle_remove(const void *h, int kind);   /* false if h was not registered */
bool collie_handle_valid(const void *h, int kind);

/* memcpy whose stores bypass the cache, ordered before later stores (stream_copy.c);
 * native: false where it is plain memcpy (not x86-64). */
void collie_stream_copy(void *dst, const void *src, size_t n);
bool collie_stream_copy_native(void);
/* A copy of data another core has just written (a peer's cell or mapped buffer) that
 * reads up to 8 pages at once (peer_copy.c): memcpy below COLLIE_PEER_COPY_MIN bytes,
 * without AVX2, or with COLLIE_PEER_COPY=0. */
#define COLLIE_PEER_COPY_MIN 8192u
void collie_peer_copy(void *dst, const void *src, size_t n);
/* The size of the last-level cache as the kernel reports it for CPU 0 (sysfs), else the C
 * library's; 0 if neither knows (stream_copy.c). */
uint64_t collie_last_level_cache_bytes(void);

/* SplitMix64: the next pseudo-random number of the sequence whose state is *x. */
uint64_t collie_splitmix64(uint64_t *x);

/* The size class of a byte count: the power of two at or below it, as its exponent (0 for
 * 0 and 1).  The per-size tables of core/path_tune.c and core/fill_tune.c. */
int collie_size_class(uint64_t bytes);

/* Monotonic clock in nanoseconds. */
uint64_t collie_now_ns(void);

/* This process's id, without a system call after the first (getpid is one per call in
 * glibc; a forked child learns its own again). */
int collie_self_pid(void);

#endif
