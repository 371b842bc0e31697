/*
 * tuning.c — reads the tuning file of tuning.h: checks every key and value (unknown keys,
 * wrong types, out-of-range numbers are errors naming the file and line), fills the
 * model entries and the rules; rules with an unknown algorithm are skipped with a warning.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "core/core.h"
#include "select/json.h"
#include "select/tuning.h"

typedef struct ctx {
    collie_tuning *t;
    const char *name;
    char *err;
    size_t errsz;
    bool failed;
} ctx;

static bool bad(ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bad(ctx *c, int line, const char *fmt, ...) {
    if (c->failed)
        return false;
    c->failed = true;
    int n = snprintf(c->err, c->errsz, "%s:%d: ", c->name, line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < c->errsz)
        vsnprintf(c->err + n, c->errsz - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

static bool want_kind(ctx *c, const json_node *n, int kind, const char *what) {
    if (n->kind == kind)
        return true;
    return bad(c, n->line, "%s must be a %s, not a %s", what, json_kind_name(kind),
               json_kind_name(n->kind));
}

static bool known_keys(ctx *c, const json_node *obj, const char *const *keys, const char *what) {
    for (const json_node *m = obj->child; m; m = m->next) {
        bool found = false;
        for (int i = 0; keys[i] && !found; i++)
            found = strcmp(keys[i], m->key) == 0;
        if (!found)
            return bad(c, m->line, "unknown key \"%s\" in %s", m->key, what);
    }
    return true;
}

/* An optional non-negative integer member (default def); max bounds it. */
static bool get_uint(ctx *c, const json_node *obj, const char *key, uint64_t def, uint64_t max,
                     uint64_t *out) {
    const json_node *n = json_get(obj, key);
    *out = def;
    if (!n)
        return true;
    if (!want_kind(c, n, JSON_NUM, key))
        return false;
    if (n->num < 0 || n->num != (double)(uint64_t)n->num || n->num > (double)max)
        return bad(c, n->line, "%s must be an integer from 0 to %llu", key, (unsigned long long)max);
    *out = (uint64_t)n->num;
    return true;
}

/* An optional string member that must be one of names[]; *out is its index. */
static bool get_choice(ctx *c, const json_node *obj, const char *key, const char *const *names,
                       int *out) {
    const json_node *n = json_get(obj, key);
    if (!n)
        return true;
    if (!want_kind(c, n, JSON_STR, key))
        return false;
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], n->str) == 0) {
            *out = i;
            return true;
        }
    return bad(c, n->line, "bad %s \"%s\"", key, n->str);
}

static bool get_range(ctx *c, const json_node *obj, uint64_t *lo, uint64_t *hi) {
    if (!get_uint(c, obj, "bytes_min", 0, UINT64_MAX, lo) ||
        !get_uint(c, obj, "bytes_max", UINT64_MAX, UINT64_MAX, hi))
        return false;
    return *lo <= *hi || bad(c, obj->line, "bytes_min is larger than bytes_max");
}

/* ---- models ------------------------------------------------------------------------ */

typedef struct model_field {
    const char *key;
    size_t off;
    double min, max;
} model_field;

static const model_field model_fields[] = {
    { "alpha", offsetof(sim_model, alpha), 0, 1 },   { "beta", offsetof(sim_model, beta), 0, 1 },
    { "gamma", offsetof(sim_model, gamma), 0, 1 },   { "copy", offsetof(sim_model, copy), 0, 1 },
    { "f_alpha", offsetof(sim_model, f_alpha), 1e-3, 1 },
    { "f_beta", offsetof(sim_model, f_beta), 1e-3, 1 },
    { "L", offsetof(sim_model, L), 0, 1 },           { "o", offsetof(sim_model, o), 0, 1 },
    { "g", offsetof(sim_model, g), 0, 1 },           { "G", offsetof(sim_model, G), 0, 1 },
    { "mc_alpha", offsetof(sim_model, mc_alpha), 0, 1 },
    { "mc_beta", offsetof(sim_model, mc_beta), 0, 1 }, { "loss", offsetof(sim_model, loss), 0, 1 },
};
#define NFIELDS (sizeof model_fields / sizeof model_fields[0])

static bool model_field_value(ctx *c, const json_node *n, const model_field *f, sim_model *m) {
    if (!want_kind(c, n, JSON_NUM, f->key))
        return false;
    if (!(n->num >= f->min && n->num <= f->max))
        return bad(c, n->line, "%s = %g is out of range [%g, %g] (times are in seconds)", f->key,
                   n->num, f->min, f->max);
    *(double *)((char *)m + f->off) = n->num;
    return true;
}

