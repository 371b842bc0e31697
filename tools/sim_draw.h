/*
 * sim_draw.h — `collie-sim draw`: runs one call through the simulator (src/sim/sim.h) with
 * trace hooks and writes an SVG: ranks as rows, time as columns (without --model, a unit
 * model: every message takes one step, so columns are communication steps), one shaded
 * box per rank and round, one arrow per message from its start on the sender's row to
 * its delivery on the receiver's row, labelled with what it carries: the contribution
 * sets of its elements from the symbolic verifier (src/sim/verify.h), "x0..3[8:16)" =
 * ranks 0…3 combined, elements 8…15 (when the verifier rejects the call: the element
 * range of its source, S = input, R = result buffer, T = scratch).  Bidirectional
 * messages are drawn in blue.  Labels never overlap (sim_draw_labels.h): where there is no
 * room, a numbered reference stands on the arrow and the label goes to a table on the
 * right.  A legend below the drawing explains the marks.
 */
#ifndef COLLIE_SIM_DRAW_H
#define COLLIE_SIM_DRAW_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim/sim.h"
#include "sim/verify.h"
#include "sim_draw_labels.h"

typedef struct draw_content {     /* what one message carries (the verifier's label) */
    int from, to;
    uint32_t seq;
    char *label;
} draw_content;

typedef struct draw_trace {
    draw_content *contents;
    size_t ncontents, capcontents;
    sim_msg_trace *msgs;
    size_t nmsgs, capmsgs;
    sim_round_trace *rounds;
    size_t nrounds, caprounds;
    double tmax;
} draw_trace;

static void *draw_grow(void *v, size_t *cap, size_t n, size_t elem) {
    if (n < *cap)
        return v;
    *cap = *cap ? *cap * 2 : 256;
    void *p = realloc(v, *cap * elem);
    if (!p) {
        fprintf(stderr, "collie-sim draw: out of memory\n");
        exit(1);
    }
    return p;
}

static void draw_on_put(void *ctx, int from, int to, uint32_t seq, const char *label) {
    draw_trace *d = ctx;
    d->contents = draw_grow(d->contents, &d->capcontents, d->ncontents, sizeof *d->contents);
    draw_content c = { from, to, seq, strdup(label) };
    d->contents[d->ncontents++] = c;
}

static int draw_content_cmp(const void *x, const void *y) {
    const draw_content *a = x, *b = y;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    if (a->to != b->to)
        return a->to < b->to ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Runs the symbolic verifier over every rank's schedule to learn what each message
 * carries; false (labels fall back to buffer ranges) when it rejects the call. */
static bool draw_contents(const collie_algorithm *alg, const collie_coll_args *a, draw_trace *d) {
    collie_schedule *s = calloc((size_t)a->size, sizeof *s);
    if (!s)
        return false;
    sym_build_all(alg, a, s);
    char err[512];
    bool ok = sym_run_traced(alg->name, a, s, draw_on_put, d, err, sizeof err) == 0;
    if (!ok)
        fprintf(stderr, "collie-sim draw: no contribution labels: %s\n", err);
    if (d->ncontents)
        qsort(d->contents, d->ncontents, sizeof *d->contents, draw_content_cmp);
    for (int r = 0; r < a->size; r++)
        sched_free(&s[r]);
    free(s);
    return ok;
}

/* The label of message m (contents sorted by draw_content_cmp); NULL when unknown. */
static const char *draw_content_of(const draw_trace *d, const sim_msg_trace *m) {
    draw_content key = { m->from, m->to, m->seq, NULL };
    const draw_content *c = d->ncontents ? bsearch(&key, d->contents, d->ncontents,
                                                   sizeof key, draw_content_cmp)
                                         : NULL;
    return c ? c->label : NULL;
}

static void draw_on_msg(void *ctx, const sim_msg_trace *t) {
    draw_trace *d = ctx;
    d->msgs = draw_grow(d->msgs, &d->capmsgs, d->nmsgs, sizeof *d->msgs);
    d->msgs[d->nmsgs++] = *t;
    d->tmax = t->deliver > d->tmax ? t->deliver : d->tmax;
}

static void draw_on_round(void *ctx, const sim_round_trace *t) {
    draw_trace *d = ctx;
    d->rounds = draw_grow(d->rounds, &d->caprounds, d->nrounds, sizeof *d->rounds);
    d->rounds[d->nrounds++] = *t;
    d->tmax = t->end > d->tmax ? t->end : d->tmax;
}

typedef struct draw_geom {
    double left, top, row, scale;
} draw_geom;

static double draw_x(const draw_geom *g, double t) {
    return g->left + t * g->scale;
}

static double draw_y(const draw_geom *g, int rank) {
    return g->top + g->row * (rank + 0.5);
}

static void draw_rounds(FILE *f, const draw_trace *d, const draw_geom *g, lbl_layout *l) {
    static const char *const fill[] = { "#eef3fb", "#fbf1e6" };
    for (size_t i = 0; i < d->nrounds; i++) {
        const sim_round_trace *r = &d->rounds[i];
        double x0 = draw_x(g, r->start), x1 = draw_x(g, r->end), y = draw_y(g, r->rank);
        fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' "
                "stroke='#c8c8c8'/>\n", x0, y - g->row * 0.3, x1 - x0 > 2 ? x1 - x0 : 2,
                g->row * 0.6, fill[r->round % 2]);
        lbl_box b = { x0 + 2, y + g->row * 0.28 - 8, x0 + 14, y + g->row * 0.28 + 1 };
        if (lbl_try_reserve(l, &b))   /* short rounds side by side: only the first named */
            fprintf(f, "<text x='%.1f' y='%.1f' font-size='8' fill='#888'>r%u</text>\n", x0 + 2,
                    y + g->row * 0.28, r->round);
    }
}

