/*
 * test_tuning_fuzz.c — a tuning-file fuzz corpus, generated deterministically (SplitMix64
 * from a fixed seed) from valid seed files: bit flips, special bytes (NUL, control
 * characters, quotes, brackets, bytes >= 0x80), truncations, number replacements (1e999,
 * NaN, 2^64, long digit strings), string replacements, deep nesting, duplicated rules and
 * trailing garbage; plus special files (a directory, a FIFO, /dev/zero, /dev/null, a file
 * over the size cap).  Every file goes through collie_tuning_load, which must return 0 or
 * -1 with a message that starts with the path and holds no control characters — never
 * crash, hang or leak (the suite runs this under ASan/UBSan: label unit).  It checks too
 * that each seed is accepted and that a mutant accepted twice loads the same way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "check.h"
#include "select/tuning.h"

#define MUTANTS 600

static const char *const seeds[] = {
    "{\"schema\": 1, \"generated_by\": \"collie-tune\",\n"
    " \"models\": [{\"transport\": \"shm\", \"bytes_max\": 65535, \"alpha\": 1.5e-6, \"beta\": 2e-10},\n"
    "            {\"transport\": \"any\", \"alpha\": 3e-6, \"f_beta\": 0.5, \"model\": \"hockney\"}],\n"
    " \"rules\": [\n"
    "  {\"coll\": \"allreduce\", \"p_min\": 2, \"p_max\": 8, \"bytes_max\": 4096, \"algorithm\": \"recursive_doubling\"},\n"
    "  {\"coll\": \"allreduce\", \"bytes_min\": 4097, \"op_class\": \"commutative\",\n"
    "   \"algorithm\": \"ring_pipelined\", \"params\": {\"segment\": 65536}},\n"
    "  {\"coll\": \"bcast\", \"algorithm\": \"chain\", \"params\": {\"segment\": 8192}},\n"
    "  {\"coll\": \"allreduce\", \"algorithm\": \"bruck\", \"params\": {\"n\": 3}},\n"
    "  {\"coll\": \"barrier\", \"algorithm\": \"dissemination\"}]}\n",
    "{\"schema\": 1, \"comment\": \"caf\\u00e9 \\\"quoted\\\"\", \"rules\": []}\n",
};

static const char *const numbers[] = { "1e999", "-1e999", "NaN", "Infinity", "18446744073709551616",
                                       "-0", "0.0000001", "99999999999999999999999999999", "-1", "01" };
static const char *const strings[] = { "\"\"", "\"\\u0000\"", "\"\\ud800\"", "\"ring:foo=1\"",
                                       "\"\\u001b[31m\"", "\"mcast\"", "\"no_such\"" };

static uint64_t rng = 0xC0111E;

static size_t pick(size_t n) { return (size_t)(collie_splitmix64(&rng) % n); }

/* Replaces [at, at+len) of buf (length *n, capacity cap) with rep. */
static void splice(char *buf, size_t *n, size_t cap, size_t at, size_t len, const char *rep) {
    size_t r = strlen(rep);
    if (at > *n || at + len > *n || *n - len + r >= cap)
        return;
    memmove(buf + at + r, buf + at + len, *n - at - len);
    memcpy(buf + at, rep, r);
    *n = *n - len + r;
}

/* The span of the token (number or string) starting near `at`. */
static size_t token_len(const char *buf, size_t n, size_t at) {
    size_t e = at;
    while (e < n && !strchr(",:}] \n", buf[e]))
        e++;
    return e - at;
}

static size_t mutate(char *buf, size_t cap, int kind) {
    const char *seed = seeds[pick(2)];
    size_t n = strlen(seed);
    memcpy(buf, seed, n);
    size_t at = pick(n);
    static const char special[] = { 0, 1, 0x1b, '"', '{', '[', '\\', (char)0x80, (char)0xff, '\n' };
    switch (kind) {
    case 0: buf[at] ^= (char)(1u << pick(8)); break;
    case 1: buf[at] = special[pick(sizeof special)]; break;
    case 2: n = at; break;
    case 3: splice(buf, &n, cap, at, token_len(buf, n, at), numbers[pick(10)]); break;
    case 4: splice(buf, &n, cap, at, token_len(buf, n, at), strings[pick(7)]); break;
    case 5: {
        char deep[4200];
        size_t d = 1 + pick(2000);
        memset(deep, '[', d);
        memset(deep + d, ']', d);
        deep[2 * d] = 0;
        splice(buf, &n, cap, at, 0, deep);
        break;
    }
    default: splice(buf, &n, cap, n, 0, kind == 6 ? "garbage\x01" : "\xef\xbb\xbf{}"); break;
    }
    return n;
}

static void load_checked(const char *path, const char *what) {
    char err[512] = "";
    static collie_tuning t;
    int st = collie_tuning_load(&t, path, err, sizeof err);
    if (st == 0)
        return;
    check(st == -1 && strncmp(err, path, strlen(path)) == 0, "%s: status %d, message '%s'", what,
          st, err);
    for (const char *c = err; *c; c++)
        check((unsigned char)*c >= 0x20 && *c != 0x7f, "%s: control byte 0x%02x in '%s'", what,
              (unsigned char)*c, err);
}

static void write_bytes(const char *path, const char *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    check(f && fwrite(buf, 1, n, f) == n, "cannot write %s", path);
    if (f)
        fclose(f);
}

static void special_files(const char *dir) {
    char p[512];
    load_checked(dir, "a directory");
    load_checked("/dev/zero", "/dev/zero");
    load_checked("/dev/null", "/dev/null");
    snprintf(p, sizeof p, "%s/fifo", dir);
    check(mkfifo(p, 0600) == 0, "mkfifo");
    load_checked(p, "a FIFO");         /* opened non-blocking: never waits for a writer */
    unlink(p);
    snprintf(p, sizeof p, "%s/big.json", dir);
    write_bytes(p, seeds[0], strlen(seeds[0]));
    check(truncate(p, (16 << 20) + 1) == 0, "truncate");
    load_checked(p, "17 MiB");
    unlink(p);
}

int main(void) {
    char dir[] = "/tmp/collie-tfuzz.XXXXXX", path[600];
    static char buf[1 << 16];
    check(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/t.json", dir);
    for (int s = 0; s < 2; s++) {
        char err[512];
        static collie_tuning t;
        write_bytes(path, seeds[s], strlen(seeds[s]));
        check(collie_tuning_load(&t, path, err, sizeof err) == 0, "seed %d refused: %s", s, err);
    }
    int accepted = 0;
    for (int i = 0; i < MUTANTS; i++) {
        char what[64], err[512];
        static collie_tuning t;
        size_t n = mutate(buf, sizeof buf, i % 8);
        write_bytes(path, buf, n);
        snprintf(what, sizeof what, "mutant %d (kind %d)", i, i % 8);
        load_checked(path, what);
        int st = collie_tuning_load(&t, path, err, sizeof err);
        accepted += st == 0;
        if (st == 0) {
            static collie_tuning again;
            check(collie_tuning_load(&again, path, err, sizeof err) == 0 &&
                  again.nrules == t.nrules && again.nmodels == t.nmodels, "%s: reload differs", what);
        }
    }
    unlink(path);
    special_files(dir);
    rmdir(dir);
    printf("tuning fuzz: %d mutants, %d accepted, %d refused; %d failures\n", MUTANTS, accepted,
           MUTANTS - accepted, failures);
    return failures ? 1 : 0;
}