static bool parse_model(ctx *c, const json_node *n) {
    static const char *const keys[] = { "transport", "bytes_min", "bytes_max", "model", "alpha",
                                        "beta", "gamma", "copy", "f_alpha", "f_beta", "L", "o",
                                        "g", "G", NULL };
    static const char *const transports[] = { "any", "shm", "net", NULL };
    static const char *const kinds[] = { "hockney", "loggp", NULL };
    if (!want_kind(c, n, JSON_OBJ, "a model entry") || !known_keys(c, n, keys, "a model entry"))
        return false;
    if (c->t->nmodels == TUNING_MAX_MODELS)
        return bad(c, n->line, "more than %d model entries", TUNING_MAX_MODELS);
    tuning_model *tm = &c->t->models[c->t->nmodels];
    memset(tm, 0, sizeof *tm);
    tm->line = n->line;
    sim_model_default(&tm->model);
    if (!get_choice(c, n, "transport", transports, &tm->transport) ||
        !get_choice(c, n, "model", kinds, &tm->model.kind) ||
        !get_range(c, n, &tm->bytes_min, &tm->bytes_max))
        return false;
    for (size_t i = 0; i < NFIELDS; i++) {
        const json_node *v = json_get(n, model_fields[i].key);
        if (v && !model_field_value(c, v, &model_fields[i], &tm->model))
            return false;
    }
    c->t->nmodels++;
    return true;
}

/* ---- rules ------------------------------------------------------------------------- */

static bool parse_params(ctx *c, const json_node *n, collie_algo_params *p) {
    memset(p, 0, sizeof *p);
    if (!n)
        return true;
    if (!want_kind(c, n, JSON_OBJ, "params"))
        return false;
    for (const json_node *m = n->child; m; m = m->next) {
        if (p->count == COLLIE_MAX_PARAMS)
            return bad(c, m->line, "more than %d params", COLLIE_MAX_PARAMS);
        if (strlen(m->key) >= sizeof p->key[0])
            return bad(c, m->line, "param name \"%s\" is too long", m->key);
        if (m->kind != JSON_NUM || m->num != (double)(long long)m->num)
            return bad(c, m->line, "param \"%s\" must be an integer", m->key);
        snprintf(p->key[p->count], sizeof p->key[0], "%s", m->key);
        p->value[p->count++] = (long long)m->num;
    }
    return true;
}

static bool rule_coll(ctx *c, const json_node *n, int *coll) {
    const json_node *v = json_get(n, "coll");
    if (!v)
        return bad(c, n->line, "a rule needs \"coll\"");
    if (!want_kind(c, v, JSON_STR, "coll"))
        return false;
    for (int k = 0; k < COLL_COUNT; k++)
        if (strcmp(v->str, collie_coll_name(k)) == 0) {
            *coll = k;
            return true;
        }
    return bad(c, v->line, "unknown collective \"%s\"", v->str);
}

static bool rule_limits(ctx *c, const json_node *n, tuning_rule *r) {
    static const char *const classes[] = { "any", "commutative", "noncommutative", NULL };
    uint64_t lo, hi;
    if (!get_uint(c, n, "p_min", 1, INT_MAX, &lo) || !get_uint(c, n, "p_max", INT_MAX, INT_MAX, &hi))
        return false;
    if (lo > hi)
        return bad(c, n->line, "p_min is larger than p_max");
    r->p_min = (int)lo;
    r->p_max = (int)hi;
    return get_range(c, n, &r->bytes_min, &r->bytes_max) &&
           get_choice(c, n, "op_class", classes, &r->op_class);
}

static bool parse_rule(ctx *c, const json_node *n) {
    static const char *const keys[] = { "coll", "p_min", "p_max", "bytes_min", "bytes_max",
                                        "op_class", "algorithm", "params", NULL };
    if (!want_kind(c, n, JSON_OBJ, "a rule") || !known_keys(c, n, keys, "a rule"))
        return false;
    if (c->t->nrules == TUNING_MAX_RULES)
        return bad(c, n->line, "more than %d rules", TUNING_MAX_RULES);
    tuning_rule *r = &c->t->rules[c->t->nrules];
    memset(r, 0, sizeof *r);
    r->line = n->line;
    const json_node *alg = json_get(n, "algorithm");
    if (!rule_coll(c, n, &r->coll) || !rule_limits(c, n, r) ||
        !parse_params(c, json_get(n, "params"), &r->params))
        return false;
    if (!alg)
        return bad(c, n->line, "a rule needs \"algorithm\"");
    if (!want_kind(c, alg, JSON_STR, "algorithm"))
        return false;
    r->alg = collie_algorithm_find(r->coll, alg->str);
    if (!r->alg) {
        collie_log(COLLIE_LOG_WARN, "%s:%d: unknown %s algorithm \"%s\": rule ignored", c->name,
                   alg->line, collie_coll_name(r->coll), alg->str);
        return true;
    }
    if (collie_algorithm_check_params(r->alg, &r->params) != COLLIE_OK) {
        const char *m = collie_last_error(), *colon = strstr(m, ": ");
        return bad(c, n->line, "%s", strncmp(m, "rank ", 5) == 0 && colon ? colon + 2 : m);
    }
    c->t->nrules++;
    return true;
}

/* ---- the document ------------------------------------------------------------------ */

static bool parse_list(ctx *c, const json_node *n, bool (*item)(ctx *, const json_node *),
                       const char *what) {
    if (!n)
        return true;
    if (!want_kind(c, n, JSON_ARR, what))
        return false;
    for (const json_node *e = n->child; e; e = e->next)
        if (!item(c, e))
            return false;
    return true;
}