/* The text of message m's label: its contribution set, else its buffer range. */
static void draw_label_text(const sim_msg_trace *m, const char *content, size_t elem,
                            char *label, size_t cap) {
    static const char buf_letter[] = { 'S', 'R', 'T' };
    if (content)
        snprintf(label, cap, "%s", content);
    else if (m->bytes == 0)
        snprintf(label, cap, "notify");
    else
        snprintf(label, cap, "%c[%llu:%llu)", m->src_buf < 3 ? buf_letter[m->src_buf] : '?',
                 (unsigned long long)(m->src_off / elem),
                 (unsigned long long)((m->src_off + m->bytes) / elem));
}

static void draw_text(FILE *f, double x, double y, const char *text) {
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' text-anchor='middle' fill='#333' "
            "stroke='white' stroke-width='2.5' paint-order='stroke'>%s</text>\n", x, y, text);
}

/* Labels that did not fit on their arrows, for the table beside the drawing. */
typedef struct draw_table {
    char **rows;
    int n, cap;
    size_t widest;
    int unplaced;           /* references that found no room on their arrow either */
} draw_table;

static void draw_table_add(draw_table *t, const sim_msg_trace *m, const char *label, bool unit) {
    char row[320];
    snprintf(row, sizeof row, "[%d] %d\u2192%d at %.3g: %s", t->n + 1, m->from, m->to,
             unit ? m->start : m->start * 1e6, label);
    t->rows = lbl_grow(t->rows, &t->cap, t->n, sizeof *t->rows);
    t->rows[t->n++] = strdup(row);
    size_t len = strlen(row) - 2;   /* the arrow is one glyph */
    t->widest = len > t->widest ? len : t->widest;
}

static void draw_msgs(FILE *f, const draw_trace *d, const draw_geom *g, size_t elem,
                      lbl_layout *l, draw_table *t, bool unit) {
    for (size_t i = 0; i < d->nmsgs; i++) {
        const sim_msg_trace *m = &d->msgs[i];
        double x0 = draw_x(g, m->start), y0 = draw_y(g, m->from);
        double x1 = draw_x(g, m->deliver), y1 = draw_y(g, m->to);
        const char *color = m->bidirectional ? "#1f5fbf" : "#202020";
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' "
                "stroke-width='1.2' marker-end='url(#%s)'/>\n", x0, y0, x1, y1, color,
                m->bidirectional ? "ab" : "ak");
        char label[256], ref[16];
        double x, y;
        draw_label_text(m, draw_content_of(d, m), elem, label, sizeof label);
        if (lbl_place(l, x0, y0, x1, y1, strlen(label), &x, &y)) {
            draw_text(f, x, y, label);
            continue;
        }
        draw_table_add(t, m, label, unit);
        snprintf(ref, sizeof ref, "[%d]", t->n);
        if (lbl_place(l, x0, y0, x1, y1, strlen(ref), &x, &y))
            draw_text(f, x, y, ref);
        else
            t->unplaced++;
    }
}

