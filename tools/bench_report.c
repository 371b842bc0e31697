/*
 * bench_report.c — collie-bench's output (rank 0): the header, one row per size (the OSU
 * layout with --format osu), the per-rank times (--per-rank), the CSV file (--csv) and the
 * line that names why a forced algorithm declined a size.
 */
#include <string.h>

#include "bench.h"

void print_header(const bench *b) {
    if (b->osu_format)
        osu_header(collie_coll_name(b->o.coll), b->osu_full);
    printf("# collie-bench %s P=%d", collie_coll_name(b->o.coll), b->P);
    if (b->o.coll != COLL_BARRIER)
        printf(" dtype=%s", collie_dtype_name(b->o.dtype));
    if (collie_coll_has_op(b->o.coll))
        printf(" op=%s", collie_op_name(b->o.op));
    if (collie_coll_rooted(b->o.coll))
        printf(" root=%d", b->o.root);
    printf(" algo=%s mode=%s%s%s%s%s\n", b->o.algo ? b->o.algo : bench_default_spec(b->o.coll),
           mode_names[b->o.mode], b->o.in_place ? " in-place" : "",
           b->o.release_each ? " release-each" : b->o.barrier_each ? " barrier-each" : "",
           b->o.fresh_data ? " fresh-data" : "", b->o.use_result ? " use-result" : "");
    if (!b->osu_format)
        printf("#   bytes   count    iters   avg_us   min_us   max_us   GB/s  algorithm\n");
}

static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"")) {
        fprintf(f, "%s,", s);
        return;
    }
    fputc('"', f);
    for (; *s; s++)
        fprintf(f, *s == '"' ? "\"\"" : "%c", *s);
    fputs("\",", f);
}

const char *op_label(const bench *b) {
    return collie_coll_has_op(b->o.coll) ? collie_op_name(b->o.op) : "none";
}

void report(const bench *b, size_t count, long iters, const char *label, const char *used) {
    double avg = 0, mn = b->tout[0], mx = b->tout[0];
    uint64_t bytes = (uint64_t)count * b->esz;
    for (int r = 0; r < b->P; r++) {
        avg += b->tout[r] / b->P;
        mn = b->tout[r] < mn ? b->tout[r] : mn;
        mx = b->tout[r] > mx ? b->tout[r] : mx;
    }
    /* same widths as the header; a space before every field keeps columns apart when a
     * value outgrows its width (a call of 100 ms or more, a count of 8 digits) */
    if (b->osu_format)
        osu_row((unsigned long long)bytes, avg, mn, mx, iters, b->osu_full);
    else
        printf("%9llu %7zu %8ld %8.2f %8.2f %8.2f", (unsigned long long)bytes, count, iters, avg,
           mn, mx);
    if (b->osu_format)
        ;
    else if (b->o.coll == COLL_BARRIER)
        printf("%7s  %s\n", "-", label);
    else
        printf(" %6.2f  %s\n", avg > 0 ? (double)bytes / (avg * 1e3) : 0.0, label);
    for (int r = 0; b->o.per_rank && r < b->P; r++)
        printf("#   rank %4d %9.2f us\n", r, b->tout[r]);
    if (!b->csv)
        return;
    fprintf(b->csv, "%s,", collie_coll_name(b->o.coll));
    csv_field(b->csv, b->spec);
    csv_field(b->csv, used);
    fprintf(b->csv, "%d,%llu,%zu,%s,%s,%ld,%.3f,%.3f,%.3f\n", b->P, (unsigned long long)bytes,
            count, b->o.coll == COLL_BARRIER ? "none" : collie_dtype_name(b->o.dtype),
            op_label(b), iters, avg, mn, mx);
}

/* Rank 0 reports a declined size, once per algorithm and reason. */
void note_decline(bench *b, size_t count, int state, const char *used) {
    if (b->rank == 0 && b->turn == 0 && strcmp(b->why, b->last_why) != 0) {
        printf("%9llu%8zu  declined: %s", (unsigned long long)(count * b->esz), count, b->why);
        printf(state == PREP_FELL_BACK ? " (fell back to %s)\n" : "\n", used);
    }
    snprintf(b->last_why, sizeof b->last_why, "%s", b->why);
}
