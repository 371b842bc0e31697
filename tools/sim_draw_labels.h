/*
 * sim_draw_labels.h — where `collie-sim draw` puts message labels so that none overlaps
 * another: each label tries a few spots along its arrow (and just above or below them);
 * the first spot whose box (estimated from the text length at font size 9) touches no
 * label placed before wins.  When none is free the label becomes a numbered reference
 * "[k]", placed the same way, and the full text goes to a table beside the drawing (its row
 * also names the sender, the receiver and the start time, so a reference that found no
 * free spot either can still be told apart).  Placed boxes are kept in a uniform grid of
 * cells, so each test looks at a few neighbours only.
 */
#ifndef COLLIE_SIM_DRAW_LABELS_H
#define COLLIE_SIM_DRAW_LABELS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LBL_CHAR_W 5.6      /* average glyph width at font-size 9 (sans-serif), px */
#define LBL_H 11.0          /* box height: 9 px above the baseline, 2 below */
#define LBL_CELL_W 64.0
#define LBL_CELL_H 12.0

typedef struct lbl_box {
    double x0, y0, x1, y1;
} lbl_box;

typedef struct lbl_cell {
    int *ids;
    int n, cap;
} lbl_cell;

typedef struct lbl_layout {
    lbl_box *boxes;
    int nboxes, capboxes;
    lbl_cell *cells;
    int cols, rows;
    double w, h;            /* labels stay inside [0, w] x [0, h] */
} lbl_layout;

static void *lbl_grow(void *v, int *cap, int n, size_t elem) {
    if (n < *cap)
        return v;
    *cap = *cap ? *cap * 2 : 64;
    void *p = realloc(v, (size_t)*cap * elem);
    if (!p) {
        fprintf(stderr, "collie-sim draw: out of memory\n");
        exit(1);
    }
    return p;
}

static void lbl_init(lbl_layout *l, double w, double h) {
    memset(l, 0, sizeof *l);
    l->w = w;
    l->h = h;
    l->cols = (int)(w / LBL_CELL_W) + 2;
    l->rows = (int)(h / LBL_CELL_H) + 2;
    l->cells = calloc((size_t)l->cols * (size_t)l->rows, sizeof *l->cells);
    if (!l->cells) {
        fprintf(stderr, "collie-sim draw: out of memory\n");
        exit(1);
    }
}

static void lbl_free(lbl_layout *l) {
    for (int i = 0; i < l->cols * l->rows; i++)
        free(l->cells[i].ids);
    free(l->cells);
    free(l->boxes);
}

static int lbl_clamp(int v, int hi) { return v < 0 ? 0 : v >= hi ? hi - 1 : v; }

static lbl_box lbl_box_at(double x, double y, size_t len) {
    double half = (double)len * LBL_CHAR_W / 2 + 1;
    lbl_box b = { x - half, y - 9, x + half, y + 2 };
    return b;
}

static int lbl_overlap(const lbl_box *a, const lbl_box *b) {
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Applies fn to every cell the box covers; stops and returns 1 when fn does. */
static int lbl_cells_of(lbl_layout *l, const lbl_box *b, int (*fn)(lbl_layout *, lbl_cell *,
                                                                    const lbl_box *, int), int id) {
    int c0 = lbl_clamp((int)(b->x0 / LBL_CELL_W), l->cols), c1 = lbl_clamp((int)(b->x1 / LBL_CELL_W), l->cols);
    int r0 = lbl_clamp((int)(b->y0 / LBL_CELL_H), l->rows), r1 = lbl_clamp((int)(b->y1 / LBL_CELL_H), l->rows);
    for (int r = r0; r <= r1; r++)
        for (int c = c0; c <= c1; c++)
            if (fn(l, &l->cells[r * l->cols + c], b, id))
                return 1;
    return 0;
}

static int lbl_hits(lbl_layout *l, lbl_cell *cell, const lbl_box *b, int id) {
    for (int i = 0; i < cell->n; i++)
        if (lbl_overlap(&l->boxes[cell->ids[i]], b))
            return 1;
    return 0;
}

static int lbl_add_to(lbl_layout *l, lbl_cell *cell, const lbl_box *b, int id) {
    cell->ids = lbl_grow(cell->ids, &cell->cap, cell->n, sizeof *cell->ids);
    cell->ids[cell->n++] = id;
    return 0;
}

/* Finds a free spot for a label of len characters on the arrow (x0,y0)->(x1,y1), records
 * it and returns 1 with its centre in *x, *y; 0 when every spot is taken. */
static void lbl_reserve(lbl_layout *l, const lbl_box *b) {
    l->boxes = lbl_grow(l->boxes, &l->capboxes, l->nboxes, sizeof *l->boxes);
    l->boxes[l->nboxes] = *b;
    lbl_cells_of(l, b, lbl_add_to, l->nboxes);
    l->nboxes++;
}

/* Reserves b and returns 1 when it is inside the drawing and touches no placed box. */
static int lbl_try_reserve(lbl_layout *l, const lbl_box *b) {
    if (b->x0 < 0 || b->x1 > l->w || b->y0 < 0 || b->y1 > l->h || lbl_cells_of(l, b, lbl_hits, 0))
        return 0;
    lbl_reserve(l, b);
    return 1;
}

static int lbl_place(lbl_layout *l, double x0, double y0, double x1, double y1, size_t len,
                     double *x, double *y) {
    static const double along[] = { 0.35, 0.5, 0.2, 0.65, 0.8, 0.1, 0.9 };
    static const double lift[] = { -2, -12, 9 };
    for (size_t k = 0; k < sizeof lift / sizeof lift[0]; k++)
        for (size_t i = 0; i < sizeof along / sizeof along[0]; i++) {
            double cx = x0 + (x1 - x0) * along[i], cy = y0 + (y1 - y0) * along[i] + lift[k];
            lbl_box b = lbl_box_at(cx, cy, len);
            if (!lbl_try_reserve(l, &b))
                continue;
            *x = cx;
            *y = cy;
            return 1;
        }
    return 0;
}

#endif