/* The table of labels that did not fit, in columns as tall as the drawing, from x. */
static double draw_table_svg(FILE *f, const draw_table *t, double x, double top, int per_col) {
    double col_w = (double)t->widest * LBL_CHAR_W + 24;
    if (t->n == 0)
        return 0;
    fprintf(f, "<text x='%.1f' y='%.1f' font-size='10' font-weight='bold'>labels with no room "
            "on their arrow: [ref] sender\u2192receiver at start: contents</text>\n", x, top - 14);
    for (int i = 0; i < t->n; i++)
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' fill='#333'>%s</text>\n",
                x + (i / per_col) * col_w, top + (i % per_col) * LBL_H + 9, t->rows[i]);
    return ((t->n + per_col - 1) / per_col) * col_w;
}

static void draw_legend(FILE *f, double y, const draw_table *t, bool unit) {
    static const char *const lines[] = {
        "arrow: one message from the sender's row to the receiver's; blue: two ranks exchange "
        "messages at the same time",
        "shaded box rN: round N of that rank's schedule (the operations of a round run "
        "concurrently)",
        "label x0..3[8:16): the message carries elements 8 to 15 combined from the inputs "
        "of ranks 0 to 3; x{0,4}: ranks 0 and 4",
        "without contributions: S/R/T[a:b) = elements a..b-1 of the input, result or scratch "
        "buffer; notify = no data",
    };
    for (int i = 0; i < 2; i++)     /* a black and a blue arrow (no marker: not a message) */
        fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='%s' stroke-width='1.2'/>"
                "<path d='M%d,%.1f L%d,%.1f L%d,%.1f z' fill='%s'/>\n", 10 + 40 * i, y - 3,
                40 + 40 * i, y - 3, i ? "#1f5fbf" : "#202020", 34 + 40 * i, y - 6, 42 + 40 * i,
                y - 3, 34 + 40 * i, y, i ? "#1f5fbf" : "#202020");
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        fprintf(f, "<text x='%d' y='%.1f' font-size='10' fill='#444'>%s</text>\n", i ? 10 : 90,
                y + 13.0 * (double)i, lines[i]);
    fprintf(f, "<text x='10' y='%.1f' font-size='10' fill='#444'>time axis: %s%s</text>\n",
            y + 13.0 * 4, unit ? "communication steps (one message = 1 step)" : "microseconds "
            "(the model given with --model)", t->unplaced ? "; some references had no room "
            "either: find them in the table by sender, receiver and time" : "");
}

static void draw_frame(FILE *f, const collie_algorithm *alg, const collie_coll_args *a,
                       const draw_geom *g, double w, double h, double tmax, bool unit,
                       double svg_w, double svg_h) {
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' "
            "font-family='sans-serif'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
            svg_w, svg_h);
    fprintf(f, "<defs><marker id='ak' markerWidth='8' markerHeight='6' refX='8' refY='3' "
            "orient='auto'><path d='M0,0 L8,3 L0,6 z' fill='#202020'/></marker>"
            "<marker id='ab' markerWidth='8' markerHeight='6' refX='8' refY='3' "
            "orient='auto'><path d='M0,0 L8,3 L0,6 z' fill='#1f5fbf'/></marker></defs>\n");
    fprintf(f, "<text x='10' y='18' font-size='13'>%s %s, P=%d, %zu elements of %zu bytes "
            "(%s)</text>\n", alg->name, collie_coll_name(a->coll), a->size, a->count,
            a->elem_size, unit ? "time in steps: one message = 1" : "time in µs");
    double step = unit ? 1 : tmax / 8;
    for (double t = 0; step > 0 && t <= tmax + 1e-12; t += step) {
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#e0e0e0'/>\n",
                draw_x(g, t), g->top - 4, draw_x(g, t), h - 10);
        fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' text-anchor='middle'>%.3g</text>\n",
                draw_x(g, t), g->top - 6, unit ? t : t * 1e6);
    }
    for (int r = 0; r < a->size; r++) {
        fprintf(f, "<text x='10' y='%.1f' font-size='11'>rank %d</text>\n", draw_y(g, r) + 4, r);
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#bbbbbb'/>\n",
                g->left, draw_y(g, r), w - 20, draw_y(g, r));
    }
}

