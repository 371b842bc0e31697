/* collie_run_tag.h — line tagging for `collie-run --tag-output` (static inline,
 * header-only; used by collie-run's files through run_job.h).
 *
 * Each rank's stdout and stderr arrive on their own pipe.  Complete lines are written to
 * the launcher's stdout/stderr with a "[rank] " prefix in a single write(), so lines of
 * different ranks never interleave mid-line.  A line longer than RUN_LINE_MAX bytes is
 * split; a last line without '\n' gets one appended when its pipe reaches end of file.
 */
#ifndef COLLIE_RUN_TAG_H
#define COLLIE_RUN_TAG_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RUN_LINE_MAX 2048

typedef struct {
    char buf[RUN_LINE_MAX];
    size_t len;
    int fd;   /* read end of the rank's pipe, -1 once closed */
    int out;  /* where tagged lines go: STDOUT_FILENO or STDERR_FILENO */
    long rank;
} run_stream;

/* write() everything, retrying short writes; gives up silently on errors (e.g. EPIPE). */
static inline void tag_write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Writes "[rank] " + line (+ '\n' if missing) as one write. */
static inline void tag_emit(const run_stream *s, const char *line, size_t n) {
    char out[RUN_LINE_MAX + 32];
    int plen = snprintf(out, sizeof out, "[%ld] ", s->rank);
    memcpy(out + plen, line, n);
    size_t total = (size_t)plen + n;
    if (n == 0 || line[n - 1] != '\n')
        out[total++] = '\n';
    tag_write_all(s->out, out, total);
}

/* Emits every complete line in the buffer (all of it if `all`) and keeps the rest. */
static inline void tag_flush(run_stream *s, int all) {
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++) {
        if (s->buf[i] == '\n') {
            tag_emit(s, s->buf + start, i + 1 - start);
            start = i + 1;
        }
    }
    if (start < s->len && (all || s->len == sizeof s->buf)) {
        tag_emit(s, s->buf + start, s->len - start);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* Closes the stream after writing any unterminated last line. */
static inline void tag_close(run_stream *s) {
    if (s->fd < 0)
        return;
    tag_flush(s, 1);
    close(s->fd);
    s->fd = -1;
}

/* Reads what is available (the pipe was reported readable) and emits complete lines. */
static inline void tag_read(run_stream *s) {
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        tag_close(s);
        return;
    }
    s->len += (size_t)n;
    tag_flush(s, 0);
}

#endif /* COLLIE_RUN_TAG_H */
