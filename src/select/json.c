/*
 * json.c — the strict JSON reader of json.h: recursive descent over objects, arrays,
 * strings (all escapes, \u as UTF-8), numbers (JSON grammar, strtod), true/false/null.
 * Duplicate keys, trailing commas, control characters in strings and trailing text are
 * errors.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select/json.h"

typedef struct parser {
    const char *s;
    int line, depth;
    bool failed;
    char *err;
    size_t errsz;
} parser;

static void fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *p, const char *fmt, ...) {
    if (p->failed)
        return;
    p->failed = true;
    int n = snprintf(p->err, p->errsz, "line %d: ", p->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < p->errsz)
        vsnprintf(p->err + n, p->errsz - (size_t)n, fmt, ap);
    va_end(ap);
    /* The message quotes the file: no control characters or stray bytes reach a terminal. */
    for (char *c = p->err; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
}

static void skip_ws(parser *p) {
    for (; *p->s == ' ' || *p->s == '\t' || *p->s == '\r' || *p->s == '\n'; p->s++)
        if (*p->s == '\n')
            p->line++;
}

static json_node *new_node(parser *p, int kind) {
    json_node *n = calloc(1, sizeof *n);
    if (!n) {
        fail(p, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->line = p->line;
    return n;
}

static json_node *parse_value(parser *p);

static int hex4(parser *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *p->s;
        if (!isxdigit((unsigned char)c)) {   /* never steps over the terminating NUL */
            fail(p, "bad \\u escape in a string");
            return -1;
        }
        p->s++;
        v = v * 16 + (isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
    }
    return v;
}

static size_t put_utf8(char *o, int cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    o[0] = (char)(0xE0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
}

static size_t unescape(parser *p, char *o) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    char c = *p->s;
    if (c)                                  /* never steps over the terminating NUL */
        p->s++;
    const char *k = c ? strchr(from, c) : NULL;
    if (k) {
        *o = to[k - from];
        return 1;
    }
    if (c == 'u') {
        int cp = hex4(p);
        return cp < 0 ? 0 : put_utf8(o, cp);
    }
    fail(p, "bad escape '\\%c' in a string", c ? c : '0');
    return 0;
}

/* The bytes of the string starting at s up to its closing quote (or where it breaks off);
 * its value is never longer (an escape of n bytes stands for at most n). */
static size_t string_extent(const char *s) {
    size_t n = 0;
    while (s[n] && s[n] != '"' && s[n] != '\n')
        n += s[n] == '\\' && s[n + 1] ? 2 : 1;
    return n;
}

/* p->s is at the opening quote. */
static char *parse_string(parser *p) {
    const char *start = ++p->s;
    size_t cap = string_extent(start) + 4;
    char *out = malloc(cap), *o = out;
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    while (!p->failed && *p->s != '"') {
        unsigned char c = (unsigned char)*p->s;
        if (c == 0 || c == '\n')
            fail(p, "unterminated string");
        else if (c < 0x20)
            fail(p, "control character in a string");
        else if (c == '\\' && (p->s++, 1))
            o += unescape(p, o);
        else
            *o++ = (char)*p->s++;
    }
    if (p->failed) {
        free(out);
        return NULL;
    }
    p->s++;
    *o = 0;
    return out;
}

static const char *digits(const char *s) {
    while (isdigit((unsigned char)*s))
        s++;
    return s;
}

/* JSON grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?  Returns the end, or NULL. */
static const char *scan_number(const char *s) {
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return NULL;
    s = *s == '0' ? s + 1 : digits(s);
    if (*s == '.') {
        const char *f = digits(s + 1);
        if (f == s + 1)
            return NULL;
        s = f;
    }
    if (*s == 'e' || *s == 'E') {
        s += s[1] == '+' || s[1] == '-' ? 2 : 1;
        const char *e = digits(s);
        if (e == s)
            return NULL;
        s = e;
    }
    return isalnum((unsigned char)*s) || *s == '.' ? NULL : s;
}

static json_node *parse_number(parser *p) {
    const char *end = scan_number(p->s);
    if (!end) {
        fail(p, "bad number '%.12s'", p->s);
        return NULL;
    }
    json_node *n = new_node(p, JSON_NUM);
    if (n)
        n->num = strtod(p->s, NULL);
    p->s = end;
    return n;
}

static json_node *parse_word(parser *p) {
    static const char *const words[] = { "null", "true", "false" };
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(words[i]);
        if (strncmp(p->s, words[i], len) == 0 && !isalnum((unsigned char)p->s[len])) {
            json_node *n = new_node(p, i == 0 ? JSON_NULL : JSON_BOOL);
            if (n)
                n->b = i == 1;
            p->s += len;
            return n;
        }
    }
    fail(p, "unexpected '%.12s'", p->s);
    return NULL;
}

static bool duplicate_key(const json_node *obj, const char *key) {
    for (const json_node *m = obj->child; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            return true;
    return false;
}

static json_node *parse_member(parser *p, const json_node *obj) {
    skip_ws(p);
    if (*p->s != '"') {
        fail(p, "expected a quoted member name");
        return NULL;
    }
    int line = p->line;
    char *key = parse_string(p);
    if (key && duplicate_key(obj, key))
        fail(p, "duplicate key \"%s\"", key);
    skip_ws(p);
    if (!p->failed && *p->s++ != ':')
        fail(p, "expected ':' after \"%s\"", key);
    json_node *v = p->failed ? NULL : parse_value(p);
    if (!v) {
        free(key);
        return NULL;
    }
    v->key = key;
    v->line = v->kind == JSON_OBJ || v->kind == JSON_ARR ? v->line : line;
    return v;
}

/* Objects and arrays: p->s is at '{' or '['. */
static json_node *parse_container(parser *p, int kind) {
    char close = kind == JSON_OBJ ? '}' : ']';
    json_node *n = new_node(p, kind), **tail = n ? &n->child : NULL;
    p->s++;
    if (++p->depth > JSON_MAX_DEPTH)
        fail(p, "nesting deeper than %d", JSON_MAX_DEPTH);
    skip_ws(p);
    bool empty = *p->s == close;
    while (n && !p->failed && !empty) {
        json_node *e = kind == JSON_OBJ ? parse_member(p, n) : parse_value(p);
        if (!e)
            break;
        *tail = e;
        tail = &e->next;
        skip_ws(p);
        if (*p->s == close)
            break;
        if (*p->s++ != ',')
            fail(p, "expected ',' or '%c'", close);
    }
    p->depth--;
    if (!p->failed)
        p->s++;
    if (p->failed) {
        json_free(n);
        return NULL;
    }
    return n;
}

static json_node *parse_value(parser *p) {
    skip_ws(p);
    char c = *p->s;
    if (c == '{' || c == '[')
        return parse_container(p, c == '{' ? JSON_OBJ : JSON_ARR);
    if (c == '"') {
        json_node *n = new_node(p, JSON_STR);
        if (n && !(n->str = parse_string(p))) {
            free(n);
            return NULL;
        }
        return n;
    }
    if (c == '-' || isdigit((unsigned char)c))
        return parse_number(p);
    if (c == 0) {
        fail(p, "unexpected end of file");
        return NULL;
    }
    return parse_word(p);
}

json_node *json_parse(const char *text, char *err, size_t errsz) {
    parser p = { .s = text, .line = 1, .err = err, .errsz = errsz };
    json_node *root = parse_value(&p);
    if (root)
        skip_ws(&p);
    if (root && *p.s) {
        fail(&p, "unexpected text after the end of the document");
        json_free(root);
        return NULL;
    }
    return root;
}

void json_free(json_node *n) {
    while (n) {
        json_node *next = n->next;
        json_free(n->child);
        free(n->str);
        free(n->key);
        free(n);
        n = next;
    }
}

const json_node *json_get(const json_node *obj, const char *key) {
    for (const json_node *m = obj && obj->kind == JSON_OBJ ? obj->child : NULL; m; m = m->next)
        if (strcmp(m->key, key) == 0)
            return m;
    return NULL;
}

const char *json_kind_name(int kind) {
    static const char *const names[] = { "null", "boolean", "number", "string", "array", "object" };
    return kind >= 0 && kind <= JSON_OBJ ? names[kind] : "?";
}