static void draw_free(draw_trace *d) {
    free(d->msgs);
    free(d->rounds);
    for (size_t i = 0; i < d->ncontents; i++)
        free(d->contents[i].label);
    free(d->contents);
}

static int sim_draw_svg(const collie_algorithm *alg, const collie_coll_args *a,
                        const sim_model *model, const char *path) {
    draw_trace d;
    memset(&d, 0, sizeof d);
    draw_contents(alg, a, &d);
    sim_hooks hooks = { draw_on_msg, draw_on_round, &d };
    sim_config c = { alg, *a, { 0 }, SIM_FULL, &hooks };
    if (model) {
        c.model = *model;
    } else {            /* unit steps: a message takes 1, computation nothing */
        c.model.kind = SIM_HOCKNEY;
        c.model.alpha = c.model.f_alpha = c.model.f_beta = 1;
    }
    sim_result r;
    if (sim_run(&c, &r) != 0) {
        fprintf(stderr, "collie-sim draw: %s\n", r.err);
        draw_free(&d);
        return 1;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        draw_free(&d);
        return 1;
    }
    double tmax = d.tmax > 0 ? d.tmax : 1;
    draw_geom g = { 70, 44, a->size > 32 ? 18 : 40, 0 };
    g.scale = 1000.0 / tmax < 140 ? 1000.0 / tmax : 140;
    double w = g.left + tmax * g.scale + 40, h = g.top + g.row * a->size + 20;
    /* The drawing goes to memory first: the table's size is known only after placing. */
    char *body = NULL;
    size_t body_len = 0;
    FILE *mem = open_memstream(&body, &body_len);
    lbl_layout l;
    lbl_init(&l, w, h);
    lbl_box title_and_axis = { 0, 0, w, g.top - 2 };
    lbl_reserve(&l, &title_and_axis);
    draw_table t = { 0 };
    draw_rounds(mem, &d, &g, &l);
    draw_msgs(mem, &d, &g, a->elem_size ? a->elem_size : 1, &l, &t, model == NULL);
    int per_col = (int)((h - g.top) / LBL_H) > 20 ? (int)((h - g.top) / LBL_H) : 20;
    double table_w = t.n ? ((t.n + per_col - 1) / per_col) * ((double)t.widest * LBL_CHAR_W + 24) + 20 : 0;
    if (t.n && table_w < 480)       /* the table's heading */
        table_w = 480;
    double table_h = g.top + (t.n < per_col ? t.n : per_col) * LBL_H;
    double legend_y = (table_h > h ? table_h : h) + 20;
    draw_frame(f, alg, a, &g, w, h, tmax, model == NULL, w + table_w, legend_y + 70);
    fclose(mem);
    fwrite(body, 1, body_len, f);
    free(body);
    draw_table_svg(f, &t, w + 10, g.top, per_col);
    draw_legend(f, legend_y, &t, model == NULL);
    fprintf(f, "</svg>\n");
    fclose(f);
    if (t.n)
        printf("%s: %d labels in the table beside the drawing (no room on their arrows)\n",
               path, t.n);
    for (int i = 0; i < t.n; i++)
        free(t.rows[i]);
    free(t.rows);
    lbl_free(&l);
    draw_free(&d);
    printf("%s: %zu messages, %.4g %s\n", path, d.nmsgs, model ? r.time * 1e6 : r.time,
           model ? "us" : "steps");
    return 0;
}

#endif
