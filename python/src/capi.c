/*
 * capi.c — loading the collie library chosen at collie.init() (see capi.h) and raising
 * collie.CollieError.
 */
#include "capi.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

pyc_api capi;
int capi_loaded;
pyc_helpers helpers;
static char loaded_path[4096];

const char *const pyc_op_names[PYC_NOPS] = { "sum", "prod", "min", "max", "land",
                                             "lor", "lxor", "band", "bor", "bxor" };

static const struct {
    const char *name;
    size_t offset;
} symbols[] = {
    { "collie_init", offsetof(pyc_api, init) },
    { "collie_finalize", offsetof(pyc_api, finalize) },
    { "collie_world", offsetof(pyc_api, world) },
    { "collie_rank", offsetof(pyc_api, rank) },
    { "collie_size", offsetof(pyc_api, size) },
    { "collie_team_split", offsetof(pyc_api, team_split) },
    { "collie_team_dup", offsetof(pyc_api, team_dup) },
    { "collie_team_free", offsetof(pyc_api, team_free) },
    { "collie_strerror", offsetof(pyc_api, strerror) },
    { "collie_last_error", offsetof(pyc_api, last_error) },
    { "collie_version", offsetof(pyc_api, version) },
    { "collie_op_create", offsetof(pyc_api, op_create) },
    { "collie_op_free", offsetof(pyc_api, op_free) },
    { "collie_allreduce", offsetof(pyc_api, allreduce) },
    { "collie_reduce", offsetof(pyc_api, reduce) },
    { "collie_bcast", offsetof(pyc_api, bcast) },
    { "collie_barrier", offsetof(pyc_api, barrier) },
    { "collie_iallreduce", offsetof(pyc_api, iallreduce) },
    { "collie_ireduce", offsetof(pyc_api, ireduce) },
    { "collie_ibcast", offsetof(pyc_api, ibcast) },
    { "collie_ibarrier", offsetof(pyc_api, ibarrier) },
    { "collie_test", offsetof(pyc_api, test) },
    { "collie_wait", offsetof(pyc_api, wait) },
    { "collie_request_free", offsetof(pyc_api, request_free) },
    { "collie_allgather", offsetof(pyc_api, allgather) },
    { "collie_allgatherv", offsetof(pyc_api, allgatherv) },
    { "collie_reduce_scatter_block", offsetof(pyc_api, reduce_scatter_block) },
    { "collie_reduce_scatter", offsetof(pyc_api, reduce_scatter) },
    { "collie_alltoall", offsetof(pyc_api, alltoall) },
    { "collie_alltoallv", offsetof(pyc_api, alltoallv) },
    { "collie_gather", offsetof(pyc_api, gather) },
    { "collie_gatherv", offsetof(pyc_api, gatherv) },
    { "collie_scatter", offsetof(pyc_api, scatter) },
    { "collie_scatterv", offsetof(pyc_api, scatterv) },
    { "collie_scan", offsetof(pyc_api, scan) },
    { "collie_exscan", offsetof(pyc_api, exscan) },
    { "collie_iallgather", offsetof(pyc_api, iallgather) },
    { "collie_iallgatherv", offsetof(pyc_api, iallgatherv) },
    { "collie_ireduce_scatter_block", offsetof(pyc_api, ireduce_scatter_block) },
    { "collie_ireduce_scatter", offsetof(pyc_api, ireduce_scatter) },
    { "collie_ialltoall", offsetof(pyc_api, ialltoall) },
    { "collie_ialltoallv", offsetof(pyc_api, ialltoallv) },
    { "collie_igather", offsetof(pyc_api, igather) },
    { "collie_igatherv", offsetof(pyc_api, igatherv) },
    { "collie_iscatter", offsetof(pyc_api, iscatter) },
    { "collie_iscatterv", offsetof(pyc_api, iscatterv) },
    { "collie_iscan", offsetof(pyc_api, iscan) },
    { "collie_iexscan", offsetof(pyc_api, iexscan) },
};

static int resolve(void *lib, const char *name, void *slot) {
    void *p = dlsym(lib, name);
    if (!p) {
        pyc_raise(COLLIE_ERR_UNSUPPORTED, "collie: %s has no symbol %s (%s)", loaded_path,
                  name, dlerror());
        return -1;
    }
    memcpy(slot, &p, sizeof p);
    return 0;
}

int capi_load(const char *path) {
    if (capi_loaded) {
        if (strcmp(path, loaded_path) == 0)
            return 0;
        pyc_raise(COLLIE_ERR_ARG, "collie: this process already uses %s; cannot switch to %s",
                  loaded_path, path);
        return -1;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        pyc_raise(COLLIE_ERR_TRANSPORT, "collie: cannot load %s: %s", path, dlerror());
        return -1;
    }
    snprintf(loaded_path, sizeof loaded_path, "%s", path);
    pyc_api api;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++)
        if (resolve(lib, symbols[i].name, (char *)&api + symbols[i].offset))
            return -1;
    void *ident = dlsym(lib, "collie_op_set_identity");   /* optional: see capi.h */
    memcpy(&api.op_set_identity, &ident, sizeof ident);
    for (int i = 0; i < PYC_NOPS; i++) {
        char name[64];
        snprintf(name, sizeof name, "collie_op_%s_", pyc_op_names[i]);
        void *p = dlsym(lib, name);
        if (!p) {
            pyc_raise(COLLIE_ERR_UNSUPPORTED, "collie: %s has no symbol %s", path, name);
            return -1;
        }
        api.builtin[i] = p;
    }
    capi = api;
    capi_loaded = 1;
    return 0;
}

const char *capi_path(void) { return capi_loaded ? loaded_path : NULL; }

static PyThread_type_lock lock;
static _Thread_local int inside;

int pyc_lock_init(void) {
    lock = PyThread_allocate_lock();
    if (!lock) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

void pyc_lock(void) {
    PyThread_acquire_lock(lock, WAIT_LOCK);
    inside = 1;
}

void pyc_unlock(void) {
    inside = 0;
    PyThread_release_lock(lock);
}

int pyc_inside(void) { return inside; }

int pyc_reentered(const char *fn) {
    if (!inside)
        return 0;
    pyc_raise(COLLIE_ERR_ARG, "%s: called from inside a user-defined operation of a running "
              "collective (not allowed)", fn);
    return 1;
}

static PyObject *raise_msg(int status, const char *msg) {
    if (!helpers.error) {
        PyErr_SetString(PyExc_RuntimeError, msg);
        return NULL;
    }
    PyObject *exc = PyObject_CallFunction(helpers.error, "si", msg, status);
    if (exc) {
        PyErr_SetObject(helpers.error, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *pyc_raise(int status, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return raise_msg(status, msg);
}

PyObject *pyc_raise_status(int status) {
    const char *msg = capi_loaded ? capi.last_error() : NULL;
    if (!msg || !*msg)
        msg = capi_loaded ? capi.strerror(status) : "collie error";
    return raise_msg(status, msg);
}
