/*
 * json.h — a small strict JSON reader (RFC 8259) for the tuning file: parses a whole text
 * into a tree of nodes, each remembering its line, so that callers can name the line of a
 * wrong value.  No external library.  Nesting is limited to JSON_MAX_DEPTH.
 */
#ifndef COLLIE_JSON_H
#define COLLIE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 32

enum json_kind { JSON_NULL = 0, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

typedef struct json_node {
    int kind;                   /* enum json_kind */
    int line;                   /* 1-based line where the value starts */
    bool b;                     /* JSON_BOOL */
    double num;                 /* JSON_NUM */
    char *str;                  /* JSON_STR (NUL-terminated, UTF-8) */
    char *key;                  /* member name when the parent is an object */
    struct json_node *child;    /* first element / member (arrays, objects) */
    struct json_node *next;     /* next sibling */
} json_node;

/* Parses text; NULL on error with "line N: what" in err.  Free with json_free. */
json_node *json_parse(const char *text, char *err, size_t errsz);
void json_free(json_node *n);
/* Member of an object by name, or NULL. */
const json_node *json_get(const json_node *obj, const char *key);
const char *json_kind_name(int kind);

#endif