static bool parse_doc(ctx *c, const json_node *root) {
    static const char *const keys[] = { "schema", "models", "rules", "generated_by", "comment",
                                        NULL };
    if (!want_kind(c, root, JSON_OBJ, "the document") || !known_keys(c, root, keys, "the document"))
        return false;
    const json_node *s = json_get(root, "schema");
    if (!s)
        return bad(c, root->line, "missing \"schema\": %d", TUNING_SCHEMA);
    if (s->kind != JSON_NUM || s->num != TUNING_SCHEMA)
        return bad(c, s->line, "unsupported schema (this collie reads schema %d)", TUNING_SCHEMA);
    return parse_list(c, json_get(root, "models"), parse_model, "models") &&
           parse_list(c, json_get(root, "rules"), parse_rule, "rules");
}

int collie_tuning_parse(collie_tuning *t, const char *text, const char *name, char *err,
                        size_t errsz) {
    ctx c = { .t = t, .name = name, .err = err, .errsz = errsz };
    char jerr[200];
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", name);
    json_node *root = json_parse(text, jerr, sizeof jerr);
    if (!root) {
        snprintf(err, errsz, "%s:%s", name, jerr + 5);   /* "line N: x" -> "NAME:N: x" */
        return -1;
    }
    bool ok = parse_doc(&c, root);
    json_free(root);
    return ok ? 0 : -1;
}

#define TUNING_MAX_BYTES (16u << 20)

static const char *file_kind(mode_t m) {
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Reads fd (a regular file of `size` bytes) whole; NULL when it changed size meanwhile. */
static char *read_fd(int fd, size_t size, size_t *len) {
    char *buf = malloc(size + 1);
    *len = 0;
    while (buf && *len <= size) {
        ssize_t n = read(fd, buf + *len, size + 1 - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    if (buf && *len > size) {   /* it grew while being read */
        free(buf);
        return NULL;
    }
    if (buf)
        buf[*len] = 0;
    return buf;
}

/* The file, which must be a regular file of at most TUNING_MAX_BYTES without NUL bytes. */
static char *read_all(const char *path, char *err, size_t errsz) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errsz, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    if (!S_ISREG(st.st_mode))
        snprintf(err, errsz, "%s: is %s, not a tuning file", path, file_kind(st.st_mode));
    else if (st.st_size > (off_t)TUNING_MAX_BYTES)
        snprintf(err, errsz, "%s: %lld bytes is larger than a tuning file may be (%u MiB)", path,
                 (long long)st.st_size, TUNING_MAX_BYTES >> 20);
    else if (!(buf = read_fd(fd, (size_t)st.st_size, &len)))
        snprintf(err, errsz, "%s: cannot read it whole (out of memory, or it changed while read)",
                 path);
    close(fd);
    const char *nul = buf ? memchr(buf, 0, len) : NULL;
    if (nul) {
        int line = 1;
        for (const char *c = buf; c < nul; c++)
            line += *c == '\n';
        snprintf(err, errsz, "%s:%d: a NUL byte (not a text file)", path, line);
        free(buf);
        return NULL;
    }
    return buf;
}

int collie_tuning_load(collie_tuning *t, const char *path, char *err, size_t errsz) {
    char *text = read_all(path, err, errsz);
    if (!text)
        return -1;
    if (strlen(text) == 0) {
        free(text);
        snprintf(err, errsz, "%s:1: empty file", path);
        return -1;
    }
    int st = collie_tuning_parse(t, text, path, err, errsz);
    free(text);
    for (char *c = err; st && *c; c++)   /* messages quote the file: no raw control bytes */
        if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
            *c = '?';
    return st;
}

/* ---- lookups ----------------------------------------------------------------------- */

bool collie_tuning_rule_matches(const tuning_rule *r, const collie_coll_args *a) {
    if (r->coll != a->coll || a->size < r->p_min || a->size > r->p_max)
        return false;
    if (a->bytes < r->bytes_min || a->bytes > r->bytes_max)
        return false;
    if (r->op_class == OPC_COMMUTATIVE)
        return a->commutative;
    return r->op_class != OPC_NONCOMMUTATIVE || !a->commutative;
}

int collie_tuning_find_rule(const collie_tuning *t, const collie_coll_args *a, int from) {
    for (int i = from < 0 ? 0 : from; i < t->nrules; i++)
        if (collie_tuning_rule_matches(&t->rules[i], a))
            return i;
    return -1;
}

const sim_model *collie_tuning_model(const collie_tuning *t, const collie_coll_args *a) {
    int want = a->shared_memory ? TRANSPORT_SHM : TRANSPORT_NET;
    for (int i = 0; i < t->nmodels; i++) {
        const tuning_model *m = &t->models[i];
        if ((m->transport == TRANSPORT_ANY || m->transport == want) && a->bytes >= m->bytes_min &&
            a->bytes <= m->bytes_max)
            return &m->model;
    }
    return NULL;
}
